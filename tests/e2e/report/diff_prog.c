// SPDX-License-Identifier: BSD-3-Clause
// prof-report --diff's test program: three functions of different sizes, each called twice per
// thread, that spin on the wall clock for a fixed time per call (the profile measures wall time:
// a spin on it keeps each call's duration fixed however busy the machine is, but for a late
// return when the thread is off its CPU at the deadline, hence few long calls; a spin on CPU time
// would take longer whenever another process runs). Arguments: "slow" makes middle() 20 % slower;
// a number N > 1 runs N threads one after the other (one spins at a time, as the single thread
// does: two threads spinning at once on a small machine lose their CPUs at the deadlines far more
// often; and no thread waits for another, which would add time that depends on their order).
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int slow;

__attribute__((no_instrument_function)) static void spin_ms(long ms) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ms * 1000000L);
}

__attribute__((noinline)) void small(void) { spin_ms(150); }
__attribute__((noinline)) void middle(void) { spin_ms(slow ? 360 : 300); }
__attribute__((noinline)) void large(void) { spin_ms(600); }

__attribute__((noinline)) void* work(void* arg) {
  for (int i = 0; i < 2; ++i) {
    small();
    middle();
    large();
  }
  return arg;
}

int main(int argc, char** argv) {
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "slow")) slow = 1;
    else threads = atoi(argv[i]);
  }
  if (threads < 1 || threads > 8) return 2;
  if (threads == 1) {
    work(0);
    return 0;
  }
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    pthread_join(t, 0);
  }
  return 0;
}
