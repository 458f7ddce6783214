! SPDX-License-Identifier: BSD-3-Clause
! A serial Fortran program that counts its own calls and prints "PROF_EXPECT <region> <calls>"
! (e2e.py --count-enters): module procedures, a function, an internal procedure that uses its
! host's variables, a recursive function, and the main program. Regions are named as the program
! spells them: fsolver::axpy, fsolver::relax::damp, fortran_serial.
module fsolver
  implicit none
  integer :: n_axpy = 0, n_norm = 0, n_fib = 0, n_relax = 0, n_damp = 0
contains
  subroutine axpy(a, x, y)
    real(8), intent(in) :: a, x(:)
    real(8), intent(inout) :: y(:)
    n_axpy = n_axpy + 1
    y = y + a * x
  end subroutine axpy

  real(8) function norm2sq(x)
    real(8), intent(in) :: x(:)
    n_norm = n_norm + 1
    norm2sq = sum(x * x)
  end function norm2sq

  recursive integer function fib(n) result(r)
    integer, intent(in) :: n
    n_fib = n_fib + 1
    if (n < 2) then
      r = n
    else
      r = fib(n - 1) + fib(n - 2)
    end if
  end function fib

  subroutine relax(x, steps)
    real(8), intent(inout) :: x(:)
    integer, intent(in) :: steps
    integer :: i
    n_relax = n_relax + 1
    do i = 1, steps
      call damp(0.5d0)
    end do
  contains
    ! An internal procedure: it reaches x through its host (a nested function with a static chain).
    subroutine damp(f)
      real(8), intent(in) :: f
      n_damp = n_damp + 1
      x = x * f
    end subroutine damp
  end subroutine relax
end module fsolver

program fortran_serial
  use fsolver
  implicit none
  real(8) :: x(100), y(100), s
  integer :: i, f
  x = 1d0
  y = 0d0
  do i = 1, 7
    call axpy(2d0, x, y)
  end do
  f = fib(12)
  call relax(y, 5)
  call relax(x, 3)
  s = norm2sq(y) + norm2sq(x)
  print '(a,i0,a,es12.4)', 'fib(12) = ', f, ', |y|^2 + |x|^2 = ', s
  print '(a,i0)', 'PROF_EXPECT fsolver::axpy ', n_axpy
  print '(a,i0)', 'PROF_EXPECT fsolver::norm2sq ', n_norm
  print '(a,i0)', 'PROF_EXPECT fsolver::fib ', n_fib
  print '(a,i0)', 'PROF_EXPECT fsolver::relax ', n_relax
  print '(a,i0)', 'PROF_EXPECT fsolver::relax::damp ', n_damp
  print '(a)', 'PROF_EXPECT fortran_serial 1'
  print '(a)', 'PROF_EXPECT main 1'
end program fortran_serial
