// SPDX-License-Identifier: BSD-3-Clause
// burn(): CPU time in a shared library built with plain gcc (no instrumentation).
#include <time.h>

static volatile double sink;

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void burn(double seconds) {
  const double end = cpu_seconds() + seconds;
  double x = 0;
  do {
    for (int i = 0; i < 200000; ++i) x += i * 0.5;
  } while (cpu_seconds() < end);
  sink = x;
}
