// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the shadow call stack in events.{hpp,cpp}: balanced enter/leave, repair of
// skipped exits, unmatched leaves, unwind_to, close_all_frames, recording on/off, deep
// recursion. A hand-made Location writes into one big chunk of a pool the test owns, so the
// runtime's slow path (reserve_slow) is never needed.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "adapters/compiler/hook.hpp"
#include "measurement/events.hpp"
#include "measurement/location.hpp"
#include "measurement/memory/pool.hpp"
#include "measurement/record.hpp"
#include "measurement/timer.hpp"

using prof::Location;
using prof::Record;
using prof::RecordType;
using prof::RegionId;

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;  // 65535 records: more than any test writes

struct Fixture {
  prof::ChunkPool pool;
  Location loc;

  Fixture() {
    prof::timer::init(2);
    REQUIRE(pool.init(kChunk, kChunk));
    void* c = pool.acquire();
    REQUIRE(c != nullptr);
    loc.trace.add_chunk(c, kChunk);
    loc.tracing = true;
    prof::g_recording = true;
  }
  ~Fixture() {
    prof::g_recording = true;
    loc.trace.release_all([&](void* c) { pool.release(c); });
    std::free(loc.frames);
    loc.frames = nullptr;
  }
};

struct Ev {
  RecordType type;
  RegionId ref;
  prof::Timestamp time;
};

std::vector<Ev> records(const Location& loc) {
  std::vector<Ev> out;
  loc.trace.for_each([&](const Record& r, const prof::Payload*) { out.push_back({r.type, r.ref, r.time}); });
  return out;
}

/// The stream as "E1 E2 L2 L1": compact to compare and readable in a failure message.
std::string shape(const std::vector<Ev>& evs) {
  std::string s;
  for (const Ev& e : evs) {
    if (!s.empty()) s += ' ';
    s += e.type == RecordType::Enter ? 'E' : e.type == RecordType::Leave ? 'L' : '?';
    s += std::to_string(e.ref);
  }
  return s;
}

/// Every Leave closes the innermost open Enter, timestamps never decrease, and (when
/// `closed`) nothing stays open. Returns an empty string or the first problem.
std::string check_balanced(const std::vector<Ev>& evs, bool closed = true) {
  std::vector<RegionId> open;
  prof::Timestamp last = 0;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    const Ev& e = evs[i];
    if (e.time < last) return "timestamp decreases at record " + std::to_string(i);
    last = e.time;
    if (e.type == RecordType::Enter) {
      open.push_back(e.ref);
    } else if (e.type == RecordType::Leave) {
      if (open.empty()) return "Leave of " + std::to_string(e.ref) + " with nothing open at record " + std::to_string(i);
      if (open.back() != e.ref)
        return "Leave of " + std::to_string(e.ref) + " closes " + std::to_string(open.back()) + " at record " +
               std::to_string(i);
      open.pop_back();
    } else {
      return "unexpected record type at record " + std::to_string(i);
    }
  }
  if (closed && !open.empty()) return std::to_string(open.size()) + " regions left open";
  return "";
}

// Fake stack pointers: deeper frames have smaller values.
constexpr std::uintptr_t kTop = 0x7fff0000;
constexpr std::uintptr_t cfa(int depth) { return kTop - static_cast<std::uintptr_t>(depth) * 0x100; }

}  // namespace

TEST_CASE("shadow stack: balanced enter and leave write matching records", "[shadow-stack]") {
  Fixture f;
  Location* loc = &f.loc;
  prof::enter(loc, 1, cfa(0));
  prof::enter(loc, 2, cfa(1));
  CHECK(loc->depth == 2);
  prof::leave(loc, 2, cfa(1));
  prof::enter(loc, 3, cfa(1));
  prof::enter(loc, 4, cfa(2));
  prof::leave(loc, 4, cfa(2));
  prof::leave(loc, 3, cfa(1));
  prof::leave(loc, 1, cfa(0));

  std::vector<Ev> evs = records(*loc);
  CHECK(shape(evs) == "E1 E2 L2 E3 E4 L4 L3 L1");
  CHECK(check_balanced(evs) == "");
  CHECK(loc->depth == 0);
  CHECK(loc->repairs == 0);
  CHECK(loc->unmatched_leaves == 0);
  CHECK(loc->closed_at_end == 0);
}

