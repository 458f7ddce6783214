/* SPDX-License-Identifier: BSD-3-Clause */
/* The program crashes (SIGSEGV) after some work: what was measured must still be written. */
#include <stdio.h>

static long n_work;

__attribute__((noinline)) static int work(int x) {
  n_work++;
  return x + 1;
}

__attribute__((noinline)) static void crash(volatile int* p) { *p = 42; }

int main(void) {
  int r = 0;
  for (int i = 0; i < 50; ++i) r = work(r);
  printf("r %d\n", r);
  printf("PROF_EXPECT main 1\nPROF_EXPECT work %ld\nPROF_EXPECT crash 1\n", n_work);
  fflush(stdout);
  crash((volatile int*)0);
  return 0;
}
