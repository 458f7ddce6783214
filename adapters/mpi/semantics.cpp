// SPDX-License-Identifier: BSD-3-Clause
// The rules of semantics.hpp.
#include "adapters/mpi/semantics.hpp"

#include "measurement/immortal.hpp"

#include <mutex>
#include <unordered_map>

namespace prof::mpi::sem {

namespace {
std::uint64_t peer_tag(int peer, int tag) {
  return static_cast<std::uint32_t>(peer) | static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag)) << 32;
}
int comm_size(MPI_Comm comm) {
  int n = 0;
  PMPI_Comm_size(comm, &n);
  return n;
}
int comm_rank(MPI_Comm comm) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  return r;
}
std::uint64_t sum_bytes(const int* counts, MPI_Datatype type, int n) {
  std::uint64_t s = 0;
  for (int i = 0; counts && i < n; ++i) s += bytes_of(counts[i], type);
  return s;
}
// Replaces an ignored status by the thread's own.
void own_status(MPI_Status*& status) {
  if (status == MPI_STATUS_IGNORE) status = &scratch().status;
}
// Copies `count` request handles (the call sets completed ones to MPI_REQUEST_NULL) and replaces
// ignored statuses by `count` of the thread's own.
void copy_requests(int count, MPI_Request* requests, MPI_Status** statuses) {
  Scratch& s = scratch();
  s.requests.assign(requests, requests + (count > 0 ? count : 0));
  if (statuses && *statuses == MPI_STATUSES_IGNORE) {
    s.statuses.resize(static_cast<std::size_t>(count > 0 ? count : 0));
    *statuses = s.statuses.data();
  }
}
bool completed(const MPI_Status& s, int rc) { return rc == MPI_SUCCESS || (rc == MPI_ERR_IN_STATUS && s.MPI_ERROR == MPI_SUCCESS); }

std::mutex g_msg_mutex;
Immortal<std::unordered_map<MPI_Message, MPI_Comm>> g_messages;  // matched probes: the message's communicator
}  // namespace

Scratch& scratch() {
  // One per nesting level of this thread's MPI wrappers: an MPI call made inside another one (from
  // a generalized request's callback or an error handler) must not overwrite the outer call's
  // copies while the outer PMPI call may still write into them.
  constexpr int kLevels = 8;
  static thread_local Scratch s[kLevels];
  const int depth = call_depth();
  return s[depth < 1 ? 0 : (depth > kLevels ? kLevels - 1 : depth - 1)];
}

void message(const Call& c, RecordType type, MPI_Comm comm, int peer, int tag, std::uint64_t bytes) {
  if (!c.on() || peer == MPI_PROC_NULL) return;
  const CommInfo info = comm_info(comm);
  if (info.id == comms::kNoComm) return;
  c.event(type, info.id, 0, {peer_tag(recorded_peer(peer, info.remote_offset), tag), bytes});
}

std::uint64_t received_bytes(const MPI_Status& s) {
  int count = 0;
  PMPI_Get_count(&s, MPI_BYTE, &count);
  return count == MPI_UNDEFINED || count < 0 ? 0 : static_cast<std::uint64_t>(count);
}

// ---- Environment ----
void Init::post(const Call&, int rc, int*&, char***&) {
  if (rc == MPI_SUCCESS) after_init();
}
void InitThread::post(const Call&, int rc, int*&, char***&, int&, int*&) {
  if (rc == MPI_SUCCESS) after_init();
}

// ---- Point to point ----
void Send::pre(const Call& c, const void*&, int& count, MPI_Datatype& type, int& dest, int& tag, MPI_Comm& comm) {
  message(c, RecordType::MpiSend, comm, dest, tag, bytes_of(count, type));
}
void Recv::pre(const Call&, void*&, int&, MPI_Datatype&, int&, int&, MPI_Comm&, MPI_Status*& status) { own_status(status); }
void Recv::post(const Call& c, int rc, void*&, int&, MPI_Datatype&, int&, int&, MPI_Comm& comm, MPI_Status*& status) {
  if (rc == MPI_SUCCESS) message(c, RecordType::MpiRecv, comm, status->MPI_SOURCE, status->MPI_TAG, received_bytes(*status));
}

