// SPDX-License-Identifier: BSD-3-Clause
// prof-export: converts an OTF2 trace (prof's or another tool's) into Perfetto's native protobuf
// format (.pftrace), streaming: events are read in time order and written out as they come, so
// memory stays flat whatever the trace size.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tools/otf2_reader.hpp"
#include "tools/pftrace.hpp"

namespace {

namespace otf2 = prof::otf2;
namespace pf = prof::pftrace;
namespace fld = prof::pftrace::field;

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr std::uint64_t kDefaultSplitBytes = 512ull << 20;

const char kUsage[] =
    "usage: prof-export [options] <experiment directory | traces.otf2> ...\n"
    "\n"
    "Converts an OTF2 trace into Perfetto's protobuf trace format (.pftrace), for the Perfetto UI\n"
    "(https://ui.perfetto.dev, or a local trace_processor). One process per rank (\"rank N @ host\"),\n"
    "one thread track per CPU location, CUDA streams and NVTX lanes as tracks of their process;\n"
    "regions are slices (category: the paradigm), MPI messages flow arrows from send to receive,\n"
    "collectives and GPU copies carry their bytes, metrics are counter tracks, samples are\n"
    "call-stack samples. Default output: <experiment>/trace.pftrace.\n"
    "\n"
    "options:\n"
    "  -o FILE         output file (one input only); further parts are FILE with -2, -3, ...\n"
    "  --begin WHEN    start of the exported window; --end WHEN: its end. WHEN is a time since\n"
    "                  the trace start (1.5, 1.5s, 200ms, 30us) or a region or NVTX range name,\n"
    "                  NAME or NAME:K for its K-th occurrence (--begin takes its start, --end\n"
    "                  its end; --begin step:3 alone exports the 3rd step). Slices open at an\n"
    "                  edge are cut there.\n"
    "  --ranks LIST    only these ranks (processes), e.g. 0-3,7; their GPU streams too\n"
    "  --split SIZE    start a new file when one reaches SIZE (K, M, G; default 512M, which the\n"
    "                  UI loads in 1-2 GB of browser memory; 0: never). Each file stands alone.\n"
    "  -q              no progress lines on stderr\n"
    "  -h, --help      this text\n";

[[noreturn]] void die(const std::string& msg, int code = kExitError) {
  std::fprintf(stderr, "prof-export: error: %s\n", msg.c_str());
  std::exit(code);
}

bool parse_size(const std::string& s, std::uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno || v < 0) return false;
  std::string unit(end);
  double mul = 1;
  if (unit.empty() || unit == "B") mul = 1;
  else if (unit == "K" || unit == "k" || unit == "KB" || unit == "KiB") mul = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MiB") mul = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GiB") mul = 1024.0 * 1024 * 1024;
  else return false;
  out = static_cast<std::uint64_t>(v * mul);
  return true;
}

// A point in the trace: a time in seconds, or the start/end of the K-th occurrence of a region.
struct When {
  bool set = false;
  bool by_name = false;
  double seconds = 0;
  std::string name;
  unsigned occurrence = 1;
  std::string text;  // as given
};

bool parse_when(const std::string& s, When& w) {
  w.set = true;
  w.text = s;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() && v >= 0) {
    std::string unit(end);
    double mul = -1;
    if (unit.empty() || unit == "s") mul = 1;
    else if (unit == "ms") mul = 1e-3;
    else if (unit == "us") mul = 1e-6;
    else if (unit == "ns") mul = 1e-9;
    if (mul > 0) {
      w.seconds = v * mul;
      return true;
    }
  }
  w.by_name = true;
  w.name = s;
  const std::size_t colon = s.rfind(':');
  if (colon != std::string::npos && colon + 1 < s.size() &&
      s.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    w.name = s.substr(0, colon);
    w.occurrence = static_cast<unsigned>(std::strtoul(s.c_str() + colon + 1, nullptr, 10));
    if (w.occurrence == 0) return false;
  }
  return !w.name.empty();
}

bool parse_ranks(const std::string& s, std::vector<std::pair<unsigned, unsigned>>& out) {
  std::size_t i = 0;
  while (i < s.size()) {
    char* end = nullptr;
    unsigned long a = std::strtoul(s.c_str() + i, &end, 10);
    if (end == s.c_str() + i) return false;
    unsigned long b = a;
    i = static_cast<std::size_t>(end - s.c_str());
    if (i < s.size() && s[i] == '-') {
      ++i;
      b = std::strtoul(s.c_str() + i, &end, 10);
      if (end == s.c_str() + i || b < a) return false;
      i = static_cast<std::size_t>(end - s.c_str());
    }
    out.emplace_back(static_cast<unsigned>(a), static_cast<unsigned>(b));
    if (i < s.size()) {
      if (s[i] != ',') return false;
      ++i;
    }
  }
  return !out.empty();
}

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

const char* collective_name(unsigned op) {
  static const char* const kNames[] = {"barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather",
                                       "allgatherv", "alltoall", "alltoallv", "alltoallw", "allreduce", "reduce",
                                       "reduce_scatter", "scan", "exscan", "reduce_scatter_block"};
  return op < sizeof kNames / sizeof kNames[0] ? kNames[op] : "other";
}

// Interned categories, fixed for every sequence (defined in its first packet).
enum Category : std::uint8_t {
  kCatUser = 1, kCatCompiler, kCatOpenMP, kCatMpi, kCatCuda, kCatMeasurement, kCatPthread, kCatSampling, kCatPython,
  kCatOther, kCatCount
};
const char* const kCategoryNames[kCatCount] = {"", "user", "compiler", "openmp", "mpi", "cuda", "measurement",
                                               "pthread", "sampling", "python", "other"};

// Interned debug annotation names, fixed too.
enum ArgName : std::uint8_t {
  kArgBytes = 1, kArgPeer, kArgTag, kArgOp, kArgRoot, kArgSent, kArgReceived, kArgDirection, kArgComm, kArgCount
};
const char* const kArgNames[kArgCount] = {"", "bytes", "peer", "tag", "op", "root", "bytes_sent", "bytes_received",
                                          "direction", "comm"};

// Names that are not regions: iids after the regions'.
enum Special : std::uint32_t { kNameFlush = 0, kNameSend, kNameRecv, kNameOff, kNameOn, kSpecialCount };
const char* const kSpecialNames[kSpecialCount] = {"prof: buffer flush", "MPI send", "MPI recv", "measurement off",
                                                  "measurement on"};

constexpr std::uint32_t kFlushRegion = 0xfffffffeu;

enum class TrackKind : std::uint8_t { kThread, kStream, kLane };

