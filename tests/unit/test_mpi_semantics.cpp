// SPDX-License-Identifier: BSD-3-Clause
// The MPI wrappers' rules (adapters/mpi/semantics.hpp): the generated wrappers over a fake PMPI and a fake adapter API.
#include <catch2/catch.hpp>
#include <otf2/OTF2_Events.h>
#include <otf2/OTF2_GeneralDefinitions.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"
#include "adapters/mpi/mpi_adapter.hpp"

extern "C" const prof_adapter prof_adapter_mpi;  // adapters/mpi/mpi_adapter.cpp

using prof::RecordType;
using V = std::vector<std::string>;

namespace {

// ---- The fake adapter API: what the adapter writes and defines lands here ----
struct Ev {
  RecordType type;
  std::uint32_t ref;
  std::uint16_t aux;
  std::uint64_t a, b, c, d;  // slot 1 a and b, slot 2 a and b
};
std::vector<Ev> g_events;
std::vector<std::size_t> g_pmpi_at;  // g_events.size() when PMPI_Isend/PMPI_Start was called
bool g_fail_next = false;            // the next PMPI_Isend/PMPI_Start fails
std::vector<std::string> g_regions;         // define_region: id = index
std::vector<prof::comms::CommDef> g_comms;  // define_comm: id = index + 1 (0 is the thread contingent)
prof::config::Values g_config;
int g_location = 0, g_busy = 0;

// The payload slots of each record type (measurement/record.hpp).
unsigned slots_of(RecordType t) {
  switch (t) {
    case RecordType::MpiIsend: case RecordType::MpiIrecv: case RecordType::MpiCollectiveEnd:
    case RecordType::NbCollComplete: return 2;
    case RecordType::MpiCollectiveBegin: return 0;
    default: return 1;
  }
}
bool carries_comm(RecordType t) {
  return t == RecordType::MpiSend || t == RecordType::MpiIsend || t == RecordType::MpiRecv || t == RecordType::MpiIrecv ||
         t == RecordType::MpiCollectiveBegin || t == RecordType::MpiCollectiveEnd || t == RecordType::NbCollComplete;
}
// The last MpiCollectiveBegin's communicator and operation: its End must carry the same (the end
// of a run writes the End of a collective a rank was stopped in from its Begin; issue 30).
std::uint32_t g_begin_comm = 0;
std::uint16_t g_begin_op = 0;
bool g_begin_open = false;

}  // namespace

namespace prof::api {
Location* acquire() {
  CHECK(g_busy++ == 0);  // every acquire is released before the next
  return reinterpret_cast<Location*>(&g_location);
}
void release(Location* loc) {
  CHECK(loc == reinterpret_cast<Location*>(&g_location));
  --g_busy;
}
bool recording(const Location*) { return true; }
Timestamp now() { return 0; }
void enter(Location*, RegionId region) { g_events.push_back({RecordType::Enter, region, 0, 0, 0, 0, 0}); }
void leave(Location*, RegionId region) { g_events.push_back({RecordType::Leave, region, 0, 0, 0, 0, 0}); }
bool event(Location*, Timestamp, RecordType type, std::uint32_t ref, std::uint16_t aux, const Payload* p, unsigned n) {
  CHECK(n == slots_of(type));
  if (!carries_comm(type)) CHECK(ref == 0);
  if (type == RecordType::MpiCollectiveBegin) {
    CHECK_FALSE(g_begin_open);
    g_begin_open = true;
    g_begin_comm = ref;
    g_begin_op = aux;
  } else if (type == RecordType::MpiCollectiveEnd) {
    CHECK(g_begin_open);
    CHECK(ref == g_begin_comm);
    CHECK(aux == g_begin_op);
    g_begin_open = false;
  }
  g_events.push_back({type, ref, aux, n > 0 ? p[0].a : 0, n > 0 ? p[0].b : 0, n > 1 ? p[1].a : 0, n > 1 ? p[1].b : 0});
  return true;
}
void add_bytes(Location* loc, std::uint64_t, std::uint64_t) { CHECK(loc == reinterpret_cast<Location*>(&g_location)); }
RegionId define_region(const regions::RegionDef& def) {
  g_regions.push_back(def.name);
  return static_cast<RegionId>(g_regions.size() - 1);
}
comms::CommId define_comm(const comms::CommDef& def) {
  g_comms.push_back(def);
  return static_cast<comms::CommId>(g_comms.size());
}
const config::Values& values() { return g_config; }
std::string effective_config() { return "PROF_MPI_ENABLE_GROUPS=all\n"; }
void defer_ready() {}
void set_mpp(Mpp*) {}
void ignore_threads_of(const char*) {}
bool ready(std::uint32_t) { return true; }
void add_clock_offset(Timestamp, std::int64_t) {}
bool stop_requested() { return false; }
void finalize(int) {}
void error(const char* text) { FAIL_CHECK("api::error: " << text); }
void warning(const char* text) { FAIL_CHECK("api::warning: " << text); }
void set_log_rank(std::uint32_t) {}
}  // namespace prof::api

