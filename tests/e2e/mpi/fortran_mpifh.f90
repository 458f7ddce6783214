! SPDX-License-Identifier: BSD-3-Clause
! Fortran MPI through include 'mpif.h' (libmpi_mpifh: mpi_send_ ...): blocking messages (a status,
! MPI_STATUS_IGNORE, MPI_ANY_SOURCE), Irecv/Isend with Wait and Waitall(MPI_STATUSES_IGNORE), a Test
! polling loop, Sendrecv, and the collectives Barrier, Bcast, Allreduce and Reduce with MPI_IN_PLACE.
! Messages go to the right neighbour and come from the left one. Prints its counts (expect_f.inc):
! the trace must hold each call exactly once (the bindings must not be recorded twice).
include 'expect_f.inc'

program fortran_mpifh
  use prof_expect
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 8
  integer :: ierr, rank, nranks, right, left, i, count, val, total
  integer :: sbuf(n), rbuf(n), rbuf2(n), req(4), status(MPI_STATUS_SIZE)
  logical :: flag
  integer, allocatable :: gathered(:, :)

  call expect_call('MPI_Init')
  call MPI_Init(ierr)
  call expect_call('MPI_Comm_rank')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call expect_call('MPI_Comm_size')
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  sbuf = [(rank * 100 + i, i = 1, n)]

  ! Blocking (small messages leave eagerly, so every rank sends first).
  call expect_call('MPI_Send')
  call MPI_Send(sbuf, n, MPI_INTEGER, right, 1, MPI_COMM_WORLD, ierr)
  call expect_call('MPI_Recv')
  call MPI_Recv(rbuf, n, MPI_INTEGER, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, status, ierr)
  call expect_true(status(MPI_SOURCE) == left .and. status(MPI_TAG) == 1 .and. rbuf(n) == left * 100 + n, 'Recv')
  call expect_call('MPI_Get_count')
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call expect_true(count == n, 'Get_count')
  call expect_call('MPI_Send')
  call MPI_Send(sbuf, 3, MPI_INTEGER, right, 2, MPI_COMM_WORLD, ierr)
  call expect_call('MPI_Recv')
  call MPI_Recv(rbuf, n, MPI_INTEGER, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call expect_messages(2, 2)

  ! Non-blocking: Wait with a status and with MPI_STATUS_IGNORE.
  call expect_call('MPI_Irecv')
  call MPI_Irecv(rbuf, n, MPI_INTEGER, left, 3, MPI_COMM_WORLD, req(1), ierr)
  call expect_call('MPI_Isend')
  call MPI_Isend(sbuf, n, MPI_INTEGER, right, 3, MPI_COMM_WORLD, req(2), ierr)
  call expect_call('MPI_Wait')
  call MPI_Wait(req(1), status, ierr)
  call expect_true(status(MPI_SOURCE) == left .and. status(MPI_TAG) == 3, 'Wait status')
  call expect_call('MPI_Wait')
  call MPI_Wait(req(2), MPI_STATUS_IGNORE, ierr)
  call expect_true(req(1) == MPI_REQUEST_NULL .and. req(2) == MPI_REQUEST_NULL, 'Wait sets MPI_REQUEST_NULL')
  call expect_messages(1, 1)

  ! Two each, Waitall with MPI_STATUSES_IGNORE.
  call expect_call('MPI_Irecv')
  call MPI_Irecv(rbuf, n, MPI_INTEGER, left, 4, MPI_COMM_WORLD, req(1), ierr)
  call expect_call('MPI_Irecv')
  call MPI_Irecv(rbuf2, 2, MPI_INTEGER, left, 5, MPI_COMM_WORLD, req(2), ierr)
  call expect_call('MPI_Isend')
  call MPI_Isend(sbuf, n, MPI_INTEGER, right, 4, MPI_COMM_WORLD, req(3), ierr)
  call expect_call('MPI_Isend')
  call MPI_Isend(sbuf, 2, MPI_INTEGER, right, 5, MPI_COMM_WORLD, req(4), ierr)
  call expect_call('MPI_Waitall')
  call MPI_Waitall(4, req, MPI_STATUSES_IGNORE, ierr)
  call expect_true(rbuf2(2) == left * 100 + 2, 'Waitall data')
  call expect_messages(2, 2)

  ! Test polling until the receive is complete (every call counted).
  call expect_call('MPI_Irecv')
  call MPI_Irecv(rbuf, n, MPI_INTEGER, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, req(1), ierr)
  call expect_call('MPI_Isend')
  call MPI_Isend(sbuf, n, MPI_INTEGER, right, 6, MPI_COMM_WORLD, req(2), ierr)
  flag = .false.
  do while (.not. flag)
    call expect_call('MPI_Test')
    call MPI_Test(req(1), flag, status, ierr)
  end do
  call expect_true(status(MPI_SOURCE) == left, 'Test status')
  call expect_call('MPI_Wait')
  call MPI_Wait(req(2), status, ierr)
  call expect_messages(1, 1)

  call expect_call('MPI_Sendrecv')
  call MPI_Sendrecv(sbuf, n, MPI_INTEGER, right, 7, rbuf, n, MPI_INTEGER, left, 7, MPI_COMM_WORLD, status, ierr)
  call expect_true(status(MPI_SOURCE) == left .and. rbuf(1) == left * 100 + 1, 'Sendrecv')
  call expect_messages(1, 1)

  ! Collectives.
  call expect_call('MPI_Barrier')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  val = rank + 1
  call expect_call('MPI_Bcast')
  call MPI_Bcast(val, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call expect_true(val == 1, 'Bcast')
  total = rank + 1
  call expect_call('MPI_Allreduce')
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect_true(total == nranks * (nranks + 1) / 2, 'Allreduce in place')
  val = rank + 1
  total = val
  call expect_call('MPI_Reduce')
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
    call expect_true(total == nranks, 'Reduce in place')
  else
    call MPI_Reduce(val, total, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  end if
  call expect_call('MPI_Allreduce')
  call MPI_Allreduce(val, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect_true(total == nranks * (nranks + 1) / 2, 'Allreduce')

  ! The counts, gathered on rank 0 (this MPI_Gather and the MPI_Finalize counted first).
  call expect_call('MPI_Gather')
  call expect_call('MPI_Finalize')
  allocate (gathered(expect_slots, nranks))
  call MPI_Gather(expect_counts, expect_slots, MPI_INTEGER, gathered, expect_slots, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call expect_print(gathered, nranks)
  call MPI_Finalize(ierr)
end program fortran_mpifh
