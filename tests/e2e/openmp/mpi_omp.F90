! SPDX-License-Identifier: BSD-3-Clause
! MPI + OpenMP in Fortran, for tests/e2e/openmp/openmp.sh (case gfortran_mpi): 2 ranks x 2
! threads, `use mpi`, MPI_Init_thread with MPI_THREAD_FUNNELED. A parallel region with a dynamic
! loop, a critical section and an explicit barrier; the master thread reduces across ranks.
! PROF_EXPECT lines are per rank (check_openmp.py); lines from the preprocessor's __LINE__.
program mpi_omp
  use mpi
  use omp_lib
  implicit none
  integer :: provided, rank, ierr, i, l_par, l_do, l_bar
  integer :: crit
  double precision :: s, total
  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  s = 0
  crit = 0
  l_par = __LINE__ + 1
!$omp parallel num_threads(2) reduction(+:s)
  l_do = __LINE__ + 1
!$omp do schedule(dynamic, 3)
  do i = 1, 100
    s = s + sqrt(dble(i))
  end do
!$omp end do
!$omp critical
  crit = crit + 1
!$omp end critical
  l_bar = __LINE__ + 1
!$omp barrier
!$omp master
  call MPI_Allreduce(s, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
!$omp end master
!$omp end parallel
  if (rank == 0) then
    print '(a,i0,a)', 'PROF_EXPECT enter !$omp parallel @mpi_omp.F90:', l_par, ' 2'
    print '(a,i0,a)', 'PROF_EXPECT enter !$omp for @mpi_omp.F90:', l_do, ' 2'
    print '(a,i0,a)', 'PROF_EXPECT enter !$omp barrier @mpi_omp.F90:', l_bar, ' 2'
    print '(a,i0)', 'PROF_EXPECT enter !$omp critical @ ', crit
    print '(a)', 'PROF_EXPECT event ThreadFork 1'
    print '(a)', 'PROF_EXPECT event ThreadJoin 1'
    print '(a)', 'PROF_EXPECT enter MPI_Allreduce 1'
    print '(a)', 'PROF_EXPECT enter MPI_Init_thread 1'
  end if
  call MPI_Finalize(ierr)
end program mpi_omp
