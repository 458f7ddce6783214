/* SPDX-License-Identifier: BSD-3-Clause */
/* A function that sleeps 50 ms, called twice; code before main (a constructor) and after it
 * (an atexit handler); a worker thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long n_nap, n_early;

__attribute__((noinline)) static void nap(void) {
  n_nap++;
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

__attribute__((noinline)) static long spin(int n) {
  long s = 0;
  for (int i = 0; i < n; ++i) s += i;
  return s;
}

__attribute__((noinline)) static void early(void) { n_early++; }
__attribute__((noinline)) static void late(void) {}

__attribute__((constructor)) static void before_main(void) { early(); }

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < 5; ++i) spin(1000);
  return NULL;
}

int main(void) {
  atexit(late);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  nap();
  nap();
  pthread_join(t, NULL);
  /* late runs once, from exit(), after this line. */
  printf("PROF_EXPECT main 1\nPROF_EXPECT nap %ld\nPROF_EXPECT early %ld\nPROF_EXPECT spin 5\nPROF_EXPECT late 1\n", n_nap, n_early);
  return 0;
}
