// SPDX-License-Identifier: BSD-3-Clause
// Fixed-size raw event records as written on the hot path; converted to OTF2 off it.
#pragma once

#include <cstdint>

namespace prof {

using Timestamp = std::uint64_t;
using RegionId = std::uint32_t;

enum class RecordType : std::uint8_t {
  Invalid = 0,
  Enter,             // ref = region
  Leave,             // ref = region
  MeasurementOnOff,  // ref = 1 on, 2 off (OTF2_MeasurementMode)
  BufferFlush,       // payload a = stop time
  ThreadCreate,      // payload a = sequence number
  ThreadBegin,       // payload a = sequence number
  ThreadEnd,         // payload a = sequence number
  ThreadWait,        // payload a = sequence number
  AcquireLock,       // ref = lock id, aux = LockModel, payload a = acquisition order
  ReleaseLock,       // ref = lock id, aux = LockModel, payload a = acquisition order
  ProgramBegin,
  ProgramEnd,
  // MPI (adapters/mpi). ref = the communicator's process-local id (definitions/comms.hpp);
  // peer ranks are ranks in that communicator.
  MpiSend,              // a = receiver | tag << 32, b = bytes
  MpiIsend,             // a = receiver | tag << 32, b = bytes; slot 2 a = request id
  MpiIsendComplete,     // a = request id
  MpiIrecvRequest,      // a = request id
  MpiRecv,              // a = sender | tag << 32, b = bytes
  MpiIrecv,             // a = sender | tag << 32, b = bytes; slot 2 a = request id
  MpiRequestTest,       // a = request id
  MpiRequestCancelled,  // a = request id
  MpiCollectiveBegin,   // aux = OTF2_CollectiveOp, ref as its End's (for an End written at the end: Location::open_coll); no payload
  MpiCollectiveEnd,     // aux = OTF2_CollectiveOp, a = root (OTF2_UNDEFINED_UINT32: none), b = bytes sent; slot 2 a = bytes received
  NbCollRequest,        // a = request id
  NbCollComplete,       // as MpiCollectiveEnd; slot 2 b = request id
  // RMA (GPU memory copies, adapters/cuda): ref = the process-local window id (0: the process's
  // CUDA window), a = the remote rank in the window's communicator, b = bytes; slot 2 a = matching id.
  RmaPut,
  RmaGet,
  RmaOpCompleteBlocking,  // ref = window, a = matching id
  // Sampling (measurement/sampling). Written by the signal handler: aux = the thread's source
  // index (its interrupt generator), ref = number of frames; a = the location's profile node at
  // the sample; then the frames' addresses, two per slot, innermost first.
  RawSample,
  // What resolve() makes of it: ref = the process-local calling context, aux = the interrupt
  // generator, a = the unwind distance.
  CallingContextSample,
  // Metrics (measurement/metrics) read at a sample: aux = the location's metric class, the
  // values two per slot; right before the sample's RawSample, with its time.
  MetricValues,
  // GPU work and the host call that launched it (adapters/cuda): ref = an id shared by both (the
  // CUPTI correlation id of the outermost launching call). The next Enter or Leave of the same
  // location carries it as the OTF2 attribute "CUDA correlation id": the host call's Enter, the
  // kernel's (copy's, memset's) Enter on its stream.
  CorrelationId,
  // OpenMP (adapters/openmp): OTF2's fork/join model. ThreadFork and ThreadJoin on the thread
  // that encounters a parallel region (a = the team size it asked for); ThreadTeamBegin and
  // ThreadTeamEnd on every thread of the team, ref = the process-local id of the thread team's
  // communicator (comms::Kind::OpenMP).
  ThreadFork,
  ThreadJoin,
  ThreadTeamBegin,
  ThreadTeamEnd,
};

/// Whose lock an AcquireLock/ReleaseLock record is (its aux): the OTF2 paradigm it is written with.
enum class LockModel : std::uint16_t { Pthread = 0, OpenMP = 1 };

/// The 16-byte header of every record. `slots` 16-byte Payload slots follow it in the same
/// chunk, so later event kinds (MPI, metrics, samples) never change the hot path's shape.
struct Record {
  Timestamp time;
  RecordType type;
  std::uint8_t slots;
  std::uint16_t aux;
  std::uint32_t ref;
};
static_assert(sizeof(Record) == 16, "Record must stay 16 bytes");

struct Payload {
  std::uint64_t a;
  std::uint64_t b;
};
static_assert(sizeof(Payload) == 16, "Payload slots are 16 bytes");

constexpr std::uint32_t kRecordBytes = 16;

}  // namespace prof
