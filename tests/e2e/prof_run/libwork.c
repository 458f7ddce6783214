/* SPDX-License-Identifier: BSD-3-Clause */
/* A shared library that burns CPU time (prof_run.sh): no prof-wrap, so only samples can see it. */
__attribute__((noinline)) double lib_work(long n) {
  volatile double s = 0;
  for (long i = 0; i < n; ++i) s += (double)i * 0.5;
  return s;
}