TEST_CASE("shadow stack: leave of an outer region repairs the inner frames", "[shadow-stack]") {
  Fixture f;
  Location* loc = &f.loc;

  SECTION("the outermost frame") {
    prof::enter(loc, 1, cfa(0));
    prof::enter(loc, 2, cfa(1));
    prof::enter(loc, 3, cfa(2));
    prof::leave(loc, 1, cfa(0));  // the exits of 3 and 2 never came

    std::vector<Ev> evs = records(*loc);
    CHECK(shape(evs) == "E1 E2 E3 L3 L2 L1");
    CHECK(check_balanced(evs) == "");
    REQUIRE(evs.size() == 6);
    CHECK(evs[3].time == evs[5].time);
    CHECK(evs[4].time == evs[5].time);
    CHECK(loc->repairs == 2);
    CHECK(loc->depth == 0);
    CHECK(loc->unmatched_leaves == 0);
  }
  SECTION("a middle frame; the frames below stay open") {
    prof::enter(loc, 1, cfa(0));
    prof::enter(loc, 2, cfa(1));
    prof::enter(loc, 3, cfa(2));
    prof::enter(loc, 4, cfa(3));
    prof::enter(loc, 5, cfa(4));
    prof::leave(loc, 3, cfa(2));
    CHECK(loc->repairs == 2);
    CHECK(loc->depth == 2);
    prof::leave(loc, 2, cfa(1));
    prof::leave(loc, 1, cfa(0));
    CHECK(loc->repairs == 2);

    std::vector<Ev> evs = records(*loc);
    CHECK(shape(evs) == "E1 E2 E3 E4 E5 L5 L4 L3 L2 L1");
    CHECK(check_balanced(evs) == "");
    REQUIRE(evs.size() == 10);
    CHECK(evs[5].time == evs[7].time);
    CHECK(evs[6].time == evs[7].time);
  }
  SECTION("the innermost open frame of a recursive region") {
    prof::enter(loc, 1, cfa(0));
    prof::enter(loc, 7, cfa(1));
    prof::enter(loc, 1, cfa(2));  // recursion into 1
    prof::enter(loc, 8, cfa(3));
    prof::leave(loc, 1, cfa(2));  // closes the inner 1, repairs 8 only
    CHECK(loc->repairs == 1);
    CHECK(loc->depth == 2);
    prof::leave(loc, 7, cfa(1));
    prof::leave(loc, 1, cfa(0));
    std::vector<Ev> evs = records(*loc);
    CHECK(shape(evs) == "E1 E7 E1 E8 L8 L1 L7 L1");
    CHECK(check_balanced(evs) == "");
  }
}

TEST_CASE("shadow stack: a leave without an open frame is counted and writes nothing", "[shadow-stack]") {
  Fixture f;
  Location* loc = &f.loc;

  SECTION("empty stack") {
    prof::leave(loc, 5, cfa(0));
    CHECK(loc->unmatched_leaves == 1);
    CHECK(records(*loc).empty());
    CHECK(loc->depth == 0);
  }
  SECTION("region not on the stack") {
    prof::enter(loc, 1, cfa(0));
    prof::enter(loc, 2, cfa(1));
    prof::leave(loc, 9, cfa(2));
    CHECK(loc->unmatched_leaves == 1);
    CHECK(loc->repairs == 0);
    CHECK(loc->depth == 2);  // nothing popped
    CHECK(shape(records(*loc)) == "E1 E2");
    prof::leave(loc, 2, cfa(1));
    prof::leave(loc, 1, cfa(0));
    prof::leave(loc, 1, cfa(0));  // one too many
    CHECK(loc->unmatched_leaves == 2);
    std::vector<Ev> evs = records(*loc);
    CHECK(shape(evs) == "E1 E2 L2 L1");
    CHECK(check_balanced(evs) == "");
  }
}

