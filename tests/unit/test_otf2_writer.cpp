// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of TraceWriter: synthetic raw records → OTF2 archive in a temp directory, read
// back independently with `otf2-print -A` and the shared otf2_check.py (OTF2 Python reader).
// Covers every record type, streaming one location over several write_events calls,
// clamping of decreasing timestamps, and OTF2 flushing when its one pool block is full.
#include <catch2/catch.hpp>

#include "tests/unit/test_support.hpp"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "measurement/buffer.hpp"
#include "measurement/memory/pool.hpp"
#include "measurement/record.hpp"
#include "otf2-writer/event_chunks.hpp"
#include "otf2-writer/trace_writer.hpp"

#ifndef PROF_SHARED_TOOLS
#define PROF_SHARED_TOOLS "/work/shared/tools"
#endif

namespace fs = std::filesystem;
using prof::EventBuffer;
using prof::RecordType;
using prof::Timestamp;
namespace otf2w = prof::otf2w;

namespace {

constexpr std::size_t kBlock = 256 * 1024;  // OTF2_CHUNK_SIZE_MIN
constexpr std::uint64_t kLoc0 = 0;
constexpr std::uint64_t kLoc1 = 1ull << 32;
constexpr Timestamp kT0 = 1000000000;

/// A fresh directory under the temp directory, removed with everything in it.
struct TempDir : prof_test::TempDir {
  TempDir() : prof_test::TempDir("prof_test_otf2_") {}
  std::string archive() const { return path + "/traces.otf2"; }
};

using prof_test::run;
using prof_test::RunResult;

/// Event lines of `otf2-print -A` by record name ("ENTER", "THREAD_CREATE", ...).
std::map<std::string, std::size_t> count_events(const std::string& printed) {
  std::map<std::string, std::size_t> counts;
  std::istringstream in(printed);
  std::string line;
  bool events = false;
  while (std::getline(in, line)) {
    // The event section starts with the column header "Event  Location  Timestamp  Attributes".
    if (line.rfind("Event ", 0) == 0 || line.rfind("Event\t", 0) == 0) {
      events = true;
      continue;
    }
    if (!events || line.empty() || line[0] == ' ' || line[0] == '=' || line[0] == '-') continue;
    std::string word = line.substr(0, line.find(' '));
    ++counts[word];
  }
  return counts;
}

/// Timestamps of the event lines of `otf2-print` for one location, in order.
std::vector<std::uint64_t> event_times(const std::string& printed, std::uint64_t location) {
  std::vector<std::uint64_t> times;
  std::istringstream in(printed);
  std::string line;
  bool events = false;
  while (std::getline(in, line)) {
    if (line.rfind("Event ", 0) == 0) {
      events = true;
      continue;
    }
    if (!events || line.empty() || line[0] == ' ') continue;
    std::istringstream fields(line);
    std::string name;
    std::uint64_t loc = 0, t = 0;
    if (fields >> name >> loc >> t && loc == location) times.push_back(t);
  }
  return times;
}

bool have_otf2_check() { return fs::exists(std::string(PROF_SHARED_TOOLS) + "/otf2_check.py"); }

/// otf2_check.py on the archive; the last line is the summary.
RunResult otf2_check(const TempDir& dir, const std::string& extra) {
  return run("/usr/bin/python3 '" PROF_SHARED_TOOLS "/otf2_check.py' '" + dir.archive() + "' " + extra, dir.path);
}

/// Asserts that otf2_check.py accepts the archive. Only a build outside the repository lacks
/// the checker (CI configures with PROF_REQUIRE_SHARED_TOOLS=ON); then it warns instead.
void check_with_otf2_check(const TempDir& dir, const std::string& extra) {
  if (!have_otf2_check()) {
    WARN("otf2_check.py not found in " PROF_SHARED_TOOLS ": the Python reader check is skipped");
    return;
  }
  const RunResult checked = otf2_check(dir, extra);
  INFO(checked.out << checked.err);
  CHECK(checked.rc == 0);
}

/// Builds raw event buffers: a pool of 1 MiB record chunks, chunks added as needed.
struct Records {
  prof::ChunkPool pool;
  EventBuffer buf;
  std::size_t count = 0;
  static constexpr std::size_t kChunk = 1u << 20;

  Records() { REQUIRE(pool.init(16 * kChunk, kChunk)); }
  ~Records() {
    buf.release_all([&](void* c) { pool.release(c); });
  }

  void add(Timestamp t, RecordType type, std::uint32_t ref = 0, bool payload = false, std::uint64_t a = 0) {
    const unsigned slots = payload ? 1 : 0;
    prof::Record* r = buf.try_reserve(slots);
    if (!r) {
      void* c = pool.acquire();
      REQUIRE(c != nullptr);
      buf.add_chunk(c, kChunk);
      r = buf.try_reserve(slots);
      REQUIRE(r != nullptr);
    }
    r->time = t;
    r->type = type;
    r->slots = static_cast<std::uint8_t>(slots);
    r->aux = 0;
    r->ref = ref;
    if (payload) *reinterpret_cast<prof::Payload*>(r + 1) = prof::Payload{a, 0};
    buf.commit();
    ++count;
  }
  /// A record with two payload slots (MPI, RMA).
  void add2(Timestamp t, RecordType type, std::uint32_t ref, prof::Payload a, prof::Payload b) {
    prof::Record* r = buf.try_reserve(2);
    if (!r) {
      void* c = pool.acquire();
      REQUIRE(c != nullptr);
      buf.add_chunk(c, kChunk);
      r = buf.try_reserve(2);
      REQUIRE(r != nullptr);
    }
    r->time = t;
    r->type = type;
    r->slots = 2;
    r->aux = 0;
    r->ref = ref;
    reinterpret_cast<prof::Payload*>(r + 1)[0] = a;
    reinterpret_cast<prof::Payload*>(r + 1)[1] = b;
    buf.commit();
    ++count;
  }
  void enter(Timestamp t, std::uint32_t region) { add(t, RecordType::Enter, region); }
  void leave(Timestamp t, std::uint32_t region) { add(t, RecordType::Leave, region); }
  void clear() {
    buf.clear([&](void* c) { pool.release(c); });
    count = 0;
  }
};

prof::regions::RegionDef region(const std::string& name, const std::string& file, int line,
                                prof::regions::Paradigm paradigm = prof::regions::Paradigm::Compiler,
                                prof::regions::Role role = prof::regions::Role::Function) {
  prof::regions::RegionDef r;
  r.name = name;
  r.canonical = "_Z" + name;
  r.file = file;
  r.begin_line = line;
  r.end_line = line + 10;
  r.paradigm = paradigm;
  r.role = role;
  return r;
}

enum : std::uint32_t { kMain, kWorker, kFoo, kCreate, kJoin, kRegions };

/// Definitions of the five regions and `locations` CPU locations with ids i << 32 (one process,
/// its event counts as `w` wrote them), and the thread contingent for more than one location.
otf2w::Definitions definitions(const otf2w::TraceWriter& w, Timestamp first, Timestamp last, unsigned locations = 2) {
  using prof::regions::Paradigm;
  using prof::regions::Role;
  otf2w::Definitions d;
  d.clock.resolution = 1000000000;
  d.clock.offset = first;
  d.clock.length = last - first;
  d.clock.realtime_ns = 1700000000ull * 1000000000ull;
  d.machine = "test machine";
  d.regions = {region("main", "main.c", 10), region("worker", "main.c", 30), region("foo", "foo.c", 5),
               region("pthread_create", "", -1, Paradigm::Pthread, Role::Wrapper),
               region("pthread_join", "", -1, Paradigm::Pthread, Role::Wrapper)};
  prof::unify::ProcessPart process;
  process.host = "test node";
  for (unsigned i = 0; i < locations; ++i) {
    const std::uint64_t id = std::uint64_t{i} << 32;
    process.locations.push_back({id, i ? "Pthread thread " + std::to_string(i) : "Master thread", w.event_count(id), 0, ""});
    d.local_locations.push_back(id);
  }
  d.processes.push_back(process);
  if (locations > 1) d.comms.push_back({prof::comms::Kind::Threads, 0, 0, "Pthread threads", {}, prof::comms::kNoComm});
  return d;
}

}  // namespace

