// SPDX-License-Identifier: BSD-3-Clause
// The OpenMP adapter's shared part: region definitions of constructs by source position, the
// events of the fork/join model, and the adapter's state. Two front ends feed it: gomp.cpp
// (GCC's libgomp, by wrapping its GOMP_* entry points) and ompt.cpp (LLVM's libomp, through
// the OpenMP tools interface). Only one is active in a process: OMPT, when the runtime starts
// it, switches the GOMP wrappers off (libomp exports GOMP_* too).
#pragma once

#include <atomic>
#include <cstdint>

#include "adapters/adapter.hpp"
#include "measurement/compiler.hpp"
#include "measurement/config/config.hpp"
#include "measurement/definitions/comms.hpp"
#include "measurement/events.hpp"

extern "C" PROF_API const prof_adapter prof_adapter_openmp;

namespace prof::openmp {

enum class Construct : std::uint8_t {
  Parallel, ImplicitBarrier, Barrier, Loop, Sections, Single, Master, Critical, Atomic, Ordered,
  Task, TaskCreate, Taskwait, Taskgroup, Workshare, Count
};

/// The region of construct `c` at a code address. `where` is a function entry (`entry`: the
/// compiler's outlined body, whose first line is the pragma's) or a return address (the line
/// of the runtime call the construct made). Cached per (construct, address) without locks; the
/// first use resolves the source position (locks, allocates).
RegionId region(Construct c, const void* where, bool entry);

/// The OpenMP lock API's functions, as regions (paradigm OpenMP, named as the functions).
enum class LockCall : std::uint8_t { Set, Unset, Test, SetNest, UnsetNest, TestNest, Count };
/// Defined on first use; any thread.
RegionId lock_region(LockCall call);

/// Bits of PROF_OPENMP_ENABLE once the adapter initialised, else 0.
extern std::uint64_t g_enabled;
/// The GOMP wrappers record (the adapter is on and OMPT did not start).
extern std::atomic<bool> g_gomp_on;
/// OMPT started (the runtime is libomp): the GOMP wrappers pass through for good.
extern std::atomic<bool> g_ompt_started;
/// ompt.cpp: its callbacks record from now on (adapter init, after OMPT started) or no more.
void ompt_adapter_ready();
void ompt_adapter_stop();
/// The process's thread team communicator (comms::Kind::OpenMP).
extern comms::CommId g_team_comm;

inline bool on(std::uint64_t feature) { return (g_enabled & feature) != 0; }

// Events on the calling thread's location (created on first use). Each sets the location's busy
// flag only around its own writing, so the program's code between them records as usual.
// False when nothing was recorded (measurement off, a signal handler inside prof, ...).
bool enter(RegionId r);
/// `at`: the time (0: now), not before the location's last event.
void leave(RegionId r, Timestamp at = 0);
/// ThreadFork on the encountering thread (`threads`: the team size asked for, 0 = default).
void fork(std::uint32_t threads);
void join();
/// ThreadTeamBegin on a team thread; the first names its location "OpenMP thread <index>"
/// (its creation order in the process; the encountering thread keeps its name). `path`: the
/// encountering thread's call path at the fork (call_path()), which the profile continues on
/// this thread, so a parallel region's threads share its call paths.
void team_begin(const void* path);
/// The calling thread's current call path (profile), for team_begin on the others.
const void* call_path();
void team_end(Timestamp at = 0);
// The barrier at the end of a parallel region, on a team thread whose runtime does not say when
// it ended (libgomp: never; libomp: only when the thread is released for its next region). It
// ended when the team joined: the encountering thread notes that time (note_join), the team
// thread dates its late end by it, and threads still waiting at the end of measurement close
// their frames then (Location::close_at).
/// The encountering thread: `team` (a key the team shares) joined at `t`.
void note_join(const void* team, Timestamp t);
/// The calling thread entered its end barrier (its region is open) of `team`, now.
void end_barrier_begins(const void* team);
bool in_end_barrier();
/// The calling thread's end barrier is over: the time it ended (the team's join, when that came
/// after the barrier began and before now; else 0: now). late_end() gives it again, once.
Timestamp end_barrier_ends();
Timestamp late_end();
/// At finalize: the threads still in their end barrier close their frames at their team's join.
void close_waiting_threads();
/// The calling thread ends (its location `loc`): the same for it, if it is in its end barrier.
void thread_ends(Location* loc);

/// A thread's open construct regions that span several runtime calls or callbacks (entered at
/// one, left at another): what each begin entered, so the matching end leaves it, also where the
/// end does not say which (a worker's implicit task end under OMPT, GOMP_critical_end).
class RegionStack {
 public:
  void push(RegionId region) {
    const bool entered = enter(region);
    if (n_ < kMax) {
      r_[n_] = region;
      in_[n_++] = entered;
    } else if (entered) {
      leave(region);  // deeper than kMax: left at once rather than never
    }
  }
  /// `at`: as for leave().
  void pop(Timestamp at = 0) {
    if (n_ == 0) return;
    --n_;
    if (in_[n_]) leave(r_[n_], at);
  }

 private:
  static constexpr int kMax = 32;
  RegionId r_[kMax];
  bool in_[kMax];
  int n_ = 0;
};

/// Lock events (paradigm OpenMP) for the lock at `addr`.
void acquired(const void* addr);
void releasing(const void* addr);

}  // namespace prof::openmp
