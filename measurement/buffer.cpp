// SPDX-License-Identifier: BSD-3-Clause
// EventBuffer's out-of-line parts: linking a new chunk and sizes.
#include "measurement/buffer.hpp"

namespace prof {

void EventBuffer::add_chunk(void* chunk, std::size_t chunk_bytes) {
  auto* c = static_cast<ChunkHeader*>(chunk);
  c->next = nullptr;
  c->used_bytes = 0;
  if (current_) {
    current_->used_bytes = static_cast<std::uint64_t>(pos_ - reinterpret_cast<char*>(current_ + 1));
    current_->next = c;
  } else {
    first_ = c;
  }
  current_ = c;
  pos_ = reinterpret_cast<char*>(c + 1);
  end_ = reinterpret_cast<char*>(c) + chunk_bytes;
  commit();
}

bool EventBuffer::empty() const { return bytes() == 0; }

std::uint64_t EventBuffer::bytes() const {
  std::uint64_t n = 0;
  const char* committed = committed_.load(std::memory_order_acquire);
  for (ChunkHeader* c = first_; c; c = c->next)
    n += c == current_ ? static_cast<std::uint64_t>(committed - reinterpret_cast<const char*>(c + 1)) : c->used_bytes;
  return n;
}

std::size_t EventBuffer::chunk_count() const {
  std::size_t n = 0;
  for (ChunkHeader* c = first_; c; c = c->next) ++n;
  return n;
}

Timestamp EventBuffer::last_time() const {
  if (!current_) return 0;
  const char* p = reinterpret_cast<const char*>(current_ + 1);
  const char* end = committed_.load(std::memory_order_acquire);
  Timestamp t = 0;
  while (p < end) {
    const Record* r = reinterpret_cast<const Record*>(p);
    if (p + kRecordBytes * (1u + r->slots) > end) break;
    t = r->time;
    p += kRecordBytes * (1u + r->slots);
  }
  return t;
}

}  // namespace prof
