// SPDX-License-Identifier: BSD-3-Clause
// Another CUPTI tool, as Nsight Systems or PyTorch's profiler would be: a library whose
// constructor takes CUPTI's one subscriber before prof starts (run.sh preloads it for the
// program "conflict", which is streams.cu). prof must say so in one line and go on CPU-only.
#include <cupti.h>

#include <cstdio>

namespace {
void CUPTIAPI ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

__attribute__((constructor)) void take_cupti() {
  CUpti_SubscriberHandle h;
  const CUptiResult r = cuptiSubscribe(&h, &ignore, nullptr);
  std::printf("PROF_HOLDER cuptiSubscribe=%d\n", static_cast<int>(r));
}
}  // namespace
