// SPDX-License-Identifier: BSD-3-Clause
// Calls instrumented functions until a signal ends it: 10 calls of leaf() per mid(), forever.
// A trace of it flushes its buffers often (a flush runs most of the time at 8M).
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i * 7u; }

__attribute__((noinline)) void mid(int i) {
  for (int k = 0; k < 10; ++k) leaf(i + k);
}

int main(void) {
  fprintf(stderr, "spin_calls: running\n");
  for (;;)
    for (int i = 0; i < 1000; ++i) mid(i);
}
