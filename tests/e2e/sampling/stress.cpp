// SPDX-License-Identifier: BSD-3-Clause
// Sampling under load: 8 std::threads and the master burn CPU for argv[1] seconds of wall time
// (default 3). Odd workers call the instrumented step() all the time (signals land in prof's hooks
// and samples interleave with Enter/Leave), even ones an uninstrumented loop.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

static volatile double sink;

__attribute__((noinline)) void step(int k) {
  double x = 0;
  for (int i = 0; i < 20000; ++i) x += i * 0.5 + k;
  sink = x;
}

__attribute__((noinline, no_instrument_function)) static void spin_plain(int k) {
  double x = 0;
  for (int i = 0; i < 20000; ++i) x += i * 0.5 + k;
  sink = x;
}

__attribute__((noinline)) void work(int id, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  long n = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (id % 2)
      step(id);
    else
      spin_plain(id);
    ++n;
  }
  std::printf("worker %d: %ld steps\n", id, n);
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  std::vector<std::thread> threads;
  for (int i = 1; i <= 8; ++i) threads.emplace_back(work, i, seconds);
  work(0, seconds);
  for (auto& t : threads) t.join();
  std::printf("sampling_stress: done\n");
  return 0;
}
