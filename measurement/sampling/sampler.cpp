// SPDX-License-Identifier: BSD-3-Clause
// The sampler: see sampler.hpp.
#include "measurement/sampling/sampler.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "measurement/config/config.hpp"
#include "measurement/definitions/contexts.hpp"
#include "measurement/metrics/metrics.hpp"
#include "measurement/definitions/regions.hpp"
#include "measurement/definitions/symbols.hpp"
#include "measurement/events.hpp"
#include "measurement/immortal.hpp"
#include "measurement/location.hpp"
#include "measurement/log.hpp"
#include "measurement/runtime.hpp"
#include "measurement/timer.hpp"

namespace prof::sampling {

namespace {

enum Kind : int { kCycles, kCpuClock, kTaskClock, kTimer };
const char* const kKindNames[] = {"perf_cycles", "perf_cpu_clock", "perf_task_clock", "timer"};

struct Source {
  Kind kind;
  std::uint64_t period;      // cycles, ns (perf clocks) or ns (timer; given in µs)
  std::uint32_t generator;   // local interrupt generator id
};

constexpr int kMaxSources = 4;
constexpr int kMaxDepth = 48;  // frames kept per sample
constexpr int kTimerTag = 0x10000;
constexpr RegionId kNoRegionYet = 0xfffffffdu;

Immortal<std::vector<Source>> g_sources;  // see immortal.hpp: init may come before our static initialisers
Immortal<std::vector<Generator>> g_generators;
bool g_on = false;
std::atomic<bool> g_running{false};  // the handler records (until stop())
int g_signal = 0;
using backtrace_fn = int (*)(void**, int);
backtrace_fn g_backtrace = nullptr;

// Per thread: its sources, found again from the signal's siginfo.
struct ThreadSources {
  int fd[kMaxSources];
  void* ring[kMaxSources];
  timer_t timer[kMaxSources];
  bool has_timer[kMaxSources];
  int n = 0;
  pid_t tid = 0;
  // A thread that blocks the signal (see "the kernel's ring buffer" below): per perf source a
  // second event whose samples the kernel writes into a ring that prof's sampler thread reads.
  Location* loc = nullptr;
  int ring_fd[kMaxSources];
  void* ring_map[kMaxSources];
  std::size_t ring_bytes[kMaxSources];  // data pages, without the header page
  /// Bit i: source i is read from its ring; the handler ignores its signals (those queued before
  /// the switch arrive when the thread unblocks: they must not count a second time).
  std::atomic<unsigned> ringed{0};
  std::atomic<std::uint64_t> signals{0};  // handler runs: a thread that takes signals
  // The sampler thread's last look: the first perf source's count and `signals` then.
  std::uint64_t seen_count = 0, seen_signals = 0;
  bool suspect = false;  // seen blocking the signal at the last look
  bool ring_refused = false;
  bool ring_sampled = false;  // counted once in g_ring_threads
};

// Threads that ran without a sample (check_unsampled): they block the sampling signal, as some
// libraries' worker threads block every signal.
std::atomic<std::uint32_t> g_unsampled_threads{0};
std::atomic<std::uint64_t> g_unsampled_ns{0};  // their CPU time
std::atomic<std::uint32_t> g_unsampled_blocking{0};  // of them, those seen blocking the signal

/// A thread's CPU time (ns) from /proc (any thread of the process).
std::uint64_t cpu_ns_of(pid_t tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", static_cast<int>(tid));
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  char buf[1024];
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the name may hold blanks
  unsigned long utime = 0, stime = 0;
  if (!p || std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return 0;
  return static_cast<std::uint64_t>(utime + stime) * (1000000000ull / static_cast<std::uint64_t>(::sysconf(_SC_CLK_TCK)));
}

/// Whether thread `tid` blocks `sig` now (/proc: SigBlk).
bool blocks_signal(pid_t tid, int sig) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/status", static_cast<int>(tid));
  FILE* f = std::fopen(path, "r");
  if (!f) return false;
  char line[256];
  unsigned long long mask = 0;
  bool found = false;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "SigBlk: %llx", &mask) == 1) {
      found = true;
      break;
    }
  std::fclose(f);
  return found && sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1;
}

/// The shortest period of the sources in ns (cycles read as ns, at 1 GHz).
std::uint64_t shortest_period_ns() {
  std::uint64_t p = ~std::uint64_t{0};
  for (const Source& s : *g_sources) p = std::min(p, s.period);
  return p;
}

/// A thread with no sample in 20 periods of CPU time or more is counted (thread_end, stop).
void check_unsampled(const Location* loc, pid_t tid) {
  if (loc->samples || loc->samples_dropped || loc->samples_in_prof) return;
  const std::uint64_t cpu = cpu_ns_of(tid), period = shortest_period_ns();
  if (period == ~std::uint64_t{0} || cpu < 20 * period) return;
  g_unsampled_threads.fetch_add(1);
  g_unsampled_ns.fetch_add(cpu);
  if (blocks_signal(tid, g_signal)) g_unsampled_blocking.fetch_add(1);
}

constexpr int kRingPages = 16;  // 64 KiB: 150 samples of 48 frames, 150 ms at 1 kHz, 7 ticks of the sampler thread

/// `ring`: an event whose samples the kernel writes into its mmap ring (ip, tid, time, the user
/// call chain by frame pointers), for thread `tid` (0: the caller), instead of a signal's.
long perf_open(Kind kind, std::uint64_t period, pid_t tid = 0, bool ring = false) {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = kind == kCycles ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
  a.config = kind == kCycles     ? static_cast<std::uint64_t>(PERF_COUNT_HW_CPU_CYCLES)
             : kind == kCpuClock ? static_cast<std::uint64_t>(PERF_COUNT_SW_CPU_CLOCK)
                                 : static_cast<std::uint64_t>(PERF_COUNT_SW_TASK_CLOCK);
  a.sample_period = period;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  a.wakeup_events = 1;
  if (ring) {
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    a.exclude_callchain_kernel = 1;
    // poll() wakes the sampler thread when a quarter of the ring is full, long before it overflows.
    a.watermark = 1;
    a.wakeup_watermark = static_cast<std::uint32_t>(kRingPages / 4 * ::sysconf(_SC_PAGESIZE));
    a.sample_max_stack = kMaxDepth;
  }
  long fd = ::syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0 && ring && (errno == EINVAL || errno == E2BIG || errno == EOVERFLOW)) {
    // Before Linux 4.8, or a perf_event_max_stack below ours: the system's limit.
    a.sample_max_stack = 0;
    fd = ::syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
  }
  return fd;
}

