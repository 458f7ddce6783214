/* SPDX-License-Identifier: BSD-3-Clause */
/* Thread churn (e2e_lost_events_nested, e2e_metrics_churn): ROUNDS rounds of WIDTH threads, each
 * calling leaf() CALLS times and then waiting at a barrier until all threads of its round have
 * made their calls (so that WIDTH threads hold trace buffers at once), while the main thread
 * calls leaf() too: every thread gets and releases its buffers and PAPI event sets.
 *   churn [WIDTH [ROUNDS]]     (default 8 40)
 * Prints the number of threads and leaf calls. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CALLS 200

volatile long sink;
static pthread_barrier_t barrier;

__attribute__((noinline)) void leaf(long i) { sink += i; }

static void* worker(void* arg) {
  for (long i = 0; i < CALLS; ++i) leaf(i + (long)arg);
  pthread_barrier_wait(&barrier);
  return NULL;
}

int main(int argc, char** argv) {
  const int width = argc > 1 ? atoi(argv[1]) : 8, rounds = argc > 2 ? atoi(argv[2]) : 40;
  if (width < 1 || width > 1000 || rounds < 1) {
    fprintf(stderr, "usage: churn [WIDTH (1..1000) [ROUNDS]]\n");
    return 2;
  }
  pthread_t* t = malloc(sizeof(pthread_t) * (size_t)width);
  if (!t) return 1;
  long threads = 0, calls = 0;
  for (int r = 0; r < rounds; ++r) {
    pthread_barrier_init(&barrier, NULL, (unsigned)width);
    for (int i = 0; i < width; ++i, ++threads)
      if (pthread_create(&t[i], NULL, worker, (void*)(long)i) != 0) {
        fprintf(stderr, "churn: pthread_create failed in round %d\n", r);
        _exit(1);  /* the threads created wait at the barrier: no join */
      }
    for (long i = 0; i < CALLS; ++i) leaf(i), ++calls;
    for (int i = 0; i < width; ++i) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&barrier);
  }
  free(t);
  printf("churn threads=%ld leaf_calls=%ld\n", threads, calls + threads * CALLS);
  return 0;
}
