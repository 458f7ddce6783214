// SPDX-License-Identifier: BSD-3-Clause
// The hooks prof's GCC plugin inserts: each call carries the function's static descriptor, whose
// handle caches the region id, so there is no address lookup, no symbol table and no per-thread
// cache probe; the instrumented code calls them only while the descriptor's flags are 0 (not
// filtered, not throttled) at the function's entry. The rest is the hook body both compiler
// adapters share (hook.hpp).
#include <cerrno>

#include "adapters/adapter.hpp"
#include "adapters/compiler/hook.hpp"
#include "adapters/compiler/plugin_region.h"

namespace {

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
  prof::regions::note_entry(id, d->fn);
  // The instrumented code tests the flags word before it calls a hook: a filtered function
  // stops calling now, a throttled one when it is throttled.
  if (id == prof::regions::kFiltered) __atomic_or_fetch(&d->flags, prof::regions::kDescriptorSkip, __ATOMIC_RELAXED);
  else prof::regions::note_descriptor(id, &d->flags);
  __atomic_store_n(&d->handle, id + 1, __ATOMIC_RELAXED);
  errno = saved;
  return id;
}

/// The region of a descriptor: its cached handle (id + 1, 0 until registered).
struct ByDescriptor {
  static constexpr bool kAddressCache = false;
  PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE static prof::RegionId region(prof::Location*, prof_plugin_region* d) {
    const std::uint32_t h = __atomic_load_n(&d->handle, __ATOMIC_RELAXED);
    return PROF_LIKELY(h != 0) ? h - 1 : resolve(d);
  }
  PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE static prof::RegionId known_region(prof::Location*, prof_plugin_region* d) {
    return __atomic_load_n(&d->handle, __ATOMIC_RELAXED) - 1;  // handle 0: kNoRegion
  }
};

}  // namespace

extern "C" {

PROF_API PROF_NO_INSTRUMENT void __prof_plugin_enter(prof_plugin_region* d) {
  prof::compiler_hook::event<ByDescriptor, true>(d, PROF_CALLER_CFA());
}

PROF_API PROF_NO_INSTRUMENT void __prof_plugin_exit(prof_plugin_region* d) {
  prof::compiler_hook::event<ByDescriptor, false>(d, PROF_CALLER_CFA());
}

}  // extern "C"
