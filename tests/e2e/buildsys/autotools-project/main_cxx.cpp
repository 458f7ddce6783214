// SPDX-License-Identifier: BSD-3-Clause
// The C++ executable of the build-system test project: greet_sum from the C library, 3 calls of twice().
#include <cstdio>

#include "greet.h"

namespace demo {
int twice(int x) { return 2 * x; }
}  // namespace demo

int main() {
  int t = 0;
  for (int i = 0; i < 3; ++i) t += demo::twice(i);
  const int s = greet_sum(10);
  std::printf("sum of squares 1..10 = %d, twice = %d\n", s, t);
  return s == 385 && t == 6 ? 0 : 1;
}
