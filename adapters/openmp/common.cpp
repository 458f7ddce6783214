// SPDX-License-Identifier: BSD-3-Clause
// The OpenMP adapter's shared part (openmp.hpp): construct regions, fork/join events, lifecycle.
#include <cstdio>
#include <cstring>
#include <string>

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

RegionId define_construct(Construct c, const void* where, bool entry, const char* name) {
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
  if (name && *name) d.name += std::string(" (") + name + ")";
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

RegionId region(Construct c, const void* where, bool entry, const char* name) {
  if (name && *name) return define_construct(c, where, entry, name);  // named criticals: rare, by name
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
      const RegionId r = define_construct(c, where, entry, nullptr);
      std::uintptr_t expected = 0;
      if (s.key.compare_exchange_strong(expected, key, std::memory_order_acq_rel)) s.region.store(r + 1, std::memory_order_release);
      return r;
    }
  }
  return define_construct(c, where, entry, nullptr);
}

RegionId api_region(const char* name) {
  regions::RegionDef d;
  d.name = d.canonical = name;
  d.paradigm = regions::Paradigm::OpenMP;
  d.role = Role::Wrapper;
  return regions::define(std::move(d));
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
}

}  // namespace

#ifndef PROF_HAVE_OMPT
// Built without omp-tools.h: GCC's libgomp only.
void prof::openmp::ompt_adapter_ready() {}
void prof::openmp::ompt_adapter_stop() {}
#endif

extern "C" {
const prof_adapter prof_adapter_openmp = {"openmp", &adapter_init, nullptr, nullptr, &adapter_finalize};
}
