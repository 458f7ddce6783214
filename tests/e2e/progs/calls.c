/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursion, static functions and calls through a function pointer; counts its own calls. */
#include <stdio.h>

static long n_leaf, n_fib, n_twice;

static int leaf(int x) {
  n_leaf++;
  return x + 1;
}

int fib(int n) {
  n_fib++;
  return n < 2 ? leaf(n) : fib(n - 1) + fib(n - 2);
}

static int twice(int (*f)(int), int x) {
  n_twice++;
  return f(f(x));
}

int main(void) {
  int r = fib(15);
  for (int i = 0; i < 3; ++i) r += twice(leaf, i);
  printf("result %d\n", r);
  printf("PROF_EXPECT main 1\nPROF_EXPECT fib %ld\nPROF_EXPECT leaf %ld\nPROF_EXPECT twice %ld\n", n_fib, n_leaf, n_twice);
  return 0;
}
