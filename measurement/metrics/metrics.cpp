// SPDX-License-Identifier: BSD-3-Clause
// See metrics.hpp.
#include "measurement/metrics/metrics.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/resource.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <type_traits>

#if __has_include(<papi.h>)
#include <papi.h>
#define PROF_HAVE_PAPI_H 1
#endif

#include "measurement/config/config.hpp"
#include "measurement/location.hpp"
#include "measurement/log.hpp"

namespace prof::metrics {

namespace {

// The PAPI entry points prof uses, loaded from libpapi at run time (PAPI 7's ABI).
constexpr int kPapiOk = 0;
constexpr int kPapiNull = -1;
constexpr int kPapiPermission = -15;         // PAPI_EPERM
constexpr int kPapiComponentDisabled = -25;  // PAPI_ECMP_DISABLED
struct Papi {
  int (*library_init)(int) = nullptr;
  int (*thread_init)(unsigned long (*)(void)) = nullptr;
  int (*unregister_thread)(void) = nullptr;
  int (*create_eventset)(int*) = nullptr;
  int (*add_named_event)(int, const char*) = nullptr;
  int (*event_name_to_code)(const char*, int*) = nullptr;
  int (*get_event_info)(int, void*) = nullptr;
  int (*start)(int) = nullptr;
  int (*stop)(int, long long*) = nullptr;
  int (*read)(int, long long*) = nullptr;
  int (*cleanup_eventset)(int) = nullptr;
  int (*destroy_eventset)(int*) = nullptr;
  char* (*strerror)(int) = nullptr;
};

Papi g_papi;
std::vector<MetricDef>* g_defs = nullptr;  // leaked: read until exit
unsigned g_thread_papi = 0, g_rusage = 0, g_process_papi = 0;
std::vector<std::string> g_papi_events, g_process_events;
std::vector<unsigned> g_rusage_fields;  // indices into rusage_fields()
std::atomic<bool> g_thread_failure_reported{false};

unsigned long thread_id() { return static_cast<unsigned long>(::pthread_self()); }

bool load(Papi* p, std::string* why) {
  void* h = ::dlopen("libpapi.so.7.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) h = ::dlopen("libpapi.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    *why = "libpapi is not installed (Debian: libpapi7.0, or libpapi-dev)";
    return false;
  }
  auto sym = [&](auto& f, const char* name) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(::dlsym(h, name));
    return f != nullptr;
  };
  const bool ok = sym(p->library_init, "PAPI_library_init") && sym(p->thread_init, "PAPI_thread_init") &&
                  sym(p->unregister_thread, "PAPI_unregister_thread") && sym(p->create_eventset, "PAPI_create_eventset") &&
                  sym(p->add_named_event, "PAPI_add_named_event") && sym(p->event_name_to_code, "PAPI_event_name_to_code") &&
                  sym(p->get_event_info, "PAPI_get_event_info") && sym(p->start, "PAPI_start") && sym(p->stop, "PAPI_stop") &&
                  sym(p->read, "PAPI_read") && sym(p->cleanup_eventset, "PAPI_cleanup_eventset") &&
                  sym(p->destroy_eventset, "PAPI_destroy_eventset") && sym(p->strerror, "PAPI_strerror");
  if (!ok) {
    *why = "libpapi lacks PAPI_* functions prof uses (an unsupported PAPI version?)";
    return false;
  }
  // PAPI_VER_CURRENT of PAPI 7: major 7, minor 0 (PAPI_VERSION_NUMBER(7,0,0,0) & 0xffff0000).
  const int want = (7 << 24);
  const int got = p->library_init(want);
  if (got != want) {
    *why = std::string("PAPI_library_init failed (") + (got < 0 ? p->strerror(got) : "version mismatch") + ")";
    return false;
  }
  // Every thread then counts its own events in its own event sets.
  const int rc = p->thread_init(&thread_id);
  if (rc != kPapiOk) {
    *why = std::string("PAPI_thread_init failed (") + p->strerror(rc) + ")";
    return false;
  }
  return true;
}

std::vector<std::string> split(const std::string& list, const std::string& sep) {
  std::vector<std::string> out;
  if (list.empty()) return out;
  const std::string s = sep.empty() ? "," : sep;
  std::size_t at = 0;
  while (true) {
    const std::size_t end = list.find(s, at);
    out.push_back(list.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + s.size();
  }
  return out;
}

const char* papi_error(int rc) {
  const char* e = g_papi.strerror ? g_papi.strerror(rc) : nullptr;
  return e ? e : "unknown PAPI error";
}

// Every event of `var` on one event set, started and stopped once: a name PAPI does not know, an
// event this machine cannot count, and events that cannot be counted together each stop the
// program with one line. `before` (checked already) goes into the set first: the per-process
// events share the first thread's event set with its per-thread ones (PAPI runs one event set
// per thread and component at a time).
void check_papi(const char* var, const std::string& list, const std::vector<std::string>& events,
                const std::vector<std::string>& before = {}) {
  int set = kPapiNull;
  if (g_papi.create_eventset(&set) != kPapiOk) log::fatal("%s: PAPI could not create an event set", var);
  std::string added;
  for (const std::string& e : before) {
    if (g_papi.add_named_event(set, e.c_str()) == kPapiOk) added += (added.empty() ? "" : ", ") + e;
  }
  for (const std::string& e : events) {
    int code = 0;
    if (e.empty()) log::fatal("%s='%s': an empty event name; give a comma list such as PAPI_TOT_CYC,PAPI_TOT_INS", var, list.c_str());
    for (std::size_t i = 0; i < static_cast<std::size_t>(&e - events.data()); ++i)
      if (events[i] == e) log::fatal("%s='%s': '%s' is given twice; name each event once", var, list.c_str(), e.c_str());
    for (const std::string& b : before)
      if (b == e) log::fatal("%s: '%s' is in PROF_METRIC_PAPI too; name each event once", var, e.c_str());
    int rc = g_papi.event_name_to_code(e.c_str(), &code);
    if (rc != kPapiOk)
      log::fatal("%s: '%s' is not an event PAPI knows (PAPI: %s); papi_avail and papi_native_avail (or prof-info metrics) "
                 "list the events of this machine",
                 var, e.c_str(), papi_error(rc));
    rc = g_papi.add_named_event(set, e.c_str());
    if (rc != kPapiOk) {
      if (rc == kPapiComponentDisabled)
        log::fatal("%s: '%s' cannot be counted here: PAPI's component for it is disabled (PAPI: %s); papi_component_avail "
                   "says why (often a CPU that PAPI's libpfm does not know, or a VM without a PMU)",
                   var, e.c_str(), papi_error(rc));
      if (rc == kPapiPermission)
        log::fatal("%s: '%s' is not permitted here (PAPI: %s); as root: sysctl kernel.perf_event_paranoid=1, or give the "
                   "program CAP_PERFMON",
                   var, e.c_str(), papi_error(rc));
      if (!added.empty())
        log::fatal("%s: '%s' cannot be counted together with %s on this machine (PAPI: %s); measure them in separate runs",
                   var, e.c_str(), added.c_str(), papi_error(rc));
      log::fatal("%s: '%s' cannot be counted on this machine (PAPI: %s); a VM often has no hardware counters: "
                 "software events such as perf::TASK-CLOCK work there (papi_avail -a, prof-info metrics)",
                 var, e.c_str(), papi_error(rc));
    }
    added += (added.empty() ? "" : ", ") + e;
  }
  int rc = g_papi.start(set);
  if (rc != kPapiOk) log::fatal("%s: PAPI cannot start %s on this machine (PAPI: %s)", var, added.c_str(), papi_error(rc));
  long long values[kMaxMetrics] = {};
  g_papi.stop(set, values);
  g_papi.cleanup_eventset(set);
  g_papi.destroy_eventset(&set);
}

MetricDef papi_def(const std::string& name, bool per_process) {
  MetricDef d;
  d.name = name;
  d.papi = true;
  d.per_process = per_process;
  d.unit = "#";
  d.description = "PAPI event " + name;
#ifdef PROF_HAVE_PAPI_H
  int code = 0;
  PAPI_event_info_t info;
  std::memset(&info, 0, sizeof info);
  if (g_papi.event_name_to_code(name.c_str(), &code) == kPapiOk && g_papi.get_event_info(code, &info) == kPapiOk) {
    if (info.long_descr[0]) d.description = info.long_descr;
    if (info.units[0]) d.unit = info.units;
  }
#endif
  // perf's clock events count nanoseconds (the perf_event ABI), which PAPI does not say.
  if (d.unit == "#" && (name.find("TASK-CLOCK") != std::string::npos || name.find("CPU-CLOCK") != std::string::npos))
    d.unit = "ns";
  return d;
}

// The per-thread state behind Location::metric_state. Owner thread only, except `last`, which
// another thread reads once the owner's frames are closed for it at finalize.
struct ThreadState {
  // PROF_METRIC_PAPI, and for the first location PROF_METRIC_PAPI_PER_PROCESS after them: PAPI
  // runs one event set per thread (and component) at a time.
  int set = kPapiNull;
  unsigned papi = 0;  // events in `set`
  bool stopped = false;
  std::uint64_t start[kMaxMetrics] = {};
  std::uint64_t last[kMaxMetrics] = {};
};

std::uint64_t rusage_value(const struct rusage& ru, unsigned field) {
  auto us = [](const timeval& tv) { return static_cast<std::uint64_t>(tv.tv_sec) * 1000000u + static_cast<std::uint64_t>(tv.tv_usec); };
  switch (field) {
    case 0: return us(ru.ru_utime);
    case 1: return us(ru.ru_stime);
    case 2: return static_cast<std::uint64_t>(ru.ru_maxrss);
    case 3: return static_cast<std::uint64_t>(ru.ru_minflt);
    case 4: return static_cast<std::uint64_t>(ru.ru_majflt);
    case 5: return static_cast<std::uint64_t>(ru.ru_inblock);
    case 6: return static_cast<std::uint64_t>(ru.ru_oublock);
    case 7: return static_cast<std::uint64_t>(ru.ru_nvcsw);
    case 8: return static_cast<std::uint64_t>(ru.ru_nivcsw);
  }
  return 0;
}

// Values in the order of defs(): per-thread PAPI events, rusage fields, per-process PAPI events.
void read_sources(const ThreadState& st, std::uint64_t* out) {
  if (st.papi) {
    long long v[kMaxMetrics];
    const bool ok = g_papi.read(st.set, v) == kPapiOk;
    for (unsigned i = 0; i < st.papi; ++i) {
      const unsigned at = i < g_thread_papi ? i : i + g_rusage;
      out[at] = ok ? static_cast<std::uint64_t>(v[i]) : st.last[at];
    }
  }
  if (g_rusage) {
    struct rusage ru;
    const bool ok = ::getrusage(RUSAGE_THREAD, &ru) == 0;
    for (unsigned i = 0; i < g_rusage; ++i) out[g_thread_papi + i] = ok ? rusage_value(ru, g_rusage_fields[i]) : st.last[g_thread_papi + i];
  }
}

// A started event set of `events`, or kPapiNull (with the reason in *rc).
int start_set(const std::vector<std::string>& events, int* rc) {
  int set = kPapiNull;
  *rc = g_papi.create_eventset(&set);
  if (*rc != kPapiOk) return kPapiNull;
  for (const std::string& e : events) {
    *rc = g_papi.add_named_event(set, e.c_str());
    if (*rc != kPapiOk) break;
  }
  if (*rc == kPapiOk) *rc = g_papi.start(set);
  if (*rc != kPapiOk) {
    g_papi.cleanup_eventset(set);
    g_papi.destroy_eventset(&set);
    return kPapiNull;
  }
  return set;
}

void stop_set(int* set) {
  if (*set == kPapiNull) return;
  long long v[kMaxMetrics];
  g_papi.stop(*set, v);
  g_papi.cleanup_eventset(*set);
  g_papi.destroy_eventset(set);
  *set = kPapiNull;
}

}  // namespace

void init() {
  const config::Values& v = config::g_values;
  for (const std::string& f : split(v.metric_rusage, v.metric_rusage_sep)) {
    if (f == "all") {
      g_rusage_fields.clear();
      for (unsigned i = 0; i < rusage_fields().size(); ++i) g_rusage_fields.push_back(i);
      break;
    }
    bool known = false;
    for (unsigned i = 0; i < rusage_fields().size(); ++i)
      if (f == rusage_fields()[i].name) {
        known = true;
        bool dup = false;
        for (unsigned j : g_rusage_fields) dup = dup || j == i;
        if (!dup) g_rusage_fields.push_back(i);
      }
    if (!known) {
      std::string names;
      for (const RusageField& r : rusage_fields()) names += std::string(names.empty() ? "" : ", ") + r.name;
      log::fatal("PROF_METRIC_RUSAGE='%s': '%s' is not a getrusage field; give all or some of %s (prof-info metrics)",
                 v.metric_rusage.c_str(), f.c_str(), names.c_str());
    }
  }
  g_papi_events = split(v.metric_papi, v.metric_papi_sep);
  g_process_events = split(v.metric_papi_per_process, v.metric_papi_sep);
  const std::size_t total = g_papi_events.size() + g_rusage_fields.size() + g_process_events.size();
  if (total > kMaxMetrics)
    log::fatal("PROF_METRIC_*: %zu metrics are configured, prof records at most %u per event; choose fewer", total, kMaxMetrics);
  if (!g_papi_events.empty() || !g_process_events.empty()) {
    std::string why;
    if (!load(&g_papi, &why))
      log::fatal("PROF_METRIC_PAPI: %s; install PAPI, or leave PROF_METRIC_PAPI and PROF_METRIC_PAPI_PER_PROCESS empty",
                 why.c_str());
    if (!g_papi_events.empty()) check_papi("PROF_METRIC_PAPI", v.metric_papi, g_papi_events);
    if (!g_process_events.empty())
      check_papi("PROF_METRIC_PAPI_PER_PROCESS", v.metric_papi_per_process, g_process_events, g_papi_events);
  }
  g_thread_papi = static_cast<unsigned>(g_papi_events.size());
  g_rusage = static_cast<unsigned>(g_rusage_fields.size());
  g_process_papi = static_cast<unsigned>(g_process_events.size());
  auto* defs = new std::vector<MetricDef>;
  for (const std::string& e : g_papi_events) defs->push_back(papi_def(e, false));
  for (unsigned f : g_rusage_fields) {
    MetricDef d;
    d.name = rusage_fields()[f].name;
    d.description = std::string("getrusage(RUSAGE_THREAD): ") + rusage_fields()[f].description;
    d.unit = rusage_fields()[f].unit;
    d.absolute = d.name == "ru_maxrss";
    defs->push_back(d);
  }
  for (const std::string& e : g_process_events) defs->push_back(papi_def(e, true));
  g_defs = defs;
  if (!defs->empty()) {
    std::string names;
    for (const MetricDef& d : *defs) names += (names.empty() ? "" : ", ") + d.name;
    log::info(1, "metrics: %s at every recorded enter and leave", names.c_str());
  }
}

bool on() { return g_defs && !g_defs->empty(); }

const std::vector<MetricDef>& defs() {
  static const std::vector<MetricDef> none;
  return g_defs ? *g_defs : none;
}

unsigned location_count(bool first) { return g_thread_papi + g_rusage + (first ? g_process_papi : 0); }

void thread_start(Location* loc) {
  const bool first = loc->index == 0;
  if (!on() || loc->detached || location_count(first) == 0) return;
  auto* st = new ThreadState;
  std::vector<std::string> events = g_papi_events;
  if (first) events.insert(events.end(), g_process_events.begin(), g_process_events.end());
  st->papi = static_cast<unsigned>(events.size());
  int rc = kPapiOk;
  if (st->papi && (st->set = start_set(events, &rc)) == kPapiNull) {
    // Checked at start on the first thread; a later thread can still fail (out of file
    // descriptors, counters taken by another tool).
    if (!g_thread_failure_reported.exchange(true))
      log::warning("metrics: the PAPI events could not be started on thread '%s' (PAPI: %s); that thread records no metrics",
                   loc->name.c_str(), papi_error(rc));
    g_papi.unregister_thread();
    delete st;
    return;
  }
  loc->metric_state = st;
  loc->metric_class = first && g_process_papi ? 1 : 0;
  loc->metric_count = static_cast<std::uint8_t>(location_count(first));
  // Values of the open frames: as many rows as the shadow stack has frames.
  std::uint32_t cap = loc->capacity ? loc->capacity : 256;
  loc->metric_frames = static_cast<std::uint64_t*>(std::calloc(std::size_t{cap} * loc->metric_count, sizeof(std::uint64_t)));
  PROF_BUG_ON(!loc->metric_frames, "out of memory for the metric values of the shadow call stack");
  if (!loc->capacity) {
    loc->frames = static_cast<Frame*>(std::realloc(loc->frames, cap * sizeof(Frame)));
    PROF_BUG_ON(!loc->frames, "out of memory for the shadow call stack");
    loc->capacity = cap;
  }
  read_sources(*st, st->start);
  std::memcpy(st->last, st->start, sizeof st->start);
}

void read(Location* loc, std::uint64_t* out) {
  auto* st = static_cast<ThreadState*>(loc->metric_state);
  if (tls_location != loc || st->stopped) {
    std::memcpy(out, st->last, loc->metric_count * sizeof(std::uint64_t));
    return;
  }
  const int saved = errno;
  read_sources(*st, out);
  std::memcpy(st->last, out, loc->metric_count * sizeof(std::uint64_t));
  errno = saved;
}

void thread_end(Location* loc) {
  auto* st = static_cast<ThreadState*>(loc->metric_state);
  if (!st || st->stopped || tls_location != loc) return;
  std::uint64_t now[kMaxMetrics];
  read(loc, now);  // the end of the root's visit
  st->stopped = true;
  const int saved = errno;
  if (st->papi) {
    stop_set(&st->set);
    g_papi.unregister_thread();
  }
  errno = saved;
}

bool totals(const Location* loc, std::vector<std::uint64_t>* out) {
  const auto* st = static_cast<const ThreadState*>(loc->metric_state);
  if (!st || !loc->metric_count) return false;
  out->resize(loc->metric_count);
  for (unsigned i = 0; i < loc->metric_count; ++i) (*out)[i] = st->last[i] >= st->start[i] ? st->last[i] - st->start[i] : 0;
  return true;
}

}  // namespace prof::metrics
