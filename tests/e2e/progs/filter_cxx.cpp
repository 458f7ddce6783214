// SPDX-License-Identifier: BSD-3-Clause
// C++ functions whose region names carry their signature, for the warning about filter rules
// that match nothing (filter_unmatched.filter, filter_matched.filter).
#include <cstdio>

static long n_bar, n_baz;

namespace ns {
struct Foo {
  int bar(int x);
};
__attribute__((noinline)) int Foo::bar(int x) {
  ++n_bar;
  return x + 1;
}
}  // namespace ns

__attribute__((noinline)) double baz(double x) {
  ++n_baz;
  return x * 0.5;
}

int main() {
  ns::Foo foo;
  int s = 0;
  double d = 0;
  for (int i = 0; i < 10; ++i) s += foo.bar(i);
  for (int i = 0; i < 3; ++i) d += baz(i);
  std::printf("%d %.1f\n", s, d);
  std::printf("PROF_EXPECT main 1\nPROF_EXPECT bar %ld\nPROF_EXPECT baz %ld\n", n_bar, n_baz);
  return 0;
}