TEST_CASE("otf2 writer round trip with every record type, streamed", "[otf2]") {
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(4 * kBlock, kBlock));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error));
  CHECK(error.empty());
  CHECK(w.is_open());
  w.set_program("./a.out", {"./a.out", "--size", "3"});

  Records r0, r1;
  // Location 0, first part: program start, main, pthread_create.
  r0.add(kT0, RecordType::ProgramBegin);
  r0.enter(kT0 + 10, kMain);
  r0.enter(kT0 + 20, kCreate);
  r0.add(kT0 + 30, RecordType::ThreadCreate, 0, true, 1);
  r0.leave(kT0 + 40, kCreate);
  REQUIRE(w.write_events(kLoc0, r0.buf, false));
  CHECK(w.event_count(kLoc0) == 5);
  r0.clear();

  // Second part: recording off/on, a buffer flush, a lock.
  r0.add(kT0 + 50, RecordType::MeasurementOnOff, 2);
  r0.add(kT0 + 60, RecordType::MeasurementOnOff, 1);
  r0.add(kT0 + 70, RecordType::BufferFlush, 0, true, kT0 + 80);
  r0.add(kT0 + 90, RecordType::AcquireLock, 7, true, 1);
  r0.add(kT0 + 100, RecordType::ReleaseLock, 7, true, 1);
  REQUIRE(w.write_events(kLoc0, r0.buf, false));
  CHECK(w.event_count(kLoc0) == 10);
  r0.clear();

  // Location 1 in between: a thread with two regions and the same lock.
  r1.add(kT0 + 35, RecordType::ThreadBegin, 0, true, 1);
  r1.enter(kT0 + 36, kWorker);
  r1.enter(kT0 + 37, kFoo);
  r1.add(kT0 + 110, RecordType::AcquireLock, 7, true, 2);
  r1.add(kT0 + 115, RecordType::ReleaseLock, 7, true, 2);
  r1.leave(kT0 + 120, kFoo);
  r1.leave(kT0 + 130, kWorker);
  r1.add(kT0 + 140, RecordType::ThreadEnd, 0, true, 1);
  REQUIRE(w.write_events(kLoc1, r1.buf, false));  // left open: finish closes it
  CHECK(w.event_count(kLoc1) == 8);

  // Last part of location 0: join, end of main, program end; closes its writer.
  r0.enter(kT0 + 200, kJoin);
  r0.add(kT0 + 210, RecordType::ThreadWait, 0, true, 1);
  r0.leave(kT0 + 220, kJoin);
  r0.leave(kT0 + 300, kMain);
  r0.add(kT0 + 310, RecordType::ProgramEnd, 0, true, 0);
  REQUIRE(w.write_events(kLoc0, r0.buf, true));
  CHECK(w.event_count(kLoc0) == 15);

  // A closed location takes no more events.
  CHECK_FALSE(w.write_events(kLoc0, r0.buf, false));
  CHECK(w.last_error() == "events for an already closed location");
  CHECK(w.event_count(kLoc0) == 15);

  REQUIRE(w.finish(definitions(w, kT0, kT0 + 310), &error));
  CHECK(error.empty());
  CHECK_FALSE(w.is_open());
  CHECK(w.stats().events == 23);
  CHECK(w.stats().otf2_over_budget == 0);
  INFO("OTF2 flushes: " << w.stats().otf2_flushes);
  CHECK(w.stats().otf2_flushes <= 2);  // at most the final write of each location
  CHECK(w.event_count(kLoc1) == 8);
  CHECK(blocks.in_use() == 0);

  CHECK(fs::exists(dir.archive()));
  CHECK(fs::exists(dir.path + "/traces.def"));
  CHECK(fs::exists(dir.path + "/traces/0.evt"));
  CHECK(fs::exists(dir.path + "/traces/4294967296.evt"));

  const RunResult printed = run("otf2-print -A '" + dir.archive() + "'", dir.path);
  INFO(printed.out);
  REQUIRE(printed.rc == 0);
  CHECK(printed.err == "");
  std::map<std::string, std::size_t> counts = count_events(printed.out);
  CHECK(counts["ENTER"] == 5);
  CHECK(counts["LEAVE"] == 5);
  CHECK(counts["PROGRAM_BEGIN"] == 1);
  CHECK(counts["PROGRAM_END"] == 1);
  CHECK(counts["THREAD_CREATE"] == 1);
  CHECK(counts["THREAD_BEGIN"] == 1);
  CHECK(counts["THREAD_END"] == 1);
  CHECK(counts["THREAD_WAIT"] == 1);
  CHECK(counts["THREAD_ACQUIRE_LOCK"] == 2);
  CHECK(counts["THREAD_RELEASE_LOCK"] == 2);
  CHECK(counts["MEASUREMENT_ON_OFF"] == 2);
  CHECK(counts["BUFFER_FLUSH"] == 1);
  CHECK(printed.out.find("Stop Time: " + std::to_string(kT0 + 80)) != std::string::npos);
  std::size_t total = 0;
  for (const auto& [name, n] : counts) total += n;
  CHECK(total == 23);
  // Streaming kept the order of location 0's records.
  const std::vector<std::uint64_t> t0 = event_times(printed.out, kLoc0);
  const std::vector<std::uint64_t> expect0 = {kT0,      kT0 + 10, kT0 + 20,  kT0 + 30,  kT0 + 40,
                                              kT0 + 50, kT0 + 60, kT0 + 70,  kT0 + 90,  kT0 + 100,
                                              kT0 + 200, kT0 + 210, kT0 + 220, kT0 + 300, kT0 + 310};
  CHECK(t0 == expect0);
  // Region names and the program's name reach the definitions.
  CHECK(printed.out.find("\"main\"") != std::string::npos);
  CHECK(printed.out.find("\"pthread_join\"") != std::string::npos);
  CHECK(printed.out.find("\"./a.out\"") != std::string::npos);
  CHECK(printed.out.find("\"--size\"") != std::string::npos);

  check_with_otf2_check(dir, "--expect-locations 2 --expect-region main --expect-region foo --expect-region worker");
}

