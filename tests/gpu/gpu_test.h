// SPDX-License-Identifier: BSD-3-Clause
// What the GPU test programs share: the skip without a device, error checks, and the log of what
// the program did, which check_gpu.py compares with the trace. Nothing of it is hard-coded there.
//
// Lines the programs print (one process; MPI programs gather them to rank 0, which prints all):
//   PROF_DEVICE rank=<r> device=<d>
//       the CUDA device the process uses
//   PROF_OP rank=<r> api=<runtime function> n=<calls> [stream=<s>] [gpu=<item>,...] [sync=<s>|all]
//       n calls in a row, on the main thread, of a CUDA runtime function; each call enqueues the
//       GPU work items on stream <s> (s0, s1, ... in creation order, or "default"); a call with
//       sync waits for all work on stream <s>, or on the device (all), issued before it returns.
//       Items: kernel:<base name>, HtoD:<bytes>, DtoH:<bytes>, DtoD:<bytes>, memset:<bytes>.
//       cudaLaunchKernel stands for a <<<>>> launch (CUDA 13 calls __cudaLaunchKernel for it).
//   PROF_DURATION rank=<r> kernel=<base name> index=<i> ns=<ns>
//       the i-th (from 0) logged execution of that kernel took ns on the GPU (cudaEvent time)
//   PROF_NVTX rank=<r> kind=push domain=<d> name=<message> parent=<message>|- n=<times>
//       a push/pop range on the main thread, inside the push/pop range <parent> (or none)
//   PROF_NVTX rank=<r> kind=range domain=<d> name=<message> [overlaps=<message>]
//       a start/end range (domain "default" for NVTX's default domain)
// Messages and kernel names contain no blanks.
#ifndef PROF_TESTS_GPU_TEST_H
#define PROF_TESTS_GPU_TEST_H

#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

// The log, kept in memory and printed at the end (MPI programs gather it first).
inline std::string& gpu_log() {
  static std::string log;
  return log;
}

inline int& gpu_rank() {
  static int rank = 0;
  return rank;
}

// printf into a std::string. (Not std::to_string: its template instances in the program are
// instrumented, and libprof.so may bind to them; that is a test of its own, not of CUDA.)
__attribute__((format(printf, 1, 2))) inline std::string gpu_str(const char* fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return text;
}

#define gpu_logf(...) (gpu_log() += gpu_str(__VA_ARGS__) + '\n')

// One logged API call (or n in a row); stream, gpu and sync may be nullptr.
inline void gpu_op(const char* api, long n, const char* stream, const char* gpu, const char* sync) {
  gpu_log() += gpu_str("PROF_OP rank=%d api=%s n=%ld", gpu_rank(), api, n);
  if (stream) gpu_log() += gpu_str(" stream=%s", stream);
  if (gpu) gpu_log() += gpu_str(" gpu=%s", gpu);
  if (sync) gpu_log() += gpu_str(" sync=%s", sync);
  gpu_log() += '\n';
}

inline void gpu_log_print() {
  std::fputs(gpu_log().c_str(), stdout);
  std::fflush(stdout);
}

// A failure of the program itself (not of prof): exit status 2, one line why.
#define GPU_CHECK(call)                                                                            \
  do {                                                                                             \
    cudaError_t gpu_check_err_ = (call);                                                           \
    if (gpu_check_err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(gpu_check_err_));                                            \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

// CU(fn, stream, gpu, sync, args...): calls the runtime function fn once, logs it, checks it.
#define CU(fn, stream, gpu, sync, ...)      \
  do {                                      \
    gpu_op(#fn, 1, stream, gpu, sync);      \
    GPU_CHECK(fn(__VA_ARGS__));             \
  } while (0)

// After a <<<>>> launch: logs it, checks the launch error.
#define LAUNCHED(stream, kernel_name)                                  \
  do {                                                                 \
    gpu_op("cudaLaunchKernel", 1, stream, "kernel:" kernel_name, nullptr); \
    GPU_CHECK(cudaPeekAtLastError());                                  \
  } while (0)

#define EXPECT_TRUE(cond)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "%s:%d: the GPU program's own check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                                         \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

// Exit status 77 with one line when there is no usable CUDA device.
inline bool gpu_have_device(std::string* why) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    *why = cudaGetErrorString(err);
    return false;
  }
  if (n == 0) {
    *why = "cudaGetDeviceCount returned 0";
    return false;
  }
  return true;
}

inline void gpu_require_device() {
  std::string why;
  if (!gpu_have_device(&why)) {
    std::printf("SKIP: no CUDA device (%s)\n", why.c_str());
    std::exit(77);
  }
}

#endif
