/* SPDX-License-Identifier: BSD-3-Clause */
/* exit() called from a worker thread while main waits in pthread_join. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long n_spin;

__attribute__((noinline)) static long spin(int n) {
  n_spin++;
  long s = 0;
  for (int i = 0; i < n; ++i) s += i;
  return s;
}

static void* worker(void* arg) {
  (void)arg;
  long s = 0;
  for (int i = 0; i < 20; ++i) s += spin(1000);
  printf("s %ld\n", s);
  printf("PROF_EXPECT main 1\nPROF_EXPECT spin %ld\n", n_spin);
  fflush(stdout);
  exit(3);
}

int main(void) {
  pthread_t t;
  spin(10);
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  return 0;
}
