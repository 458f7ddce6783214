// SPDX-License-Identifier: BSD-3-Clause
// The MPI adapter (libprof_mpi.so): PMPI wrappers generated from functions.txt, the bookkeeping
// of communicators and requests, and the multi-process layer (Mpp) over prof's private
// communicator. It talks to the measurement only through measurement/adapter_api.hpp.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "measurement/adapter_api.hpp"
#include "measurement/record.hpp"

#define PROF_MPI_API __attribute__((visibility("default")))

namespace prof::mpi {

/// One wrapped function: one row of functions.txt.
struct FnInfo {
  const char* name;
  std::uint64_t group;  ///< a config::MpiGroup bit
  regions::Role role;
};
extern const FnInfo kFunctions[];  // generated
extern const int kFunctionCount;

/// One wrapper invocation. The constructor writes the Enter of the function's region when its
/// group is enabled, measurement runs and the call is not nested in another MPI call (a user's
/// reduction operator or error handler calling MPI); the destructor writes the Leave. The
/// semantics write their events through it, between the two.
class Call {
 public:
  explicit Call(int fn);
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  /// Events of this call are recorded.
  bool on() const { return on_; }
  /// Writes one record on the calling thread's location (when on()).
  void event(RecordType type, std::uint32_t ref, std::uint16_t aux = 0, Payload a = {0, 0}, Payload b = {0, 0},
             unsigned slots = 1) const;
  /// The same, whenever the location records, whatever this call's group: the completion of a
  /// request whose start was written (its Wait may be in a disabled group, e.g. MPI_Wait of an
  /// MPI_Iallreduce with only `coll` enabled); otherwise the trace would keep it open.
  void completion(RecordType type, std::uint32_t ref, std::uint16_t aux = 0, Payload a = {0, 0}, Payload b = {0, 0},
                  unsigned slots = 1) const;

 private:
  int fn_;
  bool on_ = false;
  bool outer_ = false;
  RegionId region_ = 0;
};

/// Whether group bits `g` are enabled (PROF_MPI_ENABLE_GROUPS).
bool enabled(std::uint64_t g);
/// How many MPI wrappers are active on the calling thread (1 inside an outermost call).
int call_depth();

// ---- Communicators ----
/// What prof records of a communicator. An intercommunicator is recorded as one communicator over
/// the union of its two groups (the group with the lower leader first): a rank of its remote
/// group is recorded shifted by `remote_offset`.
struct CommInfo {
  comms::CommId id = comms::kNoComm;  ///< comms::kNoComm: not tracked
  bool inter = false;
  int remote_offset = 0;
};
CommInfo comm_info(MPI_Comm comm);
/// The local id of a tracked communicator, comms::kNoComm for one prof does not know.
comms::CommId comm_id(MPI_Comm comm);
/// A peer rank as recorded: shifted by `offset` (CommInfo::remote_offset) unless it is a
/// wildcard or MPI_PROC_NULL.
inline int recorded_peer(int peer, int offset) { return peer < 0 ? peer : peer + offset; }
/// Tracks a new communicator (collective over `comm`: agrees its key); parent may be MPI_COMM_NULL.
void track_comm(MPI_Comm comm, MPI_Comm parent);
/// Forgets a freed communicator (its handle may be reused).
void untrack_comm(MPI_Comm comm);

// ---- Requests ----
enum class ReqKind : std::uint8_t { Send, Recv, Coll };
struct ReqInfo {
  ReqKind kind = ReqKind::Send;
  comms::CommId comm = comms::kNoComm;
  int peer = 0;  ///< destination (send), source as given (receive), root or -1 (collective)
  int peer_offset = 0;  ///< the communicator's CommInfo::remote_offset (it may be freed first)
  int tag = 0;
  std::uint64_t bytes = 0;     ///< send: the message size; collective: bytes sent
  std::uint64_t received = 0;  ///< collective: bytes received
  std::uint16_t op = 0;        ///< collective: its OTF2_CollectiveOp
  std::uint64_t id = 0;     ///< prof's request id of the current activation
  bool persistent = false;
  bool active = false;      ///< started and not completed
  bool recorded = false;    ///< its start event was written, so its completion must be
  bool cancelled = false;
  std::uintptr_t owner = 0; ///< the thread that started it (a shared handle's completion prefers its own)
};
std::uint64_t next_request_id();
/// Starts tracking `req` (a fresh nonblocking or persistent request).
void track_request(MPI_Request req, const ReqInfo& info);
/// Starts a persistent request again: a new id; writes its start event through `call`.
void start_request(const Call& call, MPI_Request req);
/// The start that failed (MPI_Start returned an error): the request is inactive again and its
/// start event, if written, is cancelled.
void unstart_request(const Call& call, MPI_Request req);
/// The start event of a nonblocking request (MpiIsend, MpiIrecvRequest or
/// NonBlockingCollectiveRequest).
void write_start(const Call& call, const ReqInfo& info);
/// A request completed with `status` (`req` is the handle before the call set it to
/// MPI_REQUEST_NULL): writes MpiIsendComplete, MpiIrecv or MpiRequestCancelled.
void complete_request(const Call& call, MPI_Request req, const MPI_Status& status);
/// A test that did not complete `req` (written with xreqtest only).
void test_request(const Call& call, MPI_Request req);
/// MPI_Cancel was called on `req`.
void cancel_request(MPI_Request req);
/// MPI_Request_free on `req`.
void free_request(const Call& call, MPI_Request req);

/// count × size of datatype, 0 for MPI_DATATYPE_NULL or errors.
std::uint64_t bytes_of(int count, MPI_Datatype type);

// ---- Lifecycle ----
/// Inside MPI_Init/MPI_Init_thread after PMPI_Init succeeded: the private communicator, the
/// configuration check, the experiment directory (ready step), MPI_COMM_WORLD and SELF.
void after_init();
/// The user's MPI_Finalize: measurement goes on; prof writes everything and calls PMPI_Finalize
/// at exit. Returns MPI_SUCCESS.
int user_finalize();
/// What MPI_Finalized answers: true once the user called MPI_Finalize.
bool user_finalized();
/// MPI_Abort is being called: the job ends now; nothing collective may run any more. This rank
/// writes what it measured (its own profile and trace events, unmerged) before PMPI_Abort.
void user_abort(int errorcode);

}  // namespace prof::mpi
