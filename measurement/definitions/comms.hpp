// SPDX-License-Identifier: BSD-3-Clause
// The process's communicator definitions: the thread contingent of the pthread events (local
// id 0) and the MPI communicators the MPI adapter tracks. Events carry these process-local ids;
// unification (measurement/unify.hpp) merges the definitions of all processes by their key and
// writes each location's local → global mapping table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace prof::comms {

using CommId = std::uint32_t;
constexpr CommId kNoComm = 0xffffffffu;
/// The process's thread contingent (pthread create/wait events): always local id 0.
constexpr CommId kThreads = 0;

enum class Kind : std::uint8_t {
  Threads,  ///< the process's threads; members: filled in at unification (its locations)
  World,    ///< MPI_COMM_WORLD; members: world ranks 0..size-1
  Self,     ///< MPI_COMM_SELF: one per process, an OTF2 COMM_SELF group
  Mpi,      ///< any other MPI communicator; members: world ranks in communicator rank order
  Cuda,     ///< the process's CUDA RMA window's communicator: all its locations (threads, GPU
            ///< streams) in index order, filled in at unification. Its global id is also the
            ///< id of the window (RmaWin "CUDA window"); events name the window by its local id.
  OpenMP,   ///< the process's OpenMP threads, the thread team of its ThreadTeamBegin/End events;
            ///< members: all its CPU locations, filled in at unification (as Threads)
};

/// A communicator of one process's own locations (keyed by the process's rank alone).
constexpr bool per_process(Kind k) { return k == Kind::Threads || k == Kind::Cuda || k == Kind::OpenMP; }

/// One communicator. Processes that define the same communicator give the same key: the world
/// rank of its rank 0 and that rank's creation counter (agreed when it is created).
struct CommDef {
  Kind kind = Kind::Mpi;
  std::uint32_t key_rank = 0;     ///< Mpi: world rank of the communicator's rank 0; Threads, Cuda: the process's rank
  std::uint64_t key_serial = 0;   ///< Mpi: that rank's creation counter
  std::string name;
  std::vector<std::uint32_t> members;  ///< world ranks in communicator rank order (World, Mpi)
  CommId parent = kNoComm;        ///< local id of the communicator it was made from
};

/// Defines a communicator; returns its local id (never reused: events before a free keep it).
/// Any thread; locks; allocates.
CommId define(CommDef def);
/// A copy of all definitions, index = local id. Local id 0 is the thread contingent.
std::vector<CommDef> snapshot();

}  // namespace prof::comms
