/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-bound work ten calls deep, for bench/sampling.sh: built with prof-wrap --nocompiler (no
 * hooks), so that the only events are the samples. Prints the loop's wall time in ns. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LEVEL(n, m) __attribute__((noipa)) static double f##n(long k) { return f##m(k) + 1e-9 * (double)k; }
__attribute__((noipa)) static double f0(long k) {
  double s = 0;
  for (long i = 0; i < k; ++i) s += (double)i * 0.5 / ((double)i + 1.0);
  return s;
}
LEVEL(1, 0) LEVEL(2, 1) LEVEL(3, 2) LEVEL(4, 3) LEVEL(5, 4) LEVEL(6, 5) LEVEL(7, 6) LEVEL(8, 7) LEVEL(9, 8)

int main(int argc, char** argv) {
  const long reps = argc > 1 ? atol(argv[1]) : 40;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  double s = 0;
  for (long r = 0; r < reps; ++r) s += f9(2000000 + r);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("loop_ns=%lld checksum=%g\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec), s);
  return 0;
}
