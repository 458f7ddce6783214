// SPDX-License-Identifier: BSD-3-Clause
// The CUDA adapter (libprof_cuda.so), linked by prof-wrap into CUDA programs.
//  - CUPTI's callback API: runtime (and driver) API calls as regions on the calling thread.
//    Callbacks, not symbol interposition: the CUDA runtime is usually linked statically.
//  - CUPTI's activity API: kernels, memory copies and memsets on one location per GPU stream
//    ("CUDA[<device>:<stream>]" in the accelerator group "CUDA Context <id>"), with GPU
//    timestamps on prof's own clock (CUPTI's timestamp callback returns prof's timer). Copies
//    are RMA transfers on the process's "CUDA window" between the stream and the host thread
//    that issued them (found by correlation id), inside a region on the stream.
//    Records arrive in buffers on CUPTI's own thread (periodic flush) or on the thread that
//    flushes; one consumer converts them under a lock and writes them to the stream locations,
//    sorted per stream. CUPTI's thread and the driver's get no location (api::ignore_threads_of).
//  - NVTX: adapters/cuda/nvtx.cpp.
// If CUPTI cannot start (no driver, another tool holds its subscriber), one line says why and the
// program runs on with its CPU measurement.
#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "adapters/adapter.hpp"
#include "adapters/cuda/nvtx.hpp"
#include "measurement/adapter_api.hpp"

namespace prof::cuda {

namespace {

constexpr std::size_t kBufferBytes = 1u << 20;  // one CUPTI activity buffer
constexpr std::size_t kAlign = 8;

std::uint64_t g_enable = 0;
bool g_subscribed = false;
std::atomic<bool> g_activity{false};  // activity records are on; read by every callback
CUpti_SubscriberHandle g_subscriber;

// ---- API regions, one per (domain, callback id), defined at first use ----
constexpr int kRuntimeIds = CUPTI_RUNTIME_TRACE_CBID_SIZE;
constexpr int kDriverIds = CUPTI_DRIVER_TRACE_CBID_SIZE;
std::atomic<RegionId> g_runtime_regions[kRuntimeIds];
std::atomic<RegionId> g_driver_regions[kDriverIds];
constexpr RegionId kNoRegion = 0xffffffffu;  // not recorded (location.hpp's value)
constexpr RegionId kUnset = 0xfffffffeu;     // not asked yet

// CUPTI's names carry a version suffix ("cudaLaunchKernel_v7000", "cudaMemcpy_ptds_v7000"):
// the region is named by the API function. A <<<>>> launch calls the runtime's internal
// __cudaLaunchKernel: named cudaLaunchKernel, as the user wrote it.
std::string api_name(const char* raw) {
  std::string n = raw ? raw : "(unknown)";
  if (n.rfind("__cudaLaunchKernel", 0) == 0) n.erase(0, 2);
  for (const char* suffix : {"_ptds", "_ptsz", "_v"}) {
    const auto at = n.find(suffix);
    if (at != std::string::npos && at > 0) {
      if (std::strcmp(suffix, "_v") == 0 && (at + 2 >= n.size() || n[at + 2] < '0' || n[at + 2] > '9')) continue;
      n.erase(at);
    }
  }
  return n;
}

bool is_sync(const std::string& name) { return name.find("Synchronize") != std::string::npos; }
// Calls that only ask (feature query): they neither wait nor make GPU work, and frameworks call
// them around every kernel (PyTorch: cudaGetDevice, cudaGetLastError, cudaStreamIsCapturing).
bool is_query(const char* raw) {
  if (!raw) return false;
  for (const char* part : {"Get", "Query", "IsCapturing", "PeekAtLastError", "Occupancy", "CanAccessPeer", "ExchangeStreamCaptureMode"})
    if (std::strstr(raw, part)) return true;
  return false;
}
// The runtime's internals around a <<<>>> launch (__cudaPushCallConfiguration,
// __cudaPopCallConfiguration, __cudaGetKernel): three more regions per launch that the user
// never called.
bool internal(const char* raw) { return raw && std::strncmp(raw, "__cuda", 6) == 0 && std::strncmp(raw, "__cudaLaunchKernel", 18) != 0; }
// Calls that make GPU activities (kernels, copies, memsets): their records need the issuing
// thread (a copy's RMA peer) and its call path (the profile's).
bool makes_activity(const char* name) {
  return name && (std::strstr(name, "Launch") || std::strstr(name, "Memcpy") || std::strstr(name, "Memset") ||
                  std::strstr(name, "memcpy") || std::strstr(name, "memset"));
}

/// Whether a runtime call (CUPTI's name `raw`, the region's `name`) is a region.
bool runtime_wanted(const char* raw, const std::string& name) {
  if ((g_enable & config::kCudaSync) && is_sync(name)) return true;
  return (g_enable & config::kCudaRuntime) && ((g_enable & config::kCudaQuery) || !is_query(raw));
}

RegionId api_region(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* raw) {
  std::atomic<RegionId>* slot = nullptr;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < static_cast<CUpti_CallbackId>(kRuntimeIds)) slot = &g_runtime_regions[cbid];
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < static_cast<CUpti_CallbackId>(kDriverIds)) slot = &g_driver_regions[cbid];
  if (!slot) return kNoRegion;
  RegionId r = slot->load(std::memory_order_acquire);
  if (r != kUnset) return r;
  const std::string name = api_name(raw);
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  const bool wanted = internal(raw) ? false
                      : runtime    ? runtime_wanted(raw, name)
                                   : (g_enable & config::kCudaDriver) != 0;
  if (!wanted) {
    r = kNoRegion;
  } else {
    regions::RegionDef d;
    d.name = d.canonical = name;
    d.file = runtime ? "CUDA runtime API" : "CUDA driver API";
    d.paradigm = regions::Paradigm::Cuda;
    d.role = regions::Role::Wrapper;
    r = api::define_region(d);
  }
  slot->store(r, std::memory_order_release);
  return r;
}

