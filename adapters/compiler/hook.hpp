// SPDX-License-Identifier: BSD-3-Clause
// The body of every compiler hook (-finstrument-functions' __cyg_profile_func_*, the GCC
// plugin's __prof_plugin_*): the busy flag, the bail-outs to a slow path, and the enter or leave
// of the region the hook's own lookup gives. The two adapters differ only in that lookup.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "measurement/events.hpp"

namespace prof::compiler_hook {

/// The caller's stack pointer at the hook call: deeper frames have smaller values. Evaluate it
/// in the extern "C" hook itself. Used only to find frames whose exit hooks were skipped
/// (longjmp, clang's exception unwinding).
#define PROF_CALLER_CFA() reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa())

/// A call of a throttled region (regions.hpp): nothing recorded, but counted in the innermost
/// frame, so that its exit tells itself apart from the exit of a frame of the region opened
/// before it was throttled. False for such an exit: the caller closes that frame as usual.
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline bool throttled_call(Location* loc, RegionId r, bool is_enter) {
  const std::uint32_t d = loc->depth;
  if (is_enter) {
    if (PROF_LIKELY(d != 0)) loc->frames[d - 1].recorded += kSkippedCall;
    else ++loc->root_skipped;
    return true;
  }
  if (PROF_UNLIKELY(d == 0)) {
    if (loc->root_skipped) --loc->root_skipped;
    return true;
  }
  Frame& top = loc->frames[d - 1];
  if (PROF_LIKELY(top.recorded >= kSkippedCall)) {
    top.recorded -= kSkippedCall;
    return true;
  }
  return top.region != r;  // not its frame: an exit without entry, ignored
}

/// The event of region `r` (not kFiltered) at clock(): throttled, enter or leave.
template <class Clock>
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void record(Location* loc, RegionId r, std::uintptr_t cfa, bool is_enter, Clock clock) {
  if (PROF_UNLIKELY(regions::throttled(r)) && throttled_call(loc, r, is_enter)) return;
  if (is_enter) {
    // After a longjmp: a live hook's stack tells which frames the jump left (a replayed one's is gone).
    if constexpr (std::is_same_v<Clock, Now>)
      if (PROF_UNLIKELY(loc->unwind_check)) unwind_to_entry(loc, r, cfa);
    enter_at(loc, r, cfa, clock);
  } else {
    leave_at(loc, r, cfa, clock);
  }
}

/// `Lookup` is a class with `static RegionId region(Location*, Key)` (the region, or
/// regions::kFiltered: nothing recorded; resolves it on first use), `static RegionId
/// known_region(Location*, Key)` (the same without resolving: kNoRegion then) and `static
/// constexpr bool kAddressCache` (the lookup uses the per-thread address cache, which dlclose
/// can make stale).
/// The region of `key` and its event at clock(). Owner thread, busy set.
template <class Lookup, class Key, class Clock>
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void lookup_and_record(Location* loc, Key key, std::uintptr_t cfa, bool is_enter, Clock clock) {
  if (Lookup::kAddressCache && loc->cache_stale) {
    loc->cache_stale = false;
    loc->cache.clear();
  }
  const RegionId r = Lookup::region(loc, key);
  if (r != regions::kFiltered) record(loc, r, cfa, is_enter, clock);
}

/// An event a signal handler's hook deferred (the handler interrupted prof on this thread),
/// replayed by after_hook with its own time (drain_deferred raised it to what the trace holds).
template <class Lookup, class Key>
PROF_COLD PROF_NO_INSTRUMENT void replay(Location* loc, const DeferredEvent& e) {
  lookup_and_record<Lookup>(loc, reinterpret_cast<Key>(e.key), e.cfa, e.enter, At{e.time});
}

template <class Lookup, class Key>
PROF_COLD PROF_NO_INSTRUMENT void slow(Key key, std::uintptr_t cfa, bool is_enter) {
  // First event of a thread, re-entry from a signal handler, a stale cache, or measurement off.
  if (!g_compiler_hooks_on && g_phase.load(std::memory_order_relaxed) != 0) return;
  Location* loc = current_location();
  if (!loc || !loc->active || !g_compiler_hooks_on) return;
  if (loc->busy) {
    // A signal handler's function while this thread is inside prof: recorded after the hook
    // it interrupted (after_hook), nested where the handler ran.
    if (!defer(loc, &replay<Lookup, Key>, reinterpret_cast<std::uintptr_t>(key), cfa, is_enter)) ++loc->dropped_reentries;
    return;
  }
  loc->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  lookup_and_record<Lookup>(loc, key, cfa, is_enter, Now{});
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->busy = false;
  after_hook(loc);
}

/// After a hook's fast path: what it left for out-of-line code (rare).
PROF_COLD PROF_NO_INSTRUMENT inline void after_fast(Location* loc, ProfileNode* doubled) {
  if (doubled) {
    loc->busy = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    detail::visits_doubled(doubled);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    loc->busy = false;
  }
  after_hook(loc);
}

/// Hot path: no locks, no allocation, no errno changes. The common case (flags word as expected,
/// region known, not throttled, detail::try_enter/try_leave) makes no call; everything else goes
/// to slow(), which handles every case.
template <class Lookup, bool kEnter, class Key>
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void event(Key key, std::uintptr_t cfa) {
  Location* loc = tls_location;
  if (PROF_UNLIKELY(!loc)) return slow<Lookup>(key, cfa, kEnter);
  // Not busy, active, no longjmp to handle, no metrics; a stale address cache only matters to
  // the address path. Tracing and profiling may be anything.
  constexpr std::uint64_t kMask = kFlagBusy | kFlagActive | kFlagUnwind | kFlagMetrics | (Lookup::kAddressCache ? kFlagStale : 0);
  const std::uint64_t w = flags_word(loc);
  if (PROF_UNLIKELY((w & kMask) != kFlagActive)) return slow<Lookup>(key, cfa, kEnter);
  // busy first, then the flags: finalize clears the flags, then waits until no thread is busy
  // (membarrier orders this store before the loads below for it).
  loc->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  RegionId r = kNoRegion;
  bool done = false;
  ProfileNode* doubled = nullptr;
  if (PROF_LIKELY(loc->active && g_compiler_hooks_on)) {
    r = Lookup::known_region(loc, key);
    if (r == regions::kFiltered) {
      done = true;  // a filtered function: nothing pushed, nothing recorded
    } else if (PROF_LIKELY(r != kNoRegion)) {
      if (PROF_UNLIKELY(regions::throttled(r))) done = throttled_call(loc, r, kEnter);
      else done = kEnter ? detail::try_enter(loc, r, cfa, w) : detail::try_leave(loc, r, w, &doubled);
    }
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->busy = false;
  if (PROF_UNLIKELY(!done)) return slow<Lookup>(key, cfa, kEnter);
  if (PROF_UNLIKELY(doubled != nullptr || loc->deferred_count.load(std::memory_order_relaxed) != 0)) after_fast(loc, doubled);
}

}  // namespace prof::compiler_hook