// PROF_SAMPLING_DEBUG_REFUSE: exact comma-separated tokens (a typo must not pass silently).
bool has_token(const std::string& list, const char* token) {
  std::size_t at = 0;
  while (at <= list.size()) {
    std::size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    if (list.compare(at, end - at, token) == 0) return true;
    at = end + 1;
  }
  return false;
}

bool refused_by_debug(Kind kind) {
  const std::string& r = config::g_values.sampling_debug_refuse;
  if (kind == kCycles) return has_token(r, "hardware");
  if (kind == kCpuClock || kind == kTaskClock) return has_token(r, "software");
  return false;
}

// Whether `kind` can be opened here; `why` says why not.
bool probe(Kind kind, std::uint64_t period, std::string* why) {
  if (kind == kTimer) return true;
  if (refused_by_debug(kind)) {
    *why = "refused (PROF_SAMPLING_DEBUG_REFUSE)";
    return false;
  }
  const long fd = perf_open(kind, period);
  if (fd < 0) {
    const int e = errno;
    *why = std::string(std::strerror(e));
    if (e == EACCES || e == EPERM) *why += "; /proc/sys/kernel/perf_event_paranoid forbids it";
    if (e == ENOENT || e == EOPNOTSUPP) *why += "; this machine has no such counter (a VM?)";
    return false;
  }
  ::close(static_cast<int>(fd));
  return true;
}

// The period of an event given without one: about 1 kHz (bench/sampling.sh: at most 1 % of run
// time on real hardware).
std::uint64_t default_period(Kind kind) { return kind == kCycles ? 2000000 : kind == kTimer ? 1000 : 1000000; }

bool parse_item(const std::string& item, Kind* kind, std::uint64_t* period) {
  const auto at = item.find('@');
  const std::string name = item.substr(0, at), num = at == std::string::npos ? std::string() : item.substr(at + 1);
  bool known = false;
  for (int k = 0; k < 4; ++k)
    if (name == kKindNames[k]) {
      *kind = static_cast<Kind>(k);
      known = true;
    }
  if (known && at == std::string::npos) {
    *period = default_period(*kind);
    return true;
  }
  if (!known || num.empty() || num.size() > 12 || num.find_first_not_of("0123456789") != std::string::npos) return false;
  *period = std::strtoull(num.c_str(), nullptr, 10);
  // At most 10^12 (cycles, ns; µs: over 11 days): no overflow when µs become ns.
  return *period > 0 && *period <= 1000000000000ull;
}

// ---- the signal handler: no locks, no allocation, no stdio; errno kept ----
void write_metric_values(Location* loc, EventBuffer& buffer, Timestamp t) {
  std::uint64_t v[metrics::kMaxMetrics + 1];
  metrics::read(loc, v);  // PAPI_read and getrusage: system calls, no locks on this thread's own set
  const unsigned n = loc->metric_count, slots = (n + 1) / 2;
  Record* r = buffer.try_reserve(slots);
  if (!r) return;  // no room in the current chunk: the sample itself may still get a fresh one
  r->time = t;
  r->type = RecordType::MetricValues;
  r->slots = static_cast<std::uint8_t>(slots);
  r->aux = loc->metric_class;
  r->ref = 0;
  v[n] = 0;
  std::memcpy(r + 1, v, slots * sizeof(Payload));
  buffer.commit();
}

void write_sample(Location* loc, int source, const ucontext_t* uc) {
  const Timestamp t0 = timer::now();
  const auto pc = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  void* ips[kMaxDepth + 16];
  int n = g_backtrace ? g_backtrace(ips, kMaxDepth + 16) : 0;
  // The handler's own frames and the kernel's signal trampoline come first: the interrupted
  // code starts at its program counter.
  int first = -1;
  for (int i = 0; i < n && first < 0; ++i)
    if (reinterpret_cast<std::uintptr_t>(ips[i]) == pc) first = i;
  void* const* frames = first >= 0 ? ips + first : nullptr;
  int m = first >= 0 ? n - first : 1;
  if (m > kMaxDepth) m = kMaxDepth;
  const unsigned slots = 1 + static_cast<unsigned>(m + 1) / 2;
  // Into the trace (resolved when it is written), or, without one, a buffer of the samples alone
  // (resolved into the profile when the thread ends).
  EventBuffer& buffer = loc->tracing ? loc->trace : loc->sample_buffer;
  // With metrics and a trace, their values at the sample go first (an OTF2 Metric event of the
  // sample's time). The thread is not inside prof (not busy), so not inside a metric read either.
  if (loc->metric_count && loc->tracing) write_metric_values(loc, buffer, t0);
  Record* r = buffer.try_reserve(slots);
  if (!r) {
    // A fresh chunk from the pool (lock-free); the owner is not inside prof (not busy).
    if (void* c = runtime::sample_chunk(!loc->tracing)) {
      buffer.add_chunk(c, runtime::chunk_bytes());
      r = buffer.try_reserve(slots);
    }
  }
  if (!r) {
    ++loc->samples_dropped;
    return;
  }
  r->time = t0;
  r->type = RecordType::RawSample;
  r->slots = static_cast<std::uint8_t>(slots);
  r->aux = static_cast<std::uint16_t>(source);
  r->ref = static_cast<std::uint32_t>(m);
  auto* p = reinterpret_cast<Payload*>(r + 1);
  p[0] = Payload{reinterpret_cast<std::uint64_t>(loc->current_node), 0};
  auto* out = reinterpret_cast<std::uint64_t*>(p + 1);
  for (int i = 0; i < m; ++i) out[i] = frames ? reinterpret_cast<std::uint64_t>(frames[i]) : pc;
  if (m % 2) out[m] = 0;
  buffer.commit();
  ++loc->samples;
  loc->sample_ticks += timer::now() - t0;  // the handler's own work (bench/sampling.sh)
}

