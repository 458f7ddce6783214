// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the timer: TSC checks, the choice of clock, monotonic reads, resolution and
// conversions, the realtime anchor, and finalize. The test never assumes that this machine's
// TSC is usable: it asserts that the choices agree with check_tsc().
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "measurement/timer.hpp"

namespace timer = prof::timer;

namespace {

std::uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

/// Spins (no sleep) for at least `ns` of CLOCK_MONOTONIC.
void busy_wait_ns(std::uint64_t ns) {
  const std::uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
  while (clock_ns(CLOCK_MONOTONIC) - t0 < ns) {
  }
}

void check_monotonic(int reads) {
  prof::Timestamp last = timer::now();
  int backwards = 0;
  for (int i = 0; i < reads; ++i) {
    prof::Timestamp t = timer::now();
    if (t < last) ++backwards;
    last = t;
  }
  CHECK(backwards == 0);
}

}  // namespace

TEST_CASE("timer check_tsc gives a consistent verdict", "[timer]") {
  const timer::TscCheck c = timer::check_tsc(5000000);  // 5 ms
  INFO("clocksource_tsc=" << c.clocksource_tsc << " invariant=" << c.invariant << " ticks/s=" << c.ticks_per_second);
  CHECK(c.ticks_per_second >= 0);
  CHECK(c.usable() == (c.clocksource_tsc && c.invariant && c.ticks_per_second > 1e8 && c.ticks_per_second < 1e11));
  if (c.usable()) {
    CHECK(c.ticks_per_second >= 1e8);
    CHECK(c.ticks_per_second <= 1e11);
    // A second calibration agrees within a generous margin (frequency is constant).
    const timer::TscCheck d = timer::check_tsc(5000000);
    CHECK(d.usable());
    CHECK(d.ticks_per_second > 0.8 * c.ticks_per_second);
    CHECK(d.ticks_per_second < 1.25 * c.ticks_per_second);
  }
}

TEST_CASE("timer init(2) uses clock_gettime", "[timer]") {
  CHECK(timer::init(2) == nullptr);
  CHECK(timer::kind() == timer::Kind::ClockGettime);
  CHECK_FALSE(timer::g_use_tsc);
  CHECK(std::string(timer::name()) == "clock_gettime");
  CHECK(timer::resolution() == 1000000000u);

  // now() is CLOCK_MONOTONIC in nanoseconds.
  const std::uint64_t before = clock_ns(CLOCK_MONOTONIC);
  const prof::Timestamp t = timer::now();
  const std::uint64_t after = clock_ns(CLOCK_MONOTONIC);
  CHECK(t >= before);
  CHECK(t <= after);
  CHECK(timer::start() <= t);

  check_monotonic(100000);

  CHECK(timer::ticks_to_ns(0) == 0.0);
  CHECK(timer::ticks_to_ns(123456789) == Approx(123456789.0));
  // Nothing to recalibrate: finalize never warns.
  busy_wait_ns(1000000);
  CHECK(timer::finalize() == nullptr);
  CHECK(timer::resolution() == 1000000000u);
}

TEST_CASE("timer init(0) picks the TSC exactly when it is usable", "[timer]") {
  const bool usable = timer::check_tsc(5000000).usable();
  CHECK(timer::init(0) == nullptr);  // auto never warns
  INFO("check_tsc usable=" << usable << ", chosen " << timer::name());
  CHECK((timer::kind() == timer::Kind::Tsc) == usable);
  CHECK(timer::g_use_tsc == usable);
  CHECK(std::string(timer::name()) == (usable ? "tsc" : "clock_gettime"));
  if (usable) {
    CHECK(timer::resolution() >= 100000000u);
    CHECK(timer::resolution() <= 100000000000u);
  } else {
    CHECK(timer::resolution() == 1000000000u);
  }
  check_monotonic(100000);
}

TEST_CASE("timer init(1) warns exactly when the TSC is unusable", "[timer]") {
  const bool usable = timer::check_tsc(5000000).usable();
  const char* warning = timer::init(1);
  if (usable) {
    CHECK(warning == nullptr);
    CHECK(timer::kind() == timer::Kind::Tsc);
  } else {
    REQUIRE(warning != nullptr);
    CHECK(std::strstr(warning, "PROF_TIMER=tsc") == warning);
    CHECK(timer::kind() == timer::Kind::ClockGettime);
  }
  timer::init(2);
}

TEST_CASE("timer ticks_to_ns agrees with the resolution", "[timer]") {
  const char* choice = GENERATE("auto", "clock_gettime");
  CAPTURE(choice);
  timer::init(std::strcmp(choice, "auto") == 0 ? 0 : 2);
  const double res = static_cast<double>(timer::resolution());
  REQUIRE(res > 0);
  // One second of ticks is one second; rounding of the resolution is at most half a tick/s.
  CHECK(timer::ticks_to_ns(timer::resolution()) == Approx(1e9).epsilon(1e-6));
  CHECK(timer::ticks_to_ns(static_cast<std::uint64_t>(res / 1000)) == Approx(1e6).epsilon(1e-6));

  // A measured interval in ticks converts to about the nanoseconds CLOCK_MONOTONIC saw.
  const std::uint64_t n0 = clock_ns(CLOCK_MONOTONIC);
  const prof::Timestamp t0 = timer::now();
  busy_wait_ns(20000000);  // 20 ms
  const prof::Timestamp t1 = timer::now();
  const std::uint64_t n1 = clock_ns(CLOCK_MONOTONIC);
  const double ns = timer::ticks_to_ns(t1 - t0);
  CHECK(ns >= 0.8 * 20000000);
  CHECK(ns <= 3.0 * static_cast<double>(n1 - n0));
  timer::init(2);
}

TEST_CASE("timer realtime_ns maps the start to the wall clock", "[timer]") {
  const char* choice = GENERATE("auto", "clock_gettime");
  CAPTURE(choice);
  timer::init(std::strcmp(choice, "auto") == 0 ? 0 : 2);
  const std::uint64_t now_real = clock_ns(CLOCK_REALTIME);
  const std::uint64_t start_real = timer::realtime_ns(timer::start());
  const double diff = std::fabs(static_cast<double>(now_real) - static_cast<double>(start_real));
  CHECK(diff < 5e9);
  // Later timestamps map to later wall-clock times, one second of ticks to about a second.
  const std::uint64_t later = timer::realtime_ns(timer::start() + timer::resolution());
  CHECK(later > start_real);
  CHECK(static_cast<double>(later - start_real) == Approx(1e9).epsilon(1e-3));
  timer::init(2);
}

TEST_CASE("timer finalize after a run returns nothing or the drift warning", "[timer]") {
  timer::init(0);
  const bool tsc = timer::kind() == timer::Kind::Tsc;
  busy_wait_ns(30000000);  // 30 ms: more than the 10 ms finalize needs to re-measure the rate
  const char* warning = timer::finalize();
  INFO("timer " << timer::name() << ", warning: " << (warning ? warning : "(none)"));
  if (warning) {
    CHECK(tsc);  // only a TSC can drift
    CHECK(std::strstr(warning, "TSC rate") != nullptr);
    CHECK(std::strstr(warning, "PROF_TIMER=clock_gettime") != nullptr);
  }
  // The re-measured rate stays plausible.
  if (tsc) {
    CHECK(timer::resolution() >= 100000000u);
    CHECK(timer::resolution() <= 100000000000u);
  } else {
    CHECK(timer::resolution() == 1000000000u);
  }
  check_monotonic(1000);
  timer::init(2);
}