// correlation id → the host call that launched GPU work: its thread (the index of its location,
// the RMA peer of a copy) and its call path (where the profile puts the GPU time). A ring of
// slots indexed by the id's low bits, so a launch costs no allocation and no lock: a graph
// launch's kernels share its id, so a slot is not emptied when used but overwritten by the id
// 2^18 later (ids grow; a launch's records arrive within a flush period or two). The launching
// thread writes a slot as a sequence lock (id 0, the fields, then the id); the consumer copies
// the fields and takes them only where the id is the one it looks for before and after.
// calloc'd: only the slots used are ever touched.
struct Issuer {
  std::uint32_t thread = 0;
  const void* path = nullptr;
  std::uint32_t host_id = 0;  // the outermost launching call's correlation id (0: it is no region)
};
// The correlation id of the outermost launching call in progress on this thread that is a region
// (a runtime launch and the driver launch inside it share the runtime call's id), 0: none.
thread_local std::uint32_t tls_launch_id = 0;
// The outermost launching call in progress on this thread, region or not (0: none), and its
// issuer: the driver calls inside it that are no regions (the runtime's launch calls
// cuLaunchKernel) take it without asking the measurement again.
thread_local std::uint32_t tls_outer_launch = 0;
thread_local Issuer tls_outer_issuer;
// What a call's exit has to do (CUPTI's correlationData, set at its entry).
constexpr std::uint64_t kLeaveDue = 1, kEndsLaunchRegion = 2, kEndsOuterLaunch = 4;
struct CorrelationSlot {
  std::atomic<std::uint32_t> id;  // 0: empty or being written (CUPTI's ids start at 1)
  std::atomic<std::uint32_t> thread, host_id;
  std::atomic<const void*> path;
};
constexpr std::uint32_t kCorrelationWindow = 1u << 18;
CorrelationSlot* g_corr;

void remember_issuer(std::uint32_t correlation, const Issuer& who) {
  CorrelationSlot& slot = g_corr[correlation & (kCorrelationWindow - 1)];
  slot.id.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  slot.thread.store(who.thread, std::memory_order_relaxed);
  slot.host_id.store(who.host_id, std::memory_order_relaxed);
  slot.path.store(who.path, std::memory_order_relaxed);
  slot.id.store(correlation, std::memory_order_release);
}

