// SPDX-License-Identifier: BSD-3-Clause
// An instrumented main that starts 3 std::threads through run_workers() (workers.cpp, not
// instrumented); each worker burns 0.3 s of its own CPU time.
#include <cstdio>

void run_workers(int n, double seconds);

int main() {
  run_workers(3, 0.3);
  std::printf("sampling_threads: done\n");
  return 0;
}
