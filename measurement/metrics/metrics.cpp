// SPDX-License-Identifier: BSD-3-Clause
// See metrics.hpp.
#include "measurement/metrics/metrics.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

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
#include "measurement/events.hpp"
#include "measurement/immortal.hpp"
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
  int (*get_event_component)(int) = nullptr;
  int (*get_event_info)(int, void*) = nullptr;
  int (*start)(int) = nullptr;
  int (*stop)(int, long long*) = nullptr;
  int (*read)(int, long long*) = nullptr;
  int (*cleanup_eventset)(int) = nullptr;
  int (*destroy_eventset)(int*) = nullptr;
  char* (*strerror)(int) = nullptr;
};

/// One PAPI event prof reads: its name, PAPI component and place in the values (defs() order).
struct PapiEvent {
  std::string name;
  int component = 0;
  unsigned at = 0;
};

Papi g_papi;
std::vector<MetricDef>* g_defs = nullptr;  // leaked: read until exit
unsigned g_thread_papi = 0, g_perf = 0, g_rusage = 0, g_process_papi = 0;
// The event lists live in Immortal storage (measurement/immortal.hpp: init may run before this
// file's static initialisers, hooks after exit's destructors), built by init() before any use.
Immortal<std::vector<PapiEvent>> g_thread_events_storage, g_process_events_storage;
Immortal<std::vector<unsigned>> g_rusage_fields_storage;
constexpr std::vector<PapiEvent>& g_thread_events = *g_thread_events_storage.address();    // PROF_METRIC_PAPI
constexpr std::vector<PapiEvent>& g_process_events = *g_process_events_storage.address();  // PROF_METRIC_PAPI_PER_PROCESS
constexpr std::vector<unsigned>& g_rusage_fields = *g_rusage_fields_storage.address();     // indices into rusage_fields()
std::atomic<bool> g_thread_failure_reported{false};

unsigned long thread_id() { return static_cast<unsigned long>(::pthread_self()); }

bool load(Papi* p, std::string* why) {
  int version = 0;
  void* h = open_papi(&version);
  if (!h) {
    *why = "libpapi (PAPI 7) is not installed (Debian: libpapi7.0, or libpapi-dev)";
    return false;
  }
  auto sym = [&](auto& f, const char* name) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(::dlsym(h, name));
    return f != nullptr;
  };
  const bool ok = sym(p->library_init, "PAPI_library_init") && sym(p->thread_init, "PAPI_thread_init") &&
                  sym(p->unregister_thread, "PAPI_unregister_thread") && sym(p->create_eventset, "PAPI_create_eventset") &&
                  sym(p->add_named_event, "PAPI_add_named_event") && sym(p->event_name_to_code, "PAPI_event_name_to_code") &&
                  sym(p->get_event_component, "PAPI_get_event_component") && sym(p->get_event_info, "PAPI_get_event_info") &&
                  sym(p->start, "PAPI_start") && sym(p->stop, "PAPI_stop") && sym(p->read, "PAPI_read") &&
                  sym(p->cleanup_eventset, "PAPI_cleanup_eventset") && sym(p->destroy_eventset, "PAPI_destroy_eventset") &&
                  sym(p->strerror, "PAPI_strerror");
  if (!ok) {
    *why = "libpapi lacks PAPI_* functions prof uses (an unsupported PAPI version?)";
    return false;
  }
  const int got = p->library_init(version);
  if (got != version) {
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

// The items of a metric list `var`: an empty item or one given twice stops the program.
std::vector<std::string> event_list(const char* var, const std::string& list, const std::string& sep, const char* example) {
  std::vector<std::string> out = split(list, sep);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].empty()) log::fatal("%s='%s': an empty event name; give a comma list such as %s", var, list.c_str(), example);
    for (std::size_t j = 0; j < i; ++j)
      if (out[j] == out[i]) log::fatal("%s='%s': '%s' is given twice; name each event once", var, list.c_str(), out[i].c_str());
  }
  return out;
}

const char* papi_error(int rc) {
  const char* e = g_papi.strerror ? g_papi.strerror(rc) : nullptr;
  return e ? e : "unknown PAPI error";
}