bool recall_issuer(std::uint32_t correlation, Issuer* who) {
  const CorrelationSlot& slot = g_corr[correlation & (kCorrelationWindow - 1)];
  if (slot.id.load(std::memory_order_acquire) != correlation) return false;
  who->thread = slot.thread.load(std::memory_order_relaxed);
  who->host_id = slot.host_id.load(std::memory_order_relaxed);
  who->path = slot.path.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return slot.id.load(std::memory_order_relaxed) == correlation;
}

// Per runtime/driver callback id: whether the call makes GPU work (0 not known yet, 1 no, 2 yes).
std::atomic<std::uint8_t> g_runtime_activity[kRuntimeIds], g_driver_activity[kDriverIds];

/// makes_activity for a call, by its callback id, the name looked at once.
bool call_makes_activity(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name) {
  std::atomic<std::uint8_t>* slot = nullptr;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < static_cast<CUpti_CallbackId>(kRuntimeIds)) slot = &g_runtime_activity[cbid];
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < static_cast<CUpti_CallbackId>(kDriverIds)) slot = &g_driver_activity[cbid];
  if (!slot) return makes_activity(name);
  std::uint8_t v = slot->load(std::memory_order_relaxed);
  if (!v) slot->store(v = makes_activity(name) ? 2 : 1, std::memory_order_relaxed);
  return v == 2;
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);

// ---- Activity records → stream locations ----
enum class ItemKind : std::uint8_t { Kernel, Memcpy, Memset };
struct Item {
  ItemKind kind = ItemKind::Kernel;
  std::uint32_t device = 0, context = 0, stream = 0;
  std::uint64_t start = 0, end = 0;
  std::uint64_t bytes = 0;
  std::uint8_t copy_kind = 0;
  std::uint32_t correlation = 0, runtime_correlation = 0;
  std::string name;  // kernels: the mangled name
};

struct Stream {
  Location* loc = nullptr;
  std::uint64_t last = 0;     // the end of the last item written
  std::vector<Item> pending;  // held back until no earlier record of the stream can still come
};
// CUPTI fills one buffer per host thread and hands each over when it is full or at the flush
// period (100 ms): a stream fed by several threads (PyTorch's autograd thread and the main
// thread) gets its records out of time order across buffers. Each stream's records wait here
// for this long (prof's clock: completed GPU work older than this has been handed over), then go
// out in time order; finalize flushes CUPTI and writes the rest.
constexpr double kHoldSeconds = 1.0;

std::mutex g_consumer;  // the consumer: everything below
std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, Stream>* g_streams;
std::unordered_map<std::string, RegionId>* g_kernel_regions;
RegionId g_copy_regions[16];
RegionId g_memset_region = kNoRegion;
comms::CommId g_window = comms::kNoComm;  // the process's CUDA communicator = its RMA window
std::uint64_t g_matching = 0;
std::uint64_t g_items = 0, g_reordered = 0, g_dropped = 0, g_bad_times = 0, g_unknown_issuer = 0, g_late = 0;
std::string g_unknown_names;  // of the first activities of unknown host call, for PROF_VERBOSE
// Calls that make GPU work on a thread that could not record (measurement off, inside prof).
std::atomic<std::uint64_t> g_launch_unrecorded{0};
bool g_closed = false;  // finalize is over: buffers that still come back are only freed
bool g_flushing = false;  // finalize's flush: every buffer comes in before anything is written
std::atomic<std::uint64_t> g_buffers_refused{0};  // CUPTI's requests beyond the limit (it asks again per record)
std::atomic<std::uint64_t> g_outstanding{0};  // bytes of buffers CUPTI holds

RegionId define_gpu_region(const std::string& name, const std::string& canonical, regions::Role role) {
  regions::RegionDef d;
  d.name = name;
  d.canonical = canonical;
  d.file = role == regions::Role::Function ? "CUDA_KERNEL" : "";
  d.paradigm = regions::Paradigm::Cuda;
  d.role = role;
  return api::define_region(d);
}

