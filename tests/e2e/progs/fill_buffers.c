/* SPDX-License-Identifier: BSD-3-Clause */
/* Two threads, 110,000 tiny calls each: 440,000 events, enough to flush the trace buffers of
 * PROF_TOTAL_MEMORY=8M with PROF_PAGE_SIZE=4K a few times, small enough for quick checks of the
 * whole trace (tests/e2e/export, tests/e2e/report). */
#include <pthread.h>
#include <stdio.h>

static long n[2];

__attribute__((noinline)) static long tiny(long t, long x) {
  n[t]++;
  return x ^ (x >> 3);
}

static void* worker(void* arg) {
  long t = (long)arg, s = 0;
  for (long i = 0; i < 110000; ++i) s += tiny(t, i);
  return (void*)s;
}

int main(void) {
  pthread_t th[2];
  for (long t = 0; t < 2; ++t) pthread_create(&th[t], NULL, worker, (void*)t);
  for (int t = 0; t < 2; ++t) pthread_join(th[t], NULL);
  printf("tiny %ld\n", n[0] + n[1]);
  return 0;
}
