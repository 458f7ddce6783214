/* SPDX-License-Identifier: BSD-3-Clause */
/* The executable half of the build-system test project. */
#include <stdio.h>

#include "greet.h"

int main(void) {
  const int s = greet_sum(10);
  printf("sum of squares 1..10 = %d\n", s);
  return s == 385 ? 0 : 1;
}
