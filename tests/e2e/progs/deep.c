/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursion 20,000 deep. */
#include <stdio.h>

static long n_down;

__attribute__((noinline)) long down(long d) {
  n_down++;
  if (d == 0) return 0;
  return down(d - 1) + 1;
}

int main(void) {
  long r = down(20000);
  printf("depth %ld\n", r);
  printf("PROF_EXPECT main 1\nPROF_EXPECT down %ld\n", n_down);
  return 0;
}