struct Loc {
  std::uint64_t ref = 0;
  std::uint32_t index = 0;
  TrackKind kind = TrackKind::kThread;
  bool included = false;
  std::uint32_t process = 0;            // index into Exporter::processes_
  std::uint64_t uuid = 0;
  std::uint32_t seq = 0;
  std::int64_t tid = 0;
  std::string name;
  std::uint32_t world_rank = otf2::kUndefined32;  // in the MPI COMM_LOCATIONS group
  // Per file
  bool described = false;
  std::vector<bool> named;              // event name iids defined on this sequence (regions, then specials)
  std::vector<bool> functions;          // function names / frames defined (by region)
  std::unordered_set<std::uint32_t> callstacks;
  std::unordered_set<std::uint32_t> counters;  // metric members whose counter track is described
  // Across files
  std::vector<std::uint32_t> stack;     // open regions (kFlushRegion for a buffer flush)
  std::uint64_t last_ns = 0;
  std::uint64_t flush_end_ns = 0;       // a buffer flush slice open until then
  // Values waiting for the next event at the same time (metric values) or Leave (arguments).
  std::uint64_t metric_ns = ~0ull;
  std::uint32_t metric_class = 0;
  std::vector<std::uint8_t> metric_types;
  std::vector<std::uint64_t> metric_values;
  std::uint32_t correlation = 0;        // for the next Enter/Leave: a launch -> GPU work flow
  int pending_args = 0;                 // 0 none, 1 collective, 2 copy
  std::uint64_t arg_a = 0, arg_b = 0, arg_c = 0;
  std::uint32_t arg_op = 0, arg_root = 0;
};

struct Process {
  std::uint32_t group = 0;
  std::int32_t pid = 0;
  std::uint64_t uuid = 0;
  std::string name;
  bool included = false;
  bool described = false;
};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

struct MsgKey {
  std::uint32_t comm, src, dst, tag;
  bool operator==(const MsgKey& o) const { return comm == o.comm && src == o.src && dst == o.dst && tag == o.tag; }
};
struct MsgKeyHash {
  std::size_t operator()(const MsgKey& k) const {
    return mix(mix(mix(k.comm, k.src), k.dst), k.tag);
  }
};

// Finds the window edges given by region names: the start/end of their K-th occurrence.
class NameFinder : public otf2::EventSink {
 public:
  NameFinder(const otf2::Definitions& defs, When* begin, When* end) {
    for (When* w : {begin, end}) {
      if (!w || !w->set || !w->by_name) continue;
      Target t;
      t.when = w;
      t.is_end = (w == end);
      for (const auto& [ref, r] : defs.regions)
        if (r.name == w->name) t.regions.push_back(ref);
      targets_.push_back(t);
    }
  }
  bool missing(std::string& which) const {
    for (const Target& t : targets_)
      if (!t.done) {
        which = t.when->name + (t.when->occurrence > 1 ? ":" + std::to_string(t.when->occurrence) : "") +
                (t.regions.empty() ? " (no region has this name)" : " (found " + std::to_string(t.count) + " times)");
        return true;
      }
    return false;
  }
  std::uint64_t time_of(const When* w) const {
    for (const Target& t : targets_)
      if (t.when == w) return t.time;
    return 0;
  }
  void enter(std::uint64_t l, std::uint64_t t, std::uint32_t r) override {
    for (Target& x : targets_) {
      if (x.done || x.location != ~0ull) continue;
      if (std::find(x.regions.begin(), x.regions.end(), r) == x.regions.end()) continue;
      if (++x.count < x.when->occurrence) continue;
      if (!x.is_end) {
        x.time = t;
        x.done = true;
      } else {
        x.location = l;
        x.depth = depth_[l];
      }
    }
    ++depth_[l];
  }
  void leave(std::uint64_t l, std::uint64_t t, std::uint32_t) override {
    unsigned& d = depth_[l];
    if (d) --d;
    for (Target& x : targets_)
      if (!x.done && x.location == l && x.depth == d) {
        x.time = t;
        x.done = true;
      }
  }
  bool keep_going() override {
    for (const Target& t : targets_)
      if (!t.done) return true;
    return false;
  }

 private:
  struct Target {
    When* when = nullptr;
    bool is_end = false;
    std::vector<std::uint32_t> regions;
    unsigned count = 0;
    std::uint64_t location = ~0ull;
    unsigned depth = 0;
    bool done = false;
    std::uint64_t time = 0;
  };
  std::vector<Target> targets_;
  std::unordered_map<std::uint64_t, unsigned> depth_;
};

struct Options {
  std::string output;
  When begin, end;
  std::vector<std::pair<unsigned, unsigned>> ranks;
  std::uint64_t split_bytes = kDefaultSplitBytes;
  bool quiet = false;
};

class Exporter : public otf2::EventSink {
 public:
  Exporter(const otf2::Definitions& defs, const Options& opt, std::string output)
      : defs_(defs), opt_(opt), ticks_(defs.timer_resolution, defs.global_offset), base_output_(std::move(output)), ranks_(defs) {
    // Tables by region reference: otf2::Reader::open() took only references below 2^24, and
    // read_events() passes on only events whose region is defined (a damaged file's out-of-range
    // region once indexed `named` here: heap corruption, issue 30).
    for (const auto& [ref, r] : defs.regions) max_region_ = std::max(max_region_, ref + 1);
    region_category_.assign(max_region_, kCatOther);
    for (const auto& [ref, r] : defs.regions) region_category_[ref] = category_of(r);
    setup_tracks();
  }

  const std::vector<std::uint64_t>& selected() const { return selected_; }
  /// The GPU stream locations among the selected ones.
  std::vector<std::uint64_t> streams() const {
    std::vector<std::uint64_t> v;
    for (const Loc& l : locs_)
      if (l.included && l.kind == TrackKind::kStream) v.push_back(l.ref);
    return v;
  }
  /// Pre-pass: GPU work with this launch id is on stream `ref` (so the launch gets a flow arrow).
  void add_gpu_work(std::uint64_t ref, std::uint32_t id) {
    auto it = loc_index_.find(ref);
    if (it != loc_index_.end()) gpu_work_.insert(launch_key(locs_[it->second], id));
  }
  void set_window(std::uint64_t begin_ns, std::uint64_t end_ns) {
    begin_ns_ = begin_ns;
    end_ns_ = end_ns;
    in_window_ = begin_ns_ == 0;
  }

  bool start() {
    if (!open_file()) return false;
    started_ = std::chrono::steady_clock::now();
    return true;
  }

  // Closes what is still open (a crash, lost events, the window's end) and the file. False when
  // a file could not be written, or a --split part not be opened.
  bool finish() {
    no_cut_ = true;
    if (in_window_)
      for (Loc& l : locs_)
        if (l.included) close_all(l, l.last_ns);
    return close_file() && !failed_open_;
  }

