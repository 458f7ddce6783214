! SPDX-License-Identifier: BSD-3-Clause
! The program: 4 steps (8 calls of the internal smooth each), 2 fixed-form calls, 1 C call.
program fdemo
  use heat_mod
  use iso_c_binding, only: c_double, c_int
  implicit none
  interface
    real(c_double) function cnorm(u, n) bind(C, name="cnorm")
      import :: c_double, c_int
      real(c_double), intent(in) :: u(*)
      integer(c_int), value :: n
    end function cnorm
  end interface
  real(dp) :: u(10)
  integer :: k
  u = 0
  u(5) = 1
  do k = 1, 4
    call step(u, size(u))
  end do
  call lscale(u, size(u), 2.0_dp)
  call lscale(u, size(u), 0.5_dp)
  print '(a,f8.5,a,f8.5)', 'total ', total(u), ' norm ', cnorm(u, size(u))
end program fdemo
