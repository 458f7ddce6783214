// SPDX-License-Identifier: BSD-3-Clause
// The process's calling contexts (sampling): a tree of (parent, region) nodes, process-local ids
// in the trace's CallingContextSample records; unification (measurement/unify.hpp) merges the
// trees of all processes and writes each location's local → global mapping table. Also the
// process's interrupt generators (the samplers' sources).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "measurement/record.hpp"

namespace prof::contexts {

using ContextId = std::uint32_t;
constexpr ContextId kNoContext = 0xffffffffu;

struct ContextDef {
  RegionId region = 0;
  ContextId parent = kNoContext;  ///< always defined before its children
};

/// The context `region` below `parent` (kNoContext: a root), made on first use. Any thread; locks.
ContextId define(ContextId parent, RegionId region);
/// A copy of all definitions, index = local id.
std::vector<ContextDef> snapshot();
/// Contexts and generators defined so far (both only grow). Any thread; locks.
std::size_t count();

struct GeneratorDef {
  std::string name;          ///< "perf_cycles", "perf_cpu_clock", "perf_task_clock", "timer"
  bool time_based = true;    ///< period in ns; false: in events (cycles)
  std::uint64_t period = 0;
};
/// Defines an interrupt generator; its local id (the aux field of CallingContextSample records).
std::uint32_t define_generator(const GeneratorDef& def);
std::vector<GeneratorDef> generators();

}  // namespace prof::contexts
