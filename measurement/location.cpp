// SPDX-License-Identifier: BSD-3-Clause
// Location helpers that stay off the hot path.
#include "measurement/location.hpp"

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "measurement/log.hpp"

namespace prof {

__thread Location* tls_location PROF_INITIAL_EXEC = nullptr;

RegionCache::Slot RegionCache::kEmpty[1] = {{nullptr, kNoRegion}};

RegionCache::~RegionCache() {
  if (slots_ != kEmpty) std::free(slots_);
}

void RegionCache::clear() {
  if (slots_ == kEmpty) return;
  std::memset(static_cast<void*>(slots_), 0, (mask_ + 1) * sizeof(Slot));
  size_ = 0;
}

void RegionCache::insert(const void* key, RegionId value) {
  if (2 * (size_ + 1) > mask_ + 1) {
    std::uint32_t old_n = mask_ + 1;
    Slot* old = slots_;
    std::uint32_t n = old_n < 256 ? 256 : old_n * 2;
    auto* fresh = static_cast<Slot*>(std::calloc(n, sizeof(Slot)));
    PROF_BUG_ON(!fresh, "out of memory for the region cache");
    slots_ = fresh;
    mask_ = n - 1;
    shift_ = 64 - static_cast<std::uint32_t>(__builtin_ctz(n));
    size_ = 0;
    if (old != kEmpty) {
      for (std::uint32_t i = 0; i < old_n; ++i)
        if (old[i].key) insert(old[i].key, old[i].value);
      std::free(old);
    }
  }
  std::uint32_t i = index(key);
  while (slots_[i].key && slots_[i].key != key) i = (i + 1) & mask_;
  if (!slots_[i].key) ++size_;
  slots_[i] = {key, value};
}

// flags_word reads these eight bytes with one load.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
static_assert(offsetof(Location, active) == offsetof(Location, busy) + 1 && offsetof(Location, tracing) == offsetof(Location, busy) + 2 &&
                  offsetof(Location, profiling) == offsetof(Location, busy) + 3 &&
                  offsetof(Location, unwind_check) == offsetof(Location, busy) + 4 &&
                  offsetof(Location, cache_stale) == offsetof(Location, busy) + 5 &&
                  offsetof(Location, metric_count) == offsetof(Location, busy) + 6 &&
                  offsetof(Location, flags_spare) == offsetof(Location, busy) + 7,
              "the flags word of location.hpp");
#pragma GCC diagnostic pop
}  // namespace prof
