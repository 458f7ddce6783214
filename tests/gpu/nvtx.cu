// SPDX-License-Identifier: BSD-3-Clause
// NVTX v3 (header-only): nested push/pop ranges on the main thread around a kernel, a push/pop
// range in a named domain, overlapping start/end ranges (A starts, B starts, A ends, B ends), a
// start/end range in the named domain, and a range started on the main thread and ended on
// another one.
#include "gpu_test.h"

#include <nvtx3/nvToolsExt.h>

#include <thread>

__global__ void touch(int* p) { *p += 1; }

__attribute__((noinline)) void work_inner(int* d, cudaStream_t s) {
  nvtxRangePushA("inner");
  touch<<<1, 1, 0, s>>>(d);
  LAUNCHED("s0", "touch");
  CU(cudaStreamSynchronize, nullptr, nullptr, "s0", s);
  nvtxRangePushA("innermost");
  nvtxRangePop();
  nvtxRangePop();
}

static nvtxEventAttributes_t message(const char* text) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = text;
  return a;
}

int main() {
  gpu_require_device();
  int device = 0;
  CU(cudaSetDevice, nullptr, nullptr, nullptr, device);
  gpu_logf("PROF_DEVICE rank=0 device=%d", device);
  cudaStream_t s;
  int* d = nullptr;
  CU(cudaStreamCreateWithFlags, nullptr, nullptr, nullptr, &s, cudaStreamNonBlocking);
  CU(cudaMalloc, nullptr, nullptr, nullptr, (void**)&d, sizeof(int));
  CU(cudaMemsetAsync, "s0", "memset:4", nullptr, d, 0, sizeof(int), s);

  // Push/pop, nested: outer > inner (twice) > innermost.
  const int kInner = 2;
  nvtxRangePushA("outer");
  for (int i = 0; i < kInner; ++i) work_inner(d, s);
  nvtxRangePop();
  gpu_logf("PROF_NVTX rank=0 kind=push domain=default name=outer parent=- n=1");
  gpu_logf("PROF_NVTX rank=0 kind=push domain=default name=inner parent=outer n=%d", kInner);
  gpu_logf("PROF_NVTX rank=0 kind=push domain=default name=innermost parent=inner n=%d", kInner);

  // A named domain: a push/pop range and a start/end range.
  nvtxDomainHandle_t domain = nvtxDomainCreateA("prof-test");
  nvtxEventAttributes_t pushed = message("domain_push");
  nvtxDomainRangePushEx(domain, &pushed);
  nvtxDomainRangePop(domain);
  gpu_logf("PROF_NVTX rank=0 kind=push domain=prof-test name=domain_push parent=- n=1");
  nvtxEventAttributes_t started = message("domain_range");
  nvtxRangeId_t in_domain = nvtxDomainRangeStartEx(domain, &started);
  nvtxDomainRangeEnd(domain, in_domain);
  gpu_logf("PROF_NVTX rank=0 kind=range domain=prof-test name=domain_range");

  // Overlapping start/end ranges: A starts, B starts, A ends, B ends.
  nvtxRangeId_t a = nvtxRangeStartA("range_A");
  nvtxRangeId_t b = nvtxRangeStartA("range_B");
  nvtxRangeEnd(a);
  nvtxRangeEnd(b);
  gpu_logf("PROF_NVTX rank=0 kind=range domain=default name=range_A overlaps=range_B");
  gpu_logf("PROF_NVTX rank=0 kind=range domain=default name=range_B");

  // Started here, ended on another thread.
  nvtxRangeId_t c = nvtxRangeStartA("range_C");
  std::thread t([c] { nvtxRangeEnd(c); });
  t.join();
  gpu_logf("PROF_NVTX rank=0 kind=range domain=default name=range_C");
  nvtxDomainDestroy(domain);

  int result = 0;
  CU(cudaMemcpy, "default", "DtoH:4", "all", &result, d, sizeof(int), cudaMemcpyDeviceToHost);
  EXPECT_TRUE(result == kInner);
  CU(cudaFree, nullptr, nullptr, nullptr, d);
  CU(cudaStreamDestroy, nullptr, nullptr, nullptr, s);
  gpu_log_print();
  return 0;
}
