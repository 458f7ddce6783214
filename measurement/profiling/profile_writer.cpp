// SPDX-License-Identifier: BSD-3-Clause
// Call trees → CUBE4: call paths of all locations are unified by (parent path, region), in
// pre-order so that a parent always comes before its children.
#include "measurement/profiling/profile_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "measurement/definitions/regions.hpp"
#include "measurement/metrics/metrics.hpp"
#include "measurement/profiling/cube4_writer.hpp"
#include "measurement/profiling/summary.hpp"
#include "measurement/timer.hpp"

namespace prof {

namespace {

const char* paradigm_name(regions::Paradigm p) {
  switch (p) {
    case regions::Paradigm::Measurement: return "measurement";
    case regions::Paradigm::Compiler: return "compiler";
    case regions::Paradigm::User: return "user";
    case regions::Paradigm::Pthread: return "pthread";
    case regions::Paradigm::Mpi: return "mpi";
    case regions::Paradigm::Cuda: return "cuda";
    case regions::Paradigm::Sampling: return "sampling";
    case regions::Paradigm::Python: return "python";
    case regions::Paradigm::OpenMP: return "openmp";
  }
  return "unknown";
}

const char* role_name(regions::Role r) {
  switch (r) {
    case regions::Role::Function: return "function";
    case regions::Role::Wrapper: return "wrapper";
    case regions::Role::ThreadCreate: return "thread create";
    case regions::Role::ThreadWait: return "thread wait";
    case regions::Role::Artificial: return "artificial";
    case regions::Role::Code: return "code";
    case regions::Role::Point2Point: return "point2point";
    case regions::Role::Barrier: return "barrier";
    case regions::Role::CollOne2All: return "one2all";
    case regions::Role::CollAll2One: return "all2one";
    case regions::Role::CollAll2All: return "all2all";
    case regions::Role::CollOther: return "collective";
    case regions::Role::DataTransfer: return "data transfer";
    case regions::Role::Parallel: return "parallel";
    case regions::Role::Loop: return "loop";
    case regions::Role::Sections: return "sections";
    case regions::Role::Single: return "single";
    case regions::Role::Master: return "master";
    case regions::Role::Critical: return "critical";
    case regions::Role::Atomic: return "atomic";
    case regions::Role::ImplicitBarrier: return "implicit barrier";
    case regions::Role::Task: return "task";
    case regions::Role::TaskCreate: return "task create";
    case regions::Role::TaskWait: return "task wait";
    case regions::Role::Taskgroup: return "taskgroup";
    case regions::Role::Ordered: return "ordered";
    case regions::Role::Flush: return "flush";
  }
  return "unknown";
}

struct Merger {
  cube4::Profile& out;
  std::map<std::pair<std::int64_t, RegionId>, std::uint32_t> index;  // (parent cnode, region) → cnode
  std::unordered_map<const ProfileNode*, std::uint32_t> of;          // node → cnode

  std::uint32_t cnode(std::int64_t parent, RegionId region) {
    auto key = std::make_pair(parent, region);
    auto it = index.find(key);
    if (it != index.end()) return it->second;
    auto id = static_cast<std::uint32_t>(out.cnodes.size());
    out.cnodes.push_back({region, parent});
    index.emplace(key, id);
    return id;
  }

