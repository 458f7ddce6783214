// SPDX-License-Identifier: BSD-3-Clause
// paced_calls.c under MPI: each rank calls leaf() 10 times per mid(), sleeps 20 us, and every
// 1000 rounds meets the others in MPI_Allreduce, without end (salvage_killed.sh kills the job).
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i * 7u; }

__attribute__((noinline)) void mid(int i) {
  for (int k = 0; k < 10; ++k) leaf(i + k);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) fprintf(stderr, "paced_mpi: running\n");
  for (int i = 0;; ++i) {
    mid(i);
    usleep(20);
    if (i % 1000 == 999) {
      int one = 1, sum = 0;
      MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
  }
}
