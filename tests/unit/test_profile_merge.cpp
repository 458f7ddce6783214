// SPDX-License-Identifier: BSD-3-Clause
// prof::profile_merge: one job profile from per-process profiles (merge), ordered by node.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "measurement/profiling/profile_merge.hpp"

using prof::cube4::Profile;

namespace {

// A process's profile: call paths root -> main -> `leaf`, one column per thread; visits of cell
// (cnode c, thread t) = 100 * rank + 10 * c + t, so that every cell says where it came from.
Profile process(int rank, const std::string& node, const std::string& leaf, int threads) {
  Profile p;
  p.regions = {{"prog", "", "", -1, -1, "", ""}, {"main", "", "", -1, -1, "", ""}, {leaf, "", "", -1, -1, "", ""}};
  p.cnodes = {{0, -1}, {1, 0}, {2, 1}};
  p.node = node;
  p.process = "MPI Rank " + std::to_string(rank);
  p.rank = rank;
  for (int t = 0; t < threads; ++t) p.locations.push_back(t ? "Pthread thread " + std::to_string(t) : "Master thread");
  for (std::size_t c = 0; c < p.cnodes.size(); ++c)
    for (int t = 0; t < threads; ++t) {
      p.visits.push_back(static_cast<std::uint64_t>(100 * rank + 10 * static_cast<int>(c) + t));
      p.time_incl.push_back(1.0 * rank);
      p.min_time.push_back(0.0);
      p.max_time.push_back(0.0);
    }
  prof::cube4::ExtraMetric bytes;
  bytes.uniq_name = "bytes_sent";
  bytes.values = p.visits;
  p.extra_metrics.push_back(bytes);
  return p;
}

std::uint64_t cell(const Profile& p, const std::vector<std::uint64_t>& v, const std::string& leaf, std::size_t col) {
  for (std::size_t c = 0; c < p.cnodes.size(); ++c)
    if (p.regions[p.cnodes[c].region].name == leaf) return v[c * p.locations.size() + col];
  FAIL("no call path to " << leaf);
  return 0;
}

}  // namespace

TEST_CASE("profile_merge: the union call tree, the columns appended per process, then ordered by node") {
  // Ranks placed round-robin on two hosts: 0 and 2 on A, 1 on B (with a second thread).
  Profile job = process(0, "A", "solve", 1);
  prof::profile_merge::merge(job, process(1, "B", "exchange", 2));
  prof::profile_merge::merge(job, process(2, "A", "solve", 1));
  REQUIRE(job.cnodes.size() == 4);  // prog, main, solve, exchange
  REQUIRE(job.locations.size() == 4);
  CHECK(job.location_group == std::vector<std::uint32_t>{0, 1, 1, 2});
  CHECK(cell(job, job.visits, "exchange", 2) == 121);  // rank 1, thread 1
  CHECK(cell(job, job.visits, "solve", 3) == 220);     // rank 2
  CHECK(cell(job, job.visits, "exchange", 0) == 0);    // rank 0 never called it

  prof::profile_merge::order_by_node(job);
  REQUIRE(job.groups.size() == 3);
  CHECK(job.groups[0].rank == 0);
  CHECK(job.groups[1].rank == 2);
  CHECK(job.groups[2].rank == 1);
  CHECK(job.groups[1].node == "A");
  CHECK(job.location_group == std::vector<std::uint32_t>{0, 1, 2, 2});
  CHECK(job.locations == std::vector<std::string>{"Master thread", "Master thread", "Master thread", "Pthread thread 1"});
  // Every cell moved with its column, in every metric.
  CHECK(cell(job, job.visits, "solve", 0) == 20);
  CHECK(cell(job, job.visits, "solve", 1) == 220);
  CHECK(cell(job, job.visits, "exchange", 2) == 120);
  CHECK(cell(job, job.visits, "exchange", 3) == 121);
  CHECK(cell(job, job.extra_metrics[0].values, "exchange", 3) == 121);
  CHECK(cell(job, job.extra_metrics[0].values, "solve", 1) == 220);
  for (std::size_t c = 0; c < job.cnodes.size(); ++c) CHECK(job.time_incl[c * 4 + 1] == (c < 2 || job.regions[job.cnodes[c].region].name == "solve" ? 2.0 : 0.0));

  // Already in node order: nothing moves.
  const Profile before = job;
  prof::profile_merge::order_by_node(job);
  CHECK(job.visits == before.visits);
  CHECK(job.location_group == before.location_group);
}