TEST_CASE("otf2 writer clamps decreasing raw timestamps per location", "[otf2]") {
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(2 * kBlock, kBlock));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error));

  Records r;
  r.enter(kT0 + 1000, kMain);
  r.enter(kT0 + 2000, kFoo);
  r.leave(kT0 + 1500, kFoo);  // earlier than the previous record: becomes kT0 + 2000
  r.add(kT0 + 2500, RecordType::BufferFlush, 0, true, kT0 + 2400);  // stop before start
  REQUIRE(w.write_events(kLoc0, r.buf, false));
  r.clear();
  // Across write_events calls too.
  r.enter(kT0 + 100, kFoo);  // becomes kT0 + 2500
  r.leave(kT0 + 3000, kFoo);
  r.leave(kT0 + 3100, kMain);
  REQUIRE(w.write_events(kLoc0, r.buf, true));
  CHECK(w.event_count(kLoc0) == 7);

  REQUIRE(w.finish(definitions(w, kT0 + 1000, kT0 + 3100, 1), &error));
  CHECK(w.stats().events == 7);

  const RunResult printed = run("otf2-print -A '" + dir.archive() + "'", dir.path);
  INFO(printed.out);
  REQUIRE(printed.rc == 0);
  CHECK(printed.err == "");
  std::map<std::string, std::size_t> counts = count_events(printed.out);
  CHECK(counts["ENTER"] == 3);
  CHECK(counts["LEAVE"] == 3);
  CHECK(counts["BUFFER_FLUSH"] == 1);
  // A flush that "stopped" before it started is clamped too.
  CHECK(printed.out.find("Stop Time: " + std::to_string(kT0 + 2500)) != std::string::npos);
  const std::vector<std::uint64_t> times = event_times(printed.out, kLoc0);
  const std::vector<std::uint64_t> expect = {kT0 + 1000, kT0 + 2000, kT0 + 2000, kT0 + 2500,
                                             kT0 + 2500, kT0 + 3000, kT0 + 3100};
  CHECK(times == expect);

  check_with_otf2_check(dir, "--expect-locations 1 --expect-region foo");
}

TEST_CASE("otf2 writer streams more events than its block pool holds", "[otf2]") {
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(2 * kBlock, kBlock));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error));

  constexpr int kBatches = 4;
  constexpr int kPairsPerBatch = 25000;  // 200,000 events in all: several MiB of OTF2 events
  Records r;
  Timestamp t = kT0;
  r.enter(t++, kMain);
  for (int b = 0; b < kBatches; ++b) {
    for (int i = 0; i < kPairsPerBatch; ++i) {
      const std::uint32_t reg = i % 2 ? kFoo : kWorker;
      r.enter(t++, reg);
      r.leave(t++, reg);
    }
    if (b == kBatches - 1) r.leave(t++, kMain);
    REQUIRE(w.write_events(kLoc0, r.buf, b == kBatches - 1));
    CHECK(blocks.in_use() <= 1);  // one open writer: one block
    r.clear();
  }
  const std::uint64_t expect = 2u * kBatches * kPairsPerBatch + 2;
  CHECK(w.event_count(kLoc0) == expect);
  CHECK(w.stats().otf2_flushes > 0);
  CHECK(w.stats().otf2_over_budget == 0);

  REQUIRE(w.finish(definitions(w, kT0, t - 1, 1), &error));
  CHECK(w.stats().events == expect);
  // More event data than the whole block pool holds went to disk, one block per flush at most.
  const std::uintmax_t evt_bytes = fs::file_size(dir.path + "/traces/0.evt");
  INFO("traces/0.evt: " << evt_bytes << " bytes, " << w.stats().otf2_flushes << " OTF2 flushes");
  CHECK(evt_bytes > 2 * kBlock);
  CHECK(w.stats().otf2_flushes >= (evt_bytes + kBlock - 1) / kBlock);
  CHECK(blocks.in_use() == 0);
  CHECK(blocks.high_water() == 1);

  const RunResult printed = run("otf2-print '" + dir.archive() + "'", dir.path);
  REQUIRE(printed.rc == 0);
  CHECK(printed.err == "");
  std::map<std::string, std::size_t> counts = count_events(printed.out);
  CHECK(counts["ENTER"] == expect / 2);
  CHECK(counts["LEAVE"] == expect / 2);

  check_with_otf2_check(dir, "--expect-locations 1 --expect-region foo");
}

TEST_CASE("otf2 writer takes more open writers than blocks from malloc, counted", "[otf2]") {
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(kBlock, kBlock));  // one block, three open writers
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error));
  for (std::uint64_t i = 0; i < 3; ++i) {
    Records r;
    r.enter(kT0 + 10 * i, kMain);
    r.enter(kT0 + 10 * i + 1, kFoo);
    r.leave(kT0 + 10 * i + 2, kFoo);
    r.leave(kT0 + 10 * i + 3, kMain);
    REQUIRE(w.write_events(i << 32, r.buf, false));
  }
  CHECK(blocks.in_use() == 1);
  CHECK(w.stats().otf2_over_budget == 2);
  CHECK(w.stats().otf2_over_budget_peak == 2);  // all three writers open at once
  CHECK(w.stats().otf2_block_bytes == kBlock);
  REQUIRE(w.finish(definitions(w, kT0, kT0 + 23, 3), &error));
  CHECK(blocks.in_use() == 0);
  for (std::uint64_t i = 0; i < 3; ++i) CHECK(w.event_count(i << 32) == 4);

  const RunResult printed = run("otf2-print '" + dir.archive() + "'", dir.path);
  REQUIRE(printed.rc == 0);
  CHECK(printed.err == "");
  std::map<std::string, std::size_t> counts = count_events(printed.out);
  CHECK(counts["ENTER"] == 6);
  CHECK(counts["LEAVE"] == 6);
  check_with_otf2_check(dir, "--expect-locations 3 --expect-region foo");
}