TEST_CASE("shadow stack: unwind_to pops exactly the frames below the stack pointer", "[shadow-stack]") {
  Fixture f;
  Location* loc = &f.loc;
  for (int d = 0; d < 5; ++d) prof::enter(loc, static_cast<RegionId>(10 + d), cfa(d));  // cfa(4) deepest

  SECTION("a value between two frames") {
    prof::unwind_to(loc, cfa(2) - 1);  // frames 3 and 4 are deeper
    CHECK(loc->depth == 3);
    CHECK(loc->repairs == 2);
  }
  SECTION("a value equal to a frame's cfa keeps that frame") {
    prof::unwind_to(loc, cfa(2));
    CHECK(loc->depth == 3);
    CHECK(loc->repairs == 2);
    prof::unwind_to(loc, cfa(2));  // idempotent
    CHECK(loc->depth == 3);
    CHECK(loc->repairs == 2);
  }
  SECTION("a value above every frame pops them all") {
    prof::unwind_to(loc, kTop + 1);
    CHECK(loc->depth == 0);
    CHECK(loc->repairs == 5);
  }
  SECTION("a value below every frame pops nothing") {
    prof::unwind_to(loc, cfa(4));
    CHECK(loc->depth == 5);
    CHECK(loc->repairs == 0);
    CHECK(shape(records(*loc)) == "E10 E11 E12 E13 E14");
  }
  SECTION("an unknown stack pointer (0) pops nothing") {
    loc->unwind_check = true;
    prof::unwind_to(loc, 0);
    CHECK_FALSE(loc->unwind_check);
    CHECK(loc->depth == 5);
    CHECK(loc->repairs == 0);
  }
  // The remaining frames close normally; the stream stays balanced.
  std::vector<Ev> before = records(*loc);
  for (std::uint32_t d = loc->depth; d > 0; --d)
    prof::leave(loc, static_cast<RegionId>(10 + d - 1), cfa(static_cast<int>(d - 1)));
  CHECK(loc->depth == 0);
  CHECK(loc->unmatched_leaves == 0);
  std::vector<Ev> evs = records(*loc);
  CHECK(shape(evs) == "E10 E11 E12 E13 E14 L14 L13 L12 L11 L10");
  CHECK(check_balanced(evs) == "");
  // Leaves written by one unwind share one timestamp.
  if (loc->repairs >= 2) {
    REQUIRE(before.size() >= 7);
    CHECK(before[5].time == before[6].time);
  }
}

TEST_CASE("shadow stack: enter and leave with unwind_check unwind first", "[shadow-stack]") {
  Fixture f;
  Location* loc = &f.loc;
  prof::enter(loc, 1, cfa(0));
  prof::enter(loc, 2, cfa(1));
  prof::enter(loc, 3, cfa(2));
  prof::enter(loc, 4, cfa(3));

  SECTION("enter") {
    // A longjmp back into region 2's frame, which then calls region 5.
    loc->unwind_check = true;
    prof::enter(loc, 5, cfa(2) + 0x10);  // between 2 and 3: 3 and 4 are gone
    CHECK_FALSE(loc->unwind_check);
    CHECK(loc->repairs == 2);
    CHECK(loc->depth == 3);
    prof::leave(loc, 5, cfa(2) + 0x10);
    prof::leave(loc, 2, cfa(1));
    prof::leave(loc, 1, cfa(0));
    std::vector<Ev> evs = records(*loc);
    CHECK(shape(evs) == "E1 E2 E3 E4 L4 L3 E5 L5 L2 L1");
    CHECK(check_balanced(evs) == "");
  }
  SECTION("leave") {
    // A longjmp out of 4 back into 2, which then returns: its exit carries its own cfa.
    loc->unwind_check = true;
    prof::leave(loc, 2, cfa(1));
    CHECK_FALSE(loc->unwind_check);
    CHECK(loc->repairs == 2);
    CHECK(loc->unmatched_leaves == 0);
    CHECK(loc->depth == 1);
    prof::leave(loc, 1, cfa(0));
    std::vector<Ev> evs = records(*loc);
    CHECK(shape(evs) == "E1 E2 E3 E4 L4 L3 L2 L1");
    CHECK(check_balanced(evs) == "");
  }
  SECTION("without unwind_check the cfa is not looked at") {
    prof::enter(loc, 5, cfa(0) + 0x10);  // above all frames, but no check requested
    CHECK(loc->depth == 5);
    CHECK(loc->repairs == 0);
    prof::leave(loc, 5, cfa(0) + 0x10);
    prof::leave(loc, 1, cfa(0));  // repairs 4, 3, 2
    CHECK(loc->repairs == 3);
    CHECK(check_balanced(records(*loc)) == "");
  }
}

