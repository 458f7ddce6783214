/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI job with a failing rank (robustness mpi_failed_rank.sh). argv[1]: "segv" (rank 1
 * dereferences NULL after some work), "abort" (rank 1 calls MPI_Abort), "spin" (every rank works
 * until it is killed: mpirun itself is stopped). The other ranks work and then wait in a
 * collective that never completes; mpirun stops them. Each rank prints how often it called
 * step() before the failure point. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;
__attribute__((noinline)) void step(int i) { sink += (unsigned long)i; }

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  MPI_Init(&argc, &argv);
  int rank = 0, v = 1, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 5000; ++i) step(i);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d: 5000 steps\n", rank);
  fflush(stdout);
  if (strcmp(mode, "spin") == 0)
    for (int i = 0;; ++i) {
      step(i);
      if (i % 10 == 0) usleep(1000); /* about 10^4 calls a second: a trace the checkers read quickly */
    }
  if (rank == 1) {
    usleep(200000);
    if (strcmp(mode, "segv") == 0) *(volatile int*)0 = 1;
    if (strcmp(mode, "abort") == 0) MPI_Abort(MPI_COMM_WORLD, 5);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* rank 1 never comes */
  MPI_Finalize();
  return 0;
}
