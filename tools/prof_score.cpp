// SPDX-License-Identifier: BSD-3-Clause
// prof-score: what a tracing run of a profiled program would cost, before it is made. Reads a
// CUBE4 profile (prof's or Score-P's), estimates the trace size per region from its visits,
// groups the regions like scorep-score, shows the effect of a filter file and writes an
// initial one. Profiles with GPU streams also get an nvprof-like summary of the GPU activities.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <map>
#include <string>
#include <vector>

#include "measurement/filter/filter.hpp"
#include "measurement/memory/budget.hpp"
#include "tools/cube4_reader.hpp"
#include "tools/json_text.hpp"
#include "tools/region_groups.hpp"

namespace {

namespace cube4 = prof::cube4;
using namespace prof::region_groups;
using prof::json::json_number;
using prof::json::json_string;

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

const char kUsage[] =
    "usage: prof-score [options] <experiment directory | profile.cubex>\n"
    "\n"
    "Estimates, from a call-path profile, the size of a trace of the same run and the\n"
    "PROF_TOTAL_MEMORY it needs, per group of regions (ALL, USR, COM, PTHREAD, MPI, ...).\n"
    "Kernels, memory copies and memsets on GPU streams form the group GPU (the host's CUDA\n"
    "API calls are CUDA); a profile with GPU streams also gets a \"GPU activities\" table like\n"
    "nvprof's (time share, total, calls, avg/min/max per kernel or copy, and bytes and\n"
    "throughput per copy direction), in --json as gpu_activities and gpu_transfers.\n"
    "Calls below PROF_PROFILING_MAX_CALLPATH_DEPTH, which the profile folds into the call\n"
    "path at that depth (its folded_visits), are in a trace: they count as visits of the\n"
    "region at the cutoff (in --json also as folded_visits).\n"
    "\n"
    "options:\n"
    "  -r              also one row per region\n"
    "  -f FILE         show the effect of a filter file (prof or Score-P syntax)\n"
    "  -g [k=v,...]    write an initial filter file excluding short, frequently called user\n"
    "                  functions; keys: bufferpercent=1 (share of max_buf, %), timepervisit=1\n"
    "                  (us), bufferabsolute=MiB (also required when given), visits=N (at least),\n"
    "                  type=usr|com|both (default usr); with -f, on top of that filter\n"
    "  -g all          write max_prof.filter, excluding every filterable function\n"
    "  -o FILE         file name for -g (default initial_prof.filter; an existing file is\n"
    "                  renamed to FILE.old, FILE.old.1, ...)\n"
    "  -s KEY          sort regions by maxbuffer (default), totaltime, timepervisit (shortest\n"
    "                  first), visits, name\n"
    "  -m              show mangled names (with -r)\n"
    "  -c N            N metric values per event (PROF_METRIC_* events of a later run)\n"
    "  --metric NAME   also a column of a metric of the profile, summed (exclusive) per\n"
    "                  group and region: a PROF_METRIC_* event such as perf::PAGE-FAULTS\n"
    "                  or PAPI_TOT_CYC, or bytes_sent, hits, ...\n"
    "  --page-size S   the run's PROF_PAGE_SIZE for the memory estimate (default 64K)\n"
    "  --json          machine-readable output\n"
    "  -h, --help      this help\n";

void error(const std::string& message) { std::fprintf(stderr, "prof-score: error: %s\n", message.c_str()); }

int usage_error(const std::string& message) {
  error(message);
  std::fputs(kUsage, stderr);
  return kExitUsage;
}

// ---------------------------------------------------------------------------------------------
// Event size model
// ---------------------------------------------------------------------------------------------

/// Bytes of an OTF2 compressed unsigned integer: one length byte plus the significant bytes.
unsigned compressed_bytes(std::uint64_t v) {
  unsigned n = 0;
  while (v) {
    ++n;
    v >>= 8;
  }
  return 1 + n;
}

// One OTF2 event in a .evt file: a timestamp record (1 + 8 bytes; prof's timestamps differ from
// event to event), the record type (1) and the region reference (compressed). One raw record in
// memory: 16 bytes, plus one 16-byte payload slot for the thread and lock events.
constexpr unsigned kOtf2Timestamp = 9;
constexpr unsigned kRawRecord = 16;
// Thread and lock wrappers write more events, each a timestamp (9), type and length (2) and
// compressed fields: ThreadCreate/Begin/End/Wait a communicator and a sequence number (about 15
// bytes), AcquireLock/ReleaseLock a paradigm, a lock id and an acquisition order that keeps
// growing (about 18). Raw: a record and a payload slot, 32 bytes.
struct ThreadEvents {
  unsigned thread = 0, lock = 0;
};
constexpr unsigned kOtf2ThreadEvent = 15;
constexpr unsigned kOtf2LockEvent = 18;
constexpr unsigned kRawThreadEvent = 32;

/// Events a pthread wrapper writes per visit besides its Enter and Leave
/// (adapters/pthread/pthread.cpp).
ThreadEvents thread_events_per_visit(const std::string& name) {
  static const std::map<std::string, ThreadEvents> kEvents = {
      {"pthread_create", {3, 0}},  // ThreadCreate here, ThreadBegin and ThreadEnd on the new thread
      {"pthread_join", {1, 0}},    // ThreadWait
      {"pthread_mutex_lock", {0, 1}}, {"pthread_mutex_trylock", {0, 1}}, {"pthread_mutex_timedlock", {0, 1}},  // AcquireLock
      {"pthread_mutex_unlock", {0, 1}},                                                                  // ReleaseLock
      {"pthread_cond_wait", {0, 2}}, {"pthread_cond_timedwait", {0, 2}},  // ReleaseLock, then AcquireLock
  };
  auto it = kEvents.find(name);
  return it == kEvents.end() ? ThreadEvents{} : it->second;
}

// MPI wrappers (adapters/mpi) write communication events besides their Enter and Leave. OTF2
// bytes of each: a timestamp (9), type and length (2) and compressed fields: MpiSend/MpiRecv
// a peer, communicator, tag and length (about 20), MpiIsend/MpiIrecv also a request id (about
// 24), MpiIsendComplete/MpiIrecvRequest a request id (about 14), MpiCollectiveBegin nothing (11),
// MpiCollectiveEnd an operation, communicator, root and two sizes (about 26). Raw: a record and
// one or two payload slots. A completion is counted on the Wait/Test that makes it: one per visit
// of the single-request forms, none for the others (their count per visit is not in a profile).
struct MpiEvents {
  double otf2 = 0, raw = 0;
};
MpiEvents mpi_events_per_visit(const std::string& name) {
  static const MpiEvents kSend{20, 32}, kIsend{24, 48}, kRequest{14, 32}, kColl{11 + 26, 16 + 48}, kComplete{19, 40};
  static const std::map<std::string, MpiEvents> kEvents = {
      {"MPI_Send", kSend}, {"MPI_Bsend", kSend}, {"MPI_Ssend", kSend}, {"MPI_Rsend", kSend}, {"MPI_Recv", kSend},
      {"MPI_Mrecv", kSend}, {"MPI_Sendrecv", {40, 64}}, {"MPI_Sendrecv_replace", {40, 64}},
      {"MPI_Isend", kIsend}, {"MPI_Ibsend", kIsend}, {"MPI_Issend", kIsend}, {"MPI_Irsend", kIsend},
      {"MPI_Irecv", kRequest}, {"MPI_Imrecv", kRequest}, {"MPI_Start", kIsend},
      {"MPI_Wait", kComplete}, {"MPI_Test", kComplete}, {"MPI_Waitany", kComplete},
      {"MPI_Barrier", kColl}, {"MPI_Bcast", kColl}, {"MPI_Gather", kColl}, {"MPI_Gatherv", kColl},
      {"MPI_Scatter", kColl}, {"MPI_Scatterv", kColl}, {"MPI_Allgather", kColl}, {"MPI_Allgatherv", kColl},
      {"MPI_Alltoall", kColl}, {"MPI_Alltoallv", kColl}, {"MPI_Alltoallw", kColl}, {"MPI_Reduce", kColl},
      {"MPI_Allreduce", kColl}, {"MPI_Reduce_scatter", kColl}, {"MPI_Reduce_scatter_block", kColl},
      {"MPI_Scan", kColl}, {"MPI_Exscan", kColl},
  };
  auto it = kEvents.find(name);
  return it == kEvents.end() ? MpiEvents{} : it->second;
}

// GPU activities (CUDA adapter) are written on their stream's location, into the trace buffers
// of the process that created the context: a kernel and a memset as Enter and Leave, a copy that
// reaches the device as Enter, RmaGet (to the device) or RmaPut (from it), RmaOpCompleteBlocking
// and Leave. The RMA events share their timestamps with the Enter and the Leave, so OTF2 writes
// no timestamp record for them: RmaGet/RmaPut is a type and length (2), the window (2), the
// issuing thread (2), the bytes (compressed) and a matching id (about 4);
// RmaOpCompleteBlocking a type and length, the window and the matching id (8). Raw: a record
// with two payload slots (48) and one with one slot (32). Stream locations record no metrics.
constexpr unsigned kOtf2RmaOp = 2 + 2 + 2 + 4;
constexpr unsigned kOtf2RmaComplete = 2 + 2 + 4;
constexpr unsigned kRawRmaOp = 48;
constexpr unsigned kRawRmaComplete = 32;
constexpr std::uint64_t kTypicalCopyBytes = 1u << 20;  // when the profile has no bytes_copied

// Metric values travel with the Enter and Leave (PROF_METRIC_*): one OTF2 Metric record per event
// at the Enter's or Leave's time (type, length, metric ref, count: 4 bytes) with per value a type
// byte and a compressed UINT64 (a length byte and the significant bytes; counters since the
// thread's start are taken as 4 bytes: an estimate that errs high for small counts, measured
// 48 against 68 bytes per visit with 5 software counters). Raw records: two values per 16-byte slot.
constexpr unsigned kOtf2MetricHeader = 4;
constexpr unsigned kOtf2MetricValue = 6;
constexpr unsigned kRawMetricSlot = 16;



// ---------------------------------------------------------------------------------------------
// Per-region figures
// ---------------------------------------------------------------------------------------------

struct Row {
  std::uint32_t region = 0;
  Group group = Group::USR;
  bool filterable = false;       // compiler-instrumented: the run-time filter applies
  bool filtered = false;         // excluded by -f
  double visits = 0;             // the profile's visits and the visits folded below the region's call paths
  double folded = 0;             // of these, visits folded below PROF_PROFILING_MAX_CALLPATH_DEPTH
  double time = 0;               // exclusive seconds, all locations
  double metric = 0;             // --metric: exclusive, all locations
  double otf2_bytes = 0;         // all processes
  double max_buf = 0;            // OTF2 bytes in the process that has the most
  std::vector<double> otf2_per_process, raw_per_process;
};

struct Options {
  bool regions = false, mangled = false, json = false;
  std::string filter_file;
  bool generate = false;
  std::string generate_spec, generate_file = "initial_prof.filter";
  std::string sort = "maxbuffer";
  unsigned metrics = 0;
  std::string metric;            // --metric: the name as given
  std::uint64_t page_size = 64 << 10;
  std::string input;
};

/// One line of the GPU activities view: a region on the GPU streams, summed over all of them.
struct GpuActivity {
  std::uint32_t region = 0;
  GpuKind kind = GpuKind::Kernel;
  double calls = 0, time = 0, min = 0, max = 0;  // seconds; min/max of one execution
  double bytes = 0;                               // copies and memsets (bytes_copied)
};

struct Score {
  cube4::ReadProfile profile;
  std::string path;
  std::vector<Row> rows;                     // regions that occur, in region order (GPU rows after the others)
  double total_time = 0;
  // Per process (a process location group with the accelerator groups it created):
  std::vector<std::uint32_t> locations_per_process;
  std::vector<double> nodes_per_process;     // profile call paths in use, all its locations
  std::size_t gpu_streams = 0;
  std::vector<GpuActivity> gpu;              // GPU activities, longest total time first
  double gpu_time = 0;                       // all GPU activities
  bool have_bytes_copied = false;
  const cube4::ReadMetric* metric = nullptr;  // --metric
  unsigned metrics_per_event = 0;             // -c
  // Visits below PROF_PROFILING_MAX_CALLPATH_DEPTH (the profile's folded_visits): not in the
  // profile's visits, but a trace has an Enter and a Leave for each. Counted as visits of the
  // region at the cutoff, whose exclusive time holds their time.
  double folded = 0;
  std::size_t folded_depth_min = 0, folded_depth_max = 0;  // depth of the cutoff call paths (root 0)
  std::vector<prof::filter::UnmatchedRule> unmatched;  // -f: rules that match no filterable region
};

/// Bytes of one Enter and one Leave of region `id` in OTF2 and in memory, with `metrics` values each.
void enter_leave_bytes(std::uint32_t id, unsigned metrics, double* otf2, double* raw) {
  *otf2 = 2.0 * (kOtf2Timestamp + 1 + compressed_bytes(id));
  *raw = 2.0 * kRawRecord;
  if (metrics) {
    *otf2 += 2.0 * (kOtf2MetricHeader + kOtf2MetricValue * metrics);
    *raw += 2.0 * kRawMetricSlot * ((metrics + 1) / 2);
  }
}

/// bytes per visit of `region` in OTF2 and in memory.
void bytes_per_visit(const cube4::Region& r, std::uint32_t id, unsigned metrics, double* otf2, double* raw) {
  const Group g = paradigm_group(r.paradigm);
  if (g == Group::PROF) {  // the program root and other artificial regions are not traced
    *otf2 = *raw = 0;
    return;
  }
  enter_leave_bytes(id, metrics, otf2, raw);
  if (g == Group::PTHREAD) {
    const ThreadEvents n = thread_events_per_visit(r.name);
    *otf2 += n.thread * kOtf2ThreadEvent + n.lock * kOtf2LockEvent;
    *raw += (n.thread + n.lock) * kRawThreadEvent;
  }
  if (g == Group::MPI) {
    const MpiEvents m = mpi_events_per_visit(r.name);
    *otf2 += m.otf2;
    *raw += m.raw;
  }
}

/// Bytes per execution of a GPU activity in OTF2 and in memory; `bytes_per_copy` < 0 when unknown.
void gpu_bytes_per_visit(const cube4::Region& r, std::uint32_t id, double bytes_per_copy, double* otf2, double* raw) {
  *otf2 = 2.0 * (kOtf2Timestamp + 1 + compressed_bytes(id));
  *raw = 2.0 * kRawRecord;
  if (copy_has_rma(r)) {
    const double b = bytes_per_copy < 0 ? static_cast<double>(kTypicalCopyBytes) : bytes_per_copy;
    *otf2 += kOtf2RmaOp + compressed_bytes(static_cast<std::uint64_t>(std::llround(b))) + kOtf2RmaComplete;
    *raw += kRawRmaOp + kRawRmaComplete;
  }
}

/// `values` when it has one value per (cnode, location) of `p`, else nullptr.
const std::vector<double>* values_of(const cube4::ReadProfile& p, const char* metric) {
  const cube4::ReadMetric* m = p.metric(metric);
  return m && m->values.size() == p.cnodes.size() * p.locations.size() ? &m->values : nullptr;
}

bool build(const Options& o, const prof::filter::Filter* filter, Score* s, std::string* err) {
  const cube4::ReadProfile& p = s->profile;
  const cube4::ReadMetric* visits_m = p.metric("visits");
  const cube4::ReadMetric* time_m = p.metric("time");
  if (!visits_m || !time_m) {
    *err = s->path + ": no 'visits' and 'time' metrics; prof-score needs a call-path profile as prof or Score-P write it";
    return false;
  }
  const std::size_t nl = p.locations.size(), nc = p.cnodes.size(), nr = p.regions.size();
  const std::vector<double> time_incl = p.inclusive(*time_m);
  const std::vector<double> excl = p.exclusive(*time_m);
  const std::vector<double>* bytes_copied = values_of(p, "bytes_copied");
  const std::vector<double>* min_time = values_of(p, "min_time");
  const std::vector<double>* max_time = values_of(p, "max_time");
  const std::vector<double>* folded = values_of(p, "folded_visits");
  s->have_bytes_copied = bytes_copied != nullptr;
  std::vector<double> metric(nc * nl, 0.0);
  if (s->metric) metric = p.exclusive(*s->metric);

  // Processes: each location group that is its own process (not an accelerator group another
  // group created) is one; the locations of its accelerator groups are its GPU streams, whose
  // events go to its trace buffers.
  const std::size_t ngroups = std::max<std::size_t>(p.location_groups.size(), 1);
  std::vector<std::uint32_t> process_of_group(ngroups, 0);
  std::uint32_t processes = 0;
  for (std::size_t g = 0; g < p.location_groups.size(); ++g)
    if (p.location_groups[g].process == g) process_of_group[g] = processes++;
  for (std::size_t g = 0; g < p.location_groups.size(); ++g) process_of_group[g] = process_of_group[p.location_groups[g].process];
  processes = std::max<std::uint32_t>(processes, 1);
  std::vector<std::uint32_t> process_of(nl, 0);
  std::vector<char> gpu_location(nl, 0);
  for (std::size_t l = 0; l < nl; ++l) {
    const std::uint32_t g = p.locations[l].group_index;
    process_of[l] = g < p.location_groups.size() ? process_of_group[g] : 0;
    gpu_location[l] = p.locations[l].gpu();
    s->gpu_streams += gpu_location[l] ? 1 : 0;
  }
  s->locations_per_process.assign(processes, 0);
  s->nodes_per_process.assign(processes, 0);
  for (std::size_t l = 0; l < nl; ++l) ++s->locations_per_process[process_of[l]];

  // GPU activities: the regions executed on a GPU stream. On stream columns their call paths
  // go to the region's GPU row (all[nr + r]); the host call paths above them (visits 0 there,
  // time = what ran below) stay with their own regions.
  std::vector<char> gpu_region(nr, 0);
  for (std::size_t c = 0; c < nc; ++c) {
    const std::uint32_t r = p.cnodes[c].region;
    if (paradigm_group(p.regions[r].paradigm) == Group::PROF) continue;
    for (std::size_t l = 0; l < nl; ++l)
      if (gpu_location[l] && visits_m->values[c * nl + l] > 0) gpu_region[r] = 1;
  }

  // Depth of each call path (the root's is 0; a parent comes before its children): the folded
  // visits sit at PROF_PROFILING_MAX_CALLPATH_DEPTH.
  std::vector<std::size_t> depth(nc, 0);
  for (std::size_t c = 0; c < nc; ++c)
    if (p.cnodes[c].parent >= 0) depth[c] = depth[static_cast<std::size_t>(p.cnodes[c].parent)] + 1;

  // COM: user regions with a call path that leads to a region of another paradigm.
  std::vector<char> leads_to_paradigm(nc, 0);
  for (std::size_t c = 0; c < nc; ++c) {
    const Group g = paradigm_group(p.regions[p.cnodes[c].region].paradigm);
    if (is_user(g) || g == Group::PROF) continue;
    for (std::int64_t a = p.cnodes[c].parent; a >= 0 && !leads_to_paradigm[a]; a = p.cnodes[a].parent) leads_to_paradigm[a] = 1;
  }

  // Rows 0..nr-1: the regions; nr..2nr-1: their executions on GPU streams (group GPU).
  std::vector<Row> all(2 * nr);
  std::vector<char> occurs(all.size(), 0);
  for (std::uint32_t k = 0; k < all.size(); ++k) {
    Row& row = all[k];
    const std::uint32_t r = k < nr ? k : static_cast<std::uint32_t>(k - nr);
    row.region = r;
    row.group = k < nr ? paradigm_group(p.regions[r].paradigm) : Group::GPU;
    // Functions of compiled code and Python functions: filters apply to both (PROF_FILTERING_FILE).
    row.filterable = k < nr && (p.regions[r].paradigm == "compiler" || p.regions[r].paradigm == "python");
    row.otf2_per_process.assign(processes, 0);
    row.raw_per_process.assign(processes, 0);
    if (filter && row.filterable) {
      const cube4::Region& reg = p.regions[r];
      const std::string& mangled = reg.canonical == reg.name ? std::string() : reg.canonical;
      row.filtered = filter->excluded(reg.name, mangled, reg.file);
    }
  }
  std::vector<GpuActivity> gpu(nr);
  for (GpuActivity& a : gpu) a.min = HUGE_VAL;
  for (std::size_t c = 0; c < nc; ++c) {
    const std::uint32_t r = p.cnodes[c].region;
    Row& row = all[r];
    // A region that runs on GPU streams is a row of its own only where it also has host data.
    if (!gpu_region[r]) occurs[r] = 1;
    if (row.group == Group::USR && leads_to_paradigm[c]) row.group = Group::COM;
    double otf2 = 0, raw = 0, gpu_otf2 = 0, gpu_raw = 0, folded_otf2 = 0, folded_raw = 0;
    bytes_per_visit(p.regions[r], r, o.metrics, &otf2, &raw);
    // The folded callees' regions are not known: their Enter and Leave are sized as the cutoff
    // region's (exact for a function recursing into itself; a region reference differs by a
    // byte at most otherwise).
    enter_leave_bytes(r, o.metrics, &folded_otf2, &folded_raw);
    if (gpu_region[r]) gpu_bytes_per_visit(p.regions[r], r, -1, &gpu_otf2, &gpu_raw);
    for (std::size_t l = 0; l < nl; ++l) {
      const std::size_t i = c * nl + l;
      const double v = visits_m->values[i];
      const std::uint32_t g = process_of[l];
      if (v > 0 || time_incl[i] != 0) s->nodes_per_process[g] += 1;
      if (gpu_location[l] && gpu_region[r]) {
        Row& grow = all[nr + r];
        GpuActivity& a = gpu[r];
        occurs[nr + r] = 1;
        if (bytes_copied && copy_has_rma(p.regions[r]) && v > 0)
          gpu_bytes_per_visit(p.regions[r], r, (*bytes_copied)[i] / v, &gpu_otf2, &gpu_raw);
        grow.visits += v;
        grow.time += excl[i];
        grow.metric += metric[i];
        grow.otf2_per_process[g] += v * gpu_otf2;
        grow.raw_per_process[g] += v * gpu_raw;
        a.calls += v;
        a.time += excl[i];
        if (bytes_copied) a.bytes += (*bytes_copied)[i];
        if (v > 0 && min_time) a.min = std::min(a.min, (*min_time)[i]);
        if (v > 0 && max_time) a.max = std::max(a.max, (*max_time)[i]);
        continue;
      }
      const double f = folded ? (*folded)[i] : 0.0;
      if (v > 0 || f > 0 || time_incl[i] != 0) occurs[r] = 1;
      row.visits += v + f;
      row.folded += f;
      row.time += excl[i];
      row.metric += metric[i];
      row.otf2_per_process[g] += v * otf2 + f * folded_otf2;
      row.raw_per_process[g] += v * raw + f * folded_raw;
      if (f > 0) {
        s->folded_depth_min = s->folded > 0 ? std::min(s->folded_depth_min, depth[c]) : depth[c];
        s->folded_depth_max = s->folded > 0 ? std::max(s->folded_depth_max, depth[c]) : depth[c];
        s->folded += f;
      }
    }
  }
  for (std::uint32_t r = 0; r < nr; ++r) {
    if (!gpu_region[r]) continue;
    gpu[r].region = r;
    gpu[r].kind = gpu_kind(p.regions[r]);
    if (gpu[r].min == HUGE_VAL) gpu[r].min = 0;  // no min_time metric
    s->gpu.push_back(gpu[r]);
    s->gpu_time += gpu[r].time;
  }
  std::stable_sort(s->gpu.begin(), s->gpu.end(), [&p](const GpuActivity& a, const GpuActivity& b) {
    if (a.time != b.time) return a.time > b.time;
    return p.regions[a.region].name < p.regions[b.region].name;
  });
  for (std::size_t c = 0; c < nc; ++c)
    if (p.cnodes[c].parent < 0)
      for (std::size_t l = 0; l < nl; ++l) s->total_time += time_incl[c * nl + l];
  for (std::uint32_t r = 0; r < all.size(); ++r) {
    if (!occurs[r]) continue;
    Row& row = all[r];
    for (double b : row.otf2_per_process) row.otf2_bytes += b;
    row.max_buf = *std::max_element(row.otf2_per_process.begin(), row.otf2_per_process.end());
    s->rows.push_back(row);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Totals and the memory estimate
// ---------------------------------------------------------------------------------------------

struct Totals {
  double visits = 0, folded = 0, time = 0, otf2_bytes = 0, max_buf = 0, metric = 0;
  std::vector<double> otf2_per_process, raw_per_process;
  bool any = false, all_filtered = true, some_filtered = false;
};

/// Sums of the rows for which `take` is true.
template <class Pred>
Totals sum(const Score& s, Pred take) {
  Totals t;
  const std::size_t groups = s.locations_per_process.size();
  t.otf2_per_process.assign(groups, 0);
  t.raw_per_process.assign(groups, 0);
  for (const Row& r : s.rows) {
    if (!take(r)) continue;
    t.any = true;
    t.all_filtered &= r.filtered;
    t.some_filtered |= r.filtered;
    t.visits += r.visits;
    t.folded += r.folded;
    t.time += r.time;
    t.metric += r.metric;
    t.otf2_bytes += r.otf2_bytes;
    for (std::size_t g = 0; g < groups; ++g) {
      t.otf2_per_process[g] += r.otf2_per_process[g];
      t.raw_per_process[g] += r.raw_per_process[g];
    }
  }
  if (groups) t.max_buf = *std::max_element(t.otf2_per_process.begin(), t.otf2_per_process.end());
  return t;
}

/// The totals of one row, without a pass over all rows.
Totals of(const Row& r) {
  Totals t;
  t.any = true;
  t.all_filtered = t.some_filtered = r.filtered;
  t.visits = r.visits;
  t.folded = r.folded;
  t.time = r.time;
  t.metric = r.metric;
  t.otf2_bytes = r.otf2_bytes;
  t.max_buf = r.max_buf;
  t.otf2_per_process = r.otf2_per_process;
  t.raw_per_process = r.raw_per_process;
  return t;
}

struct Estimate {
  double trace_bytes = 0;       // OTF2 event files, all processes
  double max_buf = 0;           // OTF2 bytes of the largest process
  double max_raw = 0;           // raw record bytes of the process that needs the most memory
  std::uint64_t total_memory = 0;  // PROF_TOTAL_MEMORY per process for a run without flushes
};

Estimate estimate(const Score& s, const Totals& t, std::uint64_t page_size) {
  Estimate e;
  e.trace_bytes = t.otf2_bytes;
  e.max_buf = t.max_buf;
  double need = -1;
  for (std::size_t g = 0; g < t.raw_per_process.size(); ++g) {
    // Raw records (the folded visits' included), the profile's call paths (64 bytes each, and
    // 64 more per 8 metric values they sum with -c) and per location the chunks that are partly
    // used or kept back: the runtime's flush warning uses the same model (budget.hpp).
    const double locs = s.locations_per_process[g];
    const double node = 64.0 * (1 + (s.metrics_per_event + 7) / 8);
    const double n = prof::budget::event_memory_without_flush(t.raw_per_process[g], node * s.nodes_per_process[g], locs, page_size);
    if (n > need) {
      need = n;
      e.max_raw = t.raw_per_process[g];
      e.total_memory = prof::budget::total_without_flush(t.raw_per_process[g], node * s.nodes_per_process[g], locs, page_size);
    }
  }
  if (need < 0) e.total_memory = prof::budget::total_for_event_pool(0, true, page_size);
  return e;
}

std::string bytes_text(double b) {
  char buf[64];
  if (b >= 1e9) std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6) std::snprintf(buf, sizeof buf, "%.2f MB", b / 1e6);
  else if (b >= 1e3) std::snprintf(buf, sizeof buf, "%.2f kB", b / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f bytes", b);
  return buf;
}

std::string memory_text(std::uint64_t bytes) {
  char buf[32];
  if (bytes % (1u << 30) == 0) std::snprintf(buf, sizeof buf, "%" PRIu64 "G", bytes >> 30);
  else std::snprintf(buf, sizeof buf, "%" PRIu64 "M", bytes >> 20);
  return buf;
}

/// 1234567 → "1,234,567".
std::string grouped(double v) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%.0f", v);
  std::string in(digits), out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i && (in.size() - i) % 3 == 0) out += ',';
    out += in[i];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

const char* flt_mark(const Totals& t, bool have_filter) {
  if (!have_filter) return "";
  if (t.all_filtered) return "+";
  return t.some_filtered ? "*" : "-";
}

void sort_rows(std::vector<const Row*>& rows, const std::string& key, const Score& s) {
  auto per_visit = [](const Row* r) { return r->visits > 0 ? r->time / r->visits : 0.0; };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row* a, const Row* b) {
    if (key == "totaltime") return a->time > b->time;
    if (key == "timepervisit") return per_visit(a) < per_visit(b);  // shortest first, as scorep-score
    if (key == "visits") return a->visits > b->visits;
    if (key == "name") return s.profile.regions[a->region].name < s.profile.regions[b->region].name;
    return a->max_buf > b->max_buf;
  });
}

