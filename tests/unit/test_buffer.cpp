// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of EventBuffer: records and payload slots round-trip through for_each across
// chunks, no record straddles two chunks, clear/release_all hand chunks back, sizes, and
// for_each sees only committed records; the chunk pool under threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "measurement/buffer.hpp"
#include "measurement/memory/pool.hpp"
#include "measurement/record.hpp"

using prof::ChunkPool;
using prof::EventBuffer;
using prof::Payload;
using prof::Record;
using prof::RecordType;

namespace {

constexpr std::size_t kChunk = 256;  // 16 bytes of header, then 15 record slots

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

/// What for_each handed out, copied.
struct Seen {
  Record rec;
  std::vector<Payload> payload;
  std::uintptr_t at;  // address of the record header
};

std::vector<Seen> collect(const EventBuffer& buf) {
  std::vector<Seen> out;
  buf.for_each([&](const Record& r, const Payload* p) {
    Seen s{r, {}, addr(&r)};
    for (unsigned i = 0; i < r.slots; ++i) s.payload.push_back(p[i]);
    out.push_back(s);
  });
  return out;
}

/// A test fixture: a pool of small chunks and a buffer that takes a new chunk whenever
/// try_reserve says the current one is full, the way runtime::reserve_slow does.
struct Fixture {
  ChunkPool pool;
  EventBuffer buf;
  std::vector<void*> chunks;  // in the order added

  explicit Fixture(std::size_t count = 64) { REQUIRE(pool.init(count * kChunk, kChunk)); }
  ~Fixture() {
    buf.release_all([&](void* c) { pool.release(c); });
  }

  void add_chunk() {
    void* c = pool.acquire();
    REQUIRE(c != nullptr);
    buf.add_chunk(c, kChunk);
    chunks.push_back(c);
  }

  /// Reserves a record with `slots` payload slots, adding a chunk when needed; not committed.
  Record* reserve(unsigned slots) {
    Record* r = buf.try_reserve(slots);
    if (!r) {
      add_chunk();
      r = buf.try_reserve(slots);
    }
    REQUIRE(r != nullptr);
    return r;
  }

  Record* append(std::uint64_t time, RecordType type, std::uint32_t ref, unsigned slots = 0, std::uint64_t a = 0,
                 std::uint64_t b = 0) {
    Record* r = reserve(slots);
    r->time = time;
    r->type = type;
    r->slots = static_cast<std::uint8_t>(slots);
    r->aux = static_cast<std::uint16_t>(time & 0xffff);
    r->ref = ref;
    auto* p = reinterpret_cast<Payload*>(r + 1);
    for (unsigned i = 0; i < slots; ++i) p[i] = Payload{a + i, b + i};
    buf.commit();
    return r;
  }
};

}  // namespace

TEST_CASE("buffer without a chunk is empty and reserves nothing", "[buffer]") {
  EventBuffer buf;
  CHECK_FALSE(buf.has_chunk());
  CHECK(buf.empty());
  CHECK(buf.bytes() == 0);
  CHECK(buf.chunk_count() == 0);
  CHECK(buf.try_reserve(0) == nullptr);
  CHECK(collect(buf).empty());
}

TEST_CASE("buffer records round-trip through for_each in order across chunks", "[buffer]") {
  Fixture f;
  constexpr int kRecords = 100;  // 15 per chunk: 7 chunks
  for (int i = 0; i < kRecords; ++i)
    f.append(1000 + static_cast<std::uint64_t>(i), i % 2 ? RecordType::Leave : RecordType::Enter,
             static_cast<std::uint32_t>(i * 3));

  CHECK(f.buf.chunk_count() == 7);
  CHECK(f.pool.in_use() == 7);
  CHECK(f.buf.bytes() == kRecords * prof::kRecordBytes);
  CHECK_FALSE(f.buf.empty());

  std::vector<Seen> seen = collect(f.buf);
  REQUIRE(seen.size() == kRecords);
  for (int i = 0; i < kRecords; ++i) {
    CAPTURE(i);
    CHECK(seen[i].rec.time == 1000 + static_cast<std::uint64_t>(i));
    CHECK(seen[i].rec.type == (i % 2 ? RecordType::Leave : RecordType::Enter));
    CHECK(seen[i].rec.ref == static_cast<std::uint32_t>(i * 3));
    CHECK(seen[i].rec.aux == static_cast<std::uint16_t>(1000 + i));
    CHECK(seen[i].rec.slots == 0);
    // Record i sits in chunk i / 15, slot i % 15: chunks are used in the order added.
    CHECK(seen[i].at == addr(f.chunks[i / 15]) + sizeof(prof::ChunkHeader) + (i % 15) * prof::kRecordBytes);
  }
}