void on_signal(int, siginfo_t* si, void* ucv) {
  const int saved = errno;
  Location* loc = tls_location;
  if (loc && loc->sampler && g_running.load(std::memory_order_relaxed)) {
    auto* ts = static_cast<ThreadSources*>(loc->sampler);
    int source = 0;
    if (si->si_code == SI_TIMER) source = si->si_value.sival_int & 0xff;
    else
      for (int i = 0; i < ts->n; ++i)
        if (ts->fd[i] == si->si_fd) source = i;
    ts->signals.fetch_add(1, std::memory_order_relaxed);
    if ((ts->ringed.load(std::memory_order_relaxed) >> source) & 1) {
      // Its ring has the samples: a signal queued before the switch counts nothing.
    } else if (loc->busy || !loc->active) {
      ++loc->samples_in_prof;  // attributed to prof itself, never to the user's code
    } else {
      // busy while writing: a sample from a nested signal is then counted as prof's.
      loc->busy = true;
      std::atomic_signal_fence(std::memory_order_seq_cst);
      write_sample(loc, source, static_cast<const ucontext_t*>(ucv));
      std::atomic_signal_fence(std::memory_order_seq_cst);
      loc->busy = false;
    }
  }
  errno = saved;
}

// ---- resolving samples (off the handler) ----
struct Frame {
  std::uintptr_t entry = 0;  // function entry, 0 unknown
  RegionId region = kNoRegionYet;  // defined when a sample keeps the frame (region_of)
  regions::RegionDef def;
  bool outer = false;        // a frame above the program's own (main's callers, thread start)
  bool prof = false;         // in libprof (outer too)
  bool main = false;
  bool interpreter = false;  // in the interpreter's object (set_interpreter)
};
std::mutex g_resolve_mutex;
std::atomic<const void*> g_interpreter_base{nullptr};  // the interpreter object's load address (set_interpreter)
std::unordered_map<std::uintptr_t, Frame>* g_frames;            // ip → frame
std::unordered_map<std::string, RegionId>* g_unknown_regions;   // object → its "[object]" region

Frame frame_of(std::uintptr_t ip) {
  auto it = g_frames->find(ip);
  if (it != g_frames->end()) return it->second;
  Frame f;
  symbols::SymbolInfo info;
  // A return address points after the call: look up ip - 1 (the call itself), except for the
  // innermost frame, which callers pass as is (the interrupted instruction).
  if (symbols::resolve(reinterpret_cast<const void*>(ip), &info)) {
    f.entry = info.entry;
    regions::RegionDef d;
    d.name = info.name;
    d.canonical = info.mangled.empty() ? info.name : info.mangled;
    d.file = info.file;
    d.begin_line = info.line;
    d.end_line = info.end_line;
    d.paradigm = regions::Paradigm::Sampling;
    d.role = regions::Role::Function;
    f.def = std::move(d);
    f.main = info.name == "main";
    const std::string& o = info.object;
    const char* base = std::strrchr(o.c_str(), '/');
    const std::string obj = base ? base + 1 : o;
    f.prof = obj.rfind("libprof", 0) == 0;
    f.outer = info.name == "_start" || info.name == "start_thread" || info.name == "clone3" || info.name == "clone" ||
              info.name.rfind("__libc_start", 0) == 0 || f.prof;
  } else {
    Dl_info dl;
    std::string obj = "unknown";
    if (::dladdr(reinterpret_cast<const void*>(ip), &dl) && dl.dli_fname) {
      const char* base = std::strrchr(dl.dli_fname, '/');
      obj = base ? base + 1 : dl.dli_fname;
    }
    auto [u, fresh] = g_unknown_regions->emplace(obj, 0);
    if (fresh) {
      regions::RegionDef d;
      d.name = d.canonical = "[" + obj + "]";
      d.paradigm = regions::Paradigm::Sampling;
      d.role = regions::Role::Function;
      u->second = regions::define(d);
    }
    f.region = u->second;
    f.prof = f.outer = obj.rfind("libprof", 0) == 0;
  }
  if (const void* interp = g_interpreter_base.load()) {
    Dl_info dl;
    f.interpreter = ::dladdr(reinterpret_cast<const void*>(ip), &dl) && dl.dli_fbase == interp;
  }
  g_frames->emplace(ip, f);
  return f;
}

// The region of a frame that a sample keeps, defined at its first use.
RegionId region_of(std::uintptr_t ip) {
  Frame& f = (*g_frames)[ip];
  if (f.region == kNoRegionYet) f.region = regions::define(f.def);
  return f.region;
}

// ---- threads that block the signal: the kernel's ring buffer ----
// A thread that blocks SIGRTMIN+5 (a compressor's worker threads block every signal) never runs
// the handler. For the perf sources the kernel can take its samples without a signal: an event
// with PERF_SAMPLE_CALLCHAIN writes each overflow (ip, user call chain by frame pointers) into an
// mmap ring, which prof's sampler thread reads. A thread blocking the signal when it starts gets
// such an event at once; one that blocks it later is found by the sampler thread (look_at: its
// perf count grows, its handler does not run, /proc says SigBlk) and switched: its signal event is
// disabled, its ring event opened for its tid. Either way for good: the thread stays on the ring. The samples wait, aggregated per location and call chain, in
// a side store: the profile belongs to the owner thread, which records into it meanwhile; they go
// into the profile at finalize (attribute_ring_samples), as the samples kept without a trace do.
// Not into the trace: its records are in time order and already partly written by then.

struct RingStore {
  /// {source, leaf ip, return addresses...} → samples.
  std::map<std::vector<std::uint64_t>, std::uint64_t> stacks;
  std::uint64_t pending = 0;  // not yet in loc->samples
};
constexpr std::size_t kMaxStacks = 1u << 16;  // distinct call chains per location; beyond: the leaf alone
constexpr int kTickMs = 20;  // the sampler thread's look at threads that may have blocked the signal

// All under g_ring_mutex: the threads with a perf source (registered at thread start, removed at
// thread end, so their fds and rings stay valid while the sampler thread uses them) and the store.
std::mutex g_ring_mutex;
std::vector<ThreadSources*>* g_watched;
std::map<const Location*, RingStore>* g_ring_store;
pthread_t g_sampler_thread;
bool g_sampler_started = false;
pid_t g_sampler_pid = 0;  // the process prof initialised: a fork's child has no sampler thread and no rings
int g_sampler_wake[2] = {-1, -1};
std::atomic<bool> g_sampler_quit{false};
std::atomic<std::uint32_t> g_ring_threads{0};   // threads that got samples through a ring
std::atomic<std::uint64_t> g_ring_samples{0};
std::atomic<std::uint64_t> g_ring_lost{0};      // the kernel found the ring full (PERF_RECORD_LOST)
std::atomic<std::uint32_t> g_ring_refusals{0};  // threads the kernel gave no ring
char g_ring_refused_why[128];                   // the first refusal's reason (g_ring_mutex)

