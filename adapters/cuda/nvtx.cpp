// SPDX-License-Identifier: BSD-3-Clause
// NVTX ranges through NVTX's own injection interface: libprof_cuda.so exports
// InitializeInjectionNvtx2 and points NVTX_INJECTION64_PATH at itself, so the NVTX calls of the
// program (header-only NVTX v3, in any library) land here at their first use. No CUPTI needed:
// NVTX works on machines without a GPU and when another tool holds CUPTI.
//  - push/pop ranges (also in named domains): Enter/Leave of a region named by the message on
//    the calling thread, so they nest with the instrumented functions and appear in the profile;
//  - start/end ranges may overlap and end on another thread: they go on locations of their own,
//    "NVTX <domain> lane <k>", a range on the first lane free at its start, so each lane nests;
//  - domains, registered strings, ASCII/Unicode/registered messages; marks are ignored.
#include "adapters/cuda/nvtx.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <nvtx3/nvToolsExt.h>

#include "measurement/adapter_api.hpp"

namespace prof::cuda::nvtx {

namespace {

struct Domain {
  std::string name;  // "default" for NVTX's default domain
  std::vector<Location*> lanes;
  std::vector<bool> lane_busy;
};

struct OpenRange {
  Domain* domain;
  std::size_t lane;
  RegionId region;
};

std::mutex g_mutex;  // domains, strings, regions, ranges, lanes
Domain* g_default;
std::deque<Domain>* g_domains;
std::deque<std::string>* g_strings;  // registered strings: their handles point here
std::unordered_map<std::string, RegionId>* g_regions;
std::unordered_map<nvtxRangeId_t, OpenRange>* g_open;
nvtxRangeId_t g_next_range = 1;
std::atomic<bool> g_on{false};  // recording NVTX ranges (after init, until finalize)
bool g_closed = false;          // finalize closed the open ranges (g_mutex)
const char* g_other_tool = nullptr;  // NVTX_INJECTION64_PATH named another tool at start

// The calling thread's push/pop stack: one entry per open range.
struct Pushed {
  const Domain* domain;
  RegionId region;
  bool entered;  // its Enter was written (not when the thread was inside prof)
};
thread_local std::vector<Pushed> t_stack;

std::string narrow(const wchar_t* w) {
  std::string out;
  for (; w && *w; ++w) out.push_back(*w < 128 ? static_cast<char>(*w) : '?');
  return out;
}

std::string message_of(const nvtxEventAttributes_t* a) {
  if (!a) return "(unnamed)";
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "(unnamed)";
    case NVTX_MESSAGE_TYPE_UNICODE: return a->message.unicode ? narrow(a->message.unicode) : "(unnamed)";
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return a->message.registered ? *reinterpret_cast<const std::string*>(a->message.registered) : "(unnamed)";
    default: return "(unnamed)";
  }
}

// g_mutex held.
RegionId region_locked(const std::string& name) {
  auto it = g_regions->find(name);
  if (it != g_regions->end()) return it->second;
  regions::RegionDef d;
  d.name = d.canonical = name;
  d.file = "NVTX";
  d.paradigm = regions::Paradigm::User;
  d.role = regions::Role::Code;
  const RegionId id = api::define_region(d);
  g_regions->emplace(name, id);
  return id;
}

Domain* domain_of(nvtxDomainHandle_t h) { return h ? reinterpret_cast<Domain*>(h) : g_default; }

int push(Domain* d, const std::string& message) {
  if (!g_on.load(std::memory_order_acquire)) return 0;
  RegionId region;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    region = region_locked(message);
  }
  bool entered = false;
  if (Location* loc = api::acquire()) {
    api::enter(loc, region);
    api::release(loc);
    entered = true;
  }
  t_stack.push_back({d, region, entered});
  return static_cast<int>(t_stack.size()) - 1;
}

