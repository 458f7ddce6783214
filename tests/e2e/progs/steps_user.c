// SPDX-License-Identifier: BSD-3-Clause
// Steps for prof-report (issue 31): 200 ms of start-up, then 10 steps marked with the user API
// ("step"): step 0 takes 300 ms (warm-up), step 6 250 ms (an outlier), the others 100 ms; then
// 50 ms of teardown. Work spins on the wall clock; each step prints its own duration ("STEP i ms")
// for the test to compare. Build with prof-wrap --user.
#include <prof/user.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile unsigned long sink;

__attribute__((noinline)) void spin(double ms) {
  const double end = now() + ms * 1e-3;
  while (now() < end) sink += 1;
}

int main(void) {
  spin(200);
  for (int i = 0; i < 10; ++i) {
    const double t0 = now();
    PROF_USER_REGION_BEGIN(step, "step");
    spin(i == 0 ? 300 : i == 6 ? 250 : 100);
    PROF_USER_REGION_END(step);
    printf("STEP %d %.3f\n", i, (now() - t0) * 1e3);
  }
  spin(50);
  return 0;
}