  std::vector<std::string> files() const { return files_; }
  std::uint64_t events() const { return events_; }
  std::uint64_t slices() const { return slices_; }
  std::uint64_t flows() const { return flows_ + gpu_flows_; }
  std::uint64_t bytes_out() const { return bytes_out_; }

  // ---- EventSink
  void enter(std::uint64_t ref, std::uint64_t t, std::uint32_t region) override {
    Loc* l = loc(ref, t);
    if (!l) return;
    l->stack.push_back(region);
    if (!in_window_) {
      l->correlation = 0;
      return;
    }
    slice_begin(*l, region, true);
  }

  void leave(std::uint64_t ref, std::uint64_t t, std::uint32_t region) override {
    Loc* l = loc(ref, t);
    if (!l) return;
    if (l->stack.empty()) return;  // a Leave without Enter (lost events): nothing to end
    // Only the innermost region can end; a Leave of an outer one ends the inner ones too.
    if (l->stack.back() != region && std::find(l->stack.begin(), l->stack.end(), region) != l->stack.end()) {
      while (l->stack.back() != region) {
        l->stack.pop_back();
        if (in_window_) slice_end(*l, false);
      }
    } else if (l->stack.back() != region) {
      return;
    }
    l->stack.pop_back();
    if (in_window_) slice_end(*l, true);
    else l->pending_args = 0;  // a collective's or copy's arguments outside the window
  }

  void metric(std::uint64_t ref, std::uint64_t t, std::uint32_t cls, unsigned n, const std::uint8_t* types,
              const std::uint64_t* values) override {
    Loc* l = loc(ref, t);
    if (!l || !in_window_) return;
    flush_metric(*l);
    l->metric_ns = l->last_ns;
    l->metric_class = cls;
    l->metric_types.assign(types, types + n);
    l->metric_values.assign(values, values + n);
  }

  void message(std::uint64_t ref, std::uint64_t t, bool send, std::uint32_t peer, std::uint32_t comm, std::uint32_t tag,
               std::uint64_t bytes) override {
    Loc* l = loc(ref, t);
    if (!l) return;
    // Counted outside the window too: the n-th send still meets the n-th receive.
    const std::uint32_t self = ranks_.rank_in(comm, l->world_rank);
    MsgKey key{comm, send ? self : peer, send ? peer : self, tag};
    std::uint32_t& n = (send ? sends_ : recvs_)[key];
    ++n;
    std::uint64_t id = mix(mix(MsgKeyHash()(key), n), 0x70726f66ull) | 1;
    if (!in_window_) return;
    // The send's instant starts the arrow, the receive's ends it. A receive that comes first (the
    // ranks' clocks corrected by different offsets) gets none: the arrow would point backwards.
    bool flow = false;
    if (send) {
      flow = early_recvs_.erase(id) == 0 && peer_included(comm, peer);
      if (flow) open_flows_.insert(id);
    } else {
      flow = open_flows_.erase(id) > 0;
      if (!flow) early_recvs_.insert(id);
    }
    const std::size_t p = out_.packet();
    pf::Encoder e(out_.buffer());
    const std::size_t te = named_event(e, *l, pf::kInstant, max_region_ + (send ? kNameSend : kNameRecv), kCatMpi);
    arg_uint(e, kArgPeer, peer);
    arg_uint(e, kArgTag, tag);
    arg_uint(e, kArgBytes, bytes);
    if (flow) e.fixed64(send ? fld::kTeFlowIds : fld::kTeTerminatingFlowIds, id);
    e.end(te);
    out_.done(p);
    ++slices_;
    if (flow && !send) ++flows_;
    after_packet();
  }

  void collective_end(std::uint64_t ref, std::uint64_t t, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
                      std::uint64_t sent, std::uint64_t received) override {
    Loc* l = loc(ref, t);
    if (!l) return;
    l->pending_args = 1;
    l->arg_op = op;
    l->arg_root = root;
    l->arg_a = sent;
    l->arg_b = received;
    l->arg_c = comm;
  }

  void rma(std::uint64_t ref, std::uint64_t t, bool get, std::uint32_t, std::uint64_t bytes) override {
    Loc* l = loc(ref, t);
    if (!l) return;
    l->pending_args = 2;
    l->arg_a = bytes;
    l->arg_b = get ? 1 : 0;
  }

  void correlation(std::uint64_t ref, std::uint64_t, std::uint32_t id) override {
    auto it = loc_index_.find(ref);
    if (it != loc_index_.end()) locs_[it->second].correlation = id;
  }

  void sample(std::uint64_t ref, std::uint64_t t, std::uint32_t cc) override {
    Loc* l = loc(ref, t);
    if (!l || !in_window_ || l->kind != TrackKind::kThread) return;
    flush_metric(*l);
    std::string& b = out_.buffer();
    const std::size_t p = out_.packet();
    pf::Encoder e(b);
    e.varint(fld::kTimestamp, l->last_ns);
    e.varint(fld::kSequenceId, l->seq);
    intern_callstack(e, *l, cc);
    e.varint(fld::kSequenceFlags, pf::kSeqNeedsIncrementalState);
    const std::size_t ps = e.begin(fld::kPerfSample);
    e.varint(fld::kPsPid, static_cast<std::uint32_t>(processes_[l->process].pid));
    e.varint(fld::kPsTid, static_cast<std::uint32_t>(l->tid));
    e.varint(fld::kPsCallstackIid, cc + 1ull);
    e.end(ps);
    out_.done(p);
    after_packet();
  }

  void buffer_flush(std::uint64_t ref, std::uint64_t t, std::uint64_t stop) override {
    Loc* l = loc(ref, t);
    if (!l) return;
    l->stack.push_back(kFlushRegion);
    l->flush_end_ns = std::max(ticks_.ns(stop), l->last_ns);
    if (in_window_) slice_begin(*l, kFlushRegion, false);
  }

  void measurement_on_off(std::uint64_t ref, std::uint64_t t, bool on) override {
    Loc* l = loc(ref, t);
    if (!l || !in_window_) return;
    instant(*l, max_region_ + (on ? kNameOn : kNameOff), kCatMeasurement);
  }

  bool keep_going() override {
    if (stopped_) return false;
    if (!opt_.quiet) progress();
    return true;
  }

  void progress() {
    const auto now = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(now - started_).count();
    if (secs < 2 || secs < next_progress_) return;
    next_progress_ = secs + 2;
    const double length = static_cast<double>(ticks_.ns(defs_.global_offset + defs_.trace_length));
    const double pct = length > 0 ? std::min(100.0, 100.0 * static_cast<double>(now_ns_) / length) : 0;
    std::fprintf(stderr, "prof-export: %5.1f%% of the trace, %" PRIu64 " events, %.1f MB written, %.1f s\n", pct,
                 events_, static_cast<double>(bytes_out_ + out_.size()) / 1e6, secs);
  }

