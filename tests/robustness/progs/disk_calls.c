// SPDX-License-Identifier: BSD-3-Clause
// A run whose trace is larger than its profile: <calls> calls of leaf() (10 per mid()), then
// exit with status <status>. Usage: disk_calls <calls> <status>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i * 7u; }

__attribute__((noinline)) void mid(int i) {
  for (int k = 0; k < 10; ++k) leaf(i + k);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: disk_calls <calls> <status>\n");
    return 2;
  }
  const long calls = atol(argv[1]);
  for (long i = 0; i < calls / 10; ++i) mid((int)i);
  printf("disk_calls: %ld calls of leaf\n", calls / 10 * 10);
  return atoi(argv[2]);
}
