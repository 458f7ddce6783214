/* SPDX-License-Identifier: BSD-3-Clause */
/* Thread churn: THREADS threads started in groups of WIDTH (a group runs at once, then is joined),
 * each calling leaf() CALLS times, after MAIN_CALLS calls of leaf() in main (default 0).
 * thread_churn THREADS WIDTH CALLS [MAIN_CALLS]
 * Prints the threads started and leaf() calls made by them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;
static long calls_per_thread;

__attribute__((noinline)) void leaf(long i) { sink += i; }

static void* worker(void* arg) {
  for (long i = 0; i < calls_per_thread; ++i) leaf(i + (long)arg);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: thread_churn THREADS WIDTH CALLS [MAIN_CALLS]\n");
    return 2;
  }
  const long main_calls = argc == 5 ? atol(argv[4]) : 0;
  for (long i = 0; i < main_calls; ++i) leaf(i);
  const long threads = atol(argv[1]), width = atol(argv[2]);
  calls_per_thread = atol(argv[3]);
  pthread_t t[1024];
  if (width < 1 || width > 1024) return 2;
  long started = 0;
  while (started < threads) {
    long n = threads - started < width ? threads - started : width;
    for (long i = 0; i < n; ++i)
      if (pthread_create(&t[i], NULL, worker, (void*)i) != 0) {
        fprintf(stderr, "thread_churn: pthread_create failed\n");
        return 1;
      }
    for (long i = 0; i < n; ++i) pthread_join(t[i], NULL);
    started += n;
  }
  printf("threads %ld calls %ld\n", started, started * calls_per_thread);
  return 0;
}
