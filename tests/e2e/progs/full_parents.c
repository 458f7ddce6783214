/* SPDX-License-Identifier: BSD-3-Clause */
/* The profile runs out of memory, then more than 32 existing call paths each get a new child
 * whose own callee already exists as a sibling of that child: the callee's visits must not be
 * counted under the existing sibling path (the reserve of PROFILE MEMORY FULL nodes is 32).
 *   1. chain(50): main/chain^k for k = 1..50, each calling leaf()  -> main/chain^k/leaf, 1 visit
 *   2. the left/right tree of paths.c, 15 deep: 65,534 call paths, more than 1M holds
 *   3. chain(50) again, each level calling fresh(), which calls leaf() */
#include <stdio.h>

static long n_left, n_right, n_leaf, n_fresh, n_chain;

__attribute__((noinline)) void leaf(void) { n_leaf++; }
__attribute__((noinline)) void fresh(void) {
  n_fresh++;
  leaf();
}

__attribute__((noinline)) void chain(int d, int phase) {
  n_chain++;
  if (phase == 1) leaf();
  else fresh();
  if (d > 1) chain(d - 1, phase);
}

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

int main(void) {
  chain(50, 1);
  left(14);
  right(14);
  chain(50, 3);
  printf("PROF_EXPECT main 1\nPROF_EXPECT chain %ld\nPROF_EXPECT leaf %ld\nPROF_EXPECT fresh %ld\n", n_chain, n_leaf, n_fresh);
  printf("PROF_EXPECT left %ld\nPROF_EXPECT right %ld\n", n_left, n_right);
  return 0;
}