TEST_CASE("otf2 writer reports errors instead of writing", "[otf2]") {
  SECTION("write_events before open") {
    otf2w::TraceWriter w;
    Records r;
    r.enter(kT0, kMain);
    CHECK_FALSE(w.is_open());
    CHECK_FALSE(w.write_events(kLoc0, r.buf, false));
    std::string error;
    CHECK_FALSE(w.finish(definitions(w, kT0, kT0), &error));
    CHECK(error == "no OTF2 archive open");
  }
  SECTION("a directory that cannot be created fails open or finish, with one line") {
    // OTF2 creates files lazily, so the failure may only show when the archive is written.
    prof::ChunkPool blocks;
    REQUIRE(blocks.init(kBlock, kBlock));
    otf2w::TraceWriter w;
    std::string error;
    const std::string bad = "/proc/prof-test-no-such-dir/sub";
    if (w.open(bad, &blocks, &error)) {
      Records r;
      r.enter(kT0, kMain);
      r.leave(kT0 + 1, kMain);
      const bool wrote = w.write_events(kLoc0, r.buf, true);
      INFO("write_events: " << wrote << " " << w.last_error());
      CHECK_FALSE(w.finish(definitions(w, kT0, kT0 + 1, 1), &error));
      if (error.empty()) error = w.take_failure(nullptr);  // a write error: its line
    } else {
      CHECK(error.rfind("cannot create the OTF2 archive in '" + bad + "'", 0) == 0);
    }
    INFO(error);
    CHECK_FALSE(error.empty());
    CHECK(error.find('\n') == std::string::npos);
    CHECK_FALSE(w.is_open());
  }
  SECTION("finish twice") {
    TempDir dir;
    prof::ChunkPool blocks;
    REQUIRE(blocks.init(kBlock, kBlock));
    otf2w::TraceWriter w;
    std::string error;
    REQUIRE(w.open(dir.path, &blocks, &error));
    REQUIRE(w.finish(definitions(w, kT0, kT0, 1), &error));
    CHECK_FALSE(w.finish(definitions(w, kT0, kT0, 1), &error));
    CHECK(error == "no OTF2 archive open");
  }
}

TEST_CASE("otf2 writer: GPU stream locations in an accelerator group, the CUDA window, its RMA events, launch ids", "[otf2]") {
  using prof::regions::Paradigm;
  using prof::regions::Role;
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(4 * kBlock, kBlock));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error));
  constexpr std::uint64_t kStream = 2ull << 32;  // index 2: after the master thread and a worker
  constexpr std::uint32_t kLaunch = kRegions, kKernel = kRegions + 1, kCopy = kRegions + 2;
  constexpr std::uint32_t kWindow = 1;  // the process-local id of its CUDA communicator (0: the thread contingent)
  Records host, gpu;
  host.enter(kT0, kMain);
  host.add(kT0 + 10, RecordType::CorrelationId, 77);  // the launch's Enter carries it
  host.enter(kT0 + 10, kLaunch);
  host.leave(kT0 + 20, kLaunch);
  host.leave(kT0 + 400, kMain);
  REQUIRE(w.write_events(kLoc0, host.buf, true));
  Records worker;
  worker.enter(kT0 + 5, kWorker);
  worker.leave(kT0 + 300, kWorker);
  REQUIRE(w.write_events(kLoc1, worker.buf, true));
  gpu.add(kT0 + 30, RecordType::CorrelationId, 77);  // and its kernel's Enter
  gpu.enter(kT0 + 30, kKernel);
  gpu.leave(kT0 + 90, kKernel);
  gpu.enter(kT0 + 100, kCopy);
  gpu.add2(kT0 + 100, RecordType::RmaGet, kWindow, {0, 4096}, {42, 0});  // from rank 0: the master thread
  gpu.add(kT0 + 150, RecordType::RmaOpCompleteBlocking, kWindow, true, 42);
  gpu.leave(kT0 + 150, kCopy);
  gpu.enter(kT0 + 200, kCopy);
  gpu.add2(kT0 + 200, RecordType::RmaPut, kWindow, {1, 512}, {43, 0});  // to rank 1: the worker
  gpu.add(kT0 + 260, RecordType::RmaOpCompleteBlocking, kWindow, true, 43);
  gpu.leave(kT0 + 260, kCopy);
  REQUIRE(w.write_events(kStream, gpu.buf, true));

  otf2w::Definitions d = definitions(w, kT0, kT0 + 400, 2);
  d.regions.push_back(region("cudaLaunchKernel", "", -1, Paradigm::Cuda, Role::Wrapper));
  d.regions.push_back(region("spin(long long)", "", -1, Paradigm::Cuda, Role::Function));
  d.regions.push_back(region("cudaMemcpy HtoD", "", -1, Paradigm::Cuda, Role::DataTransfer));
  d.processes[0].locations.push_back({kStream, "CUDA[0:13]", w.event_count(kStream), 1, "CUDA Context 1"});
  d.local_locations.push_back(kStream);
  d.comms.push_back({prof::comms::Kind::Cuda, 0, 0, "CUDA window", {}, prof::comms::kNoComm});
  d.comm_map = {0, 1};
  d.window_map = {0, 0};  // local communicator 1 is window 0
  REQUIRE(w.finish(d, &error));

  const RunResult printed = run("otf2-print -A '" + dir.archive() + "'", dir.path);
  INFO(printed.out << printed.err);
  REQUIRE(printed.rc == 0);
  CHECK(printed.err == "");
  std::map<std::string, std::size_t> counts = count_events(printed.out);
  CHECK(counts["RMA_GET"] == 1);
  CHECK(counts["RMA_PUT"] == 1);
  CHECK(counts["RMA_OP_COMPLETE_BLOCKING"] == 2);
  check_with_otf2_check(dir, "--expect-locations 3 --expect-region 'spin(long long)'");
  // The Python reader (independent of prof) sees the types, the groups and the window.
  const std::string script = dir.path + "/check.py";
  std::ofstream(script) << R"PY(
