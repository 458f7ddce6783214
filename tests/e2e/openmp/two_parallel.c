/* SPDX-License-Identifier: BSD-3-Clause
 * Two parallel constructs and two combined parallel loops in one function, built at -O2
 * (openmp.sh, case <gcc case>_o2): with libgomp each construct's implicit barrier is a region of
 * its own, named after the construct's line as its parallel region is, never merged with the
 * other's (issue 30, item 13: the GOMP_parallel calls' lines at -O2 were the function's first
 * line for both). Prints PROF_EXPECT lines for check_openmp.py. */
#include <omp.h>
#include <stdio.h>

static double a[8], b[64], c[64];

/* No statement between the constructs (at -O2 GCC then gave both GOMP_parallel calls the
 * function's first line): their lines are kTwo + 1, 3, 5 and 7; keep them so. */
enum { kTwo = __LINE__ + 1 };
__attribute__((noinline)) static void two(void) {
#pragma omp parallel num_threads(2) /* kTwo + 1 */
  a[omp_get_thread_num()] += 1;
#pragma omp parallel num_threads(2) /* kTwo + 3 */
  a[omp_get_thread_num() + 2] += 2;
#pragma omp parallel for num_threads(2) schedule(dynamic, 4) /* kTwo + 5 */
  for (int i = 0; i < 64; ++i) b[i] += i;
#pragma omp parallel for num_threads(2) schedule(dynamic, 4) /* kTwo + 7 */
  for (int i = 0; i < 64; ++i) c[i] += 2 * i;
}

int main(void) {
  const int lines[4] = {kTwo + 1, kTwo + 3, kTwo + 5, kTwo + 7};
  omp_set_dynamic(0);
  two();
  for (int k = 0; k < 4; ++k) {
    /* every thread of the team (2) enters its construct's region and implicit barrier */
    printf("PROF_EXPECT exact !$omp parallel @two_parallel.c:%d 2\n", lines[k]);
    printf("PROF_EXPECT exact !$omp implicit barrier @two_parallel.c:%d 2\n", lines[k]);
  }
  printf("PROF_EXPECT exact !$omp for @two_parallel.c:%d 2\n", lines[2]);
  printf("PROF_EXPECT exact !$omp for @two_parallel.c:%d 2\n", lines[3]);
  /* four constructs: four implicit barriers, none shared */
  printf("PROF_EXPECT regions !$omp implicit barrier @ 4\n");
  printf("PROF_EXPECT event ThreadFork 4\n");
  printf("result %g %g %g\n", a[0] + a[3], b[63], c[63]);
  return 0;
}
