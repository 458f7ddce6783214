// SPDX-License-Identifier: BSD-3-Clause
// bench/stop.sh's program: argv[1] calls of an instrumented leaf (two events each), then
// "filled" on stdout, then it waits for the stop signal.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i) { sink += i * 7u; }

int main(int argc, char** argv) {
  const unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
  for (unsigned long i = 0; i < n; ++i) leaf(i);
  printf("filled\n");
  fflush(stdout);
  for (;;) pause();
}
