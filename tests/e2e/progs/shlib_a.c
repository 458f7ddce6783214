/* SPDX-License-Identifier: BSD-3-Clause */
/* A shared library linked to the program. */
long n_lib_square;
static int lib_helper(int x) { return x + 1; }
int lib_square(int x) {
  n_lib_square++;
  return lib_helper(x) * x;
}