int pop(const Domain* d) {
  if (!g_on.load(std::memory_order_acquire)) return 0;
  for (std::size_t i = t_stack.size(); i-- > 0;) {
    if (t_stack[i].domain != d) continue;
    const Pushed p = t_stack[i];
    t_stack.erase(t_stack.begin() + static_cast<std::ptrdiff_t>(i));
    if (!p.entered) return static_cast<int>(t_stack.size());
    if (Location* loc = api::acquire()) {
      api::leave(loc, p.region);
      api::release(loc);
    }
    return static_cast<int>(t_stack.size());
  }
  return -1;  // NVTX's answer for a pop without a push
}

nvtxRangeId_t start(Domain* d, const std::string& message) {
  if (!g_on.load(std::memory_order_acquire)) return 0;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_closed) return 0;
  const RegionId region = region_locked(message);
  std::size_t lane = 0;
  while (lane < d->lanes.size() && d->lane_busy[lane]) ++lane;
  if (lane == d->lanes.size()) {
    const std::string name = "NVTX " + d->name + " lane " + std::to_string(lane);
    Location* loc = api::create_location(name.c_str(), false, "");
    if (!loc) return 0;
    d->lanes.push_back(loc);
    d->lane_busy.push_back(false);
  }
  d->lane_busy[lane] = true;
  // The time is taken under the lock: a lane's events are in time order.
  api::event(d->lanes[lane], api::now(), RecordType::Enter, region, 0, nullptr, 0);
  const nvtxRangeId_t id = g_next_range++;
  g_open->emplace(id, OpenRange{d, lane, region});
  return id;
}

void end(nvtxRangeId_t id) {
  if (!g_on.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_closed) return;
  auto it = g_open->find(id);
  if (it == g_open->end()) return;
  const OpenRange r = it->second;
  g_open->erase(it);
  api::event(r.domain->lanes[r.lane], api::now(), RecordType::Leave, r.region, 0, nullptr, 0);
  r.domain->lane_busy[r.lane] = false;
}

// ---- The NVTX entry points (NVTX_API is the default calling convention on Linux) ----
int push_a(const char* m) { return push(g_default, m ? m : "(unnamed)"); }
int push_w(const wchar_t* m) { return push(g_default, narrow(m)); }
int push_ex(const nvtxEventAttributes_t* a) { return push(g_default, message_of(a)); }
int pop_default() { return pop(g_default); }
nvtxRangeId_t start_a(const char* m) { return start(g_default, m ? m : "(unnamed)"); }
nvtxRangeId_t start_w(const wchar_t* m) { return start(g_default, narrow(m)); }
nvtxRangeId_t start_ex(const nvtxEventAttributes_t* a) { return start(g_default, message_of(a)); }
void end_default(nvtxRangeId_t id) { end(id); }
int domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { return push(domain_of(d), message_of(a)); }
int domain_pop(nvtxDomainHandle_t d) { return pop(domain_of(d)); }
nvtxRangeId_t domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { return start(domain_of(d), message_of(a)); }
void domain_end(nvtxDomainHandle_t, nvtxRangeId_t id) { end(id); }
nvtxDomainHandle_t domain_create_a(const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_domains->push_back(Domain{name ? name : "(unnamed)", {}, {}});
  return reinterpret_cast<nvtxDomainHandle_t>(&g_domains->back());
}
nvtxDomainHandle_t domain_create_w(const wchar_t* name) {
  const std::string n = narrow(name);
  return domain_create_a(n.c_str());
}
void domain_destroy(nvtxDomainHandle_t) {}  // kept: its lanes and open ranges stay valid
nvtxStringHandle_t register_a(nvtxDomainHandle_t, const char* s) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_strings->emplace_back(s ? s : "(unnamed)");
  return reinterpret_cast<nvtxStringHandle_t>(&g_strings->back());
}
nvtxStringHandle_t register_w(nvtxDomainHandle_t d, const wchar_t* s) {
  const std::string n = narrow(s);
  return register_a(d, n.c_str());
}