namespace {
ReqInfo request_info(const Call& c, ReqKind kind, MPI_Comm comm, int peer, int tag, std::uint64_t bytes, bool persistent) {
  ReqInfo r;
  const CommInfo info = comm_info(comm);
  r.kind = kind;
  r.comm = info.id;
  r.peer = peer;
  r.peer_offset = info.remote_offset;
  r.tag = tag;
  r.bytes = bytes;
  r.persistent = persistent;
  if (!persistent) {
    r.id = next_request_id();
    r.active = true;
    r.recorded = c.on() && r.comm != comms::kNoComm && peer != MPI_PROC_NULL;
  }
  return r;
}
}  // namespace

void Isend::pre(const Call& c, const void*&, int& count, MPI_Datatype& type, int& dest, int& tag, MPI_Comm& comm,
                MPI_Request*&) {
  ReqInfo& r = scratch().send;
  r = request_info(c, ReqKind::Send, comm, dest, tag, bytes_of(count, type), false);
  write_start(c, r);
}
void Isend::post(const Call& c, int rc, const void*&, int&, MPI_Datatype&, int&, int&, MPI_Comm&, MPI_Request*& request) {
  const ReqInfo& r = scratch().send;
  if (rc == MPI_SUCCESS) track_request(*request, r);
  else if (r.recorded) c.completion(RecordType::MpiRequestCancelled, 0, 0, {r.id, 0});
}
void Irecv::post(const Call& c, int rc, void*&, int&, MPI_Datatype&, int& source, int& tag, MPI_Comm& comm,
                 MPI_Request*& request) {
  if (rc != MPI_SUCCESS) return;
  const ReqInfo r = request_info(c, ReqKind::Recv, comm, source, tag, 0, false);
  track_request(*request, r);
  write_start(c, r);
}
void Sendrecv::pre(const Call& c, const void*&, int& scount, MPI_Datatype& stype, int& dest, int& stag, void*&, int&,
                   MPI_Datatype&, int&, int&, MPI_Comm& comm, MPI_Status*& status) {
  own_status(status);
  message(c, RecordType::MpiSend, comm, dest, stag, bytes_of(scount, stype));
}
void Sendrecv::post(const Call& c, int rc, const void*&, int&, MPI_Datatype&, int&, int&, void*&, int&, MPI_Datatype&,
                    int&, int&, MPI_Comm& comm, MPI_Status*& status) {
  if (rc == MPI_SUCCESS) message(c, RecordType::MpiRecv, comm, status->MPI_SOURCE, status->MPI_TAG, received_bytes(*status));
}
void SendrecvReplace::pre(const Call& c, void*&, int& count, MPI_Datatype& type, int& dest, int& stag, int&, int&,
                          MPI_Comm& comm, MPI_Status*& status) {
  own_status(status);
  message(c, RecordType::MpiSend, comm, dest, stag, bytes_of(count, type));
}
void SendrecvReplace::post(const Call& c, int rc, void*&, int&, MPI_Datatype&, int&, int&, int&, int&, MPI_Comm& comm,
                           MPI_Status*& status) {
  if (rc == MPI_SUCCESS) message(c, RecordType::MpiRecv, comm, status->MPI_SOURCE, status->MPI_TAG, received_bytes(*status));
}
void Mprobe::post(const Call&, int rc, int&, int&, MPI_Comm& comm, MPI_Message*& message, MPI_Status*&) {
  if (rc != MPI_SUCCESS || *message == MPI_MESSAGE_NULL || *message == MPI_MESSAGE_NO_PROC) return;
  std::lock_guard<std::mutex> lock(g_msg_mutex);
  (*g_messages)[*message] = comm;
}
void Improbe::post(const Call& c, int rc, int& source, int& tag, MPI_Comm& comm, int*& flag, MPI_Message*& message,
                   MPI_Status*& status) {
  if (*flag) Mprobe::post(c, rc, source, tag, comm, message, status);
}
namespace {
MPI_Comm take_message(MPI_Message m) {
  std::lock_guard<std::mutex> lock(g_msg_mutex);
  auto it = g_messages->find(m);
  if (it == g_messages->end()) return MPI_COMM_NULL;
  const MPI_Comm comm = it->second;
  g_messages->erase(it);
  return comm;
}
thread_local MPI_Comm t_message_comm = MPI_COMM_NULL;  // Mrecv/Imrecv: the matched message's
thread_local MPI_Comm t_freed_comm = MPI_COMM_NULL;    // Comm_free: the handle before the call
}  // namespace
void Mrecv::pre(const Call&, void*&, int&, MPI_Datatype&, MPI_Message*& message, MPI_Status*& status) {
  own_status(status);
  t_message_comm = take_message(*message);  // the call sets *message to MPI_MESSAGE_NULL
}
void Mrecv::post(const Call& c, int rc, void*&, int&, MPI_Datatype&, MPI_Message*&, MPI_Status*& status) {
  if (rc == MPI_SUCCESS && t_message_comm != MPI_COMM_NULL)
    message(c, RecordType::MpiRecv, t_message_comm, status->MPI_SOURCE, status->MPI_TAG, received_bytes(*status));
}
void Imrecv::pre(const Call&, void*&, int&, MPI_Datatype&, MPI_Message*& message, MPI_Request*&) {
  t_message_comm = take_message(*message);
}
void Imrecv::post(const Call& c, int rc, void*&, int&, MPI_Datatype&, MPI_Message*&, MPI_Request*& request) {
  if (rc != MPI_SUCCESS || t_message_comm == MPI_COMM_NULL) return;
  const ReqInfo r = request_info(c, ReqKind::Recv, t_message_comm, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, false);
  track_request(*request, r);
  write_start(c, r);
}
void SendInit::post(const Call& c, int rc, const void*&, int& count, MPI_Datatype& type, int& dest, int& tag,
                    MPI_Comm& comm, MPI_Request*& request) {
  if (rc == MPI_SUCCESS) track_request(*request, request_info(c, ReqKind::Send, comm, dest, tag, bytes_of(count, type), true));
}
void RecvInit::post(const Call& c, int rc, void*&, int&, MPI_Datatype&, int& source, int& tag, MPI_Comm& comm,
                    MPI_Request*& request) {
  if (rc == MPI_SUCCESS) track_request(*request, request_info(c, ReqKind::Recv, comm, source, tag, 0, true));
}
void Start::pre(const Call& c, MPI_Request*& request) { start_request(c, *request); }
void Start::post(const Call& c, int rc, MPI_Request*& request) {
  if (rc != MPI_SUCCESS) unstart_request(c, *request);
}
void Startall::pre(const Call& c, int& count, MPI_Request*& requests) {
  for (int i = 0; i < count; ++i) start_request(c, requests[i]);
}
void Startall::post(const Call& c, int rc, int& count, MPI_Request*& requests) {
  if (rc != MPI_SUCCESS)
    for (int i = 0; i < count; ++i) unstart_request(c, requests[i]);
}

