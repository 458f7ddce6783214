/* SPDX-License-Identifier: BSD-3-Clause */
/* longjmp out of several instrumented frames: their exit hooks never run. First to main, which
 * called setjmp and the frames it leaves; then (issue 30) to functions that called setjmp and
 * then the function the jump leaves, whose stack the next call of theirs uses again: the frames
 * left must be closed, and the next call must be on its caller's call path, not below them. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static long n_deep, n_after;
static long n_thrower, n_jumper, n_sibling, n_inlined, n_catch_sibling, n_catch_again, n_catch_inline;
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

__attribute__((noinline)) static void thrower(int d) {
  n_thrower++;
  if (d == 0) longjmp(env, 1);
  thrower(d - 1);
  sink = d;
}

// Left by every jump below, with the 3 thrower frames it called: 4 frames.
__attribute__((noinline)) static void jumper(void) {
  n_jumper++;
  thrower(2);
  sink = 0;
}

// A larger frame than jumper's: its stack pointer lies below the one jumper had.
__attribute__((noinline)) static void sibling(int x) {
  volatile char buf[256];
  n_sibling++;
  buf[x & 255] = (char)x;
  sink = buf[x & 255];
}

// Its hooks (if the compiler instruments inlined bodies) run in its caller's frame.
static inline __attribute__((always_inline)) void inlined(int x) {
  n_inlined++;
  sink = x;
}

// The next hook after the jump: the entry of jumper's sibling.
__attribute__((noinline)) static void catch_sibling(int i) {
  n_catch_sibling++;
  if (setjmp(env) == 0) jumper();
  sibling(i);
}

// The next hook after the jump: jumper's entry again, at the very stack pointer it had.
__attribute__((noinline)) static void catch_again(void) {
  volatile int k = 0;
  n_catch_again++;
  setjmp(env);
  if (k++ < 3) jumper();
}

// The next hook after the jump: the entry of a function inlined here; catch_inline stays open.
__attribute__((noinline)) static void catch_inline(int i) {
  n_catch_inline++;
  if (setjmp(env) == 0) jumper();
  else inlined(i);
  sink = i;
}

int main(void) {
  int jumps = 0, r = 0;
  for (int i = 0; i < 3; ++i) {
    if (setjmp(env) == 0) deep(4);
    else jumps++;
    r += after(i);
  }
  for (int i = 0; i < 10; ++i) {
    catch_sibling(i);
    catch_again();
    catch_inline(i);
  }
  printf("jumps %d r %d\n", jumps, r);
  printf("PROF_EXPECT main 1\nPROF_EXPECT deep %ld\nPROF_EXPECT after %ld\n", n_deep, n_after);
  printf("PROF_EXPECT thrower %ld\nPROF_EXPECT jumper %ld\nPROF_EXPECT sibling %ld\nPROF_EXPECT inlined %ld\n", n_thrower,
         n_jumper, n_sibling, n_inlined);
  printf("PROF_EXPECT catch_sibling %ld\nPROF_EXPECT catch_again %ld\nPROF_EXPECT catch_inline %ld\n", n_catch_sibling,
         n_catch_again, n_catch_inline);
  return 0;
}
