// SPDX-License-Identifier: BSD-3-Clause
// An OpenMP loop for prof-report's barrier-wait finding (issue 31): 5 parallel loops of 100
// iterations on 2 threads, schedule(static) (thread 0: iterations 0-49, thread 1: 50-99).
// "uneven": an iteration of the second half costs 15 ms, of the first 5 ms, so thread 0 waits at
// the implicit barrier 500 ms per loop (2.5 s planted); "even": every iteration 10 ms (the twin:
// no finding; long loops keep a loaded machine's few ms per loop far below 5 %). Each iteration spins until its planned moment from the loop's start (one clock for
// both threads), so that a thread the OS sets aside does not end late: the waits are the planted
// ones, not the machine's noise.
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) void iteration(double until) {
  while (now() < until) {
  }
}

int main(int argc, char** argv) {
  const int uneven = argc > 1 && !strcmp(argv[1], "uneven");
  const double first = uneven ? 5e-3 : 10e-3, second = uneven ? 15e-3 : 10e-3;  // s per iteration
  for (int round = 0; round < 5; ++round) {
    const double start = now();
#pragma omp parallel for schedule(static) num_threads(2)
    for (int i = 0; i < 100; ++i) iteration(start + (i < 50 ? (i + 1) * first : (i - 49) * second));
  }
  printf("done\n");
  return 0;
}