void Wait::pre(const Call&, MPI_Request*& request, MPI_Status*& status) {
  own_status(status);
  scratch().request = *request;
}
void Wait::post(const Call& c, int rc, MPI_Request*&, MPI_Status*& status) {
  if (rc == MPI_SUCCESS) complete_request(c, scratch().request, *status);
}
void Waitall::pre(const Call&, int& count, MPI_Request*& requests, MPI_Status*& statuses) {
  copy_requests(count, requests, &statuses);
}
void Waitall::post(const Call& c, int rc, int& count, MPI_Request*&, MPI_Status*& statuses) {
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return;
  for (int i = 0; i < count; ++i)
    if (completed(statuses[i], rc)) complete_request(c, scratch().requests[static_cast<std::size_t>(i)], statuses[i]);
}
void Waitany::pre(const Call&, int& count, MPI_Request*& requests, int*&, MPI_Status*& status) {
  copy_requests(count, requests, nullptr);
  own_status(status);
}
void Waitany::post(const Call& c, int rc, int&, MPI_Request*&, int*& index, MPI_Status*& status) {
  if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED) complete_request(c, scratch().requests[static_cast<std::size_t>(*index)], *status);
}
void Waitsome::pre(const Call&, int& count, MPI_Request*& requests, int*&, int*&, MPI_Status*& statuses) {
  copy_requests(count, requests, &statuses);
}
void Waitsome::post(const Call& c, int rc, int&, MPI_Request*&, int*& outcount, int*& indices, MPI_Status*& statuses) {
  if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || *outcount == MPI_UNDEFINED) return;
  for (int k = 0; k < *outcount; ++k)
    if (completed(statuses[k], rc))
      complete_request(c, scratch().requests[static_cast<std::size_t>(indices[k])], statuses[k]);
}
void Test::pre(const Call&, MPI_Request*& request, int*&, MPI_Status*& status) {
  own_status(status);
  scratch().request = *request;
}
void Test::post(const Call& c, int rc, MPI_Request*&, int*& flag, MPI_Status*& status) {
  if (rc != MPI_SUCCESS) return;
  if (*flag) complete_request(c, scratch().request, *status);
  else test_request(c, scratch().request);
}
void Testall::pre(const Call&, int& count, MPI_Request*& requests, int*&, MPI_Status*& statuses) {
  copy_requests(count, requests, &statuses);
}
void Testall::post(const Call& c, int rc, int& count, MPI_Request*&, int*& flag, MPI_Status*& statuses) {
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return;
  for (int i = 0; i < count; ++i) {
    const MPI_Request r = scratch().requests[static_cast<std::size_t>(i)];
    if (*flag && completed(statuses[i], rc)) complete_request(c, r, statuses[i]);
    else if (!*flag) test_request(c, r);
  }
}
void Testany::pre(const Call&, int& count, MPI_Request*& requests, int*&, int*&, MPI_Status*& status) {
  copy_requests(count, requests, nullptr);
  own_status(status);
}
void Testany::post(const Call& c, int rc, int& count, MPI_Request*&, int*& index, int*& flag, MPI_Status*& status) {
  if (rc != MPI_SUCCESS) return;
  if (*flag && *index != MPI_UNDEFINED) {
    complete_request(c, scratch().requests[static_cast<std::size_t>(*index)], *status);
  } else if (!*flag) {
    for (int i = 0; i < count; ++i) test_request(c, scratch().requests[static_cast<std::size_t>(i)]);
  }
}
void Testsome::pre(const Call&, int& count, MPI_Request*& requests, int*&, int*&, MPI_Status*& statuses) {
  copy_requests(count, requests, &statuses);
}
void Testsome::post(const Call& c, int rc, int& count, MPI_Request*&, int*& outcount, int*& indices, MPI_Status*& statuses) {
  if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || *outcount == MPI_UNDEFINED) return;
  if (*outcount == 0) {
    for (int i = 0; i < count; ++i) test_request(c, scratch().requests[static_cast<std::size_t>(i)]);
    return;
  }
  for (int k = 0; k < *outcount; ++k)
    if (completed(statuses[k], rc))
      complete_request(c, scratch().requests[static_cast<std::size_t>(indices[k])], statuses[k]);
}
void RequestFree::pre(const Call&, MPI_Request*& request) { scratch().request = *request; }
void RequestFree::post(const Call& c, int rc, MPI_Request*&) {
  if (rc == MPI_SUCCESS) free_request(c, scratch().request);
}
void Cancel::post(const Call&, int rc, MPI_Request*& request) {
  if (rc == MPI_SUCCESS) cancel_request(*request);
}