TEST_CASE("buffer payload slots round-trip and never straddle chunks", "[buffer]") {
  Fixture f;
  // A pattern of slot counts that does not divide the chunk evenly, so many records meet a
  // chunk end with too little room left.
  const unsigned pattern[] = {0, 1, 2, 0, 3, 1, 5, 0, 1, 4};
  constexpr int kRecords = 200;
  std::uint64_t expect_bytes = 0;
  for (int i = 0; i < kRecords; ++i) {
    unsigned slots = pattern[i % 10];
    f.append(static_cast<std::uint64_t>(i), RecordType::ThreadCreate, static_cast<std::uint32_t>(i), slots,
             0xA000u + static_cast<std::uint64_t>(i) * 16, 0xB000u + static_cast<std::uint64_t>(i) * 16);
    expect_bytes += prof::kRecordBytes * (1u + slots);
  }
  CHECK(f.buf.bytes() == expect_bytes);
  CHECK(f.buf.chunk_count() == f.chunks.size());
  CHECK(f.chunks.size() > expect_bytes / (kChunk - sizeof(prof::ChunkHeader)));  // some space was left unused

  std::vector<Seen> seen = collect(f.buf);
  REQUIRE(seen.size() == kRecords);
  for (int i = 0; i < kRecords; ++i) {
    CAPTURE(i);
    const Seen& s = seen[i];
    CHECK(s.rec.time == static_cast<std::uint64_t>(i));
    CHECK(s.rec.ref == static_cast<std::uint32_t>(i));
    REQUIRE(s.rec.slots == pattern[i % 10]);
    for (unsigned k = 0; k < s.rec.slots; ++k) {
      CHECK(s.payload[k].a == 0xA000u + static_cast<std::uint64_t>(i) * 16 + k);
      CHECK(s.payload[k].b == 0xB000u + static_cast<std::uint64_t>(i) * 16 + k);
    }
    // Header and payload lie inside one chunk, after its header.
    const std::uintptr_t end = s.at + prof::kRecordBytes * (1u + s.rec.slots);
    bool inside = false;
    for (void* c : f.chunks)
      if (s.at >= addr(c) + sizeof(prof::ChunkHeader) && end <= addr(c) + kChunk) inside = true;
    CHECK(inside);
  }
}

TEST_CASE("buffer try_reserve fails at the exact chunk end", "[buffer]") {
  Fixture f;
  f.add_chunk();
  for (int i = 0; i < 14; ++i) REQUIRE(f.buf.try_reserve(0) != nullptr);
  f.buf.commit();
  // 16 bytes left: a header fits, a header with one slot does not.
  CHECK(f.buf.try_reserve(1) == nullptr);
  CHECK(f.buf.try_reserve(0) != nullptr);
  CHECK(f.buf.try_reserve(0) == nullptr);
  CHECK(f.buf.chunk_count() == 1);
}

TEST_CASE("buffer for_each reads only committed records", "[buffer]") {
  Fixture f;
  f.append(1, RecordType::Enter, 7);
  f.append(2, RecordType::Enter, 8);

  Record* r = f.reserve(1);
  r->time = 3;
  r->type = RecordType::AcquireLock;
  r->slots = 1;
  r->aux = 0;
  r->ref = 9;
  reinterpret_cast<Payload*>(r + 1)->a = 42;

  std::vector<Seen> seen = collect(f.buf);
  REQUIRE(seen.size() == 2);
  CHECK(seen[1].rec.ref == 8);
  CHECK(f.buf.bytes() == 2 * prof::kRecordBytes);

  f.buf.commit();
  seen = collect(f.buf);
  REQUIRE(seen.size() == 3);
  CHECK(seen[2].rec.type == RecordType::AcquireLock);
  CHECK(seen[2].payload.at(0).a == 42);
  CHECK(f.buf.bytes() == 4 * prof::kRecordBytes);
}

TEST_CASE("buffer bytes and chunk_count track appends", "[buffer]") {
  Fixture f;
  CHECK(f.buf.bytes() == 0);
  CHECK(f.buf.chunk_count() == 0);
  f.add_chunk();
  CHECK(f.buf.has_chunk());
  CHECK(f.buf.empty());
  CHECK(f.buf.bytes() == 0);
  CHECK(f.buf.chunk_count() == 1);

  f.append(1, RecordType::Enter, 1);
  CHECK(f.buf.bytes() == 16);
  f.append(2, RecordType::BufferFlush, 0, 1, 99);
  CHECK(f.buf.bytes() == 48);
  for (int i = 0; i < 13; ++i) f.append(3, RecordType::Leave, 1);  // 48 + 13 * 16 = 256 > 240
  CHECK(f.buf.chunk_count() == 2);
  // The first chunk is exactly full (15 slots); the last record went to the second.
  CHECK(f.buf.bytes() == 48 + 13 * 16);
}

