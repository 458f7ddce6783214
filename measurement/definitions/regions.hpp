// SPDX-License-Identifier: BSD-3-Clause
// The process's region definitions: dense ids, defined once, resolved from addresses once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
/// A copy of all definitions, index = RegionId.
std::vector<RegionDef> snapshot();
std::size_t count();

/// The registry's lock, held across a fork (a checkpoint, runtime.cpp): the child reads the
/// registry and must not find it locked by a thread that does not exist there.
void lock_for_fork();
void unlock_after_fork();

}  // namespace prof::regions
