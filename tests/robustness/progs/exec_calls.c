// SPDX-License-Identifier: BSD-3-Clause
// A program that records <calls> calls of leaf(), then replaces or starts another program
// (issue 30, item 6). Usage: exec_calls <how> <calls> [<program> [<args>...]]
//   none                 only the calls
//   execv ... fexecve    that exec function, without fork, of <program> (execl*: up to 3 arguments);
//                        when it returns (failed): "exec failed: <errno text>", <calls> more
//                        calls, exit 0
//   spawn                posix_spawn of <program>, waited for
//   fork_exec, vfork_exec  fork (vfork) and execv of <program> in the child, waited for; then
//                        <calls> more calls in the parent
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;
static volatile unsigned long sink;

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i * 7u; }

static void calls(long n) {
  for (long i = 0; i < n; ++i) leaf((int)i);
}

static int waited(pid_t pid) {
  int st = 0;
  if (waitpid(pid, &st, 0) < 0) return 1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: exec_calls <how> <calls> [<program> [<args>...]]\n");
    return 2;
  }
  const char* how = argv[1];
  const long n = atol(argv[2]);
  calls(n);
  printf("exec_calls %s: %ld calls of leaf\n", how, n);
  fflush(stdout);
  if (strcmp(how, "none") == 0) return 0;
  if (argc < 4) return 2;
  char* prog = argv[3];
  char** args = argv + 3;  // argv[0] of the new program is <program>
  char* a1 = argc > 4 ? argv[4] : NULL;
  char* a2 = argc > 5 ? argv[5] : NULL;
  char* a3 = argc > 6 ? argv[6] : NULL;
  if (strcmp(how, "spawn") == 0) {
    pid_t pid;
    if (posix_spawn(&pid, prog, NULL, NULL, args, environ) != 0) return 1;
    return waited(pid);
  }
  if (strcmp(how, "fork_exec") == 0 || strcmp(how, "vfork_exec") == 0) {
    const pid_t pid = how[0] == 'v' ? vfork() : fork();
    if (pid == 0) {
      execv(prog, args);
      _exit(127);
    }
    const int rc = waited(pid);
    calls(n);
    return rc;
  }
  if (strcmp(how, "execv") == 0) execv(prog, args);
  else if (strcmp(how, "execve") == 0) execve(prog, args, environ);
  else if (strcmp(how, "execvp") == 0) execvp(prog, args);
  else if (strcmp(how, "execvpe") == 0) execvpe(prog, args, environ);
  else if (strcmp(how, "execl") == 0) execl(prog, prog, a1, a2, a3, (char*)NULL);
  else if (strcmp(how, "execlp") == 0) execlp(prog, prog, a1, a2, a3, (char*)NULL);
  else if (strcmp(how, "execle") == 0) execle(prog, prog, a1, a2, a3, (char*)NULL, environ);
  else if (strcmp(how, "fexecve") == 0) {
    const int fd = open(prog, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) fexecve(fd, args, environ);
  } else {
    fprintf(stderr, "exec_calls: unknown <how> %s\n", how);
    return 2;
  }
  printf("exec failed: %s\n", strerror(errno));
  fflush(stdout);
  calls(n);
  return 0;
}
