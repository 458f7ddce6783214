// SPDX-License-Identifier: BSD-3-Clause
// MPI and CUDA: every rank fills an array on device 0 with a kernel on the default stream, copies
// it back with cudaMemcpy and takes part in an MPI_Allreduce of the sums. The ranks' logs are
// gathered to rank 0, which prints them. Run with 2 ranks.
#include <mpi.h>

#include "gpu_test.h"

#include <vector>

__global__ void fill(int* x, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  gpu_rank() = rank;
  std::string why;
  int have = gpu_have_device(&why) ? 1 : 0, all = 0;
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    if (!have) std::printf("SKIP: no CUDA device (%s) on rank %d\n", why.c_str(), rank);
    MPI_Finalize();
    return 77;
  }

  const int n = 1 << 16;
  const int device = 0;
  CU(cudaSetDevice, nullptr, nullptr, nullptr, device);
  gpu_logf("PROF_DEVICE rank=%d device=%d", rank, device);
  int* d = nullptr;
  std::vector<int> h(n);
  CU(cudaMalloc, nullptr, nullptr, nullptr, (void**)&d, sizeof(int) * n);
  fill<<<(n + 255) / 256, 256>>>(d, n, rank + 1);
  LAUNCHED("default", "fill");
  const std::string d2h = gpu_str("DtoH:%zu", sizeof(int) * n);
  CU(cudaMemcpy, "default", d2h.c_str(), "all", h.data(), d, sizeof(int) * n, cudaMemcpyDeviceToHost);
  long long sum = 0, total = 0;
  for (int v : h) sum += v;
  MPI_Allreduce(&sum, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_TRUE(total == (long long)n * size * (size + 1) / 2);
  CU(cudaFree, nullptr, nullptr, nullptr, d);

  // Rank 0 prints every rank's log, whole lines in rank order.
  int len = (int)gpu_log().size();
  std::vector<int> lens(size), offsets(size);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int text_len = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = text_len;
    text_len += lens[r];
  }
  std::string text(rank == 0 ? text_len : 0, '\0');
  MPI_Gatherv(gpu_log().data(), len, MPI_CHAR, &text[0], lens.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
