// SPDX-License-Identifier: BSD-3-Clause
// prof-report's steps: the iterations of a run (a training step, a time step), found in the trace
// as the calls of one region: the one the user names (PROF_STEP in prof.cfg, or --step), else the
// user-API or NVTX range that repeats and covers most time. Per step: duration, GPU busy share
// (any stream of the step's process busy), kernel, copy and memset time, host time with no GPU
// work, MPI and data-loading time; warm-up steps told apart from the steady state, whose median
// and spread are given, and outliers flagged. Rules: docs/REPORT.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/otf2_reader.hpp"

namespace prof::steps {

/// A "GPU idle inside the steps" finding from this share of the steady-state step time on.
constexpr double kMinIdleShare = 0.2;
/// A "data loading" finding from this median share of the steady-state iterations on.
constexpr double kMinDataShare = 0.2;
/// Launch-bound steps: at least this many kernels per step, averaging less than kShortKernelUs.
constexpr double kManyKernels = 10, kShortKernelUs = 50;

struct Step {
  double start = 0, duration = 0;  ///< s; start from the trace's beginning
  bool warmup = false, outlier = false;
  double gpu_busy = 0;             ///< share of the step with some GPU stream of its process busy
  double kernel = 0, copy = 0, memset = 0;  ///< s of GPU work, summed over the process's streams
  double kernels = 0;              ///< kernels that ended inside the step
  double host_only = 0;            ///< s with no GPU work (only with GPU streams)
  double mpi = 0;                  ///< s of the step's thread in MPI
  double iteration = 0;            ///< s from this step's start to the next one's (the last: its duration)
  double data = 0;                 ///< s of the step's thread in data loading over the iteration (a DataLoader's
                                   ///< __next__ runs between the step calls of `for batch in loader: step(batch)`)
};

struct Result {
  std::string region;              ///< "" when no steps were found
  std::string source;              ///< how the region was chosen
  std::string note;                ///< why there are none, or what to know
  std::uint32_t process = 0;       ///< the process (rank) whose steps these are
  std::vector<Step> steps;
  unsigned warmup = 0;
  double median = 0, min = 0, max = 0, mad = 0;  ///< steady-state step time, s
  double startup = 0, teardown = 0;              ///< before the first step, after the last
  bool gpu = false;                ///< the process has GPU streams
  double steady_gpu_busy = 0;      ///< median over the steady-state steps
  double steady_kernels = 0;       ///< median kernels per steady-state step
  double steady_kernel_us = 0;     ///< median of a steady-state step's mean kernel time, us
  double steady_data_share = 0;    ///< median share of data loading in the steady-state iterations
  double data = 0;                 ///< s of data loading in all steady-state iterations
  double idle = 0;                 ///< s of GPU idle inside steady-state steps
  double steady_time = 0;          ///< s of all steady-state steps
  std::vector<std::pair<std::string, double>> idle_by_host;  ///< what the host did while the GPU idled inside steps
};

class StepScan : public otf2::EventSink {
 public:
  /// `step`: the step region's name ("" finds one).
  StepScan(const otf2::Definitions& defs, const std::string& step);
  void enter(std::uint64_t l, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint64_t l, std::uint64_t t, std::uint32_t region) override;
  Result result();

 private:
  enum Kind { kKernel, kCopy, kMemset, kKinds };
  struct Snap {
    double any = 0, kind[kKinds] = {0, 0, 0}, mpi = 0, data = 0, kernels = 0;
  };
  struct Instance {
    std::uint64_t begin = 0, end = 0;
    Snap a, b;
  };
  struct Proc {
    int busy = 0;  // streams running an activity now
    std::uint64_t busy_since = 0;
    double any = 0;  // ticks with some stream busy
    double kind[kKinds] = {0, 0, 0};
    int running[kKinds] = {0, 0, 0};
    double kernels = 0;  // ended
    double since_sum[kKinds] = {0, 0, 0};
    std::uint64_t host = otf2::kUndefined64;  // its first CPU thread: what the host does
    int open_steps = 0;  // step candidates open in it now
    std::uint64_t last = 0;
    std::map<std::string, double> idle_by;  // host region -> ticks of GPU idle inside steps
    bool streams = false;
  };
  struct Loc {
    std::uint32_t process = otf2::kUndefined32;
    otf2::LocationKind kind = otf2::LocationKind::Other;
    std::vector<std::uint32_t> stack;
    int mpi_depth = 0, data_depth = 0;
    std::uint64_t mpi_since = 0, data_since = 0;
    double mpi = 0, data = 0;
    int activity = -1;  // a stream's running activity kind
    std::uint64_t act_since = 0;  // and its start
    std::map<std::uint32_t, int> depth;  // candidate region -> nesting on this location
  };
  Snap snap(const Proc& p, const Loc& s, std::uint64_t t) const;
  void idle_until(Proc& p, std::uint64_t t);
  std::string host_region(const Proc& p) const;
  const otf2::Definitions& defs_;
  std::string step_;
  std::vector<char> candidate_;  // by region ref
  std::vector<char> mpi_, data_;  // by region ref
  std::vector<signed char> gpu_kind_;
  std::unordered_map<std::uint64_t, Loc> locs_;
  std::vector<Proc> procs_;
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::vector<Instance>> instances_;
  std::map<std::pair<std::uint64_t, std::uint32_t>, Instance> open_;
  std::size_t stored_ = 0;
  bool overflow_ = false;
};

}  // namespace prof::steps
