// SPDX-License-Identifier: BSD-3-Clause
#include <cstdio>

#include "kernels.h"

int main() {
  long total = 0;
  for (int i = 0; i < 4; ++i) total += scale_on_device(100);
  std::printf("cuda_only: total %ld (%s)\n", total, have_gpu() ? "GPU" : "no GPU: computed on the CPU");
  return total == 4 * 9900 ? 0 : 1;
}