RegionId kernel_region(const std::string& mangled) {
  auto it = g_kernel_regions->find(mangled);
  if (it != g_kernel_regions->end()) return it->second;
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  const std::string name = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  const RegionId r = define_gpu_region(name, mangled, regions::Role::Function);
  g_kernel_regions->emplace(mangled, r);
  return r;
}

const char* copy_name(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "cudaMemcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "cudaMemcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "cudaMemcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "cudaMemcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "cudaMemcpy PtoP";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "cudaMemcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "cudaMemcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "cudaMemcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "cudaMemcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "cudaMemcpy DtoA";
    default: return "cudaMemcpy";
  }
}

Stream& stream_of(const Item& it) {
  Stream& s = (*g_streams)[{it.device, it.context, it.stream}];
  if (!s.loc) {
    const std::string name = "CUDA[" + std::to_string(it.device) + ":" + std::to_string(it.stream) + "]";
    const std::string group = "CUDA Context " + std::to_string(it.context);
    s.loc = api::create_location(name.c_str(), true, group.c_str());
  }
  return s;
}

// The host call behind correlation `c` (or the runtime's `runtime_c`); thread 0 (the master
// thread) and no path when unknown.
Issuer issuer(std::uint32_t c, std::uint32_t runtime_c) {
  Issuer who;
  for (std::uint32_t key : {runtime_c, c})
    if (key && recall_issuer(key, &who)) return who;
  ++g_unknown_issuer;  // consumer lock held: counted, reported with PROF_VERBOSE
  return Issuer{};
}

// A held record (buffer_completed left out those without GPU times) onto its stream.
void write_item(const Item& it) {
  Stream& s = stream_of(it);
  if (!s.loc) return;
  if (it.start < s.last) {  // came after later records of its stream were written: no invented time
    ++g_late;
    return;
  }
  s.last = std::max(s.last, it.end);
  ++g_items;
  Location* loc = s.loc;
  const std::uint64_t unknown_before = g_unknown_issuer;
  const Issuer from = issuer(it.correlation, it.runtime_correlation);
  if (g_unknown_issuer != unknown_before && g_unknown_names.size() < 3 && g_unknown_names.find(it.name) == std::string::npos)
    g_unknown_names += (g_unknown_names.empty() ? "" : ", ") + it.name.substr(0, 60);
  switch (it.kind) {
    case ItemKind::Kernel: {
      const RegionId r = kernel_region(it.name);
      // A Leave only with its Enter (a record can be lost for lack of memory).
      if (from.host_id) api::event(loc, it.start, RecordType::CorrelationId, from.host_id, 0, nullptr, 0);
      if (api::event(loc, it.start, RecordType::Enter, r, 0, nullptr, 0)) api::event(loc, it.end, RecordType::Leave, r, 0, nullptr, 0);
      api::gpu_activity(loc, from.path, r, it.start, it.end, 0);
      break;
    }
    case ItemKind::Memset: {
      if (g_memset_region == kNoRegion) g_memset_region = define_gpu_region("cudaMemset", "cudaMemset", regions::Role::DataTransfer);
      if (from.host_id) api::event(loc, it.start, RecordType::CorrelationId, from.host_id, 0, nullptr, 0);
      if (api::event(loc, it.start, RecordType::Enter, g_memset_region, 0, nullptr, 0))
        api::event(loc, it.end, RecordType::Leave, g_memset_region, 0, nullptr, 0);
      api::gpu_activity(loc, from.path, g_memset_region, it.start, it.end, it.bytes);
      break;
    }
    case ItemKind::Memcpy: {
      RegionId& r = g_copy_regions[it.copy_kind & 15];
      if (r == kNoRegion) r = define_gpu_region(copy_name(it.copy_kind), copy_name(it.copy_kind), regions::Role::DataTransfer);
      // Host to device and device to device: the stream gets data (RmaGet); device to host: it
      // puts data (RmaPut). Copies within the host have no GPU side.
      const bool get = it.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD || it.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD ||
                       it.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP || it.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOA ||
                       it.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_ATOD || it.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_ATOA ||
                       it.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOA;
      const bool put = it.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH || it.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_ATOH;
      if (from.host_id) api::event(loc, it.start, RecordType::CorrelationId, from.host_id, 0, nullptr, 0);
      const bool entered = api::event(loc, it.start, RecordType::Enter, r, 0, nullptr, 0);
      if ((get || put) && g_window == comms::kNoComm) {
        comms::CommDef d;
        d.kind = comms::Kind::Cuda;
        d.name = "CUDA window";
        g_window = api::define_comm(d);
      }
      const std::uint64_t id = ++g_matching;
      if (entered && (get || put)) {
        const Payload p[2] = {{from.thread, it.bytes}, {id, 0}};
        api::event(loc, it.start, get ? RecordType::RmaGet : RecordType::RmaPut, g_window, 0, p, 2);
        const Payload done{id, 0};
        api::event(loc, it.end, RecordType::RmaOpCompleteBlocking, g_window, 0, &done, 1);
      }
      if (entered) api::event(loc, it.end, RecordType::Leave, r, 0, nullptr, 0);
      api::gpu_activity(loc, from.path, r, it.start, it.end, it.bytes);
      break;
    }
  }
}