std::string region_name(const Score& s, const Row& r, bool mangled) {
  const cube4::Region& reg = s.profile.regions[r.region];
  return mangled && !reg.canonical.empty() ? reg.canonical : reg.name;
}

/// The --metric column's width (0: no column).
int metric_width(const Score& s) {
  return s.metric ? std::max(16, static_cast<int>(s.metric->disp_name.size() + s.metric->uom.size() + 3)) : 0;
}

void print_line(const Score& s, const char* flt, const char* type, const Totals& t, const std::string& name) {
  const double total = s.total_time;
  const double pct = total > 0 ? 100.0 * t.time / total : 0.0;
  char per[32];
  if (t.visits > 0) std::snprintf(per, sizeof per, "%.2f", 1e6 * t.time / t.visits);
  else std::snprintf(per, sizeof per, "-");
  std::string metric;
  if (s.metric) {
    char buf[64];
    if (t.metric == std::floor(t.metric) && std::fabs(t.metric) < 9e15) metric = grouped(t.metric);
    else std::snprintf(buf, sizeof buf, "%.6g", t.metric), metric = buf;
    metric = " " + std::string(static_cast<std::size_t>(std::max(0, metric_width(s) - static_cast<int>(metric.size()))), ' ') + metric;
  }
  std::printf("%3s %7s %16s %14s %11.6f %7.1f %14s%s  %s\n", flt, type, grouped(t.max_buf).c_str(), grouped(t.visits).c_str(), t.time,
              pct, per, metric.c_str(), name.c_str());
}

