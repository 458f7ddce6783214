// SPDX-License-Identifier: BSD-3-Clause
// A worker thread that blocks every signal, as some libraries' worker threads do (a compressor's,
// in the issue), and burns CPU time in an instrumented function; main burns some too. With
// "open" as argument the worker blocks nothing; with "inherit" it starts with every signal
// blocked (main blocks them around pthread_create), as a thread pool's workers often do.
// (issue 30, item 16)
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) void burn(double seconds) {
  const double end = cpu_seconds() + seconds;
  while (cpu_seconds() < end)
    for (int i = 0; i < 1000; ++i) sink += (unsigned long)i * 7u;
}

static int block_all = 1;

static void* worker(void* arg) {
  (void)arg;
  if (block_all) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
  }
  burn(0.4);
  return NULL;
}

int main(int argc, char** argv) {
  block_all = !(argc > 1 && strcmp(argv[1], "open") == 0);
  const int inherit = argc > 1 && strcmp(argv[1], "inherit") == 0;
  sigset_t all, old;
  sigfillset(&all);
  if (inherit) pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  if (inherit) pthread_sigmask(SIG_SETMASK, &old, NULL);
  burn(0.2);
  pthread_join(t, NULL);
  printf("done\n");
  return 0;
}
