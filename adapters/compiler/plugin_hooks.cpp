// SPDX-License-Identifier: BSD-3-Clause
// The hooks prof's GCC plugin inserts: each call carries the function's static descriptor, whose
// handle caches the region id, so there is no address lookup, no symbol table and no per-thread
// cache probe. The shape of the rest follows cyg_profile.cpp (busy flag, slow path).
#include <cerrno>

#include "adapters/adapter.hpp"
#include "adapters/compiler/plugin_region.h"
#include "measurement/events.hpp"

namespace {

#define PROF_CALLER_CFA() reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa())

/// The region of a descriptor, registered on its first call (any thread may race here: both
/// get the same id, define() being idempotent).
PROF_COLD PROF_NO_INSTRUMENT prof::RegionId resolve(prof_plugin_region* d) {
  int saved = errno;
  prof::regions::RegionDef def;
  def.name = d->name ? d->name : "";
  def.canonical = d->mangled ? d->mangled : def.name;
  def.file = d->file ? d->file : "";
  def.begin_line = d->line;
  def.end_line = d->end_line;
  def.paradigm = prof::regions::Paradigm::Compiler;
  def.role = prof::regions::Role::Function;
  const prof::RegionId id = prof::regions::define_unless_filtered(std::move(def));
  __atomic_store_n(&d->handle, id + 1, __ATOMIC_RELAXED);
  errno = saved;
  return id;
}

PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline prof::RegionId region_of(prof_plugin_region* d) {
  const std::uint32_t h = __atomic_load_n(&d->handle, __ATOMIC_RELAXED);
  return PROF_LIKELY(h != 0) ? h - 1 : resolve(d);
}

// First event of a thread, re-entry from a signal handler, or measurement off.
PROF_COLD PROF_NO_INSTRUMENT void slow(prof_plugin_region* d, std::uintptr_t cfa, bool is_enter) {
  if (!prof::g_compiler_hooks_on && prof::g_phase.load(std::memory_order_relaxed) != 0) return;
  prof::Location* loc = prof::current_location();
  if (!loc || !loc->active || !prof::g_compiler_hooks_on) return;
  if (loc->busy) {
    ++loc->dropped_reentries;
    return;
  }
  loc->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const prof::RegionId r = region_of(d);
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
PROF_API PROF_NO_INSTRUMENT void __prof_plugin_enter(prof_plugin_region* d) {
  prof::Location* loc = prof::tls_location;
  if (PROF_UNLIKELY(!loc || loc->busy)) return slow(d, PROF_CALLER_CFA(), true);
  loc->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (PROF_UNLIKELY(!loc->active || !prof::g_compiler_hooks_on)) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    loc->busy = false;
    return slow(d, PROF_CALLER_CFA(), true);
  }
  const prof::RegionId r = region_of(d);
  if (PROF_LIKELY(r != prof::regions::kFiltered)) prof::enter(loc, r, PROF_CALLER_CFA());
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->busy = false;
}

// Hot path: no locks, no allocation, no errno changes.
PROF_API PROF_NO_INSTRUMENT void __prof_plugin_exit(prof_plugin_region* d) {
  prof::Location* loc = prof::tls_location;
  if (PROF_UNLIKELY(!loc || loc->busy)) return slow(d, PROF_CALLER_CFA(), false);
  loc->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (PROF_UNLIKELY(!loc->active || !prof::g_compiler_hooks_on)) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    loc->busy = false;
    return slow(d, PROF_CALLER_CFA(), false);
  }
  const prof::RegionId r = region_of(d);
  if (PROF_LIKELY(r != prof::regions::kFiltered)) prof::leave(loc, r, PROF_CALLER_CFA());
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->busy = false;
}

}  // extern "C"
