// SPDX-License-Identifier: BSD-3-Clause
// prof-report --diff (tools/report_diff.cpp): the noise rule, the matching by name and the order.
#include <catch2/catch.hpp>

#include <string>

#include "tools/report_diff.hpp"

using prof::report::DiffOptions;
using prof::report::Experiment;
using prof::report::judge;
using prof::report::RegionFigures;
using prof::report::Spread;
using prof::report::Verdict;

namespace {

RegionFigures region(const std::string& name, double excl, unsigned locations = 1, double min = -1, double max = -1) {
  RegionFigures r;
  r.name = name;
  r.paradigm = "compiler";
  r.group = "USR";
  r.file = "prog.c";
  r.visits = 10;
  r.excl = r.incl = excl;
  r.locations = locations;
  r.mean = excl / locations;
  r.min = min >= 0 ? min : r.mean;
  r.max = max >= 0 ? max : r.mean;
  return r;
}

Experiment experiment(const std::string& dir, std::vector<RegionFigures> regions) {
  Experiment e;
  e.dir = dir;
  e.command = {"prog.x"};
  e.processes = e.threads = 1;
  for (const RegionFigures& r : regions) e.total_time_s += r.excl;
  e.regions = std::move(regions);
  return e;
}

Spread spread(double min, double mean, double max, unsigned n) {
  Spread s;
  s.known = n >= 2;
  s.min = min;
  s.mean = mean;
  s.max = max;
  s.n = n;
  return s;
}

}  // namespace

TEST_CASE("a change counts only beyond the threshold, the floor and the spread", "[report_diff]") {
  std::string why;
  const Spread none;
  SECTION("relative threshold") {
    CHECK(judge(1.0, 1.09, none, none, 10, 0.001, &why) == Verdict::Unchanged);
    CHECK(why == "within 10%");
    CHECK(judge(1.0, 1.11, none, none, 10, 0.001, &why) == Verdict::Regression);
    CHECK(judge(1.0, 0.89, none, none, 10, 0.001, &why) == Verdict::Improvement);
    CHECK(judge(1.0, 1.06, none, none, 5, 0.001, &why) == Verdict::Regression);
  }
  SECTION("absolute floor") {
    CHECK(judge(0.001, 0.0019, none, none, 10, 0.001, &why) == Verdict::Unchanged);
    CHECK(why == "change below the floor of 1.000 ms");
    CHECK(judge(0.001, 0.0021, none, none, 10, 0.001, &why) == Verdict::Regression);
  }
  SECTION("per-location spread of either run") {
    // 2 locations each; A: 0.4..0.6 s per location; B's mean 0.55 s lies inside A's spread.
    CHECK(judge(1.0, 1.1 * 1.0 + 0.001, spread(0.4, 0.5, 0.6, 2), spread(0.5, 0.55, 0.6, 2), 10, 0.001, &why) ==
          Verdict::Unchanged);
    CHECK(why.find("inside A's spread") != std::string::npos);
    // B's mean above A's max, but A's mean inside B's spread (B very unbalanced).
    CHECK(judge(1.0, 1.3, spread(0.45, 0.5, 0.55, 2), spread(0.2, 0.65, 1.1, 2), 10, 0.001, &why) == Verdict::Unchanged);
    CHECK(why.find("inside B's spread") != std::string::npos);
    // Balanced runs, 20 % apart: outside both spreads.
    CHECK(judge(1.0, 1.2, spread(0.49, 0.5, 0.51, 2), spread(0.59, 0.6, 0.61, 2), 10, 0.001, &why) == Verdict::Regression);
    // A single location: no spread, threshold and floor decide.
    CHECK(judge(1.0, 1.2, spread(1.0, 1.0, 1.0, 1), spread(1.2, 1.2, 1.2, 1), 10, 0.001, &why) == Verdict::Regression);
  }
}

TEST_CASE("regions match by name and paradigm, regressions first by time lost", "[report_diff]") {
  const Experiment a = experiment("a", {region("big", 10.0), region("slower", 1.0), region("faster", 2.0),
                                        region("gone", 0.5), region("noise", 3.0), region("lost_more", 4.0)});
  const Experiment b = experiment("b", {region("noise", 3.1), region("big", 10.0), region("slower", 1.5), region("faster", 1.0),
                                        region("new", 0.7), region("lost_more", 5.0)});
  const prof::report::Diff d = prof::report::diff(a, b, DiffOptions{});
  REQUIRE(d.sections.size() == 2);  // run, regions: no GPU section without GPU rows
  CHECK(d.sections[0].name == "run");
  const auto& rows = d.sections[1].rows;
  REQUIRE(rows.size() == 7);
  CHECK(rows[0].key == "lost_more");
  CHECK(rows[0].verdict == Verdict::Regression);
  CHECK(rows[1].key == "slower");
  CHECK(rows[1].verdict == Verdict::Regression);
  CHECK(rows[2].key == "faster");
  CHECK(rows[2].verdict == Verdict::Improvement);
  CHECK(rows[3].key == "new");
  CHECK(rows[3].verdict == Verdict::New);
  CHECK(rows[4].key == "gone");
  CHECK(rows[4].verdict == Verdict::Gone);
  CHECK(rows[5].key == "big");
  CHECK(rows[6].key == "noise");
  CHECK(d.count(Verdict::Regression) == 2);
  CHECK(d.differences.empty());
  // The same figures: nothing changed.
  const prof::report::Diff same = prof::report::diff(a, a, DiffOptions{});
  CHECK(same.count(Verdict::Regression) + same.count(Verdict::Improvement) + same.count(Verdict::New) + same.count(Verdict::Gone) == 0);
}

TEST_CASE("the diff says how the runs differ and adds a GPU section only with GPU rows", "[report_diff]") {
  Experiment a = experiment("a", {region("main", 1.0)});
  Experiment b = experiment("b", {region("main", 1.0)});
  b.command = {"prog.x", "--big"};
  b.config["PROF_TOTAL_MEMORY"] = "64M";
  a.config["PROF_EXPERIMENT_DIRECTORY"] = "a";
  RegionFigures k = region("kernel", 0.2);
  k.gpu = true;
  k.kind = "kernel";
  b.regions.push_back(k);
  b.gpu_time_s = 0.2;
  const prof::report::Diff d = prof::report::diff(a, b, DiffOptions{});
  REQUIRE(d.differences.size() == 2);
  CHECK(d.differences[0] == "arguments '' vs '--big'");
  CHECK(d.differences[1] == "PROF_TOTAL_MEMORY=(unset) vs 64M");
  REQUIRE(d.sections.size() == 3);
  CHECK(d.sections[2].name == "gpu");
  CHECK(d.sections[2].rows.at(0).verdict == Verdict::New);
  const std::string json = prof::report::diff_json(d);
  CHECK(json.find("\"diff_version\": 1") != std::string::npos);
  CHECK(prof::report::diff_text(d).find("A and B differ: arguments '' vs '--big'; PROF_TOTAL_MEMORY=(unset) vs 64M\n") !=
        std::string::npos);
}
