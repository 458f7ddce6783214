// SPDX-License-Identifier: BSD-3-Clause
// C++: templates, virtual calls, and exceptions thrown through several instrumented frames.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

static long n_add, n_area, n_thrower, n_catcher;

namespace geo {
template <class T>
struct Acc {
  T v{};
  __attribute__((noinline)) void add(T x) {
    ++n_add;
    v += x;
  }
};

struct Shape {
  virtual double area() const = 0;
  virtual ~Shape() = default;
};
struct Square : Shape {
  explicit Square(double s) : s_(s) {}
  __attribute__((noinline)) double area() const override {
    ++n_area;
    return s_ * s_;
  }
  double s_;
};
struct Circle : Shape {
  explicit Circle(double r) : r_(r) {}
  __attribute__((noinline)) double area() const override {
    ++n_area;
    return 3.14159 * r_ * r_;
  }
  double r_;
};
}  // namespace geo

static volatile int sink;

// The store after the recursive call keeps clang from turning the recursion into a loop.
__attribute__((noinline)) int thrower(int depth) {
  ++n_thrower;
  if (depth == 0) throw std::runtime_error("bottom");
  const int r = thrower(depth - 1);
  sink = r;
  return r + 1;
}

__attribute__((noinline)) int catcher(int depth) {
  ++n_catcher;
  try {
    return thrower(depth);
  } catch (const std::exception&) {
    return -1;
  }
}

int main() {
  geo::Acc<int> ai;
  geo::Acc<double> ad;
  for (int i = 0; i < 10; ++i) ai.add(i);
  for (int i = 0; i < 5; ++i) ad.add(i * 0.5);
  std::vector<std::unique_ptr<geo::Shape>> shapes;
  shapes.push_back(std::make_unique<geo::Square>(2.0));
  shapes.push_back(std::make_unique<geo::Circle>(1.0));
  double total = 0;
  for (int k = 0; k < 3; ++k)
    for (const auto& s : shapes) total += s->area();
  int caught = 0;
  for (int k = 0; k < 4; ++k) caught += catcher(5) == -1;
  std::printf("total %.2f caught %d\n", total + ai.v + ad.v, caught);
  std::printf("PROF_EXPECT main 1\nPROF_EXPECT add %ld\nPROF_EXPECT area %ld\nPROF_EXPECT thrower %ld\nPROF_EXPECT catcher %ld\n",
              n_add, n_area, n_thrower, n_catcher);
  return 0;
}
