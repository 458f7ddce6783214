/* SPDX-License-Identifier: BSD-3-Clause */
/* A checkpoint (PROF_FLUSH_SIGNAL=USR1) taken while a rank waits in a collective
 * (flush_signal_mpi.sh): rank 1 tells rank 0 its pid and enters MPI_Barrier; rank 0 waits 0.3 s,
 * sends rank 1 SIGUSR1, waits for rank 1's checkpoint profile <experiment>/profile.rank1.cubex,
 * and then enters the barrier too. Every rank prints "rank <r>: done".
 *   checkpoint_barrier <experiment> */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "checkpoint_files.h"

static volatile long sink;
__attribute__((noinline)) void leaf(long i) { sink += i; }
static void die(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (long i = 0; i < 1000; ++i) leaf(i);
  int pid = (int)getpid();
  if (rank == 1) MPI_Send(&pid, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Recv(&pid, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    usleep(300000); /* rank 1 waits in MPI_Barrier by now */
    kill((pid_t)pid, SIGUSR1);
    char path[4096];
    snprintf(path, sizeof path, "%s/profile.rank1.cubex", argv[1]);
    wait_for_new(path, 0, die);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d: done\n", rank);
  MPI_Finalize();
  return 0;
}
