# SPDX-License-Identifier: BSD-3-Clause
# mpi4py on 4 ranks: a ring of sends, a broadcast and an allreduce (buffer and object APIs).
import array
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def exchange(step):
    out = array.array("d", [rank + step] * 8)
    inp = array.array("d", [0.0] * 8)
    comm.Sendrecv(out, dest=(rank + 1) % size, sendtag=step, recvbuf=inp, source=(rank - 1) % size, recvtag=step)
    return inp[0]


for step in range(3):
    exchange(step)
value = comm.bcast(42 if rank == 0 else None, root=0)
total = comm.allreduce(rank)
sys.stdout.write("rank %d value %s total %d\n" % (rank, value, total))  # one write: ranks share mpirun's output
sys.stdout.flush()
