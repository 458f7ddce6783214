// SPDX-License-Identifier: BSD-3-Clause
// Hardware and OS metrics: PROF_METRIC_PAPI (one PAPI event set per thread),
// PROF_METRIC_PAPI_PER_PROCESS (one event set, read by the process's first location) and
// PROF_METRIC_RUSAGE (getrusage(RUSAGE_THREAD) fields). Their values are read at every recorded
// Enter and Leave (events.hpp): they ride in the records' payload slots into the trace (OTF2
// Metric events) and are summed per call path for the profile (one Cube metric each).
// PAPI is loaded with dlopen only when a PAPI variable is set: programs without metrics never
// depend on libpapi.
#pragma once

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

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
  static const std::vector<RusageField> fields = {
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
  return fields;
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