// ---- Collectives ----
void coll_begin(const Call& c, MPI_Comm comm, OTF2_CollectiveOp op) {
  if (!c.on()) return;
  const comms::CommId id = comm_id(comm);
  if (id != comms::kNoComm) c.event(RecordType::MpiCollectiveBegin, id, op, {0, 0}, {0, 0}, 0);
}
namespace {
// The size of the group a rank exchanges a collective's data with: the communicator's, or the
// remote group's on an intercommunicator (whose count arrays have that size, too).
int peers(MPI_Comm comm, const CommInfo& info) {
  int n = 0;
  if (info.inter) PMPI_Comm_remote_size(comm, &n);
  else PMPI_Comm_size(comm, &n);
  return n;
}
// Where the calling rank stands in a rooted collective. On an intercommunicator the root's group
// passes MPI_ROOT (the root) or MPI_PROC_NULL (the others: no data at all), the other group the
// root's rank in the root's group; data flows between the groups only.
struct Side {
  bool root = false;  // the calling rank is the root
  bool none = false;  // it takes no part in the data flow
  bool inter = false;
  std::uint64_t peers = 0;  // the ranks the root exchanges data with (itself included on an intracommunicator)
};
Side side(MPI_Comm comm, int root) {
  const CommInfo info = comm_info(comm);
  Side s;
  s.inter = info.inter;
  s.peers = static_cast<std::uint64_t>(peers(comm, info));
  if (s.inter) {
    s.root = root == MPI_ROOT;
    s.none = root == MPI_PROC_NULL;
  } else {
    s.root = comm_rank(comm) == root;
  }
  return s;
}
}  // namespace