template <class F>
void set(NvtxFunctionTable table, unsigned size, unsigned id, F f) {
  if (id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(f);
}

int initialize(NvtxGetExportTableFunc_t get) {
  if (!get || !g_domains) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
  if (!callbacks || !callbacks->GetModuleFunctionTable) return 0;
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned core_size = 0, core2_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) || !core) return 0;
  set(core, core_size, NVTX_CBID_CORE_RangePushA, &push_a);
  set(core, core_size, NVTX_CBID_CORE_RangePushW, &push_w);
  set(core, core_size, NVTX_CBID_CORE_RangePushEx, &push_ex);
  set(core, core_size, NVTX_CBID_CORE_RangePop, &pop_default);
  set(core, core_size, NVTX_CBID_CORE_RangeStartA, &start_a);
  set(core, core_size, NVTX_CBID_CORE_RangeStartW, &start_w);
  set(core, core_size, NVTX_CBID_CORE_RangeStartEx, &start_ex);
  set(core, core_size, NVTX_CBID_CORE_RangeEnd, &end_default);
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) && core2) {
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_push_ex);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domain_pop);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_start_ex);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &domain_end);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &domain_create_w);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &domain_destroy);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_a);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &register_w);
  }
  // NVTX read the variable once, at its first call: child processes need not inherit it.
  ::unsetenv("NVTX_INJECTION64_PATH");
  return 1;
}

// Before anything of the program runs (shared libraries' constructors come before the
// executable's static initialisers, which may already call NVTX): libprof_cuda.so names itself
// as NVTX's injection library, unless another tool is named there. The entry points do nothing
// until init() (the configuration decides whether NVTX is recorded).
__attribute__((constructor)) void preset() {
  g_default = new Domain{"default", {}, {}};
  g_domains = new std::deque<Domain>;
  g_strings = new std::deque<std::string>;
  g_regions = new std::unordered_map<std::string, RegionId>;
  g_open = new std::unordered_map<nvtxRangeId_t, OpenRange>;
  const char* other = std::getenv("NVTX_INJECTION64_PATH");
  Dl_info self;
  if (!::dladdr(reinterpret_cast<void*>(&preset), &self) || !self.dli_fname) return;
  if (other && *other && std::strcmp(other, self.dli_fname) != 0) {
    g_other_tool = other;
    return;
  }
  ::setenv("NVTX_INJECTION64_PATH", self.dli_fname, 1);
}

}  // namespace

void init() {
  if (g_other_tool) {
    const std::string text = std::string("NVTX: NVTX_INJECTION64_PATH names another tool (") + g_other_tool +
                             "); prof records no NVTX ranges (unset it, or PROF_CUDA_ENABLE without nvtx to silence this)";
    api::warning(text.c_str());
    return;
  }
  g_on.store(true, std::memory_order_release);
}

void finalize() {
  if (!g_on.exchange(false)) return;
  // Start/end ranges still open end now, on their lanes; nothing is written to the lanes after.
  std::lock_guard<std::mutex> lock(g_mutex);
  const Timestamp t = api::now();
  for (const auto& [id, r] : *g_open) {
    api::event(r.domain->lanes[r.lane], t, RecordType::Leave, r.region, 0, nullptr, 0);
    r.domain->lane_busy[r.lane] = false;
  }
  g_open->clear();
  g_closed = true;
}

}  // namespace prof::cuda::nvtx

namespace prof::cuda {
bool start_by_injection(const char* variable);
}

// NVTX's loader looks this up in the library NVTX_INJECTION64_PATH names. Under prof-run the
// first NVTX call may come before CUDA's (and so before the adapter started): it starts it.
extern "C" PROF_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  if (!prof::cuda::start_by_injection("NVTX_INJECTION64_PATH")) return 0;  // a child of a measured process
  return prof::cuda::nvtx::initialize(get);
}
