// SPDX-License-Identifier: BSD-3-Clause
// A CUDA graph of three kernels, made by stream capture, instantiated once and launched five
// times: 15 kernel executions on the stream the graph is launched into. The kernels launched
// while capturing run nothing.
#include "gpu_test.h"

__global__ void stage_add(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
__global__ void stage_double(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
__global__ void stage_sub(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] -= 1.0f;
}

int main() {
  gpu_require_device();
  const int n = 1 << 16, kLaunches = 5;
  const int blocks = (n + 255) / 256;
  int device = 0;
  CU(cudaSetDevice, nullptr, nullptr, nullptr, device);
  gpu_logf("PROF_DEVICE rank=0 device=%d", device);
  cudaStream_t s;
  float* x = nullptr;
  CU(cudaStreamCreateWithFlags, nullptr, nullptr, nullptr, &s, cudaStreamNonBlocking);
  CU(cudaMalloc, nullptr, nullptr, nullptr, (void**)&x, sizeof(float) * n);
  CU(cudaMemsetAsync, "s0", "memset:262144", nullptr, x, 0, sizeof(float) * n, s);

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CU(cudaStreamBeginCapture, "s0", nullptr, nullptr, s, cudaStreamCaptureModeGlobal);
  stage_add<<<blocks, 256, 0, s>>>(x, n);
  gpu_op("cudaLaunchKernel", 1, "s0", nullptr, nullptr);  // captured: runs nothing
  stage_double<<<blocks, 256, 0, s>>>(x, n);
  gpu_op("cudaLaunchKernel", 1, "s0", nullptr, nullptr);
  stage_sub<<<blocks, 256, 0, s>>>(x, n);
  gpu_op("cudaLaunchKernel", 1, "s0", nullptr, nullptr);
  CU(cudaStreamEndCapture, "s0", nullptr, nullptr, s, &graph);
  CU(cudaGraphInstantiate, nullptr, nullptr, nullptr, &exec, graph, 0);

  for (int i = 0; i < kLaunches; ++i)
    CU(cudaGraphLaunch, "s0", "kernel:stage_add,kernel:stage_double,kernel:stage_sub", nullptr, exec, s);
  CU(cudaStreamSynchronize, nullptr, nullptr, "s0", s);

  // One launch maps x to 2 (x + 1) - 1 = 2x + 1: five from 0 give 31.
  float host[4] = {0, 0, 0, 0};
  CU(cudaMemcpyAsync, "s0", "DtoH:16", nullptr, host, x, sizeof host, cudaMemcpyDeviceToHost, s);
  CU(cudaStreamSynchronize, nullptr, nullptr, "s0", s);
  for (float v : host) EXPECT_TRUE(v == float((1 << kLaunches) - 1));

  CU(cudaGraphExecDestroy, nullptr, nullptr, nullptr, exec);
  CU(cudaGraphDestroy, nullptr, nullptr, nullptr, graph);
  CU(cudaFree, nullptr, nullptr, nullptr, x);
  CU(cudaStreamDestroy, nullptr, nullptr, nullptr, s);
  gpu_log_print();
  return 0;
}