// The root as OTF2 records it: its rank in the communicator, none for rootless collectives. On an
// intercommunicator it is none as well: the ranks of the root's group other than the root pass
// MPI_PROC_NULL and do not know it, and all members must record the same collective.
std::uint64_t root_of(const CommInfo& info, int root) {
  return root < 0 || info.inter ? OTF2_UNDEFINED_UINT32 : static_cast<std::uint64_t>(root);
}

void coll_end(const Call& c, MPI_Comm comm, OTF2_CollectiveOp op, int root, CollBytes bytes) {
  const CommInfo info = comm_info(comm);
  if (!c.on() || info.id == comms::kNoComm) return;
  c.event(RecordType::MpiCollectiveEnd, info.id, op, {root_of(info, root), bytes.sent}, {bytes.received, 0}, 2);
}

// The bytes of each collective for the calling rank (blocking and non-blocking alike), as Score-P
// counts them: a root sends its buffer to (receives a buffer from) every peer, itself included on
// an intracommunicator. They are computed only for tracked communicators (tracked()).
CollBytes bytes_bcast(int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const Side s = side(comm, root);
  const std::uint64_t b = bytes_of(count, type);
  if (s.none) return {};
  if (s.root) return {b * s.peers, s.inter ? 0 : b};
  return {0, b};
}
CollBytes bytes_gather(const void* sbuf, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, int root,
                       MPI_Comm comm) {
  const Side s = side(comm, root);
  if (s.none) return {};
  const std::uint64_t sent = sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
  if (s.root) return {s.inter ? 0 : sent, bytes_of(rcount, rtype) * s.peers};
  return {sent, 0};
}
CollBytes bytes_scatter(int scount, MPI_Datatype stype, const void* rbuf, int rcount, MPI_Datatype rtype, int root,
                        MPI_Comm comm) {
  const Side s = side(comm, root);
  if (s.none) return {};
  const std::uint64_t received = rbuf == MPI_IN_PLACE ? bytes_of(scount, stype) : bytes_of(rcount, rtype);
  if (s.root) return {bytes_of(scount, stype) * s.peers, s.inter ? 0 : received};
  return {0, received};
}
// Allgather and Alltoall: every rank sends its block to all (of the other group, on an
// intercommunicator) and receives all their blocks.
CollBytes bytes_all(const void* sbuf, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, MPI_Comm comm) {
  const auto n = static_cast<std::uint64_t>(peers(comm, comm_info(comm)));
  const std::uint64_t s = sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
  return {n * s, n * bytes_of(rcount, rtype)};
}
CollBytes bytes_reduce(int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const Side s = side(comm, root);
  const std::uint64_t b = bytes_of(count, type);
  if (s.none) return {};
  if (s.root) return {s.inter ? 0 : b, b * s.peers};
  return {b, 0};
}
CollBytes bytes_allreduce(int count, MPI_Datatype type, MPI_Comm comm) {
  const std::uint64_t b = bytes_of(count, type) * static_cast<std::uint64_t>(peers(comm, comm_info(comm)));
  return {b, b};
}

namespace {
// A non-blocking collective began: its request carries what its completion reports.
void nb_start(const Call& c, int rc, MPI_Request request, MPI_Comm comm, OTF2_CollectiveOp op, int root, CollBytes b) {
  if (rc != MPI_SUCCESS) return;
  ReqInfo r;
  const CommInfo info = comm_info(comm);
  r.kind = ReqKind::Coll;
  r.comm = info.id;
  r.op = static_cast<std::uint16_t>(op);
  r.peer = root_of(info, root) == OTF2_UNDEFINED_UINT32 ? -1 : root;  // -1: none
  r.bytes = b.sent;
  r.received = b.received;
  r.id = next_request_id();
  r.active = true;
  r.recorded = c.on() && r.comm != comms::kNoComm;
  track_request(request, r);
  write_start(c, r);
}
}  // namespace

