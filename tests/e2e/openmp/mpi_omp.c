/* SPDX-License-Identifier: BSD-3-Clause
 * MPI + OpenMP, for tests/e2e/openmp/openmp.sh: 2 ranks x 2 threads. MPI_Init_thread with
 * MPI_THREAD_MULTIPLE (FUNNELED where the library offers less): every thread exchanges a
 * message with the other rank from inside the parallel region (tag = its thread number), the
 * master thread reduces across ranks. PROF_EXPECT lines are per rank (check_openmp.py). */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

static int l_par;

int main(int argc, char** argv) {
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int multiple = provided >= MPI_THREAD_MULTIPLE;
  const int peer = (rank + 1) % size;
  long exchanges = 0;
  double sum = 0;
  l_par = __LINE__ + 1;
#pragma omp parallel num_threads(2) reduction(+ : sum)
  {
    const int t = omp_get_thread_num();
    double out = rank * 10 + t, in = 0;
    if (multiple) {
      MPI_Sendrecv(&out, 1, MPI_DOUBLE, peer, t, &in, 1, MPI_DOUBLE, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#pragma omp atomic
      exchanges++;
    }
    sum += in;
#pragma omp barrier
#pragma omp master
    {
      double total = 0;
      MPI_Allreduce(&out, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      sum += total;
    }
  }
  if (rank == 0) {
    printf("PROF_EXPECT enter !$omp parallel @mpi_omp.c:%d 2\n", l_par);
    printf("PROF_EXPECT event ThreadFork 1\n");
    printf("PROF_EXPECT event ThreadJoin 1\n");
    printf("PROF_EXPECT enter MPI_Sendrecv %ld\n", exchanges);
    printf("PROF_EXPECT enter MPI_Allreduce 1\n");
    printf("PROF_EXPECT enter MPI_Init_thread 1\n");
    printf("thread support %d, result %g\n", provided, sum);
  }
  MPI_Finalize();
  return 0;
}
