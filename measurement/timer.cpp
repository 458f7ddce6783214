// SPDX-License-Identifier: BSD-3-Clause
// Timer selection and calibration. The TSC is used only when the kernel itself trusts it
// (clocksource "tsc"), CPUID reports an invariant TSC, and a calibration against
// CLOCK_MONOTONIC_RAW gives a plausible rate; the rate written to OTF2 is re-measured over
// the whole run at finalize.
#include "measurement/timer.hpp"

#include <cpuid.h>

#include <cmath>
#include <cstdio>
#include <cstring>

namespace prof::timer {

bool g_use_tsc = false;
Timestamp g_skew = 0;
bool g_plain_tsc = false;

Timestamp now_other() {
  if (g_use_tsc) return __rdtsc() + g_skew;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Timestamp>(ts.tv_sec) * 1000000000u + static_cast<Timestamp>(ts.tv_nsec) + g_skew;
}

namespace {
struct Anchor {
  Timestamp ticks = 0;
  std::uint64_t raw_ns = 0;
  std::uint64_t real_ns = 0;
};
Anchor g_begin, g_end;
double g_init_rate = 0;    // ticks per ns at init
double g_rate = 1.0;       // ticks per ns in use
Kind g_kind = Kind::ClockGettime;

std::uint64_t ns_of(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// A (ticks, raw ns) pair read as close together as possible: the tightest of a few tries.
void read_pair(Timestamp* ticks, std::uint64_t* raw_ns) {
  std::uint64_t best = ~0ull;
  for (int i = 0; i < 5; ++i) {
    Timestamp a = __rdtsc();
    std::uint64_t ns = ns_of(CLOCK_MONOTONIC_RAW);
    Timestamp b = __rdtsc();
    if (b - a < best) {
      best = b - a;
      *ticks = a + (b - a) / 2;
      *raw_ns = ns;
    }
  }
}

Anchor take_anchor() {
  Anchor a;
  if (g_kind == Kind::Tsc) {
    read_pair(&a.ticks, &a.raw_ns);
    a.ticks += g_skew;
  } else {
    a.raw_ns = ns_of(CLOCK_MONOTONIC_RAW);
    a.ticks = now();
  }
  a.real_ns = ns_of(CLOCK_REALTIME);
  return a;
}
}  // namespace

TscCheck check_tsc(std::uint64_t calibrate_ns) {
  TscCheck c;
  if (FILE* f = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r")) {
    char buf[64] = {0};
    if (std::fgets(buf, sizeof buf, f)) c.clocksource_tsc = std::strncmp(buf, "tsc", 3) == 0 && (buf[3] == '\n' || buf[3] == 0);
    std::fclose(f);
  }
  unsigned eax, ebx, ecx, edx;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx)) c.invariant = (edx >> 8) & 1u;
  Timestamp t0, t1;
  std::uint64_t n0, n1;
  read_pair(&t0, &n0);
  do {
    read_pair(&t1, &n1);
  } while (n1 - n0 < calibrate_ns);
  if (t1 > t0 && n1 > n0) c.ticks_per_second = static_cast<double>(t1 - t0) * 1e9 / static_cast<double>(n1 - n0);
  return c;
}

const char* init(std::uint64_t choice, Timestamp skew) {
  g_skew = skew;
  const char* warning = nullptr;
  g_kind = Kind::ClockGettime;
  if (choice != 2) {
    TscCheck c = check_tsc(1000000);  // 1 ms
    if (c.usable()) {
      g_kind = Kind::Tsc;
      g_init_rate = c.ticks_per_second / 1e9;
    } else if (choice == 1) {
      warning = c.clocksource_tsc ? "PROF_TIMER=tsc: the TSC is not invariant or failed calibration; using clock_gettime instead"
                                  : "PROF_TIMER=tsc: the kernel does not use the TSC as clocksource, so it is not trusted; using clock_gettime instead";
    }
  }
  g_use_tsc = g_kind == Kind::Tsc;
  g_plain_tsc = g_use_tsc && g_skew == 0;
  g_rate = g_use_tsc ? g_init_rate : 1.0;
  g_begin = take_anchor();
  return warning;
}

const char* finalize() {
  g_end = take_anchor();
  if (g_kind != Kind::Tsc) return nullptr;
  if (g_end.raw_ns > g_begin.raw_ns + 10000000 && g_end.ticks > g_begin.ticks) {  // at least 10 ms for a better rate
    double run_rate = static_cast<double>(g_end.ticks - g_begin.ticks) / static_cast<double>(g_end.raw_ns - g_begin.raw_ns);
    double drift = std::fabs(run_rate - g_init_rate) / g_init_rate;
    g_rate = run_rate;
    if (drift > 1e-3)
      return "the TSC rate measured over the run differs from the one at start by more than 0.1%; set PROF_TIMER=clock_gettime if timings look wrong";
  }
  return nullptr;
}

Kind kind() { return g_kind; }
const char* name() { return g_kind == Kind::Tsc ? "tsc" : "clock_gettime"; }
std::uint64_t resolution() { return static_cast<std::uint64_t>(std::llround(g_rate * 1e9)); }
Timestamp start() { return g_begin.ticks; }
std::uint64_t realtime_ns(Timestamp t) {
  double d = (static_cast<double>(t) - static_cast<double>(g_begin.ticks)) / g_rate;
  return g_begin.real_ns + static_cast<std::int64_t>(d);
}
double ticks_to_ns(std::uint64_t ticks) { return static_cast<double>(ticks) / g_rate; }

}  // namespace prof::timer