void convert(const CUpti_Activity* rec, std::vector<Item>* out) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      Item it;
      it.kind = ItemKind::Kernel;
      it.device = k->deviceId;
      it.context = k->contextId;
      it.stream = k->streamId;
      it.start = k->start;
      it.end = k->end;
      it.correlation = k->correlationId;
      it.name = k->name ? k->name : "(unnamed kernel)";
      out->push_back(std::move(it));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      Item it;
      it.kind = ItemKind::Memcpy;
      it.device = m->deviceId;
      it.context = m->contextId;
      it.stream = m->streamId;
      it.start = m->start;
      it.end = m->end;
      it.bytes = m->bytes;
      it.copy_kind = m->copyKind;
      it.correlation = m->correlationId;
      it.runtime_correlation = m->runtimeCorrelationId;
      out->push_back(std::move(it));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      Item it;
      it.kind = ItemKind::Memset;
      it.device = m->deviceId;
      it.context = m->contextId;
      it.stream = m->streamId;
      it.start = m->start;
      it.end = m->end;
      it.bytes = m->bytes;
      it.correlation = m->correlationId;
      out->push_back(std::move(it));
      break;
    }
    default: break;
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  *buffer = nullptr;
  *size = 0;
  // Bounded: beyond PROF_CUDA_BUFFER CUPTI gets no buffer and drops records (counted).
  if (g_outstanding.fetch_add(kBufferBytes) + kBufferBytes > api::values().cuda_buffer) {
    g_outstanding.fetch_sub(kBufferBytes);
    g_buffers_refused.fetch_add(1, std::memory_order_relaxed);  // no lock: CUPTI asks on the launching thread
    return;
  }
  void* p = std::aligned_alloc(kAlign, kBufferBytes);
  if (!p) {
    g_outstanding.fetch_sub(kBufferBytes);
    return;
  }
  *buffer = static_cast<uint8_t*>(p);
  *size = kBufferBytes;
}

// Writes each stream's held records that started before `limit`, in time order (consumer lock).
void release_pending(std::uint64_t limit) {
  for (auto& [key, s] : *g_streams) {
    if (s.pending.empty()) continue;
    std::stable_sort(s.pending.begin(), s.pending.end(), [](const Item& a, const Item& b) { return a.start < b.start; });
    std::size_t n = 0;
    while (n < s.pending.size() && s.pending[n].start < limit) write_item(s.pending[n++]);
    s.pending.erase(s.pending.begin(), s.pending.begin() + static_cast<std::ptrdiff_t>(n));
  }
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  std::vector<Item> batch;
  CUpti_Activity* rec = nullptr;
  while (buffer && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) convert(rec, &batch);
  std::size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped);
  if (buffer) {
    std::free(buffer);
    g_outstanding.fetch_sub(kBufferBytes);
  }
  std::lock_guard<std::mutex> lock(g_consumer);
  g_dropped += dropped;
  if (g_closed) return;  // after finalize: the experiment is being written
  for (Item& it : batch) {
    // CUPTI leaves a record's times 0 when it had no memory for the GPU's timestamps: such a
    // record cannot be placed (and an Enter at 0 would lie before the trace's start).
    if (it.start == 0 || it.end < it.start) {
      ++g_bad_times;
      continue;
    }
    Stream& s = stream_of(it);
    if (!s.pending.empty() && it.start < s.pending.back().start) ++g_reordered;
    s.pending.push_back(std::move(it));
  }
  const std::uint64_t now = api::now(), hold = static_cast<std::uint64_t>(kHoldSeconds * api::ticks_per_second());
  if (!g_flushing) release_pending(now > hold ? now - hold : 0);
}