 private:
  static std::uint8_t category_of(const otf2::Region& r) {
    const std::string& f = r.file;
    if (f.size() > 3 && f.compare(f.size() - 3, 3, ".py") == 0) return kCatPython;
    switch (r.paradigm) {
      case otf2::kParadigmUser: return kCatUser;
      case otf2::kParadigmCompiler: return kCatCompiler;
      case otf2::kParadigmOpenMP: return kCatOpenMP;
      case otf2::kParadigmMpi: return kCatMpi;
      case otf2::kParadigmCuda: return kCatCuda;
      case otf2::kParadigmMeasurement: return kCatMeasurement;
      case otf2::kParadigmPthread: return kCatPthread;
      case otf2::kParadigmSampling: return kCatSampling;
      default: return kCatOther;
    }
  }

  bool rank_selected(unsigned rank) const {
    if (opt_.ranks.empty()) return true;
    for (const auto& [a, b] : opt_.ranks)
      if (rank >= a && rank <= b) return true;
    return false;
  }

  void setup_tracks() {
    // Processes in rank order (otf2::ProcessMap).
    const otf2::ProcessMap pm(defs_);
    for (const std::uint32_t ref : pm.groups()) {
      Process p;
      p.group = ref;
      p.pid = static_cast<std::int32_t>(processes_.size() + 1);
      p.uuid = defs_.locations.size() + 1 + processes_.size();
      const unsigned rank = static_cast<unsigned>(processes_.size());
      const std::string host = defs_.host_of(ref);
      p.name = "rank " + std::to_string(rank) + (host.empty() ? "" : " @ " + host);
      p.included = rank_selected(rank);
      processes_.push_back(p);
    }
    // uuids, dense so that their varints stay short: locations 1..L, processes L+1..L+P, then
    // one counter track per (location, metric member).
    counter_base_ = defs_.locations.size() + processes_.size() + 1;
    for (const auto& [ref, m] : defs_.metric_members) member_ordinal_.emplace(ref, static_cast<std::uint32_t>(member_ordinal_.size()));
    std::int64_t next_tid = 1000000;
    std::unordered_set<std::uint32_t> main_thread_taken;
    for (const otf2::Location& d : defs_.locations) {
      Loc l;
      l.ref = d.ref;
      l.index = static_cast<std::uint32_t>(locs_.size());
      l.name = d.name;
      l.uuid = 1 + l.index;
      l.seq = 1 + l.index;
      if (!pm.process_of(d, &l.process)) continue;  // a location outside every process: not shown
      l.included = processes_[l.process].included;
      switch (otf2::ProcessMap::kind(d)) {
        case otf2::LocationKind::Stream: l.kind = TrackKind::kStream; break;
        case otf2::LocationKind::Lane: l.kind = TrackKind::kLane; break;
        case otf2::LocationKind::Thread:
          l.kind = TrackKind::kThread;
          if (main_thread_taken.insert(l.process).second) l.tid = processes_[l.process].pid;
          else l.tid = next_tid++;
          break;
        case otf2::LocationKind::Other: continue;  // metric locations: prof writes none
      }
      l.world_rank = ranks_.world_rank(d.ref);
      loc_index_[d.ref] = l.index;
      if (l.included) selected_.push_back(d.ref);
      locs_.push_back(std::move(l));
    }
  }

  // The location of an event, with its time in ns (never before its previous event).
  Loc* loc(std::uint64_t ref, std::uint64_t ticks) {
    ++events_;
    Loc* l;
    if (ref == cached_ref_) {
      l = cached_;
    } else {
      auto it = loc_index_.find(ref);
      if (it == loc_index_.end()) return nullptr;
      l = &locs_[it->second];
      cached_ref_ = ref;
      cached_ = l;
    }
    std::uint64_t ns = ticks_.ns(ticks);
    if (ns > now_ns_) now_ns_ = ns;
    window(ns);
    if (ns < l->last_ns) ns = l->last_ns;
    if (l->metric_ns != ~0ull && l->metric_ns != ns) flush_metric(*l);
    if (l->flush_end_ns) end_flush(*l, ns);
    l->last_ns = ns;
    return l;
  }

  void window(std::uint64_t ns) {
    if (!in_window_ && ns >= begin_ns_ && !stopped_ && ns <= end_ns_) {
      in_window_ = true;
      for (Loc& l : locs_)
        if (l.included) reopen_all(l, begin_ns_);
    }
    if (in_window_ && ns > end_ns_) {
      for (Loc& l : locs_)
        if (l.included) close_all(l, std::max(l.last_ns, end_ns_));
      in_window_ = false;
      stopped_ = true;
    }
  }

  // A buffer flush slice ends at its stop time, or at the next event of its location if that
  // comes first.
  void end_flush(Loc& l, std::uint64_t ns) {
    const std::uint64_t at = std::min(l.flush_end_ns, ns);
    l.flush_end_ns = 0;
    if (l.stack.empty() || l.stack.back() != kFlushRegion) return;
    l.stack.pop_back();
    if (in_window_) {
      l.last_ns = std::max(l.last_ns, at);
      slice_end(l, false);
    }
  }

  std::uint64_t launch_key(const Loc& l, std::uint32_t id) const {
    return mix(mix(0x67707566ull, processes_[l.process].pid), id) | 1;
  }

  bool peer_included(std::uint32_t comm, std::uint32_t peer) const {
    auto it = loc_index_.find(ranks_.location_of(ranks_.world_of(comm, peer)));
    return it != loc_index_.end() && locs_[it->second].included;
  }

  // ---- Files and descriptors
  bool open_file() {
    std::string path = base_output_;
    if (files_.size()) {
      const std::size_t dot = path.rfind(".pftrace");
      const std::string part = "-" + std::to_string(files_.size() + 1);
      if (dot != std::string::npos && dot + 8 == path.size()) path.insert(dot, part);
      else path += part;
    }
    if (!out_.open(path)) return false;
    files_.push_back(path);
    open_flows_.clear();
    for (Process& p : processes_) p.described = false;
    for (Loc& l : locs_) {
      l.described = false;
      l.named.assign(max_region_ + kSpecialCount, false);
      l.functions.assign(0, false);
      l.callstacks.clear();
      l.counters.clear();
    }
    // Descriptors first: processes, then their tracks (in location order).
    for (Process& p : processes_)
      if (p.included) describe_process(p);
    for (Loc& l : locs_)
      if (l.included) describe_location(l);
    return true;
  }

  bool close_file() {
    bytes_out_ += out_.size();
    return out_.close();
  }

