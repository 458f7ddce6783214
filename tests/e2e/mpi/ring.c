/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point: Isend/Irecv/Waitall around a ring (both directions, MPI_STATUSES_IGNORE;
 * small messages and one of 256 KiB, beyond Open MPI's eager limit), Sendrecv, a ping-pong
 * between ranks 0 and 1 with Send/Recv (MPI_ANY_SOURCE, once MPI_ANY_TAG, MPI_STATUS_IGNORE), a
 * zero-byte message, matched probes (Mprobe/Mrecv, Improbe/Imrecv), and sends to / receives from
 * MPI_PROC_NULL, blocking and non-blocking
 * (calls, but no messages). Prints its counts (expect.h). */
#include "expect.h"

enum { ITERATIONS = 6, PINGPONGS = 5, LEN = 64, BIG = 64 * 1024 };

static int g_big_out[BIG], g_big_in[BIG];

int main(int argc, char** argv) {
  CALL(MPI_Init, &argc, &argv);
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
  CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* The ring, both directions: tag 1 travels right, tag 2 travels left. */
  int out[LEN], from_left[LEN], from_right[LEN];
  for (int it = 0; it < ITERATIONS; ++it) {
    for (int i = 0; i < LEN; ++i) out[i] = rank * 1000 + it * 10 + i % 10;
    MPI_Request req[4];
    CALL(MPI_Irecv, from_left, LEN, MPI_INT, left, 1, MPI_COMM_WORLD, &req[0]);
    CALL(MPI_Irecv, from_right, LEN, MPI_INT, right, 2, MPI_COMM_WORLD, &req[1]);
    CALL(MPI_Isend, out, LEN, MPI_INT, right, 1, MPI_COMM_WORLD, &req[2]);
    CALL(MPI_Isend, out, LEN, MPI_INT, left, 2, MPI_COMM_WORLD, &req[3]);
    CALL(MPI_Waitall, 4, req, MPI_STATUSES_IGNORE);
    EXPECT_MESSAGES(2, 2);
    EXPECT_TRUE(from_left[LEN - 1] == left * 1000 + it * 10 + (LEN - 1) % 10);
    EXPECT_TRUE(from_right[0] == right * 1000 + it * 10);
  }

  /* One large message to the right (rendezvous protocol). */
  for (int i = 0; i < BIG; ++i) g_big_out[i] = rank + i;
  MPI_Request big[2];
  CALL(MPI_Irecv, g_big_in, BIG, MPI_INT, left, 4, MPI_COMM_WORLD, &big[0]);
  CALL(MPI_Isend, g_big_out, BIG, MPI_INT, right, 4, MPI_COMM_WORLD, &big[1]);
  CALL(MPI_Waitall, 2, big, MPI_STATUSES_IGNORE);
  EXPECT_MESSAGES(1, 1);
  EXPECT_TRUE(g_big_in[BIG - 1] == left + BIG - 1);

  /* Sendrecv: to the right, from the left. */
  int token = rank, got = -1;
  MPI_Status st;
  CALL(MPI_Sendrecv, &token, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &st);
  EXPECT_MESSAGES(1, 1);
  EXPECT_TRUE(got == left && st.MPI_SOURCE == left && st.MPI_TAG == 3);

  /* Ping-pong between ranks 0 and 1; rank 0 receives from MPI_ANY_SOURCE (once with MPI_ANY_TAG). */
  if (rank <= 1) {
    char buf[LEN * 4];
    memset(buf, rank, sizeof buf);
    for (int p = 0; p < PINGPONGS; ++p) {
      if (rank == 0) {
        CALL(MPI_Send, buf, (int)sizeof buf, MPI_CHAR, 1, 10 + p, MPI_COMM_WORLD);
        CALL(MPI_Recv, buf, (int)sizeof buf, MPI_CHAR, MPI_ANY_SOURCE, p == 2 ? MPI_ANY_TAG : 20 + p, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
      } else {
        CALL(MPI_Recv, buf, (int)sizeof buf, MPI_CHAR, 0, 10 + p, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CALL(MPI_Send, buf, (int)sizeof buf, MPI_CHAR, 0, 20 + p, MPI_COMM_WORLD);
      }
      EXPECT_MESSAGES(1, 1);
    }
    /* A zero-byte message, 0 -> 1. */
    if (rank == 0) {
      CALL(MPI_Send, NULL, 0, MPI_CHAR, 1, 30, MPI_COMM_WORLD);
      EXPECT_MESSAGES(1, 0);
    } else {
      CALL(MPI_Recv, buf, (int)sizeof buf, MPI_CHAR, 0, 30, MPI_COMM_WORLD, &st);
      int count = -1;
      MPI_Get_count(&st, MPI_CHAR, &count); /* group ext: not recorded by default, not counted */
      EXPECT_TRUE(count == 0);
      EXPECT_MESSAGES(0, 1);
    }
  }

  /* Matched probes, 1 -> 0: MPI_Mprobe + MPI_Mrecv, then MPI_Improbe (polled) + MPI_Imrecv + Wait. */
  if (size > 1 && rank < 2) {
    if (rank == 1) {
      CALL(MPI_Send, &token, 1, MPI_INT, 0, 50, MPI_COMM_WORLD);
      CALL(MPI_Send, &token, 1, MPI_INT, 0, 51, MPI_COMM_WORLD);
      EXPECT_MESSAGES(2, 0);
    } else {
      MPI_Message msg;
      CALL(MPI_Mprobe, 1, 50, MPI_COMM_WORLD, &msg, &st);
      CALL(MPI_Mrecv, &got, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
      int flag = 0;
      while (!flag) CALL(MPI_Improbe, 1, 51, MPI_COMM_WORLD, &flag, &msg, &st);
      MPI_Request mreq;
      CALL(MPI_Imrecv, &got, 1, MPI_INT, &msg, &mreq);
      CALL(MPI_Wait, &mreq, MPI_STATUS_IGNORE);
      EXPECT_MESSAGES(0, 2);
    }
  }

  /* MPI_PROC_NULL: the calls are recorded, no message. */
  CALL(MPI_Send, &token, 1, MPI_INT, MPI_PROC_NULL, 40, MPI_COMM_WORLD);
  CALL(MPI_Recv, &got, 1, MPI_INT, MPI_PROC_NULL, 40, MPI_COMM_WORLD, &st);
  EXPECT_TRUE(st.MPI_SOURCE == MPI_PROC_NULL);
  MPI_Request null_req[2];
  CALL(MPI_Irecv, &got, 1, MPI_INT, MPI_PROC_NULL, 41, MPI_COMM_WORLD, &null_req[0]);
  CALL(MPI_Isend, &token, 1, MPI_INT, MPI_PROC_NULL, 41, MPI_COMM_WORLD, &null_req[1]);
  CALL(MPI_Waitall, 2, null_req, MPI_STATUSES_IGNORE);

  expect_report(rank, size);
  if (rank == 0) printf("ring: %d ranks, %d ring iterations, %d ping-pongs: ok\n", size, ITERATIONS, PINGPONGS);
  MPI_Finalize();
  return 0;
}