void disable_activity() {
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
}

const char* result_string(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "unknown CUPTI error";
}

// A runtime or driver API call's entry or exit.
void api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  const RegionId region = api_region(domain, cbid, cb->functionName);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    *cb->correlationData = 0;
    const bool launches = g_activity.load(std::memory_order_relaxed) && call_makes_activity(domain, cbid, cb->functionName);
    if (launches && region == kNoRegion && tls_outer_launch) {
      remember_issuer(cb->correlationId, tls_outer_issuer);
      return;
    }
    Location* loc = api::acquire();
    if (!loc) {
      if (launches) g_launch_unrecorded.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    std::uint64_t due = 0;
    if (region != kNoRegion) {
      due = kLeaveDue;
      if (launches && !tls_launch_id) {
        // The outermost launching call: its Enter carries the id that its GPU work's Enter carries too.
        tls_launch_id = cb->correlationId;
        api::enter_correlated(loc, region, cb->correlationId);
        due |= kEndsLaunchRegion;
      } else {
        api::enter(loc, region);
      }
    }
    if (launches) {
      const Issuer who{api::location_index(loc), api::call_path(loc), tls_launch_id};  // inside the call's own region
      if (!tls_outer_launch) {
        tls_outer_launch = cb->correlationId;
        tls_outer_issuer = who;
        due |= kEndsOuterLaunch;
      }
      remember_issuer(cb->correlationId, who);
    }
    *cb->correlationData = due;
    api::release(loc);
  } else if (const std::uint64_t due = *cb->correlationData) {
    if (due & kEndsLaunchRegion) tls_launch_id = 0;
    if (due & kEndsOuterLaunch) tls_outer_launch = 0;
    if (due & kLeaveDue) api::leave_now(region);
  }
}

// With PROF_VERBOSE=2: prof's own time in CUPTI's API callbacks (from its entry into prof's
// callback to its return; CUPTI's own work around it is not in it), and the timestamp callback's calls.
bool g_self_timing = false;
std::atomic<std::uint64_t> g_self_ticks{0}, g_self_calls{0}, g_timestamp_calls{0};

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    // The context's records must be out before it goes.
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && g_activity) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  if (!g_self_timing) return api_callback(domain, cbid, data);
  const Timestamp t0 = api::now();
  api_callback(domain, cbid, data);
  g_self_ticks.fetch_add(api::now() - t0, std::memory_order_relaxed);
  g_self_calls.fetch_add(1, std::memory_order_relaxed);
}

uint64_t CUPTIAPI timestamp() {
  if (g_self_timing) g_timestamp_calls.fetch_add(1, std::memory_order_relaxed);
  return api::now();
}

bool check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  std::string text;
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    text = std::string("CUDA: another tool already holds CUPTI's subscriber (Nsight Systems, PyTorch's profiler, ...); "
                       "prof records no CUDA calls and no GPU activity, only the CPU side");
  else
    text = std::string("CUDA: ") + what + " failed (" + result_string(r) +
           "; no GPU or no CUDA driver here?); prof records no CUDA calls and no GPU activity, only the CPU side";
  api::warning(text.c_str());
  return false;
}

}  // namespace

std::atomic<bool> g_adapter_started{false};