  void after_packet() {
    if (opt_.split_bytes && out_.size() >= opt_.split_bytes && !no_cut_) cut();
  }

  // A new file at the current time: open slices end here and begin again in the next file.
  void cut() {
    no_cut_ = true;
    const std::uint64_t at = now_ns_;
    for (Loc& l : locs_)
      if (l.included) close_all(l, std::max(l.last_ns, at));
    close_file();
    if (!open_file()) {
      failed_open_ = true;
      stopped_ = true;
      return;
    }
    for (Loc& l : locs_)
      if (l.included) reopen_all(l, std::max(l.last_ns, at));
    no_cut_ = false;
  }

  void describe_process(Process& p) {
    const std::size_t pk = out_.packet();
    pf::Encoder e(out_.buffer());
    const std::size_t td = e.begin(fld::kTrackDescriptor);
    e.varint(fld::kTdUuid, p.uuid);
    const std::size_t pd = e.begin(fld::kTdProcess);
    e.sint(fld::kPdPid, p.pid);
    e.bytes(fld::kPdProcessName, p.name);
    e.end(pd);
    e.end(td);
    out_.done(pk);
    p.described = true;
  }

  void describe_location(Loc& l) {
    const Process& p = processes_[l.process];
    std::string& b = out_.buffer();
    const std::size_t pk = out_.packet();
    pf::Encoder e(b);
    // The first packet of the location's sequence: clears its state, interns the fixed tables,
    // sets the sequence's default track.
    e.varint(fld::kSequenceId, l.seq);
    e.varint(fld::kSequenceFlags, pf::kSeqIncrementalStateCleared | pf::kSeqNeedsIncrementalState);
    e.varint(fld::kFirstPacketOnSequence, 1);
    const std::size_t id = e.begin(fld::kInternedData);
    for (unsigned c = 1; c < kCatCount; ++c) interned(e, fld::kIdEventCategories, c, kCategoryNames[c]);
    for (unsigned a = 1; a < kArgCount; ++a) interned(e, fld::kIdDebugAnnotationNames, a, kArgNames[a]);
    e.end(id);
    const std::size_t df = e.begin(fld::kTraceDefaults);
    const std::size_t tdf = e.begin(fld::kDefaultsTrackEvent);
    e.varint(fld::kDefaultsTrackUuid, l.uuid);
    e.end(tdf);
    e.end(df);
    const std::size_t td = e.begin(fld::kTrackDescriptor);
    e.varint(fld::kTdUuid, l.uuid);
    if (l.kind == TrackKind::kThread) {
      const std::size_t th = e.begin(fld::kTdThread);
      e.sint(fld::kThPid, p.pid);
      e.sint(fld::kThTid, l.tid);
      e.bytes(fld::kThThreadName, l.name);
      e.end(th);
    } else {
      e.varint(fld::kTdParentUuid, p.uuid);
      e.bytes(fld::kTdName, l.name);
    }
    e.end(td);
    out_.done(pk);
    l.described = true;
  }

  static void interned(pf::Encoder& e, std::uint32_t table, std::uint64_t iid, std::string_view name) {
    const std::size_t m = e.begin(table);
    e.varint(fld::kIid, iid);
    e.bytes(fld::kInternedName, name);
    e.end(m);
  }

  // ---- Events
  std::string_view name_of(std::uint32_t name) const {
    if (name >= max_region_) return kSpecialNames[name - max_region_];
    auto it = defs_.regions.find(name);
    return it == defs_.regions.end() ? std::string_view("?") : std::string_view(it->second.name);
  }

  void intern_name(pf::Encoder& e, Loc& l, std::uint32_t name) {
    if (l.named[name]) return;
    l.named[name] = true;
    const std::size_t id = e.begin(fld::kInternedData);
    interned(e, fld::kIdEventNames, name + 1ull, name_of(name));
    e.end(id);
  }

  // Starts a packet with a named track event of location l: returns the TrackEvent's mark, for
  // more fields and e.end().
  std::size_t named_event(pf::Encoder& e, Loc& l, pf::EventType type, std::uint32_t name, std::uint8_t cat) {
    e.varint(fld::kTimestamp, l.last_ns);
    e.varint(fld::kSequenceId, l.seq);
    intern_name(e, l, name);
    e.varint(fld::kSequenceFlags, pf::kSeqNeedsIncrementalState);
    const std::size_t te = e.begin(fld::kTrackEvent);
    e.varint(fld::kTeType, type);
    e.varint(fld::kTeNameIid, name + 1ull);
    e.varint(fld::kTeCategoryIids, cat);
    return te;
  }

  void slice_begin(Loc& l, std::uint32_t region, bool with_metric) {
    const std::uint32_t name = region == kFlushRegion ? max_region_ + kNameFlush : region;
    const std::uint8_t cat = region == kFlushRegion ? static_cast<std::uint8_t>(kCatMeasurement) : region < max_region_ ? region_category_[region] : static_cast<std::uint8_t>(kCatOther);
    if (l.named[name] && (!with_metric || (l.metric_ns == ~0ull && !l.correlation))) {
      // The common case, encoded in one go: TracePacket { timestamp, sequence id, flags,
      // track_event { type, name_iid, category_iids } }.
      char* b = out_.reserve();
      char* q = b + 2;
      *q++ = 0x40;
      q = pf::put_varint(q, l.last_ns);
      *q++ = 0x50;
      q = pf::put_varint(q, l.seq);
      *q++ = 0x68;
      *q++ = pf::kSeqNeedsIncrementalState;
      *q++ = 0x5a;
      char* te = q++;
      *q++ = 0x48;
      *q++ = pf::kSliceBegin;
      *q++ = 0x50;
      q = pf::put_varint(q, name + 1ull);
      *q++ = 0x18;
      *q++ = static_cast<char>(cat);
      *te = static_cast<char>(q - te - 1);
      b[0] = 0x0a;
      b[1] = static_cast<char>(q - b - 2);
      out_.commit(q);
      ++slices_;
      after_packet();
      return;
    }
    const std::size_t p = out_.packet();
    pf::Encoder e(out_.buffer());
    const std::size_t te = named_event(e, l, pf::kSliceBegin, name, cat);
    if (with_metric) attach_metric(e, l);
    if (l.correlation && with_metric) gpu_flow(e, l);
    e.end(te);
    out_.done(p);
    ++slices_;
    after_packet();
  }