TEST_CASE("buffer clear keeps only the current chunk and releases the others", "[buffer]") {
  Fixture f;
  for (int i = 0; i < 40; ++i) f.append(static_cast<std::uint64_t>(i), RecordType::Enter, 1);  // 3 chunks
  REQUIRE(f.buf.chunk_count() == 3);
  REQUIRE(f.pool.in_use() == 3);
  void* current = f.chunks.back();

  std::vector<void*> released;
  f.buf.clear([&](void* c) {
    released.push_back(c);
    f.pool.release(c);
  });
  CHECK(std::set<void*>(released.begin(), released.end()) == std::set<void*>(f.chunks.begin(), f.chunks.end() - 1));
  CHECK(f.pool.in_use() == 1);
  CHECK(f.buf.has_chunk());
  CHECK(f.buf.chunk_count() == 1);
  CHECK(f.buf.empty());
  CHECK(f.buf.bytes() == 0);
  CHECK(collect(f.buf).empty());

  // Writing goes on at the start of the kept chunk.
  f.append(500, RecordType::Leave, 2);
  std::vector<Seen> seen = collect(f.buf);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].rec.time == 500);
  CHECK(seen[0].at == addr(current) + sizeof(prof::ChunkHeader));

  // And it spills into new chunks as before.
  for (int i = 0; i < 20; ++i) f.append(600 + static_cast<std::uint64_t>(i), RecordType::Enter, 3);
  CHECK(f.buf.chunk_count() == 2);
  seen = collect(f.buf);
  REQUIRE(seen.size() == 21);
  for (int i = 0; i < 20; ++i) CHECK(seen[1 + i].rec.time == 600 + static_cast<std::uint64_t>(i));

  SECTION("clearing a one-chunk buffer releases nothing") {
    f.buf.clear([&](void* c) { f.pool.release(c); });  // two chunks → one
    std::size_t n = 0;
    f.buf.clear([&](void*) { ++n; });
    CHECK(n == 0);
    CHECK(f.buf.chunk_count() == 1);
  }
}

TEST_CASE("buffer release_all hands back every chunk", "[buffer]") {
  Fixture f;
  for (int i = 0; i < 50; ++i) f.append(static_cast<std::uint64_t>(i), RecordType::Enter, 1, i % 3);
  const std::size_t n = f.buf.chunk_count();
  REQUIRE(n >= 4);
  REQUIRE(f.pool.in_use() == n);

  std::set<void*> released;
  f.buf.release_all([&](void* c) {
    released.insert(c);
    f.pool.release(c);
  });
  CHECK(released == std::set<void*>(f.chunks.begin(), f.chunks.end()));
  CHECK(f.pool.in_use() == 0);
  CHECK_FALSE(f.buf.has_chunk());
  CHECK(f.buf.chunk_count() == 0);
  CHECK(f.buf.bytes() == 0);
  CHECK(f.buf.empty());
  CHECK(f.buf.try_reserve(0) == nullptr);
  CHECK(collect(f.buf).empty());

  // The buffer is usable again after a new chunk.
  f.chunks.clear();
  f.append(7, RecordType::Enter, 5);
  std::vector<Seen> seen = collect(f.buf);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].rec.time == 7);
  CHECK(f.buf.chunk_count() == 1);
}

TEST_CASE("ChunkPool: threads taking and giving back chunks at once never share one") {
  // 8 threads x 20,000 rounds on a pool of 16 chunks: each round takes up to two chunks, fills
  // them with its thread's mark, checks the mark is still whole, and gives them back. A chunk
  // handed to two threads at once shows as a foreign mark; under PROF_SANITIZE=thread this also
  // checks that the pool never reads a chunk that another thread owns (its free-list links live
  // outside the chunks).
  constexpr std::size_t kCount = 16, kThreads = 8, kRounds = 20000;
  ChunkPool pool;
  REQUIRE(pool.init(kCount * kChunk, kChunk));
  std::atomic<std::uint64_t> clashes{0}, empty{0};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const auto mark = static_cast<unsigned char>(t + 1);
      for (std::size_t i = 0; i < kRounds; ++i) {
        void* got[2] = {pool.acquire(), (i & 1) ? pool.acquire() : nullptr};
        for (void* c : got) {
          if (!c) continue;
          std::memset(c, mark, kChunk);
        }
        for (void* c : got) {
          if (!c) continue;
          const auto* p = static_cast<const unsigned char*>(c);
          for (std::size_t k = 0; k < kChunk; ++k)
            if (p[k] != mark) {
              clashes.fetch_add(1);
              break;
            }
          pool.release(c);
        }
        if (!got[0]) empty.fetch_add(1);
      }
    });
  for (auto& th : threads) th.join();
  CHECK(clashes.load() == 0);
  CHECK(pool.in_use() == 0);
  CHECK(pool.high_water() <= kCount);
  // Every chunk is free again: all of them can be taken, each once.
  std::set<void*> all;
  for (std::size_t i = 0; i < kCount; ++i) all.insert(pool.acquire());
  CHECK(all.size() == kCount);
  CHECK(all.count(nullptr) == 0);
  CHECK(pool.acquire() == nullptr);
  INFO("rounds that found the pool empty: " << empty.load());
}
