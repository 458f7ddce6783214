! SPDX-License-Identifier: BSD-3-Clause
! A module in a shared library: module procedures, one with an internal procedure.
module heat_mod
  implicit none
  integer, parameter :: dp = kind(1d0)
contains
  subroutine step(u, n)
    integer, intent(in) :: n
    real(dp), intent(inout) :: u(n)
    integer :: i
    do i = 2, n - 1
      u(i) = smooth(i)
    end do
  contains
    real(dp) function smooth(i)
      integer, intent(in) :: i
      smooth = 0.25_dp * u(i - 1) + 0.5_dp * u(i) + 0.25_dp * u(i + 1)
    end function smooth
  end subroutine step

  real(dp) function total(u)
    real(dp), intent(in) :: u(:)
#ifdef __GFORTRAN__
    total = sum(u)
#else
    total = -1
#endif
  end function total
end module heat_mod