TEST_CASE("shadow stack: close_all_frames leaves every open frame", "[shadow-stack]") {
  Fixture f;
  Location* loc = &f.loc;
  prof::enter(loc, 1, cfa(0));
  prof::enter(loc, 2, cfa(1));
  prof::enter(loc, 3, cfa(2));
  const prof::Timestamp t_end = prof::timer::now() + 1000;
  CHECK(prof::close_all_frames(loc, t_end) == 3);
  CHECK(loc->depth == 0);
  CHECK(loc->closed_at_end == 3);
  CHECK(loc->repairs == 0);

  std::vector<Ev> evs = records(*loc);
  CHECK(shape(evs) == "E1 E2 E3 L3 L2 L1");
  CHECK(check_balanced(evs) == "");
  REQUIRE(evs.size() == 6);
  for (std::size_t i = 3; i < 6; ++i) CHECK(evs[i].time == t_end);

  // Nothing open: nothing written, nothing counted.
  CHECK(prof::close_all_frames(loc, t_end + 1) == 0);
  CHECK(loc->closed_at_end == 3);
  CHECK(records(*loc).size() == 6);
}

TEST_CASE("shadow stack: recording off writes nothing but keeps the stack balanced", "[shadow-stack]") {
  Fixture f;
  Location* loc = &f.loc;

  SECTION("frames entered while off write neither Enter nor Leave") {
    prof::g_recording = false;
    prof::enter(loc, 1, cfa(0));
    prof::enter(loc, 2, cfa(1));
    prof::leave(loc, 2, cfa(1));
    CHECK(loc->depth == 1);
    prof::g_recording = true;
    prof::enter(loc, 3, cfa(1));  // recorded
    prof::leave(loc, 3, cfa(1));
    prof::leave(loc, 1, cfa(0));  // entered while off: no Leave even though recording is on
    CHECK(loc->depth == 0);
    CHECK(loc->unmatched_leaves == 0);
    std::vector<Ev> evs = records(*loc);
    CHECK(shape(evs) == "E3 L3");
    CHECK(check_balanced(evs) == "");
  }
  SECTION("a frame entered while on gets its Leave after recording was switched off") {
    prof::enter(loc, 1, cfa(0));
    prof::g_recording = false;
    prof::enter(loc, 2, cfa(1));
    prof::leave(loc, 2, cfa(1));
    prof::leave(loc, 1, cfa(0));
    prof::g_recording = true;
    std::vector<Ev> evs = records(*loc);
    CHECK(shape(evs) == "E1 L1");
    CHECK(check_balanced(evs) == "");
  }
  SECTION("repairs and close_all_frames write Leaves only for recorded frames") {
    prof::enter(loc, 1, cfa(0));
    prof::g_recording = false;
    prof::enter(loc, 2, cfa(1));
    prof::g_recording = true;
    prof::enter(loc, 3, cfa(2));
    prof::enter(loc, 4, cfa(3));
    prof::leave(loc, 3, cfa(2));  // repairs 4 (recorded)
    CHECK(loc->repairs == 1);
    prof::g_recording = false;
    prof::enter(loc, 5, cfa(2));
    prof::g_recording = true;
    prof::leave(loc, 1, cfa(0));  // repairs 5 (not recorded) and 2 (not recorded)
    CHECK(loc->repairs == 3);
    prof::enter(loc, 6, cfa(0));
    prof::g_recording = false;
    prof::enter(loc, 7, cfa(1));
    CHECK(prof::close_all_frames(loc, prof::timer::now()) == 2);
    std::vector<Ev> evs = records(*loc);
    CHECK(shape(evs) == "E1 E3 E4 L4 L3 L1 E6 L6");
    CHECK(check_balanced(evs) == "");
  }
  SECTION("tracing off writes nothing and still tracks the stack") {
    loc->tracing = false;
    prof::enter(loc, 1, cfa(0));
    prof::enter(loc, 2, cfa(1));
    prof::leave(loc, 1, cfa(0));
    CHECK(loc->repairs == 1);
    CHECK(loc->depth == 0);
    CHECK(records(*loc).empty());
  }
}

