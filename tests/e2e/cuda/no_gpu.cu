// SPDX-License-Identifier: BSD-3-Clause
// A CUDA program whose work runs on the CPU when there is no GPU: compute() five times in
// instrumented host code, then cudaGetDeviceCount, whose error it prints; exit 0 either way.
// With prof's CUDA adapter linked (prof-wrap nvcc) nothing of that may change.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void scale(float* x, float factor) { x[threadIdx.x] *= factor; }

static long n_compute;

__attribute__((noinline)) double compute(int i) {
  ++n_compute;
  double s = 0;
  for (int k = 0; k < 1000 * (i + 1); ++k) s += k * 0.5;
  return s;
}

int main() {
  double sum = 0;
  for (int i = 0; i < 5; ++i) sum += compute(i);
  int devices = 0;
  cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess)
    std::printf("cudaGetDeviceCount: %s: the work ran on the CPU\n", cudaGetErrorString(err));
  else
    std::printf("cudaGetDeviceCount: %d device(s); the work ran on the CPU anyway\n", devices);
  std::printf("sum %.1f\n", sum);
  std::printf("PROF_EXPECT compute %ld\n", n_compute);
  std::printf("PROF_EXPECT main 1\n");
  return 0;
}
