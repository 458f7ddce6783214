/* SPDX-License-Identifier: BSD-3-Clause */
/* PROF_FLUSH_SIGNAL: N1 calls of leaf(), SIGUSR1 to itself, waits for the checkpoint's profile and
 * copies it to <profile>.1; N2 more calls, SIGUSR1 again, waits for the new file (a new inode: it is
 * replaced by a rename); then SIGKILL, so only the checkpoints are left.
 *   checkpoint_calls <experiment>/profile.cubex N1 N2 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint_files.h"

static volatile long sink;

__attribute__((noinline)) void leaf(long i) { sink += i; }

static void die(int code) { exit(code); }

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const char* path = argv[1];
  const long n1 = atol(argv[2]), n2 = atol(argv[3]);
  char first[4096];
  snprintf(first, sizeof first, "%s.1", path);
  for (long i = 0; i < n1; ++i) leaf(i);
  kill(getpid(), SIGUSR1);
  const ino_t one = wait_for_new(path, 0, die);
  copy(path, first, die);
  for (long i = 0; i < n2; ++i) leaf(i);
  kill(getpid(), SIGUSR1);
  wait_for_new(path, one, die);
  printf("calls %ld then %ld\n", n1, n1 + n2);
  fflush(stdout);
  raise(SIGKILL);
  return 1;
}
