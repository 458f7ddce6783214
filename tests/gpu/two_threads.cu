// SPDX-License-Identifier: BSD-3-Clause
// Two host threads launch spin kernels of a known duration onto one stream (issue 16: CUPTI hands
// each thread's records over in its own buffer, so the stream's records come out of time order;
// prof clamped them, writing 205 of 427 PyTorch kernels with zero duration). Usage: two_threads
// [kernels per thread [ns per kernel]]; prints "PROF_SPIN kernels=<total> ns=<each>".
// two_threads.sh checks that the trace holds every kernel, each within 5 % of that duration.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin(long long ns) {
  const unsigned long long t0 = global_ns();
  while ((long long)(global_ns() - t0) < ns) {
  }
}

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t e = (call);                                                      \
    if (e != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));            \
      std::exit(e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ? 77 : 1); \
    }                                                                            \
  } while (0)

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200;
  const long long ns = argc > 2 ? std::atoll(argv[2]) : 100000;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  spin<<<1, 1, 0, s>>>(0);  // loads the module
  CHECK(cudaStreamSynchronize(s));
  auto launch = [&] {
    for (int i = 0; i < n; ++i) spin<<<1, 1, 0, s>>>(ns);
  };
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  CHECK(cudaEventRecord(t0, s));
  std::thread a(launch), b(launch);
  a.join();
  b.join();
  CHECK(cudaEventRecord(t1, s));
  CHECK(cudaStreamSynchronize(s));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, t0, t1));
  std::printf("PROF_SPIN_TOTAL ns=%lld (cudaEvent time of all %d spin kernels)\n", (long long)(ms * 1e6), 2 * n);
  CHECK(cudaStreamDestroy(s));
  std::printf("PROF_SPIN kernels=%d ns=%lld\n", 2 * n + 1, ns);
  return 0;
}
