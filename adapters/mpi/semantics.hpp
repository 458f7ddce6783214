// SPDX-License-Identifier: BSD-3-Clause
// The semantics of the MPI wrappers: the rules a literal wrapper generator gets wrong. Each struct
// names one behaviour of functions.txt; the generated wrapper calls S::pre, S::call (the PMPI
// function) and S::post with every argument as an lvalue, so a rule may replace one (an ignored
// status by prof's own, to learn source, tag and size). The rules:
//  - Wait/Test set completed handles to MPI_REQUEST_NULL: the request array is copied first, and
//    completions are looked up by the handles as they were (Open MPI reuses handle values).
//  - MPI_STATUS(ES)_IGNORE becomes internal statuses (source, tag, count of receives).
//  - MPI_PROC_NULL peers give no message events; MPI_ANY_SOURCE/ANY_TAG take the status's values;
//    zero-byte messages are messages.
//  - A send's start event (MpiIsend, also of a persistent send at MPI_Start) is written before the
//    PMPI call, as Score-P does: the message may arrive, and its receive be stamped, before the
//    call returns. A failed call cancels it (MpiRequestCancelled).
//  - Persistent requests get a new request id at every MPI_Start; MPI_Request_free of an active
//    request completes it in the trace (its real end is unknowable).
//  - MPI_IN_PLACE changes which counts are valid per collective (collective_bytes below), and the
//    root of a collective is its rank in the communicator, none (OTF2_UNDEFINED_UINT32) for
//    rootless ones. Bytes follow Score-P: the root of a one-to-all operation counts its own block.
// Each rule is pinned by tests/unit/test_mpi_semantics.cpp against a fake PMPI layer.
#pragma once

#include <otf2/OTF2_Events.h>

#include <vector>

#include "adapters/mpi/mpi_adapter.hpp"