void print_estimate(const Estimate& e, const char* label) {
  const int width = 58 + static_cast<int>(std::strlen(label));
  auto line = [&](const char* what, const std::string& value) {
    std::printf("%-*s %s\n", width, (std::string(what) + label + ":").c_str(), value.c_str());
  };
  line("Estimated aggregate size of event trace", bytes_text(e.trace_bytes));
  line("Estimated requirements for largest trace buffer (max_buf)", bytes_text(e.max_buf));
  line("Estimated memory requirements (PROF_TOTAL_MEMORY)", memory_text(e.total_memory));
}

bool in_group(const Row& r, Group g) { return g == Group::ALL || r.group == g; }

/// The rows scorep-score adds for a filter: ALL-FLT (what remains), FLT (what the filter
/// removes), then <GROUP>-FLT per group (what remains of it); '*' marks a partly filtered group.
struct FilteredRow {
  const char* mark;
  std::string type, name;
  Totals t;
};
std::vector<Group> present_groups(const Score& s);
std::vector<FilteredRow> filtered_rows(const Score& s) {
  std::vector<FilteredRow> out;
  for (Group g : present_groups(s)) {
    const Totals whole = sum(s, [g](const Row& r) { return in_group(r, g); });
    const Totals rest = sum(s, [g](const Row& r) { return in_group(r, g) && !r.filtered; });
    const std::string type = kGroupName[static_cast<int>(g)];
    if (rest.any) out.push_back({whole.some_filtered ? "*" : "-", type, type + "-FLT", rest});
    if (g == Group::ALL) {
      const Totals flt = sum(s, [](const Row& r) { return r.filtered; });
      if (flt.any) out.push_back({"+", "FLT", "FLT", flt});
    }
  }
  return out;
}