  // A CUDA launch (the host call's BEGIN) -> the GPU work it launched (its BEGIN on the stream).
  // The id is the process's correlation id; a graph launch's kernels share it: the first one
  // gets the arrow.
  // A launch with no GPU work (captured into a graph, or its records lost) gets no arrow.
  void gpu_flow(pf::Encoder& e, Loc& l) {
    const std::uint64_t id = launch_key(l, l.correlation);
    l.correlation = 0;
    if (l.kind == TrackKind::kThread) {
      if (gpu_work_.count(id) && open_flows_.insert(id).second) e.fixed64(fld::kTeFlowIds, id);
    } else if (l.kind == TrackKind::kStream && open_flows_.erase(id)) {
      e.fixed64(fld::kTeTerminatingFlowIds, id);
      ++gpu_flows_;
    }
  }

  void slice_end(Loc& l, bool with_metric) {
    if (!l.pending_args && (!with_metric || l.metric_ns == ~0ull)) {
      // The common case: TracePacket { timestamp, sequence id, track_event { type } }.
      char* b = out_.reserve();
      char* q = b + 2;
      *q++ = 0x40;
      q = pf::put_varint(q, l.last_ns);
      *q++ = 0x50;
      q = pf::put_varint(q, l.seq);
      *q++ = 0x5a;
      *q++ = 2;
      *q++ = 0x48;
      *q++ = pf::kSliceEnd;
      b[0] = 0x0a;
      b[1] = static_cast<char>(q - b - 2);
      out_.commit(q);
      after_packet();
      return;
    }
    std::string& b = out_.buffer();
    const std::size_t p = out_.packet();
    pf::Encoder e(b);
    e.varint(fld::kTimestamp, l.last_ns);
    e.varint(fld::kSequenceId, l.seq);
    if (l.pending_args) e.varint(fld::kSequenceFlags, pf::kSeqNeedsIncrementalState);
    const std::size_t te = e.begin(fld::kTrackEvent);
    e.varint(fld::kTeType, pf::kSliceEnd);
    if (with_metric) attach_metric(e, l);
    if (l.pending_args == 1) {
      arg_string(e, kArgOp, collective_name(l.arg_op));
      if (l.arg_root != otf2::kUndefined32) arg_uint(e, kArgRoot, l.arg_root);
      arg_uint(e, kArgSent, l.arg_a);
      arg_uint(e, kArgReceived, l.arg_b);
      arg_uint(e, kArgComm, l.arg_c);
    } else if (l.pending_args == 2) {
      arg_uint(e, kArgBytes, l.arg_a);
      arg_string(e, kArgDirection, l.arg_b ? "to device" : "to host");
    }
    l.pending_args = 0;
    e.end(te);
    out_.done(p);
    after_packet();
  }

  void instant(Loc& l, std::uint32_t name, std::uint8_t cat) {
    const std::size_t p = out_.packet();
    pf::Encoder e(out_.buffer());
    e.end(named_event(e, l, pf::kInstant, name, cat));
    out_.done(p);
    ++slices_;
    after_packet();
  }

  static void arg_uint(pf::Encoder& e, std::uint32_t name, std::uint64_t v) {
    const std::size_t a = e.begin(fld::kTeDebugAnnotations);
    e.varint(fld::kDaNameIid, name);
    e.varint(fld::kDaUint, v);
    e.end(a);
  }
  static void arg_string(pf::Encoder& e, std::uint32_t name, std::string_view v) {
    const std::size_t a = e.begin(fld::kTeDebugAnnotations);
    e.varint(fld::kDaNameIid, name);
    e.bytes(fld::kDaString, v);
    e.end(a);
  }

  std::uint64_t counter_uuid(const Loc& l, std::uint32_t member) const {
    auto it = member_ordinal_.find(member);
    const std::uint64_t ordinal = it == member_ordinal_.end() ? 0 : it->second;
    return counter_base_ + static_cast<std::uint64_t>(l.index) * member_ordinal_.size() + ordinal;
  }

  // Counter tracks are described at their first value (the metrics a location has are known only then).
  void describe_counter(Loc& l, std::uint32_t member) {
    if (!l.counters.insert(member).second) return;
    auto it = defs_.metric_members.find(member);
    std::string name = it == defs_.metric_members.end() ? "metric " + std::to_string(member) : it->second.name;
    const std::size_t pk = out_.packet();
    pf::Encoder e(out_.buffer());
    const std::size_t td = e.begin(fld::kTrackDescriptor);
    e.varint(fld::kTdUuid, counter_uuid(l, member));
    e.varint(fld::kTdParentUuid, l.uuid);
    e.bytes(fld::kTdName, name + " (" + l.name + ")");
    if (it != defs_.metric_members.end() && !it->second.description.empty()) e.bytes(fld::kTdDescription, it->second.description);
    const std::size_t cd = e.begin(fld::kTdCounter);
    if (it != defs_.metric_members.end() && !it->second.unit.empty()) e.bytes(fld::kCdUnitName, it->second.unit);
    e.end(cd);
    e.end(td);
    out_.done(pk);
  }

  const std::vector<std::uint32_t>* members_of(std::uint32_t cls) const {
    auto it = defs_.metric_classes.find(cls);
    return it == defs_.metric_classes.end() ? nullptr : &it->second;
  }

  // Metric values at the time of the slice event being written: carried by it (at most 8).
  void attach_metric(pf::Encoder& e, Loc& l) {
    if (l.metric_ns != l.last_ns || l.metric_values.empty()) return;
    const std::vector<std::uint32_t>* members = members_of(l.metric_class);
    if (!members || members->size() < l.metric_values.size() || l.metric_values.size() > 8) return;
    // The counter descriptors must be in the file before this packet: the packet is still being
    // encoded, so it is set aside and put back after them.
    bool fresh = false;
    for (std::size_t i = 0; i < l.metric_values.size(); ++i) fresh |= !l.counters.count((*members)[i]);
    if (fresh) return;  // written as separate counter events by flush_metric
    for (std::size_t i = 0; i < l.metric_values.size(); ++i) {
      if (l.metric_types[i] == otf2::kTypeDouble) {
        e.varint(45, counter_uuid(l, (*members)[i]));
      } else {
        e.varint(31, counter_uuid(l, (*members)[i]));
      }
    }
    for (std::size_t i = 0; i < l.metric_values.size(); ++i) {
      if (l.metric_types[i] == otf2::kTypeDouble) {
        double d;
        std::memcpy(&d, &l.metric_values[i], 8);
        e.dbl(46, d);
      } else {
        e.sint(12, static_cast<std::int64_t>(l.metric_values[i]));
      }
    }
    l.metric_values.clear();
    l.metric_ns = ~0ull;
  }

