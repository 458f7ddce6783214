// SPDX-License-Identifier: BSD-3-Clause
// The process's region definitions: dense ids, defined once, resolved from addresses once.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "measurement/compiler.hpp"
#include "measurement/record.hpp"

namespace prof::filter {
class Filter;
}

namespace prof::regions {

/// The id for_address() gives a function the run-time filter excludes: never defined, never
/// recorded. The hooks test for it right after the cache probe.
constexpr RegionId kFiltered = 0xfffffffeu;

/// The run-time filter (PROF_FILTERING_FILE), set once at init before any event; may be null.
void set_filter(const filter::Filter* f);
/// The filter set_filter() gave, or null.
const filter::Filter* filter();

enum class Paradigm : std::uint8_t { Measurement, Compiler, User, Pthread, Mpi, Cuda, Sampling, Python, OpenMP };
enum class Role : std::uint8_t {
  Function, Wrapper, ThreadCreate, ThreadWait, Artificial, Code,
  // MPI calls, as OTF2 classifies them (the collective roles say who sends to whom).
  Point2Point, Barrier, CollOne2All, CollAll2One, CollAll2All, CollOther,
  DataTransfer,  ///< a GPU memory copy or memset on its stream
  // OpenMP constructs (adapters/openmp), as OTF2 classifies them.
  Parallel, Loop, Sections, Single, Master, Critical, Atomic, ImplicitBarrier, Task, TaskCreate, TaskWait,
  Taskgroup, Ordered, Flush,
};

struct RegionDef {
  std::string name;       ///< demangled / display name
  std::string canonical;  ///< mangled name
  std::string file;
  int begin_line = -1;
  int end_line = -1;
  Paradigm paradigm = Paradigm::Compiler;
  Role role = Role::Function;
  /// Throttled (PROF_THROTTLE): its visits in the thread and call path that decided, when it
  /// was decided, and their mean inclusive time; 0 = not throttled. Not part of its identity.
  std::uint64_t throttled_visits = 0;
  std::uint32_t throttled_mean_ns = 0;
};

/// Defines (or finds the identical) region. Any thread; locks; allocates.
RegionId define(RegionDef def);
/// define() for a compiler-instrumented function that may be filtered: kFiltered when the
/// run-time filter excludes it. Any thread; locks; allocates.
RegionId define_unless_filtered(RegionDef def);
/// Whether a symbol is a body the compiler outlined for an OpenMP construct ("main._omp_fn.0",
/// ".omp_outlined."): for_address() filters them, the OpenMP adapter names the construct
/// ("!$omp parallel @file:line") instead.
bool outlined_by_compiler(std::string_view symbol);
/// The region of a compiler-hook function address, resolved through the symbol tables once per
/// address per process, or kFiltered. Any thread; locks; allocates. Unknown code gets a
/// region named "UNKNOWN@0x<addr>" so no event is lost.
RegionId for_address(const void* fn);
/// The function entry address of a compiler-instrumented region (from the hook's address or the
/// plugin's descriptor), 0 when unknown or not a function. Any thread; locks.
std::uintptr_t entry_of(RegionId id);
/// Notes `fn` as the entry of region `id` (the plugin's descriptors).
void note_entry(RegionId id, const void* fn);
/// Forgets every address → region mapping (code was unloaded; the regions themselves stay).
/// Any thread; locks.
void forget_addresses();
// Throttling (PROF_THROTTLE): a compiler-instrumented region whose visits are many and short
// stops being measured. The decision is taken in the profile (events.hpp, detail::pop), the
// state is one byte per region that the compiler hooks read after their region lookup.

/// Per region: kMayThrottle (a compiler region throttling may stop: not named by an INCLUDE
/// rule, throttling on) and kThrottled. Regions from kThrottleSlots on are never throttled.
constexpr std::uint32_t kThrottleSlots = 1u << 20;
constexpr std::uint8_t kMayThrottle = 1, kThrottled = 2;
extern std::atomic<std::uint8_t> g_throttle_state[kThrottleSlots] PROF_HIDDEN;

/// Hot path: whether region `r` is throttled.
inline bool throttled(RegionId r) {
  return r < kThrottleSlots && (g_throttle_state[r].load(std::memory_order_relaxed) & kThrottled);
}

/// Switches throttling on (`visits` > 0: a region is throttled once a call path of it has at
/// least that many visits whose mean inclusive time is below `max_ns`) or off (0). At init,
/// before regions are defined.
void set_throttle(std::uint64_t visits, std::uint64_t max_ns, double ticks_per_ns);
/// Called when a call path of `r` has `visits` visits (a power of two) of `incl_ticks` in all:
/// throttles `r` when it may be and they are many and short. True when it was throttled now.
/// Any thread; locks when it throttles.
bool consider_throttle(RegionId r, std::uint64_t visits, std::uint64_t incl_ticks);
/// `flags` (a GCC plugin descriptor's flags word) gets kDescriptorSkip when `r` is throttled,
/// now or later, so the instrumented code stops calling the hooks. Any thread; locks.
constexpr std::uint32_t kDescriptorSkip = 1;
void note_descriptor(RegionId r, std::uint32_t* flags);
/// The description a throttled region's definition carries in the trace and the profile, ""
/// when `visits` is 0 (not throttled).
inline std::string throttled_description(std::uint64_t visits, std::uint32_t mean_ns) {
  if (!visits) return "";
  return "throttled by prof (PROF_THROTTLE) after " + std::to_string(visits) + " visits of " + std::to_string(mean_ns) +
         " ns on average in one call path: later calls were not measured, their time is in their callers' exclusive time";
}
/// A region `from`'s process throttled and `into`'s did not (merging definitions of several
/// processes: throttling is not part of a region's identity): `into` takes its figures.
template <class Region>
void keep_throttled(Region& into, const Region& from) {
  if (from.throttled_visits && !into.throttled_visits) {
    into.throttled_visits = from.throttled_visits;
    into.throttled_mean_ns = from.throttled_mean_ns;
  }
}

/// A copy of all definitions, index = RegionId.
std::vector<RegionDef> snapshot();
std::size_t count();

/// The registry's lock, held across a fork (a checkpoint, runtime.cpp): the child reads the
/// registry and must not find it locked by a thread that does not exist there.
void lock_for_fork();
void unlock_after_fork();

}  // namespace prof::regions
