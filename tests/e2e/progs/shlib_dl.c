/* SPDX-License-Identifier: BSD-3-Clause */
/* A shared library the program opens with dlopen. */
long n_dl_cube;
int dl_cube(int x) {
  n_dl_cube++;
  return x * x * x;
}
