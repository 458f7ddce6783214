// SPDX-License-Identifier: BSD-3-Clause
// NVTX ranges (adapters/cuda/nvtx.cpp): libprof_cuda.so is the program's NVTX injection library.
#pragma once

namespace prof::cuda::nvtx {
/// Points NVTX_INJECTION64_PATH at libprof_cuda.so (unless another tool's library is named
/// there: then one warning, and no NVTX ranges). Before the program's first NVTX call.
void init();
}  // namespace prof::cuda::nvtx
