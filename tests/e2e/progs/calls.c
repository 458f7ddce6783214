/* SPDX-License-Identifier: BSD-3-Clause */
/* Recursion, static functions and calls through a function pointer; counts its own calls.
 * noinline: the counts are calls that exist in the machine code too, which is what clang's
 * -finstrument-functions-after-inlining sees. */
#include <stdio.h>

static long n_leaf, n_fib, n_twice;

__attribute__((noinline)) static int leaf(int x) {
  n_leaf++;
  return x + 1;
}

static volatile int sink;

// The store after the recursive calls keeps clang from turning one of them into a loop.
__attribute__((noinline)) int fib(int n) {
  n_fib++;
  if (n < 2) return leaf(n);
  const int r = fib(n - 1) + fib(n - 2);
  sink = r;
  return r;
}

__attribute__((noinline)) static int twice(int (*f)(int), int x) {
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
