// SPDX-License-Identifier: BSD-3-Clause
// THE interface adapters call. Adapters know nothing about buffers, OTF2 or the pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "measurement/compiler.hpp"
#include "measurement/definitions/regions.hpp"
#include "measurement/location.hpp"
#include "measurement/record.hpp"
#include "measurement/timer.hpp"

namespace prof {

enum class Phase : int { Pre = 0, Within = 1, Post = 2 };
/// Pre until init, Within while measuring, Post after finalize (and in a fork child).
extern std::atomic<int> g_phase PROF_HIDDEN;
/// Within and the compiler adapter is linked: the one flag the compiler hooks test.
extern bool g_compiler_hooks_on PROF_HIDDEN;
/// False between PROF_RECORDING_OFF() and PROF_RECORDING_ON().
extern bool g_recording PROF_HIDDEN;

/// The calling thread's location, creating it (and initialising measurement) on first use.
/// nullptr when measurement is off (after finalize, in a fork child, during init).
/// Any thread; allocates on first use only.
Location* current_location();

// Every function below: the caller holds `loc` (its own thread's location) with loc->busy set,
// so a signal handler cannot interleave; no locks on the fast path, no allocation except
// amortised chunk hand-out, errno preserved.

namespace detail {
PROF_COLD void grow_stack(Location* loc);
PROF_COLD void leave_repair(Location* loc, RegionId region, Timestamp t);
PROF_COLD Record* reserve_slow(Location* loc, Timestamp t, unsigned slots);
/// A new child of loc->current_node; nullptr when the profile has no memory left.
PROF_COLD ProfileNode* new_node(Location* loc, RegionId region);
/// The child of `parent` for `region` in `loc`'s profile tree, made when missing (visits 0,
/// time 0), outside the shadow stack: GPU activities, sampled frames. nullptr when the pool has
/// no memory left. Only the location's owner, or anyone once it stopped recording.
PROF_COLD ProfileNode* attach_child(Location* loc, ProfileNode* parent, RegionId region);
/// A call path's visits reached a power of two: throttles its region when they are many and
/// short (regions::consider_throttle).
PROF_COLD void visits_doubled(const ProfileNode* n);
/// A visit below PROF_PROFILING_MAX_CALLPATH_DEPTH: counted for loc->current_node (the call
/// path at the cutoff) in loc->too_deep, which it makes on first use (allocates; errno kept).
PROF_COLD void count_too_deep(Location* loc);
/// With metrics (loc->metric_count): reads them into the innermost frame's row and writes the
/// Enter record with the values in its payload slots (tracing).
/// False when the Enter record was lost for lack of memory.
PROF_COLD bool metrics_enter(Location* loc, Timestamp t, RegionId region);
/// With metrics: reads them, writes the Leave record with the values (tracing) and adds the
/// frame's deltas to `node`'s sums (when it has room for them). The frame was just popped.
/// `trace`: write the Leave (not when its Enter was lost).
PROF_COLD void metrics_leave(Location* loc, Timestamp t, RegionId region, ProfileNode* node, bool trace);

/// Writes a record without payload into reserved space and publishes it.
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void fill(Location* loc, Record* r, Timestamp t, RecordType type, std::uint32_t ref) {
  r->time = t;
  r->type = type;
  r->slots = 0;
  r->aux = 0;
  r->ref = ref;
  loc->trace.commit();
}

// Hot path: no locks, no allocation, no errno changes. False when the record was lost (no memory).
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline bool put(Location* loc, Timestamp t, RecordType type, std::uint32_t ref) {
  Record* r = loc->trace.try_reserve(0);
  if (PROF_UNLIKELY(!r)) {
    r = reserve_slow(loc, t, 0);
    if (!r) return false;
  }
  fill(loc, r, t, type, ref);
  return true;
}

/// A visit of `n` that took `d` ticks ends: its figures, and the call path goes back to its
/// parent. True when its visits reached a power of two (visits_doubled is due).
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline bool close_visit(Location* loc, ProfileNode* n, std::uint64_t d) {
  const std::uint64_t v = ++n->visits;
  n->incl_ticks += d;
  if (d < n->min_ticks) n->min_ticks = d;
  if (d > n->max_ticks) n->max_ticks = d;
  loc->current_node = n->parent;
  --loc->profile_depth;
  return (v & (v - 1)) == 0;
}
}  // namespace detail

/// Drops frames deeper than `cfa` (after longjmp or a caught exception), writing their Leaves.
void unwind_to(Location* loc, std::uintptr_t cfa);

/// As unwind_to, at the compiler entry hook of `region` called with `cfa` (its caller's stack
/// pointer), from that hook itself. Frames of functions called before by the entered function's
/// caller used the same stack, so their stack pointers may lie above `cfa` although a longjmp to
/// that caller left them: the bound is the entered function's own CFA, which a walk of the stack
/// gives when the hook is its own entry (not that of a function inlined into it). Rare: once per
/// longjmp, a few microseconds.
void unwind_to_entry(Location* loc, RegionId region, std::uintptr_t cfa);

/// The clocks of enter_at/leave_at: now (every hook), or a time taken earlier (events deferred
/// from a signal handler).
struct Now {
  PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE Timestamp operator()() const { return timer::now(); }
};
struct At {
  Timestamp t;
  PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE Timestamp operator()() const { return t; }
};

/// Enter of `region` at clock(); `cfa` is the caller's stack pointer (0 when unknown).
template <class Clock>
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void enter_at(Location* loc, RegionId region, std::uintptr_t cfa, Clock clock) {
  if (PROF_UNLIKELY(loc->unwind_check)) unwind_to(loc, cfa);
  if (PROF_UNLIKELY(loc->depth == loc->capacity)) detail::grow_stack(loc);
  bool rec = g_recording;
  Frame& f = loc->frames[loc->depth++];
  f.cfa = cfa;
  f.region = region;
  f.recorded = rec ? kFrameRecorded : 0;
  f.node = nullptr;
  if (rec && (loc->tracing | loc->profiling)) {
    Timestamp t = clock();
    if (PROF_UNLIKELY(loc->metric_count)) {
      if (!detail::metrics_enter(loc, t, region)) f.recorded = kEnterLost;
    } else if (loc->tracing && PROF_UNLIKELY(!detail::put(loc, t, RecordType::Enter, region))) {
      f.recorded = kEnterLost;
    }
    if (loc->profiling) {
      if (PROF_LIKELY(loc->profile_depth < loc->profile_max_depth)) {
        ProfileNode* child = child_of(loc->current_node, region);
        if (PROF_UNLIKELY(!child)) child = detail::new_node(loc, region);
        if (PROF_LIKELY(child != nullptr)) {
          f.node = child;
          f.enter_time = t;
          loc->current_node = child;
          ++loc->profile_depth;
        }
      } else {
        // Folded into the ancestor at the cutoff: its time is inside, its visit counted there.
        ++loc->profile_too_deep;
        if (PROF_LIKELY(loc->current_node == loc->too_deep_node)) ++*loc->too_deep_count;
        else detail::count_too_deep(loc);
      }
    }
  }
}

/// Enter of `region` now.
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void enter(Location* loc, RegionId region, std::uintptr_t cfa) {
  enter_at(loc, region, cfa, Now{});
}

namespace detail {
/// Closes the innermost frame at time t: its Leave record and its profile visit.
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void pop(Location* loc, Timestamp t) {
  Frame& f = loc->frames[--loc->depth];
  const std::uint32_t rec = f.recorded & kRecordedBits;
  if (!rec) return;
  if (PROF_UNLIKELY(loc->metric_count)) metrics_leave(loc, t, f.region, f.node, rec != kEnterLost);
  else if (loc->tracing && rec != kEnterLost) put(loc, t, RecordType::Leave, f.region);
  // At 1, 2, 4, ... visits: many and short? (regions.hpp, throttling)
  if (ProfileNode* n = f.node)
    if (PROF_UNLIKELY(close_visit(loc, n, t - f.enter_time))) visits_doubled(n);
}
}  // namespace detail

/// Leave of `region` at clock(): closes the innermost open frame of `region`, repairing frames above it.
template <class Clock>
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void leave_at(Location* loc, RegionId region, std::uintptr_t cfa, Clock clock) {
  if (PROF_UNLIKELY(loc->unwind_check)) unwind_to(loc, cfa);
  std::uint32_t d = loc->depth;
  if (PROF_LIKELY(d != 0 && loc->frames[d - 1].region == region)) {
    if (loc->frames[d - 1].recorded && (loc->tracing | loc->profiling)) detail::pop(loc, clock());
    else loc->depth = d - 1;
    return;
  }
  detail::leave_repair(loc, region, clock());
}

/// Leave of `region` now.
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void leave(Location* loc, RegionId region, std::uintptr_t cfa) {
  leave_at(loc, region, cfa, Now{});
}

namespace detail {
// The compiler hooks' common case, without a single call (so without saving registers): the
// TSC, recording on, no metrics, room in the trace chunk, the call path already in the profile.
// False, with nothing changed, when anything else applies: the hook then takes enter_at or
// leave_at, which handle every case. `w` is flags_word(loc) as the hook tested it.

PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline bool try_enter(Location* loc, RegionId region, std::uintptr_t cfa, std::uint64_t w) {
  const std::uint32_t d = loc->depth;
  if (PROF_UNLIKELY(d == loc->capacity || !g_recording || !timer::g_plain_tsc)) return false;
  ProfileNode* child = nullptr;
  if (w & kFlagProfiling) {
    if (PROF_UNLIKELY(loc->profile_depth >= loc->profile_max_depth)) return false;
    child = child_of(loc->current_node, region);
    if (PROF_UNLIKELY(!child)) return false;
  }
  Record* r = nullptr;
  if ((w & kFlagTracing) && PROF_UNLIKELY(!(r = loc->trace.try_reserve(0)))) return false;
  const Timestamp t = (w & (kFlagTracing | kFlagProfiling)) ? __rdtsc() : 0;  // neither: the shadow stack only
  Frame& f = loc->frames[d];
  loc->depth = d + 1;
  f.cfa = cfa;
  f.region = region;
  f.recorded = kFrameRecorded;
  f.node = child;
  if (r) fill(loc, r, t, RecordType::Enter, region);
  if (child) {
    f.enter_time = t;
    loc->current_node = child;
    ++loc->profile_depth;
  }
  return true;
}

/// As try_enter, for the Leave of the innermost frame. `*doubled`: the profile node whose visits
/// reached a power of two (visits_doubled is due), else unchanged.
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline bool try_leave(Location* loc, RegionId region, std::uint64_t w, ProfileNode** doubled) {
  const std::uint32_t d = loc->depth;
  if (PROF_UNLIKELY(d == 0 || !timer::g_plain_tsc)) return false;
  Frame& f = loc->frames[d - 1];
  if (PROF_UNLIKELY(f.region != region || f.recorded != kFrameRecorded)) return false;
  Record* r = nullptr;
  if ((w & kFlagTracing) && PROF_UNLIKELY(!(r = loc->trace.try_reserve(0)))) return false;
  const Timestamp t = (w & (kFlagTracing | kFlagProfiling)) ? __rdtsc() : 0;
  loc->depth = d - 1;
  if (r) fill(loc, r, t, RecordType::Leave, region);
  if (ProfileNode* n = f.node)
    if (PROF_UNLIKELY(close_visit(loc, n, t - f.enter_time))) *doubled = n;
  return true;
}

/// Replays the events signal handlers deferred while the thread was inside prof.
PROF_COLD void drain_deferred(Location* loc);
/// loc->deferred_more, mapped now when it was not yet (from a signal handler: mmap; errno kept);
/// nullptr when no memory.
PROF_COLD DeferredEvent* more_deferred_room(Location* loc);
}  // namespace detail

/// After a hook cleared loc->busy: events that signal handlers deferred meanwhile (rare).
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void after_hook(Location* loc) {
  if (PROF_UNLIKELY(loc->deferred_count.load(std::memory_order_relaxed) != 0)) detail::drain_deferred(loc);
}

/// In a hook that found its thread inside prof (a signal handler interrupted prof): keeps the
/// event for after_hook. False when there is no room (the caller counts it as dropped).
PROF_NO_INSTRUMENT inline bool defer(Location* loc, void (*replay)(Location*, const DeferredEvent&), std::uintptr_t key,
                                     std::uintptr_t cfa, bool is_enter) {
  DeferredEvent* more = loc->deferred_more.load(std::memory_order_relaxed);  // set once
  std::uint32_t n = loc->deferred_count.load(std::memory_order_relaxed);
  do {
    if (n >= kDeferredEvents && !more && !(more = detail::more_deferred_room(loc))) return false;
    if (n >= kDeferredEvents + kDeferredMore) return false;
  } while (!loc->deferred_count.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  // The slot is ours; nothing reads it before this handler returns (a drain runs only outside
  // signal handlers that interrupted prof, and a nested handler takes the next slot).
  (n < kDeferredEvents ? loc->deferred[n] : more[n - kDeferredEvents]) = DeferredEvent{replay, key, cfa, timer::now(), is_enter};
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return true;
}

/// A record with one payload value (thread and lock events, BufferFlush, ProgramEnd). False when
/// it was lost (no memory) or the location does not trace.
bool event(Location* loc, Timestamp t, RecordType type, std::uint32_t ref, std::uint64_t value);

/// A record with `n` payload slots and an aux value (MPI, GPU events). Tracing only; false as above.
bool event(Location* loc, Timestamp t, RecordType type, std::uint32_t ref, std::uint16_t aux, const Payload* p, unsigned n);

/// Profile only: a thread that runs part of another thread's work (an OpenMP team thread in a
/// parallel region) continues the other's call path: `path` (the other location's
/// current_node, read while it cannot change) is mirrored in `loc`'s tree (nodes made as needed,
/// without visits, so without time of their own) and becomes loc's current node. Returns the node to give restore_call_path.
/// Owner thread, busy set; nullptr when the profile is off, `path` is loc's own, or no memory.
ProfileNode* adopt_call_path(Location* loc, const ProfileNode* path);
/// Ends adopt_call_path: `saved` is current again, unless frames below `adopted` (the node
/// adopt_call_path made current) are still open. The profile writer gives nodes without visits
/// the time of what ran below them. Owner thread, busy set.
void restore_call_path(Location* loc, ProfileNode* saved, ProfileNode* adopted);

/// Closes every open frame of `loc` at time t (thread or process end); returns how many.
std::uint32_t close_all_frames(Location* loc, Timestamp t);

/// Switches recording for all threads; writes MeasurementOnOff on the caller's location.
void set_recording(bool on);

/// RAII: marks the calling thread as inside prof; `loc` is nullptr when no event may be written.
class InProf {
 public:
  /// `create`: make a location for a thread that has none yet (thread and user events);
  /// lock wrappers pass false, so prof's own internal locking never recurses into them.
  explicit InProf(bool create = true) {
    Location* l = create ? current_location() : tls_location;
    if (l && !l->busy && l->active) {
      l->busy = true;
      std::atomic_signal_fence(std::memory_order_seq_cst);
      loc = l;
    }
  }
  ~InProf() {
    if (loc) {
      std::atomic_signal_fence(std::memory_order_seq_cst);
      loc->busy = false;
      after_hook(loc);
    }
  }
  InProf(const InProf&) = delete;
  InProf& operator=(const InProf&) = delete;

  /// Around a call that may block (pthread_join, a lock, a condition wait): the thread is not
  /// inside prof meanwhile, so the end of the run does not wait for it (it waited up to a second
  /// per such thread, and stamped every open frame of the process after that wait); the open
  /// frame is closed at the stop's time instead. resume() is false, with loc cleared, when the
  /// run's end began meanwhile: the caller writes nothing more. Call only with loc set.
  void pause() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    loc->busy = false;
  }
  bool resume() {
    loc->busy = true;
    // Store busy, then load the phase (finalize: store the phase, barrier, load busy).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (g_phase.load(std::memory_order_relaxed) == static_cast<int>(Phase::Within)) return true;
    loc->busy = false;
    loc = nullptr;
    return false;
  }
  Location* loc = nullptr;
};

}  // namespace prof
