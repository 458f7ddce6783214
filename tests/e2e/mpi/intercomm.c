/* SPDX-License-Identifier: BSD-3-Clause */
/* Intercommunicators: the even and the odd ranks form two groups (MPI_Comm_split), joined by
 * MPI_Intercomm_create. Every rank exchanges messages with the rank of the same index in the
 * other group (ranks in the remote group; blocking, and nonblocking with MPI_ANY_SOURCE), the even
 * group broadcasts to the odd one (MPI_ROOT at its rank 0, MPI_PROC_NULL at the other even ranks),
 * the even group reduces to the odd group's rank 0, both do an Allreduce and a Barrier on the
 * intercommunicator and on a duplicate of it, then MPI_Intercomm_merge gives an intracommunicator
 * for an Allreduce. prof records an intercommunicator as one communicator over both groups, so
 * otf2_check.py --mpi matches its messages and collectives like any other.
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

  /* One message each way between partners (same index in both groups), blocking, then
   * nonblocking from any source. */
  int got = -1, got2 = -1;
  MPI_Request req[2];
  if (parity == 0) {
    CALL(MPI_Send, &rank, 1, MPI_INT, hrank, 6, inter);
    CALL(MPI_Recv, &got, 1, MPI_INT, hrank, 7, inter, MPI_STATUS_IGNORE);
  } else {
    CALL(MPI_Recv, &got, 1, MPI_INT, hrank, 6, inter, MPI_STATUS_IGNORE);
    CALL(MPI_Send, &rank, 1, MPI_INT, hrank, 7, inter);
  }
  CALL(MPI_Irecv, &got2, 1, MPI_INT, MPI_ANY_SOURCE, 8, inter, &req[0]);
  CALL(MPI_Isend, &rank, 1, MPI_INT, hrank, 8, inter, &req[1]);
  CALL(MPI_Waitall, 2, req, MPI_STATUSES_IGNORE);
  EXPECT_MESSAGES(2, 2);
  EXPECT_TRUE(got == rank + (parity ? -1 : 1));
  EXPECT_TRUE(got2 == got);

  /* The even group broadcasts to the odd group and reduces to the odd group's rank 0. */
  int v = parity == 0 && hrank == 0 ? 4242 : -1;
  const int root = parity == 0 ? (hrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  CALL(MPI_Bcast, &v, 1, MPI_INT, root, inter);
  if (parity == 1) EXPECT_TRUE(v == 4242);
  int red = 0;
  const int rroot = parity == 1 ? (hrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  CALL(MPI_Reduce, &rank, &red, 1, MPI_INT, MPI_SUM, rroot, inter);
  if (parity == 1 && hrank == 0) EXPECT_TRUE(red == (size / 2) * (size / 2 - 1)); /* 0+2+4+... */

  /* Allreduce on an intercommunicator: each group gets the other group's sum. */
  MPI_Comm dup;
  CALL(MPI_Comm_dup, inter, &dup);
  int sums[2] = {0, 0};
  CALL(MPI_Allreduce, &rank, &sums[0], 1, MPI_INT, MPI_SUM, inter);
  CALL(MPI_Allreduce, &rank, &sums[1], 1, MPI_INT, MPI_SUM, dup);
  const int evens = (size / 2) * (size / 2 - 1), odds = evens + size / 2;
  EXPECT_TRUE(sums[0] == (parity ? evens : odds) && sums[1] == sums[0]);
  CALL(MPI_Barrier, dup);
  CALL(MPI_Barrier, inter);
  CALL(MPI_Comm_free, &dup);

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
