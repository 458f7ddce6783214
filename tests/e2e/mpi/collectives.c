/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives on MPI_COMM_WORLD: Barrier, Bcast, Reduce, Allreduce (also MPI_IN_PLACE), Gather,
 * Gatherv, Scatter, Scatterv, Allgather (also MPI_IN_PLACE), Allgatherv, Alltoall, Alltoallv,
 * Reduce_scatter_block, Scan, Exscan, with roots 0 and size-1; the non-blocking Iallreduce +
 * Wait (Enter/Leave only: no collective events yet). Every result is checked. Prints its counts
 * (expect.h). */
#include "expect.h"

enum { MAXP = 64 };

int main(int argc, char** argv) {
  CALL(MPI_Init, &argc, &argv);
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
  CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
  EXPECT_TRUE(size <= MAXP);
  const MPI_Comm w = MPI_COMM_WORLD;
  const int last = size - 1, tri = size * (size - 1) / 2; /* sum of the ranks */

  CALL(MPI_Barrier, w);

  for (int root = 0; root < size; root += last > 0 ? last : 1) {
    int v = rank == root ? 42 + root : -1;
    CALL(MPI_Bcast, &v, 1, MPI_INT, root, w);
    EXPECT_TRUE(v == 42 + root);

    int sum = -1;
    CALL(MPI_Reduce, &rank, &sum, 1, MPI_INT, MPI_SUM, root, w);
    if (rank == root) EXPECT_TRUE(sum == tri);

    int all[MAXP], counts[MAXP], displs[MAXP];
    CALL(MPI_Gather, &rank, 1, MPI_INT, all, 1, MPI_INT, root, w);
    if (rank == root)
      for (int r = 0; r < size; ++r) EXPECT_TRUE(all[r] == r);

    /* Gatherv/Scatterv: rank r contributes r % 3 + 1 ints. */
    int mine[3] = {rank, rank, rank}, gathered[3 * MAXP];
    for (int r = 0, d = 0; r < size; ++r) {
      counts[r] = r % 3 + 1;
      displs[r] = d;
      d += counts[r];
    }
    CALL(MPI_Gatherv, mine, rank % 3 + 1, MPI_INT, gathered, counts, displs, MPI_INT, root, w);
    if (rank == root)
      for (int r = 0; r < size; ++r) EXPECT_TRUE(gathered[displs[r] + counts[r] - 1] == r);

    int piece = -1;
    for (int r = 0; r < size; ++r) all[r] = 100 + r;
    CALL(MPI_Scatter, all, 1, MPI_INT, &piece, 1, MPI_INT, root, w);
    EXPECT_TRUE(piece == 100 + rank);

    int got[3] = {-1, -1, -1};
    for (int r = 0; r < size; ++r)
      for (int k = 0; k < counts[r]; ++k) gathered[displs[r] + k] = 200 + r;
    CALL(MPI_Scatterv, gathered, counts, displs, MPI_INT, got, rank % 3 + 1, MPI_INT, root, w);
    EXPECT_TRUE(got[rank % 3] == 200 + rank);
  }

  int sum = -1;
  CALL(MPI_Allreduce, &rank, &sum, 1, MPI_INT, MPI_SUM, w);
  EXPECT_TRUE(sum == tri);
  int inplace = rank + 1;
  CALL(MPI_Allreduce, MPI_IN_PLACE, &inplace, 1, MPI_INT, MPI_MAX, w);
  EXPECT_TRUE(inplace == size);

  int all[MAXP], counts[MAXP], displs[MAXP];
  CALL(MPI_Allgather, &rank, 1, MPI_INT, all, 1, MPI_INT, w);
  for (int r = 0; r < size; ++r) EXPECT_TRUE(all[r] == r);
  for (int r = 0; r < size; ++r) all[r] = r == rank ? 7 * r : -1;
  CALL(MPI_Allgather, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, w);
  for (int r = 0; r < size; ++r) EXPECT_TRUE(all[r] == 7 * r);

  int mine[2] = {rank, rank}, gathered[2 * MAXP];
  for (int r = 0, d = 0; r < size; ++r) {
    counts[r] = r % 2 + 1;
    displs[r] = d;
    d += counts[r];
  }
  CALL(MPI_Allgatherv, mine, rank % 2 + 1, MPI_INT, gathered, counts, displs, MPI_INT, w);
  for (int r = 0; r < size; ++r) EXPECT_TRUE(gathered[displs[r]] == r);

  int to[MAXP], from[MAXP];
  for (int r = 0; r < size; ++r) to[r] = rank * 1000 + r;
  CALL(MPI_Alltoall, to, 1, MPI_INT, from, 1, MPI_INT, w);
  for (int r = 0; r < size; ++r) EXPECT_TRUE(from[r] == r * 1000 + rank);

  /* Alltoallv: one int to every rank, placed in reverse order. */
  int sdispls[MAXP], rdispls[MAXP], ones[MAXP];
  for (int r = 0; r < size; ++r) {
    ones[r] = 1;
    sdispls[r] = size - 1 - r;
    rdispls[r] = r;
    to[size - 1 - r] = rank * 1000 + r;
  }
  CALL(MPI_Alltoallv, to, ones, sdispls, MPI_INT, from, ones, rdispls, MPI_INT, w);
  for (int r = 0; r < size; ++r) EXPECT_TRUE(from[r] == r * 1000 + rank);

  for (int r = 0; r < size; ++r) to[r] = r + rank;
  int block = -1;
  CALL(MPI_Reduce_scatter_block, to, &block, 1, MPI_INT, MPI_SUM, w);
  EXPECT_TRUE(block == size * rank + tri);

  int scan = -1, exscan = -1;
  CALL(MPI_Scan, &rank, &scan, 1, MPI_INT, MPI_SUM, w);
  EXPECT_TRUE(scan == rank * (rank + 1) / 2);
  CALL(MPI_Exscan, &rank, &exscan, 1, MPI_INT, MPI_SUM, w);
  if (rank > 0) EXPECT_TRUE(exscan == rank * (rank - 1) / 2);

  MPI_Request req;
  int isum = -1;
  CALL(MPI_Iallreduce, &rank, &isum, 1, MPI_INT, MPI_SUM, w, &req);
  CALL(MPI_Wait, &req, MPI_STATUS_IGNORE);
  EXPECT_TRUE(isum == tri);

  CALL(MPI_Barrier, w);
  expect_report(rank, size);
  if (rank == 0) printf("collectives: %d ranks: ok\n", size);
  MPI_Finalize();
  return 0;
}
