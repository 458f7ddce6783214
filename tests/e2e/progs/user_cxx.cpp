// SPDX-License-Identifier: BSD-3-Clause
// The C++ RAII user region.
#include <prof/user.h>

#include <cstdio>

static long n_solve;

__attribute__((noinline)) static double solve(int n) {
  PROF_USER_REGION("solver");
  ++n_solve;
  double s = 0;
  for (int i = 0; i < n; ++i) s += i * 0.5;
  return s;
}

int main() {
  double s = 0;
  for (int i = 0; i < 4; ++i) s += solve(100);
  std::printf("s %.1f\n", s);
  std::printf("PROF_EXPECT main 1\nPROF_EXPECT solve %ld\nPROF_EXPECT solver %ld\n", n_solve, n_solve);
  return 0;
}
