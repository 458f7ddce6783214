/* SPDX-License-Identifier: BSD-3-Clause */
/* The checkpoint test programs' file helpers (checkpoint_calls.c, checkpoint_mpi.c): waiting for a
 * checkpoint's profile and copying it. `die(code)` ends the program on a failure. */
#pragma once
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Waits up to 30 s for `path` to exist with an inode other than `old` (a checkpoint replaces its
 * profile by a rename); returns the new inode. */
static ino_t wait_for_new(const char* path, ino_t old, void (*die)(int)) {
  struct stat st;
  for (int i = 0; i < 3000; ++i) {
    if (stat(path, &st) == 0 && st.st_ino != old) return st.st_ino;
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "checkpoint test: no new %s after 30 s\n", path);
  die(3);
  return 0;
}

static void copy(const char* from, const char* to, void (*die)(int)) {
  char buf[65536];
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ssize_t n;
  if (in < 0 || out < 0) die(4);
  while ((n = read(in, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n) die(4);
  close(in);
  close(out);
}
