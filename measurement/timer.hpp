// SPDX-License-Identifier: BSD-3-Clause
// timer::now(): the TSC where it is usable, otherwise clock_gettime(CLOCK_MONOTONIC).
#pragma once

#include <cstdint>
#include <ctime>
#include <x86intrin.h>

#include "measurement/compiler.hpp"
#include "measurement/record.hpp"

namespace prof::timer {

enum class Kind { Tsc, ClockGettime };

/// Chosen once by init(): the TSC is the timer.
extern bool g_use_tsc;
/// Added to every timestamp: 0, except to test the clock correction of multi-process runs
/// (PROF_MPI_DEBUG_CLOCK_SKEW). Set once before the first event.
extern Timestamp g_skew;
/// The TSC without a skew: the one case every event reads inline. Set once by init().
extern bool g_plain_tsc PROF_HIDDEN;

/// clock_gettime(CLOCK_MONOTONIC), or the TSC with a test skew: out of line.
Timestamp now_other();

// Hot path: no locks, no allocation, no errno changes.
PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE inline Timestamp now() {
  if (PROF_LIKELY(g_plain_tsc)) return __rdtsc();
  return now_other();
}

/// Result of the TSC checks, for tests and PROF_VERBOSE.
struct TscCheck {
  bool clocksource_tsc = false;  ///< the kernel's current clocksource is "tsc"
  bool invariant = false;        ///< CPUID says the TSC is invariant (constant rate, runs in C-states)
  double ticks_per_second = 0;   ///< calibrated against CLOCK_MONOTONIC_RAW
  bool usable() const { return clocksource_tsc && invariant && ticks_per_second > 1e8 && ticks_per_second < 1e11; }
};

/// Reads the clocksource and CPUID and calibrates the TSC for `calibrate_ns` against
/// CLOCK_MONOTONIC_RAW.
TscCheck check_tsc(std::uint64_t calibrate_ns);

/// Picks the timer (choice: 0 auto, 1 tsc, 2 clock_gettime) and records the start anchor;
/// `skew` is added to every timestamp (a test of the clock correction; normally 0).
/// Returns a warning text when a requested TSC is unusable (then clock_gettime is used).
const char* init(std::uint64_t choice, Timestamp skew = 0);
/// Records the end anchor; recomputes the TSC rate over the whole run. Returns a warning
/// when the rate measured now differs from the one at init by more than 0.1 %.
const char* finalize();

Kind kind();
const char* name();
/// Ticks per second (the OTF2 timer resolution).
std::uint64_t resolution();
/// Timestamp of init().
Timestamp start();
/// Nanoseconds since 1970 (UTC) at timestamp t.
std::uint64_t realtime_ns(Timestamp t);
/// Converts a tick difference to nanoseconds.
double ticks_to_ns(std::uint64_t ticks);

}  // namespace prof::timer
