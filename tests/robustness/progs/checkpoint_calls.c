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

static volatile long sink;

__attribute__((noinline)) void leaf(long i) { sink += i; }

static ino_t wait_for_new(const char* path, ino_t old) {
  struct stat st;
  for (int i = 0; i < 3000; ++i) { /* 30 s */
    if (stat(path, &st) == 0 && st.st_ino != old) return st.st_ino;
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "checkpoint_calls: no new %s after 30 s\n", path);
  exit(3);
}

static void copy(const char* from, const char* to) {
  char buf[65536];
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ssize_t n;
  if (in < 0 || out < 0) exit(4);
  while ((n = read(in, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n) exit(4);
  close(in);
  close(out);
}

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const char* path = argv[1];
  const long n1 = atol(argv[2]), n2 = atol(argv[3]);
  char first[4096];
  snprintf(first, sizeof first, "%s.1", path);
  for (long i = 0; i < n1; ++i) leaf(i);
  kill(getpid(), SIGUSR1);
  const ino_t one = wait_for_new(path, 0);
  copy(path, first);
  for (long i = 0; i < n2; ++i) leaf(i);
  kill(getpid(), SIGUSR1);
  wait_for_new(path, one);
  printf("calls %ld then %ld\n", n1, n1 + n2);
  fflush(stdout);
  raise(SIGKILL);
  return 1;
}
