/* SPDX-License-Identifier: BSD-3-Clause */
/* The call-heavy program of bench/run.sh. One source, built plain, with -finstrument-functions
 * (libprof-nop or libprof via prof-wrap) and with -pg (uftrace); always at -O2.
 *
 *   calls loop N        N calls of a tiny leaf function from one loop
 *   calls recurse N [D] N calls in total, as N/D descents of a recursion D deep (default 64)
 *
 * and, for scale (built plain only), the pieces an enter+exit pair of a tracer is made of:
 *   calls rdtsc N       N iterations of two rdtsc (one per event)
 *   calls clock N       N iterations of two clock_gettime(CLOCK_MONOTONIC)
 *   calls touch N       first write to fresh anonymous memory, 32 bytes per iteration (the
 *                       two 16-byte records of a pair), i.e. the page faults of a trace buffer
 *
 * Prints one line: "mode=<m> calls=<n> loop_ns=<ns> end_realtime_ns=<ns>" (calls = iterations
 * for the scale modes). loop_ns is
 * clock_gettime(CLOCK_MONOTONIC) around the calls only (no process start, no trace write-out);
 * end_realtime_ns is CLOCK_REALTIME right after the loop, so the script can time what happens
 * between the end of the work and the end of the process (prof's OTF2 write-out). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_RDTSC 1
#endif

/* noipa: the call must stay a real call in every variant (no inlining, cloning, or removal
 * of a call whose result the compiler could compute). */
__attribute__((noipa)) int tiny(int x) { return x + 1; }

/* The empty asm keeps the call a real recursion at -O2 (GCC would otherwise turn the
 * "rec(d - 1) + 1" accumulator pattern into a loop in the plain build only). */
__attribute__((noipa)) int rec(int depth) {
  if (depth <= 1) return 1;
  int r = rec(depth - 1);
  __asm__ volatile("" : "+r"(r));
  return r + 1;
}

static long long ns_of(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s loop|recurse|rdtsc|clock|touch N [depth]\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  long long n = atoll(argv[2]);
  int depth = argc > 3 ? atoi(argv[3]) : 64;
  if (n <= 0 || depth <= 0) {
    fprintf(stderr, "%s: N and depth must be positive\n", argv[0]);
    return 2;
  }
  volatile int sink = 0;
  long long calls = 0;
  long long t0, t1;
  if (strcmp(mode, "loop") == 0) {
    int acc = 0;
    t0 = ns_of(CLOCK_MONOTONIC);
    for (long long i = 0; i < n; ++i) acc += tiny((int)i);
    t1 = ns_of(CLOCK_MONOTONIC);
    sink = acc;
    calls = n;
  } else if (strcmp(mode, "recurse") == 0) {
    long long reps = n / depth;
    int acc = 0;
    t0 = ns_of(CLOCK_MONOTONIC);
    for (long long i = 0; i < reps; ++i) acc += rec(depth);
    t1 = ns_of(CLOCK_MONOTONIC);
    sink = acc;
    calls = reps * depth;
  } else if (strcmp(mode, "rdtsc") == 0) {
#ifdef HAVE_RDTSC
    unsigned long long acc = 0;
    t0 = ns_of(CLOCK_MONOTONIC);
    for (long long i = 0; i < n; ++i) {
      acc += __rdtsc();
      acc ^= __rdtsc();
    }
    t1 = ns_of(CLOCK_MONOTONIC);
    sink = (int)acc;
    calls = n;
#else
    fprintf(stderr, "%s: no rdtsc on this architecture\n", argv[0]);
    return 3;
#endif
  } else if (strcmp(mode, "clock") == 0) {
    long long acc = 0;
    t0 = ns_of(CLOCK_MONOTONIC);
    for (long long i = 0; i < n; ++i) {
      acc += ns_of(CLOCK_MONOTONIC);
      acc ^= ns_of(CLOCK_MONOTONIC);
    }
    t1 = ns_of(CLOCK_MONOTONIC);
    sink = (int)acc;
    calls = n;
  } else if (strcmp(mode, "touch") == 0) {
    size_t bytes = (size_t)n * 32;
    char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      perror("mmap");
      return 1;
    }
    t0 = ns_of(CLOCK_MONOTONIC);
    for (size_t i = 0; i < bytes; i += 32) memset(p + i, (int)i, 32);
    t1 = ns_of(CLOCK_MONOTONIC);
    sink = p[bytes / 2];
    munmap(p, bytes);
    calls = n;
  } else {
    fprintf(stderr, "%s: unknown mode '%s' (loop, recurse, rdtsc, clock, touch)\n", argv[0], mode);
    return 2;
  }
  long long end_rt = ns_of(CLOCK_REALTIME);
  (void)sink;
  printf("mode=%s calls=%lld loop_ns=%lld end_realtime_ns=%lld\n", mode, calls, t1 - t0, end_rt);
  return 0;
}