  // Metric values no slice event carried: counter events of their own.
  void flush_metric(Loc& l) {
    if (l.metric_ns == ~0ull) return;
    const std::uint64_t at = l.metric_ns;
    l.metric_ns = ~0ull;
    if (l.metric_values.empty() || !in_window_) return;
    const std::vector<std::uint32_t>* members = members_of(l.metric_class);
    if (!members) return;
    for (std::size_t i = 0; i < l.metric_values.size() && i < members->size(); ++i) {
      const std::uint32_t m = (*members)[i];
      describe_counter(l, m);
      const std::size_t p = out_.packet();
      pf::Encoder e(out_.buffer());
      e.varint(fld::kTimestamp, at);
      e.varint(fld::kSequenceId, l.seq);
      const std::size_t te = e.begin(fld::kTrackEvent);
      e.varint(fld::kTeType, pf::kCounter);
      e.varint(fld::kTeTrackUuid, counter_uuid(l, m));
      if (l.metric_types[i] == otf2::kTypeDouble) {
        double d;
        std::memcpy(&d, &l.metric_values[i], 8);
        e.dbl(fld::kTeDoubleCounterValue, d);
      } else {
        e.sint(fld::kTeCounterValue, static_cast<std::int64_t>(l.metric_values[i]));
      }
      e.end(te);
      out_.done(p);
    }
    l.metric_values.clear();
    after_packet();
  }

  void intern_callstack(pf::Encoder& e, Loc& l, std::uint32_t cc) {
    if (l.callstacks.count(cc)) return;
    // The chain of calling contexts, outermost first.
    std::vector<std::uint32_t> regions;
    for (std::uint32_t c = cc; c != otf2::kUndefined32 && regions.size() < 1024;) {
      auto it = defs_.calling_contexts.find(c);
      if (it == defs_.calling_contexts.end()) break;
      regions.push_back(it->second.region);
      c = it->second.parent;
    }
    std::reverse(regions.begin(), regions.end());
    const std::size_t id = e.begin(fld::kInternedData);
    if (l.functions.empty()) {
      // The placeholder mapping every frame refers to (older trace processors need one).
      l.functions.assign(max_region_ + 1, false);
      const std::size_t mp = e.begin(fld::kIdMappingPaths);
      e.varint(fld::kIid, 1);
      e.bytes(fld::kInternedName, "prof");
      e.end(mp);
      const std::size_t m = e.begin(fld::kIdMappings);
      e.varint(fld::kIid, 1);
      e.varint(fld::kMapPathStringIds, 1);
      e.end(m);
    }
    for (std::uint32_t r : regions) {
      const std::uint32_t k = r < max_region_ ? r : max_region_;
      if (l.functions[k]) continue;
      l.functions[k] = true;
      const std::size_t fn = e.begin(fld::kIdFunctionNames);
      e.varint(fld::kIid, k + 1ull);
      e.bytes(fld::kInternedName, r < max_region_ ? name_of(r) : std::string_view("?"));
      e.end(fn);
      const std::size_t fr = e.begin(fld::kIdFrames);
      e.varint(fld::kIid, k + 1ull);
      e.varint(fld::kFrameFunctionNameId, k + 1ull);
      e.varint(fld::kFrameMappingId, 1);
      e.varint(fld::kFrameRelPc, k);
      e.end(fr);
    }
    const std::size_t cs = e.begin(fld::kIdCallstacks);
    e.varint(fld::kIid, cc + 1ull);
    for (std::uint32_t r : regions) e.varint(fld::kCallstackFrameIds, (r < max_region_ ? r : max_region_) + 1ull);
    e.end(cs);
    e.end(id);
    l.callstacks.insert(cc);
  }

  // Ends every open slice of a location (window end, file cut, end of the trace).
  void close_all(Loc& l, std::uint64_t at) {
    flush_metric(l);
    if (at > l.last_ns) l.last_ns = at;
    for (std::size_t i = l.stack.size(); i-- > 0;) slice_end(l, false);
  }

  // Begins again the slices open at a window start or file cut.
  void reopen_all(Loc& l, std::uint64_t at) {
    if (at > l.last_ns) l.last_ns = at;
    for (std::uint32_t r : l.stack) slice_begin(l, r, false);
  }

  const otf2::Definitions& defs_;
  const Options& opt_;
  otf2::TickConverter ticks_;
  std::string base_output_;
  pf::File out_;
  std::vector<std::string> files_;
  std::vector<Process> processes_;
  std::vector<Loc> locs_;
  std::unordered_map<std::uint64_t, std::uint32_t> loc_index_;
  std::vector<std::uint64_t> selected_;
  otf2::MpiRanks ranks_;
  std::unordered_map<MsgKey, std::uint32_t, MsgKeyHash> sends_, recvs_;
  std::unordered_set<std::uint64_t> open_flows_;
  std::unordered_set<std::uint64_t> early_recvs_;  // messages received before they were sent (clock offsets)
  std::unordered_set<std::uint64_t> gpu_work_;  // launch ids (launch_key) of the GPU work on the streams
  std::vector<std::uint8_t> region_category_;
  std::unordered_map<std::uint32_t, std::uint32_t> member_ordinal_;
  std::uint64_t counter_base_ = 0;
  std::uint32_t max_region_ = 0;
  std::uint64_t cached_ref_ = ~0ull;
  Loc* cached_ = nullptr;
  std::uint64_t begin_ns_ = 0, end_ns_ = ~0ull, now_ns_ = 0;
  bool in_window_ = true, stopped_ = false, failed_open_ = false, no_cut_ = false;
  std::uint64_t events_ = 0, slices_ = 0, flows_ = 0, gpu_flows_ = 0, bytes_out_ = 0;
  std::chrono::steady_clock::time_point started_;
  double next_progress_ = 0;
};

std::string anchor_of(const std::string& input) {
  if (is_dir(input)) {
    std::string a = input;
    while (a.size() > 1 && a.back() == '/') a.pop_back();
    return a + "/traces.otf2";
  }
  return input;
}

std::string default_output(const std::string& anchor) {
  const std::size_t slash = anchor.rfind('/');
  return (slash == std::string::npos ? std::string(".") : anchor.substr(0, slash)) + "/trace.pftrace";
}

long peak_rss_kib() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// A damaged archive: "<anchor>: <what the reader found> (the trace is damaged; ...)".
void damaged(const std::string& anchor, const otf2::Reader& reader, const std::string& done = "") {
  std::fprintf(stderr, "prof-export: error: %s: %s%s (the trace is damaged; record the run again, or see with otf2-print how far it "
                       "can be read)\n", anchor.c_str(), reader.error().c_str(), done.c_str());
}

// open() of the archive, with the one-line error when it fails.
bool open_archive(otf2::Reader& reader, const std::string& anchor) {
  if (reader.open(anchor)) return true;
  if (reader.damaged()) damaged(anchor, reader);
  else std::fprintf(stderr, "prof-export: error: %s; give an experiment directory (prof-*/) or its traces.otf2\n",
                    reader.error().c_str());
  return false;
}

