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

static volatile long sink;

__attribute__((noinline)) void leaf(long i) { sink += i; }

static ino_t wait_for_new(const char* path, ino_t old) {
  struct stat st;
  for (int i = 0; i < 3000; ++i) { /* 30 s */
    if (stat(path, &st) == 0 && st.st_ino != old) return st.st_ino;
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "checkpoint_mpi: no new %s after 30 s\n", path);
  MPI_Abort(MPI_COMM_WORLD, 3);
  return 0;
}

static void copy(const char* from, const char* to) {
  char buf[65536];
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ssize_t n;
  if (in < 0 || out < 0) MPI_Abort(MPI_COMM_WORLD, 4);
  while ((n = read(in, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n) MPI_Abort(MPI_COMM_WORLD, 4);
  close(in);
  close(out);
}

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
  const ino_t one = wait_for_new(path, 0);
  copy(path, first);
  MPI_Barrier(MPI_COMM_WORLD);
  for (long i = 0; i < n2; ++i) leaf(i);
  kill(getpid(), SIGUSR1);
  wait_for_new(path, one);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d: calls %ld then %ld\n", rank, n1, n1 + n2);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
