/* SPDX-License-Identifier: BSD-3-Clause
 * OpenMP constructs with known counts, for tests/e2e/openmp/openmp.sh. Prints lines
 *   PROF_EXPECT [gomp:|ompt:]<what> <count>
 * `enter <region name or prefix>`: Enters of the regions so named, over all threads;
 * `event <OTF2 event>`: events over all locations; a gomp:/ompt: prefix: with that runtime only
 * (GCC's libgomp is seen through its entry points, LLVM's libomp through OMPT; docs/OPENMP.md says
 * what each sees). Region names are "!$omp <construct> @constructs.c:<line>"; the lines come
 * from __LINE__ next to each pragma, so edits keep the checks true. Team sizes are fixed
 * (num_threads), nesting is on for two levels. */
#include <omp.h>
#include <stdio.h>

static int l_dyn, l_bar, l_inner;

static void expect_at(const char* prefix, const char* construct, int line, long n) {
  printf("PROF_EXPECT %senter !$omp %s @constructs.c:%d %ld\n", prefix, construct, line, n);
}
static void expect(const char* what, long n) { printf("PROF_EXPECT %s %ld\n", what, n); }

static double work(int i) { return (double)i * 0.5; }

int main(void) {
  long forks = 0, critical = 0, tasks = 0, taskwaits = 0, locks = 0, singles = 0;
  double sum = 0, red = 0;
  omp_lock_t lock;
  omp_init_lock(&lock);
  omp_set_max_active_levels(2);
  omp_set_num_threads(2);

  /* 1: a static and a dynamic loop, critical, single with tasks, master, barrier, locks. */
  const int l_par = __LINE__ + 1;
#pragma omp parallel num_threads(2) reduction(+ : red)
  {
#pragma omp for schedule(static)
    for (int i = 0; i < 1000; ++i) red += work(i);
    if (omp_get_thread_num() == 0) l_dyn = __LINE__ + 1;
#pragma omp for schedule(dynamic, 7)
    for (int i = 0; i < 1000; ++i) red += work(i);
#pragma omp critical
    {
      sum += 1;
      critical++;
    }
#pragma omp single
    {
      singles++;
      for (int t = 0; t < 5; ++t) {
#pragma omp task
        {
          double w = work(t);
#pragma omp atomic
          sum += w;
        }
        tasks++;
      }
#pragma omp taskwait
      taskwaits++;
    }
#pragma omp master
    sum += 1;
    if (omp_get_thread_num() == 0) l_bar = __LINE__ + 1;
#pragma omp barrier
    for (int k = 0; k < 3; ++k) {
      omp_set_lock(&lock);
      locks++;
      omp_unset_lock(&lock);
    }
  }
  forks += 1;

  /* 2: a team of 3 after omp_set_num_threads(3): a combined parallel loop, dynamic schedule. */
  omp_set_num_threads(3);
  const int l_par2 = __LINE__ + 1;
#pragma omp parallel for schedule(dynamic, 10) reduction(+ : red)
  for (int i = 0; i < 300; ++i) red += work(i);
  forks += 1;

  /* 3: nested: an outer team of 2, each of its threads forks an inner team of 2. */
  omp_set_num_threads(2);
  const int l_outer = __LINE__ + 1;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) l_inner = __LINE__ + 1;
#pragma omp parallel num_threads(2) reduction(+ : red)
    red += work(omp_get_thread_num());
#pragma omp critical
    {
      critical++;
      forks += 1;
    }
  }
  forks += 1;

  expect_at("", "parallel", l_par, 2);
  expect_at("", "parallel", l_par2, 3);
  expect_at("", "parallel", l_outer, 2);
  expect_at("", "parallel", l_inner, 4);
  expect_at("", "for", l_dyn, 2);
  expect_at("", "for", l_par2, 3);
  expect_at("", "barrier", l_bar, 2);
  /* the barrier at the end of a parallel region, on every thread of the team (a worker's end
     is reported late by libomp and not at all by libgomp: dated at the team's join) */
  expect_at("", "implicit barrier", l_par, 2);
  expect_at("", "implicit barrier", l_inner, 4);
  expect("event ThreadFork", forks);
  expect("event ThreadJoin", forks);
  expect("enter !$omp critical @", critical);
  expect("enter !$omp single @", 2 * singles);
  expect("enter !$omp task @", tasks);
  expect("enter !$omp create task @", tasks);
  expect("enter !$omp taskwait @", taskwaits);
  expect("enter omp_set_lock", locks);
  expect("enter omp_unset_lock", locks);
  expect("event ThreadAcquireLock", locks + critical); /* with PROF_OPENMP_ENABLE=all */
  printf("result %g %g\n", sum, red);
  omp_destroy_lock(&lock);
  return 0;
}
