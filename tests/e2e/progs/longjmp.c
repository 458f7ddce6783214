/* SPDX-License-Identifier: BSD-3-Clause */
/* longjmp out of several instrumented frames: their exit hooks never run. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static long n_deep, n_after;
static volatile int sink;

// The store after the recursive call keeps compilers from turning the recursion into a loop.
__attribute__((noinline)) static void deep(int d) {
  n_deep++;
  if (d == 0) longjmp(env, 1);
  deep(d - 1);
  sink = d;
}

__attribute__((noinline)) static int after(int x) {
  n_after++;
  return x * 2;
}

int main(void) {
  int jumps = 0, r = 0;
  for (int i = 0; i < 3; ++i) {
    if (setjmp(env) == 0) deep(4);
    else jumps++;
    r += after(i);
  }
  printf("jumps %d r %d\n", jumps, r);
  printf("PROF_EXPECT main 1\nPROF_EXPECT deep %ld\nPROF_EXPECT after %ld\n", n_deep, n_after);
  return 0;
}
