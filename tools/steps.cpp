// SPDX-License-Identifier: BSD-3-Clause
#include "tools/steps.hpp"

#include <algorithm>
#include <cmath>

namespace prof::steps {

namespace {

constexpr std::uint8_t kRoleCode = 4, kRoleDataTransfer = 30;  // OTF2_RegionRole
constexpr std::size_t kMaxInstances = 1000000;  // calls of step candidates kept (memory bound)

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

StepScan::StepScan(const otf2::Definitions& defs, const std::string& step) : defs_(defs), step_(step) {
  const otf2::ProcessMap pm(defs);
  procs_.resize(pm.size());
  for (const otf2::Location& d : defs.locations) {
    Loc s;
    if (!pm.process_of(d, &s.process)) continue;
    s.kind = otf2::ProcessMap::kind(d);
    if (s.kind == otf2::LocationKind::Other) continue;
    Proc& p = procs_[s.process];
    if (s.kind == otf2::LocationKind::Stream) p.streams = true;
    if (s.kind == otf2::LocationKind::Thread && p.host == otf2::kUndefined64) p.host = d.ref;
    locs_[d.ref] = std::move(s);
  }
  const std::size_t n = defs.regions.empty() ? 0 : defs.regions.rbegin()->first + 1;
  candidate_.assign(n, 0);
  mpi_.assign(n, 0);
  data_.assign(n, 0);
  gpu_kind_.assign(n, kKernel);
  for (const auto& [ref, r] : defs.regions) {
    // Without a name: the ranges a user marks (prof's user API, NVTX), not every function: in
    // OTF2 both share the User paradigm with Python's functions, whose names are module:qualname
    // (and imports, "import <module>").
    candidate_[ref] = step_.empty() ? r.paradigm == otf2::kParadigmUser &&
                                          (r.file == "NVTX" || r.role == kRoleCode ||
                                           (r.name.find(':') == std::string::npos && r.name.rfind("import ", 0) != 0))
                                    : r.name == step_;
    mpi_[ref] = r.paradigm == otf2::kParadigmMpi;
    // PyTorch's DataLoader iterators (torch.utils.data.dataloader:_BaseDataLoaderIter.__next__).
    data_[ref] = r.name.find("DataLoader") != std::string::npos && r.name.find("__next__") != std::string::npos;
    if (r.role == kRoleDataTransfer)
      gpu_kind_[ref] = r.name.find("emset") != std::string::npos ? kMemset : kCopy;
  }
}

StepScan::Snap StepScan::snap(const Proc& p, const Loc& s, std::uint64_t t) const {
  Snap x;
  const double now = static_cast<double>(t);
  x.any = p.any + (p.busy > 0 ? now - static_cast<double>(p.busy_since) : 0);
  for (int k = 0; k < kKinds; ++k) x.kind[k] = p.kind[k] + p.running[k] * now - p.since_sum[k];
  x.mpi = s.mpi + (s.mpi_depth > 0 ? now - static_cast<double>(s.mpi_since) : 0);
  x.data = s.data + (s.data_depth > 0 ? now - static_cast<double>(s.data_since) : 0);
  x.kernels = p.kernels;
  return x;
}

std::string StepScan::host_region(const Proc& p) const {
  auto it = locs_.find(p.host);
  if (it == locs_.end() || it->second.stack.empty()) return "(no region)";
  const std::vector<std::uint32_t>& st = it->second.stack;
  const auto name = [this](std::uint32_t r) {
    auto d = defs_.regions.find(r);
    return d == defs_.regions.end() ? "region " + std::to_string(r) : d->second.name;
  };
  return st.size() > 1 ? name(st[st.size() - 2]) + " > " + name(st.back()) : name(st.back());
}

// The GPU idle time inside steps, by what the host thread was in (called before each change).
void StepScan::idle_until(Proc& p, std::uint64_t t) {
  if (!p.streams || t <= p.last) return;
  if (p.open_steps > 0 && p.busy == 0 && p.last) p.idle_by[host_region(p)] += static_cast<double>(t - p.last);
  p.last = t;
}

void StepScan::enter(std::uint64_t l, std::uint64_t t, std::uint32_t r) {
  auto it = locs_.find(l);
  if (it == locs_.end() || r >= candidate_.size()) return;
  Loc& s = it->second;
  Proc& p = procs_[s.process];
  idle_until(p, t);
  if (s.kind == otf2::LocationKind::Stream) {
    if (s.activity >= 0) return;  // activities of one stream do not nest
    const int k = gpu_kind_[r];
    s.activity = k;
    s.act_since = t;
    if (p.busy++ == 0) p.busy_since = t;
    ++p.running[k];
    p.since_sum[k] += static_cast<double>(t);
    return;
  }
  s.stack.push_back(r);
  if (mpi_[r] && s.mpi_depth++ == 0) s.mpi_since = t;
  if (data_[r] && s.data_depth++ == 0) s.data_since = t;
  if (candidate_[r] && s.depth[r]++ == 0) {
    Instance in;
    in.begin = t;
    in.a = snap(p, s, t);
    open_[{l, r}] = in;
    ++p.open_steps;
  }
}

void StepScan::leave(std::uint64_t l, std::uint64_t t, std::uint32_t r) {
  auto it = locs_.find(l);
  if (it == locs_.end() || r >= candidate_.size()) return;
  Loc& s = it->second;
  Proc& p = procs_[s.process];
  idle_until(p, t);
  if (s.kind == otf2::LocationKind::Stream) {
    if (s.activity < 0) return;
    const int k = s.activity;
    s.activity = -1;
    p.kind[k] += static_cast<double>(t - s.act_since);
    p.since_sum[k] -= static_cast<double>(s.act_since);
    --p.running[k];
    if (k == kKernel) ++p.kernels;
    if (--p.busy == 0) p.any += static_cast<double>(t - p.busy_since);
    return;
  }
  if (!s.stack.empty()) s.stack.pop_back();
  if (mpi_[r] && s.mpi_depth > 0 && --s.mpi_depth == 0) s.mpi += static_cast<double>(t - s.mpi_since);
  if (data_[r] && s.data_depth > 0 && --s.data_depth == 0) s.data += static_cast<double>(t - s.data_since);
  if (!candidate_[r]) return;
  auto d = s.depth.find(r);
  if (d == s.depth.end() || d->second == 0 || --d->second > 0) return;
  auto o = open_.find({l, r});
  if (o == open_.end()) return;
  Instance in = o->second;
  open_.erase(o);
  --p.open_steps;
  in.end = t;
  in.b = snap(p, s, t);
  if (stored_ >= kMaxInstances) {
    overflow_ = true;
    return;
  }
  instances_[{l, r}].push_back(in);
  ++stored_;
}

Result StepScan::result() {
  Result res;
  // The step: the named region's calls on the location that made most of them (of those, the
  // one they cover most time on); else the candidate range with 3 calls or more that covers the
  // most time (the outermost loop's).
  const std::vector<Instance>* best = nullptr;
  std::uint64_t best_loc = 0;
  std::pair<std::size_t, double> best_score{0, -1};  // (calls, when named; time covered)
  for (const auto& [key, v] : instances_) {
    if (v.size() < (step_.empty() ? 3u : 1u)) continue;
    double total = 0;
    for (const Instance& in : v) total += static_cast<double>(in.end - in.begin);
    const std::pair<std::size_t, double> score{step_.empty() ? 0 : v.size(), total};
    if (score > best_score) {
      best_score = score;
      best = &v;
      best_loc = key.first;
      res.region = defs_.regions.at(key.second).name;
    }
  }
  if (!best) {
    res.note = step_.empty() ? "no steps found: no user-API or NVTX range repeats 3 times or more; name the step's region with "
                               "PROF_STEP=<region> (e.g. __main__:train_step, or a C function) or prof-report --step"
                             : "the step region " + step_ + " has no call in the trace";
    return res;
  }
  res.source = step_.empty() ? "found: the user-API or NVTX range that repeats and covers the most time" : "named (PROF_STEP or --step)";
  const Loc& loc = locs_.at(best_loc);
  res.process = loc.process;
  const Proc& p = procs_[loc.process];
  res.gpu = p.streams;
  const double hz = static_cast<double>(std::max<std::uint64_t>(defs_.timer_resolution, 1));
  for (std::size_t i = 0; i < best->size(); ++i) {
    const Instance& in = (*best)[i];
    // The iteration: to the next step's start (its snapshot there), the last one its own call.
    const bool more = i + 1 < best->size();
    const Snap& until = more ? (*best)[i + 1].a : in.b;
    const std::uint64_t until_t = more ? (*best)[i + 1].begin : in.end;
    Step st;
    st.start = static_cast<double>(in.begin - std::min(in.begin, defs_.global_offset)) / hz;
    st.duration = static_cast<double>(in.end - in.begin) / hz;
    const double any = (in.b.any - in.a.any) / hz;
    st.gpu_busy = st.duration > 0 ? std::min(1.0, any / st.duration) : 0;
    st.kernel = (in.b.kind[kKernel] - in.a.kind[kKernel]) / hz;
    st.copy = (in.b.kind[kCopy] - in.a.kind[kCopy]) / hz;
    st.memset = (in.b.kind[kMemset] - in.a.kind[kMemset]) / hz;
    st.host_only = res.gpu ? std::max(0.0, st.duration - any) : 0;
    st.mpi = (in.b.mpi - in.a.mpi) / hz;
    st.iteration = static_cast<double>(until_t - in.begin) / hz;
    st.data = (until.data - in.a.data) / hz;
    st.kernels = in.b.kernels - in.a.kernels;
    res.steps.push_back(st);
  }
  // Warm-up: leading steps 1.5 times the median of the rest or longer (at most a quarter).
  const std::size_t n = res.steps.size();
  if (n >= 4) {
    std::vector<double> rest;
    for (std::size_t i = 1; i < n; ++i) rest.push_back(res.steps[i].duration);
    const double m = median(rest);
    while (res.warmup < std::max<std::size_t>(1, n / 4) && res.steps[res.warmup].duration > 1.5 * m) res.steps[res.warmup++].warmup = true;
  }
  std::vector<double> d, busy, kernels, kernel_us, data_share;
  for (std::size_t i = res.warmup; i < n; ++i) {
    if (res.steps[i].iteration > 0) data_share.push_back(res.steps[i].data / res.steps[i].iteration);
    res.data += res.steps[i].data;
    d.push_back(res.steps[i].duration);
    busy.push_back(res.steps[i].gpu_busy);
    kernels.push_back(res.steps[i].kernels);
    if (res.steps[i].kernels > 0) kernel_us.push_back(1e6 * res.steps[i].kernel / res.steps[i].kernels);
    res.idle += res.steps[i].host_only;
    res.steady_time += res.steps[i].duration;
  }
  res.median = median(d);
  res.min = *std::min_element(d.begin(), d.end());
  res.max = *std::max_element(d.begin(), d.end());
  std::vector<double> dev;
  for (double x : d) dev.push_back(std::fabs(x - res.median));
  res.mad = median(dev);
  res.steady_gpu_busy = median(busy);
  res.steady_kernels = median(kernels);
  res.steady_kernel_us = median(kernel_us);
  res.steady_data_share = median(data_share);
  // Outliers: farther from the median than 3 scaled MADs and 10 % of it.
  for (std::size_t i = res.warmup; i < n; ++i) {
    const double off = std::fabs(res.steps[i].duration - res.median);
    res.steps[i].outlier = off > 3 * 1.4826 * res.mad && off > 0.1 * res.median;
  }
  res.startup = res.steps.front().start;
  const double end = static_cast<double>(defs_.trace_length) / hz;
  res.teardown = std::max(0.0, end - (res.steps.back().start + res.steps.back().duration));
  for (const auto& [where, ticks] : p.idle_by) res.idle_by_host.emplace_back(where, ticks / hz);
  std::sort(res.idle_by_host.begin(), res.idle_by_host.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (res.idle_by_host.size() > 5) res.idle_by_host.resize(5);
  if (overflow_) res.note = "more than 1,000,000 calls of step candidates: the later ones are left out";
  return res;
}

}  // namespace prof::steps
