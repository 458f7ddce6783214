/* SPDX-License-Identifier: BSD-3-Clause */
/* Four threads fill a small PROF_TOTAL_MEMORY concurrently: each flushes its own buffer. */
#include <pthread.h>
#include <stdio.h>

static long n_tiny[4];

__attribute__((noinline)) static long tiny(long t, long x) {
  n_tiny[t]++;
  return x ^ (x >> 3);
}

static void* worker(void* arg) {
  long t = (long)arg, s = 0;
  for (long i = 0; i < 60000 * (t + 1); ++i) s += tiny(t, i);
  return (void*)s;
}

int main(void) {
  pthread_t th[4];
  for (long t = 0; t < 4; ++t) pthread_create(&th[t], NULL, worker, (void*)t);
  for (int t = 0; t < 4; ++t) pthread_join(th[t], NULL);
  printf("PROF_EXPECT main 1\nPROF_EXPECT tiny %ld\n", n_tiny[0] + n_tiny[1] + n_tiny[2] + n_tiny[3]);
  return 0;
}
