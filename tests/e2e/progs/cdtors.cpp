// SPDX-License-Identifier: BSD-3-Clause
// Out-of-line constructors and destructors (GCC emits them as clones of an abstract function),
// virtual destructors through a base pointer, and a C function with a one-letter name.
#include <cstdio>

static long n_b_ctor, n_b_dtor, n_a_ctor, n_a_dtor, n_g;

struct Base {
  Base();
  virtual ~Base();
  int b;
};
Base::Base() : b(1) { ++n_b_ctor; }
Base::~Base() { ++n_b_dtor; }

struct Derived : Base {
  Derived();
  ~Derived() override;
  int a;
};
Derived::Derived() : a(2) { ++n_a_ctor; }
Derived::~Derived() { ++n_a_dtor; }

extern "C" __attribute__((noinline)) int g(int x) {  // a C name: not demangled as a type
  ++n_g;
  return x + 1;
}

int main() {
  { Derived d; }
  Base* p = new Derived;
  delete p;
  { Base b; }
  int r = g(0) + g(1);
  std::printf("r %d\n", r);
  std::printf("PROF_EXPECT main 1\nPROF_EXPECT Base %ld\nPROF_EXPECT ~Base %ld\nPROF_EXPECT Derived %ld\nPROF_EXPECT ~Derived %ld\nPROF_EXPECT g %ld\n",
              n_b_ctor, n_b_dtor, n_a_ctor, n_a_dtor, n_g);
  return 0;
}