TEST_CASE("shadow stack: deep recursion grows the stack and stays balanced", "[shadow-stack]") {
  Fixture f;
  Location* loc = &f.loc;
  constexpr int kDepth = 20000;
  for (int d = 0; d < kDepth; ++d) prof::enter(loc, static_cast<RegionId>(d % 7), cfa(d));
  CHECK(loc->depth == kDepth);
  CHECK(loc->capacity >= kDepth);
  for (int d = kDepth - 1; d >= 0; --d) prof::leave(loc, static_cast<RegionId>(d % 7), cfa(d));
  CHECK(loc->depth == 0);
  CHECK(loc->repairs == 0);
  CHECK(loc->unmatched_leaves == 0);

  std::vector<Ev> evs = records(*loc);
  CHECK(evs.size() == 2 * kDepth);
  CHECK(check_balanced(evs) == "");
  for (int d = 0; d < kDepth; ++d) {
    if (evs[d].type != RecordType::Enter || evs[d].ref != static_cast<RegionId>(d % 7)) {
      FAIL("record " << d << " is not Enter " << d % 7);
    }
  }
}

TEST_CASE("shadow stack: payload events go between the frames' records", "[shadow-stack]") {
  Fixture f;
  Location* loc = &f.loc;
  prof::enter(loc, 1, cfa(0));
  prof::event(loc, prof::timer::now(), RecordType::AcquireLock, 7, 3);
  prof::leave(loc, 1, cfa(0));
  loc->tracing = false;
  prof::event(loc, prof::timer::now(), RecordType::ReleaseLock, 7, 3);  // not tracing: dropped

  std::vector<RecordType> types;
  std::vector<std::uint64_t> values;
  loc->trace.for_each([&](const Record& r, const prof::Payload* p) {
    types.push_back(r.type);
    values.push_back(r.slots ? p[0].a : ~0ull);
  });
  CHECK(types == std::vector<RecordType>{RecordType::Enter, RecordType::AcquireLock, RecordType::Leave});
  REQUIRE(values.size() == 3);
  CHECK(values[1] == 3);
  CHECK(loc->depth == 0);
}

TEST_CASE("a Leave whose Enter was lost for lack of memory is not written either", "[shadow]") {
  constexpr std::size_t kSmall = 4096;
  prof::ChunkPool pool;
  REQUIRE(pool.init(2 * kSmall, kSmall));
  prof::timer::init(2);
  prof::g_recording = true;
  Location loc;
  loc.tracing = true;
  loc.trace.add_chunk(pool.acquire(), kSmall);
  // Enters of region 1 until one is lost (no runtime here: the slow path has no memory to give).
  unsigned n = 0;
  while (loc.lost_events == 0 && n < 10000) {
    prof::enter(&loc, 1 + (n % 3), 0);
    ++n;
  }
  REQUIRE(loc.lost_events == 1);
  REQUIRE(n > 1);
  loc.trace.add_chunk(pool.acquire(), kSmall);  // memory again
  for (unsigned i = n; i > 0; --i) prof::leave(&loc, 1 + ((i - 1) % 3), 0);
  const std::vector<Ev> evs = records(loc);
  CHECK(evs.size() == 2 * (n - 1));  // the lost Enter's Leave is left out
  CHECK(check_balanced(evs) == "");
  CHECK(loc.depth == 0);
  loc.trace.release_all([&](void* c) { pool.release(c); });
  std::free(loc.frames);
  loc.frames = nullptr;
}

