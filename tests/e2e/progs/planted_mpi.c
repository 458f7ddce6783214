// SPDX-License-Identifier: BSD-3-Clause
// Planted MPI wait states for prof-report's findings, 2 ranks, 6 rounds (issue 31). The work
// spins on the wall clock, so that a rank the OS sets aside still ends its work on time: the
// waits are the planted ones, not the machine's noise.
//   late       rank 1 works 150 ms, then sends; rank 0 receives at once: late sender (rank 0 waits)
//   latercv    rank 0 sends 4 MiB with MPI_Ssend at once; rank 1 works 150 ms, then receives:
//              late receiver (rank 0 waits in the send)
//   imbalance  both work, rank 0 twice as long (150 ms against 75), then MPI_Allreduce: rank 1
//              waits at the N x N collective, and work() is imbalanced
//   clean      the twin that must stay silent: rank 1 sends at the round's start, rank 0 works
//              150 ms and then receives (the message is there); both work until the same
//              moment (450 ms into the round, one clock for both) before MPI_Allreduce
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline __attribute__((always_inline)) double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile unsigned long sink;

static inline __attribute__((always_inline)) void spin_until(double end) {
  while (now() < end)
    for (int i = 0; i < 1000; ++i) sink += (unsigned long)i;
}

__attribute__((noinline)) void work(double ms) { spin_until(now() + ms * 1e-3); }
__attribute__((noinline)) void work_until(double end) { spin_until(end); }

static double round_start;  // clean: the round's start, the same on both ranks (one machine's clock)

static char* big;

__attribute__((noinline)) void exchange(int rank, const char* mode) {
  int v = rank;
  if (!strcmp(mode, "late")) {
    if (rank == 1) {
      work(150);
      MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (!strcmp(mode, "latercv")) {
    if (rank == 0) {
      MPI_Ssend(big, 4 << 20, MPI_CHAR, 1, 8, MPI_COMM_WORLD);
    } else {
      work(150);
      MPI_Recv(big, 4 << 20, MPI_CHAR, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else {  // clean: the message waits for its receive, not the other way round
    if (rank == 1) {
      MPI_Send(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    } else {
      work_until(round_start + 0.15);
      MPI_Recv(&v, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
}

__attribute__((noinline)) void reduce(int rank, const char* mode) {
  if (!strcmp(mode, "imbalance")) work(rank == 0 ? 150 : 75);
  else work_until(round_start + 0.45);  // both ranks until the same moment: no wait but the noise
  double x = rank, y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "clean";
  big = calloc(4 << 20, 1);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "planted_mpi: run it on 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double base = now();
  MPI_Bcast(&base, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  for (int round = 0; round < 6; ++round) {
    round_start = base + 0.05 + 0.45 * round;
    if (!strcmp(mode, "imbalance")) reduce(rank, mode);
    else if (!strcmp(mode, "clean")) {
      exchange(rank, mode);
      reduce(rank, mode);
    } else {
      exchange(rank, mode);
    }
  }
  free(big);
  MPI_Finalize();
  return 0;
}
