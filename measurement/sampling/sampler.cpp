// SPDX-License-Identifier: BSD-3-Clause
// The sampler: see sampler.hpp.
#include "measurement/sampling/sampler.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
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
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

long perf_open(Kind kind, std::uint64_t period) {
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
  return ::syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
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
    if (loc->busy || !loc->active) {
      ++loc->samples_in_prof;  // attributed to prof itself, never to the user's code
    } else {
      auto* ts = static_cast<ThreadSources*>(loc->sampler);
      int source = 0;
      if (si->si_code == SI_TIMER) source = si->si_value.sival_int & 0xff;
      else
        for (int i = 0; i < ts->n; ++i)
          if (ts->fd[i] == si->si_fd) source = i;
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
    f.outer = info.name == "_start" || info.name == "start_thread" || info.name == "clone3" || info.name == "clone" ||
              info.name.rfind("__libc_start", 0) == 0 || obj.rfind("libprof", 0) == 0;
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
    f.outer = obj.rfind("libprof", 0) == 0;
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
  for (const Source& s : *g_sources) {
    const int i = ts->n;
    ts->fd[i] = -1;
    ts->ring[i] = nullptr;
    ts->has_timer[i] = false;
    if (s.kind == kTimer) {
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
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->sampler = ts;
}

void thread_end(Location* loc) {
  auto* ts = static_cast<ThreadSources*>(loc->sampler);
  if (!ts) return;
  loc->sampler = nullptr;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  check_unsampled(loc, ts->tid);
  const long page = ::sysconf(_SC_PAGESIZE);
  for (int i = 0; i < ts->n; ++i) {
    if (ts->fd[i] >= 0) {
      ::ioctl(ts->fd[i], PERF_EVENT_IOC_DISABLE, 0);
      if (ts->ring[i]) ::munmap(ts->ring[i], static_cast<std::size_t>(2 * page));
      ::close(ts->fd[i]);
    }
    if (ts->has_timer[i]) ::timer_delete(ts->timer[i]);
  }
  delete ts;
}

void stop() {
  g_running.store(false);
  // The finalizing thread's own sources: no more signals (and EINTR) during the write-out.
  if (Location* loc = tls_location) thread_end(loc);
}

void check_unsampled_threads(const std::vector<Location*>& locs) {
  for (const Location* loc : locs)
    if (const auto* ts = static_cast<const ThreadSources*>(loc->sampler)) check_unsampled(loc, ts->tid);
}

std::string unsampled_warning() {
  const std::uint32_t n = g_unsampled_threads.load();
  if (!n) return {};
  char text[512];
  const std::uint32_t blocking = g_unsampled_blocking.load();
  std::snprintf(text, sizeof text,
                "sampling: %u thread%s ran %.1f s of CPU time without a single sample%s; their time is missing from "
                "the samples (prof samples through a signal, SIGRTMIN+5, which a thread that blocks all signals, as some "
                "libraries' worker threads do, never takes); measure their functions with prof-wrap's instrumentation",
                n, n == 1 ? "" : "s", static_cast<double>(g_unsampled_ns.load()) * 1e-9,
                blocking == n ? ": they block prof's sampling signal"
                : blocking   ? (std::string(": ") + std::to_string(blocking) + " of them block prof's sampling signal").c_str()
                             : "");
  return text;
}

void attribute_prof_samples(Location* loc) {
  if (!g_on || !loc->profiling || loc->samples_in_prof == 0) return;
  static const RegionId prof_region = [] {
    regions::RegionDef d;
    d.name = d.canonical = "prof (measurement system)";
    d.paradigm = regions::Paradigm::Measurement;
    d.role = regions::Role::Artificial;
    return regions::define(d);
  }();
  if (ProfileNode* n = detail::attach_child(loc, &loc->root_node, prof_region)) {
    if (!loc->hits) loc->hits = new std::unordered_map<const ProfileNode*, std::uint64_t>;
    (*loc->hits)[n] += loc->samples_in_prof;
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