namespace {

// ---- The fake PMPI layer's state, set by the tests ----
int g_world_rank = 0;  // 0 during MPI_Init (the configuration check broadcasts from rank 0), then 1 of 4
std::map<MPI_Comm, std::vector<int>> g_fake_comms;  // communicators the fake made: their world ranks
std::map<MPI_Group, std::vector<int>> g_fake_groups;
std::vector<int> g_split_members;  // the world ranks of the communicator MPI_Comm_split makes
std::map<MPI_Comm, std::vector<int>> g_fake_remote;  // intercommunicators: their remote groups
std::vector<int> g_inter_remote;   // the remote group of the intercommunicator MPI_Intercomm_create makes
int g_finalize_calls = 0;
bool g_test_completes = true;      // Test/Testall complete the pending requests
int g_waitany_pick = -1;           // the index Waitany completes (-1: the first pending one)
std::vector<int> g_waitsome_pick;  // the indices Waitsome completes (empty: every pending one)

// Open MPI's status: source, tag, error, cancelled, the byte count.
MPI_Status make_status(int source, int tag, std::size_t bytes) { return MPI_Status{source, tag, MPI_SUCCESS, 0, bytes}; }
MPI_Status g_next;  // what the next receive (MPI_Recv, MPI_Irecv or the start of a receive request) gets

struct FakeRequest {
  bool used = false, persistent = false, recv = false, active = false, cancelled = false;
  int peer = 0;
  MPI_Status status{};
};
constexpr int kPool = 8;
FakeRequest g_pool[kPool];
MPI_Request request_handle(int i) { return reinterpret_cast<MPI_Request>(std::uintptr_t{0x7000} + 64u * static_cast<unsigned>(i)); }
FakeRequest* fake_request(MPI_Request r) {
  for (int i = 0; i < kPool; ++i)
    if (g_pool[i].used && request_handle(i) == r) return &g_pool[i];
  return nullptr;
}
// With g_share_sends, every Isend gets this one already completed handle, as Open MPI gives small
// sends that left at once.
bool g_share_sends = false;
MPI_Request shared_request() { return reinterpret_cast<MPI_Request>(std::uintptr_t{0x6fc0}); }
bool pending(MPI_Request r) {
  const FakeRequest* q = fake_request(r);
  return q && q->active;
}
void activate(FakeRequest& q) {
  q.active = true;
  q.cancelled = false;
  q.status = !q.recv ? make_status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0)
             : q.peer == MPI_PROC_NULL ? make_status(MPI_PROC_NULL, MPI_ANY_TAG, 0) : g_next;
}
// The lowest free handle, so that values are reused after completion, as in Open MPI.
MPI_Request new_request(bool recv, int peer, bool persistent) {
  for (int i = 0; i < kPool; ++i) {
    if (g_pool[i].used) continue;
    g_pool[i] = FakeRequest{true, persistent, recv, false, false, peer, {}};
    if (!persistent) activate(g_pool[i]);
    return request_handle(i);
  }
  FAIL("the fake request pool is exhausted");
  return MPI_REQUEST_NULL;
}
// Completes *r into *status as MPI does: a nonpersistent handle becomes MPI_REQUEST_NULL; a null
// or inactive one gives an empty status.
void complete(MPI_Request* r, MPI_Status* status) {
  FakeRequest* q = fake_request(*r);
  if (!q || !q->active) {
    *status = make_status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    if (*r == shared_request()) *r = MPI_REQUEST_NULL;
    return;
  }
  *status = q->status;
  status->_cancelled = q->cancelled ? 1 : 0;
  if (q->persistent) {
    q->active = false;
  } else {
    *q = FakeRequest{};
    *r = MPI_REQUEST_NULL;
  }
}
// The wrappers must hand PMPI statuses of their own where the user passed MPI_STATUS(ES)_IGNORE.
bool given(const MPI_Status* s, const char* fn) {
  if (s != MPI_STATUS_IGNORE) return true;
  FAIL_CHECK(fn << " got MPI_STATUS(ES)_IGNORE: the wrapper must pass a status of its own");
  return false;
}

std::vector<int> members(MPI_Comm c) {
  if (c == MPI_COMM_WORLD) return {0, 1, 2, 3};
  if (c == MPI_COMM_SELF) return {g_world_rank};
  auto it = g_fake_comms.find(c);
  if (it != g_fake_comms.end()) return it->second;
  FAIL_CHECK("PMPI called with an unknown communicator");
  return {};
}
// The lowest free handle value (reused after a free, as in Open MPI).
template <class Map>
typename Map::key_type new_handle(Map& m, std::uintptr_t base, std::vector<int> ranks) {
  for (std::uintptr_t i = 0;; ++i) {
    const auto h = reinterpret_cast<typename Map::key_type>(base + 64 * i);
    if (!m.count(h)) {
      m[h] = std::move(ranks);
      return h;
    }
  }
}
int index_of(const std::vector<int>& v, int x) {
  auto it = std::find(v.begin(), v.end(), x);
  return it == v.end() ? MPI_UNDEFINED : static_cast<int>(it - v.begin());
}

}  // namespace

// ---- The fake PMPI layer: these definitions shadow libmpi's ----
extern "C" {
int PMPI_Init(int*, char***) { return MPI_SUCCESS; }
int PMPI_Finalize(void) { ++g_finalize_calls; return MPI_SUCCESS; }
int PMPI_Finalized(int* flag) { *flag = g_finalize_calls > 0; return MPI_SUCCESS; }
double PMPI_Wtime(void) { return 0.0; }
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  *newcomm = new_handle(g_fake_comms, 0x5000, members(comm));
  return MPI_SUCCESS;
}
int PMPI_Comm_split(MPI_Comm, int color, int, MPI_Comm* newcomm) {
  *newcomm = color == MPI_UNDEFINED ? MPI_COMM_NULL : new_handle(g_fake_comms, 0x5000, g_split_members);
  return MPI_SUCCESS;
}
int PMPI_Comm_free(MPI_Comm* comm) {  // also at exit (prof's own communicator): no Catch2 here
  g_fake_comms.erase(*comm);
  g_fake_remote.erase(*comm);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) { *flag = g_fake_remote.count(comm) ? 1 : 0; return MPI_SUCCESS; }
