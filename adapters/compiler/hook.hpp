// SPDX-License-Identifier: BSD-3-Clause
// The body of every compiler hook (-finstrument-functions' __cyg_profile_func_*, the GCC
// plugin's __prof_plugin_*): the busy flag, the bail-outs to a slow path, and the enter or leave
// of the region the hook's own lookup gives. The two adapters differ only in that lookup.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "measurement/events.hpp"

namespace prof::compiler_hook {

/// The caller's stack pointer at the hook call: deeper frames have smaller values. Evaluate it
/// in the extern "C" hook itself. Used only to find frames whose exit hooks were skipped
/// (longjmp, clang's exception unwinding).
#define PROF_CALLER_CFA() reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa())

/// A call of a throttled region (regions.hpp): nothing recorded, but counted in the innermost
/// frame, so that its exit tells itself apart from the exit of a frame of the region opened
/// before it was throttled (which is closed as usual).
template <class Clock>
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void throttled_call(Location* loc, RegionId r, std::uintptr_t cfa, bool is_enter, Clock clock) {
  const std::uint32_t d = loc->depth;
  if (is_enter) {
    if (PROF_LIKELY(d != 0)) loc->frames[d - 1].recorded += kSkippedCall;
    else ++loc->root_skipped;
    return;
  }
  if (PROF_UNLIKELY(d == 0)) {
    if (loc->root_skipped) --loc->root_skipped;
    return;
  }
  Frame& top = loc->frames[d - 1];
  if (PROF_LIKELY(top.recorded >= kSkippedCall)) top.recorded -= kSkippedCall;
  else if (top.region == r) leave_at(loc, r, cfa, clock);
}

/// The event of region `r` (not kFiltered) at clock(): throttled, enter or leave.
template <class Clock>
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void record(Location* loc, RegionId r, std::uintptr_t cfa, bool is_enter, Clock clock) {
  if (PROF_UNLIKELY(regions::throttled(r))) throttled_call(loc, r, cfa, is_enter, clock);
  else if (is_enter) enter_at(loc, r, cfa, clock);
  else leave_at(loc, r, cfa, clock);
}

/// `Lookup` is a class with `static RegionId region(Location*, Key)` (the region, or
/// regions::kFiltered: nothing recorded) and `static constexpr bool kAddressCache` (the lookup
/// uses the per-thread address cache, which dlclose can make stale).
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
/// replayed by after_hook with its own time, no earlier than what the trace holds already.
template <class Lookup, class Key>
PROF_COLD PROF_NO_INSTRUMENT void replay(Location* loc, const DeferredEvent& e) {
  Timestamp t = e.time;
  if (loc->tracing) t = std::max(t, loc->trace.last_time());
  lookup_and_record<Lookup>(loc, reinterpret_cast<Key>(e.key), e.cfa, e.enter, At{t});
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

/// Hot path: no locks, no allocation, no errno changes.
template <class Lookup, bool kEnter, class Key>
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline void event(Key key, std::uintptr_t cfa) {
  Location* loc = tls_location;
  if (PROF_UNLIKELY(!loc || loc->busy)) return slow<Lookup>(key, cfa, kEnter);
  // busy first, then the flags: finalize clears the flags, then waits until no thread is busy.
  loc->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (PROF_UNLIKELY(!loc->active || (Lookup::kAddressCache && loc->cache_stale) || !g_compiler_hooks_on)) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    loc->busy = false;
    return slow<Lookup>(key, cfa, kEnter);
  }
  const RegionId r = Lookup::region(loc, key);
  // A filtered function: nothing pushed, nothing recorded.
  if (PROF_LIKELY(r != regions::kFiltered)) record(loc, r, cfa, kEnter, Now{});
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->busy = false;
  after_hook(loc);
}

}  // namespace prof::compiler_hook