int export_one(const std::string& input, const Options& opt, const std::string& output) {
  const std::string anchor = anchor_of(input);
  otf2::Reader reader;
  if (!open_archive(reader, anchor)) return kExitError;
  const otf2::Definitions& defs = reader.defs();
  const auto t0 = std::chrono::steady_clock::now();
  Options o = opt;
  otf2::TickConverter ticks(defs.timer_resolution, defs.global_offset);
  std::uint64_t begin_ns = o.begin.set && !o.begin.by_name ? static_cast<std::uint64_t>(o.begin.seconds * 1e9) : 0;
  std::uint64_t end_ns = o.end.set && !o.end.by_name ? static_cast<std::uint64_t>(o.end.seconds * 1e9) : ~0ull;
  // "--begin step:3" alone: that occurrence is the window.
  if (o.begin.set && o.begin.by_name && !o.end.set) o.end = o.begin;
  if ((o.begin.set && o.begin.by_name) || (o.end.set && o.end.by_name)) {
    NameFinder finder(defs, &o.begin, &o.end);
    otf2::Reader pre;
    if (!open_archive(pre, anchor)) return kExitError;
    if (!pre.read_events(finder) && finder.keep_going()) {
      damaged(anchor, pre);
      return kExitError;
    }
    std::string which;
    if (finder.missing(which)) {
      std::fprintf(stderr, "prof-export: error: the trace has no occurrence %s; give a region or NVTX range name that "
                           "prof-score -r lists, or a time such as 1.5s\n", which.c_str());
      return kExitError;
    }
    if (o.begin.by_name) begin_ns = ticks.ns(finder.time_of(&o.begin));
    if (o.end.by_name) end_ns = ticks.ns(finder.time_of(&o.end));
  }
  // A window that starts after the trace's end would give an empty trace.
  const std::uint64_t length_ns = ticks.ns(defs.global_offset + defs.trace_length);
  if (defs.trace_length && begin_ns > length_ns) {
    std::fprintf(stderr, "prof-export: error: --begin %s is after the end of %s, which covers 0 s to %.9g s from its start; "
                         "give a --begin within that range\n", o.begin.text.c_str(), anchor.c_str(),
                 static_cast<double>(length_ns) / 1e9);
    return kExitError;
  }
  if (end_ns < begin_ns) {
    std::fprintf(stderr, "prof-export: error: the window ends before it begins; give --end after --begin\n");
    return kExitError;
  }
  Exporter ex(defs, o, output);
  ex.set_window(begin_ns, end_ns);
  if (ex.selected().empty()) {
    std::fprintf(stderr, "prof-export: error: %s has no location in the ranks given; see the ranks with otf2-print -G\n",
                 anchor.c_str());
    return kExitError;
  }
  if (defs.correlation_attribute != otf2::kUndefined32 && !ex.streams().empty()) {
    // Which launches have GPU work: read from the streams alone (a few events per launch).
    struct GpuWork : otf2::EventSink {
      Exporter& ex;
      explicit GpuWork(Exporter& e) : ex(e) {}
      void correlation(std::uint64_t l, std::uint64_t, std::uint32_t id) override { ex.add_gpu_work(l, id); }
    } work(ex);
    otf2::Reader pre;
    if (!open_archive(pre, anchor)) return kExitError;
    if (!pre.read_events(work, ex.streams())) {
      damaged(anchor, pre);
      return kExitError;
    }
  }
  if (!ex.start()) {
    std::fprintf(stderr, "prof-export: error: cannot write %s (%s); give a writable file with -o\n", output.c_str(),
                 std::strerror(errno));
    return kExitError;
  }
  const bool complete = reader.read_events(ex, ex.selected());
  const bool written = ex.finish();
  if (!written) {
    std::fprintf(stderr, "prof-export: error: writing %s failed (%s); free some disk space or give another file with -o\n",
                 output.c_str(), std::strerror(errno));
    return kExitError;
  }
  if (!complete) {
    // One line: what is wrong, and that the events before it are in the output all the same.
    damaged(anchor, reader, "; the " + std::to_string(ex.events()) + " events before it are converted into " + ex.files().front());
    return kExitError;
  }
  for (const std::string& w : reader.warnings()) std::fprintf(stderr, "prof-export: warning: %s\n", w.c_str());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto files = ex.files();
  std::string names;
  for (const std::string& f : files) names += (names.empty() ? "" : ", ") + f;
  // Every OTF2 event read (of the locations selected), as otf2-print and prof-report count them.
  std::printf("prof-export: %s: %" PRIu64 " events -> %" PRIu64 " slices, %" PRIu64 " flows, %.1f MB in %zu file%s (%s); "
              "%.2f s, %.2f M events/s, peak memory %.0f MB\n",
              anchor.c_str(), reader.events_read(), ex.slices(), ex.flows(), static_cast<double>(ex.bytes_out()) / 1e6,
              files.size(), files.size() == 1 ? "" : "s", names.c_str(), secs,
              secs > 0 ? static_cast<double>(reader.events_read()) / secs / 1e6 : 0.0, static_cast<double>(peak_rss_kib()) / 1024);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc) die(std::string(what) + " needs a value; see prof-export --help", kExitUsage);
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-o") {
      opt.output = value("-o");
    } else if (a == "-q") {
      opt.quiet = true;
    } else if (a == "--begin" || a == "--end") {
      const std::string v = value(a.c_str());
      if (!parse_when(v, a == "--begin" ? opt.begin : opt.end))
        die(a + " '" + v + "' is neither a time (1.5, 200ms) nor a region name (step or step:3)", kExitUsage);
    } else if (a == "--ranks") {
      const std::string v = value("--ranks");
      if (!parse_ranks(v, opt.ranks)) die("--ranks '" + v + "' is not a rank list; write e.g. 0-3,7", kExitUsage);
    } else if (a == "--split") {
      const std::string v = value("--split");
      if (!parse_size(v, opt.split_bytes)) die("--split '" + v + "' is not a size; write e.g. 512M or 1G", kExitUsage);
      if (opt.split_bytes && opt.split_bytes < (1u << 16)) die("--split '" + v + "' is too small; give at least 64K", kExitUsage);
    } else if (!a.empty() && a[0] == '-') {
      die("unknown option '" + a + "'; see prof-export --help", kExitUsage);
    } else {
      inputs.push_back(a);
    }
  }
  if (inputs.empty()) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  if (!opt.output.empty() && inputs.size() > 1) die("-o takes one input; give one experiment with -o", kExitUsage);
  int rc = 0;
  for (const std::string& in : inputs) {
    const std::string out = opt.output.empty() ? default_output(anchor_of(in)) : opt.output;
    rc = std::max(rc, export_one(in, opt, out));
  }
  return rc;
}
