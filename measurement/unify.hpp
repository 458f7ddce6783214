// SPDX-License-Identifier: BSD-3-Clause
// Unification: the definitions of all processes (regions, communicators, locations) become one
// global set at rank 0, and every process learns the global id of each of its local ids (the
// mapping tables of its locations). A tree reduction: in step k, process r with bit k set sends
// its merged set to r - 2^k and stops; after log2(P) steps rank 0 holds the union. No process
// ever holds more than the union of the keys, and nothing is O(P^2). Then rank 0 broadcasts the
// global keys, and each process maps its own local ids by key.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "measurement/definitions/comms.hpp"
#include "measurement/definitions/contexts.hpp"
#include "measurement/definitions/regions.hpp"
#include "measurement/record.hpp"

namespace prof {
class Mpp;
}

namespace prof::unify {

struct LocationPart {
  std::uint64_t id = 0;      ///< global location id: (thread index << 32) | rank
  std::string name;
  std::uint64_t events = 0;  ///< OTF2 events written for it
  std::uint8_t type = 0;     ///< LocationType: 0 CPU thread, 1 GPU stream
  std::string group;         ///< an accelerator location group's name; "" = the process's group
};

/// What one process contributes besides its definitions.
struct ProcessPart {
  std::uint32_t rank = 0;
  std::string host;
  Timestamp start = 0;  ///< timer ticks at its init
  Timestamp end = 0;    ///< timer ticks at its finalize
  std::vector<LocationPart> locations;
};

struct Result {
  std::vector<std::uint32_t> region_map;  ///< this process: local region id → global
  std::vector<std::uint32_t> comm_map;    ///< this process: local communicator id → global
  /// This process: local communicator id → global RMA window id (for the communicators of kind
  /// Cuda, whose local id is their window's; windows are numbered in global communicator order).
  std::vector<std::uint32_t> window_map;
  std::vector<std::uint32_t> context_map;    ///< this process: local calling context → global (sampling)
  std::vector<std::uint32_t> generator_map;  ///< this process: local interrupt generator → global
  Timestamp start = 0;                    ///< earliest start of all processes (every process)
  Timestamp end = 0;                      ///< latest end of all processes (every process)
  // Rank 0 only: the global definitions.
  std::vector<regions::RegionDef> regions;  ///< index = global id
  std::vector<comms::CommDef> comms;        ///< index = global id; parent = global id; Threads: key_rank = its process
  std::vector<ProcessPart> processes;       ///< ordered by rank
  std::vector<contexts::ContextDef> contexts;        ///< index = global id; region and parent global
  std::vector<contexts::GeneratorDef> generators;    ///< index = global id
  std::uint64_t bytes_received = 0;         ///< what this process received in the reduction (its memory cost)
  std::uint64_t bytes_union = 0;            ///< rank 0: the size of the merged set (all processes' definitions)
};

/// Unifies this process's definitions with all others' (`mpp` nullptr: this process alone).
/// Collective: every process calls it. False with a one-line error when an exchange failed.
bool unify(Mpp* mpp, ProcessPart self, const std::vector<regions::RegionDef>& regions,
           const std::vector<comms::CommDef>& comms, Result* out, std::string* error);

/// Without the other processes (a job with a failed rank: no collective can run), each process
/// that still writes saves its own definitions as a part (encode_part, `rank` its rank), and
/// merge_parts unifies any set of parts as unify() would with those processes: `global` gets the
/// global definitions, with `size` processes by rank (absent ranks: no locations), and (*maps)[i]
/// the mapping tables of parts[i]. False with a one-line error for a damaged part.
std::vector<char> encode_part(ProcessPart self, const std::vector<regions::RegionDef>& regions,
                              const std::vector<comms::CommDef>& comms, std::uint32_t rank);
bool merge_parts(const std::vector<std::vector<char>>& parts, std::uint32_t size, Result* global,
                 std::vector<Result>* maps, std::string* error);

/// The reduction tree over all processes: in step k, process r with bit k set sends encode() to
/// r - 2^k and stops; the receiver merge()s it. Rank 0 ends with everything merged, after log2(P)
/// steps. `what` names the data in errors; `received` (optional) gets the bytes this process
/// received. Collective. mpp nullptr: nothing to do.
bool tree_reduce(Mpp* mpp, const std::function<std::vector<char>()>& encode,
                 const std::function<bool(const std::vector<char>&)>& merge, const char* what, std::string* error,
                 std::uint64_t* received = nullptr);

/// Serialisation of the parts, exposed for the unit test.
std::vector<char> encode(const ProcessPart& p);
bool decode(const std::vector<char>& bytes, ProcessPart* p);

}  // namespace prof::unify
