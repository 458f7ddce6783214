// SPDX-License-Identifier: BSD-3-Clause
// The MPI adapter's state: the wrapper invocation (Call), communicators, requests, the
// multi-process layer over PMPI, and the lifecycle around MPI_Init and MPI_Finalize.
//
// Finalisation: the unification and the collective writing of the trace need MPI, yet events
// after the user's MPI_Finalize are to be kept. So MPI_Finalize does not call PMPI_Finalize: it
// registers an exit handler (on_exit, so it runs before the handlers registered earlier) that
// writes the experiment while MPI still works and then calls PMPI_Finalize. MPI_Finalized answers
// true from the user's MPI_Finalize on.
#include "adapters/mpi/mpi_adapter.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "adapters/adapter.hpp"
#include "measurement/immortal.hpp"
#include "measurement/mpp.hpp"

namespace prof::mpi {

namespace {

std::uint64_t g_groups = 0;
MPI_Comm g_comm = MPI_COMM_NULL;  // prof's own traffic: a private duplicate of MPI_COMM_WORLD
std::uint32_t g_rank = 0, g_size = 1;
std::atomic<bool> g_user_finalized{false};
std::atomic<bool> g_aborted{false};
std::atomic<bool> g_apart{false};
Immortal<std::vector<char>> g_clock_needed;  // per rank: its clock may differ from rank 0's (another host, debug skew)  // the ranks did not all reach the end: MPI must not be finalised
std::atomic<std::uint64_t> g_next_request{1};
std::atomic<std::uint64_t> g_comm_serial{0};  // communicators this rank created as their rank 0
thread_local int t_depth = 0;                 // MPI wrappers active on this thread

// Each function's region, defined on its first recorded call (so the trace defines only the MPI
// functions the program used).
constexpr RegionId kUndefined = 0xffffffffu;
std::atomic<RegionId> g_regions[512];  // kFunctionCount <= 512 (checked in after_init)
std::mutex g_regions_mutex;

std::mutex g_comm_mutex;
Immortal<std::unordered_map<MPI_Comm, CommInfo>> g_comms;  // see immortal.hpp
// Active requests by handle. A handle may stand for several requests at once: Open MPI returns
// one shared, already completed request object for every small send that left at once. Each
// handle thus keeps a queue, and a completion takes the oldest active request of its handle.
std::mutex g_req_mutex;
Immortal<std::unordered_map<MPI_Request, std::deque<ReqInfo>>> g_requests;

std::uintptr_t this_thread() { return static_cast<std::uintptr_t>(pthread_self()); }

// The oldest active (or, with `any`, oldest) request of `req`, preferring the calling thread's
// own (a handle shared by several threads' requests completes each on its own thread); nullptr
// if none. Lock held.
ReqInfo* find_request(MPI_Request req, bool any = false) {
  auto it = g_requests->find(req);
  if (it == g_requests->end()) return nullptr;
  ReqInfo* first = nullptr;
  const std::uintptr_t me = this_thread();
  for (ReqInfo& r : it->second) {
    if (!any && !r.active) continue;
    if (r.owner == me) return &r;
    if (!first) first = &r;
  }
  return first;
}

// Removes `r` (an element of the queue of `req`). Lock held.
void erase_request(MPI_Request req, const ReqInfo* r) {
  auto it = g_requests->find(req);
  if (it == g_requests->end()) return;
  auto& q = it->second;
  for (auto i = q.begin(); i != q.end(); ++i)
    if (&*i == r) {
      q.erase(i);
      break;
    }
  if (q.empty()) g_requests->erase(it);
}

RegionId region_of(int fn) {
  RegionId r = g_regions[fn].load(std::memory_order_acquire);
  if (r != kUndefined) return r;
  std::lock_guard<std::mutex> lock(g_regions_mutex);
  r = g_regions[fn].load(std::memory_order_relaxed);
  if (r == kUndefined) {
    regions::RegionDef d;
    d.name = kFunctions[fn].name;
    d.canonical = kFunctions[fn].name;
    d.paradigm = regions::Paradigm::Mpi;
    d.role = kFunctions[fn].role;
    r = api::define_region(d);
    g_regions[fn].store(r, std::memory_order_release);
  }
  return r;
}

// The multi-process layer over PMPI on the private communicator. Sizes travel ahead of the data,
// so point-to-point messages of any size go in pieces of at most INT_MAX bytes.
class PmpiMpp : public Mpp {
 public:
  std::uint32_t rank() const override { return g_rank; }
  std::uint32_t size() const override { return g_size; }
  const char* paradigm() const override { return "MPI"; }
  bool arrive(std::string* why) override;
  bool sync_clock(std::uint64_t* local, std::int64_t* offset) override;
  bool barrier() override { return PMPI_Barrier(g_comm) == MPI_SUCCESS; }
  bool bcast(void* data, std::uint64_t bytes, std::uint32_t root) override {
    char* p = static_cast<char*>(data);
    while (bytes > 0) {
      const int n = bytes > INT_MAX ? INT_MAX : static_cast<int>(bytes);
      if (PMPI_Bcast(p, n, MPI_BYTE, static_cast<int>(root), g_comm) != MPI_SUCCESS) return false;
      p += n;
      bytes -= static_cast<std::uint64_t>(n);
    }
    return true;
  }
  bool gatherv(const void* in, std::uint64_t in_bytes, void* out, const std::uint64_t* out_bytes, std::uint32_t root) override {
    std::vector<int> counts, displs;
    if (g_rank == root && !to_ints(out_bytes, &counts, &displs)) return false;
    if (in_bytes > INT_MAX) return false;
    return PMPI_Gatherv(in, static_cast<int>(in_bytes), MPI_BYTE, out, counts.data(), displs.data(), MPI_BYTE,
                        static_cast<int>(root), g_comm) == MPI_SUCCESS;
  }
  bool scatterv(const void* in, const std::uint64_t* in_bytes, void* out, std::uint64_t out_bytes, std::uint32_t root) override {
    std::vector<int> counts, displs;
    if (g_rank == root && !to_ints(in_bytes, &counts, &displs)) return false;
    if (out_bytes > INT_MAX) return false;
    return PMPI_Scatterv(in, counts.data(), displs.data(), MPI_BYTE, out, static_cast<int>(out_bytes), MPI_BYTE,
                         static_cast<int>(root), g_comm) == MPI_SUCCESS;
  }
  bool send(std::uint32_t dest, const void* data, std::uint64_t bytes) override {
    if (PMPI_Send(&bytes, 1, MPI_UINT64_T, static_cast<int>(dest), kTag, g_comm) != MPI_SUCCESS) return false;
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const int n = bytes > INT_MAX ? INT_MAX : static_cast<int>(bytes);
      if (PMPI_Send(p, n, MPI_BYTE, static_cast<int>(dest), kTag, g_comm) != MPI_SUCCESS) return false;
      p += n;
      bytes -= static_cast<std::uint64_t>(n);
    }
    return true;
  }
  bool recv(std::uint32_t src, std::vector<char>* out) override {
    std::uint64_t bytes = 0;
    if (PMPI_Recv(&bytes, 1, MPI_UINT64_T, static_cast<int>(src), kTag, g_comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
    out->resize(bytes);
    char* p = out->data();
    while (bytes > 0) {
      const int n = bytes > INT_MAX ? INT_MAX : static_cast<int>(bytes);
      if (PMPI_Recv(p, n, MPI_BYTE, static_cast<int>(src), kTag, g_comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
      p += n;
      bytes -= static_cast<std::uint64_t>(n);
    }
    return true;
  }

 private:
  static constexpr int kTag = 4711;
  static constexpr int kArriveTag = 4712;
  static constexpr int kClockTag = 4713;
  bool to_ints(const std::uint64_t* bytes, std::vector<int>* counts, std::vector<int>* displs) {
    std::uint64_t at = 0;
    for (std::uint32_t r = 0; r < g_size; ++r) {
      if (bytes[r] > INT_MAX || at > INT_MAX) return false;
      counts->push_back(static_cast<int>(bytes[r]));
      displs->push_back(static_cast<int>(at));
      at += bytes[r];
    }
    return true;
  }
};
Immortal<PmpiMpp> g_mpp;

// Rank 0 measures each rank's offset where the clocks may differ: ping-pongs, the one with the
// shortest round trip wins, offset = rank 0's time at its middle - the rank's time in it.
bool PmpiMpp::sync_clock(std::uint64_t* local, std::int64_t* offset) {
  constexpr int kRounds = 8;
  *offset = 0;
  if (g_rank == 0) {
    for (std::uint32_t r = 1; r < g_size; ++r) {
      if (!(*g_clock_needed)[r]) continue;
      std::uint64_t best_rtt = ~std::uint64_t{0};
      std::int64_t best[2] = {0, 0};  // offset, and the rank's time in that round
      for (int k = 0; k < kRounds; ++k) {
        const std::uint64_t t0 = api::now();
        std::uint64_t tr = 0;
        if (PMPI_Send(&t0, 1, MPI_UINT64_T, static_cast<int>(r), kClockTag, g_comm) != MPI_SUCCESS ||
            PMPI_Recv(&tr, 1, MPI_UINT64_T, static_cast<int>(r), kClockTag, g_comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
          return false;
        const std::uint64_t t1 = api::now();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          best[0] = static_cast<std::int64_t>(t0 + (t1 - t0) / 2) - static_cast<std::int64_t>(tr);
          best[1] = static_cast<std::int64_t>(tr);
        }
      }
      if (PMPI_Send(best, 2, MPI_INT64_T, static_cast<int>(r), kClockTag, g_comm) != MPI_SUCCESS) return false;
    }
  } else if ((*g_clock_needed)[g_rank]) {
    for (int k = 0; k < kRounds; ++k) {
      std::uint64_t t0 = 0;
      if (PMPI_Recv(&t0, 1, MPI_UINT64_T, 0, kClockTag, g_comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
      const std::uint64_t tr = api::now();
      if (PMPI_Send(&tr, 1, MPI_UINT64_T, 0, kClockTag, g_comm) != MPI_SUCCESS) return false;
    }
    std::int64_t best[2] = {0, 0};
    if (PMPI_Recv(best, 2, MPI_INT64_T, 0, kClockTag, g_comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
    *offset = best[0];
    *local = static_cast<std::uint64_t>(best[1]);  // the offset holds at the time it was measured
    return true;
  }
  *local = api::now();
  return true;
}

// Whether all ranks are here for the write-out, decided by rank 0 alone, so that every rank acts
// on the same answer: each rank sends rank 0 its arrival; rank 0 waits up to the timeout for all
// of them and sends each rank that arrived its verdict (go only when all did). The others wait for
// the verdict twice as long as rank 0 can take, so a live rank 0's answer always reaches them; a
// rank that hears nothing (rank 0 died, or this rank came after rank 0 gave up) writes alone.
// Stopped by a signal before it starts (mpirun is ending the job), a rank does not take part at
// all: no MPI from a signal handler, no waiting. The buffers of messages that may still arrive
// after a rank gave up are static: MPI may write them after this function returned.
bool PmpiMpp::arrive(std::string* why) {
  if (g_aborted.load()) {
    *why = "MPI_Abort was called";
    g_apart.store(true);
    return false;
  }
  if (api::stop_requested()) {
    *why = "the job is being stopped (a signal) before this rank's write-out";
    g_apart.store(true);
    return false;
  }
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (finalized || g_comm == MPI_COMM_NULL) {
    *why = "MPI is no longer usable";
    return false;
  }
  static int s_me = 0, s_verdict = 0;
  static std::vector<int>* s_who = new std::vector<int>;  // never freed: late messages may land
  static std::vector<int>* s_go = new std::vector<int>;
  const std::uint64_t limit = api::values().mpi_finalize_timeout;
  const double start = PMPI_Wtime();
  bool urgent = false;
  std::string missing;
  bool go = false;
  // Polls `req` until done, the deadline, or a stop (then 0.3 s more); true when done.
  auto wait = [&](MPI_Request* req, double seconds) {
    double deadline = start + seconds;
    for (int done = 0;;) {
      PMPI_Test(req, &done, MPI_STATUS_IGNORE);
      const double now = PMPI_Wtime();
      if (done) return true;
      if (now > deadline) return false;
      if (!urgent && api::stop_requested()) {
        urgent = true;
        deadline = std::min(deadline, now + 0.3);
      }
      ::usleep(1000);
    }
  };
  if (g_rank == 0) {
    s_who->assign(g_size, 0);
    s_go->assign(g_size, 0);
    std::vector<MPI_Request> arrivals(g_size, MPI_REQUEST_NULL);
    for (std::uint32_t r = 1; r < g_size; ++r)
      PMPI_Irecv(&(*s_who)[r], 1, MPI_INT, static_cast<int>(r), kArriveTag, g_comm, &arrivals[r]);
    std::vector<char> arrived(g_size, 0);
    arrived[0] = 1;
    const double deadline = start + static_cast<double>(limit);
    for (;;) {
      bool all = true;
      for (std::uint32_t r = 1; r < g_size; ++r) {
        if (arrived[r]) continue;
        int done = 0;
        PMPI_Test(&arrivals[r], &done, MPI_STATUS_IGNORE);
        arrived[r] = done ? 1 : 0;
        all = all && done;
      }
      const double now = PMPI_Wtime();
      if (all || now > deadline) {
        go = all;
        break;
      }
      if (!urgent && api::stop_requested()) urgent = true;
      if (urgent) break;  // the job is being stopped: decide now
      ::usleep(1000);
    }
    for (std::uint32_t r = 1; r < g_size; ++r) {
      if (!arrived[r]) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        continue;
      }
      (*s_go)[r] = go ? 1 : 0;
      MPI_Request req = MPI_REQUEST_NULL;
      PMPI_Isend(&(*s_go)[r], 1, MPI_INT, static_cast<int>(r), kArriveTag + 10, g_comm, &req);
      if (go) PMPI_Wait(&req, MPI_STATUS_IGNORE);
      else PMPI_Request_free(&req);
    }
  } else {
    s_me = static_cast<int>(g_rank);
    MPI_Request sent = MPI_REQUEST_NULL, verdict = MPI_REQUEST_NULL;
    PMPI_Isend(&s_me, 1, MPI_INT, 0, kArriveTag, g_comm, &sent);
    PMPI_Irecv(&s_verdict, 1, MPI_INT, 0, kArriveTag + 10, g_comm, &verdict);
    if (wait(&verdict, 2.0 * static_cast<double>(limit) + 1.0)) {
      go = s_verdict == 1;
      PMPI_Wait(&sent, MPI_STATUS_IGNORE);
      if (!go) missing = "?";
    } else {
      missing = "0?";
    }
  }
  if (go) return true;
  g_apart.store(true);
  char waited[32];
  std::snprintf(waited, sizeof waited, "%.1f", PMPI_Wtime() - start);
  if (g_rank == 0)
    *why = "rank(s) " + missing + " did not reach the end of the measurement; waited " + waited + " s" +
           (urgent ? " (the job is being stopped)" : "") + ", PROF_MPI_FINALIZE_TIMEOUT=" + std::to_string(limit);
  else if (missing == "?")
    *why = "rank 0 reports that some rank did not reach the end of the measurement (rank 0 names it)";
  else
    *why = std::string("no word from rank 0 within ") + waited + " s (it stopped, or gave up before this rank arrived)" +
           (urgent ? "; the job is being stopped" : "") + ", PROF_MPI_FINALIZE_TIMEOUT=" + std::to_string(limit);
  return false;
}

// The user's MPI_Finalize happened: at exit, write the experiment, then finalise MPI.
void finalize_at_exit(int status, void*) {
  api::finalize(status);
  int finalized = 0;
  PMPI_Finalized(&finalized);
  // Without all ranks, PMPI_Finalize could block on the missing ones (or trip over prof's pending
  // arrival requests): the process ends without it, as its failed job does anyway.
  if (!finalized && !g_apart.load()) {
    if (g_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_comm);
    PMPI_Finalize();
  }
}

// Every rank must measure with the same configuration (Open MPI forwards only the variables
// named with `mpirun -x` to other nodes). Rank 0's effective configuration is compared with each
// rank's; any difference stops the job with one line per differing rank.
void check_configuration() {
  std::string mine = api::effective_config();
  std::uint64_t n = mine.size();
  PMPI_Bcast(&n, 1, MPI_UINT64_T, 0, g_comm);
  std::string root(n, '\0');
  if (g_rank == 0) root = mine;
  PMPI_Bcast(root.data(), static_cast<int>(n), MPI_CHAR, 0, g_comm);
  int differs = 0;
  if (root != mine) {
    differs = 1;
    // The first differing line names the variable.
    std::size_t a = 0, b = 0;
    while (a < root.size() && b < mine.size()) {
      const std::size_t ea = root.find('\n', a), eb = mine.find('\n', b);
      const std::string la = root.substr(a, ea - a), lb = mine.substr(b, eb - b);
      if (la != lb) {
        const std::string name = lb.substr(0, lb.find('='));
        const std::string text = name + " is " + lb.substr(lb.find('=') + 1) + " on this rank but " +
                                 la.substr(la.find('=') + 1) + " on rank 0: the ranks' environments differ; " +
                                 "pass the variable to every rank (mpirun -x " + name + ") or set it in the job script";
        api::error(text.c_str());
        break;
      }
      if (ea == std::string::npos || eb == std::string::npos) break;
      a = ea + 1;
      b = eb + 1;
    }
    if (a >= root.size() || b >= mine.size()) {  // one is a prefix of the other: a variable more or less
      const std::string& longer = root.size() > mine.size() ? root : mine;
      const std::string rest = longer.substr(std::min(a, b));
      const std::string text = "the effective configuration differs from rank 0's at '" + rest.substr(0, rest.find('\n')) +
                               "': the ranks run different builds of prof or their environments differ; give every rank "
                               "the same PROF_* variables (mpirun -x NAME)";
      api::error(text.c_str());
    }
  }
  int any = 0;
  PMPI_Allreduce(&differs, &any, 1, MPI_INT, MPI_MAX, g_comm);
  if (any) {
    if (g_rank == 0)
      api::error("the measurement configuration differs between ranks (see the lines above); the job stops before its work");
    PMPI_Finalize();
    _exit(1);
  }
}

comms::CommId define_world_comm(MPI_Comm comm, comms::Kind kind, const char* name) {
  comms::CommDef d;
  d.kind = kind;
  d.name = name;
  if (kind == comms::Kind::World)
    for (std::uint32_t r = 0; r < g_size; ++r) d.members.push_back(r);
  const comms::CommId id = api::define_comm(d);
  std::lock_guard<std::mutex> lock(g_comm_mutex);
  (*g_comms)[comm] = CommInfo{id, false, 0};
  return id;
}

int adapter_init() {
  *g_comms, *g_requests, *g_clock_needed, *g_mpp;  // built here, once (immortal.hpp)
  for (auto& r : g_regions) r.store(kUndefined, std::memory_order_relaxed);
  g_groups = api::values().mpi_enable_groups;
  // Threads the MPI library starts for itself (Open MPI's progress thread in libopen-pal, PMIx's
  // in libpmix, UCX's async thread, ...) get no location and no create/begin/end events; one that
  // runs measured code gets its location at its first event, as any thread prof did not see start.
  for (const char* lib : {"libmpi.so", "libmpi_", "libopen-pal.so", "libopen-rte.so", "libpmix.so", "mca_",
                          "libucs.so", "libucp.so", "libuct.so", "libfabric.so", "libpsm", "libhwloc.so",
                          "libevent", "libmpich", "libmpl.so", "libhcoll", "libibverbs.so", "librdmacm.so"})
    api::ignore_threads_of(lib);
  // The experiment directory and the archive wait for MPI_Init (rank 0 chooses the directory).
  api::defer_ready();
  return 0;
}

}  // namespace

bool enabled(std::uint64_t g) { return (g_groups & g) != 0; }

int call_depth() { return t_depth; }

Call::Call(int fn) : fn_(fn) {
  outer_ = t_depth++ == 0;
  if (!outer_ || !(g_groups & kFunctions[fn].group)) return;
  Location* loc = api::acquire();
  if (!loc) return;
  if (api::recording(loc)) {
    region_ = region_of(fn);
    api::enter(loc, region_);
    on_ = true;
  }
  api::release(loc);
}

Call::~Call() {
  --t_depth;
  if (!on_) return;
  if (Location* loc = api::acquire()) {
    api::leave(loc, region_);
    api::release(loc);
  }
}

void Call::event(RecordType type, std::uint32_t ref, std::uint16_t aux, Payload a, Payload b, unsigned slots) const {
  if (on_) completion(type, ref, aux, a, b, slots);
}

void Call::completion(RecordType type, std::uint32_t ref, std::uint16_t aux, Payload a, Payload b, unsigned slots) const {
  if (Location* loc = api::acquire()) {
    if (!api::recording(loc)) {
      api::release(loc);
      return;
    }
    const Payload p[2] = {a, b};
    api::event(loc, api::now(), type, ref, aux, p, slots);
    // The profile's bytes_sent/bytes_received of this call's path.
    switch (type) {
      case RecordType::MpiSend: case RecordType::MpiIsend: api::add_bytes(loc, a.b, 0); break;
      case RecordType::MpiRecv: case RecordType::MpiIrecv: api::add_bytes(loc, 0, a.b); break;
      case RecordType::MpiCollectiveEnd: case RecordType::NbCollComplete: api::add_bytes(loc, a.b, b.a); break;
      default: break;
    }
    api::release(loc);
  }
}

CommInfo comm_info(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(g_comm_mutex);
  auto it = g_comms->find(comm);
  return it == g_comms->end() ? CommInfo{} : it->second;
}

comms::CommId comm_id(MPI_Comm comm) { return comm_info(comm).id; }

namespace {
// The world ranks of `group`, in its rank order (MPI_UNDEFINED for a process outside this job's
// MPI_COMM_WORLD, e.g. one of another job joined by MPI_Comm_connect).
std::vector<int> world_ranks(MPI_Group group) {
  int size = 0;
  PMPI_Group_size(group, &size);
  MPI_Group world = MPI_GROUP_NULL;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> local(static_cast<std::size_t>(size)), global(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) local[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(group, size, local.data(), world, global.data());
  PMPI_Group_free(&world);
  return global;
}

std::vector<int> comm_world_ranks(MPI_Comm comm, bool remote) {
  MPI_Group group = MPI_GROUP_NULL;
  if (remote) PMPI_Comm_remote_group(comm, &group);
  else PMPI_Comm_group(comm, &group);
  std::vector<int> r = world_ranks(group);
  PMPI_Group_free(&group);
  return r;
}
bool all_in_world(const std::vector<int>& ranks) {
  return std::none_of(ranks.begin(), ranks.end(), [](int r) { return r == MPI_UNDEFINED; });
}
}  // namespace

void track_comm(MPI_Comm comm, MPI_Comm parent) {
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  CommInfo info;
  info.inter = inter != 0;
  std::vector<int> members = comm_world_ranks(comm, false);
  // An intercommunicator is recorded as one communicator over the union of its two groups, the
  // group of the lower leader (world rank of its rank 0) first, so that OTF2 readers that know no
  // InterComm definitions match its messages and collectives: remote ranks are shifted by the
  // size of the group before them. The key is agreed over a merged intracommunicator (the same
  // rank order) that lives only for that broadcast.
  MPI_Comm agree = comm;
  if (info.inter) {
    std::vector<int> remote = comm_world_ranks(comm, true);
    // A group outside this job (connect/accept): both sides see it so, and neither tracks it.
    if (!all_in_world(members) || !all_in_world(remote) || members.empty() || remote.empty()) return;
    const bool first = members.front() < remote.front();
    info.remote_offset = first ? static_cast<int>(members.size()) : 0;
    if (first) members.insert(members.end(), remote.begin(), remote.end());
    else members.insert(members.begin(), remote.begin(), remote.end());
    if (PMPI_Intercomm_merge(comm, first ? 0 : 1, &agree) != MPI_SUCCESS) return;
  } else if (!all_in_world(members)) {
    return;
  }
  // The key: the world rank of the communicator's rank 0 and that rank's creation counter,
  // agreed by a broadcast on the new communicator itself (a collective: it cannot match any
  // point-to-point receive of the user).
  int rank = 0;
  PMPI_Comm_rank(agree, &rank);
  std::uint64_t key[2] = {g_rank, 0};
  if (rank == 0) key[1] = ++g_comm_serial;
  PMPI_Bcast(key, 2, MPI_UINT64_T, 0, agree);
  if (agree != comm) PMPI_Comm_free(&agree);
  comms::CommDef d;
  d.kind = comms::Kind::Mpi;
  d.key_rank = static_cast<std::uint32_t>(key[0]);
  d.key_serial = key[1];
  d.name = std::string(info.inter ? "Intercomm " : "Comm ") + std::to_string(key[0]) + "." + std::to_string(key[1]);
  // The parent: what the communicator was made from, if all its members share it (an
  // intercommunicator from MPI_Intercomm_create has a different local communicator per group).
  const CommInfo p = parent == MPI_COMM_NULL ? CommInfo{} : comm_info(parent);
  d.parent = !info.inter || p.inter ? p.id : comms::kNoComm;
  d.members.assign(members.begin(), members.end());
  info.id = api::define_comm(d);
  std::lock_guard<std::mutex> lock(g_comm_mutex);
  (*g_comms)[comm] = info;
}

void untrack_comm(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(g_comm_mutex);
  g_comms->erase(comm);
}

std::uint64_t next_request_id() { return g_next_request.fetch_add(1); }

void track_request(MPI_Request req, const ReqInfo& info) {
  if (req == MPI_REQUEST_NULL) return;
  std::lock_guard<std::mutex> lock(g_req_mutex);
  (*g_requests)[req].push_back(info);
  (*g_requests)[req].back().owner = this_thread();
}

void write_start(const Call& call, const ReqInfo& info) {
  if (!info.recorded) return;
  if (info.kind == ReqKind::Send)
    call.event(RecordType::MpiIsend, info.comm, 0,
               {static_cast<std::uint32_t>(recorded_peer(info.peer, info.peer_offset)) |
                    static_cast<std::uint64_t>(static_cast<std::uint32_t>(info.tag)) << 32,
                info.bytes},
               {info.id, 0}, 2);
  else if (info.kind == ReqKind::Recv)
    call.event(RecordType::MpiIrecvRequest, 0, 0, {info.id, 0});
  else
    call.event(RecordType::NbCollRequest, 0, 0, {info.id, 0});
}

void start_request(const Call& call, MPI_Request req) {
  ReqInfo copy;
  {
    std::lock_guard<std::mutex> lock(g_req_mutex);
    ReqInfo* r = find_request(req, true);
    if (!r || !r->persistent) return;
    r->id = next_request_id();
    r->active = true;
    r->cancelled = false;
    r->owner = this_thread();
    r->recorded = call.on() && r->comm != comms::kNoComm && r->peer != MPI_PROC_NULL;
    copy = *r;
  }
  write_start(call, copy);
}

void unstart_request(const Call& call, MPI_Request req) {
  ReqInfo copy;
  {
    std::lock_guard<std::mutex> lock(g_req_mutex);
    ReqInfo* r = find_request(req, true);
    if (!r || !r->persistent || !r->active) return;
    r->active = false;
    copy = *r;
  }
  if (copy.recorded) call.completion(RecordType::MpiRequestCancelled, 0, 0, {copy.id, 0});
}

void complete_request(const Call& call, MPI_Request req, const MPI_Status& status) {
  ReqInfo r;
  {
    std::lock_guard<std::mutex> lock(g_req_mutex);
    ReqInfo* found = find_request(req);
    if (!found) return;
    r = *found;
    if (r.persistent) found->active = false;
    else erase_request(req, found);
  }
  if (!r.recorded) return;
  int cancelled = 0;
  PMPI_Test_cancelled(&status, &cancelled);
  if (cancelled) {
    call.completion(RecordType::MpiRequestCancelled, 0, 0, {r.id, 0});
  } else if (r.kind == ReqKind::Send) {
    call.completion(RecordType::MpiIsendComplete, 0, 0, {r.id, 0});
  } else if (r.kind == ReqKind::Coll) {
    const std::uint64_t root = r.peer < 0 ? 0xffffffffu : static_cast<std::uint64_t>(r.peer);
    call.completion(RecordType::NbCollComplete, r.comm, r.op, {root, r.bytes}, {r.received, r.id}, 2);
  } else {
    int count = 0;
    PMPI_Get_count(&status, MPI_BYTE, &count);
    const std::uint64_t bytes = count == MPI_UNDEFINED ? 0 : static_cast<std::uint64_t>(count);
    call.completion(RecordType::MpiIrecv, r.comm, 0,
               {static_cast<std::uint32_t>(recorded_peer(status.MPI_SOURCE, r.peer_offset)) |
                    static_cast<std::uint64_t>(static_cast<std::uint32_t>(status.MPI_TAG)) << 32,
                bytes},
               {r.id, 0}, 2);
  }
}

void test_request(const Call& call, MPI_Request req) {
  if (!enabled(config::kMpiXreqtest) || req == MPI_REQUEST_NULL) return;
  std::uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(g_req_mutex);
    const ReqInfo* r = find_request(req);
    if (!r || !r->recorded) return;
    id = r->id;
  }
  call.event(RecordType::MpiRequestTest, 0, 0, {id, 0});
}

void cancel_request(MPI_Request req) {
  std::lock_guard<std::mutex> lock(g_req_mutex);
  if (ReqInfo* r = find_request(req)) r->cancelled = true;
}

void free_request(const Call& call, MPI_Request req) {
  ReqInfo r;
  {
    std::lock_guard<std::mutex> lock(g_req_mutex);
    ReqInfo* found = find_request(req, true);
    if (!found) return;
    r = *found;
    erase_request(req, found);
  }
  // An active request freed: MPI completes it some time later, unobservably. The trace closes it
  // now, so that it is not left open (a send is complete for its sender; a receive's message is
  // unknown and its request is closed as cancelled).
  if (!r.active || !r.recorded) return;
  if (r.kind == ReqKind::Send) call.completion(RecordType::MpiIsendComplete, 0, 0, {r.id, 0});
  else if (r.kind == ReqKind::Recv) call.completion(RecordType::MpiRequestCancelled, 0, 0, {r.id, 0});
  // A freed non-blocking collective cannot be cancelled: its completion is written now.
  else call.completion(RecordType::NbCollComplete, r.comm, r.op, {r.peer < 0 ? 0xffffffffu : static_cast<std::uint64_t>(r.peer), r.bytes},
                  {r.received, r.id}, 2);
}

std::uint64_t bytes_of(int count, MPI_Datatype type) {
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

void after_init() {
  if (kFunctionCount > static_cast<int>(sizeof g_regions / sizeof g_regions[0])) {
    api::error("internal error: more MPI functions than region slots; please report it");
    return;
  }
  PMPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
  int rank = 0, size = 1;
  PMPI_Comm_rank(g_comm, &rank);
  PMPI_Comm_size(g_comm, &size);
  g_rank = static_cast<std::uint32_t>(rank);
  g_size = static_cast<std::uint32_t>(size);
  api::set_log_rank(g_rank);
  check_configuration();
  // Which ranks' clocks are to be measured: those on another host than rank 0 (one host's ranks
  // share its clock), or all with a debug skew.
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  std::vector<char> hosts(sizeof host * g_size);
  PMPI_Allgather(host, sizeof host, MPI_CHAR, hosts.data(), sizeof host, MPI_CHAR, g_comm);
  g_clock_needed->assign(g_size, 0);
  for (std::uint32_t r = 1; r < g_size; ++r)
    (*g_clock_needed)[r] = !api::values().mpi_debug_clock_skew.empty() ||
                        std::strncmp(hosts.data() + r * sizeof host, hosts.data(), sizeof host) != 0;
  std::uint64_t at = 0;
  std::int64_t offset = 0;
  if (g_mpp->sync_clock(&at, &offset)) api::add_clock_offset(at, offset);
  api::set_mpp(&*g_mpp);
  if (!api::ready(g_rank)) api::warning("this rank records nothing: the experiment could not be set up (see above)");
  define_world_comm(MPI_COMM_WORLD, comms::Kind::World, "MPI_COMM_WORLD");
  define_world_comm(MPI_COMM_SELF, comms::Kind::Self, "MPI_COMM_SELF");
}

int user_finalize() {
  if (!g_user_finalized.exchange(true)) on_exit(finalize_at_exit, nullptr);
  return MPI_SUCCESS;
}

bool user_finalized() { return g_user_finalized.load(); }

void user_abort(int errorcode) {
  g_aborted.store(true);
  api::finalize(errorcode);  // alone: arrive() answers at once that MPI_Abort was called
}

}  // namespace prof::mpi

extern "C" PROF_MPI_API const prof_adapter prof_adapter_mpi = {"mpi", &prof::mpi::adapter_init, nullptr, nullptr, nullptr};
