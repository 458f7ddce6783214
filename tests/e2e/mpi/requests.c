/* SPDX-License-Identifier: BSD-3-Clause */
/* Requests: persistent requests (Send_init/Recv_init, Start and Startall several times,
 * Request_free at the end), Waitany, Waitsome, Testall and Test polling loops, and an Irecv that
 * never matches: Cancel + Wait, MPI_Test_cancelled true. Messages go to the right neighbour and
 * come from the left one. Prints its counts (expect.h); the polling loops count their calls. */
#include "expect.h"

enum { ROUNDS = 4, MANY = 3, LEN = 32 };

int main(int argc, char** argv) {
  CALL(MPI_Init, &argc, &argv);
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
  CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* Persistent requests: every start is a message; Startall and Start in turn. */
  int out[LEN], in[LEN];
  MPI_Request pers[2];
  CALL(MPI_Recv_init, in, LEN, MPI_INT, left, 5, MPI_COMM_WORLD, &pers[0]);
  CALL(MPI_Send_init, out, LEN, MPI_INT, right, 5, MPI_COMM_WORLD, &pers[1]);
  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < LEN; ++i) out[i] = rank * 100 + round;
    if (round % 2 == 0) {
      CALL(MPI_Startall, 2, pers);
    } else {
      CALL(MPI_Start, &pers[0]);
      CALL(MPI_Start, &pers[1]);
    }
    if (round == ROUNDS - 1) {
      CALL(MPI_Wait, &pers[0], MPI_STATUS_IGNORE);
      CALL(MPI_Wait, &pers[1], MPI_STATUS_IGNORE);
    } else {
      CALL(MPI_Waitall, 2, pers, MPI_STATUSES_IGNORE);
    }
    EXPECT_MESSAGES(1, 1);
    EXPECT_TRUE(in[LEN - 1] == left * 100 + round);
  }
  CALL(MPI_Request_free, &pers[0]);
  CALL(MPI_Request_free, &pers[1]);
  EXPECT_TRUE(pers[0] == MPI_REQUEST_NULL && pers[1] == MPI_REQUEST_NULL);

  /* Waitany over MANY receives and MANY sends, until all are done. */
  int many_out[MANY][LEN], many_in[MANY][LEN];
  MPI_Request req[2 * MANY];
  for (int k = 0; k < MANY; ++k) {
    for (int i = 0; i < LEN; ++i) many_out[k][i] = rank * 10 + k;
    CALL(MPI_Irecv, many_in[k], LEN, MPI_INT, left, 10 + k, MPI_COMM_WORLD, &req[k]);
  }
  for (int k = 0; k < MANY; ++k)
    CALL(MPI_Isend, many_out[k], LEN, MPI_INT, right, 10 + k, MPI_COMM_WORLD, &req[MANY + k]);
  EXPECT_MESSAGES(MANY, MANY);
  for (int done = 0; done < 2 * MANY; ++done) {
    int index = -1;
    MPI_Status st;
    CALL(MPI_Waitany, 2 * MANY, req, &index, &st);
    EXPECT_TRUE(index >= 0 && index < 2 * MANY);
    if (index < MANY) EXPECT_TRUE(st.MPI_SOURCE == left && st.MPI_TAG == 10 + index);
  }
  for (int k = 0; k < MANY; ++k) EXPECT_TRUE(many_in[k][0] == left * 10 + k);

  /* Waitsome until all are done (the number of calls depends on the timing); the receives take
   * MPI_ANY_TAG (messages from one sender arrive in order). */
  for (int k = 0; k < MANY; ++k) CALL(MPI_Irecv, many_in[k], LEN, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &req[k]);
  for (int k = 0; k < MANY; ++k)
    CALL(MPI_Isend, many_out[k], LEN, MPI_INT, right, 20 + k, MPI_COMM_WORLD, &req[MANY + k]);
  EXPECT_MESSAGES(MANY, MANY);
  for (int left_over = 2 * MANY; left_over > 0;) {
    int outcount = 0, indices[2 * MANY];
    MPI_Status st[2 * MANY];
    CALL(MPI_Waitsome, 2 * MANY, req, &outcount, indices, st);
    EXPECT_TRUE(outcount > 0 && outcount != MPI_UNDEFINED);
    for (int k = 0; k < outcount; ++k)
      if (indices[k] < MANY) EXPECT_TRUE(st[k].MPI_TAG == 20 + indices[k] && st[k].MPI_SOURCE == left);
    left_over -= outcount;
  }

  /* Testall polling: one receive (MPI_ANY_SOURCE), one send. */
  int flag = 0;
  CALL(MPI_Irecv, in, LEN, MPI_INT, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &req[0]);
  CALL(MPI_Isend, out, LEN, MPI_INT, right, 30, MPI_COMM_WORLD, &req[1]);
  EXPECT_MESSAGES(1, 1);
  while (!flag) CALL(MPI_Testall, 2, req, &flag, MPI_STATUSES_IGNORE);

  /* Test polling, each request on its own. */
  CALL(MPI_Irecv, in, LEN, MPI_INT, left, 31, MPI_COMM_WORLD, &req[0]);
  CALL(MPI_Isend, out, LEN, MPI_INT, right, 31, MPI_COMM_WORLD, &req[1]);
  EXPECT_MESSAGES(1, 1);
  for (int k = 0; k < 2; ++k) {
    MPI_Status st;
    flag = 0;
    while (!flag) CALL(MPI_Test, &req[k], &flag, &st);
    if (k == 0) EXPECT_TRUE(st.MPI_SOURCE == left && st.MPI_TAG == 31);
  }

  /* A receive nobody sends to: cancelled, completed by Wait, no message. */
  MPI_Request never;
  MPI_Status st;
  int cancelled = 0;
  CALL(MPI_Irecv, in, LEN, MPI_INT, left, 999, MPI_COMM_WORLD, &never);
  CALL(MPI_Cancel, &never);
  CALL(MPI_Wait, &never, &st);
  CALL(MPI_Test_cancelled, &st, &cancelled);
  EXPECT_TRUE(cancelled);

  expect_report(rank, size);
  if (rank == 0) printf("requests: %d ranks, %d persistent rounds: ok\n", size, ROUNDS);
  MPI_Finalize();
  return 0;
}