bool perf_kind(Kind k) { return k != kTimer; }
bool in_sampler_process() { return g_sampler_pid == ::getpid(); }

/// Opens the ring event of perf source `i` for thread `tid` (0: the caller). g_ring_mutex held, or
/// the thread not registered yet.
bool open_ring(ThreadSources* ts, int i, pid_t tid) {
  const Source& s = (*g_sources)[static_cast<std::size_t>(i)];
  const long fd = perf_open(s.kind, s.period, tid, true);
  const char* why = nullptr;
  if (fd >= 0) {
    const long page = ::sysconf(_SC_PAGESIZE);
    // The locked-memory limit (perf_event_mlock_kb, then RLIMIT_MEMLOCK) may refuse 64 KiB.
    for (int pages = kRingPages; pages >= 1; pages /= 2) {
      void* m = ::mmap(nullptr, static_cast<std::size_t>((pages + 1) * page), PROT_READ | PROT_WRITE, MAP_SHARED,
                       static_cast<int>(fd), 0);
      if (m == MAP_FAILED) continue;
      ts->ring_fd[i] = static_cast<int>(fd);
      ts->ring_map[i] = m;
      ts->ring_bytes[i] = static_cast<std::size_t>(pages * page);
      ::ioctl(ts->ring_fd[i], PERF_EVENT_IOC_ENABLE, 0);
      return true;
    }
    why = "no memory for its ring (perf_event_mlock_kb, RLIMIT_MEMLOCK)";
    ::close(static_cast<int>(fd));
  } else {
    why = std::strerror(errno);
  }
  if (!ts->ring_refused) {
    ts->ring_refused = true;
    if (g_ring_refusals.fetch_add(1) == 0) std::snprintf(g_ring_refused_why, sizeof g_ring_refused_why, "%s", why);
  }
  return false;
}

/// Moves the samples of `ts`'s ring `i` into the store. g_ring_mutex held.
void drain(ThreadSources* ts, int i) {
  auto* meta = static_cast<perf_event_mmap_page*>(ts->ring_map[i]);
  if (!meta) return;
  const unsigned char* data = static_cast<const unsigned char*>(ts->ring_map[i]) + ::sysconf(_SC_PAGESIZE);
  const std::uint64_t size = ts->ring_bytes[i];
  const std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  std::uint64_t tail = meta->data_tail;
  static std::uint64_t record[65536 / 8];  // a record's size is 16 bits; g_ring_mutex guards it
  const auto copy = [&](std::uint64_t at, std::size_t n, void* to) {
    const std::uint64_t off = at % size, first = std::min<std::uint64_t>(n, size - off);
    std::memcpy(to, data + off, first);
    std::memcpy(static_cast<unsigned char*>(to) + first, data, n - first);
  };
  RingStore& store = (*g_ring_store)[ts->loc];
  std::vector<std::uint64_t> key;
  while (tail + sizeof(perf_event_header) <= head) {
    perf_event_header h;
    copy(tail, sizeof h, &h);
    if (h.size < sizeof h || tail + h.size > head) break;
    copy(tail, h.size, record);
    tail += h.size;
    const std::size_t words = h.size / 8;
    if (h.type == PERF_RECORD_LOST && words >= 3) {
      g_ring_lost.fetch_add(record[2], std::memory_order_relaxed);  // header, id, lost
      continue;
    }
    // header, ip, pid|tid, time, nr, ips[nr] (sample_type's order)
    if (h.type != PERF_RECORD_SAMPLE || words < 5) continue;
    const std::uint64_t ip = record[1], nr = std::min<std::uint64_t>(record[4], words - 5);
    key.assign(1, static_cast<std::uint64_t>(i));
    for (std::uint64_t k = 0; k < nr && key.size() <= kMaxDepth; ++k)
      if (record[5 + k] < static_cast<std::uint64_t>(PERF_CONTEXT_MAX)) key.push_back(record[5 + k]);
    if (key.size() == 1) key.push_back(ip);  // no chain: the interrupted instruction is always right
    if (store.stacks.size() >= kMaxStacks && !store.stacks.count(key)) key.resize(2);
    ++store.stacks[key];
    ++store.pending;
    g_ring_samples.fetch_add(1, std::memory_order_relaxed);
    if (!ts->ring_sampled) {
      ts->ring_sampled = true;
      g_ring_threads.fetch_add(1);
    }
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

void drain_all(ThreadSources* ts) {
  for (int i = 0; i < ts->n; ++i)
    if (ts->ring_map[i]) drain(ts, i);
}

/// A look at `ts` (sampler thread, g_ring_mutex held): a thread whose perf count grew by 3 periods
/// while its handler never ran, twice, and that blocked the signal both times, is switched to
/// ring events.
void look_at(ThreadSources* ts) {
  if (ts->ring_refused) return;
  int first = -1;
  bool all_ringed = true;
  for (int i = 0; i < ts->n; ++i)
    if (perf_kind((*g_sources)[static_cast<std::size_t>(i)].kind)) {
      if (first < 0 && ts->fd[i] >= 0) first = i;
      all_ringed = all_ringed && ((ts->ringed.load() >> i) & 1);
    }
  if (first < 0 || all_ringed) return;
  std::uint64_t count = 0;
  if (::read(ts->fd[first], &count, sizeof count) != static_cast<ssize_t>(sizeof count)) return;
  const std::uint64_t signals = ts->signals.load(std::memory_order_relaxed);
  if (signals != ts->seen_signals) {
    ts->seen_count = count;
    ts->seen_signals = signals;
    ts->suspect = false;
    return;
  }
  if (count - ts->seen_count < 3 * (*g_sources)[static_cast<std::size_t>(first)].period) return;
  ts->seen_count = count;
  // The handler blocks the signal while it runs: a thread seen blocking it at two looks in a row,
  // with 3 periods of CPU time and no signal between them, blocks it for real.
  const bool blocks = blocks_signal(ts->tid, g_signal);
  const bool again = ts->suspect;
  ts->suspect = blocks;
  if (!blocks || !again) return;
  log::info(2, "sampling: thread %d blocks the sampling signal: sampled through the kernel's ring buffer from now on",
            static_cast<int>(ts->tid));
  for (int i = 0; i < ts->n; ++i) {
    if (!perf_kind((*g_sources)[static_cast<std::size_t>(i)].kind) || ((ts->ringed.load() >> i) & 1)) continue;
    if (!open_ring(ts, i, ts->tid)) return;
    ts->ringed.fetch_or(1u << i);
    if (ts->fd[i] >= 0) ::ioctl(ts->fd[i], PERF_EVENT_IOC_DISABLE, 0);
  }
}

void* sampler_thread(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::vector<pollfd> fds;
  bool hup = false;
  while (!g_sampler_quit.load()) {
    // A ring whose thread exited without prof's thread end reports POLLHUP at once: then a
    // tick's sleep, not a busy loop.
    if (hup) ::usleep(kTickMs * 1000);
    fds.assign(1, pollfd{g_sampler_wake[0], POLLIN, 0});
    {
      std::lock_guard<std::mutex> lock(g_ring_mutex);
      for (ThreadSources* ts : *g_watched)
        for (int i = 0; i < ts->n; ++i)
          if (ts->ring_map[i]) fds.push_back(pollfd{ts->ring_fd[i], POLLIN, 0});
    }
    // A ring fd that thread_end closes meanwhile (or another file that gets its number) wakes the
    // poll at worst; the rings themselves are only read under the mutex.
    const int n = ::poll(fds.data(), fds.size(), kTickMs);
    if (n > 0 && (fds[0].revents & POLLIN)) {
      char c[16];
      while (::read(g_sampler_wake[0], c, sizeof c) > 0) {
      }
    }
    std::lock_guard<std::mutex> lock(g_ring_mutex);
    if (g_sampler_quit.load() || !g_running.load()) break;
    for (ThreadSources* ts : *g_watched) {
      drain_all(ts);
      look_at(ts);
    }
    hup = false;
    for (std::size_t k = 1; k < fds.size(); ++k) hup = hup || (fds[k].revents & (POLLHUP | POLLERR | POLLNVAL));
  }
  return nullptr;
}

/// Registers `ts` (thread start); the sampler thread starts with the process's second thread
/// with a perf source, or a first one that blocks the signal: a single-threaded program has none.
void watch(ThreadSources* ts, bool blocked) {
  std::lock_guard<std::mutex> lock(g_ring_mutex);
  g_watched->push_back(ts);
  if (g_sampler_started || g_sampler_quit.load() || (g_watched->size() < 2 && !blocked) || !in_sampler_process()) return;
  if (g_sampler_wake[0] < 0 && ::pipe2(g_sampler_wake, O_CLOEXEC | O_NONBLOCK) != 0) return;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  runtime::t_creating_own_thread = true;  // the pthread adapter lets prof's own thread pass
  const int rc = pthread_create(&g_sampler_thread, &attr, &sampler_thread, nullptr);
  runtime::t_creating_own_thread = false;
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    log::warning("sampling: cannot start prof's sampler thread (%s); threads that block the sampling signal get no samples",
                 std::strerror(rc));
    g_sampler_quit.store(true);
    return;
  }
  pthread_setname_np(g_sampler_thread, "prof-sampler");
  g_sampler_started = true;
}

/// `loc`'s ring samples so far into its counts (its thread ended, or measurement stopped: no
/// handler writes them meanwhile). g_ring_mutex held.
void count_ring_samples_locked(Location* loc) {
  auto it = g_ring_store->find(loc);
  if (it == g_ring_store->end()) return;
  loc->samples += it->second.pending;
  it->second.pending = 0;
}

/// The artificial call path "prof (measurement system)" below `loc`'s root: samples inside prof.
ProfileNode* prof_node(Location* loc) {
  static const RegionId prof_region = [] {
    regions::RegionDef d;
    d.name = d.canonical = "prof (measurement system)";
    d.paradigm = regions::Paradigm::Measurement;
    d.role = regions::Role::Artificial;
    return regions::define(d);
  }();
  return detail::attach_child(loc, &loc->root_node, prof_region);
}

}  // namespace

