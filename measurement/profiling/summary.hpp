// SPDX-License-Identifier: BSD-3-Clause
// Per-region totals of a call-path profile, for the end-of-run table (PROF_SUMMARY). Works on
// plain vectors (the layout of cube4::Profile), independent of the rest of the runtime.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "measurement/profiling/cube4_writer.hpp"

namespace prof::summary {

/// Values per (cnode, location), index cnode * locations + location, as in cube4::Profile.
struct Input {
  const std::vector<cube4::CallNode>* cnodes;  // parents before children; roots have parent -1
  std::size_t regions = 0;
  std::size_t locations = 0;
  const std::vector<double>* visits;
  const std::vector<double>* time_incl;        // seconds, inclusive of children
  const std::vector<double>* min_time;         // seconds per visit, inclusive; nullptr if absent
  const std::vector<double>* max_time;
};

struct RegionTotals {
  std::uint32_t region = 0;
  double visits = 0;
  double incl = 0;   ///< seconds, over its outermost call paths (recursion is not counted twice)
  double excl = 0;   ///< seconds, summed over its call paths
  double min = 0;    ///< shortest visit (inclusive), seconds; 0 when no visit
  double max = 0;    ///< longest visit (inclusive), seconds
};

/// One entry per region that occurs in the call tree, in region order.
std::vector<RegionTotals> by_region(const Input& in);

/// Exclusive time per (cnode, location): inclusive minus the children's inclusive times.
std::vector<double> exclusive_time(const Input& in);

/// The end-of-run table: the `top` regions with the most exclusive time, one line each, every
/// line starting with "prof: ". `names` indexed by region id.
std::string table(const std::vector<RegionTotals>& totals, const std::vector<std::string>& names, std::size_t top,
                  std::size_t locations);

}  // namespace prof::summary
