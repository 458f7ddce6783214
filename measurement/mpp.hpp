// SPDX-License-Identifier: BSD-3-Clause
// The multi-process layer: what the core needs from MPI (or any other launcher) to write one
// experiment for many processes. The MPI adapter implements it over PMPI on prof's private
// communicator; without one the process is alone (rank 0 of 1) and nothing is exchanged.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace prof {

class Mpp {
 public:
  virtual ~Mpp() = default;
  virtual std::uint32_t rank() const = 0;
  virtual std::uint32_t size() const = 0;
  /// "MPI": names the location groups ("MPI Rank 3") and the paradigm of the communicators.
  virtual const char* paradigm() const = 0;
  /// The start of the write-out: whether every process reached it within the configured timeout
  /// (shorter once api::stop_requested()). Without it no collective may run; `why` then names
  /// the processes that did not arrive, or the reason.
  virtual bool arrive(std::string* why) = 0;
  /// Collective: this process's clock offset to rank 0 now (rank 0's time = local + offset), and
  /// the local time it holds for. Measured where the clocks can differ (processes on other hosts;
  /// a debug skew), else 0.
  virtual bool sync_clock(std::uint64_t* local, std::int64_t* offset) = 0;
  // Collectives over all processes; every process calls them in the same order. false = failed
  // (the caller reports it once and gives up the exchange).
  virtual bool barrier() = 0;
  virtual bool bcast(void* data, std::uint64_t bytes, std::uint32_t root) = 0;
  /// Root receives each rank's `in_bytes` into `out` at the offsets the sizes in `out_bytes` give.
  virtual bool gatherv(const void* in, std::uint64_t in_bytes, void* out, const std::uint64_t* out_bytes,
                       std::uint32_t root) = 0;
  /// Root sends rank r in_bytes[r] bytes from `in` (consecutive); each receives out_bytes.
  virtual bool scatterv(const void* in, const std::uint64_t* in_bytes, void* out, std::uint64_t out_bytes,
                        std::uint32_t root) = 0;
  // Point to point, blocking.
  virtual bool send(std::uint32_t dest, const void* data, std::uint64_t bytes) = 0;
  virtual bool recv(std::uint32_t src, std::vector<char>* out) = 0;
};

constexpr std::uint32_t kNoRank = std::numeric_limits<std::uint32_t>::max();

/// Collective: the lowest rank whose `ok` is false, or kNoRank when all are ok (or the exchange
/// itself failed on this process: then it cannot tell, and says kNoRank as well). So that a step
/// that failed on one process is given up by all of them together.
inline std::uint32_t first_failed(Mpp& mpp, bool ok) {
  const std::uint32_t n = mpp.size();
  if (n <= 1) return ok ? kNoRank : 0;
  const char mine = ok ? 1 : 0;
  std::vector<char> all(mpp.rank() == 0 ? n : 0);
  const std::vector<std::uint64_t> sizes(n, 1);
  std::uint32_t first = kNoRank;
  const bool gathered = mpp.gatherv(&mine, 1, all.data(), sizes.data(), 0);
  if (mpp.rank() == 0) {
    for (std::uint32_t r = 0; gathered && r < n && first == kNoRank; ++r)
      if (!all[r]) first = r;
    if (!gathered) first = 0;
  }
  if (!mpp.bcast(&first, sizeof first, 0)) return ok ? kNoRank : mpp.rank();
  return first;
}

}  // namespace prof
