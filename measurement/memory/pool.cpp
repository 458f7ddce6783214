// SPDX-License-Identifier: BSD-3-Clause
// ChunkPool implementation: a Treiber stack over chunk indices plus a bump index for chunks
// never used, so untouched memory is never faulted in. The stack's links live in an array of
// their own, never in the chunks: a pop that loses its race reads a link while the chunk itself
// already belongs to another thread, which writes it (a data race if the link were in the chunk).
#include "measurement/memory/pool.hpp"

#include <sys/mman.h>

#include <new>

namespace prof {

ChunkPool::~ChunkPool() {
  if (map_) ::munmap(map_, mapped_bytes_);
}

bool ChunkPool::init(std::size_t total_bytes, std::size_t chunk_bytes) {
  chunk_bytes_ = chunk_bytes;
  count_ = total_bytes / chunk_bytes;
  if (count_ == 0) return false;
  next_.reset(new (std::nothrow) std::atomic<std::uint32_t>[count_]);
  if (!next_) {
    count_ = 0;
    return false;
  }
  std::size_t bytes = count_ * chunk_bytes;
  // Aligned to 2 MiB and marked for transparent huge pages: the first write to fresh buffer
  // memory then faults once per 2 MiB instead of once per 4 KiB, which otherwise costs the
  // hot path more than the event itself. Where THP is off this changes nothing.
  constexpr std::size_t kHuge = 2u << 20;
  mapped_bytes_ = bytes + kHuge;
  void* p = ::mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    count_ = 0;
    return false;
  }
  map_ = static_cast<char*>(p);
  base_ = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1));
  ::madvise(base_, bytes, MADV_HUGEPAGE);
  return true;
}

void* ChunkPool::acquire() noexcept {
  std::uint64_t head = free_head_.load(std::memory_order_acquire);
  char* chunk = nullptr;
  while (head & 0xffffffffu) {
    std::size_t idx = (head & 0xffffffffu) - 1;
    char* c = base_ + idx * chunk_bytes_;
    // A racing pop may have handed the chunk out already (and a release pushed it again with
    // another link); the tag makes our CAS fail in that case.
    std::uint32_t next = next_[idx].load(std::memory_order_relaxed);
    std::uint64_t desired = (((head >> 32) + 1) << 32) | next;
    if (free_head_.compare_exchange_weak(head, desired, std::memory_order_acq_rel, std::memory_order_acquire)) {
      chunk = c;
      break;
    }
  }
  if (!chunk) {
    std::size_t idx = fresh_.load(std::memory_order_relaxed);
    while (idx < count_ && !fresh_.compare_exchange_weak(idx, idx + 1, std::memory_order_relaxed)) {
    }
    if (idx >= count_) return nullptr;
    chunk = base_ + idx * chunk_bytes_;
  }
  std::size_t n = in_use_.fetch_add(1, std::memory_order_relaxed) + 1;
  std::size_t hw = high_water_.load(std::memory_order_relaxed);
  while (n > hw && !high_water_.compare_exchange_weak(hw, n, std::memory_order_relaxed)) {
  }
  return chunk;
}

void ChunkPool::release(void* chunk, bool to_system) noexcept {
  char* c = static_cast<char*>(chunk);
  if (to_system) ::madvise(c, chunk_bytes_, MADV_DONTNEED);
  std::uint32_t idx1 = static_cast<std::uint32_t>((c - base_) / chunk_bytes_) + 1;
  // Count it free before it is visible on the list, so in_use() never exceeds chunk_count().
  in_use_.fetch_sub(1, std::memory_order_relaxed);
  std::uint64_t head = free_head_.load(std::memory_order_relaxed);
  do {
    next_[idx1 - 1].store(static_cast<std::uint32_t>(head & 0xffffffffu), std::memory_order_relaxed);
  } while (!free_head_.compare_exchange_weak(head, (((head >> 32) + 1) << 32) | idx1, std::memory_order_release,
                                             std::memory_order_relaxed));
}

void ChunkPool::release_run(void* first, std::size_t count) noexcept {
  char* c = static_cast<char*>(first);
  ::madvise(c, count * chunk_bytes_, MADV_DONTNEED);
  for (std::size_t i = 0; i < count; ++i) release(c + i * chunk_bytes_, false);
}

void ChunkPool::trim() noexcept {
  std::uint64_t head = free_head_.load(std::memory_order_acquire);
  for (std::uint32_t i1 = head & 0xffffffffu; i1;) {
    ::madvise(base_ + (i1 - 1) * chunk_bytes_, chunk_bytes_, MADV_DONTNEED);
    i1 = next_[i1 - 1].load(std::memory_order_relaxed);
  }
}

}  // namespace prof
