// SPDX-License-Identifier: BSD-3-Clause
#include "tools/findings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace prof::findings {

namespace {

// OTF2_CollectiveOp: barrier, and the N x N ones (every rank sends to and receives from every rank).
constexpr std::uint8_t kBarrier = 0;
bool is_nxn(std::uint8_t op) {
  return op == 6 || op == 7 || op == 8 || op == 9 || op == 10 || op == 11 || op == 13 || op == 16;
}

bool one_of(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

// The calls in which a receive waits for its message (a receive completed inside MPI_Test waits
// for nothing).
bool blocking_receive(const std::string& name) {
  return one_of(name, {"MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Wait", "MPI_Waitall", "MPI_Waitany",
                       "MPI_Waitsome", "MPI_Mrecv"});
}

std::string seconds_text(double s) {
  char b[32];
  if (s >= 1) std::snprintf(b, sizeof b, "%.2f s", s);
  else if (s >= 1e-3) std::snprintf(b, sizeof b, "%.1f ms", s * 1e3);
  else std::snprintf(b, sizeof b, "%.1f us", s * 1e6);
  return b;
}

/// (rank, seconds) pairs, most seconds first.
std::vector<std::pair<std::uint32_t, double>> most_first(const std::map<std::uint32_t, double>& by) {
  std::vector<std::pair<std::uint32_t, double>> v(by.begin(), by.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

std::string ranks_text(const std::map<std::uint32_t, double>& by, double total, unsigned top) {
  const std::vector<std::pair<std::uint32_t, double>> v = most_first(by);
  std::string s;
  for (unsigned i = 0; i < v.size() && i < top; ++i) {
    char b[96];
    std::snprintf(b, sizeof b, "%srank %u (%.0f %%)", i ? ", " : "", v[i].first, total > 0 ? 100 * v[i].second / total : 0.0);
    s += b;
  }
  if (v.size() > top) s += ", " + std::to_string(v.size() - top) + " more";
  return s;
}

// MPI_Allreduce -> MPI_Iallreduce
std::string nonblocking(const std::string& call) {
  if (call.size() < 5 || call.compare(0, 4, "MPI_") != 0) return "its non-blocking form";
  return "MPI_I" + std::string(1, static_cast<char>(std::tolower(static_cast<unsigned char>(call[4])))) + call.substr(5);
}

}  // namespace

WaitStates::WaitStates(const otf2::Definitions& defs) : defs_(defs), ranks_(defs), res_(std::max<std::uint64_t>(defs.timer_resolution, 1)) {}

WaitStates::Loc* WaitStates::loc(std::uint64_t l) {
  auto it = locs_.find(l);
  if (it != locs_.end()) return &it->second;
  Loc& s = locs_[l];
  s.rank = ranks_.world_rank(l);
  return &s;
}

std::uint32_t WaitStates::path_of(const Loc& s) {
  // The innermost frames (the MPI call last); deep paths keep their last 6.
  constexpr std::size_t kDepth = 6;
  std::string p;
  const std::size_t from = s.stack.size() > kDepth ? s.stack.size() - kDepth : 0;
  if (from) p = "... > ";
  for (std::size_t i = from; i < s.stack.size(); ++i) {
    auto r = defs_.regions.find(s.stack[i].region);
    p += (i > from ? " > " : "") + (r == defs_.regions.end() ? "region " + std::to_string(s.stack[i].region) : r->second.name);
  }
  auto [it, fresh] = path_ids_.emplace(p, static_cast<std::uint32_t>(paths_.size()));
  if (fresh) paths_.push_back(p);
  return it->second;
}

void WaitStates::add(const std::string& kind, std::uint32_t path, std::uint32_t rank, double seconds, std::uint32_t blamed) {
  if (seconds <= 0) return;
  Tally& t = tally_[{kind, path}];
  t.seconds += seconds;
  t.by_rank[rank] += seconds;
  t.by_blamed[blamed] += seconds;
  ++t.count;
}

void WaitStates::enter(std::uint64_t l, std::uint64_t t, std::uint32_t region) { loc(l)->stack.push_back({region, t}); }

void WaitStates::leave(std::uint64_t l, std::uint64_t t, std::uint32_t) {
  Loc* s = loc(l);
  if (s->stack.empty()) return;
  const Frame f = s->stack.back();
  s->stack.pop_back();
  if (f.op < 0) return;
  if (f.collective) calls_[static_cast<std::size_t>(f.op)].exit = t;
  else sends_[static_cast<std::size_t>(f.op)].exit = t;
}

void WaitStates::message(std::uint64_t l, std::uint64_t t, bool send, std::uint32_t peer, std::uint32_t comm, std::uint32_t tag,
                         std::uint64_t) {
  Loc* s = loc(l);
  if (s->stack.empty() || s->rank == otf2::kUndefined32) return;
  const std::uint32_t me = ranks_.rank_in(comm, s->rank);
  if (me == otf2::kUndefined32) return;
  Frame& f = s->stack.back();
  auto r = defs_.regions.find(f.region);
  const std::string name = r == defs_.regions.end() ? "" : r->second.name;
  // Matched in order per (communicator, sender, receiver, tag), whichever of the two events
  // comes first in the trace (a send may be stamped after its receive completed).
  if (send) {
    f.op = static_cast<std::int64_t>(sends_.size());
    f.collective = false;
    sends_.push_back({f.enter, 0, s->rank, path_of(*s), one_of(name, {"MPI_Send", "MPI_Ssend"})});
    Queue& q = queues_[{comm, me, peer, tag}];
    if (q.recv_head < q.recvs.size()) match(sends_.size() - 1, waiting_[q.recvs[q.recv_head++]]);
    else q.sends.push_back(sends_.size() - 1);
    return;
  }
  Recv rv{f.enter, t, s->rank, path_of(*s), 0, blocking_receive(name),
          one_of(name, {"MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace"})};
  Queue& q = queues_[{comm, peer, me, tag}];
  if (q.send_head < q.sends.size()) {
    match(q.sends[q.send_head++], rv);
  } else {
    q.recvs.push_back(waiting_.size());
    waiting_.push_back(rv);
  }
}

void WaitStates::match(std::size_t si, Recv rv) {
  const Send& sd = sends_[si];
  // Late sender: the receive waited from its call's start until the sender's call began.
  if (rv.blocking && sd.enter > rv.enter) add("late_sender", rv.path, rv.rank, secs(std::min(sd.enter, rv.at) - rv.enter), sd.rank);
  rv.send = si;
  if (rv.call) recvs_.push_back(rv);  // late receiver: decided once the send's exit is known
}

void WaitStates::collective_end(std::uint64_t l, std::uint64_t, std::uint8_t op, std::uint32_t comm, std::uint32_t,
                                std::uint64_t, std::uint64_t) {
  Loc* s = loc(l);
  if (s->stack.empty() || s->rank == otf2::kUndefined32) return;
  Frame& f = s->stack.back();
  const std::uint64_t seq = call_seq_[{l, comm}]++;
  f.op = static_cast<std::int64_t>(calls_.size());
  f.collective = true;
  calls_.push_back({f.enter, 0, s->rank, path_of(*s), op});
  instances_[{comm, seq}].push_back(calls_.size() - 1);
}

void WaitStates::buffer_flush(std::uint64_t l, std::uint64_t t, std::uint64_t stop) {
  if (stop <= t) return;
  const double d = secs(stop - t);
  flush_seconds_ += d;
  ++flushes_;
  const std::uint32_t rank = loc(l)->rank;
  flush_by_rank_[rank == otf2::kUndefined32 ? 0 : rank] += d;
}

std::vector<Finding> WaitStates::findings(double total) {
  // Late receiver: a blocking send that stayed in its call until the receive was posted.
  for (const Recv& rv : recvs_) {
    const Send& sd = sends_[rv.send];
    if (sd.blocking && rv.enter > sd.enter && sd.exit > rv.enter) add("late_receiver", sd.path, sd.rank, secs(rv.enter - sd.enter), rv.rank);
  }
  // Collectives: every member waits from its call's start for the last member to arrive.
  for (const auto& [key, members] : instances_) {
    if (members.size() < 2) continue;
    const std::uint8_t op = calls_[members.front()].op;
    const char* kind = op == kBarrier ? "wait_barrier" : is_nxn(op) ? "wait_nxn" : nullptr;
    if (!kind) continue;
    std::size_t last = members.front();
    for (std::size_t m : members)
      if (calls_[m].enter > calls_[last].enter) last = m;
    const std::uint64_t arrive = calls_[last].enter;
    for (std::size_t m : members) {
      const Call& c = calls_[m];
      if (arrive <= c.enter) continue;
      const std::uint64_t until = c.exit && c.exit < arrive ? c.exit : arrive;
      add(kind, c.path, c.rank, secs(until - c.enter), calls_[last].rank);
    }
  }
  std::vector<Finding> out;
  for (const auto& [key, t] : tally_) {
    const auto& [kind, path] = key;
    if (total <= 0 || t.seconds / total < kMinShare || t.seconds < 1e-3) continue;
    Finding f;
    f.kind = kind;
    f.seconds = t.seconds;
    f.share = t.seconds / total;
    f.callpath = paths_[path];
    f.instances = t.count;
    f.ranks = most_first(t.by_rank);
    const std::string call = f.callpath.substr(f.callpath.rfind("> ") == std::string::npos ? 0 : f.callpath.rfind("> ") + 2);
    if (kind == "late_sender") {
      f.title = "Late sender: " + call + " waits for messages sent late (" + std::to_string(t.count) + " receives)";
      f.blame = "sent late by " + ranks_text(t.by_blamed, t.seconds, 3);
      f.suggestion = "send earlier on the sending ranks (move work after the send, or balance the work before it); or post "
                     "the receive early with MPI_Irecv and do independent work before MPI_Wait";
    } else if (kind == "late_receiver") {
      f.title = "Late receiver: " + call + " blocks until the receiver posts its receive (" + std::to_string(t.count) + " sends)";
      f.blame = "received late by " + ranks_text(t.by_blamed, t.seconds, 3);
      f.suggestion = "post the receives earlier (MPI_Irecv before the work), or send with MPI_Isend; large messages go by "
                     "rendezvous and wait for the receive";
    } else if (kind == "wait_nxn") {
      f.title = "Wait at N x N collective: ranks enter " + call + " early and wait for the last one (" + std::to_string(t.count) +
                " waits)";
      f.blame = "the last to arrive: " + ranks_text(t.by_blamed, t.seconds, 3);
      f.suggestion = "balance the work before " + call + " (the ranks that arrive last do more); a non-blocking collective "
                     "(" + nonblocking(call) + ") can overlap the wait with independent work";
    } else {
      f.title = "Wait at barrier: ranks wait in " + call + " for the last one (" + std::to_string(t.count) + " waits)";
      f.blame = "the last to arrive: " + ranks_text(t.by_blamed, t.seconds, 3);
      f.suggestion = "balance the work before the barrier, or drop the barrier where it only orders output or timing";
    }
    out.push_back(std::move(f));
  }
  // The measurement's own stops: a flush halts its thread (and, at the next synchronisation, the others).
  if (total > 0 && flush_seconds_ / total >= 0.01) {
    Finding f;
    f.kind = "flushes";
    f.seconds = flush_seconds_;
    f.share = flush_seconds_ / total;
    f.instances = flushes_;
    f.ranks = most_first(flush_by_rank_);
    f.title = "The measurement disturbed the run: " + std::to_string(flushes_) + " trace buffer flushes stopped threads for " +
              seconds_text(flush_seconds_);
    f.suggestion = "raise PROF_TOTAL_MEMORY (prof-score estimates the trace's size) or filter small, frequent functions "
                   "(PROF_FILTERING_FILE), so that the trace fits in memory";
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return a.seconds > b.seconds; });
  return out;
}

Finding imbalance(const std::string& region, unsigned locations, double max, double mean, double total) {
  Finding f;
  if (locations < 2 || mean <= 0 || max / mean < 1.25 || total <= 0) return f;
  f.seconds = locations * (max - mean);
  f.share = f.seconds / total;
  if (f.share < kMinShare) return Finding{};
  f.kind = "imbalance";
  char b[64];
  std::snprintf(b, sizeof b, "%.2f", max / mean);
  f.title = "Load imbalance in " + region + ": the busiest of " + std::to_string(locations) + " locations takes " + b +
            " x the mean (" + seconds_text(max) + " against " + seconds_text(mean) + ")";
  f.callpath = region;
  f.suggestion = "spread what " + region + " does more evenly (the decomposition over ranks, or dynamic scheduling over "
                 "threads): the others wait for the busiest at the next synchronisation";
  return f;
}

Finding barrier_wait(const std::string& region, unsigned threads, double seconds, double max, double mean, double total) {
  Finding f;
  if (total <= 0 || seconds / total < kMinShare) return f;
  f.kind = "omp_barrier";
  f.seconds = seconds;
  f.share = seconds / total;
  f.title = "Wait at OpenMP barrier: " + std::to_string(threads) + " threads wait in " + region + " for the slowest of the team";
  f.callpath = region;
  if (mean > 0)
    f.blame = "the waits differ between the threads (max " + seconds_text(max) + ", mean " + seconds_text(mean) +
              "): the work before the barrier is shared unevenly";
  f.suggestion = "share the work before the barrier evenly: schedule(dynamic) or schedule(guided) for loops whose "
                 "iterations differ in cost, smaller chunks; nowait where the barrier is not needed";
  return f;
}

std::vector<Finding> from_steps(const steps::Result& st, double total) {
  std::vector<Finding> out;
  char b[200];
  if (st.gpu && st.steady_time > 0 && st.idle / st.steady_time >= steps::kMinIdleShare) {
    Finding f;
    f.kind = "gpu_idle";
    f.seconds = st.idle;
    f.share = total > 0 ? st.idle / total : 0;
    std::snprintf(b, sizeof b, "GPU idle inside the steps: rank %u's GPU had no work for %.0f %% of the steady-state step time",
                  st.process, 100 * st.idle / st.steady_time);
    f.title = b;
    f.ranks.emplace_back(st.process, st.idle);
    if (!st.idle_by_host.empty()) f.callpath = st.idle_by_host.front().first;
    double all = 0;
    for (const auto& [where, secs] : st.idle_by_host) all += secs;
    for (std::size_t i = 0; i < st.idle_by_host.size() && i < 3; ++i) {
      std::snprintf(b, sizeof b, "%s%s (%.0f %%)", i ? ", " : "meanwhile the host was in ", st.idle_by_host[i].first.c_str(),
                    all > 0 ? 100 * st.idle_by_host[i].second / all : 0.0);
      f.blame += b;
    }
    f.suggestion = "keep the GPU fed: move host work out of the step or overlap it (DataLoader workers and pin_memory, "
                   "non_blocking copies, no .item()/.cpu() synchronisation per step); for many small kernels, CUDA graphs or "
                   "torch.compile; larger batches";
    // Launch-bound: many short kernels with longer gaps between them: the host's launches, not
    // its other work, set the pace.
    const double steady_steps = static_cast<double>(st.steps.size() - st.warmup);
    const double gap_us = st.steady_kernels > 0 && steady_steps > 0 ? 1e6 * st.idle / steady_steps / st.steady_kernels : 0;
    if (st.steady_kernels >= steps::kManyKernels && st.steady_kernel_us < steps::kShortKernelUs && gap_us > st.steady_kernel_us) {
      f.kind = "launch_bound";
      std::snprintf(b, sizeof b, "Launch-bound steps: %.0f kernels per step of %.1f us on average, with %.1f us between them",
                    st.steady_kernels, st.steady_kernel_us, gap_us);
      f.title = std::string(b) + "; " + f.title.substr(std::strlen("GPU idle inside the steps: "));
      f.suggestion = "launch fewer, larger kernels: capture the step in a CUDA graph (torch.cuda.graphs, torch.compile with "
                     "mode=\"reduce-overhead\"), fuse operations (torch.compile), or raise the batch size";
    }
    out.push_back(std::move(f));
  }
  // Data loading: the step's thread inside a DataLoader's __next__ for much of each iteration.
  if (!st.region.empty() && st.steady_data_share >= steps::kMinDataShare) {
    Finding f;
    f.kind = "data_loading";
    f.seconds = st.data;
    f.share = total > 0 ? st.data / total : 0;
    std::snprintf(b, sizeof b, "Data loading: rank %u's step thread waits for the next batch for %.0f %% of each steady-state "
                  "iteration (median)", st.process, 100 * st.steady_data_share);
    f.title = b;
    f.ranks.emplace_back(st.process, st.data);
    f.callpath = "DataLoader __next__, between the calls of " + st.region;
    f.suggestion = "load ahead of the step: DataLoader(num_workers=N, pin_memory=True, prefetch_factor, "
                   "persistent_workers=True), cheaper transforms, data on a fast local disk or in memory";
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace prof::findings
