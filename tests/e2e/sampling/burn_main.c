// SPDX-License-Identifier: BSD-3-Clause
// An instrumented main calling burn() of an uninstrumented shared library (burn_lib.c).
#include <stdio.h>

void burn(double seconds);

int main(void) {
  burn(0.3);
  printf("sampling_shlib: done\n");
  return 0;
}
