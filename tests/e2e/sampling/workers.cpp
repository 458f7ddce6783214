// SPDX-License-Identifier: BSD-3-Clause
// run_workers(): std::threads burning their own CPU time in spin(). Built with plain g++ (no
// instrumentation): nothing the workers run calls an instrumented function.
#include <ctime>
#include <thread>
#include <vector>

static volatile double sink;

static double thread_cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

__attribute__((noinline)) static void spin(double seconds) {
  const double end = thread_cpu_seconds() + seconds;
  double x = 0;
  do {
    for (int i = 0; i < 200000; ++i) x += i * 0.5;
  } while (thread_cpu_seconds() < end);
  sink = x;
}

void run_workers(int n, double seconds) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(spin, seconds);
  for (auto& t : threads) t.join();
}