  // Iterative pre-order walk: recursion 10,000+ deep must not overflow the stack here.
  void add_tree(const ProfileNode* root) {
    of[root] = cnode(-1, root->region);
    std::vector<const ProfileNode*> todo{root};
    while (!todo.empty()) {
      const ProfileNode* n = todo.back();
      todo.pop_back();
      std::uint32_t self = of[n];
      std::vector<const ProfileNode*> kids;
      for (const ProfileNode* c = n->first_child; c; c = c->next_sibling) kids.push_back(c);
      // Children are linked newest first: walk them in the order they were first entered.
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) of[*it] = cnode(self, (*it)->region);
      for (const ProfileNode* c : kids) todo.push_back(c);
    }
  }
};

// PROF_METRIC_*: one exclusive Cube metric per configured metric. A node holds the sums of its
// visits' inclusive deltas; exclusive = inclusive - its children's inclusive. A root's inclusive
// value is what its thread counted from its start to its end (or its last read), at least its
// children's. Call paths without room for values (PROFILE MEMORY FULL) leave theirs in the parent.
void add_metrics(const std::vector<const Location*>& locs, const std::unordered_map<const ProfileNode*, std::uint32_t>& of,
                 std::size_t ncnodes, cube4::Profile* p) {
  const std::vector<metrics::MetricDef>& defs = metrics::defs();
  bool any = false;
  for (const Location* l : locs) any = any || l->metric_count;
  if (defs.empty() || !any) return;
  const std::size_t nl = locs.size(), first = p->extra_metrics.size();
  for (const metrics::MetricDef& d : defs) {
    cube4::ExtraMetric em{d.name, d.name, d.unit, "", d.description, {}};
    em.values.assign(ncnodes * nl, 0);
    p->extra_metrics.push_back(std::move(em));
  }
  std::vector<std::uint64_t> total, children;
  for (std::size_t li = 0; li < nl; ++li) {
    const Location* l = locs[li];
    const unsigned k = l->metric_count;
    if (!k) continue;
    const auto incl = [&](const ProfileNode* node, unsigned i) -> std::uint64_t {
      return node->metrics > i ? reinterpret_cast<const std::uint64_t*>(node + 1)[i] : 0;
    };
    const bool have_total = metrics::totals(l, &total);
    std::vector<const ProfileNode*> todo{&l->root_node};
    while (!todo.empty()) {
      const ProfileNode* node = todo.back();
      todo.pop_back();
      auto it = of.find(node);
      if (it == of.end()) continue;
      children.assign(k, 0);
      for (const ProfileNode* c = node->first_child; c; c = c->next_sibling) {
        for (unsigned i = 0; i < k; ++i) children[i] += incl(c, i);
        todo.push_back(c);
      }
      const std::size_t at = static_cast<std::size_t>(it->second) * nl + li;
      for (unsigned i = 0; i < k; ++i) {
        std::uint64_t in = incl(node, i);
        if (node == &l->root_node) in = std::max(have_total ? total[i] : 0, children[i]);
        p->extra_metrics[first + i].values[at] = in > children[i] ? in - children[i] : 0;
      }
    }
  }
}

using NodeCounts = std::unordered_map<const ProfileNode*, std::uint64_t>;

/// Appends `em` with the per-call-path counts that the locations keep in their map `counts`
/// (exclusive values), when any location has some. True when it did.
bool add_counts(const std::vector<const Location*>& locs, const std::unordered_map<const ProfileNode*, std::uint32_t>& of,
                NodeCounts* Location::*counts, cube4::ExtraMetric em, cube4::Profile* p) {
  bool any = false;
  for (const Location* l : locs) any = any || (l->*counts && !(l->*counts)->empty());
  if (!any) return false;
  const std::size_t nl = locs.size();
  em.values.assign(p->cnodes.size() * nl, 0);
  for (std::size_t li = 0; li < nl; ++li) {
    if (!(locs[li]->*counts)) continue;
    for (const auto& [node, v] : *(locs[li]->*counts)) {
      auto it = of.find(node);
      if (it != of.end()) em.values[static_cast<std::size_t>(it->second) * nl + li] += v;
    }
  }
  p->extra_metrics.push_back(std::move(em));
  return true;
}

}  // namespace

