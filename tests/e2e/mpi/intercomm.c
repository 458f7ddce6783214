/* SPDX-License-Identifier: BSD-3-Clause */
/* Intercommunicators: the even and the odd ranks form two groups (MPI_Comm_split), joined by
 * MPI_Intercomm_create. Every rank exchanges a message with the rank of the same index in the
 * other group (ranks in the remote group), the even group broadcasts to the odd one (MPI_ROOT at
 * its rank 0, MPI_PROC_NULL at the other even ranks), then MPI_Intercomm_merge gives an
 * intracommunicator for an Allreduce. prof does not track intercommunicators: the calls on one are
 * regions without message or collective events (CALL_INTER); the merged communicator is tracked.
 * Needs an even number of ranks. Prints its counts (expect.h). */
#include "expect.h"

int main(int argc, char** argv) {
  CALL(MPI_Init, &argc, &argv);
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
  CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
  EXPECT_TRUE(size % 2 == 0);
  const int parity = rank % 2;
  MPI_Comm half, inter, merged;
  CALL(MPI_Comm_split, MPI_COMM_WORLD, parity, rank, &half);
  int hrank = -1;
  CALL(MPI_Comm_rank, half, &hrank);
  /* The leaders: world rank 0 (even group) and world rank 1 (odd group). */
  CALL(MPI_Intercomm_create, half, 0, MPI_COMM_WORLD, parity ? 0 : 1, 5, &inter);

  /* One message each way between partners (same index in both groups). */
  int got = -1;
  if (parity == 0) {
    CALL_INTER(MPI_Send, &rank, 1, MPI_INT, hrank, 6, inter);
    CALL_INTER(MPI_Recv, &got, 1, MPI_INT, hrank, 7, inter, MPI_STATUS_IGNORE);
  } else {
    CALL_INTER(MPI_Recv, &got, 1, MPI_INT, hrank, 6, inter, MPI_STATUS_IGNORE);
    CALL_INTER(MPI_Send, &rank, 1, MPI_INT, hrank, 7, inter);
  }
  EXPECT_TRUE(got == rank + (parity ? -1 : 1));

  /* The even group broadcasts to the odd group. */
  int v = parity == 0 && hrank == 0 ? 4242 : -1;
  const int root = parity == 0 ? (hrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  CALL_INTER(MPI_Bcast, &v, 1, MPI_INT, root, inter);
  if (parity == 1) EXPECT_TRUE(v == 4242);

  CALL(MPI_Intercomm_merge, inter, parity, &merged);
  int sum = 0;
  CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, merged);
  EXPECT_TRUE(sum == size * (size - 1) / 2);
  CALL(MPI_Comm_free, &merged);
  CALL(MPI_Comm_free, &inter);
  CALL(MPI_Comm_free, &half);
  expect_report(rank, size);
  MPI_Finalize();
  return 0;
}