/// The event sets of one thread: PAPI runs one event set per component and thread at a time, so
/// the thread's events are grouped by component, one set each. Fixed size: read in the hot path
/// and the signal handler without allocation.
struct Sets {
  static constexpr unsigned kMax = 8;
  struct Set {
    int id = kPapiNull;
    int component = 0;
    unsigned n = 0;
    unsigned at[kMaxMetrics] = {};  // where each of its values goes
  };
  Set set[kMax];
  unsigned count = 0;

  Set* of(int component) {
    for (unsigned i = 0; i < count; ++i)
      if (set[i].component == component) return &set[i];
    if (count == kMax) return nullptr;
    set[count].component = component;
    return &set[count++];
  }
  void stop_all() {
    long long v[kMaxMetrics];
    for (unsigned i = 0; i < count; ++i) {
      if (set[i].id == kPapiNull) continue;
      g_papi.stop(set[i].id, v);
      g_papi.cleanup_eventset(set[i].id);
      g_papi.destroy_eventset(&set[i].id);
      set[i].id = kPapiNull;
    }
  }
};

/// Creates the sets of `events` (grouped by component), adds them, starts every set. On failure
/// *rc is PAPI's error, *failed the event (nullptr: PAPI_start) and *with the events already in
/// its set; everything made is released.
bool start_sets(const std::vector<const PapiEvent*>& events, Sets* sets, int* rc, const PapiEvent** failed, std::string* with) {
  *rc = kPapiOk;
  *failed = nullptr;
  for (const PapiEvent* e : events) {
    Sets::Set* s = sets->of(e->component);
    if (!s) {
      *rc = -1;
      *failed = e;
      break;
    }
    if (s->id == kPapiNull && (*rc = g_papi.create_eventset(&s->id)) != kPapiOk) {
      *failed = e;
      break;
    }
    if ((*rc = g_papi.add_named_event(s->id, e->name.c_str())) != kPapiOk) {
      *failed = e;
      if (with)
        for (const PapiEvent* o : events) {
          if (o == e) break;
          if (o->component == e->component) *with += (with->empty() ? "" : ", ") + o->name;
        }
      break;
    }
    s->at[s->n++] = e->at;
  }
  unsigned started = 0;
  for (; *rc == kPapiOk && started < sets->count; ++started)
    if ((*rc = g_papi.start(sets->set[started].id)) != kPapiOk) break;
  if (*rc != kPapiOk) {
    long long v[kMaxMetrics];
    for (unsigned i = 0; i < sets->count; ++i) {
      if (sets->set[i].id == kPapiNull) continue;
      if (i < started) g_papi.stop(sets->set[i].id, v);  // a running set cannot be cleaned up
      g_papi.cleanup_eventset(sets->set[i].id);
      g_papi.destroy_eventset(&sets->set[i].id);
    }
    sets->count = 0;
    return false;
  }
  return true;
}

// The events of `var` (names checked, components looked up); `others` (checked already) are the
// events they will share the first thread with: duplicates across both are an error. A name PAPI
// does not know, an empty item and a name given twice stop the program with one line.
std::vector<PapiEvent> parse_papi(const char* var, const std::string& list, const std::string& sep,
                                  const std::vector<PapiEvent>& others) {
  std::vector<PapiEvent> out;
  for (const std::string& e : event_list(var, list, sep, "PAPI_TOT_CYC,PAPI_TOT_INS")) {
    for (const PapiEvent& o : others)
      if (o.name == e) log::fatal("%s: '%s' is in PROF_METRIC_PAPI too; name each event once", var, e.c_str());
    int code = 0;
    const int rc = g_papi.event_name_to_code(e.c_str(), &code);
    if (rc != kPapiOk)
      log::fatal("%s: '%s' is not an event PAPI knows (PAPI: %s); papi_avail and papi_native_avail (or prof-info metrics) "
                 "list the events of this machine",
                 var, e.c_str(), papi_error(rc));
    const int component = g_papi.get_event_component(code);
    out.push_back({e, component < 0 ? 0 : component, 0});
  }
  return out;
}

