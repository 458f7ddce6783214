/* SPDX-License-Identifier: BSD-3-Clause */
/* The attack of issue 30 (item 9), in one program: another user plants a symbolic link in the
 * experiment directory while the run goes on, at the name the profile is written to at the end.
 *   plant_calls <experiment>/profile.cubex <plant command>
 * Calls leaf() 1000 times, sends itself SIGUSR1 (PROF_FLUSH_SIGNAL=USR1: the checkpoint claims
 * the directory and writes a profile), waits for that profile, then runs
 * `<plant command> <experiment>/profile.cubex.tmp.<pid>` (the name the profile's final write
 * opens), calls leaf() 1000 times more and ends normally, printing "planted <status>". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "checkpoint_files.h"

static volatile long sink;

__attribute__((noinline)) void leaf(long i) { sink += i; }

static void die(int code) { exit(code); }

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  for (long i = 0; i < 1000; ++i) leaf(i);
  kill(getpid(), SIGUSR1);
  wait_for_new(argv[1], 0, die);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "%s %s.tmp.%ld", argv[2], argv[1], (long)getpid());
  const int status = system(cmd);
  for (long i = 0; i < 1000; ++i) leaf(i);
  printf("planted %d\n", status);
  return 0;
}
