/* SPDX-License-Identifier: BSD-3-Clause */
/* Unification at scale (bench/mpi.sh): every rank calls 64 functions of its own program plus 16
 * that only ranks of its parity call, then MPI_Allreduce and a communicator split, so the job's
 * definitions differ between ranks. Built with prof-mpicc; prof's PROF_VERBOSE=1 lines report the
 * unification and profile merge times. */
#include <mpi.h>
#include <stdio.h>

#define F(i) static __attribute__((noinline)) int f##i(int x) { return x * (i + 1) + 1; }
#define F8(i) F(i##0) F(i##1) F(i##2) F(i##3) F(i##4) F(i##5) F(i##6) F(i##7)
F8(1) F8(2) F8(3) F8(4) F8(5) F8(6) F8(7) F8(8) F8(9) F8(10)
#define C(i) v += f##i(v);
#define C8(i) C(i##0) C(i##1) C(i##2) C(i##3) C(i##4) C(i##5) C(i##6) C(i##7)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, v = 1, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  C8(1) C8(2) C8(3) C8(4) C8(5) C8(6) C8(7) C8(8)
  if (rank % 2) { C8(9) } else { C8(10) }
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Barrier(half);
  MPI_Comm_free(&half);
  MPI_Finalize();
  if (rank == 0) printf("sum %d\n", sum);
  return 0;
}