const char* accepted_forms() {
  return "perf_cycles[@<cycles>], perf_cpu_clock[@<ns>], perf_task_clock[@<ns>] or timer[@<us>], comma-separated, "
         "periods from 1 to 10^12, without one about 1 kHz (e.g. perf_cycles@2000000)";
}

bool init() {
  const config::Values& v = config::g_values;
  if (v.sampling_events.empty()) return false;
  const std::string& list = v.sampling_events;
  for (std::size_t at = 0; !v.sampling_debug_refuse.empty() && at <= v.sampling_debug_refuse.size();) {
    std::size_t end = v.sampling_debug_refuse.find(',', at);
    if (end == std::string::npos) end = v.sampling_debug_refuse.size();
    const std::string token = v.sampling_debug_refuse.substr(at, end - at);
    if (token != "hardware" && token != "software")
      log::fatal("PROF_SAMPLING_DEBUG_REFUSE='%s': '%s' is neither hardware nor software; give hardware, software or "
                 "hardware,software (tests only; leave it empty)",
                 v.sampling_debug_refuse.c_str(), token.c_str());
    at = end + 1;
  }
  // Every item is checked before any is probed: a bad value stops the program with one line.
  struct Item {
    std::string text;
    Kind kind;
    std::uint64_t period;
  };
  std::vector<Item> items;
  for (std::size_t at = 0; at <= list.size();) {
    std::size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    Item it{list.substr(at, end - at), kTimer, 0};
    if (!parse_item(it.text, &it.kind, &it.period))
      log::fatal("PROF_SAMPLING_EVENTS='%s': '%s' is not an event[@period] item; give %s", list.c_str(), it.text.c_str(),
                 accepted_forms());
    items.push_back(it);
    at = end + 1;
  }
  if (items.size() > kMaxSources) log::fatal("PROF_SAMPLING_EVENTS='%s': at most %d events", list.c_str(), kMaxSources);
  for (const Item& it : items) {
    Kind kind = it.kind;
    std::uint64_t period = it.period;
    const std::string& item = it.text;
    // The fallback chain: hardware cycles → the CPU clock (period read as ns) → the timer.
    std::string why;
    const std::string asked = item;
    if (kind == kCycles && !probe(kCycles, period, &why)) {
      log::warning("sampling: %s: hardware cycles %s; using perf_cpu_clock@%llu (ns) instead", asked.c_str(), why.c_str(),
                   static_cast<unsigned long long>(period));
      kind = kCpuClock;
    }
    if ((kind == kCpuClock || kind == kTaskClock) && !probe(kind, period, &why)) {
      log::warning("sampling: %s: the software clock %s %s; using timer@%llu (us) instead", asked.c_str(),
                   kKindNames[kind], why.c_str(), static_cast<unsigned long long>(period / 1000 ? period / 1000 : 1));
      period = period / 1000 ? period / 1000 : 1;  // µs
      kind = kTimer;
    }
    const std::uint64_t eff = kind == kTimer && asked.rfind("timer@", 0) == 0 ? period * 1000
                              : kind == kTimer                                 ? period * 1000
                                                                               : period;
    Generator g{kKindNames[kind], kind != kCycles, eff};
    contexts::GeneratorDef d{g.name, g.time_based, g.period};
    g_sources->push_back(Source{kind, eff, contexts::define_generator(d)});
    g_generators->push_back(g);
  }
  if (!v.enable_tracing && !v.enable_profiling) {
    log::warning("sampling: neither tracing nor profiling is on; the samples have nowhere to go");
    g_sources->clear();
    g_generators->clear();
    return false;
  }
  // libunwind, loaded privately: its _Unwind_* and backtrace symbols must not replace libgcc's
  // and glibc's in the program.
  if (v.enable_unwinding) {
    void* h = ::dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = ::dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
    if (h) g_backtrace = reinterpret_cast<backtrace_fn>(::dlsym(h, "unw_backtrace"));
    if (!g_backtrace)
      log::warning("sampling: libunwind (libunwind.so.8) is not installed (Debian: libunwind8); samples record only "
                   "the interrupted function, not its callers");
    else {
      void* warm[4];
      g_backtrace(warm, 4);  // its first call sets up its caches: not in a signal handler
    }
  }
  g_frames = new std::unordered_map<std::uintptr_t, Frame>;
  g_watched = new std::vector<ThreadSources*>;
  g_ring_store = new std::map<const Location*, RingStore>;
  g_sampler_pid = ::getpid();
  g_unknown_regions = new std::unordered_map<std::string, RegionId>;
  g_signal = SIGRTMIN + 5;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = &on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(g_signal, &sa, nullptr);
  g_on = true;
  g_running.store(true);
  return true;
}

