/* SPDX-License-Identifier: BSD-3-Clause */
/* A proxy app whose physics routines are all static inline (issue 14, item 7): with prof's GCC
 * plugin they get no hooks, and main holds all the time, unless the instrument filter INCLUDEs
 * them by name (inline_physics.filter: pair_force, compute_forces, integrate; not energy). Each
 * routine counts its calls for PROF_EXPECT. */
#include <stdio.h>

#define N 100
#define STEPS 20
#define NEIGHBOURS 4
#define REPEAT 20000

static double x[N], v[N], f[N];
static long n_pair, n_forces, n_integrate, n_energy;

static inline double pair_force(double a, double b) {
  ++n_pair;
  const double d = a - b;
  return d / (1.0 + d * d);
}

static inline void compute_forces(int i) {
  ++n_forces;
  double sum = 0;
  for (int k = 1; k <= NEIGHBOURS; ++k) sum += pair_force(x[i], x[(i + k) % N]);
  f[i] = sum;
}

static inline void integrate(double dt) {
  ++n_integrate;
  for (int i = 0; i < N; ++i) {
    v[i] += dt * f[i];
    x[i] += dt * v[i];
  }
}

/* The heaviest routine, so that without hooks in the others main holds most of the time. */
static inline double energy(void) {
  ++n_energy;
  double e = 0;
  for (int r = 0; r < REPEAT; ++r)
    for (int i = 0; i < N; ++i) e = 0.999999 * e + 0.5 * v[i] * v[i];
  return e;
}

int main(void) {
  for (int i = 0; i < N; ++i) x[i] = 0.01 * i * i;
  double e = 0;
  for (int s = 0; s < STEPS; ++s) {
    for (int i = 0; i < N; ++i) compute_forces(i);
    integrate(0.01);
    e += energy();
  }
  printf("energy %.6f\n", e);
  printf("PROF_EXPECT main 1\nPROF_EXPECT compute_forces %ld\nPROF_EXPECT pair_force %ld\nPROF_EXPECT integrate %ld\n"
         "PROF_EXPECT energy %ld\n",
         n_forces, n_pair, n_integrate, n_energy);
  return 0;
}
