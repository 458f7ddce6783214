// SPDX-License-Identifier: BSD-3-Clause
// Hardware and OS metrics: PROF_METRIC_PAPI (one PAPI event set per thread),
// PROF_METRIC_PAPI_PER_PROCESS (one event set, read by the process's first location),
// PROF_METRIC_PERF (perf_event_open counters of the thread, without PAPI) and
// PROF_METRIC_RUSAGE (getrusage(RUSAGE_THREAD) fields). Their values are read at every recorded
// Enter and Leave (events.hpp): they ride in the records' payload slots into the trace (OTF2
// Metric events) and are summed per call path for the profile (one Cube metric each).
// PAPI is loaded with dlopen only when a PAPI variable is set: programs without metrics never
// depend on libpapi.
#pragma once

#include <dlfcn.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "measurement/compiler.hpp"

namespace prof {
struct Location;
}

namespace prof::metrics {

/// At most this many values per event (all sources together).
constexpr unsigned kMaxMetrics = 24;

/// The getrusage fields PROF_METRIC_RUSAGE accepts, with a short description each (also for
/// prof-info, which links no core: header only).
struct RusageField {
  const char* name;
  const char* description;
  const char* unit;
};
inline const std::vector<RusageField>& rusage_fields() {
  // Never destroyed (measurement/immortal.hpp says why).
  static const std::vector<RusageField>* fields = new std::vector<RusageField>{
      {"ru_utime", "user CPU time", "usec"},
      {"ru_stime", "system CPU time", "usec"},
      {"ru_maxrss", "maximum resident set size of the process (a delta is the growth of the peak)", "KiB"},
      {"ru_minflt", "page faults served without I/O (minor)", "#"},
      {"ru_majflt", "page faults that needed I/O (major)", "#"},
      {"ru_inblock", "block input operations", "#"},
      {"ru_oublock", "block output operations", "#"},
      {"ru_nvcsw", "voluntary context switches (the thread waited)", "#"},
      {"ru_nivcsw", "involuntary context switches (the thread was preempted)", "#"},
  };
  return *fields;
}

/// The events PROF_METRIC_PERF accepts, by the perf tool's names (also for prof-info).
struct PerfEventName {
  const char* name;
  std::uint32_t type;  ///< PERF_TYPE_SOFTWARE, _HARDWARE or _HW_CACHE
  std::uint64_t config;
  const char* description;
  const char* unit;
  bool kernel;  ///< happens in the kernel (a switch, a migration): counted in the kernel domain
};
inline const std::vector<PerfEventName>& perf_event_names() {
  constexpr std::uint64_t kRead = PERF_COUNT_HW_CACHE_OP_READ << 8, kAccess = PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16,
                          kMiss = PERF_COUNT_HW_CACHE_RESULT_MISS << 16;
  static const std::vector<PerfEventName>* names = new std::vector<PerfEventName>{
      {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "CPU time of the thread", "ns", false},
      {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "CPU clock while the thread runs", "ns", false},
      {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults", "#", false},
      {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "page faults served without I/O", "#", false},
      {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "page faults that needed I/O", "#", false},
      {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "alignment faults", "#", false},
      {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "emulation faults", "#", false},
      {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches of the thread", "#", true},
      {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "moves of the thread to another CPU", "#", true},
      {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles", "#", false},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions retired", "#", false},
      {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "cache accesses (usually the last level)", "#", false},
      {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache misses (usually the last level)", "#", false},
      {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branch instructions retired", "#", false},
      {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "mispredicted branches", "#", false},
      {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus cycles", "#", false},
      {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "reference cycles (not scaled by frequency)", "#", false},
      {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles the front end stalled", "#", false},
      {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles the back end stalled", "#", false},
      {"L1-dcache-loads", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D | kRead | kAccess, "L1 data cache loads", "#", false},
      {"L1-dcache-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D | kRead | kMiss, "L1 data cache load misses", "#", false},
      {"LLC-loads", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL | kRead | kAccess, "last-level cache loads", "#", false},
      {"LLC-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL | kRead | kMiss, "last-level cache load misses", "#", false},
      {"dTLB-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB | kRead | kMiss, "data TLB load misses", "#", false},
      {"iTLB-load-misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_ITLB | kRead | kMiss, "instruction TLB load misses", "#", false},
  };
  return *names;
}

/// A PROF_METRIC_PERF item: a perf_event_names() name or a raw PMU event `r<hex>`, optionally with
/// the perf tool's domain modifier `:u` (user space), `:k` (kernel) or `:uk` (both). Without one, a
/// kernel event counts in the kernel domain and every other event in user space only (what
/// perf_event_paranoid 2, the usual default, allows everyone). False: not such a name.
struct PerfSpec {
  std::uint32_t type = 0;
  std::uint64_t config = 0;
  bool user = true, kernel = false;
  bool hardware = false;  ///< needs the CPU's PMU (hardware, cache or raw event)
  const PerfEventName* known = nullptr;  ///< nullptr for r<hex>
};
inline bool parse_perf_event(const std::string& item, PerfSpec* out) {
  std::string name = item, mod;
  if (const std::size_t colon = item.find(':'); colon != std::string::npos) {
    name = item.substr(0, colon);
    mod = item.substr(colon + 1);
    if (mod != "u" && mod != "k" && mod != "uk" && mod != "ku") return false;
  }
  PerfSpec s;
  for (const PerfEventName& n : perf_event_names())
    if (name == n.name) s.known = &n;
  if (s.known) {
    s.type = s.known->type;
    s.config = s.known->config;
    s.kernel = s.known->kernel;
    s.user = !s.known->kernel;
  } else if (name.size() >= 2 && name.size() <= 17 && name[0] == 'r' &&
             name.find_first_not_of("0123456789abcdefABCDEF", 1) == std::string::npos) {
    s.type = PERF_TYPE_RAW;
    s.config = std::strtoull(name.c_str() + 1, nullptr, 16);
    s.user = true;
  } else {
    return false;
  }
  s.hardware = s.type != PERF_TYPE_SOFTWARE;
  if (!mod.empty()) {
    s.user = mod.find('u') != std::string::npos;
    s.kernel = mod.find('k') != std::string::npos;
  }
  *out = s;
  return true;
}

/// Opens `s` as a counter of the calling thread (any CPU), counting from now, in the group of
/// `group_fd` (-1: a new group, read with one read() of PERF_FORMAT_GROUP: the number of values,
/// the time enabled and running in ns, then the values). The fd, or -errno.
inline int open_perf_event(const PerfSpec& s, int group_fd) {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = s.type;
  a.config = s.config;
  a.exclude_user = !s.user;
  a.exclude_kernel = !s.kernel;
  a.exclude_hv = 1;
  a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  const long fd = ::syscall(SYS_perf_event_open, &a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
  return fd >= 0 ? static_cast<int>(fd) : -errno;
}

/// /proc/sys/kernel/perf_event_paranoid, or INT_MIN when unreadable.
inline int perf_event_paranoid() {
  int level = INT_MIN;
  if (FILE* f = std::fopen("/proc/sys/kernel/perf_event_paranoid", "r")) {
    if (std::fscanf(f, "%d", &level) != 1) level = INT_MIN;
    std::fclose(f);
  }
  return level;
}

/// Why perf_event_open refused `s` with -`neg_errno`, and what to do: "<cause>; <fix>" (for the
/// error line and prof-info).
inline std::string perf_open_error(const PerfSpec& s, int neg_errno) {
  const int e = -neg_errno;
  const std::string said = std::string("(perf_event_open: ") + std::strerror(e) + ")";
  if (e == EACCES || e == EPERM) {
    const int level = perf_event_paranoid(), needed = s.kernel ? 1 : 2;
    const std::string cause = "is not permitted here " + said +
                              (level != INT_MIN ? ", perf_event_paranoid is " + std::to_string(level) : std::string());
    const std::string without = s.known && s.known->kernel ? " (PROF_METRIC_RUSAGE=ru_nvcsw,ru_nivcsw needs no permission)" : "";
    if (level == INT_MIN || level > needed)
      return cause + "; as root: sysctl kernel.perf_event_paranoid=" + std::to_string(needed) +
             ", or give the program CAP_PERFMON" + without;
    return cause + "; something else forbids perf_event_open to this process (a container's seccomp profile?): "
                   "allow it, e.g. docker run --cap-add PERFMON" + without;
  }
  if (e == EMFILE || e == ENFILE) return "cannot be opened " + said + "; raise the limit of open files (ulimit -n)";
  if (s.hardware && (e == ENOENT || e == EOPNOTSUPP || e == ENODEV || e == EINVAL))
    return "cannot be counted on this machine " + said +
           ": no hardware PMU is visible (e.g. in a VM) or it has no such event; software events such as task-clock "
           "work everywhere (prof-info metrics)";
  if (e == ENOSYS) return "cannot be counted " + said + ": the kernel has no perf events; use PROF_METRIC_RUSAGE";
  return "cannot be counted on this machine " + said + "; prof-info metrics lists what can";
}

/// libpapi of PAPI 7.x, opened privately (RTLD_LOCAL), and the argument its PAPI_library_init
/// wants: the library's own PAPI_VER_CURRENT (major and minor), which a library loaded at run time
/// need not share with the header prof was built with. It is read from the library's file name
/// (libpapi.so.7.<minor>...). nullptr when no PAPI 7 is installed. Header only: prof-info uses it.
inline void* open_papi(int* version) {
  const auto ver = [](int minor) { return (7 << 24) | (minor << 16); };
  for (int minor = 3; minor >= 0; --minor) {
    const std::string name = "libpapi.so.7." + std::to_string(minor);
    if (void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      *version = ver(minor);
      return h;
    }
  }
  void* h = ::dlopen("libpapi.so", RTLD_NOW | RTLD_LOCAL);
  Dl_info info;
  void* sym = h ? ::dlsym(h, "PAPI_library_init") : nullptr;
  char real[4096];
  if (!sym || !::dladdr(sym, &info) || !info.dli_fname || !::realpath(info.dli_fname, real)) {
    if (h) ::dlclose(h);
    return nullptr;
  }
  const char* at = std::strstr(real, "libpapi.so.7.");
  if (!at) {
    ::dlclose(h);
    return nullptr;
  }
  *version = ver(std::atoi(at + std::strlen("libpapi.so.7.")));
  return h;
}

/// One metric as the trace and the profile define it.
struct MetricDef {
  std::string name;         ///< the event or field name as the user gave it
  std::string description;
  std::string unit;         ///< "#" for counts
  bool papi = false;        ///< a PAPI event (else a getrusage field)
  bool per_process = false; ///< PROF_METRIC_PAPI_PER_PROCESS: only the process's first location has it
  bool absolute = false;    ///< a level at the time of reading (ru_maxrss: the peak so far), not a count since the start
};

/// Checks the metric variables (a bad one is fatal, with the fix), loads PAPI and sets up its
/// thread support. Before any location exists (runtime::init).
void init();
/// Metrics configured: every thread location reads them.
bool on();
/// All metrics: the per-thread ones (PAPI, then rusage), then the per-process ones. A location
/// records the first `location_count(first)` of them.
const std::vector<MetricDef>& defs();
/// Values per event of a thread's location; `first`: the process's first location, which also
/// reads the per-process events.
unsigned location_count(bool first);

/// The calling thread's sources for `loc` (its own, new location): event sets created and
/// started, storage for the shadow stack's values, the starting values read. Sets
/// loc->metric_count (stays 0 when no metric is on). A source that fails here is reported once
/// and the location records no metrics.
void thread_start(Location* loc);
/// The thread's final values are read (for its call tree's root) and its sources released.
/// The owning thread, at its end or at finalize.
void thread_end(Location* loc);
/// Reads loc's current values into `out` (loc->metric_count of them). Another thread than the
/// owner (closing the frames of a live thread at finalize) gets the last values read. errno kept.
PROF_COLD void read(Location* loc, std::uint64_t* out);
/// In a fork's child: the calling thread's event sets are the parent's (shared perf file
/// descriptors); they are dropped without a PAPI call.
void forget_after_fork();
/// The values a location accumulated from its start to its end (or its last read): for the
/// root of its call tree. False when it has no metrics.
bool totals(const Location* loc, std::vector<std::uint64_t>* out);

}  // namespace prof::metrics
