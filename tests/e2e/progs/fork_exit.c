/* SPDX-License-Identifier: BSD-3-Clause */
/* A forked child that returns through exit() (atexit handlers run in the child); then a second
 * child, killed with SIGTERM, must die of it at once (prof's signal handlers have nothing to write
 * in a child: they must not park the signal). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static long n_step;

__attribute__((noinline)) static int step(int x) {
  n_step++;
  return x + 1;
}

int main(void) {
  int r = step(0);
  pid_t pid = fork();
  if (pid == 0) {
    step(r);
    exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  pid_t sleeper = fork();
  if (sleeper == 0) {
    for (int i = 0; i < 100; ++i) usleep(50000); /* 5 s unless the signal ends it */
    _exit(7);
  }
  usleep(100000);
  kill(sleeper, SIGTERM);
  int st2 = 0;
  waitpid(sleeper, &st2, 0);
  if (!WIFSIGNALED(st2) || WTERMSIG(st2) != SIGTERM) {
    fprintf(stderr, "fork_exit: the child survived SIGTERM (status %d)\n", st2);
    return 3;
  }
  r = step(r);
  printf("PROF_EXPECT main 1\nPROF_EXPECT step %ld\n", n_step);
  return WEXITSTATUS(status);
}
