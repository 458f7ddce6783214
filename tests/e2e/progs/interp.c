/* SPDX-License-Identifier: BSD-3-Clause */
/* An interpreter's shape: eval and apply recurse into each other, 40 levels deep per
 * expression, for many expressions, so that most calls lie below a low
 * PROF_PROFILING_MAX_CALLPATH_DEPTH. The stores after the calls keep them real calls. */
#include <stdio.h>
#include <stdlib.h>

static long n_eval, n_apply, n_run;
static volatile long sink;

long apply(long d);

__attribute__((noinline)) long eval(long d) {
  n_eval++;
  if (d == 0) return 1;
  long r = apply(d - 1);
  sink = r;
  return r + 1;
}

__attribute__((noinline)) long apply(long d) {
  n_apply++;
  long r = eval(d);
  sink = r;
  return r + 1;
}

__attribute__((noinline)) long run(long depth) {
  n_run++;
  return eval(depth);
}

int main(int argc, char** argv) {
  long exprs = argc > 1 ? atol(argv[1]) : 20000, depth = argc > 2 ? atol(argv[2]) : 20;
  long sum = 0;
  for (long i = 0; i < exprs; ++i) sum += run(depth);
  printf("sum %ld\n", sum);
  printf("PROF_EXPECT main 1\nPROF_EXPECT run %ld\nPROF_EXPECT eval %ld\nPROF_EXPECT apply %ld\n", n_run, n_eval, n_apply);
  return 0;
}
