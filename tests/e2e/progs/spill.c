/* SPDX-License-Identifier: BSD-3-Clause */
/* Flushes before the ready step (as under MPI before MPI_Init) go to a spill file and reach
 * the trace once the experiment directory exists. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void prof_defer_ready(void);
int prof_ready(void);

static long n_tiny;

__attribute__((noinline)) static long tiny(long x) {
  n_tiny++;
  return x ^ (x >> 3);
}

int main(void) {
  prof_defer_ready();
  long s = 0;
  for (long i = 0; i < 400000; ++i) s += tiny(i);
  const char* dir = getenv("PROF_EXPERIMENT_DIRECTORY");
  if (dir && access(dir, F_OK) == 0) {
    fprintf(stderr, "the experiment directory exists before the ready step\n");
    return 4;
  }
  if (!prof_ready()) return 5;
  for (long i = 0; i < 1000; ++i) s += tiny(i);
  printf("s %ld\n", s);
  printf("PROF_EXPECT main 1\nPROF_EXPECT tiny %ld\n", n_tiny);
  return 0;
}
