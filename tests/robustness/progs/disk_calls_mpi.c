// SPDX-License-Identifier: BSD-3-Clause
// disk_calls for MPI: rank <big> makes <calls> calls of leaf() (10 per mid()), the others 1,000.
// Usage: disk_calls_mpi <calls> <big>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i * 7u; }

__attribute__((noinline)) void mid(int i) {
  for (int k = 0; k < 10; ++k) leaf(i + k);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 3) {
    if (rank == 0) fprintf(stderr, "usage: disk_calls_mpi <calls> <big>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long calls = rank == atoi(argv[2]) ? atol(argv[1]) : 1000;
  for (long i = 0; i < calls / 10; ++i) mid((int)i);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
