// SPDX-License-Identifier: BSD-3-Clause
// Threads blocked in a pthread call when the run ends (issue 30, item 12).
//   join: main waits in pthread_join for a worker that calls leaf() forever; a stop signal ends it.
//   cond: a worker waits in pthread_cond_wait forever; main calls leaf() a while and returns.
// Prints "running" once the worker runs.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long sink;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static volatile int started;

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i * 7u; }

static void* spin(void* arg) {
  (void)arg;
  started = 1;
  for (;;) {  // about 100,000 calls a second: a trace the otf2 module reads in seconds
    for (int i = 0; i < 10; ++i) leaf(i);
    usleep(100);
  }
  return NULL;
}

static void* wait_forever(void* arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  started = 1;
  for (;;) pthread_cond_wait(&c, &m);
  return NULL;
}

int main(int argc, char** argv) {
  const int cond = argc > 1 && strcmp(argv[1], "cond") == 0;
  pthread_t t;
  pthread_create(&t, NULL, cond ? wait_forever : spin, NULL);
  while (!started) {
  }
  fprintf(stderr, "running\n");
  if (!cond) {
    pthread_join(t, NULL);
    return 1;
  }
  pthread_mutex_lock(&m);  // the worker is in pthread_cond_wait once this is ours
  pthread_mutex_unlock(&m);
  for (int k = 0; k < 10000; ++k) leaf(k);
  return 0;
}
