// SPDX-License-Identifier: BSD-3-Clause
// prof-report's findings: what is wrong in a run, how much it costs, where, and what to try.
// This first set reads the trace for MPI wait states as Scalasca defines them (late sender, late
// receiver, wait at N x N collectives and at barriers), and the measurement's own disturbance
// (buffer flushes); the profile gives load imbalance. Thresholds and definitions: docs/REPORT.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/otf2_reader.hpp"
#include "tools/steps.hpp"

namespace prof::findings {

struct Finding {
  std::string kind;        ///< "late_sender", "late_receiver", "wait_nxn", "wait_barrier", "imbalance",
                           ///< "omp_barrier", "gpu_idle", "flushes"
  std::string title;       ///< one line: what happens
  double seconds = 0;      ///< time lost, summed over the locations that lost it
  double share = 0;        ///< of the run's time summed over all locations (0..1)
  std::string callpath;    ///< where the time is lost ("main > exchange > MPI_Recv"); "" when none
  std::vector<std::pair<std::uint32_t, double>> ranks;  ///< the ranks that lost it, most first
  std::string blame;       ///< who they wait for, when known ("rank 1 sends late")
  std::string suggestion;  ///< what to try
  std::uint64_t instances = 0;  ///< waits (messages, collective calls) counted
};

/// Findings are listed from this share of the run's time on (docs/REPORT.md).
constexpr double kMinShare = 0.05;

/// Collects the MPI wait states and the flushes from a trace's events (an EventSink: feed it with
/// otf2::Reader::read_events, beside other sinks through Tee).
class WaitStates : public otf2::EventSink {
 public:
  explicit WaitStates(const otf2::Definitions& defs);
  void enter(std::uint64_t l, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint64_t l, std::uint64_t t, std::uint32_t region) override;
  void message(std::uint64_t l, std::uint64_t t, bool send, std::uint32_t peer, std::uint32_t comm, std::uint32_t tag,
               std::uint64_t bytes) override;
  void collective_end(std::uint64_t l, std::uint64_t t, std::uint8_t op, std::uint32_t comm, std::uint32_t root,
                      std::uint64_t sent, std::uint64_t received) override;
  void buffer_flush(std::uint64_t l, std::uint64_t t, std::uint64_t stop) override;
  /// The findings, given the run's time summed over all locations (seconds), most costly first;
  /// only those of at least kMinShare of it.
  std::vector<Finding> findings(double total_seconds);

 private:
  struct Frame {
    std::uint32_t region;
    std::uint64_t enter;
    std::int64_t op = -1;  // the send or collective call made inside it (its index), for its exit time
    bool collective = false;
  };
  struct Loc {
    std::vector<Frame> stack;
    std::uint32_t rank = otf2::kUndefined32;
  };
  struct Send {
    std::uint64_t enter = 0, exit = 0;
    std::uint32_t rank = 0, path = 0;
    bool blocking = false;
  };
  struct Recv {
    std::uint64_t enter = 0, at = 0;  // its region's enter, the receive event
    std::uint32_t rank = 0, path = 0;
    std::size_t send = 0;
    bool blocking = false;  // it waits for its message (not MPI_Test)
    bool call = false;      // a receive call (MPI_Recv, MPI_Sendrecv): the receiver's start is known
  };
  struct Queue {  // per (communicator, sender, receiver, tag): MPI matches in order
    std::vector<std::size_t> sends, recvs;  // waiting for their partner, in order
    std::size_t send_head = 0, recv_head = 0;
  };
  void match(std::size_t send, Recv r);
  struct Call {
    std::uint64_t enter = 0, exit = 0;
    std::uint32_t rank = 0, path = 0;
    std::uint8_t op = 0;
  };
  Loc* loc(std::uint64_t l);
  std::uint32_t path_of(const Loc& s);
  void add(const std::string& kind, std::uint32_t path, std::uint32_t rank, double seconds, std::uint32_t blamed);
  double secs(std::uint64_t ticks) const { return static_cast<double>(ticks) / static_cast<double>(res_); }

