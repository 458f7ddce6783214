/* SPDX-License-Identifier: BSD-3-Clause */
/* Counting for the MPI end-to-end programs (run_mpi_test.py checks the trace against it).
 *
 * Every MPI call of a program goes through CALL(MPI_Xxx, args...), which counts it per rank, in
 * all and on the main thread (thread-safe), before calling it; EXPECT_MESSAGES(sent, received)
 * adds the point-to-point message events the trace must hold on this rank (MpiSend + MpiIsend,
 * MpiRecv + MpiIrecv: nothing for MPI_PROC_NULL peers or cancelled receives). The blocking
 * collectives are counted as MpiCollectiveBegin events too. expect_report() is the last thing
 * before MPI_Finalize: it gathers all ranks' counts on rank 0 (counting that MPI_Gather and the
 * MPI_Finalize that follows), which prints them:
 *   PROF_EXPECT <rank> <MPI function> <calls> <calls on the main thread>
 *   PROF_MESSAGES <rank> <sent> <received>
 *   PROF_COLLECTIVES <rank> <blocking collective operations>
 * Nothing of it is hard-coded in the checker. */
#ifndef PROF_E2E_MPI_EXPECT_H
#define PROF_E2E_MPI_EXPECT_H

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every MPI function a program may call through CALL(). */
static const char* const expect_names[] = {
    "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Comm_rank", "MPI_Comm_size",
    "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Sendrecv", "MPI_Wait", "MPI_Waitall",
    "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall", "MPI_Send_init", "MPI_Recv_init",
    "MPI_Start", "MPI_Startall", "MPI_Request_free", "MPI_Cancel", "MPI_Test_cancelled",
    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv",
    "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
    "MPI_Alltoallv", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan", "MPI_Iallreduce",
    "MPI_Comm_split", "MPI_Comm_dup", "MPI_Comm_free", "MPI_Intercomm_create", "MPI_Intercomm_merge",
    "MPI_Mprobe", "MPI_Mrecv", "MPI_Improbe", "MPI_Imrecv",
};
#define EXPECT_N ((int)(sizeof(expect_names) / sizeof(expect_names[0])))

/* The blocking collectives: one MpiCollectiveBegin/End pair per call. */
static const char* const expect_collectives[] = {
    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv",
    "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
    "MPI_Alltoallv", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan",
};

/* calls per name, then sent, received, collectives, then calls per name on the main thread */
#define EXPECT_SLOTS (2 * EXPECT_N + 3)
static long expect_counts[EXPECT_SLOTS];
static pthread_t expect_main_thread; /* the thread of the first counted call (MPI_Init) */
static int expect_main_known;

__attribute__((no_instrument_function)) static void expect_add(int i, long n) {
  __atomic_fetch_add(&expect_counts[i], n, __ATOMIC_RELAXED);
}

__attribute__((no_instrument_function)) static void expect_count(const char* name) {
  for (int i = 0; i < EXPECT_N; ++i) {
    if (strcmp(expect_names[i], name) == 0) {
      if (!__atomic_load_n(&expect_main_known, __ATOMIC_ACQUIRE)) {
        expect_main_thread = pthread_self();
        __atomic_store_n(&expect_main_known, 1, __ATOMIC_RELEASE);
      }
      expect_add(i, 1);
      if (pthread_equal(pthread_self(), expect_main_thread)) expect_add(EXPECT_N + 3 + i, 1);
      for (size_t c = 0; c < sizeof(expect_collectives) / sizeof(expect_collectives[0]); ++c)
        if (strcmp(expect_collectives[c], name) == 0) expect_add(EXPECT_N + 2, 1);
      return;
    }
  }
  fprintf(stderr, "expect.h: %s is not in expect_names; add it there\n", name);
  abort();
}


#define CALL(fn, ...) (expect_count(#fn), fn(__VA_ARGS__))
#define EXPECT_MESSAGES(sent, received) (expect_add(EXPECT_N, (sent)), expect_add(EXPECT_N + 1, (received)))

/* A failed expectation of the program itself (wrong data): not prof's fault. */
#define EXPECT_TRUE(cond)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: the MPI program's own check failed: %s\n", __FILE__, __LINE__, #cond); \
      MPI_Abort(MPI_COMM_WORLD, 3);                                                                \
    }                                                                                              \
  } while (0)

/* Gathers the counts on rank 0 and prints them; call it right before MPI_Finalize. */
static void expect_report(int rank, int size) {
  expect_count("MPI_Gather");
  expect_count("MPI_Finalize");
  long* all = rank == 0 ? malloc(sizeof(long) * (size_t)EXPECT_SLOTS * (size_t)size) : NULL;
  long mine[EXPECT_SLOTS];
  for (int i = 0; i < EXPECT_SLOTS; ++i) mine[i] = __atomic_load_n(&expect_counts[i], __ATOMIC_RELAXED);
  MPI_Gather(mine, EXPECT_SLOTS, MPI_LONG, all, EXPECT_SLOTS, MPI_LONG, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  for (int r = 0; r < size; ++r) {
    const long* c = all + (size_t)r * EXPECT_SLOTS;
    for (int i = 0; i < EXPECT_N; ++i)
      if (c[i] > 0) printf("PROF_EXPECT %d %s %ld %ld\n", r, expect_names[i], c[i], c[EXPECT_N + 3 + i]);
    printf("PROF_MESSAGES %d %ld %ld\n", r, c[EXPECT_N], c[EXPECT_N + 1]);
    printf("PROF_COLLECTIVES %d %ld\n", r, c[EXPECT_N + 2]);
  }
  fflush(stdout);
  free(all);
}

#endif
