// SPDX-License-Identifier: BSD-3-Clause
// Per-location call-path profile: a tree of nodes built on enter/leave. Nodes come from the
// measurement pool in chunks and are never freed; the hot path only walks a child list.
#pragma once

#include <cstdint>

#include "measurement/compiler.hpp"
#include "measurement/record.hpp"

namespace prof {

/// One call path of one location. 64 bytes: one cache line.
struct ProfileNode {
  RegionId region;
  std::uint32_t unused;
  ProfileNode* parent;
  ProfileNode* first_child;
  ProfileNode* next_sibling;
  std::uint64_t visits;
  std::uint64_t incl_ticks;  ///< inclusive time of all visits
  std::uint64_t min_ticks;   ///< shortest visit (inclusive); ~0 until the first visit ends
  std::uint64_t max_ticks;   ///< longest visit (inclusive)
};
static_assert(sizeof(ProfileNode) == 64, "a profile node is one cache line");

/// Bump allocator of profile nodes over pool chunks; owned by one location.
struct NodeArena {
  char* pos = nullptr;
  char* end = nullptr;
  std::uint64_t nodes = 0;
};

}  // namespace prof
