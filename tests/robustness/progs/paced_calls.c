// SPDX-License-Identifier: BSD-3-Clause
// Calls instrumented functions without end, at a pace: in each of THREADS threads (argument,
// default 1; main is one of them), 10 calls of leaf() per mid(), then a 20 us sleep. A trace at
// PROF_TOTAL_MEMORY=8M flushes about once a second and stays small enough for the readers.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i * 7u; }

__attribute__((noinline)) void mid(int i) {
  for (int k = 0; k < 10; ++k) leaf(i + k);
}

static void* run(void* arg) {
  (void)arg;
  for (int i = 0;; ++i) {
    mid(i);
    usleep(20);
  }
  return NULL;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 1;
  for (int t = 1; t < threads; ++t) {
    pthread_t id;
    pthread_create(&id, NULL, run, NULL);
  }
  fprintf(stderr, "paced_calls: running\n");
  run(NULL);
}
