// SPDX-License-Identifier: BSD-3-Clause
// Per-region totals (PROF_SUMMARY, prof-score) on hand-made call trees with known values.
#include <catch2/catch.hpp>

#include <cmath>

#include "measurement/profiling/call_tree.hpp"
#include "measurement/profiling/summary.hpp"

namespace summary = prof::summary;
using prof::cube4::CallNode;

namespace {

const summary::RegionTotals& row(const std::vector<summary::RegionTotals>& t, std::uint32_t region) {
  for (const auto& r : t)
    if (r.region == region) return r;
  FAIL("region " << region << " missing");
  return t.front();
}

}  // namespace

// Regions: 0 prog, 1 main, 2 rec, 3 leaf, 4 unused.
// cnodes: 0 prog; 1 prog/main; 2 main/rec; 3 main/rec/rec; 4 main/rec/rec/leaf; 5 main/leaf
TEST_CASE("summary: recursion counts inclusive time once, exclusive per call path", "[summary]") {
  const std::vector<CallNode> cn{{0, -1}, {1, 0}, {2, 1}, {2, 2}, {3, 3}, {3, 1}};
  // Two locations; location 1 only runs rec/rec/leaf (its roots have no visits).
  const std::vector<double> visits{1, 0, 1, 0, 2, 1, 4, 1, 4, 2, 3, 0};
  const std::vector<double> incl{10, 6, 9, 6, 5, 6, 3, 5, 1, 2, 2, 0};
  const std::vector<double> mn{10, 0, 9, 0, 1, 6, 0.5, 5, 0.1, 0.5, 0.2, 0};
  const std::vector<double> mx{10, 0, 9, 0, 4, 6, 1, 5, 0.4, 1.5, 1.2, 0};
  summary::Input in{&cn, 5, 2, &visits, &incl, &mn, &mx};

  const std::vector<double> excl = summary::exclusive_time(in);
  CHECK(excl[0] == Approx(1));   // prog, loc 0: 10 - 9
  CHECK(excl[1] == Approx(0));   // prog, loc 1: 6 - 6
  CHECK(excl[2] == Approx(2));   // main, loc 0: 9 - 5 - 2
  CHECK(excl[4] == Approx(2));   // rec, loc 0: 5 - 3
  CHECK(excl[6] == Approx(2));   // rec/rec, loc 0: 3 - 1

  const auto t = summary::by_region(in);
  REQUIRE(t.size() == 4);  // region 4 never occurs
  const auto& rec = row(t, 2);
  CHECK(rec.visits == Approx(2 + 1 + 4 + 1));
  CHECK(rec.incl == Approx(5 + 6));  // outermost path only: rec/rec is inside rec
  CHECK(rec.excl == Approx((5 - 3) + (6 - 5) + (3 - 1) + (5 - 2)));
  CHECK(rec.min == Approx(0.5));
  CHECK(rec.max == Approx(6));
  const auto& leaf = row(t, 3);
  CHECK(leaf.visits == Approx(4 + 2 + 3));
  CHECK(leaf.incl == Approx(1 + 2 + 2));
  CHECK(leaf.excl == Approx(leaf.incl));
  CHECK(leaf.min == Approx(0.1));
  CHECK(leaf.max == Approx(1.5));
  const auto& prog = row(t, 0);
  CHECK(prog.visits == Approx(1));
  CHECK(prog.min == Approx(10));  // location 1's root has no visit: not its 0

  double all = 0;
  for (const auto& r : t) all += r.excl;
  CHECK(all == Approx(10 + 6));  // the roots' inclusive times
}

TEST_CASE("summary: the table is sorted by exclusive time and cut at top", "[summary]") {
  std::vector<summary::RegionTotals> t(3);
  t[0] = {0, 1, 10, 1, 10, 10};
  t[1] = {1, 4, 9, 6, 1, 3};
  t[2] = {2, 2, 3, 3, 1, 2};
  const std::string out = summary::table(t, {"prog", "main", "leaf"}, 2, 1);
  INFO(out);
  CHECK(out.rfind("prof: summary: 10.000000 s in 3 regions on 1 location (exclusive time, summed over threads); top 2:\n", 0) == 0);
  const auto main_at = out.find("  main\n"), leaf_at = out.find("  leaf\n");
  CHECK(main_at != std::string::npos);
  CHECK(leaf_at != std::string::npos);
  CHECK(main_at < leaf_at);
  CHECK(out.find("prog") == std::string::npos);  // cut
  CHECK(out.find(" 60.00% ") != std::string::npos);
  CHECK(out.find("     1500000.000  ") != std::string::npos);  // main: 6 s / 4 visits, in us
}

TEST_CASE("summary: min and max come from visited call paths only", "[summary]") {
  // Regions 0 root, 1 f. f's first call path has no visit anywhere; its second has.
  const std::vector<CallNode> cn{{0, -1}, {1, 0}, {1, 1}};
  const std::vector<double> visits{1, 0, 0, 0, 3, 2};
  const std::vector<double> incl{5, 1, 2, 1, 2, 1};
  const std::vector<double> mn{5, 0, 0, 0, 0.4, 0.3};
  const std::vector<double> mx{5, 0, 0, 0, 0.9, 0.7};
  summary::Input in{&cn, 2, 2, &visits, &incl, &mn, &mx};
  const auto t = summary::by_region(in);
  const auto& f = row(t, 1);
  CHECK(f.min == Approx(0.3));
  CHECK(f.max == Approx(0.9));
  CHECK(f.incl == Approx(2 + 1));  // outermost call path only
}

TEST_CASE("DistinctCounter: distinct keys within a few per cent, duplicates and merges do not count twice", "[summary]") {
  auto mix = [](std::uint64_t k) {
    k = (k ^ (k >> 30)) * 0xBF58476D1CE4E5B9ull;
    k = (k ^ (k >> 27)) * 0x94D049BB133111EBull;
    return k ^ (k >> 31);
  };
  for (std::uint64_t n : {10ull, 1000ull, 50000ull, 1000000ull}) {
    prof::DistinctCounter a, b;
    for (std::uint64_t i = 0; i < n; ++i) {
      a.add(mix(i));
      a.add(mix(i));  // a duplicate
      if (i % 2) b.add(mix(i));
    }
    INFO("n = " << n << ", estimate " << a.estimate());
    CHECK(std::abs(a.estimate() - static_cast<double>(n)) <= 0.05 * static_cast<double>(n) + 1);
    prof::DistinctCounter merged = b;
    merged.merge(a);
    CHECK(merged.estimate() == a.estimate());  // b's keys are a subset of a's
  }
  prof::DistinctCounter empty;
  CHECK(empty.estimate() == 0.0);
}
