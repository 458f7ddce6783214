/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursion 20,000 deep. The store after the recursive call keeps compilers from turning the
 * recursion into a loop (clang does, at -O2, for "return down(d - 1) + 1"). */
#include <stdio.h>

static long n_down;
static volatile long sink;

__attribute__((noinline)) long down(long d) {
  n_down++;
  if (d == 0) return 0;
  long r = down(d - 1);
  sink = r;
  return r + 1;
}

int main(void) {
  long r = down(20000);
  printf("depth %ld\n", r);
  printf("PROF_EXPECT main 1\nPROF_EXPECT down %ld\n", n_down);
  return 0;
}
