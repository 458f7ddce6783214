/* SPDX-License-Identifier: BSD-3-Clause */
/* A forked child that returns through exit() (atexit handlers run in the child). */
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
  r = step(r);
  printf("PROF_EXPECT main 1\nPROF_EXPECT step %ld\n", n_step);
  return WEXITSTATUS(status);
}