namespace prof::mpi::sem {

/// Enter/Leave only; the base of every rule (a rule replaces what it needs).
struct None {
  template <class... A>
  static void pre(const Call&, A&...) {}
  template <class F, class... A>
  static auto call(F f, A&... a) {
    return f(a...);
  }
  template <class R, class... A>
  static void post(const Call&, R, A&...) {}
};

/// Storage for replaced statuses and copied requests of the calling wrapper: one per thread and
/// nesting level (an MPI call inside a user callback during another MPI call gets its own).
struct Scratch {
  MPI_Status status;
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<MPI_Request> requests;
  std::vector<MPI_Status> statuses;
  ReqInfo send;  ///< the nonblocking send whose start event was written before its PMPI call
};
Scratch& scratch();

/// A message event for a peer (receiver or sender) in `comm` (nothing for MPI_PROC_NULL or an
/// untracked communicator).
void message(const Call& c, RecordType type, MPI_Comm comm, int peer, int tag, std::uint64_t bytes);
/// The bytes a receive brought, from its status.
std::uint64_t received_bytes(const MPI_Status& s);

// ---- Environment ----
struct Init : None {
  static void post(const Call&, int rc, int*&, char***&);
};
struct InitThread : None {
  static void post(const Call&, int rc, int*&, char***&, int&, int*&);
};
struct Finalize : None {
  template <class F>
  static int call(F) {
    return user_finalize();
  }
};
struct Finalized : None {
  template <class F>
  static int call(F, int*& flag) {
    *flag = user_finalized() ? 1 : 0;
    return MPI_SUCCESS;
  }
};

struct Abort : None {
  static void pre(const Call&, MPI_Comm&, int& errorcode) { user_abort(errorcode); }
};

// ---- Point to point ----
struct Send : None {
  static void pre(const Call& c, const void*&, int& count, MPI_Datatype& type, int& dest, int& tag, MPI_Comm& comm);
};
struct Recv : None {
  static void pre(const Call& c, void*&, int&, MPI_Datatype&, int&, int&, MPI_Comm&, MPI_Status*& status);
  static void post(const Call& c, int rc, void*&, int&, MPI_Datatype&, int&, int&, MPI_Comm& comm, MPI_Status*& status);
};
struct Isend : None {
  static void pre(const Call& c, const void*&, int& count, MPI_Datatype& type, int& dest, int& tag, MPI_Comm& comm,
                  MPI_Request*& request);
  static void post(const Call& c, int rc, const void*&, int& count, MPI_Datatype& type, int& dest, int& tag,
                   MPI_Comm& comm, MPI_Request*& request);
};
struct Irecv : None {
  static void post(const Call& c, int rc, void*&, int&, MPI_Datatype&, int& source, int& tag, MPI_Comm& comm,
                   MPI_Request*& request);
};
struct Sendrecv : None {
  static void pre(const Call& c, const void*&, int& scount, MPI_Datatype& stype, int& dest, int& stag, void*&, int&,
                  MPI_Datatype&, int&, int&, MPI_Comm& comm, MPI_Status*& status);
  static void post(const Call& c, int rc, const void*&, int&, MPI_Datatype&, int&, int&, void*&, int&, MPI_Datatype&,
                   int&, int&, MPI_Comm& comm, MPI_Status*& status);
};
struct SendrecvReplace : None {
  static void pre(const Call& c, void*&, int& count, MPI_Datatype& type, int& dest, int& stag, int&, int&, MPI_Comm& comm,
                  MPI_Status*& status);
  static void post(const Call& c, int rc, void*&, int&, MPI_Datatype&, int&, int&, int&, int&, MPI_Comm& comm,
                   MPI_Status*& status);
};
struct Mprobe : None {
  static void post(const Call& c, int rc, int&, int&, MPI_Comm& comm, MPI_Message*& message, MPI_Status*&);
};
struct Improbe : None {
  static void post(const Call& c, int rc, int&, int&, MPI_Comm& comm, int*& flag, MPI_Message*& message, MPI_Status*&);
};
struct Mrecv : None {
  static void pre(const Call& c, void*&, int&, MPI_Datatype&, MPI_Message*& message, MPI_Status*& status);
  static void post(const Call& c, int rc, void*&, int&, MPI_Datatype&, MPI_Message*&, MPI_Status*& status);
};
struct Imrecv : None {
  static void pre(const Call& c, void*&, int&, MPI_Datatype&, MPI_Message*& message, MPI_Request*&);
  static void post(const Call& c, int rc, void*&, int&, MPI_Datatype&, MPI_Message*&, MPI_Request*& request);
};
struct SendInit : None {
  static void post(const Call& c, int rc, const void*&, int& count, MPI_Datatype& type, int& dest, int& tag,
                   MPI_Comm& comm, MPI_Request*& request);
};
struct RecvInit : None {
  static void post(const Call& c, int rc, void*&, int&, MPI_Datatype&, int& source, int& tag, MPI_Comm& comm,
                   MPI_Request*& request);
};
struct Start : None {
  static void pre(const Call& c, MPI_Request*& request);
  static void post(const Call& c, int rc, MPI_Request*& request);
};
struct Startall : None {
  static void pre(const Call& c, int& count, MPI_Request*& requests);
  static void post(const Call& c, int rc, int& count, MPI_Request*& requests);
};
struct Wait : None {
  static void pre(const Call& c, MPI_Request*& request, MPI_Status*& status);
  static void post(const Call& c, int rc, MPI_Request*&, MPI_Status*& status);
};
struct Waitall : None {
  static void pre(const Call& c, int& count, MPI_Request*& requests, MPI_Status*& statuses);
  static void post(const Call& c, int rc, int& count, MPI_Request*&, MPI_Status*& statuses);
};
struct Waitany : None {
  static void pre(const Call& c, int& count, MPI_Request*& requests, int*&, MPI_Status*& status);
  static void post(const Call& c, int rc, int& count, MPI_Request*&, int*& index, MPI_Status*& status);
};
struct Waitsome : None {
  static void pre(const Call& c, int& count, MPI_Request*& requests, int*&, int*&, MPI_Status*& statuses);
  static void post(const Call& c, int rc, int& count, MPI_Request*&, int*& outcount, int*& indices, MPI_Status*& statuses);
};
struct Test : None {
  static void pre(const Call& c, MPI_Request*& request, int*&, MPI_Status*& status);
  static void post(const Call& c, int rc, MPI_Request*&, int*& flag, MPI_Status*& status);
};
struct Testall : None {
  static void pre(const Call& c, int& count, MPI_Request*& requests, int*&, MPI_Status*& statuses);
  static void post(const Call& c, int rc, int& count, MPI_Request*&, int*& flag, MPI_Status*& statuses);
};
struct Testany : None {
  static void pre(const Call& c, int& count, MPI_Request*& requests, int*&, int*&, MPI_Status*& status);
  static void post(const Call& c, int rc, int& count, MPI_Request*&, int*& index, int*& flag, MPI_Status*& status);
};
struct Testsome : None {
  static void pre(const Call& c, int& count, MPI_Request*& requests, int*&, int*&, MPI_Status*& statuses);
  static void post(const Call& c, int rc, int& count, MPI_Request*&, int*& outcount, int*& indices, MPI_Status*& statuses);
};
struct RequestFree : None {
  static void pre(const Call& c, MPI_Request*& request);
  static void post(const Call& c, int rc, MPI_Request*&);
};
struct Cancel : None {
  static void post(const Call& c, int rc, MPI_Request*& request);
};

// ---- Collectives ----
/// Bytes sent and received by the calling rank in one collective (see the header comment).
struct CollBytes {
  std::uint64_t sent = 0, received = 0;
};
/// MpiCollectiveBegin (when the call records and the communicator is tracked). It carries the
/// operation and the communicator its End will (OTF2's Begin has neither): a rank stopped inside
/// the collective gets its End from the end of the run (runtime.cpp, close_collective).
void coll_begin(const Call& c, MPI_Comm comm, OTF2_CollectiveOp op);
/// MpiCollectiveEnd; root < 0: none.
void coll_end(const Call& c, MPI_Comm comm, OTF2_CollectiveOp op, int root, CollBytes bytes);

CollBytes bytes_bcast(int count, MPI_Datatype type, int root, MPI_Comm comm);
CollBytes bytes_gather(const void* sbuf, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
CollBytes bytes_scatter(int scount, MPI_Datatype stype, const void* rbuf, int rcount, MPI_Datatype rtype, int root,
                        MPI_Comm comm);
CollBytes bytes_all(const void* sbuf, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, MPI_Comm comm);
CollBytes bytes_reduce(int count, MPI_Datatype type, int root, MPI_Comm comm);
CollBytes bytes_allreduce(int count, MPI_Datatype type, MPI_Comm comm);

struct Barrier : None {
  static void pre(const Call& c, MPI_Comm& comm);
  static void post(const Call& c, int rc, MPI_Comm& comm);
};
struct Bcast : None {
  static void pre(const Call& c, void*&, int&, MPI_Datatype&, int&, MPI_Comm& comm);
  static void post(const Call& c, int rc, void*&, int& count, MPI_Datatype& type, int& root, MPI_Comm& comm);
};
struct Gather : None {
  static void pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, int&, MPI_Datatype&, int&, MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                   MPI_Datatype& rtype, int& root, MPI_Comm& comm);
};
struct Gatherv : None {
  static void pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, const int*&, const int*&, MPI_Datatype&, int&,
                  MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&,
                   const int*& rcounts, const int*&, MPI_Datatype& rtype, int& root, MPI_Comm& comm);
};
struct Scatter : None {
  static void pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, int&, MPI_Datatype&, int&, MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*&, int& scount, MPI_Datatype& stype, void*& rbuf, int& rcount,
                   MPI_Datatype& rtype, int& root, MPI_Comm& comm);
};
struct Scatterv : None {
  static void pre(const Call& c, const void*&, const int*&, const int*&, MPI_Datatype&, void*&, int&, MPI_Datatype&, int&,
                  MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*&, const int*& scounts, const int*&, MPI_Datatype& stype,
                   void*& rbuf, int& rcount, MPI_Datatype& rtype, int& root, MPI_Comm& comm);
};
struct Allgather : None {
  static void pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, int&, MPI_Datatype&, MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                   MPI_Datatype& rtype, MPI_Comm& comm);
};
struct Allgatherv : None {
  static void pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, const int*&, const int*&, MPI_Datatype&,
                  MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&,
                   const int*& rcounts, const int*&, MPI_Datatype& rtype, MPI_Comm& comm);
};
struct Alltoall : None {
  static void pre(const Call& c, const void*&, int&, MPI_Datatype&, void*&, int&, MPI_Datatype&, MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                   MPI_Datatype& rtype, MPI_Comm& comm);
};
struct Alltoallv : None {
  static void pre(const Call& c, const void*&, const int*&, const int*&, MPI_Datatype&, void*&, const int*&, const int*&,
                  MPI_Datatype&, MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*& sbuf, const int*& scounts, const int*&, MPI_Datatype& stype,
                   void*&, const int*& rcounts, const int*&, MPI_Datatype& rtype, MPI_Comm& comm);
};
struct Alltoallw : None {
  static void pre(const Call& c, const void*&, const int*&, const int*&, const MPI_Datatype*&, void*&, const int*&,
                  const int*&, const MPI_Datatype*&, MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*& sbuf, const int*& scounts, const int*&, const MPI_Datatype*& stypes,
                   void*&, const int*& rcounts, const int*&, const MPI_Datatype*& rtypes, MPI_Comm& comm);
};
struct Reduce : None {
  static void pre(const Call& c, const void*&, void*&, int&, MPI_Datatype&, MPI_Op&, int&, MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, int& root,
                   MPI_Comm& comm);
};
struct Allreduce : None {
  static void pre(const Call& c, const void*&, void*&, int&, MPI_Datatype&, MPI_Op&, MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, MPI_Comm& comm);
};
struct ReduceScatter : None {
  static void pre(const Call& c, const void*&, void*&, const int*&, MPI_Datatype&, MPI_Op&, MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*&, void*&, const int*& rcounts, MPI_Datatype& type, MPI_Op&,
                   MPI_Comm& comm);
};
struct ReduceScatterBlock : None {
  static void pre(const Call& c, const void*&, void*&, int&, MPI_Datatype&, MPI_Op&, MPI_Comm& comm);
  static void post(const Call& c, int rc, const void*&, void*&, int& rcount, MPI_Datatype& type, MPI_Op&, MPI_Comm& comm);
};
template <OTF2_CollectiveOp Op>
struct ScanT : None {
  static void pre(const Call& c, const void*&, void*&, int&, MPI_Datatype&, MPI_Op&, MPI_Comm& comm) {
    coll_begin(c, comm, Op);
  }
  static void post(const Call& c, int, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, MPI_Comm& comm) {
    const std::uint64_t b = bytes_of(count, type);
    coll_end(c, comm, Op, -1, {b, b});
  }
};
using Scan = ScanT<OTF2_COLLECTIVE_OP_SCAN>;
using Exscan = ScanT<OTF2_COLLECTIVE_OP_EXSCAN>;

