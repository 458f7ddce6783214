// SPDX-License-Identifier: BSD-3-Clause
// prof-report: one self-contained HTML file (and the same data as JSON, or text) per experiment:
// run summary, top regions with their imbalance, a call-path icicle, MPI communication, GPU
// activities and busy time, a timeline overview. Built from the profile where it has the data,
// from the trace for the timeline, the message matrix and the GPU busy time.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/cube4_reader.hpp"
#include "tools/findings.hpp"
#include "tools/steps.hpp"
#include "tools/json_text.hpp"
#include "tools/otf2_reader.hpp"
#include "tools/region_groups.hpp"
#include "tools/report_diff.hpp"
#include "tools/report_template.hpp"  // generated from tools/report_template.html

namespace {

namespace cube4 = prof::cube4;
namespace otf2 = prof::otf2;
using namespace prof::region_groups;
using prof::json::json_number;
using prof::json::json_string;

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr std::uint32_t kMaxMatrixRanks = 512;

const char kUsage[] =
    "usage: prof-report [options] <experiment directory> ...\n"
    "       prof-report --diff A B [--json | -o DIR] [--threshold PCT] [--fail-on-regression] [--top N]\n"
    "\n"
    "Writes <experiment>/report.html, one self-contained page that any browser opens offline, and\n"
    "<experiment>/report.json, the same data (format: docs/REPORT.md): the run, the top regions\n"
    "with min/mean/max over the locations that ran them, the groups (USR, MPI, CUDA, GPU, ...), an\n"
    "icicle of the call paths for each metric, MPI messages per rank pair and time in collectives,\n"
    "the GPU activities and each stream's busy time, and a timeline overview. The profile gives the\n"
    "figures; the trace (when there is one) the timeline, the messages and the busy time.\n"
    "\n"
    "options:\n"
    "  --text          print the report as text instead (terminals, CI logs); nothing is written\n"
    "  --json          print the JSON instead; nothing is written\n"
    "  -o DIR          write report.html and report.json into DIR (one experiment only)\n"
    "  --bins N        timeline and busy-time resolution (default 600 columns)\n"
    "  --top N         regions in the text form and the timeline's colours (default 20)\n"
    "  --no-trace      leave the trace alone (profile figures only; faster on huge traces)\n"
    "  --step REGION   the region whose calls are the steps (default: PROF_STEP of the run, else the\n"
    "                  user-API or NVTX range that repeats and covers the most time)\n"
    "  -h, --help      this text\n"
    "\n"
    "--diff A B: experiment B against experiment A, side by side (run, regions by name, GPU\n"
    "activities), regressions first (most time lost), then improvements, new, gone and unchanged.\n"
    "A change counts when it is more than PCT percent and more than 1% of A's total time (at\n"
    "least 1 ms), outside the per-location min..max of either run (docs/REPORT.md). Prints text;\n"
    "--json prints the JSON; -o DIR writes DIR/diff.html and DIR/diff.json.\n"
    "  --threshold PCT       smallest relative change that counts (default 10)\n"
    "  --fail-on-regression  exit status 3 when there is a regression (for CI)\n";

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

const char* const kCollectives[] = {"MPI_Barrier", "MPI_Bcast", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
                                    "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Alltoallw",
                                    "MPI_Allreduce", "MPI_Reduce", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
                                    "MPI_Scan", "MPI_Exscan"};

bool is_collective(const std::string& name) {
  for (const char* c : kCollectives) {
    if (name == c) return true;
    // Non-blocking variants: MPI_Iallreduce, ...
    if (name.size() == std::strlen(c) + 1 && name.compare(0, 4, "MPI_") == 0 && name[4] == 'I' &&
        name.compare(5, std::string::npos, c + 4) == 0)
      return true;
  }
  return false;
}

struct Options {
  bool text = false, json = false, trace = true;
  std::string out_dir;
  std::string step;  // --step: the step region (else PROF_STEP of the run, else found)
  unsigned bins = 600, top = 20;
};

// ---- The profile part
struct RegionRow {
  std::uint32_t region = 0;
  bool gpu = false;  // its executions on GPU streams
  Group group = Group::USR;
  double visits = 0, excl = 0, incl = 0;
  double min = 0, max = 0, mean = 0;  // exclusive time per location that ran it
  unsigned locations = 0;
  double bytes = 0, min_one = 0, max_one = 0;  // GPU rows: bytes_copied, one execution's min/max
};

struct Report {
  std::string experiment;
  cube4::ReadProfile profile;
  bool have_profile = false;
  std::vector<RegionRow> rows;
  double total_time = 0, gpu_time = 0;
  std::vector<std::uint32_t> process_of;  // per profile location
  std::uint32_t processes = 0, threads = 0, streams = 0;
  std::vector<double> collective_time;    // per process
  std::vector<double> mpi_time;           // per process
  std::map<std::string, std::string> config;
  std::vector<std::string> warnings;
  // prof.run: one line per process (rank) with its counts, and its first warnings.
  std::map<std::string, double> run_counts;  // summed over the processes
  std::vector<std::string> command;          // rank 0's program (base name) and arguments (prof.run)
  std::vector<char> root_region;             // per profile region: a call tree's root has it
  unsigned run_lines = 0;
  int exit_status = 0;
  std::vector<prof::findings::Finding> findings;  // most costly first
  std::string findings_note;                      // what the findings cannot see
  prof::steps::Result steps;                      // from the trace
  bool have_steps = false;                        // a trace was read for them
};

// Reads <experiment>/prof.run (written by each process at its end): the counts summed, the
// messages into the warnings (one per distinct text, with the ranks that said it).
void read_run_file(Report& rep) {
  std::ifstream in(rep.experiment + "/prof.run");
  std::string line;
  std::map<std::string, std::vector<std::string>> said;  // message -> ranks
  std::vector<std::string> order;
  while (std::getline(in, line)) {
    std::string rank;
    if (line.rfind("rank=", 0) != 0) continue;
    const std::size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    rank = line.substr(5, sp - 5);
    const std::string rest = line.substr(sp + 1);
    if (rest.rfind("command=", 0) == 0) {  // rank 0's command line, tab-separated
      if (rep.command.empty()) {
        std::istringstream words(rest.substr(8));
        for (std::string w; std::getline(words, w, '\t');) rep.command.push_back(w);
        if (!rep.command.empty()) rep.command[0] = rep.command[0].substr(rep.command[0].find_last_of('/') + 1);
      }
      continue;
    }
    if (rest.rfind("message=", 0) == 0) {
      std::string text = rest.substr(8);
      // "prof: rank 3: warning: ..." or "prof: warning: ...": the text after "prof: [rank N: ]"
      if (text.rfind("prof: ", 0) == 0) text = text.substr(6);
      if (text.rfind("rank ", 0) == 0 && text.find(": ") != std::string::npos) text = text.substr(text.find(": ") + 2);
      if (!said.count(text)) order.push_back(text);
      said[text].push_back(rank);
      continue;
    }
    ++rep.run_lines;
    std::istringstream fields(rest);
    std::string kv;
    while (fields >> kv) {
      const std::size_t eq = kv.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = kv.substr(0, eq);
      const double v = std::strtod(kv.c_str() + eq + 1, nullptr);
      if (key == "exit_status") {
        if (v != 0 && rep.exit_status == 0) rep.exit_status = static_cast<int>(v);
      } else {
        rep.run_counts[key] += v;
      }
    }
  }
  for (const std::string& text : order) {
    const std::vector<std::string>& ranks = said[text];
    rep.warnings.push_back(rep.run_lines > 1 ? (ranks.size() == 1 ? "rank " + ranks[0] : std::to_string(ranks.size()) + " ranks") +
                                                   ": " + text
                                             : text);
  }
}

// The per-rank profiles of an MPI run whose ranks did not all reach the end:
// <experiment>/profile.rank<r>.cubex, by rank (docs/MPI.md; the job's profile.cubex is missing).
std::vector<std::pair<std::uint32_t, std::string>> rank_profiles(const std::string& experiment) {
  std::vector<std::pair<std::uint32_t, std::string>> out;
  DIR* d = ::opendir(experiment.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const std::string head = "profile.rank", tail = ".cubex";
    if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
        name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
      continue;
    const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    out.emplace_back(static_cast<std::uint32_t>(std::stoul(digits)), experiment + "/" + name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// Adds profile `q` (one rank's) to `p`: regions and call paths unified (same region, same
// parent path), q's location groups and locations after p's, the values of each metric moved to
// the merged call paths and locations (zero where a rank has no such call path or metric).
void merge_profile(cube4::ReadProfile& p, const cube4::ReadProfile& q) {
  const std::size_t old_nc = p.cnodes.size(), old_nl = p.locations.size();
  auto region_key = [](const prof::cube4::Region& r) {
    return r.name + '\x1f' + r.canonical + '\x1f' + r.file + '\x1f' + std::to_string(r.begin_line) + '\x1f' + r.paradigm +
           '\x1f' + r.role;
  };
  std::map<std::string, std::uint32_t> regions;
  for (std::size_t i = 0; i < p.regions.size(); ++i) regions.emplace(region_key(p.regions[i]), static_cast<std::uint32_t>(i));
  std::vector<std::uint32_t> region_of(q.regions.size());
  for (std::size_t i = 0; i < q.regions.size(); ++i) {
    auto [it, fresh] = regions.emplace(region_key(q.regions[i]), static_cast<std::uint32_t>(p.regions.size()));
    if (fresh) p.regions.push_back(q.regions[i]);
    region_of[i] = it->second;
  }
  std::map<std::pair<std::int64_t, std::uint32_t>, std::int64_t> paths;  // (parent, region) -> cnode
  for (std::size_t c = 0; c < old_nc; ++c)
    paths.emplace(std::make_pair(p.cnodes[c].parent, p.cnodes[c].region), static_cast<std::int64_t>(c));
  // q's cnodes, each after its parent (the reader allows a parent after its child).
  const std::size_t nq = q.cnodes.size();
  std::vector<std::int64_t> cnode_of(nq, -2);
  std::vector<std::size_t> chain;
  for (std::size_t start = 0; start < nq; ++start) {
    chain.clear();
    for (std::int64_t c = static_cast<std::int64_t>(start); c >= 0 && cnode_of[c] == -2 && chain.size() <= nq;
         c = q.cnodes[c].parent)
      chain.push_back(static_cast<std::size_t>(c));
    for (std::size_t k = chain.size(); k-- > 0;) {
      const std::size_t c = chain[k];
      if (cnode_of[c] != -2) continue;
      const std::int64_t qp = q.cnodes[c].parent;
      const std::int64_t parent = qp < 0 || cnode_of[qp] < 0 ? -1 : cnode_of[qp];
      const std::pair<std::int64_t, std::uint32_t> key(parent, region_of[q.cnodes[c].region]);
      auto [it, fresh] = paths.emplace(key, static_cast<std::int64_t>(p.cnodes.size()));
      if (fresh) p.cnodes.push_back(prof::cube4::CallNode{key.second, parent});
      cnode_of[c] = it->second;
    }
  }
  const std::uint32_t group_base = static_cast<std::uint32_t>(p.location_groups.size());
  for (cube4::ReadGroup g : q.location_groups) {
    if (g.creator >= 0) g.creator += group_base;
    g.process += group_base;
    p.location_groups.push_back(g);
  }
  p.groups = static_cast<std::uint32_t>(p.location_groups.size());
  for (cube4::ReadLocation l : q.locations) {
    l.group_index += group_base;
    p.locations.push_back(l);
  }
  const std::size_t nc = p.cnodes.size(), nl = p.locations.size(), ql = q.locations.size();
  for (cube4::ReadMetric& m : p.metrics) {
    std::vector<double> v(nc * nl, 0.0);
    for (std::size_t c = 0; c < old_nc; ++c)
      for (std::size_t l = 0; l < old_nl; ++l) v[c * nl + l] = m.values[c * old_nl + l];
    m.values.swap(v);
  }
  for (const cube4::ReadMetric& qm : q.metrics) {
    cube4::ReadMetric* m = nullptr;
    for (cube4::ReadMetric& x : p.metrics)
      if (x.uniq_name == qm.uniq_name) m = &x;
    if (!m) {
      p.metrics.push_back(qm);
      m = &p.metrics.back();
      m->values.assign(nc * nl, 0.0);
    }
    m->has_data |= qm.has_data;
    for (std::size_t c = 0; c < nq; ++c)
      for (std::size_t l = 0; l < ql; ++l)
        m->values[static_cast<std::size_t>(cnode_of[c]) * nl + old_nl + l] = qm.values[c * ql + l];
  }
}

bool build_profile(Report& rep, std::string* err) {
  cube4::ReadProfile& p = rep.profile;
  const std::string path = rep.experiment + "/profile.cubex";
  if (exists(path)) {
    if (!cube4::read(path, &p, err)) return false;
  } else {
    // A failed MPI run: no profile.cubex, but each rank that got to its end wrote its own.
    const auto parts = rank_profiles(rep.experiment);
    if (parts.empty()) return true;
    std::string ranks;
    for (const auto& [rank, file] : parts) {
      cube4::ReadProfile one;
      if (!cube4::read(file, &one, err)) return false;
      merge_profile(p, one);
      ranks += (ranks.empty() ? "" : ",") + std::to_string(rank);
    }
    rep.warnings.push_back("warning: the run did not end normally (no profile.cubex): the figures are those of the " +
                           std::to_string(parts.size()) + " per-rank profiles (profile.rank<r>.cubex) of rank" +
                           (parts.size() == 1 ? " " : "s ") + ranks + ", merged (a rank without one is missing from them)");
  }
  rep.have_profile = true;
  rep.root_region.assign(p.regions.size(), 0);
  for (const auto& c : p.cnodes)
    if (c.parent < 0 && c.region < p.regions.size()) rep.root_region[c.region] = 1;
  const cube4::ReadMetric* visits_m = p.metric("visits");
  const cube4::ReadMetric* time_m = p.metric("time");
  if (!visits_m || !time_m) {
    *err = path + ": no 'visits' and 'time' metrics; prof-report needs a call-path profile as prof or Score-P write it";
    return false;
  }
  const std::size_t nl = p.locations.size(), nc = p.cnodes.size(), nr = p.regions.size();
  const std::vector<double> incl = p.inclusive(*time_m);
  const std::vector<double> excl = p.exclusive(*time_m);
  const cube4::ReadMetric* bytes_m = p.metric("bytes_copied");
  const cube4::ReadMetric* folded_m = p.metric("folded_visits");
  const cube4::ReadMetric* min_m = p.metric("min_time");
  const cube4::ReadMetric* max_m = p.metric("max_time");

  // Processes: location groups that are their own process, in file order (accelerator groups
  // belong to the process that created them).
  std::vector<std::uint32_t> process_of_group(std::max<std::size_t>(p.location_groups.size(), 1), 0);
  for (std::size_t g = 0; g < p.location_groups.size(); ++g)
    if (p.location_groups[g].process == g) process_of_group[g] = rep.processes++;
  for (std::size_t g = 0; g < p.location_groups.size(); ++g) process_of_group[g] = process_of_group[p.location_groups[g].process];
  rep.processes = std::max<std::uint32_t>(rep.processes, 1);
  rep.process_of.assign(nl, 0);
  for (std::size_t l = 0; l < nl; ++l) {
    const std::uint32_t g = p.locations[l].group_index;
    rep.process_of[l] = g < p.location_groups.size() ? process_of_group[g] : 0;
    if (p.locations[l].gpu()) ++rep.streams;
    else ++rep.threads;
  }

  // A region's executions on GPU streams are a GPU row of their own (as prof-score counts them).
  std::vector<char> gpu_region(nr, 0);
  for (std::size_t c = 0; c < nc; ++c) {
    const std::uint32_t r = p.cnodes[c].region;
    if (paradigm_group(p.regions[r].paradigm) == Group::PROF) continue;
    for (std::size_t l = 0; l < nl; ++l)
      if (p.locations[l].gpu() && visits_m->values[c * nl + l] > 0) gpu_region[r] = 1;
  }
  std::vector<char> leads_to_paradigm(nc, 0);  // user code that calls another paradigm: COM
  for (std::size_t c = 0; c < nc; ++c) {
    const Group g = paradigm_group(p.regions[p.cnodes[c].region].paradigm);
    if (is_user(g) || g == Group::PROF) continue;
    for (std::int64_t a = p.cnodes[c].parent; a >= 0 && !leads_to_paradigm[a]; a = p.cnodes[a].parent) leads_to_paradigm[a] = 1;
  }
  // Inclusive time of a region: its outermost call paths only (recursion counted once).
  std::vector<char> under_same(nc, 0);
  for (std::size_t c = 0; c < nc; ++c)
    for (std::int64_t a = p.cnodes[c].parent; a >= 0; a = p.cnodes[a].parent)
      if (p.cnodes[a].region == p.cnodes[c].region) {
        under_same[c] = 1;
        break;
      }

  std::vector<RegionRow> all(2 * nr);
  std::vector<char> occurs(2 * nr, 0);
  std::vector<std::vector<double>> per_loc(2 * nr);  // exclusive time per location
  for (std::uint32_t k = 0; k < 2 * nr; ++k) {
    all[k].region = k < nr ? k : k - static_cast<std::uint32_t>(nr);
    all[k].gpu = k >= nr;
    all[k].group = k < nr ? paradigm_group(p.regions[k].paradigm) : Group::GPU;
    all[k].min_one = HUGE_VAL;
  }
  for (std::size_t c = 0; c < nc; ++c) {
    const std::uint32_t r = p.cnodes[c].region;
    if (all[r].group == Group::USR && leads_to_paradigm[c]) all[r].group = Group::COM;
    if (!gpu_region[r]) occurs[r] = 1;
    for (std::size_t l = 0; l < nl; ++l) {
      const std::size_t i = c * nl + l;
      const double v = visits_m->values[i];
      const bool on_gpu = p.locations[l].gpu() && gpu_region[r];
      const std::uint32_t k = on_gpu ? static_cast<std::uint32_t>(nr + r) : r;
      RegionRow& row = all[k];
      const double f = !on_gpu && folded_m ? folded_m->values[i] : 0.0;
      if (on_gpu || v > 0 || f > 0 || incl[i] != 0) occurs[k] = 1;
      row.visits += v + f;
      row.excl += excl[i];
      if (!under_same[c]) row.incl += incl[i];
      // Entered, or a sampled frame's time (never entered); a host region's figures per location are
      // the CPU threads' (a GPU stream holds its launches' host call paths, with no time of their own).
      if ((v > 0 || (f == 0 && excl[i] > 0)) && (on_gpu || !p.locations[l].gpu())) {
        if (per_loc[k].empty()) per_loc[k].assign(nl, -1.0);
        per_loc[k][l] = std::max(per_loc[k][l], 0.0) + excl[i];
      }
      if (on_gpu) {
        if (bytes_m) row.bytes += bytes_m->values[i];
        if (v > 0 && min_m) row.min_one = std::min(row.min_one, min_m->values[i]);
        if (v > 0 && max_m) row.max_one = std::max(row.max_one, max_m->values[i]);
      }
    }
  }
  for (std::size_t c = 0; c < nc; ++c)
    if (p.cnodes[c].parent < 0)
      for (std::size_t l = 0; l < nl; ++l) rep.total_time += incl[c * nl + l];
  for (std::uint32_t k = 0; k < 2 * nr; ++k) {
    if (!occurs[k]) continue;
    RegionRow row = all[k];
    if (row.min_one == HUGE_VAL) row.min_one = 0;
    double sum = 0;
    row.min = HUGE_VAL;
    for (double t : per_loc[k])
      if (t >= 0) {
        row.min = std::min(row.min, t);
        row.max = std::max(row.max, t);
        sum += t;
        ++row.locations;
      }
    if (!row.locations) row.min = 0;
    row.mean = row.locations ? sum / row.locations : 0;
    if (row.gpu) rep.gpu_time += row.excl;
    rep.rows.push_back(row);
  }
  std::stable_sort(rep.rows.begin(), rep.rows.end(), [](const RegionRow& a, const RegionRow& b) { return a.excl > b.excl; });
  // MPI: time in MPI and in collectives per process (exclusive, CPU locations).
  rep.collective_time.assign(rep.processes, 0);
  rep.mpi_time.assign(rep.processes, 0);
  for (std::size_t c = 0; c < nc; ++c) {
    const cube4::Region& reg = p.regions[p.cnodes[c].region];
    if (reg.paradigm != "mpi") continue;
    const bool coll = is_collective(reg.name);
    for (std::size_t l = 0; l < nl; ++l) {
      if (p.locations[l].gpu()) continue;
      rep.mpi_time[rep.process_of[l]] += excl[c * nl + l];
      if (coll) rep.collective_time[rep.process_of[l]] += excl[c * nl + l];
    }
  }
  return true;
}

// ---- The trace part
struct Row {  // one timeline row: a location
  std::uint64_t ref = 0;
  std::string name;
  std::string kind;  // "thread", "stream", "lane"
  std::uint32_t process = 0;
  std::vector<std::int32_t> top;   // per bin: the region with the most exclusive time, -1 idle
  std::vector<float> busy;         // per bin: fraction of the bin inside some region
  // Reading state
  std::vector<std::uint32_t> stack;
  std::uint64_t last = 0;
  std::uint32_t bin = 0;
  std::vector<std::pair<std::uint32_t, double>> acc;  // the current bin's regions
  double acc_busy = 0;
};

class TraceScan : public otf2::EventSink {
 public:
  TraceScan(const otf2::Definitions& defs, unsigned bins) : defs_(defs), ranks_(defs), bins_(bins ? bins : 1) {
    begin_ = defs.global_offset;
    end_ = defs.global_offset + std::max<std::uint64_t>(defs.trace_length, 1);
    width_ = static_cast<double>(end_ - begin_) / bins_;
    const otf2::ProcessMap pm(defs);
    processes_ = pm.size();
    for (const otf2::Location& d : defs.locations) {
      Row r;
      const otf2::LocationKind kind = otf2::ProcessMap::kind(d);
      if (kind == otf2::LocationKind::Other || !pm.process_of(d, &r.process)) continue;
      r.ref = d.ref;
      r.name = d.name;
      r.kind = kind == otf2::LocationKind::Stream ? "stream" : kind == otf2::LocationKind::Lane ? "lane" : "thread";
      r.top.assign(bins_, -1);
      r.busy.assign(bins_, 0.f);
      r.last = begin_;
      index_[d.ref] = rows_.size();
      rows_.push_back(std::move(r));
    }
    const std::uint32_t n = std::max<std::uint32_t>(ranks_.size(), 1);
    if (ranks_.size() && ranks_.size() <= kMaxMatrixRanks) {
      bytes_.assign(static_cast<std::size_t>(n) * n, 0);
      messages_.assign(static_cast<std::size_t>(n) * n, 0);
    }
  }

  void enter(std::uint64_t l, std::uint64_t t, std::uint32_t r) override {
    Row* row = advance(l, t);
    if (row) row->stack.push_back(r);
  }
  void leave(std::uint64_t l, std::uint64_t t, std::uint32_t) override {
    Row* row = advance(l, t);
    if (row && !row->stack.empty()) row->stack.pop_back();
  }
  void message(std::uint64_t l, std::uint64_t, bool send, std::uint32_t peer, std::uint32_t comm, std::uint32_t,
               std::uint64_t bytes) override {
    if (!send || bytes_.empty()) return;
    const std::uint32_t from = ranks_.world_rank(l), to = ranks_.world_of(comm, peer);
    const std::uint32_t n = ranks_.size();
    if (from >= n || to >= n) return;
    bytes_[static_cast<std::size_t>(from) * n + to] += static_cast<double>(bytes);
    messages_[static_cast<std::size_t>(from) * n + to] += 1;
  }
  void buffer_flush(std::uint64_t, std::uint64_t, std::uint64_t) override {
    ++flushes_;
  }
  void program_begin(std::uint64_t, std::uint64_t, const std::string& name, const std::vector<std::string>& args) override {
    if (program_.empty()) {
      program_ = name;
      args_ = args;
    }
  }
  void finish() {
    for (Row& r : rows_) {
      close_until(r, end_);
      r.stack.clear();
    }
  }

  const std::vector<Row>& rows() const { return rows_; }
  /// Every OTF2 event read (the reader's count, set_events): what otf2-print and prof-export count.
  std::uint64_t events() const { return events_; }
  void set_events(std::uint64_t n) { events_ = n; }
  std::uint64_t flushes() const { return flushes_; }
  const std::string& program() const { return program_; }
  const std::vector<std::string>& args() const { return args_; }
  const std::vector<double>& bytes() const { return bytes_; }
  const std::vector<double>& messages() const { return messages_; }
  std::uint32_t mpi_ranks() const { return ranks_.size(); }
  bool have_matrix() const { return !bytes_.empty(); }
  std::uint32_t processes() const { return processes_; }
  double bin_seconds() const { return width_ / static_cast<double>(defs_.timer_resolution); }
  double duration() const { return static_cast<double>(end_ - begin_) / static_cast<double>(defs_.timer_resolution); }

 private:
  Row* advance(std::uint64_t l, std::uint64_t t) {
    auto it = index_.find(l);
    if (it == index_.end()) return nullptr;
    Row& r = rows_[it->second];
    close_until(r, std::min(std::max(t, r.last), end_));
    return &r;
  }

  // Attributes [r.last, t) to the innermost open region, bin by bin.
  void close_until(Row& r, std::uint64_t t) {
    while (r.last < t) {
      const std::uint64_t bin_end = begin_ + static_cast<std::uint64_t>(std::ceil((r.bin + 1) * width_));
      const std::uint64_t upto = std::min(t, std::max(bin_end, r.last + 1));
      const double d = static_cast<double>(upto - r.last);
      if (!r.stack.empty()) {
        const std::uint32_t reg = r.stack.back();
        auto a = std::find_if(r.acc.begin(), r.acc.end(), [reg](const auto& x) { return x.first == reg; });
        if (a == r.acc.end()) r.acc.emplace_back(reg, d);
        else a->second += d;
        r.acc_busy += d;
      }
      r.last = upto;
      if (upto >= bin_end) {
        if (r.bin < bins_) {
          std::int32_t best = -1;
          double most = 0;
          for (const auto& [reg, time] : r.acc)
            if (time > most) {
              most = time;
              best = static_cast<std::int32_t>(reg);
            }
          r.top[r.bin] = best;
          r.busy[r.bin] = static_cast<float>(std::min(1.0, r.acc_busy / width_));
        }
        r.acc.clear();
        r.acc_busy = 0;
        if (++r.bin >= bins_) {
          r.last = t;
          return;
        }
      }
    }
  }

  const otf2::Definitions& defs_;
  otf2::MpiRanks ranks_;
  unsigned bins_;
  std::uint64_t begin_ = 0, end_ = 0;
  double width_ = 1;
  std::vector<Row> rows_;
  std::unordered_map<std::uint64_t, std::size_t> index_;
  std::vector<double> bytes_, messages_;
  std::uint64_t events_ = 0, flushes_ = 0;
  std::uint32_t processes_ = 0;
  std::string program_;
  std::vector<std::string> args_;
};

std::map<std::string, std::string> read_config(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos || line.compare(0, 5, "PROF_") != 0) continue;
    std::string v = line.substr(eq + 1);
    if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
    out[line.substr(0, eq)] = v;
  }
  return out;
}

std::string date_text(std::uint64_t realtime_ns) {
  if (!realtime_ns) return "";
  const std::time_t s = static_cast<std::time_t>(realtime_ns / 1000000000u);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string json_list(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + json_number(v[i]);
  return s + "]";
}

const char* group_name(Group g) { return kGroupName[static_cast<int>(g)]; }

// ---- JSON
// What a row's region stands for where its name does not say it: the program's root region holds
// the time in no measured function (not prof's overhead). "" for other rows.
std::string region_note(const Report& rep, const RegionRow& r) {
  if (r.gpu) return "";
  if (r.region >= rep.root_region.size() || !rep.root_region[r.region]) return "";
  const auto samples = rep.run_counts.find("samples");
  return std::string("in no measured function: start-up and exit") +
         (samples != rep.run_counts.end() && samples->second > 0 ? ", time no sample saw" : "");
}

// The program and its arguments: the trace's ProgramBegin, else rank 0's line in prof.run (a run
// without a trace). Empty when neither has it.
std::vector<std::string> command_of(const Report& rep, const TraceScan* trace) {
  if (!trace || trace->program().empty()) return rep.command;
  std::vector<std::string> c{trace->program()};
  c.insert(c.end(), trace->args().begin(), trace->args().end());  // ProgramBegin's arguments: argv[1] on
  return c;
}

std::string make_json(const Report& rep, const TraceScan* trace, const otf2::Definitions* defs, const Options& o) {
  const cube4::ReadProfile& p = rep.profile;
  std::string j = "{\n\"format\": \"prof-report\", \"version\": 1,\n\"experiment\": " + json_string(rep.experiment);
  // Run
  j += ",\n\"findings\": [";
  for (std::size_t i = 0; i < rep.findings.size(); ++i) {
    const prof::findings::Finding& f = rep.findings[i];
    j += std::string(i ? ",\n  " : "\n  ") + "{\"kind\": " + json_string(f.kind) + ", \"title\": " + json_string(f.title) +
         ", \"seconds\": " + json_number(f.seconds) + ", \"share\": " + json_number(f.share) +
         ", \"callpath\": " + json_string(f.callpath) + ", \"instances\": " + std::to_string(f.instances) + ", \"ranks\": [";
    for (std::size_t k = 0; k < f.ranks.size(); ++k)
      j += std::string(k ? ", " : "") + "{\"rank\": " + std::to_string(f.ranks[k].first) + ", \"seconds\": " +
           json_number(f.ranks[k].second) + "}";
    j += "], \"blame\": " + json_string(f.blame) + ", \"suggestion\": " + json_string(f.suggestion) + "}";
  }
  j += "], \"findings_note\": " + json_string(rep.findings_note);
  j += ",\n\"steps\": ";
  if (!rep.have_steps) {
    j += "null";
  } else {
    const prof::steps::Result& st = rep.steps;
    j += "{\"region\": " + json_string(st.region) + ", \"source\": " + json_string(st.source) + ", \"note\": " + json_string(st.note) +
         ", \"process\": " + std::to_string(st.process) + ", \"count\": " + std::to_string(st.steps.size()) +
         ", \"warmup\": " + std::to_string(st.warmup) + ", \"median_s\": " + json_number(st.median) +
         ", \"min_s\": " + json_number(st.min) + ", \"max_s\": " + json_number(st.max) + ", \"mad_s\": " + json_number(st.mad) +
         ", \"startup_s\": " + json_number(st.startup) + ", \"teardown_s\": " + json_number(st.teardown) +
         ", \"gpu\": " + (st.gpu ? "true" : "false") + ", \"steady_gpu_busy\": " + json_number(st.steady_gpu_busy) +
         ", \"idle_s\": " + json_number(st.idle) + ", \"steady_kernels\": " + json_number(st.steady_kernels) +
         ", \"steady_kernel_us\": " + json_number(st.steady_kernel_us) +
         ", \"steady_data_share\": " + json_number(st.steady_data_share) + ", \"idle_by_host\": [";
    for (std::size_t i = 0; i < st.idle_by_host.size(); ++i)
      j += std::string(i ? ", " : "") + "{\"where\": " + json_string(st.idle_by_host[i].first) + ", \"seconds\": " +
           json_number(st.idle_by_host[i].second) + "}";
    j += "], \"list\": [";
    for (std::size_t i = 0; i < st.steps.size(); ++i) {
      const prof::steps::Step& x = st.steps[i];
      j += std::string(i ? ",\n  " : "\n  ") + "{\"start_s\": " + json_number(x.start) + ", \"duration_s\": " + json_number(x.duration) +
           ", \"warmup\": " + (x.warmup ? "true" : "false") + ", \"outlier\": " + (x.outlier ? "true" : "false") +
           ", \"gpu_busy\": " + json_number(x.gpu_busy) + ", \"kernels\": " + json_number(x.kernels) +
           ", \"kernel_s\": " + json_number(x.kernel) +
           ", \"copy_s\": " + json_number(x.copy) + ", \"memset_s\": " + json_number(x.memset) +
           ", \"host_only_s\": " + json_number(x.host_only) + ", \"mpi_s\": " + json_number(x.mpi) +
           ", \"iteration_s\": " + json_number(x.iteration) +
           ", \"data_s\": " + json_number(x.data) + "}";
    }
    j += "]}";
  }
  j += ",\n\"run\": {";
  const std::vector<std::string> command = command_of(rep, trace);
  j += "\"program\": " + json_string(command.empty() ? "" : command[0]);
  j += ", \"args\": [";
  for (std::size_t i = 1; i < command.size(); ++i) j += (i > 1 ? ", " : "") + json_string(command[i]);
  j += "], \"date\": " + json_string(defs ? date_text(defs->realtime_ns) : "");
  j += ", \"duration_s\": " + json_number(trace ? trace->duration() : 0);
  j += ", \"processes\": " + std::to_string(rep.have_profile ? rep.processes : trace ? trace->processes() : 0);
  j += ", \"threads\": " + std::to_string(rep.threads) + ", \"gpu_streams\": " + std::to_string(rep.streams);
  j += ", \"total_time_s\": " + json_number(rep.total_time);
  j += ", \"trace_events\": " + json_number(trace ? static_cast<double>(trace->events()) : 0);
  const auto count = [&rep](const char* key) {
    auto it = rep.run_counts.find(key);
    return it == rep.run_counts.end() ? 0.0 : it->second;
  };
  j += ", \"buffer_flushes\": " + json_number(rep.run_lines ? count("flushes") : trace ? static_cast<double>(trace->flushes()) : 0);
  j += ", \"processes_reporting\": " + std::to_string(rep.run_lines) + ", \"exit_status\": " + std::to_string(rep.exit_status);
  for (const char* key : {"lost_events", "repairs", "unmatched_exits", "closed_at_end", "dropped_signal_events", "samples", "samples_dropped"})
    j += std::string(", \"") + key + "\": " + json_number(count(key));
  j += ", \"profile\": " + std::string(rep.have_profile ? "true" : "false") + ", \"trace\": " + (trace ? "true" : "false");
  j += ", \"warnings\": [";
  for (std::size_t i = 0; i < rep.warnings.size(); ++i) j += (i ? ", " : "") + json_string(rep.warnings[i]);
  j += "], \"config\": {";
  bool first = true;
  for (const auto& [k, v] : rep.config) {
    j += (first ? "" : ", ") + json_string(k) + ": " + json_string(v);
    first = false;
  }
  j += "}}";
  // Regions and groups
  j += ",\n\"regions\": [";
  for (std::size_t i = 0; i < rep.rows.size(); ++i) {
    const RegionRow& r = rep.rows[i];
    const cube4::Region& reg = p.regions[r.region];
    j += std::string(i ? ",\n " : "\n ") + "{\"name\": " + json_string(reg.name) + ", \"group\": \"" + group_name(r.group) +
         "\", \"paradigm\": " + json_string(reg.paradigm) + ", \"file\": " + json_string(reg.file) +
         ", \"gpu\": " + (r.gpu ? "true" : "false") + ", \"visits\": " + json_number(r.visits) +
         ", \"exclusive_s\": " + json_number(r.excl) + ", \"inclusive_s\": " + json_number(r.incl) +
         ", \"per_visit_us\": " + json_number(r.visits > 0 ? r.excl / r.visits * 1e6 : 0) +
         ", \"locations\": " + std::to_string(r.locations) + ", \"min_s\": " + json_number(r.min) +
         ", \"mean_s\": " + json_number(r.mean) + ", \"max_s\": " + json_number(r.max);
    const std::string note = region_note(rep, r);
    if (!note.empty()) j += ", \"note\": " + json_string(note);
    j += "}";
  }
  j += "],\n\"groups\": [";
  std::map<std::string, std::pair<double, double>> groups;
  for (const RegionRow& r : rep.rows) {
    auto& g = groups[group_name(r.group)];
    g.first += r.excl;
    g.second += r.visits;
  }
  first = true;
  for (const auto& [name, tv] : groups) {
    j += std::string(first ? "" : ", ") + "{\"group\": \"" + name + "\", \"exclusive_s\": " + json_number(tv.first) +
         ", \"visits\": " + json_number(tv.second) + "}";
    first = false;
  }
  j += "]";
  // Call tree: regions by index, nodes as [parent, region], values per metric (summed over locations)
  j += ",\n\"tree\": {\"regions\": [";
  for (std::size_t i = 0; i < p.regions.size(); ++i) j += (i ? ", " : "") + json_string(p.regions[i].name);
  j += "], \"parents\": [";
  for (std::size_t c = 0; c < p.cnodes.size(); ++c) j += (c ? "," : "") + std::to_string(p.cnodes[c].parent);
  j += "], \"nodes_region\": [";
  for (std::size_t c = 0; c < p.cnodes.size(); ++c) j += (c ? "," : "") + std::to_string(p.cnodes[c].region);
  j += "], \"metrics\": [";
  first = true;
  const std::size_t nl = p.locations.size();
  for (const cube4::ReadMetric& m : p.metrics) {
    if (!m.has_data || m.dtype == "MINDOUBLE" || m.dtype == "MAXDOUBLE") continue;
    const std::vector<double> ex = p.exclusive(m);
    std::vector<double> sum(p.cnodes.size(), 0);
    for (std::size_t c = 0; c < p.cnodes.size(); ++c)
      for (std::size_t l = 0; l < nl; ++l) sum[c] += ex[c * nl + l];
    j += std::string(first ? "\n " : ",\n ") + "{\"name\": " + json_string(m.uniq_name) + ", \"display\": " +
         json_string(m.disp_name) + ", \"unit\": " + json_string(m.uom) + ", \"exclusive\": " + json_list(sum) + "}";
    first = false;
  }
  j += "]}";
  // MPI
  j += ",\n\"mpi\": ";
  bool any_mpi = false;
  for (double t : rep.mpi_time) any_mpi |= t > 0;
  const std::uint32_t ranks = trace ? trace->mpi_ranks() : 0;
  if (any_mpi || ranks) {
    j += "{\"ranks\": " + std::to_string(ranks ? ranks : rep.processes) + ", \"time_s\": " + json_list(rep.mpi_time) +
         ", \"collective_s\": " + json_list(rep.collective_time);
    // The matrix is ranks^2 numbers in the page: up to 512 ranks (262,144 cells).
    if (ranks && trace->have_matrix()) j += ", \"bytes\": " + json_list(trace->bytes()) + ", \"messages\": " + json_list(trace->messages());
    else if (ranks) j += ", \"matrix_note\": \"no message matrix above " + std::to_string(kMaxMatrixRanks) + " ranks (" + std::to_string(ranks) + " here)\"";
    j += "}";
  } else {
    j += "null";
  }
  // GPU
  j += ",\n\"gpu\": ";
  if (rep.gpu_time > 0 || rep.streams) {
    j += "{\"time_s\": " + json_number(rep.gpu_time) + ", \"activities\": [";
    first = true;
    for (const RegionRow& r : rep.rows) {
      if (!r.gpu) continue;
      const cube4::Region& reg = p.regions[r.region];
      const GpuKind kind = gpu_kind(reg);
      j += std::string(first ? "\n " : ",\n ") + "{\"name\": " + json_string(reg.name) + ", \"kind\": \"" +
           (kind == GpuKind::Kernel ? "kernel" : kind == GpuKind::Copy ? "copy" : "memset") + "\", \"time_percent\": " +
           json_number(rep.gpu_time > 0 ? 100 * r.excl / rep.gpu_time : 0) + ", \"time_s\": " + json_number(r.excl) +
           ", \"calls\": " + json_number(r.visits) + ", \"avg_s\": " + json_number(r.visits > 0 ? r.excl / r.visits : 0) +
           ", \"min_s\": " + json_number(r.min_one) + ", \"max_s\": " + json_number(r.max_one) + ", \"bytes\": " +
           json_number(r.bytes) + ", \"gb_per_s\": " +
           json_number(kind == GpuKind::Copy && r.excl > 0 ? r.bytes / r.excl / 1e9 : 0) + "}";
      first = false;
    }
    j += "], \"busy\": [";
    first = true;
    if (trace)
      for (const Row& r : trace->rows()) {
        if (r.kind != "stream") continue;
        double busy = 0;
        for (float b : r.busy) busy += b;
        j += std::string(first ? "" : ", ") + "{\"stream\": " + json_string(r.name) + ", \"process\": " + std::to_string(r.process) +
             ", \"busy_fraction\": " + json_number(r.busy.empty() ? 0 : busy / r.busy.size()) + "}";
        first = false;
      }
    j += "]}";
  } else {
    j += "null";
  }
  // Timeline
  j += ",\n\"timeline\": ";
  if (trace) {
    // Legend: the regions with the most time in the timeline cells.
    std::map<std::int32_t, double> weight;
    for (const Row& r : trace->rows())
      for (std::size_t b = 0; b < r.top.size(); ++b)
        if (r.top[b] >= 0) weight[r.top[b]] += r.busy[b];
    std::vector<std::pair<double, std::int32_t>> order;
    for (const auto& [reg, w] : weight) order.emplace_back(-w, reg);
    std::sort(order.begin(), order.end());
    j += "{\"bins\": " + std::to_string(o.bins) + ", \"bin_s\": " + json_number(trace->bin_seconds()) + ", \"duration_s\": " +
         json_number(trace->duration()) + ", \"legend\": [";
    for (std::size_t i = 0; i < order.size() && i < o.top; ++i) {
      auto it = defs->regions.find(static_cast<std::uint32_t>(order[i].second));
      j += (i ? ", " : "") + std::string("{\"region\": ") + std::to_string(order[i].second) + ", \"name\": " +
           json_string(it == defs->regions.end() ? "?" : it->second.name) + "}";
    }
    j += "], \"rows\": [";
    first = true;
    for (const Row& r : trace->rows()) {
      j += std::string(first ? "\n " : ",\n ") + "{\"name\": " + json_string(r.name) + ", \"kind\": \"" + r.kind +
           "\", \"process\": " + std::to_string(r.process) + ", \"top\": [";
      for (std::size_t b = 0; b < r.top.size(); ++b) j += (b ? "," : "") + std::to_string(r.top[b]);
      j += "], \"busy\": [";
      for (std::size_t b = 0; b < r.busy.size(); ++b) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(r.busy[b]));
        j += (b ? "," : "") + std::string(buf);
      }
      j += "]}";
      first = false;
    }
    j += "]}";
  } else {
    j += "null";
  }
  j += "\n}\n";
  return j;
}

// ---- Text
std::string seconds_text(double s) {
  char buf[32];
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  return buf;
}

std::string steps_text(const prof::steps::Result& st) {
  std::ostringstream t;
  t << "\nSteps";
  if (st.region.empty()) return t.str() + ": " + st.note + "\n";
  t << ": " << st.steps.size() << " calls of " << st.region << " on rank " << st.process << " (" << st.source << ")\n";
  t << "  start-up " << seconds_text(st.startup) << ", warm-up " << st.warmup << " step" << (st.warmup == 1 ? "" : "s")
    << ", steady state median " << seconds_text(st.median) << " (min " << seconds_text(st.min) << ", max " << seconds_text(st.max)
    << ", MAD " << seconds_text(st.mad) << "), teardown " << seconds_text(st.teardown) << "\n";
  if (st.gpu) {
    char b[96];
    std::snprintf(b, sizeof b, "  GPU busy inside steady-state steps: median %.1f %%, %.0f kernels of %.1f us on average\n",
                  100 * st.steady_gpu_busy, st.steady_kernels, st.steady_kernel_us);
    t << b;
  }
  char line[256];
  std::snprintf(line, sizeof line, "  %5s %12s %12s %8s %12s %12s %12s %12s %12s  %s\n", "step", "start", "duration", "GPU busy",
                "kernels", "copies", "host only", "MPI", "data", "");
  t << line;
  for (std::size_t i = 0; i < st.steps.size(); ++i) {
    const prof::steps::Step& x = st.steps[i];
    char busy[16] = "-";
    if (st.gpu) std::snprintf(busy, sizeof busy, "%.1f%%", 100 * x.gpu_busy);
    std::snprintf(line, sizeof line, "  %5zu %12s %12s %8s %12s %12s %12s %12s %12s  %s\n", i, seconds_text(x.start).c_str(),
                  seconds_text(x.duration).c_str(), busy, seconds_text(x.kernel).c_str(), seconds_text(x.copy).c_str(),
                  seconds_text(x.host_only).c_str(), seconds_text(x.mpi).c_str(), seconds_text(x.data).c_str(),
                  x.warmup ? "warm-up" : x.outlier ? "outlier" : "");
    t << line;
  }
  if (!st.note.empty()) t << "  (" << st.note << ")\n";
  return t.str();
}

std::string make_text(const Report& rep, const TraceScan* trace, const Options& o) {
  std::ostringstream t;
  const cube4::ReadProfile& p = rep.profile;
  t << "prof-report: " << rep.experiment << "\n";
  if (const std::vector<std::string> command = command_of(rep, trace); !command.empty()) {
    t << "program:";
    for (const std::string& a : command) t << " " << a;
    t << "\n";
  }
  t << "processes " << rep.processes << ", threads " << rep.threads << ", GPU streams " << rep.streams;
  if (trace) t << ", trace " << trace->events() << " events, " << trace->flushes() << " buffer flushes, " << seconds_text(trace->duration());
  t << "\n";
  if (rep.run_lines) {
    auto count = [&rep](const char* key) {
      auto it = rep.run_counts.find(key);
      return it == rep.run_counts.end() ? 0.0 : it->second;
    };
    t << "prof: " << count("flushes") << " buffer flushes, " << count("lost_events") << " events lost, " << count("repairs")
      << " exits repaired, " << count("unmatched_exits") << " exits without entry; exit status " << rep.exit_status << "\n";
  }
  for (const std::string& w : rep.warnings) t << w << "\n";
  t << "\nFindings (most costly first; time lost summed over the locations, share of the run's total):\n";
  if (rep.findings.empty()) t << "  none above " << static_cast<int>(100 * prof::findings::kMinShare) << " % of the run's time\n";
  for (std::size_t i = 0; i < rep.findings.size(); ++i) {
    const prof::findings::Finding& f = rep.findings[i];
    t << "  " << i + 1 << ". " << f.title << "\n     " << seconds_text(f.seconds) << " lost ("
      << static_cast<int>(f.share * 100 + 0.5) << " %)";
    if (!f.ranks.empty()) {
      t << " in";
      for (std::size_t k = 0; k < f.ranks.size() && k < 4; ++k) t << (k ? ", " : " ") << "rank " << f.ranks[k].first << " " << seconds_text(f.ranks[k].second);
      if (f.ranks.size() > 4) t << ", " << f.ranks.size() - 4 << " more";
    }
    t << "\n";
    if (!f.callpath.empty()) t << "     where: " << f.callpath << "\n";
    if (!f.blame.empty()) t << "     why: " << f.blame << "\n";
    t << "     try: " << f.suggestion << "\n";
  }
  if (!rep.findings_note.empty()) t << "  (" << rep.findings_note << ")\n";
  if (rep.have_steps) t << steps_text(rep.steps);
  if (!rep.have_profile) return t.str() + "(no profile.cubex: run with PROF_ENABLE_PROFILING=true for the tables)\n";
  char line[512];
  t << "\nTop regions by exclusive time (min/mean/max: exclusive time per location, over the locations that ran them):\n";
  std::snprintf(line, sizeof line, "%7s %-11s %8s %12s %12s %12s %12s %12s %12s %12s  %s\n", "group", "paradigm", "time%",
                "exclusive", "inclusive", "visits", "per visit", "min", "mean", "max", "region");
  t << line;
  unsigned n = 0;
  for (const RegionRow& r : rep.rows) {
    if (n++ >= o.top) break;
    std::snprintf(line, sizeof line, "%7s %-11s %7.1f%% %12s %12s %12.0f %12s %12s %12s %12s  %s", group_name(r.group),
                  p.regions[r.region].paradigm.c_str(), rep.total_time > 0 ? 100 * r.excl / rep.total_time : 0,
                  seconds_text(r.excl).c_str(), seconds_text(r.incl).c_str(), r.visits,
                  seconds_text(r.visits > 0 ? r.excl / r.visits : 0).c_str(), seconds_text(r.min).c_str(),
                  seconds_text(r.mean).c_str(), seconds_text(r.max).c_str(), p.regions[r.region].name.c_str());
    const std::string note = region_note(rep, r);
    t << line << (note.empty() ? "" : "  (" + note + ")") << "\n";
  }
  if (rep.gpu_time > 0) {
    t << "\nGPU activities:\n";
    std::snprintf(line, sizeof line, "%8s %12s %8s %12s %12s %12s  %s\n", "time%", "total", "calls", "avg", "min", "max", "name");
    t << line;
    for (const RegionRow& r : rep.rows) {
      if (!r.gpu) continue;
      std::snprintf(line, sizeof line, "%7.1f%% %12s %8.0f %12s %12s %12s  %s\n", 100 * r.excl / rep.gpu_time,
                    seconds_text(r.excl).c_str(), r.visits, seconds_text(r.visits > 0 ? r.excl / r.visits : 0).c_str(),
                    seconds_text(r.min_one).c_str(), seconds_text(r.max_one).c_str(), p.regions[r.region].name.c_str());
      t << line;
    }
    if (trace)
      for (const Row& r : trace->rows()) {
        if (r.kind != "stream") continue;
        double busy = 0;
        for (float b : r.busy) busy += b;
        std::snprintf(line, sizeof line, "  %s (process %u): busy %.1f%% of the run\n", r.name.c_str(), r.process,
                      r.busy.empty() ? 0.0 : 100 * busy / r.busy.size());
        t << line;
      }
  }
  bool any_mpi = false;
  for (double x : rep.mpi_time) any_mpi |= x > 0;
  if (any_mpi) {
    t << "\nMPI per rank: time in MPI, in collectives";
    if (trace && trace->have_matrix()) t << ", bytes sent";
    t << "\n";
    for (std::uint32_t r = 0; r < rep.processes; ++r) {
      double sent = 0;
      if (trace && trace->have_matrix() && trace->mpi_ranks() > r)
        for (std::uint32_t d = 0; d < trace->mpi_ranks(); ++d) sent += trace->bytes()[static_cast<std::size_t>(r) * trace->mpi_ranks() + d];
      std::snprintf(line, sizeof line, "  rank %u: %s, %s, %.0f B\n", r, seconds_text(rep.mpi_time[r]).c_str(),
                    seconds_text(rep.collective_time[r]).c_str(), sent);
      t << line;
    }
  }
  return t.str();
}

std::string make_html(const std::string& json) {
  // Inside <script>, "</script" or "<!--" in a name would end or change the element: every "<"
  // (only ever inside a JSON string) becomes the escape \u003c.
  std::string data;
  data.reserve(json.size());
  for (char c : json) {
    if (c == '<') data += "\\u003c";
    else data += c;
  }
  std::string html = prof::report::kTemplate;
  const std::string mark = "/*PROF_REPORT_DATA*/";
  const std::size_t at = html.find(mark);
  if (at != std::string::npos) html.replace(at, mark.size(), data);
  return html;
}

// The findings the steps and the profile give (imbalance of the program's own regions, OpenMP
// barriers), beside the trace's, most costly first; and what they cannot see without a trace.
void add_profile_findings(Report& rep, bool traced) {
  for (prof::findings::Finding& f : prof::findings::from_steps(rep.steps, rep.total_time)) rep.findings.push_back(std::move(f));
  for (const RegionRow& r : rep.rows) {
    const std::string& name = rep.profile.regions[r.region].name;
    prof::findings::Finding f;
    if (!r.gpu && r.group == Group::OMP && (name.rfind("!$omp barrier", 0) == 0 || name.rfind("!$omp implicit barrier", 0) == 0))
      f = prof::findings::barrier_wait(name, r.locations, r.excl, r.max, r.mean, rep.total_time);
    else if (!r.gpu && (r.group == Group::USR || r.group == Group::COM))  // MPI's own time is the waits'
      f = prof::findings::imbalance(name, r.locations, r.max, r.mean, rep.total_time);
    if (!f.kind.empty()) rep.findings.push_back(std::move(f));
  }
  std::stable_sort(rep.findings.begin(), rep.findings.end(),
                   [](const prof::findings::Finding& a, const prof::findings::Finding& b) { return a.seconds > b.seconds; });
  bool mpi = false;
  for (double x : rep.mpi_time) mpi |= x > 0;
  if (mpi && !traced) rep.findings_note = "MPI wait states (late sender, late receiver, waits at collectives) need the trace: record with "
                         "PROF_ENABLE_TRACING=true, and report without --no-trace";
}

// Reads an experiment's profile, prof.cfg and prof.run into `rep`. False with a one-line error:
// the cause, and `fix` where the input is no directory.
bool load_experiment(const std::string& input, Report& rep, const char* fix, std::string* err) {
  rep.experiment = input;
  while (rep.experiment.size() > 1 && rep.experiment.back() == '/') rep.experiment.pop_back();
  struct stat st;
  if (::stat(rep.experiment.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *err = input + " is not a directory; " + fix;
    return false;
  }
  if (!build_profile(rep, err)) return false;
  rep.config = read_config(rep.experiment + "/prof.cfg");
  read_run_file(rep);
  return true;
}

int report_one(const std::string& input, const Options& o) {
  Report rep;
  const auto t0 = std::chrono::steady_clock::now();
  std::string err;
  if (!load_experiment(input, rep, "give an experiment directory (prof-*/)", &err)) {
    std::fprintf(stderr, "prof-report: error: %s\n", err.c_str());
    return kExitError;
  }
  const std::string anchor = rep.experiment + "/traces.otf2";
  otf2::Reader reader;
  std::unique_ptr<TraceScan> scan;
  // The reader's errors name no file: "<anchor>: <what>".
  const auto trace_error = [&reader, &anchor] {
    return anchor + ": " + reader.error() + (reader.damaged() ? " (the trace is damaged)" : "");
  };
  if (o.trace && exists(anchor)) {
    if (!reader.open(anchor)) {
      if (!rep.have_profile) {
        // Nothing else to report from: one line, the cause and the fix.
        std::fprintf(stderr, "prof-report: error: %s: %s%s\n", anchor.c_str(), reader.error().c_str(),
                     reader.damaged() ? " (the trace is damaged; record the run again, or see with otf2-print how far it can be read)"
                                      : "; give an experiment directory (prof-*/)");
        return kExitError;
      }
      rep.warnings.push_back("warning: the trace cannot be read: " + trace_error() + "; the figures are the profile's alone");
    } else {
      scan = std::make_unique<TraceScan>(reader.defs(), o.bins);
      prof::findings::WaitStates waits(reader.defs());
      auto named = rep.config.find("PROF_STEP");
      prof::steps::StepScan steps(reader.defs(), !o.step.empty() ? o.step : named != rep.config.end() ? named->second : "");
      prof::findings::Tee analyses(waits, steps);
      prof::findings::Tee all(*scan, analyses);
      if (!reader.read_events(all)) rep.warnings.push_back("warning: " + trace_error() + "; what was read before is shown");
      rep.findings = waits.findings(rep.total_time);
      rep.steps = steps.result();
      rep.have_steps = true;
      scan->set_events(reader.events_read());  // every OTF2 event, as otf2-print and prof-export count them
      for (const std::string& w : reader.warnings()) rep.warnings.push_back("warning: " + w);
      scan->finish();
      if (scan->flushes() && !rep.run_lines)
        rep.warnings.push_back("warning: trace buffers were flushed " + std::to_string(scan->flushes()) +
                               " times during the run (the timings around them are disturbed); a larger PROF_TOTAL_MEMORY avoids it");
    }
  }
  if (!rep.have_profile && !scan) {
    std::fprintf(stderr, "prof-report: error: %s has neither profile.cubex nor traces.otf2; is it a prof experiment?\n",
                 rep.experiment.c_str());
    return kExitError;
  }
  if (!rep.have_profile) rep.warnings.push_back("warning: no profile.cubex: the tables need PROF_ENABLE_PROFILING=true (the default)");
  add_profile_findings(rep, scan != nullptr);
  const std::string json = make_json(rep, scan.get(), scan ? &reader.defs() : nullptr, o);
  if (o.json) {
    std::fputs(json.c_str(), stdout);
    return 0;
  }
  if (o.text) {
    std::fputs(make_text(rep, scan.get(), o).c_str(), stdout);
    return 0;
  }
  const std::string dir = o.out_dir.empty() ? rep.experiment : o.out_dir;
  const std::string html_path = dir + "/report.html", json_path = dir + "/report.json";
  for (const auto& [path, text] : {std::make_pair(json_path, json), std::make_pair(html_path, make_html(json))}) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "prof-report: error: cannot write %s (%s); give a writable directory with -o\n", path.c_str(),
                   std::strerror(errno));
      return kExitError;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("prof-report: %s (open it in a browser) and %s; %s%.2f s\n", html_path.c_str(), json_path.c_str(),
              scan ? (std::to_string(scan->events()) + " trace events, ").c_str() : "", secs);
  return 0;
}

// ---- --diff (tools/report_diff.hpp)
// Reads one experiment as report_one does and hands the diff its figures. Returns false with a
// one-line error (cause and fix) in *err.
bool load_for_diff(const std::string& input, const Options& o, prof::report::Experiment* out, std::string* err) {
  Report rep;
  if (!load_experiment(input, rep, "give two experiment directories (prof-*/): prof-report --diff A B", err)) return false;
  if (!rep.have_profile) {
    *err = rep.experiment + " has no profile.cubex; --diff compares profiles: record both runs with PROF_ENABLE_PROFILING=true (the default)";
    return false;
  }
  struct stat st;
  const std::string anchor = rep.experiment + "/traces.otf2";
  otf2::Reader reader;
  std::unique_ptr<TraceScan> scan;
  // A trace that cannot be read leaves the run figures it gives (duration, events) out.
  if (o.trace && exists(anchor) && reader.open(anchor)) {
    scan = std::make_unique<TraceScan>(reader.defs(), 1);
    reader.read_events(*scan);
    scan->set_events(reader.events_read());
    scan->finish();
  }
  prof::report::Experiment& e = *out;
  e.dir = rep.experiment;
  e.command = command_of(rep, scan.get());
  e.date = scan ? date_text(reader.defs().realtime_ns) : "";
  if (e.date.empty() && ::stat((rep.experiment + "/profile.cubex").c_str(), &st) == 0)  // no trace: when the profile was written
    e.date = date_text(static_cast<std::uint64_t>(st.st_mtime) * 1000000000u) + " (profile written)";
  e.trace = scan != nullptr;
  e.duration_s = scan ? scan->duration() : 0;
  e.total_time_s = rep.total_time;
  e.gpu_time_s = rep.gpu_time;
  e.processes = rep.processes;
  e.threads = rep.threads;
  e.gpu_streams = rep.streams;
  e.trace_events = scan ? static_cast<double>(scan->events()) : 0;
  const auto count = [&rep](const char* key) {
    auto it = rep.run_counts.find(key);
    return it == rep.run_counts.end() ? 0.0 : it->second;
  };
  e.buffer_flushes = rep.run_lines ? count("flushes") : scan ? static_cast<double>(scan->flushes()) : 0;
  e.lost_events = count("lost_events");
  e.exit_status = rep.exit_status;
  e.config = rep.config;
  for (const RegionRow& r : rep.rows) {
    const cube4::Region& reg = rep.profile.regions[r.region];
    prof::report::RegionFigures f;
    f.name = reg.name;
    f.paradigm = reg.paradigm;
    f.group = group_name(r.group);
    f.file = reg.file;
    f.gpu = r.gpu;
    if (r.gpu) {
      const GpuKind kind = gpu_kind(reg);
      f.kind = kind == GpuKind::Kernel ? "kernel" : kind == GpuKind::Copy ? "copy" : "memset";
    }
    f.visits = r.visits;
    f.excl = r.excl;
    f.incl = r.incl;
    f.min = r.min;
    f.mean = r.mean;
    f.max = r.max;
    f.locations = r.locations;
    f.min_one = r.min_one;
    f.max_one = r.max_one;
    e.regions.push_back(std::move(f));
  }
  return true;
}

// prof-report --diff A B: text (default), --json, or diff.html + diff.json in -o DIR.
int diff_one(const std::string& a, const std::string& b, const Options& o, const prof::report::DiffOptions& d) {
  prof::report::Experiment ea, eb;
  std::string err;
  if (!load_for_diff(a, o, &ea, &err) || !load_for_diff(b, o, &eb, &err)) {
    std::fprintf(stderr, "prof-report: error: %s\n", err.c_str());
    return kExitError;
  }
  const prof::report::Diff result = prof::report::diff(ea, eb, d);
  const int rc = d.fail_on_regression && result.count(prof::report::Verdict::Regression) ? 3 : 0;
  if (o.json) {
    std::fputs(prof::report::diff_json(result).c_str(), stdout);
    return rc;
  }
  if (o.out_dir.empty()) {
    std::fputs(prof::report::diff_text(result).c_str(), stdout);
    return rc;
  }
  const std::string html_path = o.out_dir + "/diff.html", json_path = o.out_dir + "/diff.json";
  for (const auto& [path, text] : {std::make_pair(json_path, prof::report::diff_json(result)),
                                   std::make_pair(html_path, prof::report::diff_html(result))}) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "prof-report: error: cannot write %s (%s); give a writable directory with -o\n", path.c_str(),
                   std::strerror(errno));
      return kExitError;
    }
  }
  std::printf("prof-report: %s (open it in a browser) and %s; %u regressions, %u improvements\n", html_path.c_str(),
              json_path.c_str(), result.count(prof::report::Verdict::Regression),
              result.count(prof::report::Verdict::Improvement));
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<std::string> inputs;
  std::vector<std::string> diff_inputs;  // --diff A B
  prof::report::DiffOptions diff;
  bool diff_option = false;  // --threshold or --fail-on-regression: only with --diff
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "prof-report: error: %s needs a value; see prof-report --help\n", what);
        std::exit(kExitUsage);
      }
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--text") {
      o.text = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--no-trace") {
      o.trace = false;
    } else if (a == "--step") {
      o.step = value("--step");
    } else if (a == "--diff") {
      if (i + 2 >= argc) {
        std::fprintf(stderr, "prof-report: error: --diff needs two experiment directories: prof-report --diff A B\n");
        return kExitUsage;
      }
      diff_inputs.push_back(argv[++i]);
      diff_inputs.push_back(argv[++i]);
    } else if (a == "--threshold") {
      const std::string v = value("--threshold");
      char* end = nullptr;
      const double pct = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(pct >= 0 && pct <= 1000)) {
        std::fprintf(stderr, "prof-report: error: --threshold '%s' is not a percentage from 0 to 1000, e.g. --threshold 5\n", v.c_str());
        return kExitUsage;
      }
      diff.threshold_percent = pct;
      diff_option = true;
    } else if (a == "--fail-on-regression") {
      diff.fail_on_regression = true;
      diff_option = true;
    } else if (a == "-o") {
      o.out_dir = value("-o");
    } else if (a == "--bins" || a == "--top") {
      const std::string v = value(a.c_str());
      char* end = nullptr;
      const unsigned long n = std::strtoul(v.c_str(), &end, 10);
      if (!*v.c_str() || *end || n == 0 || n > 100000) {
        std::fprintf(stderr, "prof-report: error: %s '%s' is not a number from 1 to 100000\n", a.c_str(), v.c_str());
        return kExitUsage;
      }
      (a == "--bins" ? o.bins : o.top) = static_cast<unsigned>(n);
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "prof-report: error: unknown option '%s'; see prof-report --help\n", a.c_str());
      return kExitUsage;
    } else {
      inputs.push_back(a);
    }
  }
  if (!diff_inputs.empty()) {
    if (diff_inputs.size() != 2 || !inputs.empty()) {
      std::fprintf(stderr, "prof-report: error: --diff compares two experiments; give exactly two: prof-report --diff A B\n");
      return kExitUsage;
    }
    diff.top = o.top;
    return diff_one(diff_inputs[0], diff_inputs[1], o, diff);
  }
  if (diff_option) {
    std::fprintf(stderr, "prof-report: error: --threshold and --fail-on-regression go with --diff A B\n");
    return kExitUsage;
  }
  if (inputs.empty()) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  if (!o.out_dir.empty() && inputs.size() > 1) {
    std::fprintf(stderr, "prof-report: error: -o takes one experiment; give one with -o\n");
    return kExitUsage;
  }
  int rc = 0;
  for (const std::string& in : inputs) rc = std::max(rc, report_one(in, o));
  return rc;
}
