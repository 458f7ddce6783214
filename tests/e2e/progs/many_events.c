/* SPDX-License-Identifier: BSD-3-Clause */
/* N calls of a tiny function = 2N events; run with a small PROF_TOTAL_MEMORY to force flushes. */
#include <stdio.h>
#include <stdlib.h>

static long n_tiny;

__attribute__((noinline)) static long tiny(long x) {
  n_tiny++;
  return x ^ (x >> 3);
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 5000000;
  long s = 0;
  for (long i = 0; i < n; ++i) s += tiny(i);
  printf("s %ld\n", s);
  printf("PROF_EXPECT main 1\nPROF_EXPECT tiny %ld\n", n_tiny);
  return 0;
}
