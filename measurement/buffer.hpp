// SPDX-License-Identifier: BSD-3-Clause
// EventBuffer: a per-location list of pool chunks with a bump pointer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "measurement/compiler.hpp"
#include "measurement/record.hpp"

namespace prof {

/// Header at the start of every chunk; records follow it and never straddle two chunks.
struct ChunkHeader {
  ChunkHeader* next;
  std::uint64_t used_bytes;  // bytes of records; final once the chunk is left behind
};
static_assert(sizeof(ChunkHeader) == 16, "records stay 16-byte aligned");

/// Written only by the owning thread. Other threads read it only up to committed(), after
/// the owner stopped recording (finalize from another thread) or ended.
class EventBuffer {
 public:
  // Hot path: no locks, no allocation, no errno changes.
  /// Space for a header plus `slots` payload slots, or nullptr when the chunk is full.
  Record* try_reserve(unsigned slots) {
    std::size_t bytes = kRecordBytes * (1u + slots);
    if (PROF_UNLIKELY(static_cast<std::size_t>(end_ - pos_) < bytes)) return nullptr;
    Record* r = reinterpret_cast<Record*>(pos_);
    pos_ += bytes;
    return r;
  }
  /// Publishes everything reserved so far (a plain store on x86).
  void commit() { committed_.store(pos_, std::memory_order_release); }

  /// Appends `chunk` (chunk_bytes long) as the new current chunk.
  void add_chunk(void* chunk, std::size_t chunk_bytes);
  bool has_chunk() const { return current_ != nullptr; }
  bool empty() const;
  /// Bytes of records stored (all chunks).
  std::uint64_t bytes() const;
  std::size_t chunk_count() const;
  /// The time of the last committed record of the current chunk (0 when it has none). Scans the
  /// chunk: for the rare replay of events deferred from a signal handler, never the hot path.
  Timestamp last_time() const;

  /// Calls f(const Record&, const Payload*) for every committed record, oldest first.
  template <class F>
  void for_each(F&& f) const {
    const char* committed = committed_.load(std::memory_order_acquire);
    for (ChunkHeader* c = first_; c; c = c->next) {
      const char* begin = reinterpret_cast<const char*>(c + 1);
      const char* end = c == current_ ? committed : begin + c->used_bytes;
      for (const char* p = begin; p < end;) {
        // Ahead of the hardware prefetcher, which stops at each 4 KiB page (chunks are PROF_PAGE_SIZE).
        __builtin_prefetch(p + 2048);
        const Record* r = reinterpret_cast<const Record*>(p);
        if (p + kRecordBytes * (1u + r->slots) > end) break;
        f(*r, reinterpret_cast<const Payload*>(p + kRecordBytes));
        p += kRecordBytes * (1u + r->slots);
      }
    }
  }

  /// Calls f(const char* bytes, std::size_t n) for each chunk's committed records, oldest first:
  /// back to back, as for_each reads them (raw copies: spill files, stop dumps).
  template <class F>
  void for_each_run(F&& f) const {
    const char* committed = committed_.load(std::memory_order_acquire);
    for (ChunkHeader* c = first_; c; c = c->next) {
      const char* begin = reinterpret_cast<const char*>(c + 1);
      const char* end = c == current_ ? committed : begin + c->used_bytes;
      if (end > begin) f(begin, static_cast<std::size_t>(end - begin));
    }
  }
  /// Drops all records; every chunk but the current one is handed to release(chunk).
  template <class R>
  void clear(R&& release) {
    for (ChunkHeader* c = first_; c;) {
      ChunkHeader* next = c->next;
      if (c != current_) release(static_cast<void*>(c));
      c = next;
    }
    first_ = current_;
    if (current_) {
      current_->next = nullptr;
      current_->used_bytes = 0;
      pos_ = reinterpret_cast<char*>(current_ + 1);
      commit();
    }
  }
  /// Hands every chunk to release(chunk); the buffer is empty and chunkless afterwards.
  template <class R>
  void release_all(R&& release) {
    for (ChunkHeader* c = first_; c;) {
      ChunkHeader* next = c->next;
      release(static_cast<void*>(c));
      c = next;
    }
    first_ = current_ = nullptr;
    pos_ = end_ = nullptr;
    committed_.store(nullptr, std::memory_order_release);
  }

 private:
  char* pos_ = nullptr;
  char* end_ = nullptr;
  ChunkHeader* first_ = nullptr;
  ChunkHeader* current_ = nullptr;
  std::atomic<char*> committed_{nullptr};
};

}  // namespace prof
