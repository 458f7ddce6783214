// SPDX-License-Identifier: BSD-3-Clause
// Lock ids and acquisition orders for OTF2's ThreadAcquireLock/ThreadReleaseLock events, shared
// by the pthread adapter (mutexes) and the OpenMP adapter (omp locks, critical sections).
// A concurrent table: open addressing over lock addresses, keys claimed by CAS, never removed
// (a destroyed lock's address keeps its id). The other fields are written only by the thread
// holding the lock, so the lock itself orders them.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "measurement/events.hpp"

namespace prof::adapters {

class LockTable {
 public:
  /// The calling thread acquired the lock at `lock` (nested acquisitions of a recursive lock
  /// count, only the first writes an event).
  void acquired(Location* loc, const void* lock, LockModel model) {
    std::uint32_t id;
    Slot* s = slot(lock, &id);
    if (!s) return;
    if (s->owner == tid()) {
      ++s->depth;
      return;
    }
    s->owner = tid();
    s->depth = 1;
    ++s->order;
    put(loc, RecordType::AcquireLock, id, model, s->order);
  }
  /// The calling thread releases the lock at `lock`: one level, or all (a condition wait).
  void releasing(Location* loc, const void* lock, bool all_levels, LockModel model) {
    std::uint32_t id;
    Slot* s = slot(lock, &id);
    if (!s || s->owner != tid()) return;
    if (!all_levels && --s->depth > 0) return;
    s->depth = 0;
    s->owner = 0;
    put(loc, RecordType::ReleaseLock, id, model, s->order);
  }
  /// Locks that got no id because the table was full.
  std::uint64_t full() const { return full_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::atomic<const void*> key{nullptr};
    pid_t owner = 0;
    std::uint32_t depth = 0;  // recursive locks: events only at depth 0 <-> 1
    std::uint32_t order = 0;  // acquisition order, the OTF2 acquisitionOrder
  };
  static constexpr std::uint32_t kSlots = 1u << 14;

  static pid_t tid() {
    static thread_local pid_t t = 0;
    if (!t) t = static_cast<pid_t>(::gettid());
    return t;
  }
  static void put(Location* loc, RecordType type, std::uint32_t id, LockModel model, std::uint32_t order) {
    const Payload p{order, 0};
    event(loc, timer::now(), type, id, static_cast<std::uint16_t>(model), &p, 1);
  }
  Slot* slot(const void* m, std::uint32_t* id) {
    auto h = static_cast<std::uint32_t>((reinterpret_cast<std::uintptr_t>(m) * 0x9E3779B97F4A7C15ull) >> 50);
    for (std::uint32_t n = 0; n < kSlots; ++n) {
      std::uint32_t i = (h + n) & (kSlots - 1);
      const void* k = slots_[i].key.load(std::memory_order_acquire);
      if (k == m) {
        *id = i;
        return &slots_[i];
      }
      if (!k) {
        const void* expected = nullptr;
        if (slots_[i].key.compare_exchange_strong(expected, m, std::memory_order_acq_rel) || expected == m) {
          *id = i;
          return &slots_[i];
        }
      }
    }
    full_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }

  Slot slots_[kSlots];
  std::atomic<std::uint64_t> full_{0};
};

}  // namespace prof::adapters
