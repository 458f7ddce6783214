// SPDX-License-Identifier: BSD-3-Clause
// How PROF_TOTAL_MEMORY is split, in one place: the runtime sets up its pools with it, and the
// messages and prof-score that suggest a PROF_TOTAL_MEMORY invert it. Header-only, no deps.
#pragma once

#include <algorithm>
#include <cstdint>

namespace prof::budget {

constexpr std::uint64_t kOtf2BlockBytes = 4u << 20;   ///< one OTF2 write buffer block: the largest event chunk
constexpr std::uint64_t kOtf2MinChunkBytes = 256u << 10;  ///< OTF2_CHUNK_SIZE_MIN
/// What a trace's readers may need for its event chunks: otf2-print, the otf2 Python module and
/// other OTF2 readers hold one whole chunk per location while they read (a 4 MiB chunk each:
/// 2,000 locations made otf2-print's RSS 8.2 GB).
constexpr std::uint64_t kOtf2ReaderBytes = 1u << 30;
constexpr std::uint64_t kMinTracingMemory = 8u << 20; ///< below this, tracing is refused
constexpr std::uint64_t kMiB = 1u << 20;

/// The OTF2 event chunk size of a trace of about `locations` locations: the largest power of two
/// from 256 KiB (OTF2's minimum) to 4 MiB with which a reader's chunks of all locations fit
/// kOtf2ReaderBytes. 4 MiB up to 256 locations (writes go straight to the file: below 4 MiB,
/// OTF2 copies them through a 4 MiB file buffer of its own), 1 MiB at 1,024, 256 KiB from 4,096
/// on (a reader needs 256 KiB per location there, the least OTF2 allows).
inline std::uint64_t otf2_chunk_bytes(std::uint64_t locations) {
  std::uint64_t chunk = kOtf2BlockBytes;
  while (chunk > kOtf2MinChunkBytes && chunk * std::max<std::uint64_t>(locations, 1) > kOtf2ReaderBytes) chunk /= 2;
  return chunk;
}

/// OTF2's share when tracing: one block per writer open at the same time (one during finalize,
/// plus one per thread that flushed during the run): a quarter of the total, 1 to 16 blocks.
inline std::uint64_t otf2_bytes(std::uint64_t total, bool tracing) {
  if (!tracing) return 0;
  return std::clamp<std::uint64_t>(total / 4 / kOtf2BlockBytes, 1, 16) * kOtf2BlockBytes;
}

/// The event pool (trace chunks and profile nodes): what remains after OTF2 and, when tracing,
/// 5 % for what cannot come from the pools (the OTF2 library's bookkeeping, definitions).
/// 0 when the total cannot even hold OTF2's share.
inline std::uint64_t event_pool_bytes(std::uint64_t total, bool tracing) {
  const std::uint64_t reserved = otf2_bytes(total, tracing) + (tracing ? total / 20 : 0);
  return total > reserved ? total - reserved : 0;
}

/// The smallest PROF_TOTAL_MEMORY in whole MiB (at least 8M when tracing) whose event pool holds
/// `need` bytes and at least 4 pages (the runtime's minimum), capped at 4 TiB.
inline std::uint64_t total_for_event_pool(double need, bool tracing, std::uint64_t page) {
  need = std::max(need, 4.0 * static_cast<double>(page));
  for (std::uint64_t mib = tracing ? kMinTracingMemory / kMiB : 1;; ++mib) {
    const std::uint64_t total = mib * kMiB;
    if (static_cast<double>(event_pool_bytes(total, tracing)) >= need || mib >= (1u << 22)) return total;
  }
}

/// The event memory a traced run needs to keep every record until its end, i.e. to run without
/// a flush: all raw trace records (16 bytes each plus their payload slots), the profile's pool
/// memory, and per location three chunks: its partly used last trace chunk, its partly used
/// profile slab, and the free chunk the pool keeps back for each tracing location when a profile
/// asks for more (runtime.cpp, profile_chunk). No further margin: prof-score's estimate, made
/// with this, is the smallest PROF_TOTAL_MEMORY that does not flush in the tests.
inline double event_memory_without_flush(double raw_record_bytes, double profile_bytes, double locations, std::uint64_t page) {
  return raw_record_bytes + profile_bytes + 3.0 * locations * static_cast<double>(page);
}

/// The PROF_TOTAL_MEMORY to suggest for a traced run without flushes: prof-score (from a
/// profile's visits and call paths) and the runtime's end-of-run flush warning (from what the
/// run recorded: its raw bytes, the profile's pool bytes, its locations) both use this.
inline std::uint64_t total_without_flush(double raw_record_bytes, double profile_bytes, double locations, std::uint64_t page) {
  return total_for_event_pool(event_memory_without_flush(raw_record_bytes, profile_bytes, locations, page), true, page);
}

}  // namespace prof::budget
