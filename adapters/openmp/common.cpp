// SPDX-License-Identifier: BSD-3-Clause
// The OpenMP adapter's shared part (openmp.hpp): construct regions, fork/join events, lifecycle.
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"
#include "adapters/lock_table.hpp"
#include "adapters/openmp/openmp.hpp"
#include "measurement/definitions/regions.hpp"
#include "measurement/definitions/symbols.hpp"
#include "measurement/runtime.hpp"

namespace prof::openmp {

std::uint64_t g_enabled = 0;
std::atomic<bool> g_gomp_on{false};
std::atomic<bool> g_ompt_started{false};
comms::CommId g_team_comm = comms::kNoComm;

namespace {

using regions::Role;

struct ConstructInfo {
  const char* keyword;
  Role role;
};
// Named as Score-P names them ("!$omp parallel @file.c:12"), so its users find them.
const ConstructInfo kConstructs[] = {
    {"parallel", Role::Parallel},   {"implicit barrier", Role::ImplicitBarrier}, {"barrier", Role::Barrier},
    {"for", Role::Loop},            {"sections", Role::Sections},                {"single", Role::Single},
    {"master", Role::Master},       {"critical", Role::Critical},                {"atomic", Role::Atomic},
    {"ordered", Role::Ordered},     {"task", Role::Task},                        {"create task", Role::TaskCreate},
    {"taskwait", Role::TaskWait},   {"taskgroup", Role::Taskgroup},              {"workshare", Role::Loop},
};
static_assert(sizeof kConstructs / sizeof *kConstructs == static_cast<std::size_t>(Construct::Count), "one entry per construct");

// (address, construct) → region id + 1; keys claimed by CAS, never removed.
struct Slot {
  std::atomic<std::uintptr_t> key{0};
  std::atomic<std::uint32_t> region{0};
};
constexpr std::uint32_t kSlots = 1u << 12;
Slot g_cache[kSlots];

RegionId define_construct(Construct c, const void* where, bool entry) {
  const ConstructInfo& info = kConstructs[static_cast<int>(c)];
  regions::RegionDef d;
  d.paradigm = regions::Paradigm::OpenMP;
  d.role = info.role;
  std::string file;
  int line = -1;
  // A return address's call is the instruction before it.
  const void* at = entry ? where : static_cast<const char*>(where) - 1;
  if (!where || !symbols::source_position(at, &file, &line)) line = -1;
  d.name = std::string("!$omp ") + info.keyword;
  if (line > 0) {
    const auto slash = file.rfind('/');
    d.name += " @" + (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" + std::to_string(line);
    d.file = file;
    d.begin_line = d.end_line = line;
  } else if (where) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " @%p", where);
    d.name += buf;
  }
  return regions::define(std::move(d));
}

adapters::LockTable* g_locks;

/// The calling thread's location, marked busy for the scope; loc is nullptr when no event may be
/// written (OpenMP's own threads get a location here, on their first event).
using Scope = InProf;

}  // namespace

RegionId region(Construct c, const void* where, bool entry) {
  const std::uintptr_t key = (reinterpret_cast<std::uintptr_t>(where) << 5) | static_cast<std::uintptr_t>(c);
  const auto h = static_cast<std::uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 52);
  for (std::uint32_t n = 0; n < 64; ++n) {
    Slot& s = g_cache[(h + n) & (kSlots - 1)];
    std::uintptr_t k = s.key.load(std::memory_order_acquire);
    if (k == key) {
      std::uint32_t r = s.region.load(std::memory_order_acquire);
      if (r) return r - 1;
      break;  // another thread is defining it: define (the registry finds the identical one)
    }
    if (k == 0) {
      const RegionId r = define_construct(c, where, entry);
      std::uintptr_t expected = 0;
      if (s.key.compare_exchange_strong(expected, key, std::memory_order_acq_rel)) s.region.store(r + 1, std::memory_order_release);
      return r;
    }
  }
  return define_construct(c, where, entry);
}

