// SPDX-License-Identifier: BSD-3-Clause
// Many tiny kernels on one stream, then cudaDeviceSynchronize: every kernel must appear once, in
// order. Also the CUDA adapter's benchmark: many_kernels [N [CYCLES]] (default 10000 kernels that
// do nothing; CYCLES > 0: each busy-waits that many GPU clock cycles) prints the host time of the
// launch loop and of the synchronisation as PROF_INFO lines (after one launch that loads the
// kernel's module).
#include "gpu_test.h"

#include <chrono>
#include <string>

__global__ void tiny(unsigned* counter, long long cycles) {
  if (cycles > 0) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
  }
  if (threadIdx.x == 0) atomicAdd(counter, 1u);
}

int main(int argc, char** argv) {
  const long count = argc > 1 ? std::atol(argv[1]) : 10000;
  const long long cycles = argc > 2 ? std::atoll(argv[2]) : 0;
  if (count < 1 || cycles < 0) {
    std::fprintf(stderr, "usage: %s [number of kernels >= 1 [GPU cycles each >= 0]]\n", argv[0]);
    return 2;
  }
  gpu_require_device();
  int device = 0;
  CU(cudaSetDevice, nullptr, nullptr, nullptr, device);
  gpu_logf("PROF_DEVICE rank=0 device=%d", device);
  cudaStream_t s;
  unsigned* counter = nullptr;
  unsigned result = 0;
  CU(cudaStreamCreateWithFlags, nullptr, nullptr, nullptr, &s, cudaStreamNonBlocking);
  CU(cudaMalloc, nullptr, nullptr, nullptr, (void**)&counter, sizeof(unsigned));
  CU(cudaMemsetAsync, "s0", "memset:4", nullptr, counter, 0, sizeof(unsigned), s);

  // One launch before the loop: CUDA loads the kernel's module at its first launch (lazy
  // loading), which would otherwise count as the loop's time.
  tiny<<<1, 32, 0, s>>>(counter, 0);
  gpu_op("cudaLaunchKernel", 1, "s0", "kernel:tiny", nullptr);
  CU(cudaStreamSynchronize, nullptr, nullptr, "s0", s);

  // The loop has no other runtime call: the error check follows it.
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < count; ++i) tiny<<<1, 32, 0, s>>>(counter, cycles);
  auto t1 = std::chrono::steady_clock::now();
  gpu_op("cudaLaunchKernel", count, "s0", "kernel:tiny", nullptr);
  GPU_CHECK(cudaGetLastError());  // a query: not a region unless PROF_CUDA_ENABLE has query
  CU(cudaDeviceSynchronize, nullptr, nullptr, "all");
  auto t2 = std::chrono::steady_clock::now();

  CU(cudaMemcpyAsync, "s0", "DtoH:4", nullptr, &result, counter, sizeof(unsigned), cudaMemcpyDeviceToHost, s);
  CU(cudaStreamSynchronize, nullptr, nullptr, "s0", s);
  EXPECT_TRUE(result == (unsigned)count + 1);
  CU(cudaFree, nullptr, nullptr, nullptr, counter);
  CU(cudaStreamDestroy, nullptr, nullptr, nullptr, s);

  using ns = std::chrono::nanoseconds;
  gpu_logf("PROF_INFO rank=0 kernels=%ld cycles=%lld launch_loop_ns=%lld sync_ns=%lld", count, cycles,
           (long long)std::chrono::duration_cast<ns>(t1 - t0).count(),
           (long long)std::chrono::duration_cast<ns>(t2 - t1).count());
  gpu_log_print();
  return 0;
}
