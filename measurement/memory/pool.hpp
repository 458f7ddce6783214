// SPDX-License-Identifier: BSD-3-Clause
// ChunkPool: one reserved region of fixed-size chunks with a lock-free free list.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace prof {

/// Hands out chunks of `chunk_bytes` from one mmap'ed region of `total_bytes`. Memory is only
/// touched (and counted in RSS) when a chunk is first written. acquire() and release() are
/// lock-free and async-signal-safe; any thread may call them.
class ChunkPool {
 public:
  ChunkPool() = default;
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;
  ~ChunkPool();

  /// Reserves the region; returns false (errno set) when mmap fails. chunk_bytes must be a
  /// power of two >= 64; total_bytes is rounded down to a multiple of chunk_bytes.
  bool init(std::size_t total_bytes, std::size_t chunk_bytes);

  /// A free chunk, or nullptr when all chunks are in use.
  void* acquire() noexcept;
  /// Gives a chunk back; it must come from acquire() of this pool. `to_system`: also return
  /// its pages to the kernel (madvise), for memory that will not be needed again soon.
  void release(void* chunk, bool to_system = false) noexcept;
  /// release(chunk, true) for `count` adjacent chunks from `first`, their pages returned in one
  /// madvise (before any of them is free again).
  void release_run(void* first, std::size_t count) noexcept;

  /// Returns the pages of every free chunk to the kernel. Not concurrent with acquire/release
  /// (used at finalize, when no thread records any more).
  void trim() noexcept;

  std::size_t chunk_bytes() const { return chunk_bytes_; }
  std::size_t chunk_count() const { return count_; }
  std::size_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  std::size_t high_water() const { return high_water_.load(std::memory_order_relaxed); }
  bool owns(const void* p) const {
    auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(base_);
    return a >= b && a < b + count_ * chunk_bytes_;
  }

 private:
  char* map_ = nullptr;   // the mapping; base_ is its first 2 MiB boundary
  char* base_ = nullptr;
  std::size_t chunk_bytes_ = 0;
  std::size_t count_ = 0;
  std::size_t mapped_bytes_ = 0;
  // Free list head: (tag << 32) | (index + 1), 0 = empty; the tag defeats ABA. next_[i]: the
  // link of free chunk i (index + 1 of the next one, 0 = none).
  std::unique_ptr<std::atomic<std::uint32_t>[]> next_;
  std::atomic<std::uint64_t> free_head_{0};
  std::atomic<std::size_t> fresh_{0};  // chunks [fresh_, count_) were never handed out
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> high_water_{0};
};

}  // namespace prof