// An intercommunicator: the local group g_split_members, the remote group g_inter_remote.
int PMPI_Intercomm_create(MPI_Comm, int, MPI_Comm, int, int, MPI_Comm* newcomm) {
  *newcomm = new_handle(g_fake_comms, 0x5000, g_split_members);
  g_fake_remote[*newcomm] = g_inter_remote;
  return MPI_SUCCESS;
}
int PMPI_Comm_remote_size(MPI_Comm comm, int* size) { *size = static_cast<int>(g_fake_remote.at(comm).size()); return MPI_SUCCESS; }
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  *group = new_handle(g_fake_groups, 0x9000, g_fake_remote.at(comm));
  return MPI_SUCCESS;
}
// The union in MPI's order: the group passing high = 0 first.
int PMPI_Intercomm_merge(MPI_Comm comm, int high, MPI_Comm* newcomm) {
  std::vector<int> all = members(comm), remote = g_fake_remote.at(comm);
  if (high) all.insert(all.begin(), remote.begin(), remote.end());
  else all.insert(all.end(), remote.begin(), remote.end());
  *newcomm = new_handle(g_fake_comms, 0x5000, all);
  return MPI_SUCCESS;
}
int PMPI_Comm_rank(MPI_Comm comm, int* rank) { *rank = index_of(members(comm), g_world_rank); return MPI_SUCCESS; }
int PMPI_Comm_size(MPI_Comm comm, int* size) { *size = static_cast<int>(members(comm).size()); return MPI_SUCCESS; }
int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  *group = new_handle(g_fake_groups, 0x9000, members(comm));
  return MPI_SUCCESS;
}
int PMPI_Group_size(MPI_Group group, int* size) {
  *size = static_cast<int>(g_fake_groups.at(group).size());
  return MPI_SUCCESS;
}
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
  const std::vector<int>& from = g_fake_groups.at(group1);
  const std::vector<int>& to = g_fake_groups.at(group2);
  for (int i = 0; i < n; ++i) ranks2[i] = index_of(to, from.at(static_cast<std::size_t>(ranks1[i])));
  return MPI_SUCCESS;
}
int PMPI_Group_free(MPI_Group* group) {
  CHECK(g_fake_groups.erase(*group) == 1);
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}
int PMPI_Type_size(MPI_Datatype type, int* size) {
  *size = type == MPI_INT ? 4 : type == MPI_DOUBLE || type == MPI_UINT64_T ? 8 : type == MPI_BYTE || type == MPI_CHAR ? 1 : 0;
  if (*size) return MPI_SUCCESS;
  FAIL_CHECK("PMPI_Type_size of a datatype the tests do not use");
  return MPI_ERR_TYPE;
}
int PMPI_Get_count(const MPI_Status* status, MPI_Datatype type, int* count) {
  int size = 0;
  PMPI_Type_size(type, &size);
  const auto n = static_cast<std::size_t>(size);
  *count = n && status->_ucount % n == 0 ? static_cast<int>(status->_ucount / n) : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
int PMPI_Test_cancelled(const MPI_Status* status, int* flag) { *flag = status->_cancelled; return MPI_SUCCESS; }
int PMPI_Send(const void*, int, MPI_Datatype, int, int, MPI_Comm) { return MPI_SUCCESS; }
int PMPI_Recv(void*, int, MPI_Datatype, int source, int, MPI_Comm, MPI_Status* status) {
  if (!given(status, "PMPI_Recv")) return MPI_ERR_ARG;
  *status = source == MPI_PROC_NULL ? make_status(MPI_PROC_NULL, MPI_ANY_TAG, 0) : g_next;
  return MPI_SUCCESS;
}
int PMPI_Isend(const void*, int, MPI_Datatype, int dest, int, MPI_Comm, MPI_Request* request) {
  g_pmpi_at.push_back(g_events.size());
  if (g_fail_next) {
    g_fail_next = false;
    return MPI_ERR_OTHER;
  }
  *request = g_share_sends ? shared_request() : new_request(false, dest, false);
  return MPI_SUCCESS;
}
int PMPI_Irecv(void*, int, MPI_Datatype, int source, int, MPI_Comm, MPI_Request* request) {
  *request = new_request(true, source, false);
  return MPI_SUCCESS;
}
int PMPI_Send_init(const void*, int, MPI_Datatype, int dest, int, MPI_Comm, MPI_Request* request) {
  *request = new_request(false, dest, true);
  return MPI_SUCCESS;
}
int PMPI_Recv_init(void*, int, MPI_Datatype, int source, int, MPI_Comm, MPI_Request* request) {
  *request = new_request(true, source, true);
  return MPI_SUCCESS;
}
int PMPI_Start(MPI_Request* request) {
  g_pmpi_at.push_back(g_events.size());
  if (g_fail_next) {
    g_fail_next = false;
    return MPI_ERR_OTHER;
  }
  FakeRequest* q = fake_request(*request);
  if (!q || !q->persistent || q->active) {
    FAIL_CHECK("PMPI_Start of a request that is not an inactive persistent one");
    return MPI_ERR_REQUEST;
  }
  activate(*q);
  return MPI_SUCCESS;
}
int PMPI_Startall(int count, MPI_Request requests[]) {
  for (int i = 0; i < count; ++i) PMPI_Start(&requests[i]);
  return MPI_SUCCESS;
}
int PMPI_Request_free(MPI_Request* request) {
  if (FakeRequest* q = fake_request(*request)) *q = FakeRequest{};
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}
int PMPI_Cancel(MPI_Request* request) {
  if (FakeRequest* q = fake_request(*request)) q->cancelled = true;
  return MPI_SUCCESS;
}
int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!given(status, "PMPI_Wait")) return MPI_ERR_ARG;
  complete(request, status);
  return MPI_SUCCESS;
}
int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!given(statuses, "PMPI_Waitall")) return MPI_ERR_ARG;
  for (int i = 0; i < count; ++i) complete(&requests[i], &statuses[i]);
  return MPI_SUCCESS;
}
int PMPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!given(status, "PMPI_Waitany")) return MPI_ERR_ARG;
  *index = MPI_UNDEFINED;
  for (int i = count - 1; i >= 0; --i)
    if (pending(requests[i])) *index = i;
  if (g_waitany_pick >= 0 && g_waitany_pick < count && pending(requests[g_waitany_pick])) *index = g_waitany_pick;
  if (*index == MPI_UNDEFINED) *status = make_status(MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
  else complete(&requests[*index], status);
  return MPI_SUCCESS;
}
int PMPI_Waitsome(int count, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!given(statuses, "PMPI_Waitsome")) return MPI_ERR_ARG;
  bool any = false;
  *outcount = 0;
  for (int i = 0; i < count; ++i) {
    if (!pending(requests[i])) continue;
    any = true;
    if (g_waitsome_pick.empty() || index_of(g_waitsome_pick, i) != MPI_UNDEFINED) indices[(*outcount)++] = i;
  }
  if (!any) *outcount = MPI_UNDEFINED;
  for (int k = 0; k < *outcount; ++k) complete(&requests[indices[k]], &statuses[k]);
  return MPI_SUCCESS;
}
int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!given(status, "PMPI_Test")) return MPI_ERR_ARG;
  *flag = g_test_completes || !pending(*request);
  if (*flag) complete(request, status);
  return MPI_SUCCESS;
}
int PMPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!given(statuses, "PMPI_Testall")) return MPI_ERR_ARG;
  bool any = false;
  for (int i = 0; i < count; ++i) any = any || pending(requests[i]);
  *flag = g_test_completes || !any;
  for (int i = 0; *flag && i < count; ++i) complete(&requests[i], &statuses[i]);
  return MPI_SUCCESS;
}
// Collectives: no-ops that keep the data.
int PMPI_Barrier(MPI_Comm) { return MPI_SUCCESS; }
int PMPI_Bcast(void*, int, MPI_Datatype, int, MPI_Comm) { return MPI_SUCCESS; }
int PMPI_Gather(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm) { return MPI_SUCCESS; }
int PMPI_Scatter(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm) { return MPI_SUCCESS; }
int PMPI_Allgather(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm) { return MPI_SUCCESS; }
int PMPI_Reduce(const void*, void*, int, MPI_Datatype, MPI_Op, int, MPI_Comm) { return MPI_SUCCESS; }
int PMPI_Allreduce(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm) { return MPI_SUCCESS; }
// Non-blocking collectives: a pending send-like request of the pool (Wait completes it).
int PMPI_Iallreduce(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request* request) {
  *request = new_request(false, 0, false);
  return MPI_SUCCESS;
}
int PMPI_Ibcast(void*, int, MPI_Datatype, int, MPI_Comm, MPI_Request* request) {
  *request = new_request(false, 0, false);
  return MPI_SUCCESS;
}
}

