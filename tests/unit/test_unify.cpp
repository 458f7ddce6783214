// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of prof::unify::unify() over an in-process fake Mpp (one std::thread per rank).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "measurement/mpp.hpp"
#include "measurement/unify.hpp"

using prof::comms::CommDef;
using prof::comms::Kind;
using prof::regions::Paradigm;
using prof::regions::RegionDef;
using prof::regions::Role;
using prof::unify::LocationPart;
using prof::unify::ProcessPart;
using prof::unify::Result;

namespace {

/// What all fake ranks share. Every wait gives up after a timeout, so a broken exchange fails
/// the test instead of hanging it.
struct World {
  explicit World(std::uint32_t n) : size(n) {}
  const std::uint32_t size;
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::deque<std::vector<char>>> mail;  // (src, dest)
  std::map<std::uint64_t, std::vector<char>> bcasts;  // payload of the k-th bcast
  std::uint32_t barrier_waiting = 0;
  std::uint64_t barrier_generation = 0;
};

constexpr auto kTimeout = std::chrono::seconds(20);

class FakeMpp final : public prof::Mpp {
 public:
  FakeMpp(World& w, std::uint32_t rank) : w_(w), rank_(rank) {}
  std::uint32_t rank() const override { return rank_; }
  std::uint32_t size() const override { return w_.size; }
  const char* paradigm() const override { return "MPI"; }
  bool arrive(std::string*) override { return true; }  // unify() does not ask
  bool sync_clock(std::uint64_t*, std::int64_t*) override { return false; }  // nor this
  bool barrier() override {
    std::unique_lock<std::mutex> lock(w_.mu);
    const std::uint64_t gen = w_.barrier_generation;
    if (++w_.barrier_waiting == w_.size) {
      w_.barrier_waiting = 0;
      ++w_.barrier_generation;
      w_.cv.notify_all();
      return true;
    }
    return w_.cv.wait_for(lock, kTimeout, [&] { return w_.barrier_generation != gen; });
  }
  bool bcast(void* data, std::uint64_t bytes, std::uint32_t root) override {
    std::unique_lock<std::mutex> lock(w_.mu);
    const std::uint64_t k = bcast_calls_++;
    if (rank_ == root) {
      const char* c = static_cast<const char*>(data);
      w_.bcasts[k].assign(c, c + bytes);
      w_.cv.notify_all();
      return true;
    }
    if (!w_.cv.wait_for(lock, kTimeout, [&] { return w_.bcasts.count(k) != 0; })) return false;
    const std::vector<char>& got = w_.bcasts[k];
    if (got.size() != bytes) return false;
    if (bytes) std::memcpy(data, got.data(), bytes);
    return true;
  }
  // Over the mailboxes (FIFO per pair of ranks, like MPI's non-overtaking rule).
  bool gatherv(const void* in, std::uint64_t in_bytes, void* out, const std::uint64_t* out_bytes,
               std::uint32_t root) override {
    if (rank_ != root) return send(root, in, in_bytes);
    char* o = static_cast<char*>(out);
    for (std::uint32_t r = 0; r < w_.size; o += out_bytes[r], ++r) {
      std::vector<char> got;
      if (r == root) got.assign(static_cast<const char*>(in), static_cast<const char*>(in) + in_bytes);
      else if (!recv(r, &got)) return false;
      if (got.size() != out_bytes[r]) return false;
      if (!got.empty()) std::memcpy(o, got.data(), got.size());
    }
    return true;
  }
  // unify() does not scatter; the fake does not implement it.
  bool scatterv(const void*, const std::uint64_t*, void*, std::uint64_t, std::uint32_t) override { return false; }
  bool send(std::uint32_t dest, const void* data, std::uint64_t bytes) override {
    if (dest >= w_.size) return false;
    const char* c = static_cast<const char*>(data);
    std::lock_guard<std::mutex> lock(w_.mu);
    w_.mail[{rank_, dest}].emplace_back(c, c + bytes);
    w_.cv.notify_all();
    return true;
  }
  bool recv(std::uint32_t src, std::vector<char>* out) override {
    if (src >= w_.size) return false;
    std::unique_lock<std::mutex> lock(w_.mu);
    auto& box = w_.mail[{src, rank_}];
    if (!w_.cv.wait_for(lock, kTimeout, [&] { return !box.empty(); })) return false;
    *out = std::move(box.front());
    box.pop_front();
    return true;
  }

