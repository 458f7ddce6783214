// SPDX-License-Identifier: BSD-3-Clause
// Turns the per-location call trees into one CUBE4 profile (one call tree, one column per thread).
#pragma once

#include <string>
#include <vector>

#include "measurement/location.hpp"

namespace prof {

/// Merges the call trees of `locations` by call path and writes them to `path` as CUBE4.
/// The program root of the first location (the main thread) gets one visit lasting from the
/// start of measurement to `end`; other locations' roots get no visit and the sum of their
/// children's time. Finalize only (no thread records any more); allocates.
bool write_profile(const std::string& path, const std::vector<Location*>& locations, Timestamp end, std::string* error);

}  // namespace prof