namespace {
/// A compiler region that throttling may stop (define_unless_filtered marks it).
RegionId compiler_region(const std::string& name) {
  prof::regions::RegionDef d;
  d.name = name;
  d.paradigm = prof::regions::Paradigm::Compiler;
  return prof::regions::define_unless_filtered(d);
}
}  // namespace

TEST_CASE("throttling: the decision needs many visits of a short mean, once, for compiler regions only", "[shadow-stack][throttle]") {
  prof::regions::set_throttle(1000, 300, 1.0);  // ticks are ns here
  const RegionId r = compiler_region("throttle_decision_r");
  prof::regions::RegionDef user;
  user.name = "throttle_decision_user";
  user.paradigm = prof::regions::Paradigm::User;
  const RegionId u = prof::regions::define(user);
  CHECK_FALSE(prof::regions::consider_throttle(r, 512, 512 * 10));      // too few visits
  CHECK_FALSE(prof::regions::consider_throttle(r, 1024, 1024 * 300));   // mean not below 300 ns
  CHECK_FALSE(prof::regions::consider_throttle(u, 1024, 1024 * 10));    // not a compiler region
  CHECK_FALSE(prof::regions::throttled(r));
  std::uint32_t early = 0, late = 0;
  prof::regions::note_descriptor(r, &early);
  CHECK(early == 0);
  CHECK(prof::regions::consider_throttle(r, 1024, 1024 * 299));
  CHECK(prof::regions::throttled(r));
  CHECK(early == prof::regions::kDescriptorSkip);  // the plugin's code stops calling the hooks
  prof::regions::note_descriptor(r, &late);        // a descriptor resolved later: at once
  CHECK(late == prof::regions::kDescriptorSkip);
  CHECK_FALSE(prof::regions::consider_throttle(r, 2048, 10));  // once
  const std::vector<prof::regions::RegionDef> defs = prof::regions::snapshot();
  CHECK(defs[r].throttled_visits == 1024);
  CHECK(defs[r].throttled_mean_ns == 299);
  CHECK(prof::regions::throttled_description(1024, 299).rfind("throttled by prof (PROF_THROTTLE) after 1024 visits of 299 ns", 0) == 0);
  // off: nothing is throttled
  prof::regions::set_throttle(0, 300, 1.0);
  const RegionId off = compiler_region("throttle_decision_off");
  CHECK_FALSE(prof::regions::consider_throttle(off, 4096, 1));
}

TEST_CASE("throttling: throttled calls record nothing and keep the stack nested", "[shadow-stack][throttle]") {
  Fixture f;
  Location* loc = &f.loc;
  prof::regions::set_throttle(1000, 300, 1.0);
  const RegionId caller = compiler_region("throttle_stack_caller");
  const RegionId hot = compiler_region("throttle_stack_hot");
  const RegionId rec = compiler_region("throttle_stack_rec");
  using prof::compiler_hook::record;
  record(loc, caller, cfa(0), true, prof::Now{});
  // rec's outer frame opens before rec is throttled ...
  record(loc, rec, cfa(1), true, prof::Now{});
  REQUIRE(prof::regions::consider_throttle(rec, 1024, 1024));
  REQUIRE(prof::regions::consider_throttle(hot, 1024, 1024));
  // ... its inner calls, throttled, leave nothing, however deep; hot neither
  record(loc, rec, cfa(2), true, prof::Now{});
  record(loc, rec, cfa(3), true, prof::Now{});
  record(loc, hot, cfa(4), true, prof::Now{});
  record(loc, hot, cfa(4), false, prof::Now{});
  record(loc, rec, cfa(3), false, prof::Now{});
  record(loc, rec, cfa(2), false, prof::Now{});
  CHECK(loc->depth == 2);
  // the outer frame closes as usual
  record(loc, rec, cfa(1), false, prof::Now{});
  record(loc, hot, cfa(1), true, prof::Now{});
  record(loc, hot, cfa(1), false, prof::Now{});
  record(loc, caller, cfa(0), false, prof::Now{});
  // outside every frame too
  record(loc, hot, cfa(0), true, prof::Now{});
  CHECK(loc->root_skipped == 1);
  record(loc, hot, cfa(0), false, prof::Now{});
  CHECK(loc->root_skipped == 0);
  const std::vector<Ev> evs = records(*loc);
  CHECK(shape(evs) == "E" + std::to_string(caller) + " E" + std::to_string(rec) + " L" + std::to_string(rec) + " L" + std::to_string(caller));
  CHECK(check_balanced(evs) == "");
  CHECK(loc->depth == 0);
  CHECK(loc->repairs == 0);
  CHECK(loc->unmatched_leaves == 0);
  prof::regions::set_throttle(0, 300, 1.0);
}

