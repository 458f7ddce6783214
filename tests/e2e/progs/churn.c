/* SPDX-License-Identifier: BSD-3-Clause */
/* Thread churn (e2e_lost_events_nested, e2e_metrics_churn): ROUNDS rounds of WIDTH threads, each
 * calling leaf() CALLS times, while the main thread keeps calling leaf() too: every thread gets
 * and releases its PAPI event set; prints the number of threads and leaf calls. */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 40
#define WIDTH 8
#define CALLS 200

volatile long sink;
__attribute__((noinline)) void leaf(long i) { sink += i; }

static void* worker(void* arg) {
  for (long i = 0; i < CALLS; ++i) leaf(i + (long)arg);
  return NULL;
}

int main(void) {
  long threads = 0, calls = 0;
  for (int r = 0; r < ROUNDS; ++r) {
    pthread_t t[WIDTH];
    for (int i = 0; i < WIDTH; ++i) pthread_create(&t[i], NULL, worker, (void*)(long)i), ++threads;
    for (long i = 0; i < CALLS; ++i) leaf(i), ++calls;
    for (int i = 0; i < WIDTH; ++i) pthread_join(t[i], NULL);
  }
  printf("churn threads=%ld leaf_calls=%ld\n", threads, calls + threads * CALLS);
  return 0;
}
