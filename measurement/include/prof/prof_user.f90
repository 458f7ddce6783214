! SPDX-License-Identifier: BSD-3-Clause
! The prof user API for Fortran: named regions and recording on/off (as <prof/user.h> for C).
!
!   use prof_user
!   integer(prof_handle), save :: solve = 0     ! one handle per region, 0 until first entered
!   call prof_region_begin(solve, "solve")
!   ...
!   call prof_region_end(solve)
!   call prof_recording_off()   ! ... prof_recording_on(); prof_recording_is_on() is .true./.false.
!
! Compile with prof-wrap --user (gfortran), which finds this module (prof_user.mod, built with the
! gfortran prof was built with); the calls are libprof's (prof_region_begin_ ...): the module has
! interfaces only, nothing to link. The region's source position is the line of its first begin.
module prof_user
  use, intrinsic :: iso_c_binding, only: c_int32_t
  implicit none
  integer, parameter :: prof_handle = c_int32_t
  interface
    subroutine prof_region_begin(handle, name)
      import :: prof_handle
      integer(prof_handle), intent(inout) :: handle
      character(len=*), intent(in) :: name
    end subroutine prof_region_begin
    subroutine prof_region_end(handle)
      import :: prof_handle
      integer(prof_handle), intent(inout) :: handle
    end subroutine prof_region_end
    subroutine prof_recording_off()
    end subroutine prof_recording_off
    subroutine prof_recording_on()
    end subroutine prof_recording_on
    logical function prof_recording_is_on()   ! a default LOGICAL is a C int (0 or 1) in gfortran
    end function prof_recording_is_on
  end interface
end module prof_user
