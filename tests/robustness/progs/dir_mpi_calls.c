// SPDX-License-Identifier: BSD-3-Clause
// dir_mpi_calls <n> <mine> <partner>: every rank calls leaf() n times. After MPI_Init rank 0
// creates <mine> and waits (up to 60 s) for <partner>, so that two jobs started one after the
// other are certainly alive together while they record and flush.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile long sink;

__attribute__((noinline)) void leaf(long i) { sink += i; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long n = argc > 1 ? atol(argv[1]) : 1000;
  if (rank == 0 && argc > 3) {
    FILE* f = fopen(argv[2], "w");
    if (f) fclose(f);
    for (int i = 0; i < 6000 && access(argv[3], F_OK) != 0; ++i) usleep(10000);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (long i = 0; i < n; ++i) leaf(i);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d: done %ld\n", rank, n);
  MPI_Finalize();
  return 0;
}