/// Groups that occur, in kGroupName order, ALL first.
std::vector<Group> present_groups(const Score& s) {
  std::vector<Group> out{Group::ALL};
  for (int g = 1; g < static_cast<int>(Group::COUNT); ++g)
    for (const Row& r : s.rows)
      if (static_cast<int>(r.group) == g) {
        out.push_back(static_cast<Group>(g));
        break;
      }
  return out;
}

// ---------------------------------------------------------------------------------------------
// GPU activities, as nvprof's summary shows them
// ---------------------------------------------------------------------------------------------

/// `v` (in `units[0]`, each next unit 1000 times larger) with five significant digits and the
/// unit that keeps it below 1000, as nvprof writes it: 2.0730ms, 856.75us, 16.777MB; values in
/// the first unit are whole (928ns, 512B).
std::string nv_scaled(double v, const char* const* units, int n) {
  if (!(v > 0)) return std::string("0") + units[0];
  int u = 0;
  while (u + 1 < n && v >= 1000) v /= 1000, ++u;
  char buf[48];
  for (;;) {
    const int digits = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 1 + static_cast<int>(std::floor(std::log10(v)));
    const int decimals = u == 0 ? 0 : std::max(0, 5 - digits);
    std::snprintf(buf, sizeof buf, "%.*f%s", decimals, v, units[u]);
    if (u + 1 < n && std::strtod(buf, nullptr) >= 1000) {  // rounded up to the next unit: 999.996us
      v /= 1000, ++u;
      continue;
    }
    return buf;
  }
}

