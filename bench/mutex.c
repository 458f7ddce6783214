/* SPDX-License-Identifier: BSD-3-Clause */
/* Lock/unlock loop of bench/run.sh: the cost of prof's pthread_mutex_* wrappers.
 *
 *   mutex N      N pthread_mutex_lock + pthread_mutex_unlock pairs on one (uncontended) mutex
 *
 * Prints "pairs=<n> loop_ns=<ns>", clock_gettime(CLOCK_MONOTONIC) around the loop only. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long ns_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static volatile long long g_counter;

int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : 1000000;
  if (n <= 0) {
    fprintf(stderr, "usage: %s N\n", argv[0]);
    return 2;
  }
  long long t0 = ns_now();
  for (long long i = 0; i < n; ++i) {
    pthread_mutex_lock(&g_mutex);
    g_counter = g_counter + 1;
    pthread_mutex_unlock(&g_mutex);
  }
  long long t1 = ns_now();
  printf("pairs=%lld loop_ns=%lld\n", n, t1 - t0);
  return g_counter == n ? 0 : 1;
}