bool on() { return g_on; }
const std::vector<Generator>& generators() { return *g_generators; }

void set_interpreter(const void* address) {
  Dl_info dl;
  if (!address || !::dladdr(address, &dl) || !dl.dli_fbase) return;
  std::lock_guard<std::mutex> lock(g_resolve_mutex);
  g_interpreter_base.store(dl.dli_fbase);
  // Frames resolved before (a flush during the interpreter's start) learn it too.
  if (g_frames)
    for (auto& [ip, f] : *g_frames) {
      Dl_info at;
      f.interpreter = ::dladdr(reinterpret_cast<const void*>(ip), &at) && at.dli_fbase == dl.dli_fbase;
    }
}

void thread_start(Location* loc) {
  if (!g_on || loc->sampler) return;
  if (g_backtrace) {
    // libunwind's per-thread cache (TLS of a dlopen'd library: allocated at first use) is set
    // up here, not in the handler.
    void* warm[4];
    g_backtrace(warm, 4);
  }
  auto* ts = new ThreadSources;
  const pid_t tid = static_cast<pid_t>(::syscall(SYS_gettid));
  ts->tid = tid;
  ts->loc = loc;
  // A thread that starts with the signal blocked (its creator blocked it) takes its perf sources'
  // samples from rings at once.
  sigset_t mask;
  const bool blocked = pthread_sigmask(SIG_BLOCK, nullptr, &mask) == 0 && sigismember(&mask, g_signal) == 1;
  bool watched = false;
  for (const Source& s : *g_sources) {
    const int i = ts->n;
    ts->fd[i] = -1;
    ts->ring[i] = nullptr;
    ts->has_timer[i] = false;
    ts->ring_fd[i] = -1;
    ts->ring_map[i] = nullptr;
    ts->ring_bytes[i] = 0;
    watched = watched || perf_kind(s.kind);
    if (perf_kind(s.kind) && blocked && open_ring(ts, i, 0)) {
      ts->ringed.fetch_or(1u << i);
    } else if (s.kind == kTimer) {
      sigevent sev;
      std::memset(&sev, 0, sizeof sev);
      sev.sigev_notify = SIGEV_THREAD_ID;
      sev.sigev_signo = g_signal;
      sev._sigev_un._tid = tid;
      sev.sigev_value.sival_int = kTimerTag | i;
      if (::timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &ts->timer[i]) == 0) {
        itimerspec its;
        its.it_interval.tv_sec = static_cast<time_t>(s.period / 1000000000u);
        its.it_interval.tv_nsec = static_cast<long>(s.period % 1000000000u);
        its.it_value = its.it_interval;
        ::timer_settime(ts->timer[i], 0, &its, nullptr);
        ts->has_timer[i] = true;
      }
    } else {
      const long fd = perf_open(s.kind, s.period);
      if (fd >= 0) {
        const int f = static_cast<int>(fd);
        // A ring of one data page: the kernel's overflow wakeup wants one; it is never read.
        const long page = ::sysconf(_SC_PAGESIZE);
        void* ring = ::mmap(nullptr, static_cast<std::size_t>(2 * page), PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
        ts->ring[i] = ring == MAP_FAILED ? nullptr : ring;
        ::fcntl(f, F_SETFL, O_ASYNC | O_NONBLOCK);
        ::fcntl(f, F_SETSIG, g_signal);
        f_owner_ex owner{F_OWNER_TID, tid};
        ::fcntl(f, F_SETOWN_EX, &owner);  // the overflow goes to this very thread
        ::ioctl(f, PERF_EVENT_IOC_RESET, 0);
        ::ioctl(f, PERF_EVENT_IOC_ENABLE, 0);
        ts->fd[i] = f;
      }
    }
    ++ts->n;
  }
  if (watched && in_sampler_process()) watch(ts, blocked);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->sampler = ts;
}