std::string nv_time(double seconds) {
  static const char* const kUnits[] = {"ns", "us", "ms", "s"};
  return nv_scaled(seconds * 1e9, kUnits, 4);
}

std::string nv_bytes(double bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  return nv_scaled(bytes, kUnits, 5);
}

std::string nv_throughput(double bytes, double seconds) {
  static const char* const kUnits[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  if (!(seconds > 0)) return "-";
  return nv_scaled(bytes / seconds, kUnits, 5);
}

const char* gpu_kind_name(GpuKind k) { return k == GpuKind::Kernel ? "kernel" : k == GpuKind::Copy ? "copy" : "memset"; }

/// Copies and memsets with their bytes (bytes_copied), most bytes first.
std::vector<const GpuActivity*> gpu_transfers(const Score& s) {
  std::vector<const GpuActivity*> out;
  if (!s.have_bytes_copied) return out;
  for (const GpuActivity& a : s.gpu)
    if (a.kind != GpuKind::Kernel) out.push_back(&a);
  std::stable_sort(out.begin(), out.end(), [](const GpuActivity* a, const GpuActivity* b) { return a->bytes > b->bytes; });
  return out;
}

void print_gpu(const Score& s) {
  std::printf("\nGPU activities on %zu GPU stream%s (GPU time; Min and Max of one execution):\n", s.gpu_streams,
              s.gpu_streams == 1 ? "" : "s");
  std::printf("%16s %8s %9s %9s %9s %9s %9s  %s\n", "Type", "Time(%)", "Total", "Calls", "Avg", "Min", "Max", "Name");
  const char* type = "GPU activities:";
  for (const GpuActivity& a : s.gpu) {
    const double pct = s.gpu_time > 0 ? 100.0 * a.time / s.gpu_time : 0.0;
    std::printf("%16s %7.2f%% %9s %9.0f %9s %9s %9s  %s\n", type, pct, nv_time(a.time).c_str(), a.calls,
                nv_time(a.calls > 0 ? a.time / a.calls : 0).c_str(), nv_time(a.min).c_str(), nv_time(a.max).c_str(),
                s.profile.regions[a.region].name.c_str());
    type = "";
  }
  const std::vector<const GpuActivity*> transfers = gpu_transfers(s);
  if (transfers.empty()) return;
  std::printf("\n%16s %9s %9s %9s %11s  %s\n", "Type", "Size", "Calls", "Time", "Throughput", "Name");
  type = "GPU transfers:";
  for (const GpuActivity* a : transfers) {
    std::printf("%16s %9s %9.0f %9s %11s  %s\n", type, nv_bytes(a->bytes).c_str(), a->calls, nv_time(a->time).c_str(),
                nv_throughput(a->bytes, a->time).c_str(), s.profile.regions[a->region].name.c_str());
    type = "";
  }
}

/// The one line that says how the folded visits are counted.
std::string folded_text(const Score& s) {
  std::string depth = std::to_string(s.folded_depth_min);
  if (s.folded_depth_max != s.folded_depth_min) depth += ".." + std::to_string(s.folded_depth_max);
  return grouped(s.folded) + " visits folded below PROF_PROFILING_MAX_CALLPATH_DEPTH=" + depth +
         " are counted in the estimates (as visits of the region at the cutoff)";
}

/// A hint when most of the time is exclusive to one compiler-instrumented region entered at most
/// once per location (typically main): the profile cannot say why no callee holds that time, but
/// one common cause is that the callees are declared inline and so, with the GCC plugin, have no
/// hooks (issue 14, item 7). Nothing when no region holds half the time.
void print_exclusive_hint(const Score& s) {
  const Row* top = nullptr;
  for (const Row& r : s.rows)
    if (r.filterable && (!top || r.time > top->time)) top = &r;
  if (!top || s.total_time <= 0 || top->time < 0.5 * s.total_time || top->visits > static_cast<double>(s.profile.locations.size()))
    return;
  const std::string& name = s.profile.regions[top->region].name;
  std::printf("\n(hint: %.1f %% of the time is exclusive to %s, entered once per location. If that time is spent in\n"
              " functions declared inline: prof's GCC plugin (prof-wrap's default) gives them no hooks, so their time\n"
              " counts as %s's; to measure them, name them in an INCLUDE rule of a filter file given to\n"
              " prof-wrap --instrument-filter=FILE, and rebuild)\n",
              100.0 * top->time / s.total_time, name.c_str(), name.c_str());
}

/// -f: the rules of the filter that match no function of the profile the filter applies to.
std::string unmatched_hint(const Options& o, const Score& s) {
  const std::size_t n = s.unmatched.size();
  return (n == 1 ? std::string("1 rule of ") : std::to_string(n) + " rules of ") + o.filter_file + " match" + (n == 1 ? "es" : "") +
         " no function of this profile that a filter applies to: " + prof::filter::unmatched_text(s.unmatched) + "; correct " +
         (n == 1 ? "its pattern or remove it" : "their patterns or remove them");
}

void print_text(const Options& o, const Score& s, bool have_filter) {
  const Totals all = sum(s, [](const Row&) { return true; });
  const Estimate e = estimate(s, all, o.page_size);
  const std::size_t nl = s.profile.locations.size(), np = s.locations_per_process.size();
  std::string streams;
  if (s.gpu_streams == 1) streams = ", 1 of them a GPU stream";
  else if (s.gpu_streams > 1) streams = ", " + std::to_string(s.gpu_streams) + " of them GPU streams";
  std::printf("Profile: %s (%zu call paths, %zu location%s in %zu process%s%s)\n\n", s.path.c_str(), s.profile.cnodes.size(), nl,
              nl == 1 ? "" : "s", np, np == 1 ? "" : "es", streams.c_str());
  print_estimate(e, "");
  std::uint64_t suggested = e.total_memory;
  if (have_filter) {
    const Estimate f = estimate(s, sum(s, [](const Row& r) { return !r.filtered; }), o.page_size);
    std::printf("\n");
    print_estimate(f, " after filtering");
    suggested = f.total_memory;
  }
  if (s.folded > 0) std::printf("%s\n", folded_text(s).c_str());
  std::printf("(hint: when tracing, set PROF_TOTAL_MEMORY=%s to avoid flushes during the run,\n"
              " or reduce the requirements with a filter file: prof-score -g writes one)\n\n",
              memory_text(suggested).c_str());
  std::string metric_head;
  if (s.metric) {
    metric_head = s.metric->disp_name + "[" + s.metric->uom + "]";
    metric_head = " " + std::string(static_cast<std::size_t>(std::max(0, metric_width(s) - static_cast<int>(metric_head.size()))), ' ') + metric_head;
  }
  std::printf("%3s %7s %16s %14s %11s %7s %14s%s  %s\n", "flt", "type", "max_buf[B]", "visits", "time[s]", "time[%]",
              "time/visit[us]", metric_head.c_str(), "region");
  for (Group g : present_groups(s)) {
    const Totals t = sum(s, [g](const Row& r) { return in_group(r, g); });
    print_line(s, have_filter ? "-" : "", kGroupName[static_cast<int>(g)], t, kGroupName[static_cast<int>(g)]);
  }
  if (have_filter) {
    std::printf("\n");
    for (const FilteredRow& f : filtered_rows(s))
      print_line(s, f.mark, f.type.c_str(), f.t, f.name);
    if (!s.unmatched.empty()) std::printf("\n(hint: %s)\n", unmatched_hint(o, s).c_str());
  }
  if (o.regions) {
    std::printf("\n");
    std::vector<const Row*> rows;
    for (const Row& r : s.rows) rows.push_back(&r);
    sort_rows(rows, o.sort, s);
    for (const Row* r : rows)
      print_line(s, have_filter ? (r->filtered ? "+" : "-") : "", kGroupName[static_cast<int>(r->group)], of(*r),
                 region_name(s, *r, o.mangled));
  }
  if (s.gpu_streams > 0) print_gpu(s);
  print_exclusive_hint(s);
}

std::string json_estimate(const Estimate& e) {
  return "{\"trace_bytes\": " + json_number(e.trace_bytes) + ", \"max_buf\": " + json_number(e.max_buf) +
         ", \"max_raw_bytes\": " + json_number(e.max_raw) + ", \"total_memory\": " + json_number(static_cast<double>(e.total_memory)) +
         ", \"total_memory_text\": " + json_string(memory_text(e.total_memory)) + "}";
}

std::string json_row(const char* type, const std::string& name, const Totals& t, double total, const char* flt, bool metric) {
  std::string out = "{\"type\": " + json_string(type) + ", \"name\": " + json_string(name) + ", \"max_buf\": " + json_number(t.max_buf) +
                    ", \"trace_bytes\": " + json_number(t.otf2_bytes) + ", \"visits\": " + json_number(t.visits) +
                    ", \"time\": " + json_number(t.time) + ", \"time_percent\": " + json_number(total > 0 ? 100.0 * t.time / total : 0) +
                    ", \"time_per_visit_us\": " + (t.visits > 0 ? json_number(1e6 * t.time / t.visits) : std::string("null"));
  if (metric) out += ", \"metric\": " + json_number(t.metric);
  if (t.folded > 0) out += ", \"folded_visits\": " + json_number(t.folded);  // in visits too
  if (*flt) out += ", \"filtered\": " + json_string(flt);
  return out + "}";
}

void print_json(const Options& o, const Score& s, bool have_filter) {
  const Totals all = sum(s, [](const Row&) { return true; });
  std::string out = "{\n  \"profile\": " + json_string(s.path) + ",\n  \"call_paths\": " + std::to_string(s.profile.cnodes.size()) +
                    ",\n  \"locations\": " + std::to_string(s.profile.locations.size()) +
                    ",\n  \"processes\": " + std::to_string(s.locations_per_process.size()) +
                    ",\n  \"total_time\": " + json_number(s.total_time) +
                    ",\n  \"estimate\": " + json_estimate(estimate(s, all, o.page_size)) +
                    ",\n  \"folded_visits\": " + json_number(s.folded) + ",\n  \"folded_depth\": " +
                    (s.folded > 0 ? json_number(static_cast<double>(s.folded_depth_min)) : std::string("null"));
  if (s.folded > 0) out += ",\n  \"folded_note\": " + json_string(folded_text(s));
  if (s.metric)
    out += ",\n  \"metric\": {\"name\": " + json_string(s.metric->disp_name) + ", \"uniq_name\": " + json_string(s.metric->uniq_name) +
           ", \"unit\": " + json_string(s.metric->uom) + "}";
  if (have_filter) {
    out += ",\n  \"unmatched_filter_rules\": [";
    const char* usep = "";
    for (const prof::filter::UnmatchedRule& u : s.unmatched) {
      out += std::string(usep) + "{\"file\": " + json_string(u.file) + ", \"line\": " + std::to_string(u.line) +
             ", \"rule\": " + json_string(std::string(u.exclude ? "EXCLUDE" : "INCLUDE") + (u.mangled ? " MANGLED" : "")) +
             ", \"pattern\": " + json_string(u.pattern) + ", \"file_names\": " + (u.file_rule ? "true" : "false") +
             ", \"suggestion\": " + (u.suggestion.empty() ? std::string("null") : json_string(u.suggestion)) + "}";
      usep = ", ";
    }
    out += "]";
  }
  if (have_filter)
    out += ",\n  \"estimate_after_filtering\": " + json_estimate(estimate(s, sum(s, [](const Row& r) { return !r.filtered; }), o.page_size));
  out += ",\n  \"groups\": [";
  const char* sep = "\n    ";
  for (Group g : present_groups(s)) {
    const Totals t = sum(s, [g](const Row& r) { return in_group(r, g); });
    out += sep + json_row(kGroupName[static_cast<int>(g)], kGroupName[static_cast<int>(g)], t, s.total_time, flt_mark(t, have_filter), s.metric != nullptr);
    sep = ",\n    ";
  }
  if (have_filter) {
    out += "\n  ],\n  \"groups_after_filtering\": [";
    sep = "\n    ";
    for (const FilteredRow& f : filtered_rows(s)) {
      out += sep + json_row(f.type.c_str(), f.name, f.t, s.total_time, f.mark, s.metric != nullptr);
      sep = ",\n    ";
    }
  }
  out += "\n  ],\n  \"regions\": [";
  std::vector<const Row*> rows;
  for (const Row& r : s.rows) rows.push_back(&r);
  sort_rows(rows, o.sort, s);
  sep = "\n    ";
  for (const Row* r : rows) {
    const Totals t = of(*r);
    std::string row = json_row(kGroupName[static_cast<int>(r->group)], s.profile.regions[r->region].name, t, s.total_time,
                               have_filter ? (r->filtered ? "+" : "-") : "", s.metric != nullptr);
    row.pop_back();
    const cube4::Region& reg = s.profile.regions[r->region];
    row += ", \"mangled\": " + json_string(reg.canonical) + ", \"file\": " + json_string(reg.file) +
           ", \"paradigm\": " + json_string(reg.paradigm) + ", \"filterable\": " + (r->filterable ? "true" : "false") + "}";
    out += sep + row;
    sep = ",\n    ";
  }
  out += "\n  ]";
  if (s.gpu_streams > 0) {
    out += ",\n  \"gpu_streams\": " + std::to_string(s.gpu_streams) + ",\n  \"gpu_time\": " + json_number(s.gpu_time) +
           ",\n  \"gpu_activities\": [";
    sep = "\n    ";
    for (const GpuActivity& a : s.gpu) {
      out += std::string(sep) + "{\"name\": " + json_string(s.profile.regions[a.region].name) + ", \"kind\": " + json_string(gpu_kind_name(a.kind)) +
             ", \"time_percent\": " + json_number(s.gpu_time > 0 ? 100.0 * a.time / s.gpu_time : 0) +
             ", \"time\": " + json_number(a.time) + ", \"calls\": " + json_number(a.calls) +
             ", \"avg\": " + json_number(a.calls > 0 ? a.time / a.calls : 0) + ", \"min\": " + json_number(a.min) +
             ", \"max\": " + json_number(a.max);
      if (s.have_bytes_copied && a.kind != GpuKind::Kernel) out += ", \"bytes\": " + json_number(a.bytes);
      out += "}";
      sep = ",\n    ";
    }
    out += "\n  ],\n  \"gpu_transfers\": [";
    sep = "\n    ";
    for (const GpuActivity* a : gpu_transfers(s)) {
      out += std::string(sep) + "{\"name\": " + json_string(s.profile.regions[a->region].name) + ", \"bytes\": " + json_number(a->bytes) +
             ", \"calls\": " + json_number(a->calls) + ", \"time\": " + json_number(a->time) +
             ", \"gb_per_s\": " + (a->time > 0 ? json_number(a->bytes / a->time / 1e9) : std::string("null")) + "}";
      sep = ",\n    ";
    }
    out += "\n  ]";
  }
  out += "\n}\n";
  std::fputs(out.c_str(), stdout);
}

// ---------------------------------------------------------------------------------------------
// -g: the initial filter
// ---------------------------------------------------------------------------------------------

struct GenerateRules {
  bool all = false;             // -g all: every filterable region with visits
  double buffer_percent = 1;    // a region's share of max_buf (after -f), %
  double buffer_absolute = -1;  // MiB of max_buf, when given; both conditions must hold
  double time_per_visit = 1;    // us
  double min_visits = 0;
  std::string type = "usr";
};

bool parse_generate(const std::string& spec, GenerateRules* g, std::string* err) {
  if (spec == "all") {
    g->all = true;
    return true;
  }
  std::size_t at = 0;
  while (at < spec.size()) {
    std::size_t comma = spec.find(',', at);
    const std::string item = spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    at = comma == std::string::npos ? spec.size() : comma + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) {
      *err = "-g: '" + item + "' is not key=value; expected e.g. -g bufferpercent=1,timepervisit=1";
      return false;
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "type") {
      if (value != "usr" && value != "com" && value != "both") {
        *err = "-g: type=" + value + "; expected usr, com or both";
        return false;
      }
      g->type = value;
      continue;
    }
    double* target = key == "bufferpercent"    ? &g->buffer_percent
                     : key == "bufferabsolute" ? &g->buffer_absolute
                     : key == "timepervisit"   ? &g->time_per_visit
                     : key == "visits"         ? &g->min_visits
                                               : nullptr;
    if (!target) {
      *err = "-g: unknown key '" + key + "'; expected bufferpercent, bufferabsolute, timepervisit, visits or type";
      return false;
    }
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end || !(v >= 0)) {
      *err = "-g: " + key + "=" + value + " is not a number >= 0";
      return false;
    }
    *target = v;
  }
  return true;
}

