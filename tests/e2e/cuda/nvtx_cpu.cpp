// SPDX-License-Identifier: BSD-3-Clause
// NVTX without a GPU (NVTX needs neither CUPTI nor a device): built with prof-wrap --cuda g++,
// which links the CUDA adapter, the program's NVTX injection library. What it does, the checker
// (run_nvtx_test.py) expects:
//   push/pop on the main thread: outer > inner (twice) > innermost; a named domain's push/pop
//     "domain_push" (an ASCII message) and "registered_push" (a registered string) inside outer;
//   start/end ranges: range_A and range_B overlapping (A starts, B starts, A ends, B ends),
//     range_C started here and ended on a std::thread, domain_range in the named domain, and
//     range_open, never ended (prof ends it at exit, on its lane).
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <thread>

static void work() {
  volatile double x = 0;
  for (int i = 0; i < 20000; ++i) x = x + i * 0.5;
}

int main() {
  nvtxDomainHandle_t dom = nvtxDomainCreateA("prof-test");
  nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered_push");
  nvtxRangePushA("outer");
  for (int i = 0; i < 2; ++i) {
    nvtxRangePushA("inner");
    nvtxRangePushA("innermost");
    work();
    nvtxRangePop();
    nvtxRangePop();
  }
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "domain_push";
  nvtxDomainRangePushEx(dom, &a);
  work();
  nvtxDomainRangePop(dom);
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = reg;
  nvtxDomainRangePushEx(dom, &a);
  nvtxDomainRangePop(dom);

  nvtxRangeId_t ra = nvtxRangeStartA("range_A");
  work();
  nvtxRangeId_t rb = nvtxRangeStartA("range_B");
  work();
  nvtxRangeEnd(ra);
  work();
  nvtxRangeEnd(rb);
  nvtxRangeId_t rc = nvtxRangeStartA("range_C");
  std::thread t([rc] {
    work();
    nvtxRangeEnd(rc);
  });
  t.join();
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "domain_range";
  nvtxRangeId_t rd = nvtxDomainRangeStartEx(dom, &a);
  work();
  nvtxDomainRangeEnd(dom, rd);
  nvtxRangeStartA("range_open");
  nvtxRangePop();  // outer
  std::puts("nvtx_cpu: done");
  return 0;
}