 private:
  World& w_;
  const std::uint32_t rank_;
  std::uint64_t bcast_calls_ = 0;
};

struct Input {
  ProcessPart self;
  std::vector<RegionDef> regions;
  std::vector<CommDef> comms;
};

RegionDef region(std::string name, std::string file, int line, Paradigm p = Paradigm::Compiler,
                 Role role = Role::Function) {
  return RegionDef{std::move(name), "", std::move(file), line, -1, p, role};
}

CommDef comm(Kind kind, std::uint32_t key_rank, std::uint64_t key_serial, std::string name,
             std::vector<std::uint32_t> members, std::uint32_t parent = prof::comms::kNoComm) {
  return CommDef{kind, key_rank, key_serial, std::move(name), std::move(members), parent};
}

std::string describe(const RegionDef& r) {
  return r.name + "|" + r.file + "|" + std::to_string(r.begin_line) + "|" +
         std::to_string(static_cast<int>(r.paradigm)) + "|" + std::to_string(static_cast<int>(r.role));
}

std::string describe(const CommDef& c) {
  std::string s = std::to_string(static_cast<int>(c.kind)) + "|" + std::to_string(c.key_rank) + "|" +
                  std::to_string(c.key_serial) + "|" + c.name + "|";
  for (std::uint32_t m : c.members) s += std::to_string(m) + ",";
  return s;
}

std::string describe(const ProcessPart& p) {
  std::string s = std::to_string(p.rank) + "|" + p.host + "|" + std::to_string(p.start) + "|" +
                  std::to_string(p.end) + "|";
  for (const auto& l : p.locations)
    s += std::to_string(l.id) + ":" + l.name + ":" + std::to_string(l.events) + ":" + std::to_string(l.type) + ":" + l.group + ",";
  return s;
}

constexpr std::uint32_t kPrivate = 4;  // world ranks holding the Mpi communicator: 0, 2, 4

// Rank r of n: the shared regions rotated by r with its own one in between; the thread
// contingent, World and Self (their order alternating), the Mpi comm of ranks {0,2,4} and, on
// ranks 2 and 4, its child of ranks {2,4}. Starts and ends chosen so rank 0 holds neither extreme.
Input make_input(std::uint32_t r, std::uint32_t n) {
  Input in;
  std::vector<RegionDef> shared = {
      region("main", "a.c", 10), region("foo", "a.c", 20), region("foo", "b.c", 20),
      region("MPI_Send", "", -1, Paradigm::Mpi, Role::Point2Point),
      region("MPI_Send", "", -1, Paradigm::Mpi, Role::Wrapper), region("phase", "u.c", 7, Paradigm::User)};
  std::rotate(shared.begin(), shared.begin() + r % shared.size(), shared.end());
  in.regions = shared;
  in.regions.insert(in.regions.begin() + r % (shared.size() + 1),
                    region("only_on_rank_" + std::to_string(r), "r.c", static_cast<int>(r)));
  std::vector<std::uint32_t> world, priv, child;
  for (std::uint32_t i = 0; i < n; ++i) world.push_back(i);
  for (std::uint32_t i = 0; i <= kPrivate && i < n; i += 2) priv.push_back(i);
  for (std::uint32_t i = 2; i <= kPrivate && i < n; i += 2) child.push_back(i);
  in.comms.push_back(comm(Kind::Threads, 0, 0, "threads", {}));
  CommDef w = comm(Kind::World, 0, 0, "MPI_COMM_WORLD", world), s = comm(Kind::Self, 0, 0, "MPI_COMM_SELF", {});
  in.comms.push_back(r % 2 ? s : w);
  in.comms.push_back(r % 2 ? w : s);
  if (r % 2 == 0 && r <= kPrivate) {
    const auto parent = static_cast<std::uint32_t>(in.comms.size());
    in.comms.push_back(comm(Kind::Mpi, 0, 1, "even", priv));
    if (r != 0) in.comms.push_back(comm(Kind::Mpi, 2, 1, "even_child", child, parent));
  }
  in.self.rank = r;
  in.self.host = "node" + std::to_string(r / 2);
  in.self.start = 5000 + ((r + 1) % n) * 13;
  in.self.end = 9000 + ((r + 2) % n) * 17;
  for (std::uint64_t i = 0; i <= r % 3; ++i)
    in.self.locations.push_back(i == 2 ? LocationPart{(i << 32) | r, "CUDA[0:7]", 100 * i + r, 1, "CUDA Context 1"}
                                       : LocationPart{(i << 32) | r, "thread " + std::to_string(i), 100 * i + r, 0, ""});
  return in;
}

/// Runs unify() on n fake ranks; every rank's Result, checking that each succeeded.
std::vector<Result> run_ranks(std::uint32_t n, std::vector<Input>& inputs) {
  World world(n);
  std::vector<Result> results(n);
  std::vector<std::string> errors(n);
  std::vector<char> ok(n, 0);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      FakeMpp mpp(world, r);
      ok[r] = prof::unify::unify(&mpp, inputs[r].self, inputs[r].regions, inputs[r].comms, &results[r], &errors[r]);
    });
  for (auto& t : threads) t.join();
  for (std::uint32_t r = 0; r < n; ++r) {
    INFO("rank " << r << " of " << n << ": " << errors[r]);
    REQUIRE(ok[r]);
  }
  return results;
}