namespace {

constexpr std::uint64_t kAll = ~std::uint64_t{0};
constexpr std::uint64_t kNoXreqtest = kAll & ~std::uint64_t{prof::config::kMpiXreqtest};

// Every test starts here: the adapter with `groups`, MPI initialised once, the fakes reset.
void start(std::uint64_t groups = kAll) {
  static bool initialised = false;
  g_config.mpi_enable_groups = groups;
  REQUIRE(prof_adapter_mpi.init() == 0);
  if (!initialised) {
    initialised = true;
    int argc = 0;
    char** argv = nullptr;
    REQUIRE(MPI_Init(&argc, &argv) == MPI_SUCCESS);
    g_world_rank = 1;
  }
  for (FakeRequest& q : g_pool) q = FakeRequest{};
  g_events.clear();
  g_begin_open = false;
  g_pmpi_at.clear();
  g_fail_next = false;
  g_next = make_status(3, 9, 12);
  g_split_members = {1, 3};
  g_test_completes = true;
  g_share_sends = false;
  g_waitany_pick = -1;
  g_waitsome_pick.clear();
}

// The request ids the adapter hands out next: ids(1), ids(2), ...
struct Ids {
  std::uint64_t base = prof::mpi::next_request_id();
  std::string operator()(int k) const { return std::to_string(base + static_cast<std::uint64_t>(k)); }
};

const char* op_name(std::uint16_t op) {
  switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER: return "BARRIER";
    case OTF2_COLLECTIVE_OP_BCAST: return "BCAST";
    case OTF2_COLLECTIVE_OP_GATHER: return "GATHER";
    case OTF2_COLLECTIVE_OP_SCATTER: return "SCATTER";
    case OTF2_COLLECTIVE_OP_ALLGATHER: return "ALLGATHER";
    case OTF2_COLLECTIVE_OP_REDUCE: return "REDUCE";
    case OTF2_COLLECTIVE_OP_ALLREDUCE: return "ALLREDUCE";
    default: return "OTHER";
  }
}
std::string show(const Ev& e) {
  std::ostringstream o;
  const auto peer = static_cast<std::int32_t>(e.a & 0xffffffffu), tag = static_cast<std::int32_t>(e.a >> 32);
  switch (e.type) {
    case RecordType::Enter: o << "Enter " << g_regions.at(e.ref); break;
    case RecordType::Leave: o << "Leave " << g_regions.at(e.ref); break;
    case RecordType::MpiSend: o << "Send c" << e.ref << " to=" << peer << " tag=" << tag << " bytes=" << e.b; break;
    case RecordType::MpiIsend: o << "Isend c" << e.ref << " to=" << peer << " tag=" << tag << " bytes=" << e.b << " req=" << e.c; break;
    case RecordType::MpiRecv: o << "Recv c" << e.ref << " from=" << peer << " tag=" << tag << " bytes=" << e.b; break;
    case RecordType::MpiIrecv: o << "Irecv c" << e.ref << " from=" << peer << " tag=" << tag << " bytes=" << e.b << " req=" << e.c; break;
    case RecordType::MpiIsendComplete: o << "IsendComplete req=" << e.a; break;
    case RecordType::MpiIrecvRequest: o << "IrecvRequest req=" << e.a; break;
    case RecordType::MpiRequestTest: o << "RequestTest req=" << e.a; break;
    case RecordType::MpiRequestCancelled: o << "RequestCancelled req=" << e.a; break;
    case RecordType::MpiCollectiveBegin: o << "CollBegin"; break;
    case RecordType::MpiCollectiveEnd:
      o << "CollEnd c" << e.ref << ' ' << op_name(e.aux) << " root=";
      if (e.a == OTF2_UNDEFINED_UINT32) o << "none";
      else o << e.a;
      o << " sent=" << e.b << " recv=" << e.c;
      break;
    case RecordType::NbCollRequest: o << "NbCollRequest req=" << e.a; break;
    case RecordType::NbCollComplete:
      o << "NbCollComplete c" << e.ref << ' ' << op_name(e.aux) << " root=";
      if (e.a == OTF2_UNDEFINED_UINT32) o << "none";
      else o << e.a;
      o << " sent=" << e.b << " recv=" << e.c << " req=" << e.d;
      break;
    default: o << "record " << static_cast<int>(e.type);
  }
  return o.str();
}
// The events written since start(), readable; Enter/Leave only with `calls`.
V trace(bool calls = false) {
  V out;
  for (const Ev& e : g_events)
    if (calls || (e.type != RecordType::Enter && e.type != RecordType::Leave)) out.push_back(show(e));
  return out;
}

const MPI_Comm world = MPI_COMM_WORLD;  // local id 1: the first communicator MPI_Init defines

}  // namespace