/// `path` renamed aside to a name that does not exist yet: path.old, path.old.1, ...
bool move_aside(const std::string& path, std::string* moved_to) {
  struct stat st;
  for (int i = 0; i < 1000; ++i) {
    const std::string old = path + ".old" + (i ? "." + std::to_string(i) : "");
    if (::stat(old.c_str(), &st) == 0) continue;
    *moved_to = old;
    return std::rename(path.c_str(), old.c_str()) == 0;
  }
  *moved_to = path + ".old.*";
  errno = EEXIST;
  return false;
}

/// The regions -g excludes, largest max_buf first. With -f, regions the filter already removes
/// are left out and the shares are of what remains, as in scorep-score.
std::vector<const Row*> choose(const GenerateRules& g, const Score& s) {
  const Totals rest = sum(s, [](const Row& r) { return !r.filtered; });
  std::vector<const Row*> chosen;
  for (const Row& r : s.rows) {
    if (!r.filterable || r.filtered || r.visits <= 0) continue;
    if (!g.all) {
      if ((g.type == "usr" && r.group != Group::USR) || (g.type == "com" && r.group != Group::COM)) continue;
      const bool share = rest.max_buf > 0 && 100.0 * r.max_buf / rest.max_buf > g.buffer_percent;
      const bool absolute = g.buffer_absolute < 0 || r.max_buf > g.buffer_absolute * 1048576.0;
      const bool short_visits = 1e6 * r.time / r.visits < g.time_per_visit;
      if (!share || !absolute || !short_visits || r.visits < g.min_visits) continue;
    }
    chosen.push_back(&r);
  }
  sort_rows(chosen, "maxbuffer", s);
  return chosen;
}