int adapter_init() {
  if (g_adapter_started.exchange(true)) return 0;  // from the adapter list and from an injection
  const config::Values& v = api::values();
  g_enable = v.cuda_enable;
  if (!g_enable) return 0;
  g_self_timing = v.verbose >= 2;
  for (auto& r : g_runtime_regions) r.store(kUnset, std::memory_order_relaxed);
  for (auto& r : g_driver_regions) r.store(kUnset, std::memory_order_relaxed);
  for (auto& r : g_copy_regions) r = kNoRegion;
  g_corr = static_cast<CorrelationSlot*>(std::calloc(kCorrelationWindow, sizeof(CorrelationSlot)));
  if (!g_corr) {
    api::warning("CUDA: no memory for the correlation table; prof records no CUDA calls and no GPU activity");
    return 0;
  }
  g_streams = new std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, Stream>;
  g_kernel_regions = new std::unordered_map<std::string, RegionId>;
  // The driver's and CUPTI's own threads are not the program's.
  api::ignore_threads_of("libcuda.so");
  api::ignore_threads_of("libcupti.so");
  if (g_enable & config::kCudaNvtx) nvtx::init();
  const std::uint64_t api_bits = config::kCudaRuntime | config::kCudaDriver | config::kCudaSync;
  const std::uint64_t gpu_bits = config::kCudaKernel | config::kCudaMemcpy | config::kCudaMemset;
  if (!(g_enable & (api_bits | gpu_bits))) return 0;
  if (!check(cuptiSubscribe(&g_subscriber, &on_callback, nullptr), "cuptiSubscribe")) return 0;
  g_subscribed = true;
  if (g_enable & config::kCudaDriver) cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  // The runtime's callbacks, one by one: a callback costs on every call of its function, so
  // only the calls that are regions (runtime, without the queries unless asked; sync) and the
  // ones that make GPU work, whose host side (the launching thread, the RMA peer of a copy, the
  // call path the profile puts GPU time under) the GPU timeline needs, and none when nothing
  // needs them (kernels in a trace only): a loop of small kernels is made of launches.
  const bool timeline = (g_enable & gpu_bits) && (v.enable_tracing || v.enable_profiling);
  const bool need_host = timeline && (v.enable_profiling || (g_enable & config::kCudaMemcpy));
  // Switches on the callbacks of `domain`'s ids whose name `wanted` accepts.
  auto enable_by_name = [](CUpti_CallbackDomain domain, int ids, auto wanted) {
    for (CUpti_CallbackId id = 0; id < static_cast<CUpti_CallbackId>(ids); ++id) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name && wanted(name))
        cuptiEnableCallback(1, g_subscriber, domain, id);
    }
  };
  if ((g_enable & (config::kCudaRuntime | config::kCudaSync)) || need_host)
    enable_by_name(CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeIds, [need_host](const char* name) {
      return (need_host && makes_activity(name)) || (!internal(name) && runtime_wanted(name, api_name(name)));
    });
  // Libraries launch some of their kernels through the driver API (cuBLAS its CUTLASS GEMMs,
  // cuLaunchKernel): those calls too, for their host side only (no regions without `driver`).
  if (need_host && !(g_enable & config::kCudaDriver)) enable_by_name(CUPTI_CB_DOMAIN_DRIVER_API, kDriverIds, makes_activity);
  // The GPU timeline: the trace's stream locations and the profile's stream columns.
  if (!timeline) return 0;
  cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  // GPU times on prof's clock.
  if (cuptiActivityRegisterTimestampCallback(&timestamp) != CUPTI_SUCCESS)
    api::warning("CUDA: CUPTI cannot take prof's clock (cuptiActivityRegisterTimestampCallback); GPU times are CUPTI's own");
  if (!check(cuptiActivityRegisterCallbacks(&buffer_requested, &buffer_completed), "cuptiActivityRegisterCallbacks")) return 0;
  bool ok = true;
  if (g_enable & config::kCudaKernel) ok = ok && check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enabling kernel records");
  if (g_enable & config::kCudaMemcpy) ok = ok && check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "enabling copy records");
  if (g_enable & config::kCudaMemset) ok = ok && check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "enabling memset records");
  if (!ok) {
    disable_activity();  // what was switched on before the failure
    return 0;
  }
  cuptiActivityFlushPeriod(100);  // ms: CUPTI's thread hands over full and old buffers
  g_activity = true;
  return 0;
}

