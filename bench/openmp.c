/* SPDX-License-Identifier: BSD-3-Clause
 * OpenMP costs for bench/openmp.sh: `openmp <what> <n>` times n operations of one kind with a
 * team of 2 threads and prints "ns_per_op=<ns>":
 *   parallel  n empty parallel regions (fork, the team's begin and end, join)
 *   barrier   n barriers in one parallel region
 *   loop      n worksharing loops, schedule(dynamic, 1), 2 iterations each (a start, the
 *             chunks, the end with its barrier)
 *   chunk     one dynamic loop of n iterations, chunk size 1: n chunk dispatches
 *   lock      n omp_set_lock/omp_unset_lock pairs per thread, uncontended (each its own lock) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s parallel|barrier|loop|chunk|lock N\n", argv[0]);
    return 2;
  }
  const char* what = argv[1];
  const long n = atol(argv[2]);
  omp_set_num_threads(2);
#pragma omp parallel
  sink = 0; /* the team exists before the timing starts */
  double t0 = omp_get_wtime();
  if (!strcmp(what, "parallel")) {
    for (long i = 0; i < n; ++i) {
#pragma omp parallel
      sink = 1;
    }
  } else if (!strcmp(what, "barrier")) {
#pragma omp parallel
    for (long i = 0; i < n; ++i) {
#pragma omp barrier
    }
  } else if (!strcmp(what, "loop")) {
#pragma omp parallel
    for (long i = 0; i < n; ++i) {
#pragma omp for schedule(dynamic, 1)
      for (int k = 0; k < 2; ++k) sink = k;
    }
  } else if (!strcmp(what, "chunk")) {
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 1)
      for (long k = 0; k < n; ++k) sink = (double)k;
    }
  } else if (!strcmp(what, "lock")) {
#pragma omp parallel
    {
      omp_lock_t l;
      omp_init_lock(&l);
      for (long i = 0; i < n; ++i) {
        omp_set_lock(&l);
        omp_unset_lock(&l);
      }
      omp_destroy_lock(&l);
    }
  } else {
    fprintf(stderr, "unknown workload '%s'\n", what);
    return 2;
  }
  double t1 = omp_get_wtime();
  printf("ns_per_op=%.1f\n", (t1 - t0) * 1e9 / (double)n);
  return 0;
}
