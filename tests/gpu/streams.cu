// SPDX-License-Identifier: BSD-3-Clause
// Three non-default streams, each: a copy to the device from pinned memory, a kernel, a copy
// back, then each stream is synchronised. The streams move different amounts of data, so the
// checker can tell their locations apart by the bytes.
#include "gpu_test.h"

#include <string>
#include <vector>

template <typename T>
__global__ void scale(T* data, int n, T factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor + T(1);
}

int main() {
  gpu_require_device();
  const int kStreams = 3;
  const int kBase = 1 << 18;  // floats in stream 0; stream i has (i + 1) times as many
  int device = 0;
  CU(cudaSetDevice, nullptr, nullptr, nullptr, device);
  gpu_logf("PROF_DEVICE rank=0 device=%d", device);

  cudaStream_t streams[kStreams];
  float* host[kStreams];
  float* dev[kStreams];
  int n[kStreams];
  std::string name[kStreams];
  for (int s = 0; s < kStreams; ++s) {
    name[s] = gpu_str("s%d", s);
    n[s] = kBase * (s + 1);
    const size_t bytes = sizeof(float) * n[s];
    CU(cudaStreamCreateWithFlags, nullptr, nullptr, nullptr, &streams[s], cudaStreamNonBlocking);
    CU(cudaMallocHost, nullptr, nullptr, nullptr, (void**)&host[s], bytes);
    CU(cudaMalloc, nullptr, nullptr, nullptr, (void**)&dev[s], bytes);
    for (int i = 0; i < n[s]; ++i) host[s][i] = float(i % 100);
  }

  for (int s = 0; s < kStreams; ++s) {
    const size_t bytes = sizeof(float) * n[s];
    const std::string h2d = gpu_str("HtoD:%zu", bytes), d2h = gpu_str("DtoH:%zu", bytes);
    CU(cudaMemcpyAsync, name[s].c_str(), h2d.c_str(), nullptr, dev[s], host[s], bytes, cudaMemcpyHostToDevice,
       streams[s]);
    scale<float><<<(n[s] + 255) / 256, 256, 0, streams[s]>>>(dev[s], n[s], 2.0f);
    LAUNCHED(name[s].c_str(), "scale");
    CU(cudaMemcpyAsync, name[s].c_str(), d2h.c_str(), nullptr, host[s], dev[s], bytes, cudaMemcpyDeviceToHost,
       streams[s]);
  }
  for (int s = 0; s < kStreams; ++s) CU(cudaStreamSynchronize, nullptr, nullptr, name[s].c_str(), streams[s]);

  for (int s = 0; s < kStreams; ++s) {
    for (int i = 0; i < n[s]; i += 997) EXPECT_TRUE(host[s][i] == float(i % 100) * 2.0f + 1.0f);
    CU(cudaFree, nullptr, nullptr, nullptr, dev[s]);
    CU(cudaFreeHost, nullptr, nullptr, nullptr, host[s]);
    CU(cudaStreamDestroy, nullptr, nullptr, nullptr, streams[s]);
  }
  gpu_log_print();
  return 0;
}
