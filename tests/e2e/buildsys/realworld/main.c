/* SPDX-License-Identifier: BSD-3-Clause */
/* The executable half of the real-world build tests: one call of main, 177 of fib. */
#include <stdio.h>

#include "fib.h"

int main(void) {
  const int r = fib(10);
  printf("fib(10) = %d\n", r);
  return r == 55 ? 0 : 1;
}