RegionId lock_region(LockCall call) {
  static const char* const kNames[] = {"omp_set_lock",      "omp_unset_lock",      "omp_test_lock",
                                       "omp_set_nest_lock", "omp_unset_nest_lock", "omp_test_nest_lock"};
  static_assert(sizeof kNames / sizeof *kNames == static_cast<std::size_t>(LockCall::Count), "one name per call");
  static RegionId ids[static_cast<int>(LockCall::Count)];
  static std::atomic<bool> defined[static_cast<int>(LockCall::Count)];
  const int i = static_cast<int>(call);
  if (!defined[i].load(std::memory_order_acquire)) {
    regions::RegionDef d;
    d.name = d.canonical = kNames[i];
    d.paradigm = regions::Paradigm::OpenMP;
    d.role = Role::Wrapper;
    ids[i] = regions::define(std::move(d));  // two threads at once: the same region
    defined[i].store(true, std::memory_order_release);
  }
  return ids[i];
}

bool enter(RegionId r) {
  Scope in;
  if (!in.loc) return false;
  prof::enter(in.loc, r, 0);
  return true;
}

void leave(RegionId r, Timestamp at) {
  Scope in;
  if (!in.loc) return;
  if (at) prof::leave_at(in.loc, r, 0, At{at});
  else prof::leave(in.loc, r, 0);
}

void fork(std::uint32_t threads) {
  Scope in;
  if (in.loc) event(in.loc, timer::now(), RecordType::ThreadFork, 0, threads);
}

void join() {
  Scope in;
  if (in.loc) event(in.loc, timer::now(), RecordType::ThreadJoin, 0, 0);
}

namespace {
// A thread's teams, innermost last: the call path each adopted (profile).
struct Team {
  ProfileNode* saved;
  ProfileNode* adopted;
};
thread_local Team t_teams[16];
thread_local int t_team_depth = 0;
}  // namespace

void team_begin(const void* path) {
  Scope in;
  const int level = t_team_depth++;
  if (!in.loc) {
    if (level < 16) t_teams[level] = Team{nullptr, nullptr};
    return;
  }
  // Named once, by creation order: a team's thread numbers repeat across (nested) teams.
  if (in.loc->name.rfind("Pthread thread ", 0) == 0) in.loc->name = "OpenMP thread " + std::to_string(in.loc->index);
  if (level < 16) {
    ProfileNode* saved = adopt_call_path(in.loc, static_cast<const ProfileNode*>(path));
    t_teams[level] = Team{saved, in.loc->current_node};
  }
  event(in.loc, timer::now(), RecordType::ThreadTeamBegin, g_team_comm, 0);
}

void team_end(Timestamp at) {
  Scope in;
  const int level = t_team_depth > 0 ? --t_team_depth : 0;
  if (!in.loc) return;
  if (level < 16) restore_call_path(in.loc, t_teams[level].saved, t_teams[level].adopted);
  event(in.loc, at ? at : timer::now(), RecordType::ThreadTeamEnd, g_team_comm, 0);
}

const void* call_path() {
  Location* loc = tls_location;
  return loc && loc->profiling ? loc->current_node : nullptr;
}

void acquired(const void* addr) {
  Scope in;
  if (in.loc) g_locks->acquired(in.loc, addr, LockModel::OpenMP);
}

void releasing(const void* addr) {
  Scope in;
  if (in.loc) g_locks->releasing(in.loc, addr, false, LockModel::OpenMP);
}

namespace {
// The latest joins by team key (a team's threads share it): a ring, so a nested team's threads
// find their own team's join, not the outer one's.
struct Join {
  std::atomic<const void*> team{nullptr};
  std::atomic<Timestamp> time{0};
};
constexpr unsigned kJoins = 64;
Join g_joins[kJoins];
std::atomic<unsigned> g_next_join{0};
std::atomic<Timestamp> g_last_join{0};

/// The join of `team` after `since`: the earliest one the ring still has, else the last join of
/// any team after `since` (the ring overflowed), else 0.
Timestamp join_after(const void* team, Timestamp since) {
  Timestamp best = 0;
  for (Join& j : g_joins) {
    if (j.team.load(std::memory_order_acquire) != team) continue;
    const Timestamp t = j.time.load(std::memory_order_acquire);
    if (t > since && (best == 0 || t < best)) best = t;
  }
  if (best) return best;
  const Timestamp last = g_last_join.load(std::memory_order_acquire);
  return last > since ? last : 0;
}

struct EndBarrier {
  Location* loc = nullptr;
  const void* team = nullptr;
  Timestamp since = 0;  // entered the end barrier (0: not in it)
  Timestamp ended = 0;  // the late end's time, for the team end that follows
  bool listed = false;
};
thread_local EndBarrier t_end_barrier;
std::mutex g_waiters_mutex;
std::vector<EndBarrier*>* g_waiters;  // leaked: threads may still run at exit
}  // namespace

