/* SPDX-License-Identifier: BSD-3-Clause */
/* Many distinct call paths: left() and right() each call both, DEPTH levels deep, so every
 * call has its own call path (2^(DEPTH+1) - 2 of them below main). Optional argument: DEPTH. */
#include <stdio.h>
#include <stdlib.h>

static long n_left, n_right;

__attribute__((noinline)) void right(int d);

__attribute__((noinline)) void left(int d) {
  n_left++;
  if (d > 0) {
    left(d - 1);
    right(d - 1);
  }
}

__attribute__((noinline)) void right(int d) {
  n_right++;
  if (d > 0) {
    left(d - 1);
    right(d - 1);
  }
}

int main(int argc, char** argv) {
  int depth = argc > 1 ? atoi(argv[1]) : 15;
  for (int i = 0; i < 3; ++i) {
    left(depth - 1);
    right(depth - 1);
  }
  printf("PROF_EXPECT main 1\nPROF_EXPECT left %ld\nPROF_EXPECT right %ld\n", n_left, n_right);
  return 0;
}
