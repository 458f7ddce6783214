/* SPDX-License-Identifier: BSD-3-Clause */
/* PROF_FLUSH_SIGNAL with MPI: every rank calls leaf() N1 times, sends itself SIGUSR1 and waits for
 * its checkpoint profile (<experiment>/profile.rank<r>.cubex), copies it to <that>.1; then N2 more
 * calls, SIGUSR1 again, waits for the new file (a rename: a new inode); then the job ends normally
 * (MPI_Finalize), so the final outputs replace the ranks' checkpoint profiles.
 *   checkpoint_mpi <experiment> N1 N2 */
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint_files.h"

static volatile long sink;

__attribute__((noinline)) void leaf(long i) { sink += i; }

static void die(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long n1 = atol(argv[2]), n2 = atol(argv[3]);
  char path[4096], first[4200];
  snprintf(path, sizeof path, "%s/profile.rank%d.cubex", argv[1], rank);
  snprintf(first, sizeof first, "%s.1", path);
  for (long i = 0; i < n1; ++i) leaf(i);
  kill(getpid(), SIGUSR1);
  const ino_t one = wait_for_new(path, 0, die);
  copy(path, first, die);
  MPI_Barrier(MPI_COMM_WORLD);
  for (long i = 0; i < n2; ++i) leaf(i);
  kill(getpid(), SIGUSR1);
  wait_for_new(path, one, die);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d: calls %ld then %ld\n", rank, n1, n1 + n2);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