int generate(const Options& o, const GenerateRules& g, const Score& s) {
  const std::vector<const Row*> chosen = choose(g, s);
  struct stat st;
  if (::stat(o.generate_file.c_str(), &st) == 0) {
    std::string old;
    if (!move_aside(o.generate_file, &old)) {
      error(o.generate_file + " exists and cannot be renamed to " + old + " (" + std::strerror(errno) + "); remove it or choose another name with -o");
      return kExitError;
    }
    std::fprintf(stderr, "prof-score: %s existed and was renamed to %s\n", o.generate_file.c_str(), old.c_str());
  }
  std::string previous;
  if (!o.filter_file.empty()) {
    std::ifstream in(o.filter_file);
    std::stringstream ss;
    ss << in.rdbuf();
    previous = ss.str();
    if (!previous.empty() && previous.back() != '\n') previous += '\n';
  }
  FILE* f = std::fopen(o.generate_file.c_str(), "w");
  if (!f) {
    error("cannot write " + o.generate_file + " (" + std::strerror(errno) + "); choose a writable place with -o");
    return kExitError;
  }
  std::fprintf(f, "# %s filter written by prof-score -g from %s.\n", g.all ? "Maximal" : "Initial", s.path.c_str());
  if (g.all) {
    std::fprintf(f, "# Excludes every compiler-instrumented or Python function with visits");
  } else {
    std::fprintf(f, "# Excludes %s functions with more than %g %% of the trace (max_buf%s)", g.type.c_str(), g.buffer_percent,
                 previous.empty() ? "" : " after the filter below");
    if (g.buffer_absolute >= 0) std::fprintf(f, " and more than %g MiB", g.buffer_absolute);
    std::fprintf(f, ", under %g us per visit", g.time_per_visit);
    if (g.min_visits > 0) std::fprintf(f, " and at least %g visits", g.min_visits);
  }
  std::fprintf(f, ".\n# Check its effect with: prof-score -f %s %s\n# Use it with: PROF_FILTERING_FILE=%s\n", o.generate_file.c_str(),
               o.input.c_str(), o.generate_file.c_str());
  if (!previous.empty() && !s.unmatched.empty())
    std::fprintf(f, "\n# note: %s\n", unmatched_hint(o, s).c_str());
  if (!previous.empty()) std::fprintf(f, "\n# --- the rules of %s (-f), kept:\n%s# ---\n\n", o.filter_file.c_str(), previous.c_str());
  std::fprintf(f, "PROF_REGION_NAMES_BEGIN\n");
  for (const Row* r : chosen) {
    const cube4::Region& reg = s.profile.regions[r->region];
    // filter::quote_pattern: wildcards, '#', blanks and a keyword's first letter quoted, so the
    // pattern matches exactly this name (the mangled one carries a C++ function's signature).
    std::fprintf(f, "  EXCLUDE MANGLED %s  # %s, %s bytes, %s visits, %.3f us/visit\n", prof::filter::quote_pattern(reg.canonical.empty() ? reg.name : reg.canonical).c_str(),
                 reg.name.c_str(), grouped(r->max_buf).c_str(), grouped(r->visits).c_str(), 1e6 * r->time / r->visits);
  }
  std::fprintf(f, "PROF_REGION_NAMES_END\n");
  if (std::fclose(f) != 0) {
    error("cannot write " + o.generate_file + " (" + std::strerror(errno) + "); choose a writable place with -o");
    return kExitError;
  }
  std::fprintf(stderr, "prof-score: wrote %s: %zu region%s excluded\n", o.generate_file.c_str(), chosen.size(), chosen.size() == 1 ? "" : "s");
  return 0;
}

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

