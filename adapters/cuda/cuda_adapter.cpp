// SPDX-License-Identifier: BSD-3-Clause
// The CUDA adapter (libprof_cuda.so): CUPTI callbacks for API calls, CUPTI activity records for
// the GPU timeline, NVTX ranges. Skeleton: the adapter entry point prof-wrap links.
#include "adapters/adapter.hpp"
#include "measurement/adapter_api.hpp"

namespace prof::cuda {
int adapter_init() { return 0; }
}  // namespace prof::cuda

extern "C" PROF_API const prof_adapter prof_adapter_cuda = {"cuda", &prof::cuda::adapter_init, nullptr, nullptr, nullptr};
