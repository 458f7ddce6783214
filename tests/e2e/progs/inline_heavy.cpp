// SPDX-License-Identifier: BSD-3-Clause
// An accessor-heavy kernel: hot loops over small inline member functions and a few real
// functions. Built with prof's GCC plugin, only the functions not declared inline are recorded,
// with exact counts; the inline ones (in-class members, `inline`, constexpr) never call a hook.
// `skipped` is excluded by the compile-time filter inline_heavy.filter.
#include <cstdio>
#include <vector>

static long n_solve, n_step, n_twice, n_skipped;

class Grid {
 public:
  explicit Grid(int n) : n_(n), v_(static_cast<std::size_t>(n) * n, 1.0) {}
  int size() const { return n_; }
  double at(int i, int j) const { return v_[static_cast<std::size_t>(i) * n_ + j]; }
  void set(int i, int j, double x) { v_[static_cast<std::size_t>(i) * n_ + j] = x; }

 private:
  int n_;
  std::vector<double> v_;
};

inline double avg(double a, double b) { return 0.5 * (a + b); }
constexpr int clamp_index(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

template <class T>
T twice(T x) {  // a function template, not declared inline: instrumented per instantiation
  ++n_twice;
  return x + x;
}

__attribute__((noinline)) double step(Grid& g) {
  ++n_step;
  double sum = 0;
  for (int i = 0; i < g.size(); ++i)
    for (int j = 0; j < g.size(); ++j) {
      const double x = avg(g.at(i, clamp_index(j - 1, g.size())), g.at(i, clamp_index(j + 1, g.size())));
      g.set(i, j, x);
      sum += x;
    }
  return sum;
}

__attribute__((noinline)) int skipped(int x) {
  ++n_skipped;
  return x * 3;
}

__attribute__((noinline)) double solve(int iterations) {
  ++n_solve;
  Grid g(64);
  double s = 0;
  for (int k = 0; k < iterations; ++k) s += step(g) + twice(k) + skipped(k);
  return s + twice(0.5);
}

int main() {
  double s = solve(20);
  std::printf("sum %.3f\n", s);
  std::printf("PROF_EXPECT main 1\nPROF_EXPECT solve %ld\nPROF_EXPECT step %ld\nPROF_EXPECT twice %ld\nPROF_EXPECT skipped %ld\n",
              n_solve, n_step, n_twice, n_skipped);
  return 0;
}
