// SPDX-License-Identifier: BSD-3-Clause
// The compiler adapter: GCC/clang -finstrument-functions hooks → prof::enter/leave.
#include <cerrno>

#include "adapters/adapter.hpp"
#include "measurement/events.hpp"

namespace {

// The caller's stack pointer at the hook call: deeper frames have smaller values. Used only to
// find frames whose exit hooks were skipped (longjmp, clang's exception unwinding).
#define PROF_CALLER_CFA() reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa())

PROF_COLD PROF_NO_INSTRUMENT prof::RegionId resolve(prof::Location* loc, void* fn) {
  int saved = errno;
  prof::RegionId r = prof::regions::for_address(fn);
  loc->cache.insert(fn, r);
  errno = saved;
  return r;
}

// First event of a thread, re-entry from a signal handler, a stale cache, or measurement off.
PROF_COLD PROF_NO_INSTRUMENT void slow(void* fn, std::uintptr_t cfa, bool is_enter) {
  if (!prof::g_compiler_hooks_on && prof::g_phase.load(std::memory_order_relaxed) != 0) return;
  prof::Location* loc = prof::current_location();
  if (!loc || !loc->active || !prof::g_compiler_hooks_on) return;
  if (loc->busy) {
    ++loc->dropped_reentries;
    return;
  }
  loc->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (loc->cache_stale) {
    loc->cache_stale = false;
    loc->cache.clear();
  }
  prof::RegionId r = loc->cache.find(fn);
  if (r == prof::kNoRegion) r = resolve(loc, fn);
  if (r != prof::regions::kFiltered) {
    if (is_enter) prof::enter(loc, r, cfa);
    else prof::leave(loc, r, cfa);
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->busy = false;
}

}  // namespace

extern "C" {

// Hot path: no locks, no allocation, no errno changes.
PROF_API PROF_NO_INSTRUMENT void __cyg_profile_func_enter(void* fn, void*) {
  prof::Location* loc = prof::tls_location;
  if (PROF_UNLIKELY(!loc || loc->busy)) return slow(fn, PROF_CALLER_CFA(), true);
  // busy first, then the flags: finalize clears the flags, then waits until no thread is busy.
  loc->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (PROF_UNLIKELY(!loc->active || loc->cache_stale || !prof::g_compiler_hooks_on)) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    loc->busy = false;
    return slow(fn, PROF_CALLER_CFA(), true);
  }
  prof::RegionId r = loc->cache.find(fn);
  if (PROF_UNLIKELY(r == prof::kNoRegion)) r = resolve(loc, fn);
  // A filtered function: nothing pushed, nothing recorded.
  if (PROF_LIKELY(r != prof::regions::kFiltered)) prof::enter(loc, r, PROF_CALLER_CFA());
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->busy = false;
}

// Hot path: no locks, no allocation, no errno changes.
PROF_API PROF_NO_INSTRUMENT void __cyg_profile_func_exit(void* fn, void*) {
  prof::Location* loc = prof::tls_location;
  if (PROF_UNLIKELY(!loc || loc->busy)) return slow(fn, PROF_CALLER_CFA(), false);
  // busy first, then the flags: finalize clears the flags, then waits until no thread is busy.
  loc->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (PROF_UNLIKELY(!loc->active || loc->cache_stale || !prof::g_compiler_hooks_on)) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    loc->busy = false;
    return slow(fn, PROF_CALLER_CFA(), false);
  }
  prof::RegionId r = loc->cache.find(fn);
  if (PROF_UNLIKELY(r == prof::kNoRegion)) r = resolve(loc, fn);
  // A filtered function: nothing pushed, nothing recorded.
  if (PROF_LIKELY(r != prof::regions::kFiltered)) prof::leave(loc, r, PROF_CALLER_CFA());
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->busy = false;
}

PROF_API extern const prof_adapter prof_adapter_compiler = {"compiler", nullptr, nullptr, nullptr, nullptr};

}  // extern "C"
