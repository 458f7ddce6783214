// SPDX-License-Identifier: BSD-3-Clause
// One kernel of known duration: it spins on the GPU's global timer for about 50 ms (argv[1]: ns),
// timed with CUDA events around it. The trace's kernel duration must agree with the event time.
#include "gpu_test.h"

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin(long long ns, unsigned long long* rounds) {
  const unsigned long long t0 = global_ns();
  unsigned long long r = 0;
  while ((long long)(global_ns() - t0) < ns) ++r;
  *rounds = r;
}

int main(int argc, char** argv) {
  const long long ns = argc > 1 ? std::atoll(argv[1]) : 50000000LL;
  gpu_require_device();
  int device = 0;
  CU(cudaSetDevice, nullptr, nullptr, nullptr, device);
  gpu_logf("PROF_DEVICE rank=0 device=%d", device);
  cudaStream_t s;
  cudaEvent_t start, stop;
  unsigned long long* rounds = nullptr;
  CU(cudaStreamCreateWithFlags, nullptr, nullptr, nullptr, &s, cudaStreamNonBlocking);
  CU(cudaEventCreate, nullptr, nullptr, nullptr, &start);
  CU(cudaEventCreate, nullptr, nullptr, nullptr, &stop);
  CU(cudaMalloc, nullptr, nullptr, nullptr, (void**)&rounds, sizeof *rounds);

  // Warm-up: the first launch loads the module (lazy loading), which must not be timed.
  spin<<<1, 1, 0, s>>>(0, rounds);
  LAUNCHED("s0", "spin");
  CU(cudaStreamSynchronize, nullptr, nullptr, "s0", s);

  CU(cudaEventRecord, "s0", nullptr, nullptr, start, s);
  spin<<<1, 1, 0, s>>>(ns, rounds);
  LAUNCHED("s0", "spin");
  CU(cudaEventRecord, "s0", nullptr, nullptr, stop, s);
  CU(cudaEventSynchronize, nullptr, nullptr, "s0", stop);
  float ms = 0;
  CU(cudaEventElapsedTime, nullptr, nullptr, nullptr, &ms, start, stop);
  EXPECT_TRUE(ms * 1e6 >= 0.99 * ns);
  gpu_logf("PROF_DURATION rank=0 kernel=spin index=1 ns=%lld", (long long)(ms * 1e6));

  CU(cudaFree, nullptr, nullptr, nullptr, rounds);
  CU(cudaEventDestroy, nullptr, nullptr, nullptr, start);
  CU(cudaEventDestroy, nullptr, nullptr, nullptr, stop);
  CU(cudaStreamDestroy, nullptr, nullptr, nullptr, s);
  gpu_log_print();
  return 0;
}
