/* SPDX-License-Identifier: BSD-3-Clause */
/* The C half of fortran_mixed.f90: functions its Fortran main program calls through bind(C),
 * one of which calls Fortran back (a bind(C) module procedure and an external subroutine). */
static int n_square, n_drive;

void f_accum(double x);  /* Fortran: fmixed::accum, bind(C, name="f_accum") */
void fcount_(int* n);    /* Fortran: external subroutine fcount */

double c_square(double x) {
  ++n_square;
  return x * x;
}

void c_drive(int n) {
  ++n_drive;
  int counted = 0;
  for (int i = 0; i < n; ++i) {
    f_accum(0.5 * i);
    fcount_(&counted);
  }
}

/* Calls made so far: 0 = c_square, 1 = c_drive. */
int c_calls(int which) { return which == 0 ? n_square : n_drive; }
