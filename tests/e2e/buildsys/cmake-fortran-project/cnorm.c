/* SPDX-License-Identifier: BSD-3-Clause */
/* A C function the Fortran program calls through bind(C). */
#include <math.h>

double cnorm(const double* u, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += u[i] * u[i];
  return sqrt(s);
}
