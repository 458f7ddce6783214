// SPDX-License-Identifier: BSD-3-Clause
// The profile's folded_visits metric end to end: calls below PROF_PROFILING_MAX_CALLPATH_DEPTH
// on a hand-made Location (events.hpp), build_profile, cube4::write, then the CUBE4 reader of
// the tools and the independent cubex_check.py read the counts back per call path at the cutoff.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "measurement/definitions/regions.hpp"
#include "measurement/events.hpp"
#include "measurement/location.hpp"
#include "measurement/profiling/cube4_writer.hpp"
#include "measurement/profiling/profile_writer.hpp"
#include "measurement/timer.hpp"
#include "test_support.hpp"
#include "tools/cube4_reader.hpp"

using prof::Location;
using prof::RegionId;
namespace cube4 = prof::cube4;

namespace {

struct ProfiledLocation {
  std::vector<char> arena = std::vector<char>(1 << 20);
  Location loc;
  explicit ProfiledLocation(std::uint32_t max_depth) {
    prof::timer::init(2);
    prof::g_recording = true;
    loc.profiling = true;
    loc.profile_max_depth = max_depth;
    loc.root_node.region = region("prog", prof::regions::Paradigm::Measurement);
    loc.arena.pos = arena.data();
    loc.arena.end = arena.data() + arena.size();
    loc.name = "Master thread";
  }
  ~ProfiledLocation() {
    std::free(loc.frames);
    delete loc.too_deep;
  }
  static RegionId region(const char* name, prof::regions::Paradigm p = prof::regions::Paradigm::Compiler) {
    prof::regions::RegionDef d;
    d.name = d.canonical = name;
    d.paradigm = p;
    return prof::regions::define(d);
  }
  void recurse(RegionId r, int n) {
    prof::enter(&loc, r, 0);
    if (n > 1) recurse(r, n - 1);
    prof::leave(&loc, r, 0);
  }
};

/// The call path of `names` below the root (cnode ids of `p`), or -1.
std::int64_t path(const cube4::ReadProfile& p, const std::vector<std::string>& names) {
  std::int64_t at = 0;
  for (const std::string& n : names) {
    std::int64_t next = -1;
    for (std::size_t c = 0; c < p.cnodes.size(); ++c)
      if (p.cnodes[c].parent == at && p.regions[p.cnodes[c].region].name == n) next = static_cast<std::int64_t>(c);
    if (next < 0) return -1;
    at = next;
  }
  return at;
}

}  // namespace

TEST_CASE("folded_visits: visits below the depth limit per call path at the cutoff, written and read back", "[cube4_folded][shared-tools]") {
  ProfiledLocation t(3);  // root 0, main 1, then two levels
  const RegionId main_r = ProfiledLocation::region("main"), a = ProfiledLocation::region("fa"),
                 b = ProfiledLocation::region("fb");
  prof::enter(&t.loc, main_r, 0);
  // main/fa/fa is the cutoff: 10 calls deep leaves 8 below it; twice.
  t.recurse(a, 10);
  t.recurse(a, 10);
  // Alternating cutoff paths (main/fb/fa and main/fa/fa): the one-entry cache switches each time.
  for (int i = 0; i < 3; ++i) {
    prof::enter(&t.loc, b, 0);
    t.recurse(a, 4);  // fb/fa at the cutoff, 3 below
    prof::leave(&t.loc, b, 0);
    t.recurse(a, 3);  // fa/fa at the cutoff, 1 below
  }
  prof::leave(&t.loc, main_r, 0);
  REQUIRE(t.loc.depth == 0);
  CHECK(t.loc.profile_too_deep == 2 * 8 + 3 * (3 + 1));

  cube4::Profile p;
  std::string err;
  std::vector<Location*> locs{&t.loc};
  REQUIRE(prof::build_profile(locs, prof::timer::now(), &p, &err));
  REQUIRE(p.extra_metrics.size() == 1);
  CHECK(p.extra_metrics[0].uniq_name == "folded_visits");

  prof_test::TempDir dir("prof_test_folded_");
  const std::string file = dir.path + "/profile.cubex";
  REQUIRE(cube4::write(file, p, &err));
  cube4::ReadProfile r;
  REQUIRE(cube4::read(file, &r, &err));
  const cube4::ReadMetric* folded = r.metric("folded_visits");
  REQUIRE(folded != nullptr);
  CHECK(folded->kind == "EXCLUSIVE");
  CHECK(folded->dtype == "UINT64");
  CHECK(folded->uom == "occ");
  const std::int64_t aa = path(r, {"main", "fa", "fa"}), ba = path(r, {"main", "fb", "fa"});
  REQUIRE(aa >= 0);
  REQUIRE(ba >= 0);
  CHECK(path(r, {"main", "fa", "fa", "fa"}) == -1);  // nothing below the cutoff
  CHECK(folded->values[static_cast<std::size_t>(aa)] == 2 * 8 + 3 * 1);
  CHECK(folded->values[static_cast<std::size_t>(ba)] == 3 * 3);
  double sum = 0;
  for (double v : folded->values) sum += v;
  CHECK(sum == static_cast<double>(t.loc.profile_too_deep));
  // The cutoff paths' own visits do not hold the folded ones.
  CHECK(r.metric("visits")->values[static_cast<std::size_t>(aa)] == 2 + 3);

  // The independent reader accepts the file and reads the same values.
  const auto c = prof_test::run("/usr/bin/python3 '" + std::string(PROF_SHARED_TOOLS) + "/cubex_check.py' '" + file + "'", "");
  INFO(c.out);
  CHECK(c.rc == 0);
}

