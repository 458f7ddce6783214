/* SPDX-License-Identifier: BSD-3-Clause */
/* The primitives a metric read is made of (bench/metrics.sh): ns per call of read() on a perf
 * software event (task clock, user domain, as PAPI opens it), of getrusage(RUSAGE_THREAD) and,
 * when built with -DHAVE_PAPI -lpapi, of PAPI_read on an event set holding perf::TASK-CLOCK.
 * Prints "perf_read_ns=<n> getrusage_ns=<n> [papi_read_ns=<n>]" (-1 where it cannot run). */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_PAPI
#include <papi.h>
#endif

#define N 200000

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(void) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.type = PERF_TYPE_SOFTWARE;
  a.size = sizeof a;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.exclude_kernel = 1;
  long long v = 0, t0, t1;
  double perf_ns = -1;
  int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  if (fd >= 0) {
    t0 = now_ns();
    for (int i = 0; i < N; ++i)
      if (read(fd, &v, sizeof v) != sizeof v) return 1;
    t1 = now_ns();
    perf_ns = (double)(t1 - t0) / N;
  }
  struct rusage ru;
  t0 = now_ns();
  for (int i = 0; i < N; ++i) getrusage(RUSAGE_THREAD, &ru);
  t1 = now_ns();
  printf("perf_read_ns=%.0f getrusage_ns=%.0f", perf_ns, (double)(t1 - t0) / N);
#ifdef HAVE_PAPI
  double papi_ns = -1;
  int set = PAPI_NULL;
  if (PAPI_library_init(PAPI_VER_CURRENT) == PAPI_VER_CURRENT && PAPI_create_eventset(&set) == PAPI_OK &&
      PAPI_add_named_event(set, "perf::TASK-CLOCK") == PAPI_OK && PAPI_start(set) == PAPI_OK) {
    long long values[4];
    t0 = now_ns();
    for (int i = 0; i < N; ++i) PAPI_read(set, values);
    t1 = now_ns();
    papi_ns = (double)(t1 - t0) / N;
  }
  printf(" papi_read_ns=%.0f", papi_ns);
#endif
  printf("\n");
  return 0;
}
