/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_THREAD_MULTIPLE: 2 pthreads per rank; thread t exchanges messages with thread t of the
 * neighbour ranks (to the right, from the left), tag 100 + t, with Irecv + Send + Wait and
 * Sendrecv. Where the MPI library does not provide MPI_THREAD_MULTIPLE it says so and the main
 * thread does the threads' work in turn. Prints its counts (expect.h). */
#include <pthread.h>

#include "expect.h"

enum { THREADS = 2, EXCHANGES = 8 };

static int g_rank, g_size;

static void* exchange(void* arg) {
  const int t = (int)(long)arg;
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size, tag = 100 + t;
  for (int k = 0; k < EXCHANGES; ++k) {
    int out = g_rank * 1000 + t * 100 + k, in = -1;
    MPI_Request req;
    MPI_Status st;
    CALL(MPI_Irecv, &in, 1, MPI_INT, left, tag, MPI_COMM_WORLD, &req);
    CALL(MPI_Send, &out, 1, MPI_INT, right, tag, MPI_COMM_WORLD);
    CALL(MPI_Wait, &req, &st);
    EXPECT_MESSAGES(1, 1);
    EXPECT_TRUE(in == left * 1000 + t * 100 + k && st.MPI_TAG == tag);
    in = -1;
    CALL(MPI_Sendrecv, &out, 1, MPI_INT, right, tag, &in, 1, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_MESSAGES(1, 1);
    EXPECT_TRUE(in == left * 1000 + t * 100 + k);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  CALL(MPI_Init_thread, &argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CALL(MPI_Comm_rank, MPI_COMM_WORLD, &g_rank);
  CALL(MPI_Comm_size, MPI_COMM_WORLD, &g_size);
  if (provided >= MPI_THREAD_MULTIPLE) {
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; ++t)
      if (pthread_create(&th[t], NULL, exchange, (void*)t) != 0) EXPECT_TRUE(!"pthread_create");
    for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
  } else {
    if (g_rank == 0)
      printf("threads: SKIP NOTE: MPI_THREAD_MULTIPLE not provided (provided %d); single-threaded variant\n", provided);
    for (long t = 0; t < THREADS; ++t) exchange((void*)t);
  }
  CALL(MPI_Barrier, MPI_COMM_WORLD);
  expect_report(g_rank, g_size);
  if (g_rank == 0)
    printf("threads: %d ranks x %d threads, %d exchanges each: ok%s\n", g_size, THREADS, EXCHANGES,
           provided >= MPI_THREAD_MULTIPLE ? "" : " (single-threaded)");
  MPI_Finalize();
  return 0;
}