void thread_end(Location* loc) {
  auto* ts = static_cast<ThreadSources*>(loc->sampler);
  if (!ts) return;
  loc->sampler = nullptr;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // In a fork's child the rings are not mapped (the kernel does not copy them) and the mutex may
  // be the parent's sampler thread's.
  if (g_watched && in_sampler_process()) {
    std::lock_guard<std::mutex> lock(g_ring_mutex);
    g_watched->erase(std::remove(g_watched->begin(), g_watched->end(), ts), g_watched->end());
    if (g_running.load()) drain_all(ts);  // after stop() drained them, the samples are past the end
    count_ring_samples_locked(loc);
  }
  check_unsampled(loc, ts->tid);
  const long page = ::sysconf(_SC_PAGESIZE);
  for (int i = 0; i < ts->n; ++i) {
    if (ts->fd[i] >= 0) {
      ::ioctl(ts->fd[i], PERF_EVENT_IOC_DISABLE, 0);
      if (ts->ring[i]) ::munmap(ts->ring[i], static_cast<std::size_t>(2 * page));
      ::close(ts->fd[i]);
    }
    if (ts->ring_fd[i] >= 0) {
      ::ioctl(ts->ring_fd[i], PERF_EVENT_IOC_DISABLE, 0);
      ::munmap(ts->ring_map[i], ts->ring_bytes[i] + static_cast<std::size_t>(page));
      ::close(ts->ring_fd[i]);
    }
    if (ts->has_timer[i]) ::timer_delete(ts->timer[i]);
  }
  delete ts;
}

void stop() {
  g_running.store(false);
  if (g_watched && in_sampler_process()) {
    bool started = false;
    {
      std::lock_guard<std::mutex> lock(g_ring_mutex);
      g_sampler_quit.store(true);  // and none starts from here on (watch)
      started = g_sampler_started;
      g_sampler_started = false;
    }
    if (started) {
      const char c = 0;
      if (::write(g_sampler_wake[1], &c, 1) < 0) {
      }  // it looks at the flag within a tick anyway
      pthread_join(g_sampler_thread, nullptr);
    }
    // The samples up to now; the rings stop (their threads may run on during the write-out).
    std::lock_guard<std::mutex> lock(g_ring_mutex);
    for (ThreadSources* ts : *g_watched) {
      drain_all(ts);
      for (int i = 0; i < ts->n; ++i)
        if (ts->ring_fd[i] >= 0) ::ioctl(ts->ring_fd[i], PERF_EVENT_IOC_DISABLE, 0);
    }
  }
  // The finalizing thread's own sources: no more signals (and EINTR) during the write-out.
  if (Location* loc = tls_location) thread_end(loc);
}

void check_unsampled_threads(const std::vector<Location*>& locs) {
  if (g_watched && in_sampler_process()) {
    std::lock_guard<std::mutex> lock(g_ring_mutex);
    for (Location* loc : locs) count_ring_samples_locked(loc);
  }
  for (const Location* loc : locs)
    if (const auto* ts = static_cast<const ThreadSources*>(loc->sampler)) check_unsampled(loc, ts->tid);
  if (const std::uint32_t n = g_ring_threads.load()) {
    const std::uint64_t lost = g_ring_lost.load();
    log::info(1, "sampling: %u thread%s blocking the sampling signal %s sampled through the kernel's ring buffer (%" PRIu64
              " samples%s%s; %s)",
              n, n == 1 ? "" : "s", n == 1 ? "was" : "were", g_ring_samples.load(), lost ? ", lost in full rings: " : "",
              lost ? std::to_string(lost).c_str() : "",
              config::g_values.enable_profiling ? "in the profile, not in the trace" : "only a profile would have them, not the trace");
  }
}

std::uint64_t ring_samples() { return g_ring_samples.load(); }

std::string unsampled_warning() {
  const std::uint32_t n = g_unsampled_threads.load();
  if (!n) return {};
  char text[1024];
  const std::uint32_t blocking = g_unsampled_blocking.load();
  bool perf = false;
  for (const Source& s : *g_sources) perf = perf || perf_kind(s.kind);
  // What samples such threads: only a perf source's ring buffer, where the kernel gives one.
  std::string how;
  if (!perf)
    how = "; only the perf sources (e.g. PROF_SAMPLING_EVENTS=perf_cpu_clock), where the kernel offers perf_event_open, "
          "sample such threads, through the kernel's ring buffer";
  else if (g_ring_refusals.load())
    how = std::string("; the kernel refused the ring buffer that samples such threads without it (") + g_ring_refused_why + ")";
  std::snprintf(text, sizeof text,
                "sampling: %u thread%s ran %.1f s of CPU time without a single sample%s; their time is missing from "
                "the samples (prof samples through a signal, SIGRTMIN+5, which a thread that blocks all signals, as some "
                "libraries' worker threads do, never takes%s); measure their functions with prof-wrap's instrumentation",
                n, n == 1 ? "" : "s", static_cast<double>(g_unsampled_ns.load()) * 1e-9,
                blocking == n ? ": they block prof's sampling signal"
                : blocking   ? (std::string(": ") + std::to_string(blocking) + " of them block prof's sampling signal").c_str()
                             : "",
                how.c_str());
  return text;
}

void attribute_prof_samples(Location* loc) {
  if (!g_on || !loc->profiling || loc->samples_in_prof == 0) return;
  if (ProfileNode* n = prof_node(loc)) {
    if (!loc->hits) loc->hits = new std::unordered_map<const ProfileNode*, std::uint64_t>;
    (*loc->hits)[n] += loc->samples_in_prof;
  }
}

