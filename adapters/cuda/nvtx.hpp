// SPDX-License-Identifier: BSD-3-Clause
// NVTX ranges (adapters/cuda/nvtx.cpp): libprof_cuda.so is the program's NVTX injection library.
#pragma once

namespace prof::cuda::nvtx {
/// Starts recording NVTX ranges. libprof_cuda.so named itself in NVTX_INJECTION64_PATH in its
/// constructor, before the program's first NVTX call (unless another tool's library was named
/// there: then one warning here, and no NVTX ranges).
void init();
/// Ends start/end ranges still open (their Leave now, on their lanes) and stops recording; before
/// the experiment is written.
void finalize();
}  // namespace prof::cuda::nvtx
