/* SPDX-License-Identifier: BSD-3-Clause */
/* The library half of the real-world build tests: fib(10) makes 177 calls of fib. */
#include "fib.h"

int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
