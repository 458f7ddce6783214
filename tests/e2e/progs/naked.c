/* SPDX-License-Identifier: BSD-3-Clause */
/* A naked function (no prologue) next to ordinary ones: the plugin must leave it alone, or the
 * hook call clobbers the caller's registers (here the loop counter). x86-64 only. */
#include <stdio.h>

static long n_work;

__attribute__((naked, noinline)) int nk(void) { __asm__("mov $42, %eax\n\tret"); }

__attribute__((noinline)) int work(int i) {
  n_work++;
  return i + nk();
}

int main(void) {
  long s = 0;
  for (int i = 0; i < 30; ++i) s += work(i);
  printf("s %ld\n", s);
  printf("PROF_EXPECT main 1\nPROF_EXPECT work %ld\n", n_work);
  return s == 30 * 42 + 435 ? 0 : 1;
}
