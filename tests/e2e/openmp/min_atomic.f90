! SPDX-License-Identifier: BSD-3-Clause
! min_atomic.c in Fortran: gfortran -fopenmp, GOMP_parallel only.
program min_atomic
  implicit none
  integer :: n
  n = 0
!$omp parallel
!$omp atomic
  n = n + 1
!$omp end parallel
  print '(a,i0)', 'threads ', n
end program min_atomic
