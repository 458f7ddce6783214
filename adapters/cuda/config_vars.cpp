// SPDX-License-Identifier: BSD-3-Clause
// The CUDA adapter's configuration variables (namespace "CUDA", so PROF_CUDA_<NAME>). Part of
// prof_config, so prof-info lists them whether or not a program links the CUDA adapter.
#include "measurement/config/config.hpp"

namespace prof::config {

namespace {

const Member kCudaFeatures[] = {
    {"runtime", kCudaRuntime, "CUDA runtime API calls (cudaMalloc, cudaLaunchKernel...) as regions on the calling thread"},
    {"driver", kCudaDriver, "CUDA driver API calls (cuMemAlloc, cuLaunchKernel...) as regions on the calling thread"},
    {"kernel", kCudaKernel, "kernels on their GPU stream, with GPU start and end times"},
    {"memcpy", kCudaMemcpy, "memory copies on their GPU stream (a region and an RMA transfer with the host)"},
    {"memset", kCudaMemset, "memsets on their GPU stream"},
    {"sync", kCudaSync, "synchronisation calls (cudaDeviceSynchronize, cudaStreamSynchronize...) as regions, also when runtime is off"},
    {"nvtx", kCudaNvtx, "NVTX ranges: push/pop as regions of the calling thread, start/end on NVTX lanes"},
    {"query", kCudaQuery,
     "with runtime: also the calls that only ask (cudaGetDevice, cudaGetLastError, cudaStreamIsCapturing, "
     "cudaDeviceGetAttribute, cudaEventQuery...), which frameworks make around every kernel"},
    {nullptr, 0, nullptr},
};

}  // namespace

const Var kCudaVars[] = {
    {"ENABLE", Type::Set, "runtime,kernel,memcpy,memset,sync,nvtx", &g_values.cuda_enable,
     "What the CUDA adapter records.",
     "For programs linked with the CUDA adapter (prof-wrap nvcc, or --cuda). The API calls "
     "come from CUPTI's callback API on the calling thread; kernels, copies and memsets from "
     "its activity API, on one location per GPU stream with GPU timestamps on prof's clock. "
     "`default` is the runtime API without the driver API (a runtime call makes driver calls "
     "of its own, which would double the events) and without its query calls (`query`: "
     "PyTorch makes several per kernel, each a CUPTI callback at its entry and exit). `none` records nothing of CUDA and leaves "
     "CUPTI alone (another tool may then use it). Example: `PROF_CUDA_ENABLE=kernel,memcpy` "
     "for the GPU timeline only.",
     kCudaFeatures},
    {"BUFFER", Type::Size, "8M", &g_values.cuda_buffer,
     "Memory for CUPTI's activity records, in all.",
     "CUPTI writes kernel, copy and memset records into buffers that prof hands it (1 MiB "
     "each) and returns when they are full or flushed (every 100 ms, at context destruction "
     "and at the end). This bounds the buffers given out at once; when CUPTI needs more, it "
     "drops records, and prof reports how many at the end. Raise it for programs with very "
     "many short kernels.",
     nullptr, 2u << 20},
    {},
};

}  // namespace prof::config