import sys, otf2
with otf2.reader.open(sys.argv[1]) as t:
    d = t.definitions
    locs = {l.name: l for l in d.locations}
    s = locs["CUDA[0:13]"]
    assert s.type == otf2.LocationType.ACCELERATOR_STREAM, s.type
    assert locs["Master thread"].type == otf2.LocationType.CPU_THREAD
    g = s.group
    assert g.name == "CUDA Context 1" and g.location_group_type == otf2.LocationGroupType.ACCELERATOR, g
    assert g.creating_location_group.name == "Process", g.creating_location_group
    wins = list(d.rma_wins)
    assert len(wins) == 1 and wins[0].name == "CUDA window", wins
    members = [m.name for m in wins[0].comm.group.members]
    assert members == ["Master thread", "Pthread thread 1", "CUDA[0:13]"], members
    got, ids = [], []
    for loc, ev in t.events:
        if isinstance(ev, (otf2.events.RmaGet, otf2.events.RmaPut)):
            assert ev.win == wins[0]
            got.append((type(ev).__name__, ev.remote, ev.bytes, ev.matching_id))
        for a, v in (ev.attributes or {}).items():
            ids.append((loc.name, type(ev).__name__, ev.region.name, a.name, v))
    assert got == [("RmaGet", 0, 4096, 42), ("RmaPut", 1, 512, 43)], got
    assert ids == [("Master thread", "Enter", "cudaLaunchKernel", "CUDA correlation id", 77),
                   ("CUDA[0:13]", "Enter", "spin(long long)", "CUDA correlation id", 77)], ids
print("ok")
)PY";
  const RunResult py = run("/usr/bin/python3 '" + script + "' '" + dir.archive() + "'", dir.path);
  INFO(py.out << py.err);
  CHECK(py.rc == 0);
  CHECK(py.out == "ok\n");
}

namespace {
/// An Enter or Leave carrying metric values as the hot path writes them (metrics_enter/leave):
/// aux = the location's metric class (0 per-thread, 1 with the per-process events), two values
/// per payload slot.
void metric_record(Records& r, Timestamp t, RecordType type, std::uint32_t region, std::uint16_t cls,
                   const std::vector<std::uint64_t>& values) {
  const unsigned slots = static_cast<unsigned>((values.size() + 1) / 2);
  prof::Record* rec = r.buf.try_reserve(slots);
  if (!rec) {
    void* c = r.pool.acquire();
    REQUIRE(c != nullptr);
    r.buf.add_chunk(c, Records::kChunk);
    rec = r.buf.try_reserve(slots);
    REQUIRE(rec != nullptr);
  }
  rec->time = t;
  rec->type = type;
  rec->slots = static_cast<std::uint8_t>(slots);
  rec->aux = cls;
  rec->ref = region;
  auto* v = reinterpret_cast<std::uint64_t*>(rec + 1);
  for (std::size_t i = 0; i < 2 * slots; ++i) v[i] = i < values.size() ? values[i] : 0;
  r.buf.commit();
  ++r.count;
}
}  // namespace

TEST_CASE("otf2 writer: metric values of Enter/Leave records become Metric events of their class", "[otf2]") {
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(4 * kBlock, kBlock));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error));
  // Two per-thread metrics and one per-process event: the master thread (class 1) has three
  // values per event, the worker (class 0) two.
  w.set_metrics({{"perf::TASK-CLOCK", "task clock", "ns", true, false},
                 {"ru_maxrss", "peak RSS", "KiB", false, true},
                 {"perf::PAGE-FAULTS", "page faults", "#", true, false}},
                2);
  Records master, worker;
  metric_record(master, kT0, RecordType::Enter, kMain, 1, {100, 5000, 7});
  metric_record(master, kT0 + 50, RecordType::Leave, kMain, 1, {900, 5200, 2007});
  master.add(kT0 + 60, RecordType::ProgramEnd, 0, true, 0);
  metric_record(worker, kT0 + 10, RecordType::Enter, kWorker, 0, {3, 5000});
  worker.enter(kT0 + 20, kFoo);  // no values: a location without metrics writes plain records
  worker.leave(kT0 + 30, kFoo);
  metric_record(worker, kT0 + 40, RecordType::Leave, kWorker, 0, {40, 5100});
  REQUIRE(w.write_events(kLoc0, master.buf, true));
  REQUIRE(w.write_events(kLoc1, worker.buf, true));
  CHECK(w.event_count(kLoc0) == 5);  // 2 Metric + Enter + Leave + ProgramEnd
  CHECK(w.event_count(kLoc1) == 6);
  REQUIRE(w.finish(definitions(w, kT0, kT0 + 60), &error));
  CHECK(error.empty());

  const RunResult printed = run("otf2-print -A '" + dir.archive() + "'", dir.path);
  INFO(printed.out);
  REQUIRE(printed.rc == 0);
  CHECK(printed.err == "");
  CHECK(count_events(printed.out)["METRIC"] == 4);
  // Master: class 1 with all three members; worker: class 0 with the two per-thread ones.
  CHECK(printed.out.find("Metric: 1, 3 Values: (\"perf::TASK-CLOCK\" <0>; UINT64; 900), (\"ru_maxrss\" <1>; UINT64; 5200), "
                         "(\"perf::PAGE-FAULTS\" <2>; UINT64; 2007)") != std::string::npos);
  CHECK(printed.out.find("Metric: 0, 2 Values: (\"perf::TASK-CLOCK\" <0>; UINT64; 40), (\"ru_maxrss\" <1>; UINT64; 5100)") !=
        std::string::npos);
  CHECK(printed.out.find("Mode: ABSOLUTE_POINT") != std::string::npos);  // ru_maxrss
  CHECK(printed.out.find("Type: PAPI, Mode: ACCUMULATED_START, Value Type: UINT64, Base: DECIMAL, Exponent: 0, Unit: \"ns\"") !=
        std::string::npos);
  CHECK(printed.out.find("Occurrence: SYNCHRONOUS_STRICT, Kind: CPU, 2 Members") != std::string::npos);
  CHECK(printed.out.find("Occurrence: SYNCHRONOUS_STRICT, Kind: CPU, 3 Members") != std::string::npos);
  check_with_otf2_check(dir, "");
}

TEST_CASE("otf2 writer: per-process events only, the first metric class is 0", "[otf2]") {
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(4 * kBlock, kBlock));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error));
  w.set_metrics({{"perf::PAGE-FAULTS", "page faults", "#", true, false}}, 0);
  Records master;
  metric_record(master, kT0, RecordType::Enter, kMain, 1, {7});
  metric_record(master, kT0 + 50, RecordType::Leave, kMain, 1, {9});
  REQUIRE(w.write_events(kLoc0, master.buf, true));
  REQUIRE(w.finish(definitions(w, kT0, kT0 + 50, 1), &error));
  const RunResult printed = run("otf2-print -A '" + dir.archive() + "'", dir.path);
  INFO(printed.out);
  REQUIRE(printed.rc == 0);
  CHECK(printed.err == "");  // otf2-print warns about metric classes that are not dense from 0
  CHECK(printed.out.find("Metric: 0, 1 Value: (\"perf::PAGE-FAULTS\" <0>; UINT64; 9)") != std::string::npos);
  check_with_otf2_check(dir, "");
}

