/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/report.sh's program: on 2 ranks, N rounds of work() and a zero-byte ping-pong (MPI_Send +
 * MPI_Recv), an MPI_Allreduce every 100 rounds; rank 1 works a little longer, so that the trace has
 * late senders and N x N waits for prof-report's findings to find. */
#include <mpi.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) void work(int n) {
  for (int i = 0; i < n; ++i) sink += (unsigned long)i;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int n = argc > 1 ? atoi(argv[1]) : 100000;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double x = 1, y = 0;
  for (int i = 0; i < n; ++i) {
    work(rank == 1 ? 300 : 200);
    if (rank == 0) {
      MPI_Send(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
    if (i % 100 == 99) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
