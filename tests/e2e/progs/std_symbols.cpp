// SPDX-License-Identifier: BSD-3-Clause
// A C++ program whose instrumented copies of standard-library templates (std::to_string's
// __to_chars_10_impl<unsigned>) are exported from the executable. libprof uses the same
// templates while it creates a thread's location: it must keep its own copies (linked with
// -Bsymbolic-functions), or the program's instrumented ones re-enter the hook that is creating
// the location, endlessly (a SIGSEGV, seen with any program that did this and started a thread).
#include <cstdio>
#include <string>
#include <thread>

int main() {
  const std::string s = std::to_string(42u) + std::to_string(7ul);
  std::thread t([] { std::printf("thread\n"); });
  t.join();
  std::printf("%s\n", s.c_str());
  return 0;
}
