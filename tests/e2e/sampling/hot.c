// SPDX-License-Identifier: BSD-3-Clause
// main -> a -> hot, hot burning CPU time (argv[1] seconds of the process's CPU time, default 0.3);
// built with prof-wrap --nocompiler, so only the sampler can see these functions.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__attribute__((noinline)) void hot(double seconds) {
  const double end = cpu_seconds() + seconds;
  double x = 0;
  do {
    for (int i = 0; i < 200000; ++i) x += i * 0.5;  // the clock is read rarely: samples land here
  } while (cpu_seconds() < end);
  sink = x;
}

__attribute__((noinline)) void a(double seconds) {
  hot(seconds);
  sink += 1;
}

int main(int argc, char** argv) {
  a(argc > 1 ? atof(argv[1]) : 0.3);
  printf("sampling_hot: done\n");
  return 0;
}
