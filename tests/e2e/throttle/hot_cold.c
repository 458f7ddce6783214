/* SPDX-License-Identifier: BSD-3-Clause */
/* Throttling (PROF_THROTTLE): a hot tiny function, a cold long one and a short recursive one,
 * each counting its calls. Without MPI (serial build) or with it (-DWITH_MPI: only the other
 * ranks call tiny often, so the job's filter must come from another rank than rank 0, which
 * writes it).
 * Prints "calls <function> <n>" for the checker. */
#include <stdio.h>
#include <stdlib.h>
#ifdef WITH_MPI
#include <mpi.h>
#endif

static volatile long sink;
static long tiny_calls, cold_calls, fib_calls;

__attribute__((noinline)) long tiny(long x) {
  ++tiny_calls;
  return x * 3 + 1;
}

/* ~20 us of work per call, and `inner` calls of tiny */
__attribute__((noinline)) long cold(long inner) {
  ++cold_calls;
  long s = 0;
  for (long i = 0; i < inner; ++i) s += tiny(i);
  for (long k = 0; k < 20000; ++k) sink += k;
  return s;
}

/* Recursive and short: throttled while some of its frames are open. */
__attribute__((noinline)) long fib(int n) {
  ++fib_calls;
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char** argv) {
  int rank = 0;
#ifdef WITH_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
  const long rounds = argc > 1 ? atol(argv[1]) : 200;
  long inner = 250;
#ifdef WITH_MPI
  if (rank == 0) inner = 2; /* 200 calls of tiny in all: too few to throttle it here */
#endif
  long s = 0;
  for (long r = 0; r < rounds; ++r) s += cold(r % 2 ? inner : 0);
  s += fib(18);
#ifdef WITH_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
  printf("rank %d sum %ld\n", rank, s);
  printf("calls tiny %ld\ncalls cold %ld\ncalls fib %ld\n", tiny_calls, cold_calls, fib_calls);
#ifdef WITH_MPI
  MPI_Finalize();
#endif
  return 0;
}