// Non-blocking collectives: a NonBlockingCollectiveRequest now, the NonBlockingCollectiveComplete
// (operation, root, bytes) when a Wait/Test completes the request.
struct Ibarrier : None {
  static void post(const Call& c, int rc, MPI_Comm& comm, MPI_Request*& request);
};
struct Ibcast : None {
  static void post(const Call& c, int rc, void*&, int& count, MPI_Datatype& type, int& root, MPI_Comm& comm,
                   MPI_Request*& request);
};
struct Igather : None {
  static void post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                   MPI_Datatype& rtype, int& root, MPI_Comm& comm, MPI_Request*& request);
};
struct Iscatter : None {
  static void post(const Call& c, int rc, const void*&, int& scount, MPI_Datatype& stype, void*& rbuf, int& rcount,
                   MPI_Datatype& rtype, int& root, MPI_Comm& comm, MPI_Request*& request);
};
struct Iallgather : None {
  static void post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                   MPI_Datatype& rtype, MPI_Comm& comm, MPI_Request*& request);
};
struct Ialltoall : None {
  static void post(const Call& c, int rc, const void*& sbuf, int& scount, MPI_Datatype& stype, void*&, int& rcount,
                   MPI_Datatype& rtype, MPI_Comm& comm, MPI_Request*& request);
};
struct Ireduce : None {
  static void post(const Call& c, int rc, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, int& root,
                   MPI_Comm& comm, MPI_Request*& request);
};
struct Iallreduce : None {
  static void post(const Call& c, int rc, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, MPI_Comm& comm,
                   MPI_Request*& request);
};
struct Iscan : None {
  static void post(const Call& c, int rc, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, MPI_Comm& comm,
                   MPI_Request*& request);
};
struct Iexscan : None {
  static void post(const Call& c, int rc, const void*&, void*&, int& count, MPI_Datatype& type, MPI_Op&, MPI_Comm& comm,
                   MPI_Request*& request);
};