void attribute_ring_samples(Location* loc) {
  if (!g_on || !g_ring_store) return;
  RingStore store;
  {
    // A checkpoint's copy (a fork) may have the mutex as the parent's sampler thread held it.
    std::unique_lock<std::mutex> lock(g_ring_mutex, std::defer_lock);
    if (in_sampler_process()) lock.lock();
    else if (!lock.try_lock()) return;
    auto it = g_ring_store->find(loc);
    if (it == g_ring_store->end() || it->second.stacks.empty()) return;
    store.stacks.swap(it->second.stacks);
  }
  if (!loc->profiling) return;
  // The instrumented call path at a sample is unknown here (only the owner thread knows it, and
  // not from another thread at the sample's time). The frames tell it where they name an
  // instrumented function that has exactly one call path on this location: the innermost such
  // frame is the sample's anchor, the frames below it hang under that path as resolve() hangs
  // them under the thread's node. Without one, all kept frames start at the thread's root.
  std::unordered_map<std::uintptr_t, ProfileNode*> only_path;  // function entry → its one node (nullptr: several)
  {
    std::unordered_map<RegionId, std::uintptr_t> entries;
    std::vector<ProfileNode*> todo{&loc->root_node};
    while (!todo.empty()) {
      ProfileNode* n = todo.back();
      todo.pop_back();
      for (ProfileNode* c = n->first_child; c; c = c->next_sibling) {
        todo.push_back(c);
        auto [e, fresh] = entries.emplace(c->region, 0);
        if (fresh) e->second = regions::entry_of(c->region);
        if (!e->second) continue;
        auto [at, first] = only_path.emplace(e->second, c);
        if (!first) at->second = nullptr;
      }
    }
  }
  std::lock_guard<std::mutex> lock(g_resolve_mutex);
  std::vector<std::uintptr_t> kept;
  for (const auto& [key, count] : store.stacks) {
    kept.clear();  // as resolve() keeps them: from the leaf up to main, the thread start or prof
    // A leaf inside prof (its hooks) is prof's time, as the handler counts it (samples_in_prof).
    const bool in_prof = key.size() > 1 && frame_of(key[1]).prof;
    for (std::size_t k = 1; k < key.size() && !in_prof; ++k) {
      const std::uintptr_t ip = key[k] - (k > 1 ? 1 : 0);
      const Frame f = frame_of(ip);
      if (f.outer || f.interpreter) break;
      kept.push_back(ip);
      if (f.main) break;
    }
    ProfileNode* node = in_prof ? prof_node(loc) : &loc->root_node;
    std::size_t below = kept.size();
    for (std::size_t k = 0; k < kept.size(); ++k) {
      const Frame f = frame_of(kept[k]);
      auto it = f.entry ? only_path.find(f.entry) : only_path.end();
      if (it != only_path.end() && it->second) {
        node = it->second;
        below = k;
        break;
      }
    }
    for (std::size_t k = below; node && k-- > 0;) {
      const Frame f = frame_of(kept[k]);
      ProfileNode* instrumented = nullptr;
      if (f.entry)
        for (ProfileNode* c = node->first_child; c && !instrumented; c = c->next_sibling)
          if (regions::entry_of(c->region) == f.entry) instrumented = c;
      node = instrumented ? instrumented : detail::attach_child(loc, node, region_of(kept[k]));
    }
    if (!node) continue;  // the pool has no memory left for the call path
    if (!loc->hits) loc->hits = new std::unordered_map<const ProfileNode*, std::uint64_t>;
    (*loc->hits)[node] += count;
    const std::size_t source = static_cast<std::size_t>(key[0]);
    // As the handler's samples: prof's own are hits only (attribute_prof_samples).
    if (!in_prof && source < g_sources->size() && (*g_sources)[source].kind != kCycles) {
      if (!loc->sampled_ns) loc->sampled_ns = new std::unordered_map<const ProfileNode*, std::uint64_t>;
      (*loc->sampled_ns)[node] += count * (*g_sources)[source].period;
    }
  }
}

void resolve(Location* loc, EventBuffer& buffer, bool trace) {
  if (!g_on) return;
  if (!loc->replay) loc->replay = new std::vector<RegionId>;
  std::vector<RegionId>& stack = *loc->replay;
  std::lock_guard<std::mutex> lock(g_resolve_mutex);
  buffer.for_each([&](const Record& cr, const Payload* cp) {
    auto& r = const_cast<Record&>(cr);
    if (r.type == RecordType::Enter) {
      stack.push_back(r.ref);
    } else if (r.type == RecordType::Leave) {
      for (std::size_t i = stack.size(); i-- > 0;)
        if (stack[i] == r.ref) {
          stack.resize(i);
          break;
        }
    } else if (r.type == RecordType::RawSample) {
      const auto* ips = reinterpret_cast<const std::uint64_t*>(cp + 1);
      const unsigned m = r.ref;
      auto* at_node = reinterpret_cast<ProfileNode*>(cp[0].a);
      // The instrumented call path at the sample: replayed from the trace's Enter/Leave, or, without
      // a trace, the profile's node the thread was in.
      std::vector<RegionId> node_path;
      if (!trace)
        for (const ProfileNode* n = at_node; n && n->parent; n = n->parent) node_path.insert(node_path.begin(), n->region);
      const std::vector<RegionId>& path = trace ? stack : node_path;
      // The instrumented functions on it, innermost first: the sampled frames below the innermost
      // one hang under the instrumented call path.
      std::vector<std::uintptr_t> entries;
      for (std::size_t i = path.size(); i-- > 0;)
        if (std::uintptr_t e = regions::entry_of(path[i])) entries.push_back(e);
      std::vector<RegionId> below;  // sampled regions, innermost first
      for (unsigned i = 0; i < m; ++i) {
        const std::uintptr_t ip = ips[i] - (i > 0 ? 1 : 0);
        const Frame f = frame_of(ip);
        bool instrumented = false;
        for (std::uintptr_t e : entries) instrumented = instrumented || (f.entry && f.entry == e);
        if (instrumented || f.outer || f.interpreter) break;
        below.push_back(region_of(ip));
        if (f.main) break;
      }
      // The profile: the sampled frames below the call path the thread was in (its node at the
      // sample), one hit on the innermost.
      if (ProfileNode* node = at_node; node && loc->profiling) {
        for (std::size_t i = below.size(); node && i-- > 0;) node = detail::attach_child(loc, node, below[i]);
        if (node) {
          if (!loc->hits) loc->hits = new std::unordered_map<const ProfileNode*, std::uint64_t>;
          ++(*loc->hits)[node];
          // The CPU time a sample of a time-based source stands for: its period.
          if (r.aux < g_sources->size() && (*g_sources)[r.aux].kind != kCycles) {
            if (!loc->sampled_ns) loc->sampled_ns = new std::unordered_map<const ProfileNode*, std::uint64_t>;
            (*loc->sampled_ns)[node] += (*g_sources)[r.aux].period;
          }
        }
      }
      if (!trace) return;
      contexts::ContextId c = contexts::kNoContext;
      for (RegionId reg : stack) c = contexts::define(c, reg);
      for (std::size_t i = below.size(); i-- > 0;) c = contexts::define(c, below[i]);
      if (c == contexts::kNoContext) {
        // No frame at all (an empty stack inside the program's start): the program root.
        c = contexts::define(contexts::kNoContext, runtime::root_region());
      }
      r.type = RecordType::CallingContextSample;
      auto* p = const_cast<Payload*>(cp);
      // The unwind distance: every frame counts as new (the whole stack), at least the leaf.
      p[0].a = std::max<std::uint64_t>(1, stack.size() + below.size());
      p[0].b = 0;
      r.ref = c;
    }
  });
}

}  // namespace prof::sampling