bool build_profile(const std::vector<Location*>& locations, Timestamp end, cube4::Profile* out, std::string* error) {
  cube4::Profile& p = *out;
  for (const auto& r : regions::snapshot())
    p.regions.push_back({r.name, r.canonical, r.file, r.begin_line, r.end_line, paradigm_name(r.paradigm), role_name(r.role),
                         r.throttled_visits, r.throttled_mean_ns});
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  p.node = host;
  // Columns: the threads, then the GPU streams by their accelerator group (the document order of
  // the system tree, which lists a process's groups one after the other).
  std::vector<const Location*> locs;
  for (const Location* l : locations)
    if (l->profiling && l->type == LocationType::CpuThread) locs.push_back(l);
  std::vector<const Location*> streams;
  for (const Location* l : locations)
    if (l->profiling && l->type == LocationType::GpuStream) streams.push_back(l);
  std::stable_sort(streams.begin(), streams.end(), [](const Location* a, const Location* b) { return a->group < b->group; });
  locs.insert(locs.end(), streams.begin(), streams.end());
  if (locs.empty()) {
    *error = "no thread recorded a profile";
    return false;
  }
  Merger m{p, {}, {}};
  // Every location's root is the same program-root region, so all trees share cnode 0.
  for (const Location* l : locs) m.add_tree(&l->root_node);
  for (const Location* l : locs) p.locations.push_back(l->name);
  if (!streams.empty()) {
    // Explicit groups: the process, then one accelerator group per GPU context.
    cube4::Profile::Group process;
    process.name = p.process.empty() ? std::string("Process") : p.process;
    process.rank = p.rank;
    process.node = p.node;
    p.groups.push_back(process);
    for (const Location* l : locs) {
      std::uint32_t g = 0;
      if (l->type == LocationType::GpuStream) {
        g = static_cast<std::uint32_t>(p.groups.size() - 1);
        if (p.groups.back().type != "accelerator" || p.groups.back().name != l->group) {
          cube4::Profile::Group accel;
          accel.name = l->group;
          accel.rank = p.rank;
          accel.node = p.node;
          accel.type = "accelerator";
          accel.creator = 0;
          p.groups.push_back(accel);
          g = static_cast<std::uint32_t>(p.groups.size() - 1);
        }
      }
      p.location_group.push_back(g);
      p.location_types.push_back(l->type == LocationType::GpuStream ? "accelerator stream" : "thread");
    }
  }

  const std::size_t n = p.cnodes.size(), nl = locs.size();
  p.visits.assign(n * nl, 0);
  p.time_incl.assign(n * nl, 0.0);
  p.min_time.assign(n * nl, 0.0);
  p.max_time.assign(n * nl, 0.0);
  const double seconds_per_tick = 1.0 / static_cast<double>(timer::resolution());
  // A call path a location never entered itself (an OpenMP team thread's copy of the encountering
  // thread's path, a GPU stream's host path) spent the time of what ran below it. A sampled frame
  // (a call path only samples found, never entered) spent the time its samples stand for (hits x
  // period of time-based sources, as the sampled_time metric): measured nowhere else, that time is
  // taken from its instrumented caller's exclusive time, so that a sampling-only profile shows its
  // hot functions by time and not all of it in the program's root. Samples are a statistical
  // estimate: where those below an instrumented call path stand for more than its measured time
  // leaves (a short function with a lucky sample), they are scaled down to fit, so that no
  // exclusive time is negative.
  std::unordered_map<const ProfileNode*, std::uint64_t> below;
  std::unordered_set<const ProfileNode*> sampled_part;  // call paths only samples found (and all below them)
  const auto incl_of = [&](const ProfileNode* n) {
    auto it = below.find(n);
    return it != below.end() ? it->second : n->incl_ticks;
  };
  const double ticks_per_ns = static_cast<double>(timer::resolution()) / 1e9;
  const std::unordered_map<const ProfileNode*, std::uint64_t>* sampled = nullptr;
  const auto scale = [&](const auto& self, const ProfileNode* n, double f) -> void {
    if (auto it = below.find(n); it != below.end()) it->second = static_cast<std::uint64_t>(static_cast<double>(it->second) * f);
    for (const ProfileNode* c = n->first_child; c; c = c->next_sibling) self(self, c, f);
  };
  const auto fill_below = [&](const auto& self, const ProfileNode* n) -> std::uint64_t {
    std::uint64_t children = 0, from_samples = 0;
    bool only_sampled = n->visits == 0 && n->incl_ticks == 0 && n->parent && sampled;
    for (const ProfileNode* c = n->first_child; c; c = c->next_sibling) {
      const std::uint64_t v = self(self, c);
      children += v;
      if (sampled_part.count(c)) from_samples += v;
      else only_sampled = false;
    }
    if (only_sampled) {
      sampled_part.insert(n);
      if (auto it = sampled->find(n); it != sampled->end())
        children += static_cast<std::uint64_t>(static_cast<double>(it->second) * ticks_per_ns);
    }
    if (n->visits != 0 && from_samples > 0 && children > n->incl_ticks) {
      const std::uint64_t measured = children - from_samples;
      const double f = n->incl_ticks > measured ? static_cast<double>(n->incl_ticks - measured) / static_cast<double>(from_samples) : 0.0;
      for (const ProfileNode* c = n->first_child; c; c = c->next_sibling)
        if (sampled_part.count(c)) scale(scale, c, f);
    }
    if (n->visits != 0 || !n->parent || n->incl_ticks >= children) return n->incl_ticks;
    below[n] = children;
    return children;
  };
  for (std::size_t li = 0; li < nl; ++li) {
    const Location* l = locs[li];
    sampled = l->sampled_ns;
    fill_below(fill_below, &l->root_node);
    std::vector<const ProfileNode*> todo{&l->root_node};
    while (!todo.empty()) {
      const ProfileNode* node = todo.back();
      todo.pop_back();
      std::size_t at = static_cast<std::size_t>(m.of.at(node)) * nl + li;
      std::uint64_t visits = node->visits, incl = incl_of(node), mn = node->min_ticks, mx = node->max_ticks;
      if (node == &l->root_node) {
        std::uint64_t children = 0;
        for (const ProfileNode* c = node->first_child; c; c = c->next_sibling) children += incl_of(c);
        if (li == 0 && l->index == 0) {
          // The program itself: one visit from the start of measurement to the end.
          visits = 1;
          incl = end > timer::start() ? end - timer::start() : 0;
          if (incl < children) incl = children;
          mn = mx = incl;
        } else {
          visits = 0;
          incl = children;
        }
      }
      p.visits[at] = visits;
      p.time_incl[at] = static_cast<double>(incl) * seconds_per_tick;
      p.min_time[at] = visits ? static_cast<double>(mn) * seconds_per_tick : 0.0;
      p.max_time[at] = visits ? static_cast<double>(mx) * seconds_per_tick : 0.0;
      for (const ProfileNode* c = node->first_child; c; c = c->next_sibling) todo.push_back(c);
    }
  }
  // Message bytes (MPI), exclusive per call path, when any thread sent or received some.
  bool any_bytes = false;
  for (const Location* l : locs) any_bytes = any_bytes || (l->bytes && !l->bytes->empty());
  if (any_bytes) {
    cube4::ExtraMetric sent{"bytes_sent", "Bytes sent", "bytes", "", "Bytes sent in communication calls (MPI)", {}};
    cube4::ExtraMetric received{"bytes_received", "Bytes received", "bytes", "", "Bytes received in communication calls (MPI)", {}};
    sent.values.assign(n * nl, 0);
    received.values.assign(n * nl, 0);
    for (std::size_t li = 0; li < nl; ++li) {
      if (!locs[li]->bytes) continue;
      for (const auto& [node, b] : *locs[li]->bytes) {
        auto it = m.of.find(node);
        if (it == m.of.end()) continue;
        const std::size_t at = static_cast<std::size_t>(it->second) * nl + li;
        sent.values[at] += b.first;
        received.values[at] += b.second;
      }
    }
    p.extra_metrics.push_back(std::move(sent));
    p.extra_metrics.push_back(std::move(received));
  }
  // Samples (PROF_SAMPLING_EVENTS): hits per call path, the sampled frames below the instrumented
  // path included.
  if (add_counts(locs, m.of, &Location::hits,
                 {"hits", "Hits", "occ", "", "Samples that interrupted the thread in this call path (sampling)", {}}, &p))
    add_counts(locs, m.of, &Location::sampled_ns,
               {"sampled_time", "Sampled CPU time", "nsec", "", "CPU time estimated from the samples of time-based sources (hits x period, ns)", {}},
               &p);
  add_metrics(locs, m.of, n, &p);
  // GPU copies and memsets (CUDA), on the stream columns.
  add_counts(locs, m.of, &Location::gpu_bytes,
             {"bytes_copied", "Bytes copied", "bytes", "", "Bytes moved by GPU memory copies and set by memsets (CUDA), on the GPU streams", {}},
             &p);
  // Visits below PROF_PROFILING_MAX_CALLPATH_DEPTH, per call path at the cutoff: not in its
  // visits (its time holds theirs), but each is an Enter and a Leave in a trace (prof-score).
  add_counts(locs, m.of, &Location::too_deep,
             {"folded_visits", "Folded visits", "occ", "",
              "Visits below PROF_PROFILING_MAX_CALLPATH_DEPTH folded into this call path (not in its visits; its time includes theirs)", {}},
             &p);
  return true;
}

std::string summary_table(const cube4::Profile& p, std::size_t top) {
  const std::vector<double> visits(p.visits.begin(), p.visits.end());
  summary::Input in{&p.cnodes, p.regions.size(), p.locations.size(), &visits, &p.time_incl, &p.min_time, &p.max_time};
  std::vector<std::string> names;
  for (const cube4::Region& r : p.regions) names.push_back(r.name);
  return summary::table(summary::by_region(in), names, top, p.locations.size());
}

}  // namespace prof