TEST_CASE("folded_visits: no metric when nothing was folded", "[cube4_folded]") {
  ProfiledLocation t(100);
  const RegionId main_r = ProfiledLocation::region("main"), a = ProfiledLocation::region("fa");
  prof::enter(&t.loc, main_r, 0);
  t.recurse(a, 20);
  prof::leave(&t.loc, main_r, 0);
  cube4::Profile p;
  std::string err;
  std::vector<Location*> locs{&t.loc};
  REQUIRE(prof::build_profile(locs, prof::timer::now(), &p, &err));
  CHECK(p.extra_metrics.empty());
  CHECK(t.loc.too_deep == nullptr);
}

TEST_CASE("sampled frames: their samples' time, scaled down where it exceeds the caller's", "[cube4_sampled]") {
  ProfiledLocation t(100);
  const RegionId main_r = ProfiledLocation::region("main"), short_r = ProfiledLocation::region("short_fn"),
                 work_r = ProfiledLocation::region("work", prof::regions::Paradigm::Sampling),
                 copy_r = ProfiledLocation::region("copy", prof::regions::Paradigm::Sampling);
  prof::enter(&t.loc, main_r, 0);
  prof::enter(&t.loc, short_r, 0);
  prof::leave(&t.loc, short_r, 0);  // a few microseconds measured
  const std::uint64_t t0 = prof::timer::now();
  while (prof::timer::ticks_to_ns(prof::timer::now() - t0) < 30000000) {}  // main: at least 30 ms
  prof::leave(&t.loc, main_r, 0);
  prof::ProfileNode* main_n = prof::child_of(&t.loc.root_node, main_r);
  prof::ProfileNode* short_n = prof::child_of(main_n, short_r);
  REQUIRE(short_n != nullptr);
  // Samples: 10 ms in work() under main (fits), 5 ms in copy() under short_fn (it measured µs).
  prof::ProfileNode* work_n = prof::detail::attach_child(&t.loc, main_n, work_r);
  prof::ProfileNode* copy_n = prof::detail::attach_child(&t.loc, short_n, copy_r);
  REQUIRE((work_n && copy_n));
  std::unordered_map<const prof::ProfileNode*, std::uint64_t> hits{{work_n, 10}, {copy_n, 5}}, ns{{work_n, 10000000}, {copy_n, 5000000}};
  t.loc.hits = &hits;
  t.loc.sampled_ns = &ns;

  cube4::Profile p;
  std::string err;
  std::vector<Location*> locs{&t.loc};
  const bool built = prof::build_profile(locs, prof::timer::now(), &p, &err);
  t.loc.hits = nullptr;
  t.loc.sampled_ns = nullptr;
  REQUIRE(built);
  const auto at = [&](const std::vector<std::string>& names) {
    std::int64_t c = 0;
    for (const std::string& n : names) {
      std::int64_t next = -1;
      for (std::size_t i = 0; i < p.cnodes.size(); ++i)
        if (p.cnodes[i].parent == c && p.regions[p.cnodes[i].region].name == n) next = static_cast<std::int64_t>(i);
      REQUIRE(next >= 0);
      c = next;
    }
    return static_cast<std::size_t>(c);
  };
  // One location: time_incl is per call path.
  CHECK(p.time_incl[at({"main", "work"})] == Approx(0.010).epsilon(0.01));
  const double short_incl = p.time_incl[at({"main", "short_fn"})], copy_incl = p.time_incl[at({"main", "short_fn", "copy"})];
  CHECK(copy_incl > 0);
  CHECK(copy_incl <= short_incl);
  CHECK(short_incl < 0.001);
  // No exclusive time is negative: inclusive at least the children's everywhere.
  for (std::size_t c = 0; c < p.cnodes.size(); ++c) {
    double children = 0;
    for (std::size_t k = 0; k < p.cnodes.size(); ++k)
      if (p.cnodes[k].parent == static_cast<std::int64_t>(c)) children += p.time_incl[k];
    INFO(p.regions[p.cnodes[c].region].name);
    CHECK(p.time_incl[c] >= children - 1e-12);
  }
  // The sampled_time metric keeps what the samples stand for, unscaled.
  for (const auto& m : p.extra_metrics)
    if (m.uniq_name == "sampled_time") CHECK(m.values[at({"main", "short_fn", "copy"})] == 5000000);
}
