/* SPDX-License-Identifier: BSD-3-Clause */
/* Regions with known metric signatures (run_metrics_test.py):
 *   touch_pages(N)  writes one byte to each of N fresh pages (MADV_NOHUGEPAGE): N minor page faults
 *   nap()           sleeps 200 ms: task-clock far below its wall time, >= 1 voluntary switch
 *   burn()          spins 200 ms of its thread's CPU time: task-clock about its wall time
 * main runs them, then a second thread runs touch_pages(WORKER_PAGES): per-thread event sets. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGES 2000
#define WORKER_PAGES 700

static double thread_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) long touch_pages(long n) {
  long page = sysconf(_SC_PAGESIZE);
  char* p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return -1;
  madvise(p, n * page, MADV_NOHUGEPAGE);
  for (long i = 0; i < n; ++i) p[i * page] = (char)i;
  long sum = 0;
  for (long i = 0; i < n; ++i) sum += p[i * page];
  munmap(p, n * page);
  return sum;
}

__attribute__((noinline)) void nap(void) {
  struct timespec ts = {0, 200 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

volatile double sink;
__attribute__((noinline)) void burn(void) {
  double start = thread_cpu(), x = 1;
  while (thread_cpu() - start < 0.2)
    for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

static void* worker(void* arg) {
  (void)arg;
  touch_pages(WORKER_PAGES);
  return NULL;
}

int main(void) {
  touch_pages(PAGES);
  nap();
  burn();
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  printf("regions done\n");
  return 0;
}
