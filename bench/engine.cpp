// SPDX-License-Identifier: BSD-3-Clause
// A call-heavy C++ program shaped like a template-heavy game/physics engine (bench/first_run.sh,
// issue #19): templated Vec3<T>/Mat3<T>/Aabb<T> with operators and small helpers instantiated for
// float and double, a Transform<T>, a Shape class hierarchy with virtual calls, entities in
// std::vector, a broad phase, a narrow phase, an integrator and a render-order sort per frame.
//
// The hot helpers are members declared in the class and defined OUT of it, without `inline`
// (templates too): prof's GCC plugin instruments them like any function, so every call counts,
// even where GCC inlines it. Some members are defined in the class, as real engines do
// (accessors, constructors): those are implicitly inline and the plugin leaves them alone.
//
//   engine [FRAMES [ENTITIES]]    default 600 frames of 2000 entities
//
// Prints "frames=<n> entities=<n> contacts=<n> checksum=<x>" and "seconds=<wall>"
// (clock_gettime around the set-up and the frames: neither process start nor prof's finalize).
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace eng {

// ---------------------------------------------------------------- math
template <class T>
struct Vec3 {
  T x{}, y{}, z{};
  Vec3() = default;
  Vec3(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}
  // In-class (implicitly inline): no hooks with the plugin.
  T get_x() const { return x; }
  T get_y() const { return y; }
  T get_z() const { return z; }
  // Declared here, defined out of class without inline: instrumented.
  Vec3 operator+(const Vec3& o) const;
  Vec3 operator-(const Vec3& o) const;
  Vec3 operator*(T s) const;
  Vec3& operator+=(const Vec3& o);
  T operator[](int i) const;
  T dot(const Vec3& o) const;
  Vec3 cross(const Vec3& o) const;
  T length_squared() const;
  T length() const;
  Vec3 normalized() const;
  Vec3 min_with(const Vec3& o) const;
  Vec3 max_with(const Vec3& o) const;
};

template <class T>
Vec3<T> Vec3<T>::operator+(const Vec3& o) const { return {x + o.x, y + o.y, z + o.z}; }
template <class T>
Vec3<T> Vec3<T>::operator-(const Vec3& o) const { return {x - o.x, y - o.y, z - o.z}; }
template <class T>
Vec3<T> Vec3<T>::operator*(T s) const { return {x * s, y * s, z * s}; }
template <class T>
Vec3<T>& Vec3<T>::operator+=(const Vec3& o) {
  x += o.x;
  y += o.y;
  z += o.z;
  return *this;
}
template <class T>
T Vec3<T>::operator[](int i) const { return i == 0 ? x : i == 1 ? y : z; }
template <class T>
T Vec3<T>::dot(const Vec3& o) const { return x * o.x + y * o.y + z * o.z; }
template <class T>
Vec3<T> Vec3<T>::cross(const Vec3& o) const { return {y * o.z - z * o.y, z * o.x - x * o.z, x * o.y - y * o.x}; }
template <class T>
T Vec3<T>::length_squared() const { return dot(*this); }
template <class T>
T Vec3<T>::length() const { return std::sqrt(length_squared()); }
template <class T>
Vec3<T> Vec3<T>::normalized() const {
  const T l = length();
  return l > T(0) ? *this * (T(1) / l) : *this;
}
template <class T>
Vec3<T> Vec3<T>::min_with(const Vec3& o) const { return {std::min(x, o.x), std::min(y, o.y), std::min(z, o.z)}; }
template <class T>
Vec3<T> Vec3<T>::max_with(const Vec3& o) const { return {std::max(x, o.x), std::max(y, o.y), std::max(z, o.z)}; }

template <class T>
T clamp_value(T v, T lo, T hi);
template <class T>
T clamp_value(T v, T lo, T hi) { return v < lo ? lo : hi < v ? hi : v; }
template <class T>
T lerp(T a, T b, T t);
template <class T>
T lerp(T a, T b, T t) { return a + (b - a) * t; }

template <class T>
struct Mat3 {
  T m[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  T at(int r, int c) const { return m[3 * r + c]; }  // in-class accessor
  Vec3<T> operator*(const Vec3<T>& v) const;
  Mat3 operator*(const Mat3& o) const;
  Mat3 transposed() const;
  static Mat3 rotation_z(T angle);
};

template <class T>
Vec3<T> Mat3<T>::operator*(const Vec3<T>& v) const {
  return {m[0] * v.x + m[1] * v.y + m[2] * v.z, m[3] * v.x + m[4] * v.y + m[5] * v.z, m[6] * v.x + m[7] * v.y + m[8] * v.z};
}
template <class T>
Mat3<T> Mat3<T>::operator*(const Mat3& o) const {
  Mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[3 * i + j] = at(i, 0) * o.at(0, j) + at(i, 1) * o.at(1, j) + at(i, 2) * o.at(2, j);
  return r;
}
template <class T>
Mat3<T> Mat3<T>::transposed() const {
  Mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.m[3 * i + j] = at(j, i);
  return r;
}
template <class T>
Mat3<T> Mat3<T>::rotation_z(T angle) {
  Mat3 r;
  const T c = std::cos(angle), s = std::sin(angle);
  r.m[0] = c;
  r.m[1] = -s;
  r.m[3] = s;
  r.m[4] = c;
  return r;
}

template <class T>
struct Aabb {
  Vec3<T> lo, hi;
  bool overlaps(const Aabb& o) const;
  Aabb merged(const Aabb& o) const;
  Vec3<T> center() const;
};
template <class T>
bool Aabb<T>::overlaps(const Aabb& o) const {
  return lo.x <= o.hi.x && o.lo.x <= hi.x && lo.y <= o.hi.y && o.lo.y <= hi.y && lo.z <= o.hi.z && o.lo.z <= hi.z;
}
template <class T>
Aabb<T> Aabb<T>::merged(const Aabb& o) const { return {lo.min_with(o.lo), hi.max_with(o.hi)}; }
template <class T>
Vec3<T> Aabb<T>::center() const { return (lo + hi) * T(0.5); }

template <class T>
class Transform {
 public:
  Transform() = default;
  const Vec3<T>& position() const { return pos_; }  // in-class accessors
  void set_position(const Vec3<T>& p) { pos_ = p; }
  Vec3<T> apply(const Vec3<T>& local) const;
  void rotate(T angle);
  void translate(const Vec3<T>& d);

 private:
  Vec3<T> pos_;
  Mat3<T> rot_;
};
template <class T>
Vec3<T> Transform<T>::apply(const Vec3<T>& local) const { return rot_ * local + pos_; }
template <class T>
void Transform<T>::rotate(T angle) { rot_ = Mat3<T>::rotation_z(angle) * rot_; }
template <class T>
void Transform<T>::translate(const Vec3<T>& d) { pos_ += d; }

using Vec3d = Vec3<double>;
using Vec3f = Vec3<float>;

// ---------------------------------------------------------------- shapes (virtual calls)
class Shape {
 public:
  virtual ~Shape();
  virtual Aabb<double> bounds(const Transform<double>& t) const = 0;
  virtual double support(const Vec3d& dir) const = 0;
  virtual double volume() const = 0;
};
Shape::~Shape() = default;

class Sphere : public Shape {
 public:
  explicit Sphere(double r) : r_(r) {}
  Aabb<double> bounds(const Transform<double>& t) const override;
  double support(const Vec3d& dir) const override;
  double volume() const override;

 private:
  double r_;
};
Aabb<double> Sphere::bounds(const Transform<double>& t) const {
  const Vec3d e(r_, r_, r_);
  return {t.position() - e, t.position() + e};
}
double Sphere::support(const Vec3d& dir) const { return r_ * dir.length(); }
double Sphere::volume() const { return 4.18879020478639 * r_ * r_ * r_; }

class Box : public Shape {
 public:
  explicit Box(const Vec3d& half) : half_(half) {}
  Aabb<double> bounds(const Transform<double>& t) const override;
  double support(const Vec3d& dir) const override;
  double volume() const override;

 private:
  Vec3d half_;
};
Aabb<double> Box::bounds(const Transform<double>& t) const {
  Aabb<double> b{t.apply(Vec3d(-half_.x, -half_.y, -half_.z)), t.apply(half_)};
  for (int i = 0; i < 3; ++i) {
    const Vec3d corner(i == 0 ? half_.x : -half_.x, i == 1 ? half_.y : -half_.y, i == 2 ? half_.z : -half_.z);
    const Vec3d p = t.apply(corner);
    b = b.merged({p, p});
  }
  return b;
}
double Box::support(const Vec3d& dir) const {
  return std::fabs(dir[0]) * half_.x + std::fabs(dir[1]) * half_.y + std::fabs(dir[2]) * half_.z;
}
double Box::volume() const { return 8 * half_.x * half_.y * half_.z; }

class Capsule : public Shape {
 public:
  Capsule(double r, double h) : r_(r), h_(h) {}
  Aabb<double> bounds(const Transform<double>& t) const override;
  double support(const Vec3d& dir) const override;
  double volume() const override;

 private:
  double r_, h_;
};
Aabb<double> Capsule::bounds(const Transform<double>& t) const {
  const Vec3d a = t.apply(Vec3d(0, 0, -h_)), b = t.apply(Vec3d(0, 0, h_));
  const Vec3d e(r_, r_, r_);
  return {a.min_with(b) - e, a.max_with(b) + e};
}
double Capsule::support(const Vec3d& dir) const { return r_ * dir.length() + h_ * std::fabs(dir[2]); }
double Capsule::volume() const { return 3.14159265358979 * r_ * r_ * (2 * h_ + 4.0 / 3.0 * r_); }

// ---------------------------------------------------------------- the world
struct Entity {
  Transform<double> xf;
  Vec3d velocity;
  Vec3f color;          // float instantiations
  float depth = 0;
  std::unique_ptr<Shape> shape;
  Aabb<double> box;
};

struct Contact {
  int a, b;
  Vec3d normal;
  double depth;
};

class World {
 public:
  explicit World(int n);
  void step(double dt);
  double checksum() const;
  std::size_t contacts() const { return total_contacts_; }

 private:
  void integrate(Entity& e, double dt);
  void update_bounds(Entity& e);
  void broad_phase();
  bool narrow_phase(const Entity& a, const Entity& b, Contact* c) const;
  void resolve(const Contact& c);
  void shade(Entity& e, const Vec3f& light);
  void sort_for_rendering();

  std::vector<Entity> entities_;
  std::vector<Contact> contacts_;
  std::vector<int> order_;
  std::size_t total_contacts_ = 0;
  std::uint32_t frame_ = 0;
};

World::World(int n) {
  entities_.resize(static_cast<std::size_t>(n));
  std::uint32_t seed = 2463534242u;
  auto rnd = [&seed]() {  // xorshift32 in [0, 1)
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    return static_cast<double>(seed) / 4294967296.0;
  };
  for (int i = 0; i < n; ++i) {
    Entity& e = entities_[static_cast<std::size_t>(i)];
    e.xf.set_position(Vec3d(rnd() * 100, rnd() * 100, rnd() * 10));
    e.velocity = Vec3d(rnd() - 0.5, rnd() - 0.5, rnd() * 0.1);
    e.color = Vec3f(static_cast<float>(rnd()), static_cast<float>(rnd()), static_cast<float>(rnd()));
    switch (i % 3) {
      case 0: e.shape = std::make_unique<Sphere>(0.5 + rnd()); break;
      case 1: e.shape = std::make_unique<Box>(Vec3d(0.3 + rnd(), 0.3 + rnd(), 0.3 + rnd())); break;
      default: e.shape = std::make_unique<Capsule>(0.3 + rnd() * 0.5, 0.5 + rnd()); break;
    }
    order_.push_back(i);
  }
}

void World::integrate(Entity& e, double dt) {
  const Vec3d gravity(0, 0, -9.81);
  e.velocity += gravity * dt;
  e.velocity = e.velocity * 0.999;
  e.xf.translate(e.velocity * dt);
  Vec3d p = e.xf.position();
  // Bounce inside a 100 x 100 x 10 box.
  if (p.z < 0) {
    e.velocity = Vec3d(e.velocity.x, e.velocity.y, std::fabs(e.velocity.z) * 0.8 + 3.0);
    p = Vec3d(p.x, p.y, 0);
  }
  p = Vec3d(clamp_value(p.x, 0.0, 100.0), clamp_value(p.y, 0.0, 100.0), clamp_value(p.z, 0.0, 10.0));
  e.xf.set_position(p);
  e.xf.rotate(dt * e.velocity.length());
}

void World::update_bounds(Entity& e) { e.box = e.shape->bounds(e.xf); }

bool World::narrow_phase(const Entity& a, const Entity& b, Contact* c) const {
  const Vec3d d = b.box.center() - a.box.center();
  const double dist = d.length();
  const Vec3d n = d.normalized();
  const double reach = a.shape->support(n) + b.shape->support(n * -1.0);
  if (dist >= reach) return false;
  c->normal = n;
  c->depth = reach - dist;
  return true;
}

void World::resolve(const Contact& c) {
  Entity& a = entities_[static_cast<std::size_t>(c.a)];
  Entity& b = entities_[static_cast<std::size_t>(c.b)];
  const Vec3d rel = b.velocity - a.velocity;
  const double vn = rel.dot(c.normal);
  if (vn > 0) return;
  const Vec3d j = c.normal * (-0.5 * vn);
  a.velocity += j * -1.0;
  b.velocity += j;
}

// Sweep along x over the entities sorted by their box's low x: pairs whose boxes overlap.
void World::broad_phase() {
  contacts_.clear();
  std::sort(order_.begin(), order_.end(), [this](int l, int r) {
    return entities_[static_cast<std::size_t>(l)].box.lo.x < entities_[static_cast<std::size_t>(r)].box.lo.x;
  });
  for (std::size_t i = 0; i < order_.size(); ++i) {
    const Entity& a = entities_[static_cast<std::size_t>(order_[i])];
    for (std::size_t k = i + 1; k < order_.size(); ++k) {
      const Entity& b = entities_[static_cast<std::size_t>(order_[k])];
      if (b.box.lo.x > a.box.hi.x) break;
      if (!a.box.overlaps(b.box)) continue;
      Contact c{order_[i], order_[k], {}, 0};
      if (narrow_phase(a, b, &c)) contacts_.push_back(c);
    }
  }
  total_contacts_ += contacts_.size();
}

void World::shade(Entity& e, const Vec3f& light) {
  const Vec3d p = e.xf.position();
  const Vec3f pf(static_cast<float>(p.x), static_cast<float>(p.y), static_cast<float>(p.z));
  const Vec3f to_light = (light - pf).normalized();
  const Vec3f up(0, 0, 1);
  const float diffuse = clamp_value(to_light.dot(up), 0.0f, 1.0f);
  const Vec3f tangent = to_light.cross(up);
  e.color = Vec3f(lerp(e.color.get_x(), diffuse, 0.1f), lerp(e.color.get_y(), tangent.length(), 0.1f),
                  lerp(e.color.get_z(), static_cast<float>(e.shape->volume() * 0.01), 0.1f));
  e.depth = (pf - light).length_squared();
}

void World::sort_for_rendering() {
  std::vector<int> by_depth(order_);
  std::sort(by_depth.begin(), by_depth.end(), [this](int l, int r) {
    return entities_[static_cast<std::size_t>(l)].depth < entities_[static_cast<std::size_t>(r)].depth;
  });
  frame_ += static_cast<std::uint32_t>(by_depth.front());
}

void World::step(double dt) {
  for (Entity& e : entities_) integrate(e, dt);
  for (Entity& e : entities_) update_bounds(e);
  broad_phase();
  for (const Contact& c : contacts_) resolve(c);
  const Vec3f light(50.0f, 50.0f, 40.0f + static_cast<float>(frame_ % 7));
  for (Entity& e : entities_) shade(e, light);
  sort_for_rendering();
}

double World::checksum() const {
  double s = frame_;
  for (const Entity& e : entities_) {
    s += e.xf.position().dot(Vec3d(1, 2, 3)) + e.velocity.length();
    s += static_cast<double>(e.color.get_x() + e.color.get_y() + e.color.get_z());
  }
  return s;
}

}  // namespace eng

static double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int main(int argc, char** argv) {
  const int frames = argc > 1 ? std::atoi(argv[1]) : 600;
  const int n = argc > 2 ? std::atoi(argv[2]) : 2000;
  const double t0 = now();
  eng::World world(n);
  for (int f = 0; f < frames; ++f) world.step(1.0 / 60.0);
  const double t1 = now();
  std::printf("frames=%d entities=%d contacts=%zu checksum=%.6f\n", frames, n, world.contacts(), world.checksum());
  std::printf("seconds=%.6f\n", t1 - t0);
  return 0;
}
