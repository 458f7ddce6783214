/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI wrapper cost (bench/mpi.sh): on 2 ranks, N calls of MPI_Comm_rank (a call that does almost
 * nothing, so the wrapper's own cost shows) and N zero-byte ping-pongs (MPI_Send + MPI_Recv on both
 * sides), each timed with MPI_Wtime on rank 0. Prints "comm_rank_ns <ns per call>" and
 * "pingpong_ns <ns per round trip>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int n = argc > 1 ? atoi(argv[1]) : 200000;
  int rank = 0, r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  const double rank_ns = (MPI_Wtime() - t0) * 1e9 / n;
  MPI_Barrier(MPI_COMM_WORLD);
  const int pings = n / 10;
  t0 = MPI_Wtime();
  for (int i = 0; i < pings; ++i) {
    if (rank == 0) {
      MPI_Send(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
  const double ping_ns = (MPI_Wtime() - t0) * 1e9 / pings;
  if (rank == 0) printf("comm_rank_ns %.1f\npingpong_ns %.1f\n", rank_ns, ping_ns);
  MPI_Finalize();
  return 0;
}
