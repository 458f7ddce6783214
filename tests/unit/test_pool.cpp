// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of ChunkPool: hand-out until exhausted, reuse, counters, alignment, a
// multi-threaded acquire/release stress with ownership checks, rounding of the total size.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "measurement/memory/pool.hpp"
#include "measurement/memory/budget.hpp"

using prof::ChunkPool;

namespace {

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

/// Acquires until the pool says no; returns every chunk it got.
std::vector<void*> drain(ChunkPool& pool) {
  std::vector<void*> got;
  while (void* c = pool.acquire()) {
    got.push_back(c);
    REQUIRE(got.size() <= pool.chunk_count());
  }
  return got;
}

}  // namespace

TEST_CASE("pool hands out distinct chunks until exhausted", "[pool]") {
  ChunkPool pool;
  REQUIRE(pool.init(16 * 4096, 4096));
  REQUIRE(pool.chunk_count() == 16);
  REQUIRE(pool.chunk_bytes() == 4096);

  std::vector<void*> got = drain(pool);
  CHECK(got.size() == 16);
  std::set<void*> distinct(got.begin(), got.end());
  CHECK(distinct.size() == got.size());
  for (void* c : got) CHECK(pool.owns(c));

  // Exhausted: stays exhausted.
  CHECK(pool.acquire() == nullptr);
  CHECK(pool.acquire() == nullptr);
  CHECK(pool.in_use() == 16);

  // No two chunks overlap: sorted, they are at least chunk_bytes apart.
  std::sort(got.begin(), got.end());
  for (std::size_t i = 1; i < got.size(); ++i) CHECK(addr(got[i]) - addr(got[i - 1]) >= pool.chunk_bytes());

  for (void* c : got) pool.release(c);
  CHECK(pool.in_use() == 0);
}

TEST_CASE("pool release makes chunks available again", "[pool]") {
  ChunkPool pool;
  REQUIRE(pool.init(8 * 256, 256));
  std::vector<void*> got = drain(pool);
  REQUIRE(got.size() == 8);
  const std::set<void*> all(got.begin(), got.end());

  SECTION("one released chunk comes back") {
    void* c = got[3];
    pool.release(c);
    CHECK(pool.in_use() == 7);
    void* again = pool.acquire();
    CHECK(again == c);
    CHECK(pool.acquire() == nullptr);
    got[3] = again;
  }
  SECTION("all released chunks come back, and only those") {
    for (void* c : got) pool.release(c);
    CHECK(pool.in_use() == 0);
    std::vector<void*> again = drain(pool);
    CHECK(again.size() == 8);
    CHECK(std::set<void*>(again.begin(), again.end()) == all);
    got = again;
  }
  SECTION("chunks written to while held are handed out intact after release") {
    // The free list link lives in a free chunk's first word: writing the whole chunk while
    // holding it must not corrupt the list.
    for (void* c : got) std::memset(c, 0xA5, pool.chunk_bytes());
    for (void* c : got) pool.release(c);
    std::vector<void*> again = drain(pool);
    CHECK(again.size() == 8);
    CHECK(std::set<void*>(again.begin(), again.end()) == all);
    got = again;
  }
  for (void* c : got) pool.release(c);
  CHECK(pool.in_use() == 0);
}

TEST_CASE("pool release_run gives adjacent chunks back with their pages returned", "[pool]") {
  ChunkPool pool;
  const std::size_t page = 4096;  // madvise works on whole pages: chunks of one page each
  REQUIRE(pool.init(8 * page, page));
  std::vector<void*> got = drain(pool);
  REQUIRE(got.size() == 8);
  std::sort(got.begin(), got.end());
  // Fresh chunks are handed out in order: 8 adjacent chunks.
  REQUIRE(addr(got[7]) - addr(got[0]) == 7 * page);
  for (void* c : got) std::memset(c, 0xA5, page);
  pool.release_run(got[2], 4);  // chunks 2..5
  CHECK(pool.in_use() == 4);
  std::vector<void*> again = drain(pool);
  REQUIRE(again.size() == 4);
  CHECK(std::set<void*>(again.begin(), again.end()) == std::set<void*>(got.begin() + 2, got.begin() + 6));
  // MADV_DONTNEED on private anonymous memory: the pages read as zeros again.
  for (void* c : again) {
    const auto* b = static_cast<const unsigned char*>(c);
    CHECK(std::all_of(b, b + page, [](unsigned char x) { return x == 0; }));
  }
  // The chunks not in the run kept their contents.
  CHECK(static_cast<const unsigned char*>(got[1])[page - 1] == 0xA5);
  CHECK(static_cast<const unsigned char*>(got[6])[0] == 0xA5);
  for (void* c : got) pool.release(c);
  CHECK(pool.in_use() == 0);
}

