! SPDX-License-Identifier: BSD-3-Clause
! Fortran MPI through `use mpi` (its interfaces call libmpi_mpifh's mpi_send_ ...): blocking
! messages, Irecv/Isend completed by Waitany (1-based indices) and by Waitall with statuses, the
! collectives Barrier, Bcast, Reduce, Allreduce, Gather, Scatter, Allgather and Alltoall, and
! Comm_split/Comm_dup/Comm_free with a collective on each new communicator. Messages go to the right
! neighbour and come from the left one. Prints its counts (expect_f.inc): the trace must hold each
! call exactly once.
include 'expect_f.inc'

program fortran_usempi
  use mpi
  use prof_expect
  implicit none
  integer, parameter :: n = 4
  integer :: ierr, rank, nranks, right, left, i, k, idx, val, total, half, dup, half_rank, half_size
  integer :: sbuf(n), rbuf(n, 2), req(4), status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4)
  integer, allocatable :: gathered(:, :), vals(:), outv(:)
  logical :: done(4)
  double precision :: t0, t1

  call expect_call('MPI_Init')
  call MPI_Init(ierr)
  call expect_call('MPI_Wtime')
  t0 = MPI_Wtime()
  call expect_call('MPI_Comm_rank')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call expect_call('MPI_Comm_size')
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  sbuf = [(rank * 10 + i, i = 1, n)]

  call expect_call('MPI_Send')
  call MPI_Send(sbuf, n, MPI_INTEGER, right, 1, MPI_COMM_WORLD, ierr)
  call expect_call('MPI_Recv')
  call MPI_Recv(rbuf(:, 1), n, MPI_INTEGER, left, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
  call expect_true(status(MPI_TAG) == 1 .and. rbuf(n, 1) == left * 10 + n, 'Recv')
  call expect_messages(1, 1)

  ! Waitany until all four are done: every index is returned once (1-based in Fortran).
  do k = 1, 2
    call expect_call('MPI_Irecv')
    call MPI_Irecv(rbuf(:, k), n, MPI_INTEGER, left, 10 + k, MPI_COMM_WORLD, req(k), ierr)
  end do
  do k = 1, 2
    call expect_call('MPI_Isend')
    call MPI_Isend(sbuf, n, MPI_INTEGER, right, 10 + k, MPI_COMM_WORLD, req(2 + k), ierr)
  end do
  done = .false.
  do k = 1, 4
    call expect_call('MPI_Waitany')
    call MPI_Waitany(4, req, idx, status, ierr)
    call expect_true(idx >= 1 .and. idx <= 4, 'Waitany index')
    call expect_true(.not. done(idx), 'Waitany index twice')
    done(idx) = .true.
    if (idx <= 2) call expect_true(status(MPI_TAG) == 10 + idx .and. status(MPI_SOURCE) == left, 'Waitany status')
  end do
  call expect_messages(2, 2)

  ! Waitall with a status array.
  do k = 1, 2
    call expect_call('MPI_Irecv')
    call MPI_Irecv(rbuf(:, k), n, MPI_INTEGER, MPI_ANY_SOURCE, 20 + k, MPI_COMM_WORLD, req(k), ierr)
    call expect_call('MPI_Isend')
    call MPI_Isend(sbuf, k, MPI_INTEGER, right, 20 + k, MPI_COMM_WORLD, req(2 + k), ierr)
  end do
  call expect_call('MPI_Waitall')
  call MPI_Waitall(4, req, statuses, ierr)
  call expect_true(statuses(MPI_SOURCE, 1) == left .and. statuses(MPI_TAG, 2) == 22, 'Waitall statuses')
  call expect_messages(2, 2)

  ! Collectives on MPI_COMM_WORLD.
  call expect_call('MPI_Barrier')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  val = 42 * (rank + 1)
  call expect_call('MPI_Bcast')
  call MPI_Bcast(val, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call expect_true(val == 42, 'Bcast')
  val = rank + 1
  call expect_call('MPI_Reduce')
  call MPI_Reduce(val, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call expect_true(total == nranks * (nranks + 1) / 2, 'Reduce')
  call expect_call('MPI_Allreduce')
  call MPI_Allreduce(val, total, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call expect_true(total == nranks, 'Allreduce')
  allocate (vals(nranks), outv(nranks))
  call expect_call('MPI_Gather')
  call MPI_Gather(val, 1, MPI_INTEGER, vals, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call expect_true(all_equal(vals, [(i, i = 1, nranks)]), 'Gather')
  vals = [(100 + i, i = 1, nranks)]
  call expect_call('MPI_Scatter')
  call MPI_Scatter(vals, 1, MPI_INTEGER, val, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call expect_true(val == 101 + rank, 'Scatter')
  call expect_call('MPI_Allgather')
  call MPI_Allgather(rank, 1, MPI_INTEGER, vals, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect_true(all_equal(vals, [(i - 1, i = 1, nranks)]), 'Allgather')
  vals = [(rank * 100 + i, i = 1, nranks)]
  call expect_call('MPI_Alltoall')
  call MPI_Alltoall(vals, 1, MPI_INTEGER, outv, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect_true(outv(1) == rank + 1, 'Alltoall')

  ! New communicators: halves by parity, a duplicate, a collective on each, then freed.
  call expect_call('MPI_Comm_split')
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  call expect_call('MPI_Comm_dup')
  call MPI_Comm_dup(half, dup, ierr)
  call expect_call('MPI_Comm_rank')
  call MPI_Comm_rank(half, half_rank, ierr)
  call expect_call('MPI_Comm_size')
  call MPI_Comm_size(dup, half_size, ierr)
  call expect_true(half_rank == rank / 2 .and. half_size == (nranks + 1 - mod(rank, 2)) / 2, 'Comm_split')
  call expect_call('MPI_Allreduce')
  call MPI_Allreduce(1, total, 1, MPI_INTEGER, MPI_SUM, half, ierr)
  call expect_true(total == half_size, 'Allreduce on the split communicator')
  call expect_call('MPI_Barrier')
  call MPI_Barrier(dup, ierr)
  call expect_call('MPI_Comm_free')
  call MPI_Comm_free(dup, ierr)
  call expect_call('MPI_Comm_free')
  call MPI_Comm_free(half, ierr)
  call expect_true(half == MPI_COMM_NULL .and. dup == MPI_COMM_NULL, 'Comm_free')

  call expect_call('MPI_Wtime')
  t1 = MPI_Wtime()
  call expect_true(t1 >= t0, 'Wtime')
  call expect_call('MPI_Gather')
  call expect_call('MPI_Finalize')
  allocate (gathered(expect_slots, nranks))
  call MPI_Gather(expect_counts, expect_slots, MPI_INTEGER, gathered, expect_slots, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call expect_print(gathered, nranks)
  call MPI_Finalize(ierr)

contains
  logical function all_equal(a, b)
    integer, intent(in) :: a(:), b(:)
    all_equal = all(a == b)
  end function all_equal
end program fortran_usempi