TEST_CASE("otf2 writer keeps Enter/Leave nested when events were lost", "[otf2]") {
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(4 * kBlock, kBlock));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error));
  Records r;
  r.enter(kT0, kMain);
  r.enter(kT0 + 10, kWorker);
  r.leave(kT0 + 20, kFoo);     // its Enter was lost: dropped
  r.enter(kT0 + 30, kFoo);     // its Leave is lost: closed at kWorker's Leave
  r.leave(kT0 + 40, kWorker);
  REQUIRE(w.write_events(kLoc0, r.buf, false));
  r.clear();
  r.enter(kT0 + 50, kJoin);    // its Leave and main's are lost: closed when the location closes
  REQUIRE(w.write_events(kLoc0, r.buf, true));
  CHECK(w.stats().dropped_leaves == 1);
  CHECK(w.stats().closed_regions == 3);
  CHECK(w.event_count(kLoc0) == 8);  // 4 Enter, 4 Leave
  REQUIRE(w.finish(definitions(w, kT0, kT0 + 50, 1), &error));
  const RunResult printed = run("otf2-print '" + dir.archive() + "'", dir.path);
  INFO(printed.out);
  REQUIRE(printed.rc == 0);
  CHECK(printed.err == "");
  std::map<std::string, std::size_t> counts = count_events(printed.out);
  CHECK(counts["ENTER"] == 4);
  CHECK(counts["LEAVE"] == 4);
  check_with_otf2_check(dir, "");
}

TEST_CASE("otf2 writer keeps deep nesting (beyond its local stack) across calls and after lost events", "[otf2]") {
  // write_events keeps the innermost 64 open regions in a local array and the rest in the
  // location's vector: 200 levels cross that bound several times, and the Leaves come in a later
  // call, with a lost Enter and a lost Leave deep inside.
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(4 * kBlock, kBlock));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error));
  Records r;
  constexpr int kDepth = 200;
  Timestamp t = kT0;
  const auto level_region = [](int i) { return i % 2 ? kWorker : kFoo; };
  r.enter(t++, kMain);
  for (int i = 0; i < kDepth; ++i) r.enter(t++, level_region(i));
  for (int i = kDepth - 1; i >= 150; --i) r.leave(t++, level_region(i));  // back to 150 levels
  REQUIRE(w.write_events(kLoc0, r.buf, false));
  r.clear();
  r.leave(t++, kJoin);  // never entered: dropped
  // Level 149's Leave is lost: level 148's Leave closes it first.
  for (int i = 148; i >= 0; --i) r.leave(t++, level_region(i));
  for (int i = 0; i < 100; ++i) r.enter(t++, level_region(i));  // 100 levels again, left open:
  REQUIRE(w.write_events(kLoc0, r.buf, true));                   // closed with main at the close
  CHECK(w.stats().dropped_leaves == 1);
  CHECK(w.stats().closed_regions == 1 + 100 + 1);
  CHECK(w.event_count(kLoc0) == 2 * (1 + kDepth + 100));
  REQUIRE(w.finish(definitions(w, kT0, t, 1), &error));
  const RunResult printed = run("otf2-print '" + dir.archive() + "'", dir.path);
  REQUIRE(printed.rc == 0);
  CHECK(printed.err == "");
  std::map<std::string, std::size_t> counts = count_events(printed.out);
  CHECK(counts["ENTER"] == 1 + kDepth + 100);
  CHECK(counts["LEAVE"] == 1 + kDepth + 100);
  check_with_otf2_check(dir, "");
}

TEST_CASE("otf2 writer: a write error (a full disk) stops the trace and removes its files", "[otf2]") {
  if (!fs::exists("/dev/full")) {
    WARN("no /dev/full: the write-error case is skipped");
    return;
  }
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(4 * kBlock, kBlock));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error));
  // Location 0's event file is /dev/full: every write to it fails with ENOSPC.
  fs::create_directories(dir.path + "/traces");
  fs::create_symlink("/dev/full", dir.path + "/traces/0.evt");
  Records r0, r1;
  r0.enter(kT0, kMain);
  r0.leave(kT0 + 10, kMain);
  r1.enter(kT0 + 1, kWorker);
  REQUIRE(w.write_events(kLoc1, r1.buf, false));  // still in memory: location 1 is fine so far
  CHECK_FALSE(w.failed());
  CHECK_FALSE(w.write_events(kLoc0, r0.buf, true));  // the close writes the file: it fails
  CHECK(w.failed());
  // Stopped at once: every event file of the process is closed and removed (the link, not /dev/full).
  CHECK_FALSE(fs::exists(fs::symlink_status(dir.path + "/traces/0.evt")));
  CHECK_FALSE(fs::exists(dir.path + "/traces/1.evt"));
  CHECK(fs::exists("/dev/full"));
  // Later records are only counted.
  r1.leave(kT0 + 20, kWorker);
  CHECK_FALSE(w.write_events(kLoc1, r1.buf, false));
  CHECK(w.stats().dropped_events == 2);
  // One line, once: cause, directory, what happens, the fix.
  const std::string line = w.take_failure("the profile is kept");
  INFO(line);
  CHECK(line.rfind("cannot write the trace in '" + dir.path + "' (No space left on device: ", 0) == 0);
  CHECK(line.find("tracing stopped and its files are removed, the profile is kept; free space there") != std::string::npos);
  CHECK(line.find("PROF_EXPERIMENT_DIRECTORY") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(w.take_failure(nullptr).empty());
  // finish removes the rest: no traces.otf2 that readers would choke on.
  CHECK_FALSE(w.finish(definitions(w, kT0, kT0 + 20, 2), &error));
  CHECK(error.empty());  // the line above was this process's
  CHECK_FALSE(fs::exists(dir.archive()));
  CHECK_FALSE(fs::exists(dir.path + "/traces.def"));
  CHECK_FALSE(fs::exists(dir.path + "/traces"));
  CHECK_FALSE(w.is_open());
}

namespace {

/// Rank `rank` of a two-rank job that failed: its own events (main, and foo on rank 0 only)
/// written into the shared archive in `dir`, opened without collectives (join).
void write_rank_events(otf2w::TraceWriter& w, prof::ChunkPool& blocks, const std::string& dir, std::uint32_t rank) {
  std::string error;
  REQUIRE(w.open(dir, &blocks, &error, nullptr, 0, true));
  Records r;
  r.enter(kT0 + rank, kMain);
  if (rank == 0) {
    r.enter(kT0 + 5, kFoo);
    r.leave(kT0 + 6, kFoo);
  }
  r.leave(kT0 + 10 + rank, kMain);
  REQUIRE(w.write_events(std::uint64_t{rank} << 32, r.buf, true));
}

/// The merged definitions of the ranks in `present` (of 2; their event counts as
/// write_rank_events wrote them): rank 1's regions first (it merged first), then rank 0's new
/// one, as partial_trace orders them.
otf2w::Definitions merged_definitions(const std::vector<std::uint32_t>& present) {
  otf2w::Definitions d;
  d.clock.resolution = 1000000000;
  d.clock.offset = kT0;
  d.clock.length = 20;
  d.machine = "test machine";
  d.mpp_paradigm = "MPI";
  d.regions = {region("main", "main.c", 10)};
  for (std::uint32_t r : present)
    if (r == 0) d.regions.push_back(region("foo", "foo.c", 5));
  for (std::uint32_t r = 0; r < 2; ++r) {
    prof::unify::ProcessPart p;
    p.rank = r;
    p.host = "node" + std::to_string(r);
    const std::uint64_t id = std::uint64_t{r} << 32;
    if (std::find(present.begin(), present.end(), r) != present.end())
      p.locations.push_back({id, "Master thread", r == 0 ? 4u : 2u, 0, ""});
    d.processes.push_back(p);
  }
  return d;
}

}  // namespace