bool parse_size(const std::string& text, std::uint64_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return false;
  std::uint64_t mult = 1;
  if (*end == 'K' || *end == 'k') mult = 1u << 10, ++end;
  else if (*end == 'M' || *end == 'm') mult = 1u << 20, ++end;
  else if (*end == 'G' || *end == 'g') mult = 1u << 30, ++end;
  if (*end) return false;
  *out = v * mult;
  return *out >= 4096;
}

/// The profile inside an experiment directory: profile.cubex, or its only .cubex file (a run
/// with another PROF_PROFILING_BASE_NAME).
bool resolve_input(const std::string& input, std::string* path, std::string* err) {
  struct stat st;
  if (::stat(input.c_str(), &st) != 0) {
    *err = input + ": " + std::strerror(errno) + "; expected an experiment directory or a .cubex file";
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    *path = input;
    return true;
  }
  *path = input + "/profile.cubex";
  if (::stat(path->c_str(), &st) == 0) return true;
  std::vector<std::string> found;
  if (DIR* d = ::opendir(input.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 6 && name.compare(name.size() - 6, 6, ".cubex") == 0) found.push_back(name);
    }
    ::closedir(d);
  }
  if (found.size() == 1) {
    *path = input + "/" + found.front();
    return true;
  }
  *err = found.empty() ? input + " has no profile.cubex; run the program with PROF_ENABLE_PROFILING=true (the default), or name the .cubex file"
                       : input + " has " + std::to_string(found.size()) + " .cubex files but no profile.cubex; name the one to read";
  return false;
}

int run(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)what;
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-r") {
      o.regions = true;
    } else if (a == "-m") {
      o.mangled = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "-f") {
      const char* v = value("FILE");
      if (!v) return usage_error("-f needs a filter file");
      o.filter_file = v;
    } else if (a == "-g") {
      o.generate = true;
      // The optional argument is "all" or key=value[,...]; an existing path is the input.
      if (i + 1 < argc) {
        const std::string next = argv[i + 1];
        struct stat st;
        if (next == "all" || (next.find('=') != std::string::npos && ::stat(next.c_str(), &st) != 0)) o.generate_spec = argv[++i];
      }
    } else if (a == "-o") {
      const char* v = value("FILE");
      if (!v) return usage_error("-o needs a file name");
      o.generate_file = v;
    } else if (a == "-s") {
      const char* v = value("KEY");
      static const char* const keys[] = {"maxbuffer", "totaltime", "timepervisit", "visits", "name"};
      if (!v || std::find_if(std::begin(keys), std::end(keys), [&](const char* k) { return std::strcmp(k, v) == 0; }) == std::end(keys))
        return usage_error("-s needs one of maxbuffer, totaltime, timepervisit, visits, name");
      o.sort = v;
    } else if (a == "--metric") {
      const char* v = value("--metric");
      if (!v || !*v) return usage_error("--metric needs a metric name such as perf::PAGE-FAULTS");
      o.metric = v;
    } else if (a == "-c") {
      const char* v = value("N");
      char* end = nullptr;
      const long n = v ? std::strtol(v, &end, 10) : -1;
      if (!v || *end || n < 0 || n > 24) return usage_error("-c needs a number of metrics from 0 to 24 (prof records at most 24)");
      o.metrics = static_cast<unsigned>(n);
    } else if (a == "--page-size") {
      const char* v = value("SIZE");
      if (!v || !parse_size(v, &o.page_size)) return usage_error("--page-size needs a size such as 64K (at least 4K)");
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option " + a);
    } else if (o.input.empty()) {
      o.input = a;
    } else {
      return usage_error("more than one input: " + o.input + " and " + a);
    }
  }
  if (o.input.empty()) return usage_error("no input; expected an experiment directory or a .cubex file");
  GenerateRules rules;
  if (o.generate) {
    std::string spec_err;
    if (!parse_generate(o.generate_spec, &rules, &spec_err)) return usage_error(spec_err);
    if (rules.all && o.generate_file == "initial_prof.filter") o.generate_file = "max_prof.filter";
  }
  if (o.mangled && !o.regions) return usage_error("-m needs -r");

  Score s;
  s.metrics_per_event = o.metrics;
  std::string err;
  std::vector<std::string> metrics = {"visits", "time", "bytes_copied", "folded_visits"};  // all prof-score reads
  // --metric: by its unique name, which the writer made of the name (other characters than
  // [A-Za-z0-9:_=] become '_').
  std::string metric_uniq = o.metric;
  for (char& c : metric_uniq)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != ':' && c != '_' && c != '=') c = '_';
  if (!o.metric.empty()) metrics.push_back(metric_uniq);
  if (!resolve_input(o.input, &s.path, &err) || !cube4::read(s.path, &s.profile, &err, &metrics)) {
    error(err);
    return kExitError;
  }
  // The GPU view also needs min_time and max_time; each metric costs call paths x locations x
  // 8 bytes, so a profile without GPU streams is not read for them.
  if (std::any_of(s.profile.locations.begin(), s.profile.locations.end(), [](const cube4::ReadLocation& l) { return l.gpu(); })) {
    static const std::vector<std::string> kMinMax = {"min_time", "max_time"};
    cube4::ReadProfile extra;
    if (!cube4::read(s.path, &extra, &err, &kMinMax)) {
      error(err);
      return kExitError;
    }
    if (extra.cnodes.size() == s.profile.cnodes.size() && extra.locations.size() == s.profile.locations.size())
      for (cube4::ReadMetric& m : extra.metrics) s.profile.metrics.push_back(std::move(m));
  }
  // After the GPU metrics were appended: s.metric points into s.profile.metrics.
  if (!o.metric.empty()) {
    s.metric = s.profile.metric(metric_uniq);
    if (!s.metric || s.metric->values.size() != s.profile.cnodes.size() * s.profile.locations.size()) {
      std::string list;
      cube4::ReadProfile all;
      std::string all_err;
      if (cube4::read(s.path, &all, &all_err, nullptr))
        for (const cube4::ReadMetric& m : all.metrics) list += (list.empty() ? "" : ", ") + m.uniq_name;
      error(s.path + " has no metric '" + o.metric + "'; it has " + list);
      return kExitError;
    }
  }
  prof::filter::Filter filter;
  const bool have_filter = !o.filter_file.empty();
  if (have_filter && !filter.load(o.filter_file, &err)) {
    error(err);
    return kExitError;
  }
  if (!build(o, have_filter ? &filter : nullptr, &s, &err)) {
    error(err);
    return kExitError;
  }
  if (have_filter) s.unmatched = filter.unmatched(o.filter_file);
  for (const Row& r : s.rows)
    if (s.profile.regions[r.region].name == "PROFILE MEMORY FULL" && r.visits > 0)
      std::fprintf(stderr, "prof-score: warning: the profile ran out of memory during the run (it has 'PROFILE MEMORY FULL' nodes): "
                           "visits below them are missing and the estimates are too low; rerun with the PROF_TOTAL_MEMORY the run suggested\n");
  if (o.json) print_json(o, s, have_filter);
  else print_text(o, s, have_filter);
  if (std::fflush(stdout) != 0) {
    error("cannot write to standard output");
    return kExitError;
  }
  return o.generate ? generate(o, rules, s) : 0;
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