// Whether a collective's events are written: recorded, on a tracked communicator. Only then are
// its bytes computed (every byte rule costs MPI queries).
bool tracked(const Call& c, MPI_Comm comm) { return c.on() && comm_id(comm) != comms::kNoComm; }

void Barrier::pre(const Call& c, MPI_Comm& comm) { coll_begin(c, comm, OTF2_COLLECTIVE_OP_BARRIER); }
void Barrier::post(const Call& c, int, MPI_Comm& comm) { coll_end(c, comm, OTF2_COLLECTIVE_OP_BARRIER, -1, {}); }
void Ibarrier::post(const Call& c, int rc, MPI_Comm& comm, MPI_Request*& request) {
  nb_start(c, rc, *request, comm, OTF2_COLLECTIVE_OP_BARRIER, -1, {});
}

void Bcast::pre(const Call& c, void*&, int&, MPI_Datatype&, int&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_BCAST);
}
void Bcast::post(const Call& c, int, void*&, int& count, MPI_Datatype& type, int& root, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  coll_end(c, comm, OTF2_COLLECTIVE_OP_BCAST, root, bytes_bcast(count, type, root, comm));
}
void Ibcast::post(const Call& c, int rc, void*&, int& count, MPI_Datatype& type, int& root, MPI_Comm& comm,
                  MPI_Request*& request) {
  if (!tracked(c, comm)) return;
  nb_start(c, rc, *request, comm, OTF2_COLLECTIVE_OP_BCAST, root, bytes_bcast(count, type, root, comm));
}