void note_join(const void* team, Timestamp t) {
  Join& j = g_joins[g_next_join.fetch_add(1, std::memory_order_relaxed) % kJoins];
  j.time.store(0, std::memory_order_relaxed);
  j.team.store(team, std::memory_order_release);
  j.time.store(t, std::memory_order_release);
  g_last_join.store(t, std::memory_order_release);
}

void end_barrier_begins(const void* team) {
  EndBarrier& e = t_end_barrier;
  e.since = timer::now();
  e.team = team;
  e.loc = tls_location;
  if (!e.listed && e.loc) {
    e.listed = true;
    std::lock_guard<std::mutex> lock(g_waiters_mutex);
    if (!g_waiters) g_waiters = new std::vector<EndBarrier*>;
    g_waiters->push_back(&e);
  }
}

bool in_end_barrier() { return t_end_barrier.since != 0; }

Timestamp end_barrier_ends() {
  EndBarrier& e = t_end_barrier;
  const Timestamp join = join_after(e.team, e.since);
  const Timestamp at = e.since && join > e.since && join < timer::now() ? join : 0;
  e.since = 0;
  e.ended = at;
  return at;
}

Timestamp late_end() {
  const Timestamp at = t_end_barrier.ended;
  t_end_barrier.ended = 0;
  return at;
}

namespace {
/// A thread still in its end barrier: its frames close at its team's join, with a team end.
/// `now`: a thread that ends has passed the barrier; its team's join may not be noted yet (a
/// nested team's threads exit as soon as it is over).
void close_at_join(EndBarrier& e, Timestamp now) {
  const Timestamp join = e.since && e.loc ? join_after(e.team, e.since) : 0;
  if (!join && !now) return;
  e.loc->close_at = join ? join : now;
  e.loc->close_team = g_team_comm + 1;
  e.since = 0;
}
}  // namespace

void close_waiting_threads() {
  std::lock_guard<std::mutex> lock(g_waiters_mutex);
  if (!g_waiters) return;
  for (EndBarrier* e : *g_waiters) close_at_join(*e, 0);
}

void thread_ends(Location* loc) {
  // libgomp ends pool threads it no longer needs (a smaller team, a nested team's threads).
  std::lock_guard<std::mutex> lock(g_waiters_mutex);
  if (t_end_barrier.loc == loc && t_end_barrier.since) close_at_join(t_end_barrier, timer::now());
}

}  // namespace prof::openmp

namespace {

int adapter_init() {
  using namespace prof;
  openmp::g_locks = new adapters::LockTable;
  comms::CommDef team;
  team.kind = comms::Kind::OpenMP;
  team.name = "OpenMP thread team";
  openmp::g_team_comm = comms::define(team);
  // The runtimes' worker threads are OpenMP threads, not the program's pthreads: no pthread
  // events for them (they get their locations at their first OpenMP event).
  runtime::ignore_threads_of("libgomp");
  runtime::ignore_threads_of("libomp");
  runtime::ignore_threads_of("libiomp");
  openmp::g_enabled = config::g_values.openmp_enable;
  if (!openmp::on(config::kOmpParallel)) openmp::g_enabled = 0;
  openmp::g_gomp_on.store(openmp::g_enabled != 0 && !openmp::g_ompt_started.load(), std::memory_order_release);
  openmp::ompt_adapter_ready();
  return 0;
}

void adapter_finalize() {
  prof::openmp::g_gomp_on.store(false, std::memory_order_release);
  prof::openmp::ompt_adapter_stop();
  // Team threads still in the barrier of their last team: it ended at that team's join.
  prof::openmp::close_waiting_threads();
}

}  // namespace

#ifndef PROF_HAVE_OMPT
// Built without omp-tools.h: GCC's libgomp only.
void prof::openmp::ompt_adapter_ready() {}
void prof::openmp::ompt_adapter_stop() {}
#endif

extern "C" {
void finalize_location(prof::Location* loc) { prof::openmp::thread_ends(loc); }

const prof_adapter prof_adapter_openmp = {"openmp", &adapter_init, nullptr, &finalize_location, &adapter_finalize};
}
