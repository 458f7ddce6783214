// SPDX-License-Identifier: BSD-3-Clause
// What CUPTI itself costs on a loop of tiny kernels, without prof: the same loop as
// tests/gpu/many_kernels.cu (N launches of a one-block kernel on one stream, then
// cudaDeviceSynchronize), with CUPTI set up as a tool would, piece by piece, and callbacks that do
// nothing. bench/cuda.sh runs it next to prof's variants, so that what prof adds is the
// difference to the matching line here.
//
//   cupti_floor MODE [N [CYCLES]]
// MODE: "-" for none, else letters:
//   r  runtime API callbacks on the launch functions (an empty callback)
//   d  driver API callbacks on the launch functions (an empty callback)
//   k  CONCURRENT_KERNEL activity records (buffers of 1 MiB from malloc, records counted, freed)
//   t  a timestamp callback (CLOCK_MONOTONIC_RAW through clock_gettime)
//   f  CUPTI's flush period of 100 ms (prof's setting)
//   z  zeroed activity buffers (calloc, CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER)
//   p  CUPTI's timestamp buffers in pinned host memory (CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED)
//   K  KERNEL activity records instead of CONCURRENT_KERNEL (CUPTI serialises the kernels)
//   x  with k: kernel records switched off after the first tenth of the loop (what that costs
//      and whether the rest of the loop runs at the plain speed again); prints toggle_ns
// Prints PROF_INFO kernels=... cycles=... launch_loop_ns=... sync_ns=... (bench/cuda.sh's format)
// and, with k, the number of kernel records CUPTI handed over.
#include <cuda_runtime.h>
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

std::atomic<unsigned long> g_records{0};
bool g_zeroed = false;

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  const size_t bytes = 1u << 20;
  *buffer = static_cast<uint8_t*>(g_zeroed ? std::calloc(1, bytes) : std::malloc(bytes));
  *size = *buffer ? bytes : 0;
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* rec = nullptr;
  unsigned long n = 0;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) ++n;
  g_records += n;
  std::free(buffer);
}

uint64_t CUPTIAPI timestamp() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void ok(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  std::fprintf(stderr, "cupti_floor: %s failed: %s\n", what, s ? s : "?");
  std::exit(1);
}

// Callbacks on the launch functions of one domain (by name, as prof chooses them).
void enable_launches(CUpti_SubscriberHandle sub, CUpti_CallbackDomain domain, int ids) {
  for (CUpti_CallbackId id = 0; id < static_cast<CUpti_CallbackId>(ids); ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name && std::strstr(name, "Launch"))
      ok(cuptiEnableCallback(1, sub, domain, id), "cuptiEnableCallback");
  }
}

__global__ void tiny(unsigned* counter, long long cycles) {
  if (cycles > 0) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
  }
  if (threadIdx.x == 0) atomicAdd(counter, 1u);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODE [N [CYCLES]]  (MODE: - or letters of rdktfzpKx)\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  const long count = argc > 2 ? std::atol(argv[2]) : 10000;
  const long long cycles = argc > 3 ? std::atoll(argv[3]) : 0;
  auto has = [mode](char c) { return std::strchr(mode, c) != nullptr; };
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    std::fprintf(stderr, "cupti_floor: no CUDA device\n");
    return 77;
  }
  // Before CUDA makes its context: the attributes apply to new contexts.
  if (has('p')) {
    uint8_t one = 1;
    size_t size = sizeof one;
    ok(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &size, &one), "pinned attribute");
  }
  if (has('z')) {
    g_zeroed = true;
    uint8_t one = 1;
    size_t size = sizeof one;
    ok(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &one), "zeroed attribute");
  }
  CUpti_SubscriberHandle sub;
  if (has('r') || has('d')) {
    ok(cuptiSubscribe(&sub, &on_callback, nullptr), "cuptiSubscribe");
    if (has('r')) enable_launches(sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    if (has('d')) enable_launches(sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
  }
  if (has('t')) ok(cuptiActivityRegisterTimestampCallback(&timestamp), "timestamp callback");
  if (has('k') || has('K')) {
    ok(cuptiActivityRegisterCallbacks(&requested, &completed), "buffer callbacks");
    ok(cuptiActivityEnable(has('K') ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "kernel records");
    if (has('f')) ok(cuptiActivityFlushPeriod(100), "flush period");
  }
  cudaStream_t s;
  unsigned* counter = nullptr;
  if (cudaSetDevice(0) != cudaSuccess || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
      cudaMalloc(&counter, sizeof(unsigned)) != cudaSuccess || cudaMemsetAsync(counter, 0, sizeof(unsigned), s) != cudaSuccess) {
    std::fprintf(stderr, "cupti_floor: CUDA set-up failed\n");
    return 1;
  }
  tiny<<<1, 32, 0, s>>>(counter, 0);  // warm-up: the module is loaded before the loop
  cudaDeviceSynchronize();

  const long switch_off = has('x') ? count / 10 : -1;
  long long toggle_ns = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < count; ++i) {
    if (i == switch_off) {
      const auto a = std::chrono::steady_clock::now();
      ok(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "switching kernel records off");
      toggle_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - a).count();
    }
    tiny<<<1, 32, 0, s>>>(counter, cycles);
  }
  const auto t1 = std::chrono::steady_clock::now();
  const cudaError_t e = cudaDeviceSynchronize();
  const auto t2 = std::chrono::steady_clock::now();
  unsigned result = 0;
  cudaMemcpy(&result, counter, sizeof result, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess || result != static_cast<unsigned>(count + 1)) {
    std::fprintf(stderr, "cupti_floor: %s, %u kernels counted of %ld\n", cudaGetErrorString(e), result, count + 1);
    return 1;
  }
  if (has('k') || has('K')) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  using ns = std::chrono::nanoseconds;
  std::printf("PROF_INFO rank=0 kernels=%ld cycles=%lld launch_loop_ns=%lld sync_ns=%lld records=%lu toggle_ns=%lld\n", count, cycles,
              static_cast<long long>(std::chrono::duration_cast<ns>(t1 - t0).count()),
              static_cast<long long>(std::chrono::duration_cast<ns>(t2 - t1).count()), g_records.load(), toggle_ns);
  return 0;
}