const std::uint32_t kSizes[] = {1, 2, 3, 4, 5, 7, 8};

/// Rank r's mapping tables (`mine`) send each of its local regions and communicators to a global
/// definition (`g`) equal to it; a communicator's parent maps to its parent, which comes first.
void check_maps(const Result& g, const Result& mine, const Input& in, std::uint32_t r) {
  REQUIRE(mine.region_map.size() == in.regions.size());
  for (std::size_t i = 0; i < in.regions.size(); ++i) {
    REQUIRE(mine.region_map[i] < g.regions.size());
    CHECK(describe(g.regions[mine.region_map[i]]) == describe(in.regions[i]));
  }
  REQUIRE(mine.comm_map.size() == in.comms.size());
  for (std::size_t i = 0; i < in.comms.size(); ++i) {
    CommDef want = in.comms[i];
    if (want.kind == Kind::Threads) want.key_rank = r;
    REQUIRE(mine.comm_map[i] < g.comms.size());
    const CommDef& got = g.comms[mine.comm_map[i]];
    CHECK(describe(got) == describe(want));
    if (want.parent == prof::comms::kNoComm) {
      CHECK(got.parent == prof::comms::kNoComm);
    } else {
      CHECK(got.parent == mine.comm_map[want.parent]);
      CHECK(got.parent < mine.comm_map[i]);  // the parent comes first
    }
  }
}

}  // namespace