void Gather::pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, int&, MPI_Datatype&, int&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_GATHER);
}
void Gather::post(const Call& c, int, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                  MPI_Datatype& rtype, int& root, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  coll_end(c, comm, OTF2_COLLECTIVE_OP_GATHER, root, bytes_gather(sbuf, scount, stype, rcount, rtype, root, comm));
}
void Igather::post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                   MPI_Datatype& rtype, int& root, MPI_Comm& comm, MPI_Request*& request) {
  if (!tracked(c, comm)) return;
  nb_start(c, rc, *request, comm, OTF2_COLLECTIVE_OP_GATHER, root, bytes_gather(sbuf, scount, stype, rcount, rtype, root, comm));
}
void Gatherv::pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, const int*&, const int*&, MPI_Datatype&, int&,
                  MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_GATHERV);
}
void Gatherv::post(const Call& c, int, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, const int*& rcounts,
                   const int*&, MPI_Datatype& rtype, int& root, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  const Side s = side(comm, root);
  CollBytes b;
  if (!s.none) {
    // In place (intracommunicators only): the root's own block stays where it is.
    b.sent = s.root && s.inter ? 0 : sbuf == MPI_IN_PLACE ? bytes_of(rcounts[comm_rank(comm)], rtype) : bytes_of(scount, stype);
    b.received = s.root ? sum_bytes(rcounts, rtype, static_cast<int>(s.peers)) : 0;
  }
  coll_end(c, comm, OTF2_COLLECTIVE_OP_GATHERV, root, b);
}
void Scatter::pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, int&, MPI_Datatype&, int&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_SCATTER);
}
void Scatter::post(const Call& c, int, const void*&, int& scount, MPI_Datatype& stype, void*& rbuf, int& rcount,
                   MPI_Datatype& rtype, int& root, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  coll_end(c, comm, OTF2_COLLECTIVE_OP_SCATTER, root, bytes_scatter(scount, stype, rbuf, rcount, rtype, root, comm));
}
void Iscatter::post(const Call& c, int rc, const void*&, int& scount, MPI_Datatype& stype, void*& rbuf, int& rcount,
                    MPI_Datatype& rtype, int& root, MPI_Comm& comm, MPI_Request*& request) {
  if (!tracked(c, comm)) return;
  nb_start(c, rc, *request, comm, OTF2_COLLECTIVE_OP_SCATTER, root,
           bytes_scatter(scount, stype, rbuf, rcount, rtype, root, comm));
}
void Scatterv::pre(const Call& c, const void*&, const int*&, const int*&, MPI_Datatype&, void*&, int&, MPI_Datatype&, int&,
                   MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_SCATTERV);
}
void Scatterv::post(const Call& c, int, const void*&, const int*& scounts, const int*&, MPI_Datatype& stype, void*& rbuf,
                    int& rcount, MPI_Datatype& rtype, int& root, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  const Side s = side(comm, root);
  CollBytes b;
  if (!s.none) {
    b.sent = s.root ? sum_bytes(scounts, stype, static_cast<int>(s.peers)) : 0;
    b.received = s.root && s.inter ? 0 : rbuf == MPI_IN_PLACE ? bytes_of(scounts[comm_rank(comm)], stype) : bytes_of(rcount, rtype);
  }
  coll_end(c, comm, OTF2_COLLECTIVE_OP_SCATTERV, root, b);
}
void Allgather::pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, int&, MPI_Datatype&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_ALLGATHER);
}
void Allgather::post(const Call& c, int, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                     MPI_Datatype& rtype, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  coll_end(c, comm, OTF2_COLLECTIVE_OP_ALLGATHER, -1, bytes_all(sbuf, scount, stype, rcount, rtype, comm));
}
void Iallgather::post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                      MPI_Datatype& rtype, MPI_Comm& comm, MPI_Request*& request) {
  if (!tracked(c, comm)) return;
  nb_start(c, rc, *request, comm, OTF2_COLLECTIVE_OP_ALLGATHER, -1, bytes_all(sbuf, scount, stype, rcount, rtype, comm));
}
void Allgatherv::pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, const int*&, const int*&, MPI_Datatype&,
                     MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_ALLGATHERV);
}
void Allgatherv::post(const Call& c, int, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, const int*& rcounts,
                      const int*&, MPI_Datatype& rtype, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  const int n = peers(comm, comm_info(comm));
  const std::uint64_t s = sbuf == MPI_IN_PLACE ? bytes_of(rcounts[comm_rank(comm)], rtype) : bytes_of(scount, stype);
  coll_end(c, comm, OTF2_COLLECTIVE_OP_ALLGATHERV, -1, {static_cast<std::uint64_t>(n) * s, sum_bytes(rcounts, rtype, n)});
}
void Alltoall::pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, int&, MPI_Datatype&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_ALLTOALL);
}
void Alltoall::post(const Call& c, int, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                    MPI_Datatype& rtype, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  coll_end(c, comm, OTF2_COLLECTIVE_OP_ALLTOALL, -1, bytes_all(sbuf, scount, stype, rcount, rtype, comm));
}
void Ialltoall::post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                     MPI_Datatype& rtype, MPI_Comm& comm, MPI_Request*& request) {
  if (!tracked(c, comm)) return;
  nb_start(c, rc, *request, comm, OTF2_COLLECTIVE_OP_ALLTOALL, -1, bytes_all(sbuf, scount, stype, rcount, rtype, comm));
}
void Alltoallv::pre(const Call& c, const void*&, const int*&, const int*&, MPI_Datatype&, void*&, const int*&, const int*&,
                    MPI_Datatype&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_ALLTOALLV);
}
void Alltoallv::post(const Call& c, int, const void*& sbuf, const int*& scounts, const int*&, MPI_Datatype& stype, void*&,
                     const int*& rcounts, const int*&, MPI_Datatype& rtype, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  const int n = peers(comm, comm_info(comm));
  const std::uint64_t received = sum_bytes(rcounts, rtype, n);
  coll_end(c, comm, OTF2_COLLECTIVE_OP_ALLTOALLV, -1, {sbuf == MPI_IN_PLACE ? received : sum_bytes(scounts, stype, n), received});
}
void Alltoallw::pre(const Call& c, const void*&, const int*&, const int*&, const MPI_Datatype*&, void*&, const int*&,
                    const int*&, const MPI_Datatype*&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_ALLTOALLW);
}
void Alltoallw::post(const Call& c, int, const void*& sbuf, const int*& scounts, const int*&, const MPI_Datatype*& stypes,
                     void*&, const int*& rcounts, const int*&, const MPI_Datatype*& rtypes, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  const int n = peers(comm, comm_info(comm));
  std::uint64_t sent = 0, received = 0;
  for (int i = 0; i < n; ++i) {
    received += bytes_of(rcounts[i], rtypes[i]);
    if (sbuf != MPI_IN_PLACE) sent += bytes_of(scounts[i], stypes[i]);
  }
  coll_end(c, comm, OTF2_COLLECTIVE_OP_ALLTOALLW, -1, {sbuf == MPI_IN_PLACE ? received : sent, received});
}
void Reduce::pre(const Call& c, const void*&, void*&, int&, MPI_Datatype&, MPI_Op&, int&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_REDUCE);
}
void Reduce::post(const Call& c, int, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, int& root, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  coll_end(c, comm, OTF2_COLLECTIVE_OP_REDUCE, root, bytes_reduce(count, type, root, comm));
}
void Ireduce::post(const Call& c, int rc, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, int& root,
                   MPI_Comm& comm, MPI_Request*& request) {
  if (!tracked(c, comm)) return;
  nb_start(c, rc, *request, comm, OTF2_COLLECTIVE_OP_REDUCE, root, bytes_reduce(count, type, root, comm));
}
void Allreduce::pre(const Call& c, const void*&, void*&, int&, MPI_Datatype&, MPI_Op&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_ALLREDUCE);
}
void Allreduce::post(const Call& c, int, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  coll_end(c, comm, OTF2_COLLECTIVE_OP_ALLREDUCE, -1, bytes_allreduce(count, type, comm));
}
void Iallreduce::post(const Call& c, int rc, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, MPI_Comm& comm,
                      MPI_Request*& request) {
  if (!tracked(c, comm)) return;
  nb_start(c, rc, *request, comm, OTF2_COLLECTIVE_OP_ALLREDUCE, -1, bytes_allreduce(count, type, comm));
}
void ReduceScatter::pre(const Call& c, const void*&, void*&, const int*&, MPI_Datatype&, MPI_Op&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_REDUCE_SCATTER);
}
void ReduceScatter::post(const Call& c, int, const void*&, void*&, const int*& rcounts, MPI_Datatype& type, MPI_Op&,
                         MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  // rcounts has the calling rank's group's size; on an intercommunicator both groups' sums agree.
  const auto from = static_cast<std::uint64_t>(peers(comm, comm_info(comm)));
  coll_end(c, comm, OTF2_COLLECTIVE_OP_REDUCE_SCATTER, -1,
           {sum_bytes(rcounts, type, comm_size(comm)), from * bytes_of(rcounts[comm_rank(comm)], type)});
}
void ReduceScatterBlock::pre(const Call& c, const void*&, void*&, int&, MPI_Datatype&, MPI_Op&, MPI_Comm& comm) {
  coll_begin(c, comm, OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK);
}
void ReduceScatterBlock::post(const Call& c, int, const void*&, void*&, int& rcount, MPI_Datatype& type, MPI_Op&,
                              MPI_Comm& comm) {
  if (!tracked(c, comm)) return;
  // Each rank provides rcount blocks for its group's ranks and receives one from each peer.
  const std::uint64_t b = bytes_of(rcount, type);
  coll_end(c, comm, OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK, -1,
           {b * static_cast<std::uint64_t>(comm_size(comm)), b * static_cast<std::uint64_t>(peers(comm, comm_info(comm)))});
}
void Iscan::post(const Call& c, int rc, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, MPI_Comm& comm,
                 MPI_Request*& request) {
  if (!tracked(c, comm)) return;
  const std::uint64_t b = bytes_of(count, type);
  nb_start(c, rc, *request, comm, OTF2_COLLECTIVE_OP_SCAN, -1, {b, b});
}
void Iexscan::post(const Call& c, int rc, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, MPI_Comm& comm,
                   MPI_Request*& request) {
  if (!tracked(c, comm)) return;
  const std::uint64_t b = bytes_of(count, type);
  nb_start(c, rc, *request, comm, OTF2_COLLECTIVE_OP_EXSCAN, -1, {b, b});
}

// ---- Communicators ----
void CommFree::pre(const Call&, MPI_Comm*& comm) { t_freed_comm = *comm; }
void CommFree::post(const Call&, int rc, MPI_Comm*&) {
  if (rc == MPI_SUCCESS) untrack_comm(t_freed_comm);
}

}  // namespace prof::mpi::sem
