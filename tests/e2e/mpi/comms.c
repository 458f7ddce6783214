/* SPDX-License-Identifier: BSD-3-Clause */
/* Communicators: MPI_Comm_split by parity, collectives and point-to-point on the
 * sub-communicator (ranks of the sub-communicator, not of MPI_COMM_WORLD), MPI_Comm_dup of it,
 * MPI_Comm_free of both; then split + Barrier + free 20 times (Open MPI reuses the handles).
 * Prints its counts (expect.h). */
#include "expect.h"

enum { LOOPS = 20 };

int main(int argc, char** argv) {
  CALL(MPI_Init, &argc, &argv);
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
  CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);

  /* Even and odd ranks, in reverse order of their world rank. */
  MPI_Comm half;
  CALL(MPI_Comm_split, MPI_COMM_WORLD, rank % 2, size - rank, &half);
  int hrank = -1, hsize = -1;
  CALL(MPI_Comm_rank, half, &hrank);
  CALL(MPI_Comm_size, half, &hsize);
  EXPECT_TRUE(hsize == (size + 1 - rank % 2) / 2);
  EXPECT_TRUE(hrank == hsize - 1 - rank / 2);

  int sum = -1;
  CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, half);
  int expected = 0;
  for (int r = rank % 2; r < size; r += 2) expected += r;
  EXPECT_TRUE(sum == expected);
  int v = hrank == 0 ? 1000 + rank : -1;
  CALL(MPI_Bcast, &v, 1, MPI_INT, 0, half);
  EXPECT_TRUE(v == 1000 + (rank % 2 + 2 * (hsize - 1))); /* half rank 0 is the highest world rank */

  /* A ring on the sub-communicator: Sendrecv and Isend/Irecv. */
  const int hright = (hrank + 1) % hsize, hleft = (hrank + hsize - 1) % hsize;
  int got = -1;
  MPI_Status st;
  CALL(MPI_Sendrecv, &hrank, 1, MPI_INT, hright, 7, &got, 1, MPI_INT, hleft, 7, half, &st);
  EXPECT_MESSAGES(1, 1);
  EXPECT_TRUE(got == hleft && st.MPI_SOURCE == hleft);
  MPI_Request req[2];
  CALL(MPI_Irecv, &got, 1, MPI_INT, hleft, 8, half, &req[0]);
  CALL(MPI_Isend, &hrank, 1, MPI_INT, hright, 8, half, &req[1]);
  CALL(MPI_Waitall, 2, req, MPI_STATUSES_IGNORE);
  EXPECT_MESSAGES(1, 1);
  EXPECT_TRUE(got == hleft);
  if (hsize > 1) {
    /* Blocking send from half rank 0 to half rank 1. */
    if (hrank == 0) {
      CALL(MPI_Send, &rank, 1, MPI_INT, 1, 9, half);
      EXPECT_MESSAGES(1, 0);
    } else if (hrank == 1) {
      CALL(MPI_Recv, &got, 1, MPI_INT, 0, 9, half, MPI_STATUS_IGNORE);
      EXPECT_MESSAGES(0, 1);
    }
  }

  /* A duplicate: its own communicator, same ranks. */
  MPI_Comm dup;
  CALL(MPI_Comm_dup, half, &dup);
  CALL(MPI_Barrier, dup);
  int dsum = -1;
  CALL(MPI_Allreduce, &hrank, &dsum, 1, MPI_INT, MPI_SUM, dup);
  EXPECT_TRUE(dsum == hsize * (hsize - 1) / 2);
  CALL(MPI_Sendrecv, &hrank, 1, MPI_INT, hleft, 7, &got, 1, MPI_INT, hright, 7, dup, MPI_STATUS_IGNORE);
  EXPECT_MESSAGES(1, 1);
  EXPECT_TRUE(got == hright);
  CALL(MPI_Comm_free, &dup);
  CALL(MPI_Comm_free, &half);
  EXPECT_TRUE(dup == MPI_COMM_NULL && half == MPI_COMM_NULL);

  /* Split and free in a loop: the colours change, the handle values come back. */
  for (int i = 0; i < LOOPS; ++i) {
    MPI_Comm c;
    const int colours = i % 3 + 1;
    CALL(MPI_Comm_split, MPI_COMM_WORLD, (rank + i) % colours, rank, &c);
    CALL(MPI_Barrier, c);
    if (i % 5 == 0) {
      int crank = -1, csize = -1, one = 1, n = 0;
      CALL(MPI_Comm_rank, c, &crank);
      CALL(MPI_Comm_size, c, &csize);
      CALL(MPI_Allreduce, &one, &n, 1, MPI_INT, MPI_SUM, c);
      EXPECT_TRUE(n == csize);
    }
    CALL(MPI_Comm_free, &c);
  }

  CALL(MPI_Barrier, MPI_COMM_WORLD);
  expect_report(rank, size);
  if (rank == 0) printf("comms: %d ranks, %d split/free loops: ok\n", size, LOOPS);
  MPI_Finalize();
  return 0;
}
