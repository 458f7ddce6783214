// SPDX-License-Identifier: BSD-3-Clause
// Turns the per-location call trees into one CUBE4 profile (one call tree, one column per thread).
#pragma once

#include <string>
#include <vector>

#include "measurement/location.hpp"
#include "measurement/profiling/cube4_writer.hpp"

namespace prof {

/// Merges the call trees of `locations` by call path into one CUBE4 profile (write it with
/// cube4::write). The program root of the first location (the main thread) gets one visit
/// lasting from the start of measurement to `end`; other locations' roots get no visit and
/// the sum of their children's time. False (with the cause) when no location has a profile.
/// Finalize only (no thread records any more); allocates.
bool build_profile(const std::vector<Location*>& locations, Timestamp end, cube4::Profile* out, std::string* error);

/// The end-of-run table of PROF_SUMMARY: the `top` regions with the most exclusive time.
std::string summary_table(const cube4::Profile& p, std::size_t top);

}  // namespace prof
