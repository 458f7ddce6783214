// SPDX-License-Identifier: BSD-3-Clause
// Per-location call-path profile: a tree of nodes built on enter/leave. Nodes come from the
// measurement pool in chunks and are never freed; the hot path only walks a child list.
#pragma once

#include <cmath>
#include <cstdint>

#include "measurement/compiler.hpp"
#include "measurement/record.hpp"

namespace prof {

/// One call path of one location. 64 bytes: one cache line.
struct ProfileNode {
  RegionId region;
  /// Metric values (measurement/metrics) stored right after the node: the sums of their
  /// inclusive deltas over the visits. 0 for nodes without that space.
  std::uint32_t metrics;
  ProfileNode* parent;
  ProfileNode* first_child;
  ProfileNode* next_sibling;
  std::uint64_t visits;
  std::uint64_t incl_ticks;  ///< inclusive time of all visits
  std::uint64_t min_ticks;   ///< shortest visit (inclusive); ~0 until the first visit ends
  std::uint64_t max_ticks;   ///< longest visit (inclusive)
};
static_assert(sizeof(ProfileNode) == 64, "a profile node is one cache line");

/// The child of `parent` for `region`, nullptr when it has none yet. Hot path.
inline ProfileNode* child_of(const ProfileNode* parent, RegionId region) {
  ProfileNode* c = parent->first_child;
  while (c && c->region != region) c = c->next_sibling;
  return c;
}

/// Bump allocator of profile nodes over slabs of pool chunks; owned by one location.
struct NodeArena {
  char* pos = nullptr;
  char* end = nullptr;
  std::uint64_t nodes = 0;
  std::uint32_t slabs = 0;  ///< slabs taken so far (runtime::profile_chunk: each twice the last)
};

/// Counts distinct 64-bit keys in 4 KiB (HyperLogLog, standard error about 1.6 %): the call
/// paths a profile had no memory for, for the end-of-run estimate of what it needed. Add and
/// merge are cheap and allocation-free.
struct DistinctCounter {
  static constexpr unsigned kBits = 12;
  std::uint8_t reg[1u << kBits]{};
  void add(std::uint64_t hash) {
    std::uint8_t& r = reg[hash >> (64 - kBits)];
    std::uint64_t rest = hash << kBits;
    auto rank = static_cast<std::uint8_t>(rest ? __builtin_clzll(rest) + 1 : 64 - kBits + 1);
    if (rank > r) r = rank;
  }
  void merge(const DistinctCounter& o) {
    for (unsigned i = 0; i < (1u << kBits); ++i)
      if (o.reg[i] > reg[i]) reg[i] = o.reg[i];
  }
  double estimate() const {
    constexpr double m = 1u << kBits;
    double sum = 0;
    unsigned zeros = 0;
    for (std::uint8_t r : reg) {
      sum += std::ldexp(1.0, -r);
      zeros += r == 0;
    }
    const double raw = 0.7213 / (1 + 1.079 / m) * m * m / sum;
    // Few keys: linear counting of the empty registers is the better estimate there.
    return raw <= 2.5 * m && zeros ? m * std::log(m / zeros) : raw;
  }
};

/// What a location does when its profile cannot grow: a visit to a new call path goes to a
/// "PROFILE MEMORY FULL" child of the current call path (a few such nodes are kept in the
/// location itself, so they need no pool memory); calls below it stay inside it. When these
/// nodes are used up, a spare node outside the tree plays the part: the visit's time then
/// stays in its caller's exclusive time, and the calls below still stay inside. The missing call paths are
/// counted by key (a hash of the path) so that the end-of-run message can say how much memory
/// the profile needed. Owner thread only.
struct ProfileFull {
  static constexpr unsigned kNodes = 32;
  ProfileNode nodes[kNodes]{};
  ProfileNode spare{};          ///< when all kNodes are linked: a node outside the tree
  std::uint32_t used = 0;
  std::uint32_t open_frames = 0;  ///< shadow-stack depth of the open PROFILE MEMORY FULL visit
  std::uint32_t open_depth = 0;   ///< its call-path depth
  std::uint64_t open_key = 0;   ///< key of the path of the open PROFILE MEMORY FULL visit
  std::uint64_t misses = 0;     ///< visits that found no memory for their call path
  std::uint64_t retry_at = 0;   ///< next `misses` value at which the pool is asked again
  DistinctCounter missing;      ///< call paths that are not in the profile
};

}  // namespace prof