  const otf2::Definitions& defs_;
  otf2::MpiRanks ranks_;
  std::uint64_t res_ = 1;
  std::unordered_map<std::uint64_t, Loc> locs_;
  std::vector<std::string> paths_;
  std::map<std::string, std::uint32_t> path_ids_;
  std::vector<Send> sends_;
  std::vector<Recv> recvs_;
  std::vector<Recv> waiting_;  // receives whose send event comes later in the trace
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, Queue> queues_;
  std::vector<Call> calls_;
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t> call_seq_;  // (location, comm) -> calls so far
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<std::size_t>> instances_;  // (comm, seq) -> calls
  double flush_seconds_ = 0;
  std::uint64_t flushes_ = 0;
  std::map<std::uint32_t, double> flush_by_rank_;
  // (kind, path) -> per waiting rank seconds, per blamed rank seconds, count
  struct Tally {
    std::map<std::uint32_t, double> by_rank, by_blamed;
    double seconds = 0;
    std::uint64_t count = 0;
  };
  std::map<std::pair<std::string, std::uint32_t>, Tally> tally_;
};

/// Load imbalance from the profile: a region whose exclusive time per location has a max/mean of
/// at least 1.25 over 2 or more locations; time lost = n * max - sum (what the others would wait
/// for at the next synchronisation).
Finding imbalance(const std::string& region, unsigned locations, double max, double mean, double total_seconds);

/// OpenMP barrier wait from the profile: the time threads spend in a barrier (`!$omp barrier`,
/// `!$omp implicit barrier`) is time they wait for the slowest thread of the team.
Finding barrier_wait(const std::string& region, unsigned threads, double seconds, double max, double mean, double total_seconds);

/// From the steps: GPU idle inside the steady-state steps (steps::kMinIdleShare), called
/// launch-bound when many short kernels have longer gaps between them, blamed on what the host
/// did meanwhile; and data loading (steps::kMinDataShare of the iterations).
std::vector<Finding> from_steps(const steps::Result& st, double total_seconds);

/// Forwards every event to two sinks (the report's scan and the findings).
class Tee : public otf2::EventSink {
 public:
  Tee(otf2::EventSink& a, otf2::EventSink& b) : a_(a), b_(b) {}
  void enter(std::uint64_t l, std::uint64_t t, std::uint32_t r) override { a_.enter(l, t, r), b_.enter(l, t, r); }
  void leave(std::uint64_t l, std::uint64_t t, std::uint32_t r) override { a_.leave(l, t, r), b_.leave(l, t, r); }
  void metric(std::uint64_t l, std::uint64_t t, std::uint32_t m, unsigned n, const std::uint8_t* ty,
              const std::uint64_t* v) override {
    a_.metric(l, t, m, n, ty, v), b_.metric(l, t, m, n, ty, v);
  }
  void message(std::uint64_t l, std::uint64_t t, bool s, std::uint32_t p, std::uint32_t c, std::uint32_t tag,
               std::uint64_t bytes) override {
    a_.message(l, t, s, p, c, tag, bytes), b_.message(l, t, s, p, c, tag, bytes);
  }
  void collective_end(std::uint64_t l, std::uint64_t t, std::uint8_t op, std::uint32_t c, std::uint32_t root,
                      std::uint64_t s, std::uint64_t r) override {
    a_.collective_end(l, t, op, c, root, s, r), b_.collective_end(l, t, op, c, root, s, r);
  }
  void rma(std::uint64_t l, std::uint64_t t, bool get, std::uint32_t remote, std::uint64_t bytes) override {
    a_.rma(l, t, get, remote, bytes), b_.rma(l, t, get, remote, bytes);
  }
  void sample(std::uint64_t l, std::uint64_t t, std::uint32_t c) override { a_.sample(l, t, c), b_.sample(l, t, c); }
  void correlation(std::uint64_t l, std::uint64_t t, std::uint32_t id) override {
    a_.correlation(l, t, id), b_.correlation(l, t, id);
  }
  void buffer_flush(std::uint64_t l, std::uint64_t t, std::uint64_t stop) override {
    a_.buffer_flush(l, t, stop), b_.buffer_flush(l, t, stop);
  }
  void measurement_on_off(std::uint64_t l, std::uint64_t t, bool on) override {
    a_.measurement_on_off(l, t, on), b_.measurement_on_off(l, t, on);
  }
  void program_begin(std::uint64_t l, std::uint64_t t, const std::string& name, const std::vector<std::string>& args) override {
    a_.program_begin(l, t, name, args), b_.program_begin(l, t, name, args);
  }
  bool keep_going() override { return a_.keep_going() && b_.keep_going(); }

 private:
  otf2::EventSink& a_;
  otf2::EventSink& b_;
};

}  // namespace prof::findings