namespace {
std::vector<std::uintptr_t> g_replayed;
std::vector<prof::Timestamp> g_replay_times;
void note_replay(Location*, const prof::DeferredEvent& e) {
  g_replayed.push_back(e.key);
  g_replay_times.push_back(e.time);
}
}  // namespace

// Issue 30: prof stays busy for milliseconds while it writes a full trace buffer; a signal
// handler's events meanwhile were dropped beyond 128.
TEST_CASE("deferred events: thousands deferred while prof is busy are all replayed, in order", "[shadow-stack][signals]") {
  Fixture fx;
  Location* loc = &fx.loc;
  const int phase = prof::g_phase.load();
  prof::g_phase.store(static_cast<int>(prof::Phase::Within));
  const auto fill = [&](std::uint32_t n) {
    g_replayed.clear();
    loc->busy = true;  // as when a handler interrupts prof
    for (std::uint32_t i = 0; i < n; ++i) REQUIRE(prof::defer(loc, &note_replay, i, 0, true));
    loc->busy = false;
  };
  const auto replayed_in_order = [&](std::uint32_t n) {
    prof::after_hook(loc);
    REQUIRE(g_replayed.size() == n);
    for (std::uint32_t i = 0; i < n; ++i) REQUIRE(g_replayed[i] == i);
    CHECK(loc->deferred_count.load() == 0);
  };
  fill(prof::kDeferredEvents + 5000);
  CHECK(loc->deferred_more.load() != nullptr);
  replayed_in_order(prof::kDeferredEvents + 5000);
  // Full: the next one is refused (the hook counts it as dropped); the room is used again.
  constexpr std::uint32_t room = prof::kDeferredEvents + prof::kDeferredMore;
  fill(room);
  loc->busy = true;
  CHECK_FALSE(prof::defer(loc, &note_replay, room, 0, true));
  loc->busy = false;
  replayed_in_order(room);
  CHECK(loc->replayed_events == prof::kDeferredEvents + 5000 + room);
  prof::g_phase.store(phase);
}

TEST_CASE("deferred events: replayed no earlier than the trace's last record", "[shadow-stack][signals]") {
  Fixture fx;
  Location* loc = &fx.loc;
  const int phase = prof::g_phase.load();
  prof::g_phase.store(static_cast<int>(prof::Phase::Within));
  g_replayed.clear();
  g_replay_times.clear();
  loc->busy = true;
  for (std::uintptr_t i = 0; i < 300; ++i) REQUIRE(prof::defer(loc, &note_replay, i, 0, true));
  loc->busy = false;
  // The interrupted hook wrote a record after the handler's events were taken.
  const prof::Timestamp late = prof::timer::now() + 1000000;
  REQUIRE(prof::detail::put(loc, late, RecordType::Enter, 1));
  prof::after_hook(loc);
  REQUIRE(g_replay_times.size() == 300);
  for (prof::Timestamp t : g_replay_times) CHECK(t == late);
  prof::g_phase.store(phase);
}
