/* SPDX-License-Identifier: BSD-3-Clause */
/* fork(): the child must not write over the parent's experiment; the parent's trace is whole. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static long n_step;

__attribute__((noinline)) static int step(int x) {
  n_step++;
  return x + 1;
}

int main(void) {
  int r = 0;
  for (int i = 0; i < 5; ++i) r = step(r);
  long before = n_step;
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 100; ++i) r = step(r);
    _exit(r == 105 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  for (int i = 0; i < 3; ++i) r = step(r);
  printf("child %d r %d\n", WEXITSTATUS(status), r);
  /* The parent's own calls: the child's copy of the counter never comes back. */
  printf("PROF_EXPECT main 1\nPROF_EXPECT step %ld\n", before + 3);
  return WEXITSTATUS(status);
}
