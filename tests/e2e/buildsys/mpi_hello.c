/* SPDX-License-Identifier: BSD-3-Clause */
/* A small MPI program for the prof-mpicc/prof-mpicxx build test (buildsys_mpi_wrappers.sh). */
#include <mpi.h>
#include <stdio.h>

static int work(int rank, int i) { return rank * 100 + i; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < 5; ++i) sum += work(rank, i);
  int total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi_hello: %d ranks, total %d\n", size, total);
  MPI_Finalize();
  return 0;
}