TEST_CASE("otf2 writer: a merge after a failed rank is readable whenever its writer is killed", "[otf2]") {
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(4 * kBlock, kBlock));
  std::string error;
  // Rank 1 writes first: an archive of rank 1 and rank 0's empty placeholder.
  otf2w::TraceWriter w1;
  write_rank_events(w1, blocks, dir.path, 1);
  otf2w::LocalDefs l1;
  l1.locations = {kLoc1};
  l1.region_map = {0, 0, 0, 0, 0};  // its local kMain (0) is global 0
  REQUIRE(w1.write_merged(merged_definitions({1}), {l1}, "prof-parts", &error));
  CHECK(fs::is_symlink(dir.archive()));
  CHECK(fs::read_symlink(dir.archive()) == "prof-parts/current/traces.otf2");
  // Rank 0 writes later, with a region rank 1 lacks: traces.def gets more definitions than the
  // first anchor counts. A copy of the experiment after every step is what a kill would leave.
  otf2w::TraceWriter w0;
  write_rank_events(w0, blocks, dir.path, 0);
  otf2w::LocalDefs l0;
  l0.locations = {kLoc0};
  l0.region_map = {0, 0, 1, 0, 0};  // kMain → 0, kFoo → 1
  std::vector<std::string> steps;
  const std::string snapshots = dir.path + "-steps";
  w0.on_merge_step([&](const std::string& step) {
    const std::string copy = snapshots + "/" + std::to_string(steps.size());
    REQUIRE(run("mkdir -p '" + snapshots + "' && cp -a '" + dir.path + "' '" + copy + "'", dir.path).rc == 0);
    steps.push_back(step);
  });
  REQUIRE(w0.write_merged(merged_definitions({1, 0}), {l1, l0}, "prof-parts", &error));
  CHECK(steps == std::vector<std::string>{"written", "local definitions", "current", "traces.def", "traces.otf2"});
  bool published = false;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    INFO("killed after the step '" << steps[i] << "'");
    const RunResult printed = run("otf2-print '" + snapshots + "/" + std::to_string(i) + "/traces.otf2'", dir.path);
    INFO(printed.out << printed.err);
    CHECK(printed.rc == 0);
    CHECK(printed.err == "");
    // Before `current` moves: rank 1's trace; from then on both ranks'.
    published = published || steps[i] == "current";
    CHECK(count_events(printed.out)["ENTER"] == (published ? 3u : 1u));
  }
  // In the end: one merge's folder beside `current`, no placeholder left for rank 0.
  std::size_t merges = 0;
  for (const auto& e : fs::directory_iterator(dir.path + "/prof-parts")) merges += e.path().filename().string().rfind("trace-", 0) == 0;
  CHECK(merges == 1);
  CHECK_FALSE(fs::exists(dir.path + "/traces/" + std::to_string(otf2w::placeholder_location(0)) + ".evt"));
  check_with_otf2_check(dir, "");
  fs::remove_all(snapshots);
}

TEST_CASE("otf2 event chunks re-cut to a smaller size read as the same events", "[otf2]") {
  namespace chunks = prof::otf2w::chunks;
  constexpr std::uint64_t kFrom = 1u << 20, kTo = 256u << 10;
  TempDir dir;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(2 * kFrom, kFrom));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error, nullptr, kFrom));
  // Several 1 MiB chunks of events with attribute lists (the correlation id), runs of equal
  // timestamps (one timestamp record for several events) and a long record (ProgramBegin's
  // many arguments): each must stay with its timestamp and its attributes in the new chunks.
  std::vector<std::string> args(300, "an-argument");
  w.set_program("./a.out", args);
  Records r;
  Timestamp t = kT0;
  r.add(t, RecordType::ProgramBegin);
  r.enter(++t, kMain);
  for (std::uint32_t i = 0; i < 80000; ++i) {
    r.add(++t, RecordType::CorrelationId, 100 + i);
    r.enter(t, kFoo);
    r.enter(t, kWorker);
    r.leave(t + 1, kWorker);
    r.leave(++t, kFoo);
    if (r.count > 20000) {
      REQUIRE(w.write_events(kLoc0, r.buf, false));
      r.clear();
    }
  }
  r.leave(++t, kMain);
  r.add(++t, RecordType::ProgramEnd, 0, true, 0);
  REQUIRE(w.write_events(kLoc0, r.buf, true));
  otf2w::Definitions d = definitions(w, kT0, t, 1);  // a CUDA region: the correlation attribute is defined
  d.regions.push_back(region("cudaLaunchKernel", "", -1, prof::regions::Paradigm::Cuda, prof::regions::Role::Wrapper));
  REQUIRE(w.finish(d, &error));
  const std::string evt = dir.path + "/traces/0.evt";
  const std::uint64_t before = fs::file_size(evt);
  REQUIRE(before > 2 * kFrom);  // several chunks to re-cut

  const RunResult original = run("otf2-print '" + dir.archive() + "'", dir.path);
  REQUIRE(original.rc == 0);
  REQUIRE(original.err == "");
  chunks::RecutCounts counts;
  REQUIRE(chunks::recut_file(evt, evt + ".recut", kFrom, kTo, &counts, &error));
  INFO(error);
  CHECK(counts.events == w.event_count(kLoc0));
  CHECK(counts.bytes_in == before);
  REQUIRE(chunks::recut_anchor(dir.archive(), dir.archive() + ".recut", kFrom, kTo, &error));
  // A second target is never overwritten, and a wrong old size is refused.
  CHECK_FALSE(chunks::recut_file(evt, evt + ".recut", kFrom, kTo, &counts, &error));
  CHECK_FALSE(chunks::recut_anchor(dir.archive(), dir.path + "/other.otf2", kTo, kTo, &error));
  CHECK(error.find("layout") != std::string::npos);
  fs::rename(evt + ".recut", evt);
  fs::rename(dir.archive() + ".recut", dir.archive());

  const RunResult recut = run("otf2-print -A '" + dir.archive() + "'", dir.path);
  REQUIRE(recut.rc == 0);
  CHECK(recut.err == "");
  CHECK(recut.out.find("Chunk size events              262144") != std::string::npos);
  const RunResult events = run("otf2-print '" + dir.archive() + "'", dir.path);
  CHECK(events.out == original.out);  // every event, its time and attributes, in order
  CHECK(count_events(events.out)["ENTER"] == 160001);
  // The chunks: whole 256 KiB ones, each header's event positions continuing the last.
  std::ifstream in(evt, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(bytes.size() > 4 * kTo);
  std::uint64_t next = 1, first = 0, last = 0;
  for (std::size_t at = 0; at < bytes.size(); at += kTo) {
    REQUIRE(bytes[at] == chunks::kHeader);
    std::memcpy(&first, &bytes[at + 2], 8);
    std::memcpy(&last, &bytes[at + 10], 8);
    CHECK(first == next);
    CHECK(last >= first);
    CHECK(bytes[at + chunks::kHeaderBytes] == chunks::kTimestamp);
    next = last + 1;
  }
  CHECK(last == w.event_count(kLoc0));
  check_with_otf2_check(dir, "--expect-locations 1 --expect-region foo");
}