TEST_CASE("pool counts chunks in use and the high-water mark", "[pool]") {
  ChunkPool pool;
  REQUIRE(pool.init(10 * 1024, 1024));
  CHECK(pool.in_use() == 0);
  CHECK(pool.high_water() == 0);

  void* a = pool.acquire();
  void* b = pool.acquire();
  void* c = pool.acquire();
  REQUIRE((a && b && c));
  CHECK(pool.in_use() == 3);
  CHECK(pool.high_water() == 3);

  pool.release(b);
  pool.release(a);
  CHECK(pool.in_use() == 1);
  CHECK(pool.high_water() == 3);

  void* d = pool.acquire();
  REQUIRE(d);
  CHECK(pool.in_use() == 2);
  CHECK(pool.high_water() == 3);

  std::vector<void*> rest = drain(pool);
  CHECK(rest.size() == 8);
  CHECK(pool.in_use() == 10);
  CHECK(pool.high_water() == 10);
  // A failed acquire changes neither counter.
  CHECK(pool.acquire() == nullptr);
  CHECK(pool.in_use() == 10);
  CHECK(pool.high_water() == 10);

  for (void* p : rest) pool.release(p);
  pool.release(c);
  pool.release(d);
  CHECK(pool.in_use() == 0);
  CHECK(pool.high_water() == 10);
}

TEST_CASE("pool chunks are aligned and chunk_bytes long", "[pool]") {
  const std::size_t chunk = GENERATE(std::size_t{64}, std::size_t{256}, std::size_t{4096}, std::size_t{1} << 20);
  CAPTURE(chunk);
  ChunkPool pool;
  REQUIRE(pool.init(6 * chunk, chunk));
  CHECK(pool.chunk_bytes() == chunk);
  CHECK(pool.chunk_count() == 6);

  std::vector<void*> got = drain(pool);
  REQUIRE(got.size() == 6);
  const std::size_t align = std::min<std::size_t>(chunk, 4096);  // the region is page aligned
  for (void* c : got) {
    CHECK(addr(c) % align == 0);
    CHECK(pool.owns(c));
    CHECK(pool.owns(static_cast<char*>(c) + chunk - 1));
    // Every byte of the chunk is usable.
    std::memset(c, 0x5A, chunk);
  }
  std::sort(got.begin(), got.end());
  for (std::size_t i = 1; i < got.size(); ++i) CHECK((addr(got[i]) - addr(got[0])) % chunk == 0);
  // The region is exactly chunk_count chunks.
  CHECK(addr(got.back()) + chunk - addr(got.front()) == 6 * chunk);
  CHECK_FALSE(pool.owns(static_cast<char*>(got.back()) + chunk));
  CHECK_FALSE(pool.owns(static_cast<char*>(got.front()) - 1));
  for (void* c : got) pool.release(c);
}

