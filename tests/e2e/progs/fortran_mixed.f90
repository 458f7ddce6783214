! SPDX-License-Identifier: BSD-3-Clause
! The Fortran half of a mixed C/Fortran program (fortran_mixed.c): a Fortran main program calls
! C functions through bind(C) interfaces, and C calls back a bind(C) module procedure and an
! external subroutine by its gfortran symbol (fcount_). Each side counts its own calls; the
! program prints "PROF_EXPECT <region> <calls>" (e2e.py --count-enters).
module fmixed
  use iso_c_binding, only: c_int, c_double
  implicit none
  integer :: n_accum = 0, n_fcount = 0
  real(c_double) :: total = 0
  interface
    real(c_double) function c_square(x) bind(C, name="c_square")
      import :: c_double
      real(c_double), value :: x
    end function c_square
    subroutine c_drive(n) bind(C, name="c_drive")
      import :: c_int
      integer(c_int), value :: n
    end subroutine c_drive
    integer(c_int) function c_calls(which) bind(C, name="c_calls")
      import :: c_int
      integer(c_int), value :: which
    end function c_calls
  end interface
contains
  ! Called from C as f_accum; its region is fmixed::accum (DWARF's name), its symbol f_accum.
  subroutine accum(x) bind(C, name="f_accum")
    real(c_double), value :: x
    n_accum = n_accum + 1
    total = total + x
  end subroutine accum
end module fmixed

! An external subroutine: C calls it as fcount_ (gfortran's symbol); its region is fcount.
subroutine fcount(n)
  use fmixed, only: n_fcount
  integer, intent(inout) :: n
  n_fcount = n_fcount + 1
  n = n + 1
end subroutine fcount

program fortran_mixed
  use fmixed
  implicit none
  integer :: i
  real(c_double) :: s
  s = 0
  do i = 1, 9
    s = s + c_square(real(i, c_double))
  end do
  call c_drive(6)
  print '(a,f0.1,a,f0.1)', 'sum of squares ', s, ', total ', total
  print '(a,i0)', 'PROF_EXPECT c_square ', c_calls(0)
  print '(a,i0)', 'PROF_EXPECT c_drive ', c_calls(1)
  print '(a,i0)', 'PROF_EXPECT fmixed::accum ', n_accum
  print '(a,i0)', 'PROF_EXPECT fcount ', n_fcount
  print '(a)', 'PROF_EXPECT fortran_mixed 1'
  print '(a)', 'PROF_EXPECT main 1'
end program fortran_mixed