TEST_CASE("rule 1: completions are found by the handles before Wait/Test set them to MPI_REQUEST_NULL", "[mpi]") {
  start();
  const Ids id;
  int buf[10] = {};
  MPI_Request r[4];
  SECTION("Isend, Wait") {
    MPI_Isend(buf, 10, MPI_INT, 2, 5, world, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    CHECK(r[0] == MPI_REQUEST_NULL);
    CHECK(trace(true) == V{"Enter MPI_Isend", "Isend c1 to=2 tag=5 bytes=40 req=" + id(1), "Leave MPI_Isend",
                           "Enter MPI_Wait", "IsendComplete req=" + id(1), "Leave MPI_Wait"});
  }
  SECTION("Waitall over sends, receives and a null handle, MPI_STATUSES_IGNORE") {
    MPI_Isend(buf, 10, MPI_INT, 2, 5, world, &r[0]);
    g_next = make_status(3, 6, 24);
    MPI_Irecv(buf, 10, MPI_INT, 3, 6, world, &r[1]);
    r[2] = MPI_REQUEST_NULL;
    MPI_Isend(buf, 1, MPI_DOUBLE, 0, 7, world, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    for (MPI_Request q : r) CHECK(q == MPI_REQUEST_NULL);
    CHECK(trace() == V{"Isend c1 to=2 tag=5 bytes=40 req=" + id(1), "IrecvRequest req=" + id(2),
                       "Isend c1 to=0 tag=7 bytes=8 req=" + id(3), "IsendComplete req=" + id(1),
                       "Irecv c1 from=3 tag=6 bytes=24 req=" + id(2), "IsendComplete req=" + id(3)});
  }
  SECTION("Waitany") {
    MPI_Isend(buf, 1, MPI_INT, 2, 5, world, &r[0]);
    MPI_Irecv(buf, 10, MPI_INT, 3, 9, world, &r[1]);
    int index = -1;
    g_waitany_pick = 1;
    MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
    CHECK(index == 1);
    MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
    CHECK(index == 0);
    MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
    CHECK(index == MPI_UNDEFINED);
    CHECK(trace() == V{"Isend c1 to=2 tag=5 bytes=4 req=" + id(1), "IrecvRequest req=" + id(2),
                       "Irecv c1 from=3 tag=9 bytes=12 req=" + id(2), "IsendComplete req=" + id(1)});
  }
  SECTION("Waitsome") {
    for (int i = 0; i < 3; ++i) MPI_Isend(buf, 1, MPI_INT, i, i, world, &r[i]);
    int out = 0, indices[3] = {};
    g_waitsome_pick = {0, 2};
    MPI_Waitsome(3, r, &out, indices, MPI_STATUSES_IGNORE);
    CHECK(out == 2);
    g_waitsome_pick.clear();
    MPI_Waitsome(3, r, &out, indices, MPI_STATUSES_IGNORE);
    CHECK(out == 1);
    CHECK(trace() == V{"Isend c1 to=0 tag=0 bytes=4 req=" + id(1), "Isend c1 to=1 tag=1 bytes=4 req=" + id(2),
                       "Isend c1 to=2 tag=2 bytes=4 req=" + id(3), "IsendComplete req=" + id(1),
                       "IsendComplete req=" + id(3), "IsendComplete req=" + id(2)});
  }
  SECTION("Testall, Test") {
    start(kNoXreqtest);
    MPI_Irecv(buf, 10, MPI_INT, 3, 9, world, &r[0]);
    MPI_Isend(buf, 2, MPI_INT, 2, 4, world, &r[1]);
    int flag = -1;
    g_test_completes = false;
    MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
    CHECK(flag == 0);
    g_test_completes = true;
    MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
    CHECK(flag == 1);
    MPI_Isend(buf, 3, MPI_INT, 1, 8, world, &r[2]);
    MPI_Test(&r[2], &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 1);
    CHECK(r[2] == MPI_REQUEST_NULL);
    CHECK(trace() == V{"IrecvRequest req=" + id(1), "Isend c1 to=2 tag=4 bytes=8 req=" + id(2),
                       "Irecv c1 from=3 tag=9 bytes=12 req=" + id(1), "IsendComplete req=" + id(2),
                       "Isend c1 to=1 tag=8 bytes=12 req=" + id(3), "IsendComplete req=" + id(3)});
  }
}

TEST_CASE("rule 2: MPI_STATUS_IGNORE is replaced, so receives learn sender, tag and size", "[mpi]") {
  start();
  const Ids id;
  char buf[64];
  g_next = make_status(2, 77, 48);
  SECTION("Recv from MPI_ANY_SOURCE, MPI_ANY_TAG") {
    MPI_Recv(buf, 64, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, world, MPI_STATUS_IGNORE);
    CHECK(trace() == V{"Recv c1 from=2 tag=77 bytes=48"});
  }
  SECTION("Irecv from MPI_ANY_SOURCE, MPI_ANY_TAG, Wait") {
    MPI_Request r;
    MPI_Irecv(buf, 64, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, world, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(trace() == V{"IrecvRequest req=" + id(1), "Irecv c1 from=2 tag=77 bytes=48 req=" + id(1)});
  }
  SECTION("a status of the user's gets the same") {
    MPI_Status s{};
    MPI_Recv(buf, 16, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, world, &s);
    CHECK(s.MPI_SOURCE == 2);
    CHECK(trace() == V{"Recv c1 from=2 tag=77 bytes=48"});
  }
}

TEST_CASE("rule 3: a reused request handle gets a new request id", "[mpi]") {
  start();
  const Ids id;
  int buf[4] = {};
  MPI_Request a, b, c;
  SECTION("one handle for two active sends: completions take the oldest") {
    g_share_sends = true;
    MPI_Isend(buf, 1, MPI_INT, 1, 0, world, &a);
    MPI_Isend(buf, 2, MPI_INT, 2, 0, world, &b);
    REQUIRE(a == b);
    MPI_Wait(&a, MPI_STATUS_IGNORE);
    MPI_Wait(&b, MPI_STATUS_IGNORE);
    CHECK(trace() == V{"Isend c1 to=1 tag=0 bytes=4 req=" + id(1), "Isend c1 to=2 tag=0 bytes=8 req=" + id(2),
                       "IsendComplete req=" + id(1), "IsendComplete req=" + id(2)});
  }
  SECTION("Isend, Wait, Isend, Test, Irecv, Wait on one handle value") {
    MPI_Isend(buf, 4, MPI_INT, 1, 0, world, &a);
    const MPI_Request first = a;
    MPI_Wait(&a, MPI_STATUS_IGNORE);
    MPI_Wait(&a, MPI_STATUS_IGNORE);  // now MPI_REQUEST_NULL: nothing
    MPI_Isend(buf, 2, MPI_INT, 3, 1, world, &b);
    REQUIRE(b == first);  // the fake reuses handle values, as Open MPI does
    int flag = 0;
    MPI_Test(&b, &flag, MPI_STATUS_IGNORE);
    MPI_Irecv(buf, 4, MPI_INT, 3, 9, world, &c);
    REQUIRE(c == first);
    MPI_Wait(&c, MPI_STATUS_IGNORE);
    CHECK(trace() == V{"Isend c1 to=1 tag=0 bytes=16 req=" + id(1), "IsendComplete req=" + id(1),
                       "Isend c1 to=3 tag=1 bytes=8 req=" + id(2), "IsendComplete req=" + id(2),
                       "IrecvRequest req=" + id(3), "Irecv c1 from=3 tag=9 bytes=12 req=" + id(3)});
  }
}

TEST_CASE("rule 4: MPI_PROC_NULL peers give no message events; zero-byte messages do", "[mpi]") {
  start();
  int buf[1] = {};
  MPI_Request r;
  SECTION("MPI_PROC_NULL") {
    MPI_Send(buf, 1, MPI_INT, MPI_PROC_NULL, 0, world);
    MPI_Isend(buf, 1, MPI_INT, MPI_PROC_NULL, 0, world, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Recv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, world, MPI_STATUS_IGNORE);
    MPI_Irecv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, world, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(trace(true) == V{"Enter MPI_Send", "Leave MPI_Send", "Enter MPI_Isend", "Leave MPI_Isend", "Enter MPI_Wait",
                           "Leave MPI_Wait", "Enter MPI_Recv", "Leave MPI_Recv", "Enter MPI_Irecv", "Leave MPI_Irecv",
                           "Enter MPI_Wait", "Leave MPI_Wait"});
  }
  SECTION("zero bytes") {
    const Ids id;
    g_next = make_status(2, 3, 0);
    MPI_Send(buf, 0, MPI_INT, 2, 3, world);
    MPI_Recv(buf, 0, MPI_INT, 2, 3, world, MPI_STATUS_IGNORE);
    MPI_Isend(buf, 0, MPI_INT, 2, 3, world, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(trace(true) == V{"Enter MPI_Send", "Send c1 to=2 tag=3 bytes=0", "Leave MPI_Send", "Enter MPI_Recv",
                           "Recv c1 from=2 tag=3 bytes=0", "Leave MPI_Recv", "Enter MPI_Isend",
                           "Isend c1 to=2 tag=3 bytes=0 req=" + id(1), "Leave MPI_Isend", "Enter MPI_Wait",
                           "IsendComplete req=" + id(1), "Leave MPI_Wait"});
  }
}

TEST_CASE("rule 5: persistent requests get a new id at every start; freeing an active one completes it", "[mpi]") {
  start();
  const Ids id;
  double buf[3] = {};
  MPI_Request s, r;
  MPI_Send_init(buf, 3, MPI_DOUBLE, 2, 7, world, &s);
  SECTION("Start, Wait, Start, Wait, free") {
    MPI_Start(&s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    CHECK(s != MPI_REQUEST_NULL);  // persistent: the handle stays
    MPI_Start(&s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Request_free(&s);  // inactive: nothing
    CHECK(trace() == V{"Isend c1 to=2 tag=7 bytes=24 req=" + id(1), "IsendComplete req=" + id(1),
                       "Isend c1 to=2 tag=7 bytes=24 req=" + id(2), "IsendComplete req=" + id(2)});
  }
  SECTION("Startall, Waitall, twice") {
    g_next = make_status(1, 8, 16);
    MPI_Recv_init(buf, 3, MPI_DOUBLE, MPI_ANY_SOURCE, 8, world, &r);
    MPI_Request both[2] = {s, r};
    for (int round = 0; round < 2; ++round) {
      MPI_Startall(2, both);
      MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
    }
    MPI_Request_free(&both[0]);
    MPI_Request_free(&both[1]);
    CHECK(trace() == V{"Isend c1 to=2 tag=7 bytes=24 req=" + id(1), "IrecvRequest req=" + id(2),
                       "IsendComplete req=" + id(1), "Irecv c1 from=1 tag=8 bytes=16 req=" + id(2),
                       "Isend c1 to=2 tag=7 bytes=24 req=" + id(3), "IrecvRequest req=" + id(4),
                       "IsendComplete req=" + id(3), "Irecv c1 from=1 tag=8 bytes=16 req=" + id(4)});
  }
  SECTION("MPI_Request_free of active requests") {
    MPI_Recv_init(buf, 3, MPI_DOUBLE, 1, 8, world, &r);
    MPI_Start(&s);
    MPI_Request_free(&s);
    CHECK(s == MPI_REQUEST_NULL);
    MPI_Start(&r);
    MPI_Request_free(&r);
    CHECK(trace(true) == V{"Enter MPI_Send_init", "Leave MPI_Send_init", "Enter MPI_Recv_init", "Leave MPI_Recv_init", "Enter MPI_Start",
                           "Isend c1 to=2 tag=7 bytes=24 req=" + id(1), "Leave MPI_Start", "Enter MPI_Request_free",
                           "IsendComplete req=" + id(1), "Leave MPI_Request_free", "Enter MPI_Start",
                           "IrecvRequest req=" + id(2), "Leave MPI_Start", "Enter MPI_Request_free",
                           "RequestCancelled req=" + id(2), "Leave MPI_Request_free"});
  }
}

TEST_CASE("rule 14: a send's start event comes before its PMPI call; a failed call cancels it", "[mpi]") {
  // Stamped after the call returned, a receive on another rank could precede its send in the
  // trace (negative transfer times in late-sender analysis and viewers' message lines).
  start();
  const Ids id;
  int buf[4] = {};
  MPI_Request r, s;
  SECTION("MPI_Isend") {
    MPI_Isend(buf, 4, MPI_INT, 2, 5, world, &r);
    CHECK(trace(true) == V{"Enter MPI_Isend", "Isend c1 to=2 tag=5 bytes=16 req=" + id(1), "Leave MPI_Isend"});
    CHECK(g_pmpi_at == std::vector<std::size_t>{2});  // Enter and Isend written when PMPI_Isend runs
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(trace() == V{"Isend c1 to=2 tag=5 bytes=16 req=" + id(1), "IsendComplete req=" + id(1)});
  }
  SECTION("MPI_Start of a persistent send") {
    MPI_Send_init(buf, 4, MPI_INT, 2, 5, world, &s);
    MPI_Start(&s);
    CHECK(g_pmpi_at == std::vector<std::size_t>{4});  // Enter/Leave Send_init, Enter Start, Isend
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Request_free(&s);
    CHECK(trace() == V{"Isend c1 to=2 tag=5 bytes=16 req=" + id(1), "IsendComplete req=" + id(1)});
  }
  SECTION("a failed MPI_Isend") {
    g_fail_next = true;
    CHECK(MPI_Isend(buf, 4, MPI_INT, 2, 5, world, &r) == MPI_ERR_OTHER);
    CHECK(trace() == V{"Isend c1 to=2 tag=5 bytes=16 req=" + id(1), "RequestCancelled req=" + id(1)});
  }
  SECTION("a failed MPI_Start: the request is inactive again") {
    MPI_Send_init(buf, 4, MPI_INT, 2, 5, world, &s);
    g_fail_next = true;
    CHECK(MPI_Start(&s) == MPI_ERR_OTHER);
    MPI_Request_free(&s);  // inactive: no completion
    CHECK(trace() == V{"Isend c1 to=2 tag=5 bytes=16 req=" + id(1), "RequestCancelled req=" + id(1)});
  }
}

TEST_CASE("rule 6: a cancelled receive ends in MpiRequestCancelled, not MpiIrecv", "[mpi]") {
  start();
  const Ids id;
  int buf[2] = {};
  MPI_Request r;
  MPI_Irecv(buf, 2, MPI_INT, 3, 4, world, &r);
  MPI_Cancel(&r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK(r == MPI_REQUEST_NULL);
  CHECK(trace() == V{"IrecvRequest req=" + id(1), "RequestCancelled req=" + id(1)});
}

TEST_CASE("rule 7: collectives write Begin/End with the root and the bytes of semantics.cpp", "[mpi]") {
  start();  // this process is rank 1 of MPI_COMM_WORLD's 4
  int buf[40] = {};
  double d[3] = {};
  SECTION("Barrier") {
    MPI_Barrier(world);
    CHECK(trace(true) == V{"Enter MPI_Barrier", "CollBegin", "CollEnd c1 BARRIER root=none sent=0 recv=0", "Leave MPI_Barrier"});
  }
  SECTION("Bcast at the root and elsewhere") {
    MPI_Bcast(buf, 10, MPI_INT, 1, world);
    MPI_Bcast(buf, 10, MPI_INT, 0, world);
    CHECK(trace() == V{"CollBegin", "CollEnd c1 BCAST root=1 sent=160 recv=40", "CollBegin",
                       "CollEnd c1 BCAST root=0 sent=0 recv=40"});
  }
  SECTION("Gather at the root, in place at the root, elsewhere") {
    MPI_Gather(buf, 5, MPI_INT, buf, 5, MPI_INT, 1, world);
    MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 5, MPI_INT, 1, world);
    MPI_Gather(buf, 5, MPI_INT, nullptr, 0, MPI_DATATYPE_NULL, 0, world);
    CHECK(trace() == V{"CollBegin", "CollEnd c1 GATHER root=1 sent=20 recv=80", "CollBegin",
                       "CollEnd c1 GATHER root=1 sent=20 recv=80", "CollBegin", "CollEnd c1 GATHER root=0 sent=20 recv=0"});
  }
  SECTION("Scatter at the root and elsewhere") {
    MPI_Scatter(buf, 2, MPI_INT, buf, 2, MPI_INT, 1, world);
    MPI_Scatter(nullptr, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, 0, world);
    CHECK(trace() == V{"CollBegin", "CollEnd c1 SCATTER root=1 sent=32 recv=8", "CollBegin",
                       "CollEnd c1 SCATTER root=0 sent=0 recv=8"});
  }
  SECTION("Reduce elsewhere and at the root, Allreduce") {
    MPI_Reduce(d, d, 3, MPI_DOUBLE, MPI_SUM, 0, world);
    MPI_Reduce(d, d, 3, MPI_DOUBLE, MPI_SUM, 1, world);
    MPI_Allreduce(MPI_IN_PLACE, buf, 2, MPI_INT, MPI_SUM, world);
    CHECK(trace() == V{"CollBegin", "CollEnd c1 REDUCE root=0 sent=24 recv=0", "CollBegin",
                       "CollEnd c1 REDUCE root=1 sent=24 recv=96", "CollBegin",
                       "CollEnd c1 ALLREDUCE root=none sent=32 recv=32"});
  }
  SECTION("Allgather, in place: the receive count") {
    MPI_Allgather(buf, 3, MPI_INT, buf, 3, MPI_INT, world);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, world);
    CHECK(trace() == V{"CollBegin", "CollEnd c1 ALLGATHER root=none sent=48 recv=48", "CollBegin",
                       "CollEnd c1 ALLGATHER root=none sent=32 recv=32"});
  }
}

TEST_CASE("rule 11: a non-blocking collective is requested at its call and completed, with root and bytes, at its Wait",
          "[mpi]") {
  start();  // rank 1 of 4
  const Ids id;
  int buf[4] = {};
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Iallreduce(MPI_IN_PLACE, buf, 2, MPI_INT, MPI_SUM, world, &r[0]);
  MPI_Ibcast(buf, 4, MPI_INT, 1, world, &r[1]);
  CHECK(trace() == V{"NbCollRequest req=" + id(1), "NbCollRequest req=" + id(2)});
  g_events.clear();
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  CHECK(trace(true) == V{"Enter MPI_Waitall", "NbCollComplete c1 ALLREDUCE root=none sent=32 recv=32 req=" + id(1),
                         "NbCollComplete c1 BCAST root=1 sent=64 recv=16 req=" + id(2), "Leave MPI_Waitall"});
}

TEST_CASE("rule 12: a request's completion is written even when the completing call's group is off", "[mpi]") {
  start(prof::config::kMpiColl);  // MPI_Wait is in p2p, which is off
  const Ids id;
  int buf[2] = {};
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Iallreduce(MPI_IN_PLACE, buf, 2, MPI_INT, MPI_SUM, world, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK(trace(true) == V{"Enter MPI_Iallreduce", "NbCollRequest req=" + id(1), "Leave MPI_Iallreduce",
                         "NbCollComplete c1 ALLREDUCE root=none sent=32 recv=32 req=" + id(1)});
}

TEST_CASE("rule 8: new communicators are defined and used; freed ones are forgotten", "[mpi]") {
  start();
  using prof::comms::Kind;
  REQUIRE(g_comms.size() >= 2);  // MPI_Init: MPI_COMM_WORLD (local id 1), MPI_COMM_SELF (2)
  CHECK(g_comms[0].kind == Kind::World);
  CHECK(g_comms[0].members == std::vector<std::uint32_t>{0, 1, 2, 3});
  CHECK(g_comms[1].kind == Kind::Self);
  const std::size_t before = g_comms.size();
  int buf = 0;
  MPI_Comm none = world, c = MPI_COMM_NULL;
  MPI_Comm_split(world, MPI_UNDEFINED, 0, &none);  // not a member: nothing to define
  CHECK(none == MPI_COMM_NULL);
  CHECK(g_comms.size() == before);
  REQUIRE(MPI_Comm_split(world, 1, 0, &c) == MPI_SUCCESS);
  REQUIRE(g_comms.size() == before + 1);
  const std::string cid = std::to_string(g_comms.size());
  CHECK(g_comms.back().kind == Kind::Mpi);
  CHECK(g_comms.back().members == std::vector<std::uint32_t>{1, 3});
  CHECK(g_comms.back().parent == 1);
  CHECK(g_fake_groups.empty());  // the groups for the translation were freed
  MPI_Send(&buf, 1, MPI_INT, 1, 4, c);
  MPI_Barrier(c);
  const MPI_Comm old = c;
  MPI_Comm_free(&c);
  CHECK(c == MPI_COMM_NULL);
  MPI_Comm stale = old;
  MPI_Send(&buf, 1, MPI_INT, 1, 4, stale);
  MPI_Barrier(stale);
  // The handle value comes back for the next communicator: a new definition, a new local id.
  g_split_members = {0, 1, 2};
  MPI_Comm again = MPI_COMM_NULL;
  MPI_Comm_split(world, 2, 0, &again);
  REQUIRE(again == old);
  REQUIRE(g_comms.size() == before + 2);
  CHECK(g_comms.back().members == std::vector<std::uint32_t>{0, 1, 2});
  const std::string cid2 = std::to_string(g_comms.size());
  MPI_Send(&buf, 1, MPI_INT, 2, 5, again);
  MPI_Comm_free(&again);
  CHECK(trace() == V{"Send c" + cid + " to=1 tag=4 bytes=4", "CollBegin", "CollEnd c" + cid + " BARRIER root=none sent=0 recv=0",
                     "Send c" + cid2 + " to=2 tag=5 bytes=4"});
}

TEST_CASE("rule 13: an intercommunicator is recorded over the union of its groups, remote ranks shifted; its roots are none",
          "[mpi]") {
  start();  // rank 1 of 4: local group {1, 3}
  using prof::comms::Kind;
  const bool local_first = GENERATE(true, false);
  // The group of the lower leader comes first: {1, 3} before {2, 0}, but {0, 2} before {1, 3}.
  g_inter_remote = local_first ? std::vector<int>{2, 0} : std::vector<int>{0, 2};
  const std::vector<std::uint32_t> all = local_first ? std::vector<std::uint32_t>{1, 3, 2, 0} : std::vector<std::uint32_t>{0, 2, 1, 3};
  const int shift = local_first ? 2 : 0;
  const std::size_t before = g_comms.size();
  MPI_Comm inter = MPI_COMM_NULL;
  REQUIRE(MPI_Intercomm_create(world, 0, world, 0, 7, &inter) == MPI_SUCCESS);
  REQUIRE(g_comms.size() == before + 1);
  CHECK(g_comms.back().kind == Kind::Mpi);
  CHECK(g_comms.back().members == all);
  CHECK(g_comms.back().parent == prof::comms::kNoComm);  // the local communicators differ per group
  CHECK(g_comms.back().name.rfind("Intercomm ", 0) == 0);
  const std::size_t comms_before = g_fake_comms.size();
  const std::string cid = std::to_string(g_comms.size());
  const Ids id;
  int buf[10] = {};
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Send(buf, 1, MPI_INT, 1, 4, inter);  // to remote rank 1
  g_next = make_status(0, 5, 8);           // from remote rank 0
  MPI_Recv(buf, 2, MPI_INT, MPI_ANY_SOURCE, 5, inter, MPI_STATUS_IGNORE);
  MPI_Isend(buf, 3, MPI_INT, 0, 6, inter, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  g_next = make_status(1, 6, 4);
  MPI_Irecv(buf, 1, MPI_INT, 1, 6, inter, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Bcast(buf, 10, MPI_INT, MPI_ROOT, inter);       // the root: to each of the 2 remote ranks
  MPI_Bcast(buf, 10, MPI_INT, MPI_PROC_NULL, inter);  // the root's group, not the root: no data
  MPI_Bcast(buf, 10, MPI_INT, 1, inter);              // from remote rank 1
  MPI_Reduce(buf, buf, 2, MPI_INT, MPI_SUM, MPI_ROOT, inter);
  MPI_Allreduce(buf, buf, 2, MPI_INT, MPI_SUM, inter);
  MPI_Ibcast(buf, 4, MPI_INT, MPI_ROOT, inter, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  const auto to = [&](int remote) { return std::to_string(remote + shift); };
  CHECK(trace() == V{"Send c" + cid + " to=" + to(1) + " tag=4 bytes=4", "Recv c" + cid + " from=" + to(0) + " tag=5 bytes=8",
                     "Isend c" + cid + " to=" + to(0) + " tag=6 bytes=12 req=" + id(1), "IsendComplete req=" + id(1),
                     "IrecvRequest req=" + id(2), "Irecv c" + cid + " from=" + to(1) + " tag=6 bytes=4 req=" + id(2),
                     "CollBegin", "CollEnd c" + cid + " BCAST root=none sent=80 recv=0",
                     "CollBegin", "CollEnd c" + cid + " BCAST root=none sent=0 recv=0",
                     "CollBegin", "CollEnd c" + cid + " BCAST root=none sent=0 recv=40",
                     "CollBegin", "CollEnd c" + cid + " REDUCE root=none sent=0 recv=16",
                     "CollBegin", "CollEnd c" + cid + " ALLREDUCE root=none sent=16 recv=16",
                     "NbCollRequest req=" + id(3), "NbCollComplete c" + cid + " BCAST root=none sent=32 recv=0 req=" + id(3)});
  CHECK(g_fake_comms.size() == comms_before);  // the merged communicator for the key was freed
  CHECK(g_fake_groups.empty());
  MPI_Comm_free(&inter);
}

TEST_CASE("rule 9: an incomplete test writes MpiRequestTest only with PROF_MPI_ENABLE_GROUPS xreqtest", "[mpi]") {
  const bool xreqtest = GENERATE(true, false);
  start(xreqtest ? kAll : kNoXreqtest);
  const Ids id;
  int buf[2] = {}, flag = -1;
  MPI_Request r;
  MPI_Irecv(buf, 2, MPI_INT, 3, 9, world, &r);
  g_test_completes = false;
  MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  CHECK(flag == 0);
  MPI_Testall(1, &r, &flag, MPI_STATUSES_IGNORE);
  CHECK(flag == 0);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  const std::string done = "Irecv c1 from=3 tag=9 bytes=12 req=" + id(1);
  if (xreqtest)
    CHECK(trace() == V{"IrecvRequest req=" + id(1), "RequestTest req=" + id(1), "RequestTest req=" + id(1), done});
  else
    CHECK(trace() == V{"IrecvRequest req=" + id(1), done});
}

TEST_CASE("rule 10: MPI_Finalize does not finalise MPI; MPI_Finalized answers true from then on", "[mpi]") {
  start();
  int flag = -1, buf = 0;
  MPI_Finalized(&flag);
  CHECK(flag == 0);
  CHECK(MPI_Finalize() == MPI_SUCCESS);
  CHECK(g_finalize_calls == 0);  // prof calls PMPI_Finalize at exit, after writing the experiment
  MPI_Finalized(&flag);
  CHECK(flag == 1);
  MPI_Send(&buf, 1, MPI_INT, 2, 1, world);  // measurement goes on
  CHECK(trace(true) == V{"Enter MPI_Finalized", "Leave MPI_Finalized", "Enter MPI_Finalize", "Leave MPI_Finalize",
                         "Enter MPI_Finalized", "Leave MPI_Finalized", "Enter MPI_Send", "Send c1 to=2 tag=1 bytes=4",
                         "Leave MPI_Send"});
}