TEST_CASE("pool survives concurrent acquire and release with exclusive ownership", "[pool]") {
  constexpr int kThreads = 4;
  constexpr int kIterations = 100000;
  constexpr std::size_t kChunks = 8;  // fewer than the threads may want at once: exhaustion happens
  constexpr std::size_t kChunkBytes = 256;
  ChunkPool pool;
  REQUIRE(pool.init(kChunks * kChunkBytes, kChunkBytes));

  std::vector<std::atomic<int>> owner(kChunks);
  for (auto& o : owner) o.store(-1);
  std::atomic<bool> go{false};
  std::atomic<long> errors{0};
  std::atomic<long> exhausted{0};
  std::atomic<long> cycles{0};

  std::uintptr_t base = ~std::uintptr_t{0};
  {
    // Find the region's base: the lowest chunk address.
    std::vector<void*> all = drain(pool);
    REQUIRE(all.size() == kChunks);
    for (void* c : all) base = std::min(base, addr(c));
    for (void* c : all) pool.release(c);
  }

  auto worker = [&](int tid) {
    while (!go.load(std::memory_order_acquire)) {
    }
    std::vector<void*> held;
    unsigned rng = 12345u + static_cast<unsigned>(tid) * 7919u;
    for (int i = 0; i < kIterations; ++i) {
      rng = rng * 1103515245u + 12345u;
      const std::size_t want = 1 + (rng >> 16) % 3;  // hold 1..3 chunks at a time
      while (held.size() < want) {
        void* c = pool.acquire();
        if (!c) {
          exhausted.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        const std::size_t idx = (addr(c) - base) / kChunkBytes;
        if (idx >= kChunks || (addr(c) - base) % kChunkBytes != 0) {
          errors.fetch_add(1);
          continue;
        }
        int expected = -1;
        if (!owner[idx].compare_exchange_strong(expected, tid)) errors.fetch_add(1);
        // Stamp the whole chunk with the thread id.
        auto* w = static_cast<std::uint32_t*>(c);
        for (std::size_t k = 0; k < kChunkBytes / sizeof(std::uint32_t); ++k) w[k] = static_cast<std::uint32_t>(tid);
        held.push_back(c);
      }
      // Release all but possibly one, verifying the stamp first.
      const std::size_t keep = (rng >> 8) & 1u;
      while (held.size() > keep) {
        void* c = held.back();
        held.pop_back();
        auto* w = static_cast<const std::uint32_t*>(c);
        for (std::size_t k = 0; k < kChunkBytes / sizeof(std::uint32_t); ++k)
          if (w[k] != static_cast<std::uint32_t>(tid)) {
            errors.fetch_add(1);
            break;
          }
        const std::size_t idx = (addr(c) - base) / kChunkBytes;
        int expected = tid;
        if (!owner[idx].compare_exchange_strong(expected, -1)) errors.fetch_add(1);
        pool.release(c);
        cycles.fetch_add(1, std::memory_order_relaxed);
      }
    }
    for (void* c : held) {
      const std::size_t idx = (addr(c) - base) / kChunkBytes;
      owner[idx].store(-1);
      pool.release(c);
    }
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  go.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();

  CHECK(errors.load() == 0);
  CHECK(cycles.load() >= kThreads * kIterations / 2);
  CHECK(pool.in_use() == 0);
  CHECK(pool.high_water() <= kChunks);
  INFO("exhausted acquires: " << exhausted.load());
  // Every chunk is still in the pool exactly once.
  std::vector<void*> all = drain(pool);
  CHECK(all.size() == kChunks);
  CHECK(std::set<void*>(all.begin(), all.end()).size() == kChunks);
  for (void* c : all) pool.release(c);
}

TEST_CASE("pool counters never exceed the chunk count under contention", "[pool]") {
  // One chunk, four threads taking turns: a chunk released by one thread is taken by another
  // at once, so in_use must be updated before the chunk is back on the free list.
  ChunkPool pool;
  REQUIRE(pool.init(64, 64));
  std::atomic<bool> go{false};
  std::atomic<long> got{0};
  std::atomic<std::size_t> max_in_use{0};
  auto worker = [&] {
    while (!go.load(std::memory_order_acquire)) {
    }
    for (int i = 0; i < 50000; ++i) {
      void* c = pool.acquire();
      if (!c) continue;
      got.fetch_add(1, std::memory_order_relaxed);
      std::size_t n = pool.in_use(), m = max_in_use.load();
      while (n > m && !max_in_use.compare_exchange_weak(m, n)) {
      }
      pool.release(c);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker);
  go.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();
  INFO("successful acquires: " << got.load());
  CHECK(got.load() > 0);
  CHECK(pool.in_use() == 0);
  CHECK(max_in_use.load() <= 1);
  CHECK(pool.high_water() <= pool.chunk_count());
}

TEST_CASE("pool init rounds a non-multiple total down", "[pool]") {
  SECTION("three and a bit chunks give three") {
    ChunkPool pool;
    REQUIRE(pool.init(3 * 256 + 200, 256));
    CHECK(pool.chunk_count() == 3);
    std::vector<void*> got = drain(pool);
    CHECK(got.size() == 3);
    for (void* c : got) pool.release(c);
  }
  SECTION("one byte short of two chunks gives one") {
    ChunkPool pool;
    REQUIRE(pool.init(2 * 4096 - 1, 4096));
    CHECK(pool.chunk_count() == 1);
    void* c = pool.acquire();
    CHECK(c != nullptr);
    CHECK(pool.acquire() == nullptr);
    pool.release(c);
  }
  SECTION("less than one chunk fails and hands out nothing") {
    ChunkPool pool;
    CHECK_FALSE(pool.init(255, 256));
    CHECK(pool.chunk_count() == 0);
    CHECK(pool.acquire() == nullptr);
    CHECK(pool.in_use() == 0);
  }
}

TEST_CASE("OTF2 event chunks shrink with the number of locations", "[pool][budget]") {
  using namespace prof::budget;
  // Readers hold a chunk per location: 4 MiB up to 256 locations, then halved until all fit
  // 1 GiB, never below OTF2's minimum of 256 KiB.
  CHECK(otf2_chunk_bytes(0) == 4u << 20);
  CHECK(otf2_chunk_bytes(1) == 4u << 20);
  CHECK(otf2_chunk_bytes(256) == 4u << 20);
  CHECK(otf2_chunk_bytes(257) == 2u << 20);
  CHECK(otf2_chunk_bytes(1024) == 1u << 20);
  CHECK(otf2_chunk_bytes(4096) == 256u << 10);
  CHECK(otf2_chunk_bytes(10001) == 256u << 10);
  CHECK(otf2_chunk_bytes(1u << 30) == 256u << 10);
  for (std::uint64_t n : {1u, 300u, 2000u, 4096u})
    CHECK(otf2_chunk_bytes(n) * n <= kOtf2ReaderBytes);
}
