// SPDX-License-Identifier: BSD-3-Clause
// Location: one per thread. Holds the trace buffer, the region cache and the shadow stack.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "measurement/buffer.hpp"
#include "measurement/compiler.hpp"
#include "measurement/profiling/call_tree.hpp"
#include "measurement/record.hpp"

namespace prof {

constexpr RegionId kNoRegion = 0xffffffffu;

/// Per-thread map from hook address to region id: open addressing, linear probing. Written
/// and read only by its thread. A miss goes out of line to the process-wide resolver.
class RegionCache {
 public:
  struct Slot {
    const void* key;
    RegionId value;
  };
  // Hot path: no locks, no allocation, no errno changes.
  RegionId find(const void* key) const {
    std::uint32_t i = index(key);
    for (;;) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.value;
      if (!s.key) return kNoRegion;
      i = (i + 1) & mask_;
    }
  }
  /// Out of line; grows at 50 % load.
  void insert(const void* key, RegionId value);
  /// Forgets every entry (after dlclose: an address may now hold other code). Owner thread.
  void clear();
  ~RegionCache();

 private:
  std::uint32_t index(const void* key) const {
    return static_cast<std::uint32_t>((reinterpret_cast<std::uintptr_t>(key) * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  static Slot kEmpty[1];
  Slot* slots_ = kEmpty;
  std::uint32_t mask_ = 0;
  std::uint32_t shift_ = 63;
  std::uint32_t size_ = 0;
};

/// One open frame of the shadow call stack.
struct Frame {
  std::uintptr_t cfa;   ///< caller's stack pointer at the hook: deeper frames have smaller values
  RegionId region;
  /// Bits 0-1 (kRecordedBits): its Enter was recorded, so its Leave must be (kEnterLost: not in
  /// the trace). Bits 2-31: calls of throttled regions open inside it (kSkippedCall each), so a
  /// throttled region's exit hook knows whether it closes one of them or this frame.
  std::uint32_t recorded;
  ProfileNode* node;       ///< its call path in the profile; nullptr when not profiled
  Timestamp enter_time;    ///< for the profile
};

/// Frame::recorded: recorded, but its Enter record was lost for lack of memory, so its Leave is
/// not written either (the trace stays nested; the profile still counts the visit).
constexpr std::uint32_t kFrameRecorded = 1, kEnterLost = 3, kRecordedBits = 3, kSkippedCall = 4;

/// What a location stands for (its OTF2 location type).
enum class LocationType : std::uint8_t {
  CpuThread,  ///< a thread of the process, or a CPU-side lane (NVTX start/end ranges)
  GpuStream,  ///< a GPU stream (OTF2 ACCELERATOR_STREAM), in an accelerator location group
};

struct Location;

/// A compiler hook's event that came while its thread was inside prof (a signal handler that
/// interrupted a hook): kept with its time and replayed when the interrupted hook is done.
struct DeferredEvent {
  void (*replay)(Location*, const DeferredEvent&);  ///< the hook's own region lookup and event
  std::uintptr_t key;   ///< what the hook was called with (function address, plugin descriptor)
  std::uintptr_t cfa;
  Timestamp time;
  bool enter;
};
/// Room for the events of signal handlers that interrupted prof, per location (Location::deferred).
constexpr std::uint32_t kDeferredEvents = 128;
/// And in Location::deferred_more, mapped when those are not enough: prof stays
/// busy on a thread for milliseconds while it writes a full trace buffer (or waits for another
/// thread's), and a handler at a high rate defers hundreds of events meanwhile (issue 30: 27 % of
/// a 200 us timer's handler calls were dropped). 640 KiB of address space, touched as used,
/// outside PROF_TOTAL_MEMORY; more are counted as dropped.
constexpr std::uint32_t kDeferredMore = 16384;

/// Location::first_repair_by of a frame closed because the stack pointer passed it.
constexpr RegionId kRepairByJump = ~0u - 1;

struct Location {
  // Hot fields, touched by every event. The first eight bytes are the flags word the compiler
  // hooks test at once (flags_word, kFlag*): keep their order.
  bool busy = false;     ///< inside prof on this thread: a re-entered event is deferred
  bool active = true;    ///< false once the location ended or measurement stopped
  bool tracing = false;
  bool profiling = false;
  bool unwind_check = false;  ///< a longjmp happened: drop frames deeper than the next event
  bool cache_stale = false;   ///< code was unloaded (dlclose): empty the region cache first
  std::uint8_t metric_count = 0;  ///< metric values read at each recorded Enter/Leave (0: none)
  std::uint8_t flags_spare = 0;   ///< 0: completes the flags word
  /// Events deferred from signal handlers (deferred[0..n), then deferred_more), replayed after
  /// the hook they interrupted (events.hpp, after_hook). Written by the handler, emptied by the owner.
  std::atomic<std::uint32_t> deferred_count{0};
  RegionCache cache;
  EventBuffer trace;
  Frame* frames = nullptr;
  std::uint32_t depth = 0;
  std::uint32_t capacity = 0;
  std::uint64_t root_skipped = 0;          ///< calls of throttled regions open outside every frame
  ProfileNode* current_node = &root_node;  ///< the call path the thread is in now
  std::uint32_t profile_depth = 0;         ///< depth of current_node (root = 0)
  std::uint32_t profile_max_depth = 100;   ///< PROF_PROFILING_MAX_CALLPATH_DEPTH
  ProfileNode root_node{};                 ///< the program-root region; every path starts here
  NodeArena arena;
  ProfileFull full;                        ///< "PROFILE MEMORY FULL" call paths, when the pool is empty
  /// Bytes sent and received per call path (MPI), created on the first message; owner thread.
  std::unordered_map<const ProfileNode*, std::pair<std::uint64_t, std::uint64_t>>* bytes = nullptr;
  /// GPU streams: bytes moved by memory copies and memsets per call path; adapter's lock.
  std::unordered_map<const ProfileNode*, std::uint64_t>* gpu_bytes = nullptr;

  // Metrics (measurement/metrics): the values at each open frame's Enter (capacity rows of
  // metric_count), the OTF2 metric class of the location's values, the sources' state.
  std::uint64_t* metric_frames = nullptr;
  std::uint16_t metric_class = 0;
  void* metric_state = nullptr;

  // Identity.
  std::uint32_t index = 0;        ///< creation order in the process; 0 = first (normally main)
  std::uint64_t global_id = 0;    ///< (index << 32) | rank, the OTF2 location id
  std::string name;
  LocationType type = LocationType::CpuThread;
  /// The location group when not the process's own: an accelerator group (e.g. "CUDA Context
  /// 1"), whose creating group is the process's. Empty: the process's group.
  std::string group;
  /// Written by an adapter from any thread under the adapter's own lock (GPU streams, NVTX
  /// lanes), not by a thread of its own: no shadow stack, no thread events.
  bool detached = false;
  std::uint64_t create_seq = 0;   ///< ThreadCreate sequence number that made it, 0 = none
  /// Set by an adapter before the locations are closed at the end (OpenMP: a runtime thread
  /// idle in the barrier of its last team since then): frames still open close at this time.
  Timestamp close_at = 0;
  /// With close_at: the communicator + 1 of a ThreadTeamEnd written after those frames (0: none).
  std::uint32_t close_team = 0;
  /// Thread exited; buffer no longer written. Atomic: end_location sets it without the state's
  /// mutex, and flushes on other threads read it under that mutex to take the ended thread's
  /// buffer (its last events must be visible to them: release/acquire, found by TSan).
  std::atomic<bool> ended{false};
  bool converted = false;         ///< its events are in the OTF2 archive and its writer closed
  bool samples_resolved = false;  ///< finalize resolved the samples its trace holds (before the profile)
  /// Its thread ended and a later thread may take it (PROF_PTHREAD_REUSE_AFTER): its events are
  /// written and its chunks back in the pool, its OTF2 location stays open.
  bool parked = false;
  std::uint64_t lost_events = 0;  ///< no memory for even one chunk

  // Counters, reported once at finalize.
  std::uint64_t repairs = 0;            ///< Leaves written for frames whose exit hook never ran
  std::uint64_t unmatched_leaves = 0;   ///< Leave without an open frame of its region
  /// The first repair (the region whose Leave closed frames above it, or kRepairByJump: a frame
  /// left by longjmp or an exception; and the innermost frame it closed) and the first unmatched
  /// Leave's region, for the end-of-run warning; ~0u: none.
  RegionId first_repair_by = ~0u, first_repaired = ~0u, first_unmatched = ~0u;
  std::uint64_t dropped_reentries = 0;  ///< events of signal handlers inside prof: no room to defer them
  std::uint64_t late_reentries = 0;     ///< deferred, but the measurement had ended before their replay
  std::uint64_t replayed_events = 0;    ///< events from signal handlers, deferred and replayed
  std::uint64_t closed_at_end = 0;      ///< frames still open when the thread or process ended
  /// A blocking MPI collective whose MpiCollectiveBegin is written and whose End is not (yet):
  /// api::event() sets it at the Begin (open_coll: the depth then, its MPI function's frame the
  /// innermost; 0 = none) and clears it at the End. A rank stopped inside the collective (waiting
  /// for a rank that failed) gets the End when its frames are closed (runtime.cpp, close_frames).
  std::uint32_t open_coll = 0;
  std::uint32_t open_coll_comm = 0;
  std::uint16_t open_coll_op = 0;
  std::uint64_t unfinished_collectives = 0;  ///< Ends so written: collectives that never finished
  std::uint64_t flushes = 0;
  std::uint64_t spills = 0;       ///< flushes that went to its spill file
  std::string spill_file;         ///< its raw records not yet converted (runtime.cpp), "" = none
  std::uint64_t spill_bytes = 0;  ///< bytes in spill_file (a checkpoint's copy reads no further)
  std::uint64_t reuses = 0;             ///< threads after the first that used it (PROF_PTHREAD_REUSE_AFTER)
  std::uint64_t profile_folded = 0;     ///< visits to call paths not created for lack of memory
  std::uint64_t profile_too_deep = 0;   ///< visits below PROF_PROFILING_MAX_CALLPATH_DEPTH, folded
  /// The same visits per call path at the cutoff (the profile's folded_visits), made on the
  /// first one; owner thread. too_deep_node/too_deep_count: the last such call path and its
  /// entry (map entries never move), so a run of folded visits below one path costs no lookup.
  std::unordered_map<const ProfileNode*, std::uint64_t>* too_deep = nullptr;
  const ProfileNode* too_deep_node = nullptr;
  std::uint64_t* too_deep_count = nullptr;

  // Sampling (measurement/sampling): the thread's interrupt sources, the instrumented stack
  // replayed from its records when samples are resolved, and counts of its signal handler.
  void* sampler = nullptr;
  EventBuffer sample_buffer;           ///< the samples when there is no trace (profile only)
  std::vector<RegionId>* replay = nullptr;
  DeferredEvent deferred[kDeferredEvents];  ///< see deferred_count
  /// kDeferredMore more, mapped by the first handler that needs them (never unmapped).
  std::atomic<DeferredEvent*> deferred_more{nullptr};
  std::uint64_t samples = 0;           ///< written as RawSample
  std::uint64_t samples_in_prof = 0;   ///< landed inside prof itself (not the user's code)
  std::uint64_t samples_dropped = 0;   ///< no buffer space
  std::uint64_t sample_ticks = 0;      ///< timer ticks spent writing the samples (unwinding included)
  /// Samples per call path of the profile (hits), made when the samples are resolved.
  std::unordered_map<const ProfileNode*, std::uint64_t>* hits = nullptr;
  /// CPU time the samples of time-based sources stand for (hits x period, ns) per call path.
  std::unordered_map<const ProfileNode*, std::uint64_t>* sampled_ns = nullptr;
};

/// The flags word: busy, active, tracing, profiling, unwind_check, cache_stale, metric_count and
/// a spare byte, one per byte from the lowest, read with one load.
constexpr std::uint64_t kFlagBusy = 0xffull, kFlagActive = 1ull << 8, kFlagTracing = 1ull << 16,
                        kFlagProfiling = 1ull << 24, kFlagUnwind = 0xffull << 32, kFlagStale = 0xffull << 40,
                        kFlagMetrics = 0xffull << 48;
inline std::uint64_t flags_word(const Location* loc) {
  std::uint64_t w;
  __builtin_memcpy(&w, &loc->busy, sizeof w);
  return w;
}

/// The calling thread's location, or nullptr before its first event. Raw TLS: no destructor,
/// so it is still readable from late thread_local destructors and atexit handlers.
extern __thread Location* tls_location PROF_INITIAL_EXEC;

}  // namespace prof