void adapter_finalize() {
  nvtx::finalize();
  if (g_activity.exchange(false)) {
    // Off first, so that no new records come; then what CUPTI holds. In a signal handler the
    // driver or CUPTI may hold their own locks: no flush there, the CPU side is written as usual.
    disable_activity();
    {
      std::lock_guard<std::mutex> lock(g_consumer);
      g_flushing = true;
    }
    if (!api::stop_requested()) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> lock(g_consumer);
    release_pending(~std::uint64_t{0});
    g_closed = true;
    if (g_late) {
      const std::string text = "CUDA: " + std::to_string(g_late) + " GPU activity records came more than " +
                               std::to_string(kHoldSeconds).substr(0, 3) +
                               " s after later records of their stream had been written and were left out (their times "
                               "would overlap); the trace and profile lack them";
      api::warning(text.c_str());
    }
    if (g_dropped || g_buffers_refused.load()) {
      const std::string text = "CUDA: CUPTI dropped " + std::to_string(g_dropped) +
                               " GPU activity records: its buffers were full at the PROF_CUDA_BUFFER limit (" +
                               std::to_string(api::values().cuda_buffer >> 20) + " MiB); raise PROF_CUDA_BUFFER";
      api::warning(text.c_str());
    }
    const std::string info = "CUDA: " + std::to_string(g_items) + " GPU activities on " + std::to_string(g_streams->size()) +
                             " streams, " + std::to_string(g_reordered) + " handed over out of time order (put in order), " + std::to_string(g_bad_times) +
                             " without GPU times (left out), " + std::to_string(g_unknown_issuer) + " of unknown host call" +
                             (g_unknown_names.empty() ? std::string() : " (e.g. " + g_unknown_names + ")") + ", " +
                             std::to_string(g_launch_unrecorded.load()) + " launches on a thread that could not record them";
    api::info(1, info.c_str());
  }
  if (g_self_timing && g_self_calls.load()) {
    const double ns = static_cast<double>(g_self_ticks.load()) * 1e9 / static_cast<double>(api::ticks_per_second());
    const std::string text = "CUDA: prof's own work in CUPTI's API callbacks: " + std::to_string(g_self_calls.load()) +
                             " callbacks, " + std::to_string(static_cast<long long>(ns / static_cast<double>(g_self_calls.load()))) +
                             " ns each on average (CUPTI's own work around them not included); " +
                             std::to_string(g_timestamp_calls.load()) + " calls of the timestamp callback";
    api::info(2, text.c_str());
  }
  if (g_subscribed) {
    cuptiUnsubscribe(g_subscriber);
    g_subscribed = false;
  }
}

}  // namespace prof::cuda

extern "C" PROF_API const prof_adapter prof_adapter_cuda = {"cuda", &prof::cuda::adapter_init, nullptr, nullptr,
                                                            &prof::cuda::adapter_finalize};

extern "C" void prof_init(void);

namespace prof::cuda {

bool start_by_injection(const char* variable) {
  // A process that prof-run measures names its pid here; its children inherit the injection
  // variables (CUDA reads them late, at cuInit) but not prof-run's measurement: they run as they
  // would without prof.
  if (const char* pid = std::getenv("PROFRUN_CUDA_PID"); pid && std::strtol(pid, nullptr, 10) != static_cast<long>(::getpid()))
    return false;
  prof_init();  // nothing when the measurement runs already (prof-run, prof-wrap); else it starts now
  if (g_adapter_started.load()) return true;  // the program's adapter list has it (prof-wrap nvcc)
  api::add_adapter(&prof_adapter_cuda);
  adapter_init();
  const std::string text = std::string("CUDA: adapter started through ") + variable + " (CUDA or NVTX loaded it)";
  api::info(1, text.c_str());
  return true;
}

}  // namespace prof::cuda

// CUDA's injection entry point: the driver loads the library CUDA_INJECTION64_PATH names at
// cuInit and calls this (prof-run sets the variable, so CUDA that a program loads late, e.g.
// PyTorch through dlopen, is recorded from its first call). Non-zero: go on.
extern "C" PROF_API int InitializeInjection(void) {
  prof::cuda::start_by_injection("CUDA_INJECTION64_PATH");
  return 1;
}
