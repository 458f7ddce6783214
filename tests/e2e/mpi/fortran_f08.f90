! SPDX-License-Identifier: BSD-3-Clause
! Fortran MPI through `use mpi_f08` (libmpi_usempif08: mpi_send_f08_ ..., handles and statuses as
! derived types, ierror mostly left out): MPI_Init_thread, blocking messages (type(MPI_Status) and
! MPI_STATUS_IGNORE), Irecv/Isend completed by Wait, Waitsome (1-based indices) and
! Waitall(MPI_STATUSES_IGNORE), a Test polling loop, the collectives Barrier, Bcast, Allreduce and
! Reduce (MPI_IN_PLACE at the root), Comm_split/Comm_dup/Comm_free, and MPI_Wtime (mpi_f08 binds the
! C function: the C wrapper records it). Messages go to the right neighbour and come from the left
! one. Prints its counts (expect_f.inc): the trace must hold each call exactly once.
include 'expect_f.inc'

program fortran_f08
  use mpi_f08
  use prof_expect
  implicit none
  integer, parameter :: n = 6
  integer :: ierr, provided, rank, nranks, right, left, i, k, outcount, left_over, val, total, count
  integer :: sbuf(n), rbuf(n, 2), indices(4)
  type(MPI_Request) :: req(4)
  type(MPI_Status) :: status, statuses(4)
  type(MPI_Comm) :: half, dup
  logical :: flag
  integer, allocatable :: gathered(:, :)
  double precision :: t0

  call expect_call('MPI_Init_thread')
  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call expect_true(ierr == MPI_SUCCESS, 'Init_thread ierror')
  call expect_call('MPI_Wtime')
  t0 = MPI_Wtime()
  call expect_call('MPI_Comm_rank')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call expect_call('MPI_Comm_size')
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  sbuf = [(rank * 1000 + i, i = 1, n)]

  call expect_call('MPI_Send')
  call MPI_Send(sbuf, n, MPI_INTEGER, right, 1, MPI_COMM_WORLD)
  call expect_call('MPI_Recv')
  call MPI_Recv(rbuf(:, 1), n, MPI_INTEGER, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, status)
  call expect_true(status%MPI_SOURCE == left .and. rbuf(n, 1) == left * 1000 + n, 'Recv')
  call expect_call('MPI_Get_count')
  call MPI_Get_count(status, MPI_INTEGER, count)
  call expect_true(count == n, 'Get_count')
  call expect_call('MPI_Send')
  call MPI_Send(sbuf, 2, MPI_INTEGER, right, 2, MPI_COMM_WORLD, ierr)
  call expect_call('MPI_Recv')
  call MPI_Recv(rbuf(:, 1), n, MPI_INTEGER, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call expect_messages(2, 2)

  call expect_call('MPI_Irecv')
  call MPI_Irecv(rbuf(:, 1), n, MPI_INTEGER, left, 3, MPI_COMM_WORLD, req(1))
  call expect_call('MPI_Isend')
  call MPI_Isend(sbuf, n, MPI_INTEGER, right, 3, MPI_COMM_WORLD, req(2))
  call expect_call('MPI_Wait')
  call MPI_Wait(req(2), MPI_STATUS_IGNORE)
  call expect_call('MPI_Wait')
  call MPI_Wait(req(1), status)
  call expect_true(status%MPI_TAG == 3 .and. req(1) == MPI_REQUEST_NULL, 'Wait')
  call expect_messages(1, 1)

  ! Waitsome until all four are done.
  do k = 1, 2
    call expect_call('MPI_Irecv')
    call MPI_Irecv(rbuf(:, k), n, MPI_INTEGER, left, 10 + k, MPI_COMM_WORLD, req(k))
    call expect_call('MPI_Isend')
    call MPI_Isend(sbuf, n, MPI_INTEGER, right, 10 + k, MPI_COMM_WORLD, req(2 + k))
  end do
  left_over = 4
  do while (left_over > 0)
    call expect_call('MPI_Waitsome')
    call MPI_Waitsome(4, req, outcount, indices, statuses)
    call expect_true(outcount >= 1 .and. outcount <= left_over, 'Waitsome outcount')
    do i = 1, outcount
      call expect_true(indices(i) >= 1 .and. indices(i) <= 4, 'Waitsome index')
      if (indices(i) <= 2) call expect_true(statuses(i)%MPI_TAG == 10 + indices(i), 'Waitsome status')
    end do
    left_over = left_over - outcount
  end do
  call expect_messages(2, 2)

  ! Waitall with MPI_STATUSES_IGNORE, then Test polling.
  do k = 1, 2
    call expect_call('MPI_Irecv')
    call MPI_Irecv(rbuf(:, k), n, MPI_INTEGER, left, 20 + k, MPI_COMM_WORLD, req(k))
    call expect_call('MPI_Isend')
    call MPI_Isend(sbuf, n, MPI_INTEGER, right, 20 + k, MPI_COMM_WORLD, req(2 + k))
  end do
  call expect_call('MPI_Waitall')
  call MPI_Waitall(4, req, MPI_STATUSES_IGNORE, ierr)
  call expect_messages(2, 2)
  call expect_call('MPI_Irecv')
  call MPI_Irecv(rbuf(:, 1), n, MPI_INTEGER, left, 30, MPI_COMM_WORLD, req(1))
  call expect_call('MPI_Isend')
  call MPI_Isend(sbuf, n, MPI_INTEGER, right, 30, MPI_COMM_WORLD, req(2))
  flag = .false.
  do while (.not. flag)
    call expect_call('MPI_Test')
    call MPI_Test(req(1), flag, MPI_STATUS_IGNORE)
  end do
  call expect_call('MPI_Wait')
  call MPI_Wait(req(2), status)
  call expect_messages(1, 1)
  call expect_call('MPI_Sendrecv')
  call MPI_Sendrecv(sbuf, n, MPI_INTEGER, right, 40, rbuf(:, 1), n, MPI_INTEGER, left, 40, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE)
  call expect_messages(1, 1)

  ! Collectives.
  call expect_call('MPI_Barrier')
  call MPI_Barrier(MPI_COMM_WORLD)
  val = rank + 7
  call expect_call('MPI_Bcast')
  call MPI_Bcast(val, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call expect_true(val == 7, 'Bcast')
  total = rank + 1
  call expect_call('MPI_Allreduce')
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call expect_true(total == nranks * (nranks + 1) / 2, 'Allreduce in place')
  val = rank + 1
  total = val
  call expect_call('MPI_Reduce')
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    call expect_true(total == nranks * (nranks + 1) / 2, 'Reduce in place')
  else
    call MPI_Reduce(val, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end if

  call expect_call('MPI_Comm_split')
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half)
  call expect_call('MPI_Comm_dup')
  call MPI_Comm_dup(half, dup)
  call expect_call('MPI_Bcast')
  call MPI_Bcast(val, 1, MPI_INTEGER, 0, dup)
  call expect_call('MPI_Comm_free')
  call MPI_Comm_free(dup)
  call expect_call('MPI_Comm_free')
  call MPI_Comm_free(half)
  call expect_true(half == MPI_COMM_NULL, 'Comm_free')

  call expect_call('MPI_Gather')
  call expect_call('MPI_Finalize')
  allocate (gathered(expect_slots, nranks))
  call MPI_Gather(expect_counts, expect_slots, MPI_INTEGER, gathered, expect_slots, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0) call expect_print(gathered, nranks)
  call MPI_Finalize()
end program fortran_f08
