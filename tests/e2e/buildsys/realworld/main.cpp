// SPDX-License-Identifier: BSD-3-Clause
// The C++ executable of the real-world build tests: fib from the C library, 3 calls of twice().
#include <cstdio>

#include "fib.h"

namespace rw {
int twice(int x) { return 2 * x; }
}  // namespace rw

int main() {
  int s = 0;
  for (int i = 0; i < 3; ++i) s += rw::twice(i);
  const int r = fib(10);
  std::printf("fib(10) = %d, s = %d\n", r, s);
  return r == 55 && s == 6 ? 0 : 1;
}
