! SPDX-License-Identifier: BSD-3-Clause
! The Fortran user API (use prof_user; prof-wrap --user): a region entered from a loop and one
! around it, recording off for part of the loop. Prints PROF_EXPECT lines with the Enter counts
! the trace must have (recorded calls only).
program user_fortran
  use prof_user
  implicit none
  integer(prof_handle), save :: outer = 0, step = 0
  integer :: i, recorded
  real :: x
  x = 0.0
  recorded = 0
  call prof_region_begin(outer, "outer_phase")
  do i = 1, 10
    if (i == 4) call prof_recording_off()
    if (i == 7) call prof_recording_on()
    if (prof_recording_is_on()) recorded = recorded + 1
    call prof_region_begin(step, "time_step")
    x = x + sqrt(real(i))
    call prof_region_end(step)
  end do
  call prof_region_end(outer)
  print '(a,i0)', 'PROF_EXPECT time_step ', recorded
  print '(a)', 'PROF_EXPECT outer_phase 1'
  print *, 'x =', x
end program user_fortran
