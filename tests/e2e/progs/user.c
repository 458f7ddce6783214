/* SPDX-License-Identifier: BSD-3-Clause */
/* The user API: named regions and recording off/on. */
#include <prof/user.h>
#include <stdio.h>

static long n_compute, n_hidden;

__attribute__((noinline)) static int compute(int x) {
  n_compute++;
  return x * 3;
}

int main(void) {
  int r = 0;
  PROF_USER_REGION_BEGIN(setup, "setup_phase");
  r += compute(1);
  PROF_USER_REGION_END(setup);
  PROF_RECORDING_OFF();
  for (int i = 0; i < 10; ++i) r += compute(i); /* not recorded */
  n_hidden = 10;
  PROF_RECORDING_ON();
  for (int i = 0; i < 3; ++i) {
    PROF_USER_REGION_BEGIN(iter, "iteration");
    r += compute(i);
    PROF_USER_REGION_END(iter);
  }
  printf("r %d recording %d\n", r, PROF_RECORDING_IS_ON());
  printf("PROF_EXPECT main 1\nPROF_EXPECT compute %ld\nPROF_EXPECT setup_phase 1\nPROF_EXPECT iteration 3\n", n_compute - n_hidden);
  return 0;
}
