// SPDX-License-Identifier: BSD-3-Clause
// dir_calls <n> [<mine> <partner>]: calls leaf() n times and prints "done <n>". With two file
// names, it first creates <mine> and waits (up to 60 s) for <partner>, so that two runs started
// one after the other are certainly alive together while they record and flush.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile long sink;

__attribute__((noinline)) void leaf(long i) { sink += i; }

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 1000;
  if (argc > 3) {
    FILE* f = fopen(argv[2], "w");
    if (f) fclose(f);
    for (int i = 0; i < 6000 && access(argv[3], F_OK) != 0; ++i) usleep(10000);
  }
  for (long i = 0; i < n; ++i) leaf(i);
  printf("done %ld\n", n);
  return 0;
}
