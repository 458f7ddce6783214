/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI job in which one rank leaves early or aborts (mpi_failures.sh): argv[1] = "exit" (rank 1
 * calls _exit(3) after the first collective, so mpirun stops the job), "abort" (rank 1 calls
 * MPI_Abort), "hang" (rank 1 sleeps 4 s in the middle, the others' finalize timeout is shorter),
 * or nothing (all ranks finish). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int work(int rank) { return rank + 1; }

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  MPI_Init(&argc, &argv);
  int rank = 0, sum = 0, v = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  v = work(rank);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 1 && strcmp(mode, "exit") == 0) _exit(3);
  if (rank == 1 && strcmp(mode, "abort") == 0) MPI_Abort(MPI_COMM_WORLD, 5);
  if (rank == 1 && strcmp(mode, "hang") == 0) sleep(4);
  else if (rank != 1) usleep(300000); /* the others reach the end later than rank 1 would */
  MPI_Finalize();
  printf("rank %d: sum %d\n", rank, sum);
  return 0;
}