// ---- Communicators ----
/// A call that creates a communicator: the first argument is the one it is made from, the last
/// the new handle. Tracking (collective over the new communicator) runs whatever the groups say.
struct NewComm : None {
  template <class First, class... A>
  static void post(const Call&, int rc, First& first, A&... rest) {
    if (rc != MPI_SUCCESS) return;
    MPI_Comm* created = last(rest...);
    if (created && *created != MPI_COMM_NULL) track_comm(*created, parent_of(first));
  }

 private:
  template <class T>
  static MPI_Comm parent_of(T&) {
    return MPI_COMM_NULL;
  }
  static MPI_Comm parent_of(MPI_Comm& c) { return c; }
  template <class T>
  static MPI_Comm* last(T& t) {
    return as_comm_ptr(t);
  }
  template <class T, class... A>
  static MPI_Comm* last(T&, A&... rest) {
    return last(rest...);
  }
  template <class T>
  static MPI_Comm* as_comm_ptr(T&) {
    return nullptr;
  }
  static MPI_Comm* as_comm_ptr(MPI_Comm*& p) { return p; }
};
struct CommFree : None {
  static void pre(const Call& c, MPI_Comm*& comm);
  static void post(const Call& c, int rc, MPI_Comm*&);
};

}  // namespace prof::mpi::sem