TEST_CASE("otf2 stop dump: the pending chunk and a resumed writer splice into the same events", "[otf2]") {
  // What prof-salvage does with a stop dump (partial_trace): the event file as a SIGKILL left it
  // (the flushed chunks), the writer's chunk that was still in memory (resume_state), then the
  // rest converted by a fresh writer that resumes the saved state. The result must read as the
  // events one writer wrote: same times, attributes and nesting (the rest begins inside open
  // regions, with a correlation id waiting for its Enter).
  namespace chunks = prof::otf2w::chunks;
  // 4 MiB: OTF2's file layer writes chunks that big straight to the file (smaller ones wait in
  // its own 4 MiB buffer, which a kill loses: the gap below).
  constexpr std::uint64_t kChunk = 4u << 20;
  TempDir dir, scratch;
  prof::ChunkPool blocks;
  REQUIRE(blocks.init(2 * kChunk, kChunk));
  otf2w::TraceWriter w;
  std::string error;
  REQUIRE(w.open(dir.path, &blocks, &error, nullptr, kChunk));
  w.set_program("./a.out", {"x"});
  Records r;
  Timestamp t = kT0;
  const auto calls = [&](std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      r.enter(++t, kFoo);
      r.add(t, RecordType::CorrelationId, 7 + i);
      r.enter(t, kWorker);
      r.leave(++t, kWorker);
      r.leave(++t, kFoo);
      if (r.count > 20000) {
        REQUIRE(w.write_events(kLoc0, r.buf, false));
        r.clear();
      }
    }
  };
  r.add(t, RecordType::ProgramBegin);
  r.enter(++t, kMain);
  calls(300000);
  r.enter(++t, kFoo);                          // open across the stop
  r.add(t, RecordType::CorrelationId, 99999);  // waiting for the Enter after the stop
  REQUIRE(w.write_events(kLoc0, r.buf, false));
  r.clear();

  otf2w::WriterResume st;
  REQUIRE(w.resume_state(kLoc0, &st));
  CHECK(st.events == w.event_count(kLoc0));
  REQUIRE(st.first > 1);  // chunks went to disk before
  REQUIRE(st.pending.size() > chunks::kHeaderBytes + 1);
  CHECK(st.pending.back() == chunks::kEndOfChunk);
  CHECK(st.open == std::vector<std::uint32_t>{kMain, kFoo});
  CHECK(st.correlation == 99999);
  const std::string evt = dir.path + "/traces/0.evt";
  fs::copy_file(evt, dir.path + "/killed.evt");  // the file as a kill leaves it

  // The rest: converted by the live writer (the reference) and by a resumed one (the salvage).
  Records rest;
  rest.enter(++t, kWorker);
  rest.leave(++t, kWorker);
  for (std::uint32_t i = 0; i < 100; ++i) {
    rest.enter(++t, kWorker);
    rest.leave(++t, kWorker);
  }
  rest.leave(++t, kFoo);
  rest.leave(++t, kMain);
  rest.add(++t, RecordType::ProgramEnd, 0, true, 0);
  REQUIRE(w.write_events(kLoc0, rest.buf, true));
  otf2w::TraceWriter resumed;
  REQUIRE(resumed.open(scratch.path, nullptr, &error, nullptr, kChunk));
  resumed.set_program("./a.out", {"x"});
  resumed.resume(kLoc0, st);
  REQUIRE(resumed.write_events(kLoc0, rest.buf, true));
  CHECK(resumed.stats().dropped_leaves == 0);  // the Leaves of main and foo found their Enters
  otf2w::Definitions d = definitions(w, kT0, t, 1);
  d.regions.push_back(region("cudaLaunchKernel", "", -1, prof::regions::Paradigm::Cuda, prof::regions::Role::Wrapper));
  REQUIRE(w.finish(d, &error));
  const RunResult reference = run("otf2-print '" + dir.archive() + "'", dir.path);
  REQUIRE(reference.rc == 0);
  REQUIRE(reference.err == "");

  chunks::SpliceCounts c;
  const std::string rest_evt = scratch.path + "/traces/0.evt";
  REQUIRE(chunks::splice_file(dir.path + "/killed.evt", st.pending, st.first, rest_evt, evt + ".stop", kChunk, &c, &error));
  INFO(error);
  CHECK(c.from_file == st.first - 1);
  CHECK(c.gap == 0);
  CHECK(c.from_file + c.from_pending == st.events);
  CHECK(c.from_file + c.from_pending + c.from_tail == w.event_count(kLoc0));
  fs::rename(evt + ".stop", evt);
  const RunResult spliced = run("otf2-print '" + dir.archive() + "'", dir.path);
  REQUIRE(spliced.rc == 0);
  CHECK(spliced.err == "");
  CHECK(spliced.out == reference.out);  // every event, its time and attributes, in order
  check_with_otf2_check(dir, "--expect-locations 1 --expect-region foo");

  // Without the pending chunk (lost), the splice says how many events it misses.
  REQUIRE(chunks::splice_file(dir.path + "/killed.evt", {}, st.events + 1, rest_evt, evt + ".gap", kChunk, &c, &error));
  CHECK(c.from_file == st.first - 1);
  CHECK(c.gap == st.events - (st.first - 1));
  // A target that exists is never overwritten.
  CHECK_FALSE(chunks::splice_file(dir.path + "/killed.evt", st.pending, st.first, rest_evt, evt + ".gap", kChunk, &c, &error));
}
