// SPDX-License-Identifier: BSD-3-Clause
#include <cstdio>

#include "kernels.h"

static long twice(long v) { return 2 * v; }

int main() {
  long total = 0;
  for (int i = 0; i < 3; ++i) total += twice(scale_on_device(10));
  std::printf("mixed: total %ld\n", total);
  return total == 3 * 2 * 90 ? 0 : 1;
}