TEST_CASE("unify: a single process maps its definitions to themselves") {
  std::vector<RegionDef> regions = {region("main", "a.c", 1), region("foo", "a.c", 5),
                                    region("MPI_Recv", "", -1, Paradigm::Mpi, Role::Point2Point)};
  std::vector<CommDef> comms = {comm(Kind::Threads, 0, 0, "threads", {}), comm(Kind::World, 0, 0, "world", {0}),
                                comm(Kind::Mpi, 0, 3, "dup", {0}), comm(Kind::Mpi, 0, 4, "split", {0}, 2)};
  ProcessPart self;
  self.host = "alone";
  self.start = 42;
  self.end = 4242;
  self.locations = {LocationPart{0, "main thread", 7, 0, ""}, LocationPart{std::uint64_t{1} << 32, "worker", 9, 0, ""}};
  Result res;
  std::string error;
  REQUIRE(prof::unify::unify(nullptr, self, regions, comms, &res, &error));
  CHECK(res.region_map == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(res.comm_map == std::vector<std::uint32_t>{0, 1, 2, 3});
  REQUIRE(res.regions.size() == regions.size());
  for (std::size_t i = 0; i < regions.size(); ++i) CHECK(describe(res.regions[i]) == describe(regions[i]));
  REQUIRE(res.comms.size() == comms.size());
  for (std::size_t i = 0; i < comms.size(); ++i) {
    CHECK(describe(res.comms[i]) == describe(comms[i]));
    CHECK(res.comms[i].parent == comms[i].parent);
  }
  REQUIRE(res.processes.size() == 1);
  CHECK(describe(res.processes[0]) == describe(self));
  CHECK(res.start == 42);
  CHECK(res.end == 4242);
}

TEST_CASE("unify: regions and communicators of several ranks") {
  for (std::uint32_t n : kSizes) {
    INFO(n << " ranks");
    std::vector<Input> in;
    for (std::uint32_t r = 0; r < n; ++r) in.push_back(make_input(r, n));
    const std::vector<Result> res = run_ranks(n, in);
    const Result& g = res[0];

    std::set<std::string> unique_regions;
    for (const auto& d : g.regions) unique_regions.insert(describe(d));
    CHECK(unique_regions.size() == g.regions.size());   // no duplicates
    CHECK(g.regions.size() == 6 + n);                    // the shared ones and one per rank
    std::set<std::tuple<int, std::uint32_t, std::uint64_t>> unique_comms;
    for (const auto& c : g.comms) unique_comms.insert({static_cast<int>(c.kind), c.key_rank, c.key_serial});
    CHECK(unique_comms.size() == g.comms.size());
    const std::size_t mpi = n > 2 ? 2 : 1;               // the even comm, and its child from rank 2 on
    CHECK(g.comms.size() == n + 2 + mpi);                // threads per rank, World, Self, Mpi

    std::set<std::uint32_t> thread_comms;
    for (std::uint32_t r = 0; r < n; ++r) {
      INFO("rank " << r);
      check_maps(g, res[r], in[r], r);
      thread_comms.insert(res[r].comm_map[0]);
    }
    CHECK(thread_comms.size() == n);
  }
}

TEST_CASE("unify: processes, locations and the time range") {
  for (std::uint32_t n : kSizes) {
    INFO(n << " ranks");
    std::vector<Input> in;
    for (std::uint32_t r = 0; r < n; ++r) in.push_back(make_input(r, n));
    const std::vector<Result> res = run_ranks(n, in);
    prof::Timestamp start = ~prof::Timestamp{0}, end = 0;
    for (const auto& i : in) {
      start = std::min(start, i.self.start);
      end = std::max(end, i.self.end);
    }
    for (std::uint32_t r = 0; r < n; ++r) {
      INFO("rank " << r);
      CHECK(res[r].start == start);
      CHECK(res[r].end == end);
    }
    REQUIRE(res[0].processes.size() == n);
    for (std::uint32_t r = 0; r < n; ++r) {
      CHECK(res[0].processes[r].rank == r);
      CHECK(describe(res[0].processes[r]) == describe(in[r].self));  // host, locations (i << 32 | r)
    }
  }
}

TEST_CASE("unify: a ProcessPart survives encode/decode; a truncated one is refused") {
  const ProcessPart p = make_input(5, 7).self;
  const std::vector<char> bytes = prof::unify::encode(p);
  ProcessPart q;
  REQUIRE(prof::unify::decode(bytes, &q));
  CHECK(describe(q) == describe(p));
  CHECK(p.locations.size() == 3);
  std::size_t accepted = 0;
  for (std::size_t cut = 0; cut < bytes.size(); ++cut)
    accepted += prof::unify::decode(std::vector<char>(bytes.begin(), bytes.begin() + cut), &q);
  CHECK(accepted == 0);
  std::vector<char> longer = bytes;
  longer.push_back(0);
  CHECK_FALSE(prof::unify::decode(longer, &q));  // trailing bytes are refused too
}

TEST_CASE("merge_parts: the parts of some ranks unify as those ranks would, the others stay empty") {
  // A job of 5 whose ranks 1 and 3 wrote nothing (failed): the parts of 0, 2 and 4, in any order.
  const std::uint32_t n = 5;
  const std::uint32_t present[] = {4, 0, 2};
  std::vector<Input> in;
  std::vector<std::vector<char>> parts;
  for (std::uint32_t r : present) {
    in.push_back(make_input(r, n));
    parts.push_back(prof::unify::encode_part(in.back().self, in.back().regions, in.back().comms, r));
  }
  Result g;
  std::vector<Result> maps;
  std::string error;
  REQUIRE(prof::unify::merge_parts(parts, n, &g, &maps, &error));
  CHECK(error.empty());
  REQUIRE(maps.size() == parts.size());
  CHECK(g.regions.size() == 6 + 3);  // the shared ones and one per present rank
  std::set<std::string> unique_regions;
  for (const auto& d : g.regions) unique_regions.insert(describe(d));
  CHECK(unique_regions.size() == g.regions.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::uint32_t r = present[i];
    INFO("rank " << r);
    check_maps(g, maps[i], in[i], r);
    CHECK(describe(g.processes[r]) == describe(in[i].self));
  }
  REQUIRE(g.processes.size() == n);
  for (std::uint32_t r : {1u, 3u}) {
    CHECK(g.processes[r].rank == r);
    CHECK(g.processes[r].locations.empty());
  }
  prof::Timestamp start = ~prof::Timestamp{0}, end = 0;
  for (const auto& i : in) {
    start = std::min(start, i.self.start);
    end = std::max(end, i.self.end);
  }
  CHECK(g.start == start);
  CHECK(g.end == end);
  // Prefix-stable: merging one more part after the same ones keeps every global id given before
  // (partial_trace relies on it: mapping tables renamed into place fit the previous traces.def).
  {
    Input more = make_input(1, n);
    std::vector<std::vector<char>> longer = parts;
    longer.push_back(prof::unify::encode_part(more.self, more.regions, more.comms, 1));
    Result g2;
    std::vector<Result> maps2;
    REQUIRE(prof::unify::merge_parts(longer, n, &g2, &maps2, &error));
    REQUIRE(g2.regions.size() == g.regions.size() + 1);  // rank 1's own region
    for (std::size_t k = 0; k < g.regions.size(); ++k) CHECK(describe(g2.regions[k]) == describe(g.regions[k]));
    REQUIRE(g2.comms.size() >= g.comms.size());
    for (std::size_t k = 0; k < g.comms.size(); ++k) CHECK(describe(g2.comms[k]) == describe(g.comms[k]));
    for (std::size_t i = 0; i < parts.size(); ++i) {
      CHECK(maps2[i].region_map == maps[i].region_map);
      CHECK(maps2[i].comm_map == maps[i].comm_map);
    }
  }
  // A damaged part is refused with a line, never merged.
  std::vector<std::vector<char>> cut = parts;
  cut[1].resize(cut[1].size() / 2);
  CHECK_FALSE(prof::unify::merge_parts(cut, n, &g, &maps, &error));
  CHECK(error.find("damaged") != std::string::npos);
  // A part of a rank outside the job, too.
  CHECK_FALSE(prof::unify::merge_parts(parts, 4, &g, &maps, &error));
}

TEST_CASE("tree_reduce: a failing merge anywhere reaches rank 0 and no rank waits for ever") {
  for (const std::uint32_t n : kSizes) {
    for (std::uint32_t bad = 1; bad < n; ++bad) {
      // The rank that receives from `bad` fails to merge its part; every rank must return, and
      // rank 0 must report the failure (it is the one that tells the others).
      World world(n);
      std::vector<char> ok(n, 1);
      std::vector<std::string> errors(n);
      std::vector<std::thread> threads;
      const auto started = std::chrono::steady_clock::now();
      for (std::uint32_t r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
          FakeMpp mpp(world, r);
          ok[r] = prof::unify::tree_reduce(
              &mpp, [r] { return std::vector<char>{static_cast<char>(r)}; },
              [bad](const std::vector<char>& b) { return !(b.size() == 1 && static_cast<std::uint32_t>(b[0]) == bad); },
              "parts", &errors[r]);
        });
      for (auto& t : threads) t.join();
      INFO(n << " ranks, rank " << bad << "'s part fails to merge");
      // A rank left waiting would only come back through the fake's 20 s receive timeout.
      CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
      CHECK_FALSE(ok[0]);
      CHECK(errors[0].find("unification: the parts of rank") == 0);
    }
  }
}

TEST_CASE("first_failed: every rank learns the lowest rank that failed, or that none did") {
  const std::uint32_t n = GENERATE(1u, 2u, 5u);
  const std::uint32_t bad_a = GENERATE(0u, 1u, 3u, prof::kNoRank);
  const std::uint32_t bad_b = GENERATE(2u, prof::kNoRank);
  World world(n);
  std::vector<std::uint32_t> got(n, 12345);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      FakeMpp mpp(world, r);
      got[r] = prof::first_failed(mpp, r != bad_a && r != bad_b);
    });
  for (auto& t : threads) t.join();
  std::uint32_t expect = prof::kNoRank;
  for (std::uint32_t r = 0; r < n && expect == prof::kNoRank; ++r)
    if (r == bad_a || r == bad_b) expect = r;
  INFO(n << " ranks, failing " << bad_a << " and " << bad_b);
  for (std::uint32_t r = 0; r < n; ++r) CHECK(got[r] == expect);
}