// The first thread's whole configuration, started and stopped once here: an event this machine
// cannot count, or events that cannot be counted together, stop the program with PAPI's reason.
void check_papi() {
  std::vector<const PapiEvent*> all;
  for (const PapiEvent& e : g_thread_events) all.push_back(&e);
  for (const PapiEvent& e : g_process_events) all.push_back(&e);
  Sets sets;
  int rc = kPapiOk;
  const PapiEvent* failed = nullptr;
  std::string with;
  if (start_sets(all, &sets, &rc, &failed, &with)) {
    sets.stop_all();
    return;
  }
  const char* var = failed && failed >= g_process_events.data() && failed < g_process_events.data() + g_process_events.size()
                        ? "PROF_METRIC_PAPI_PER_PROCESS"
                        : "PROF_METRIC_PAPI";
  if (!failed) {
    std::string names;
    for (const PapiEvent* e : all) names += (names.empty() ? "" : ", ") + e->name;
    log::fatal("PROF_METRIC_PAPI: PAPI cannot start %s on this machine (PAPI: %s); measure fewer events per run", names.c_str(),
               papi_error(rc));
  }
  const char* e = failed->name.c_str();
  if (rc == kPapiComponentDisabled)
    log::fatal("%s: '%s' cannot be counted here: PAPI's component for it is disabled (PAPI: %s); papi_component_avail "
               "says why (often a CPU that PAPI's libpfm does not know, or a VM without a PMU)",
               var, e, papi_error(rc));
  if (rc == kPapiPermission)
    log::fatal("%s: '%s' is not permitted here (PAPI: %s); as root: sysctl kernel.perf_event_paranoid=1, or give the "
               "program CAP_PERFMON",
               var, e, papi_error(rc));
  if (!with.empty())
    log::fatal("%s: '%s' cannot be counted together with %s on this machine (PAPI: %s); measure them in separate runs", var, e,
               with.c_str(), papi_error(rc));
  log::fatal("%s: '%s' cannot be counted on this machine (PAPI: %s); a VM often has no hardware counters: "
             "software events such as perf::TASK-CLOCK work there (papi_avail -a, prof-info metrics)",
             var, e, papi_error(rc));
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

/// One PROF_METRIC_PERF event: its name as given, what to open and its place in the values.
struct PerfItem {
  std::string name;
  PerfSpec spec;
  unsigned at = 0;
};
Immortal<std::vector<PerfItem>> g_perf_events_storage;
constexpr std::vector<PerfItem>& g_perf_events = *g_perf_events_storage.address();  // PROF_METRIC_PERF

/// The perf counters of one thread, one group per kernel PMU, each read with one read(): the
/// software events (page faults, switches, ...), task-clock, cpu-clock, and the CPU's PMU
/// (hardware, cache, raw events). Events of different PMUs are never grouped: the clocks' PMUs
/// and the software events' one miscount in one group (Linux 6.18 here: a page-faults sibling of
/// task-clock counted 1600 of 2000 faults, a task-clock sibling of page-faults 80 % of the time),
/// and a CPU PMU that cannot schedule its group must not stop the software counts. Fixed size:
/// read in the hot path and the signal handler without allocation.
struct PerfGroups {
  static constexpr unsigned kMax = 4;
  static unsigned of(const PerfSpec& s) {
    if (s.hardware) return 3;
    if (s.config == PERF_COUNT_SW_TASK_CLOCK) return 1;
    if (s.config == PERF_COUNT_SW_CPU_CLOCK) return 2;
    return 0;
  }
  struct Group {
    unsigned n = 0;
    int fd[kMaxMetrics] = {};  // fd[0] leads
    unsigned at[kMaxMetrics] = {};
  };
  Group group[kMax];

  void close_all() {
    for (Group& g : group) {
      for (unsigned i = g.n; i-- > 0;) ::close(g.fd[i]);
      g.n = 0;
    }
  }
  /// The values of group g into out (its places); false when the read fails.
  bool read(const Group& g, std::uint64_t* out) const {
    std::uint64_t buf[3 + kMaxMetrics];  // nr, time enabled, time running, values
    const ssize_t want = static_cast<ssize_t>((3 + g.n) * sizeof(std::uint64_t));
    if (::read(g.fd[0], buf, sizeof buf) != want) return false;
    for (unsigned i = 0; i < g.n; ++i) out[g.at[i]] = buf[3 + i];
    return true;
  }
};

/// Opens every PROF_METRIC_PERF event on the calling thread. On failure *failed is the event,
/// *err perf_event_open's -errno and *with the events already in its group; nothing stays open.
bool open_perf(PerfGroups* groups, const PerfItem** failed, int* err, std::string* with) {
  for (const PerfItem& e : g_perf_events) {
    PerfGroups::Group& g = groups->group[PerfGroups::of(e.spec)];
    const int fd = open_perf_event(e.spec, g.n ? g.fd[0] : -1);
    if (fd < 0) {
      *failed = &e;
      *err = fd;
      if (with)
        for (const PerfItem& o : g_perf_events) {
          if (&o == &e) break;
          if (PerfGroups::of(o.spec) == PerfGroups::of(e.spec)) *with += (with->empty() ? "" : ", ") + o.name;
        }
      groups->close_all();
      return false;
    }
    g.fd[g.n] = fd;
    g.at[g.n++] = e.at;
  }
  return true;
}

// The events of PROF_METRIC_PERF, each opened here once, then all together: a name prof does not
// know, an event this machine cannot count or may not count, and PMU events that cannot be
// counted together stop the program with one line.
void check_perf(const std::string& list, const std::string& sep) {
  const char* var = "PROF_METRIC_PERF";
  for (const std::string& e : event_list(var, list, sep, "task-clock,page-faults")) {
    PerfItem item;
    item.name = e;
    if (!parse_perf_event(e, &item.spec))
      log::fatal("%s: '%s' is not a perf event prof knows; give perf's names such as task-clock, page-faults, "
                 "context-switches, cycles, instructions, or r<hex> for a raw PMU event, optionally with :u, :k or :uk "
                 "(prof-info metrics lists what this machine counts)",
                 var, e.c_str());
    g_perf_events.push_back(item);
  }
  for (const PerfItem& e : g_perf_events) {
    const int fd = open_perf_event(e.spec, -1);
    if (fd < 0) log::fatal("%s: '%s' %s", var, e.name.c_str(), perf_open_error(e.spec, fd).c_str());
    ::close(fd);
  }
  PerfGroups groups;
  const PerfItem* failed = nullptr;
  int err = 0;
  std::string with;
  if (!open_perf(&groups, &failed, &err, &with)) {
    if (!with.empty() && (err == -EINVAL || err == -ENOSPC))
      log::fatal("%s: '%s' cannot be counted together with %s on this machine (perf_event_open: %s); measure them in "
                 "separate runs",
                 var, failed->name.c_str(), with.c_str(), std::strerror(-err));
    log::fatal("%s: '%s' %s", var, failed->name.c_str(), perf_open_error(failed->spec, err).c_str());
  }
  // A PMU group that the kernel accepted but cannot put on the counters never runs.
  const PerfGroups::Group& hw = groups.group[3];
  std::uint64_t buf[3 + kMaxMetrics];
  if (hw.n > 1 && ::read(hw.fd[0], buf, sizeof buf) > 0 && buf[1] > 0 && buf[2] == 0) {
    std::string names;
    for (const PerfItem& e : g_perf_events)
      if (e.spec.hardware) names += (names.empty() ? "" : ", ") + e.name;
    groups.close_all();
    log::fatal("%s: %s cannot be counted together on this machine (the PMU never runs them as one group: too few "
               "counters, or another tool holds them); measure fewer events per run",
               var, names.c_str());
  }
  groups.close_all();
}

MetricDef perf_def(const PerfItem& e) {
  MetricDef d;
  d.name = e.name;
  d.unit = e.spec.known ? e.spec.known->unit : "#";
  // Clocks count the thread's CPU time whatever the domain (what task-clock says with -e task-clock:u too).
  const bool clock = e.spec.type == PERF_TYPE_SOFTWARE &&
                     (e.spec.config == PERF_COUNT_SW_TASK_CLOCK || e.spec.config == PERF_COUNT_SW_CPU_CLOCK);
  const char* domain = e.spec.user && e.spec.kernel ? "user space and kernel" : e.spec.kernel ? "kernel" : "user space";
  d.description = std::string("perf event of the thread: ") + (e.spec.known ? e.spec.known->description : "raw PMU event") +
                  (clock ? "" : std::string(" (") + domain + ")");
  return d;
}

// The per-thread state behind Location::metric_state. Owner thread only, except `last`, which
// another thread reads once the owner's frames are closed for it at finalize.
struct ThreadState {
  Sets sets;  // PROF_METRIC_PAPI, and for the first location PROF_METRIC_PAPI_PER_PROCESS too
  PerfGroups perf;
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

// Values in the order of defs(): per-thread PAPI events, perf events, rusage fields, per-process
// PAPI events (each PAPI set and perf group knows where its values go). A failed read repeats the
// last values.
void read_sources(const ThreadState& st, std::uint64_t* out) {
  for (unsigned s = 0; s < st.sets.count; ++s) {
    const Sets::Set& set = st.sets.set[s];
    long long v[kMaxMetrics];
    const bool ok = g_papi.read(set.id, v) == kPapiOk;
    for (unsigned i = 0; i < set.n; ++i) out[set.at[i]] = ok ? static_cast<std::uint64_t>(v[i]) : st.last[set.at[i]];
  }
  for (const PerfGroups::Group& g : st.perf.group)
    if (g.n && !st.perf.read(g, out))
      for (unsigned i = 0; i < g.n; ++i) out[g.at[i]] = st.last[g.at[i]];
  if (g_rusage) {
    struct rusage ru;
    const bool ok = ::getrusage(RUSAGE_THREAD, &ru) == 0;
    const unsigned at = g_thread_papi + g_perf;
    for (unsigned i = 0; i < g_rusage; ++i) out[at + i] = ok ? rusage_value(ru, g_rusage_fields[i]) : st.last[at + i];
  }
}

}  // namespace

void init() {
  *g_thread_events_storage, *g_process_events_storage, *g_rusage_fields_storage, *g_perf_events_storage;
  const config::Values& v = config::g_values;
  std::vector<std::string> fields = split(v.metric_rusage, v.metric_rusage_sep);
  std::string names;
  for (const RusageField& r : rusage_fields()) names += std::string(names.empty() ? "" : ", ") + r.name;
  bool all = false;
  for (const std::string& f : fields) {  // every item checked, `all` among them or not
    bool known = f == "all";
    all = all || known;
    for (unsigned i = 0; i < rusage_fields().size(); ++i)
      if (f == rusage_fields()[i].name) {
        known = true;
        bool dup = false;
        for (unsigned j : g_rusage_fields) dup = dup || j == i;
        if (!dup) g_rusage_fields.push_back(i);
      }
    if (!known)
      log::fatal("PROF_METRIC_RUSAGE='%s': '%s' is not a getrusage field; give all or some of %s (prof-info metrics)",
                 v.metric_rusage.c_str(), f.c_str(), names.c_str());
  }
  if (all) {
    g_rusage_fields.clear();
    for (unsigned i = 0; i < rusage_fields().size(); ++i) g_rusage_fields.push_back(i);
  }
  const std::size_t papi_items = split(v.metric_papi, v.metric_papi_sep).size() + split(v.metric_papi_per_process, v.metric_papi_sep).size();
  const std::size_t total = papi_items + split(v.metric_perf, v.metric_perf_sep).size() + g_rusage_fields.size();
  if (total > kMaxMetrics)
    log::fatal("PROF_METRIC_*: %zu metrics are configured, prof records at most %u per event; choose fewer", total, kMaxMetrics);
  if (papi_items) {
    std::string why;
    if (!load(&g_papi, &why))
      log::fatal("PROF_METRIC_PAPI: %s; install PAPI, or leave PROF_METRIC_PAPI and PROF_METRIC_PAPI_PER_PROCESS empty",
                 why.c_str());
    g_thread_events = parse_papi("PROF_METRIC_PAPI", v.metric_papi, v.metric_papi_sep, {});
    g_process_events = parse_papi("PROF_METRIC_PAPI_PER_PROCESS", v.metric_papi_per_process, v.metric_papi_sep, g_thread_events);
  }
  if (!v.metric_perf.empty()) check_perf(v.metric_perf, v.metric_perf_sep);
  g_thread_papi = static_cast<unsigned>(g_thread_events.size());
  g_perf = static_cast<unsigned>(g_perf_events.size());
  g_rusage = static_cast<unsigned>(g_rusage_fields.size());
  g_process_papi = static_cast<unsigned>(g_process_events.size());
  for (unsigned i = 0; i < g_thread_papi; ++i) g_thread_events[i].at = i;
  for (unsigned i = 0; i < g_perf; ++i) g_perf_events[i].at = g_thread_papi + i;
  for (unsigned i = 0; i < g_process_papi; ++i) g_process_events[i].at = g_thread_papi + g_perf + g_rusage + i;
  if (papi_items) check_papi();
  auto* defs = new std::vector<MetricDef>;
  for (const PapiEvent& e : g_thread_events) defs->push_back(papi_def(e.name, false));
  for (const PerfItem& e : g_perf_events) defs->push_back(perf_def(e));
  for (unsigned f : g_rusage_fields) {
    MetricDef d;
    d.name = rusage_fields()[f].name;
    d.description = std::string("getrusage(RUSAGE_THREAD): ") + rusage_fields()[f].description;
    d.unit = rusage_fields()[f].unit;
    d.absolute = d.name == "ru_maxrss";
    defs->push_back(d);
  }
  for (const PapiEvent& e : g_process_events) defs->push_back(papi_def(e.name, true));
  g_defs = defs;
  if (!defs->empty()) {
    std::string list;
    for (const MetricDef& d : *defs) list += (list.empty() ? "" : ", ") + d.name;
    log::info(1, "metrics: %s at every recorded enter and leave", list.c_str());
  }
}

bool on() { return g_defs && !g_defs->empty(); }

const std::vector<MetricDef>& defs() {
  static const std::vector<MetricDef>* none = new std::vector<MetricDef>;  // never destroyed
  return g_defs ? *g_defs : *none;
}

unsigned location_count(bool first) { return g_thread_papi + g_perf + g_rusage + (first ? g_process_papi : 0); }

void thread_start(Location* loc) {
  const bool first = loc->index == 0;
  if (!on() || loc->detached || location_count(first) == 0) return;
  auto* st = new ThreadState;
  std::vector<const PapiEvent*> events;
  for (const PapiEvent& e : g_thread_events) events.push_back(&e);
  if (first)
    for (const PapiEvent& e : g_process_events) events.push_back(&e);
  int rc = kPapiOk;
  const PapiEvent* failed = nullptr;
  if (!events.empty() && !start_sets(events, &st->sets, &rc, &failed, nullptr)) {
    // Checked at start on the first thread; a later thread can still fail (out of file
    // descriptors, counters taken by another tool).
    if (!g_thread_failure_reported.exchange(true))
      log::warning("metrics: the PAPI events could not be started on thread '%s' (PAPI: %s); that thread records no metrics",
                   loc->name.c_str(), papi_error(rc));
    g_papi.unregister_thread();
    delete st;
    return;
  }
  const PerfItem* failed_perf = nullptr;
  int err = 0;
  if (!g_perf_events.empty() && !open_perf(&st->perf, &failed_perf, &err, nullptr)) {
    if (!g_thread_failure_reported.exchange(true))
      log::warning("metrics: PROF_METRIC_PERF's '%s' could not be opened on thread '%s' (perf_event_open: %s); that thread "
                   "records no metrics",
                   failed_perf->name.c_str(), loc->name.c_str(), std::strerror(-err));
    st->sets.stop_all();
    if (st->sets.count) g_papi.unregister_thread();
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
  const int saved = errno;
  // The end of the root's visit; after finalize the profile may be being read: no more values.
  if (g_phase.load() == static_cast<int>(Phase::Within)) {
    std::uint64_t now[kMaxMetrics];
    read(loc, now);
  }
  st->stopped = true;
  if (st->sets.count) {
    st->sets.stop_all();
    g_papi.unregister_thread();
  }
  st->perf.close_all();
  errno = saved;
}

void forget_after_fork() {
  // The child's copy of the calling thread shares the parent's perf file descriptors: stopping
  // them here would stop the parent's counters. The child records nothing anyway. Its copies of
  // PROF_METRIC_PERF's descriptors are closed: that drops only the child's references (the
  // counters stay the parent thread's).
  if (Location* loc = tls_location)
    if (auto* st = static_cast<ThreadState*>(loc->metric_state)) {
      st->stopped = true;
      st->sets.count = 0;
      st->perf.close_all();
    }
}

bool totals(const Location* loc, std::vector<std::uint64_t>* out) {
  const auto* st = static_cast<const ThreadState*>(loc->metric_state);
  if (!st || !loc->metric_count) return false;
  out->resize(loc->metric_count);
  for (unsigned i = 0; i < loc->metric_count; ++i) (*out)[i] = st->last[i] >= st->start[i] ? st->last[i] - st->start[i] : 0;
  return true;
}

}  // namespace prof::metrics
