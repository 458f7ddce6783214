// SPDX-License-Identifier: BSD-3-Clause
// An accessor-heavy C++ kernel, the shape of many C++ proxy applications: hot loops over small
// inline member functions (in-class accessors, operators) and a few real functions. With
// -finstrument-functions every inlined accessor still calls both hooks; prof's GCC plugin
// instruments only the functions not declared inline.
//
//   accessors N_PARTICLES STEPS   prints mode=accessors calls=<real calls> loop_ns=<kernel time>
#include <time.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

class Vec3 {
 public:
  Vec3() = default;
  Vec3(double x, double y, double z) : x_(x), y_(y), z_(z) {}
  double x() const { return x_; }
  double y() const { return y_; }
  double z() const { return z_; }
  Vec3 operator+(const Vec3& o) const { return {x_ + o.x_, y_ + o.y_, z_ + o.z_}; }
  Vec3 operator-(const Vec3& o) const { return {x_ - o.x_, y_ - o.y_, z_ - o.z_}; }
  Vec3 operator*(double s) const { return {x_ * s, y_ * s, z_ * s}; }
  double dot(const Vec3& o) const { return x_ * o.x_ + y_ * o.y_ + z_ * o.z_; }

 private:
  double x_ = 0, y_ = 0, z_ = 0;
};

class Particle {
 public:
  const Vec3& position() const { return pos_; }
  const Vec3& velocity() const { return vel_; }
  double mass() const { return mass_; }
  void set_position(const Vec3& p) { pos_ = p; }
  void set_velocity(const Vec3& v) { vel_ = v; }
  void init(int i) {
    pos_ = Vec3(std::sin(i), std::cos(i), 0.01 * i);
    mass_ = 1.0 + (i % 7) * 0.1;
  }

 private:
  Vec3 pos_, vel_;
  double mass_ = 1;
};

}  // namespace

long g_real_calls = 0;

// The few real functions: not inline, instrumented in every mode.
__attribute__((noinline)) Vec3 force_on(const std::vector<Particle>& ps, std::size_t i) {
  ++g_real_calls;
  Vec3 f;
  const Particle& a = ps[i];
  for (std::size_t j = 0; j < ps.size(); ++j) {
    if (j == i) continue;
    const Vec3 d = ps[j].position() - a.position();
    const double r2 = d.dot(d) + 1e-3;
    f = f + d * (a.mass() * ps[j].mass() / (r2 * std::sqrt(r2)));
  }
  return f;
}

__attribute__((noinline)) void step(std::vector<Particle>& ps, double dt) {
  ++g_real_calls;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const Vec3 f = force_on(ps, i);
    ps[i].set_velocity(ps[i].velocity() + f * (dt / ps[i].mass()));
  }
  for (Particle& p : ps) p.set_position(p.position() + p.velocity() * dt);
}

__attribute__((noinline)) double energy(const std::vector<Particle>& ps) {
  ++g_real_calls;
  double e = 0;
  for (const Particle& p : ps) e += 0.5 * p.mass() * p.velocity().dot(p.velocity());
  return e;
}

static long long now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 400;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
  std::vector<Particle> ps(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ps[static_cast<std::size_t>(i)].init(i);
  const long long t0 = now_ns();
  double e = 0;
  for (int s = 0; s < steps; ++s) {
    step(ps, 1e-3);
    e += energy(ps);
  }
  const long long t1 = now_ns();
  std::fprintf(stderr, "energy %.6f\n", e);
  std::printf("mode=accessors calls=%ld loop_ns=%lld\n", g_real_calls, t1 - t0);
  return 0;
}
