/* SPDX-License-Identifier: BSD-3-Clause */
/* The library half of the build-system test project: a few calls for the compiler hooks to see. */
#include "greet.h"

static int square(int x) { return x * x; }

int greet_sum(int n) {
  int s = 0;
  for (int i = 1; i <= n; ++i) s += square(i);
  return s;
}
