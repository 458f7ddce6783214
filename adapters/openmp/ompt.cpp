// SPDX-License-Identifier: BSD-3-Clause
// LLVM's libomp (clang -fopenmp; also Intel's and AMD's runtimes) through the OpenMP tools
// interface: the runtime finds ompt_start_tool in libprof.so when it starts and calls back at
// every construct. Once it did, the GOMP wrappers (gomp.cpp) pass through: libomp exports the
// GOMP_* entry points too. Parallel regions are named by the call that forked them
// (codeptr_ra: the line of the #pragma), as are worksharing, sync and task constructs.
#include PROF_OMP_TOOLS_H  // omp-tools.h, found at configure time (adapters/CMakeLists.txt)

#include <atomic>
#include <cstdint>

#include "adapters/adapter.hpp"
#include "adapters/openmp/openmp.hpp"
#include "measurement/compiler.hpp"

namespace {

using prof::RegionId;
using prof::openmp::Construct;
namespace cfg = prof::config;
namespace omp = prof::openmp;

std::atomic<bool> g_ompt_on{false};

inline bool recording(std::uint64_t feature) { return g_ompt_on.load(std::memory_order_relaxed) && omp::on(feature); }

// A thread's open OpenMP regions (parallel, worksharing, sync, critical...): the end callbacks
// do not always say which (a worker's implicit task end has no parallel data).
thread_local omp::RegionStack t_open;

// parallel_data->ptr: a Fork in the encountering thread's storage (one per nesting level),
// which its team reads while the region runs.
struct Fork {
  const void* codeptr;  // the fork's code address: the region's position
  const void* path;     // the encountering thread's call path (profile)
};
thread_local Fork t_forks[16];
thread_local int t_fork_depth = 0;

const Fork* fork_of(const ompt_data_t* parallel) { return parallel ? static_cast<const Fork*>(parallel->ptr) : nullptr; }
const void* codeptr_of(const ompt_data_t* parallel) {
  const Fork* f = fork_of(parallel);
  return f ? f->codeptr : nullptr;
}

void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t* parallel, unsigned requested, int, const void* codeptr) {
  const int level = t_fork_depth++;
  if (!recording(cfg::kOmpParallel) || level >= 16) return;
  t_forks[level] = Fork{codeptr, omp::call_path()};
  parallel->ptr = &t_forks[level];
  omp::fork(requested);
}

void on_parallel_end(ompt_data_t* parallel, ompt_data_t*, int, const void*) {
  if (t_fork_depth > 0) --t_fork_depth;
  if (!recording(cfg::kOmpParallel) || !parallel->ptr) return;
  omp::note_join(parallel, prof::timer::now());
  omp::join();
}

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t*, unsigned, unsigned, int flags) {
  if (!recording(cfg::kOmpParallel) || (flags & ompt_task_initial)) return;
  if (endpoint == ompt_scope_begin) {
    const Fork* f = fork_of(parallel);
    omp::team_begin(f ? f->path : nullptr);
    t_open.push(omp::region(Construct::Parallel, f ? f->codeptr : nullptr, false));
  } else {
    // after a late barrier end (end_barrier_ends): the same time
    const prof::Timestamp at = omp::late_end();
    t_open.pop(at);
    omp::team_end(at);
  }
}

void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, std::uint64_t, const void* codeptr) {
  if (!recording(cfg::kOmpLoop)) return;
  Construct c;
  switch (type) {
    case ompt_work_sections: c = Construct::Sections; break;
    case ompt_work_single_executor:
    case ompt_work_single_other: c = Construct::Single; break;
    case ompt_work_workshare: c = Construct::Workshare; break;
    case ompt_work_distribute:
    case ompt_work_taskloop:
    case ompt_work_loop:
    default: c = Construct::Loop; break;
  }
  if (endpoint == ompt_scope_begin) t_open.push(omp::region(c, codeptr, false));
  else t_open.pop();
}

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t*, const void* codeptr) {
  Construct c;
  std::uint64_t feature = cfg::kOmpBarrier;
  switch (kind) {
    case ompt_sync_region_barrier:
    case ompt_sync_region_barrier_explicit: c = Construct::Barrier; break;
    case ompt_sync_region_taskwait: c = Construct::Taskwait; feature = cfg::kOmpTask; break;
    case ompt_sync_region_taskgroup: c = Construct::Taskgroup; feature = cfg::kOmpTask; break;
    case ompt_sync_region_reduction: return;  // inside the construct's own region
    default: c = Construct::ImplicitBarrier; break;  // implicit (parallel, workshare), implementation, teams
  }
  if (!recording(feature)) return;
  // The barrier at the end of a parallel region: by kind (OpenMP 5.1), or an implicit barrier
  // at the fork's code address, or at none (a worker's).
  const bool end_of_parallel = kind == ompt_sync_region_barrier_implicit_parallel ||
                               (kind == ompt_sync_region_barrier_implicit && (!codeptr || codeptr == codeptr_of(parallel)));
  if (endpoint == ompt_scope_begin) {
    if (!codeptr) codeptr = codeptr_of(parallel);
    t_open.push(omp::region(c, codeptr, false));
    if (end_of_parallel) omp::end_barrier_begins(parallel);
  } else {
    // (the end callback may name another code address than the begin did)
    t_open.pop(omp::in_end_barrier() ? omp::end_barrier_ends() : 0);
  }
}

void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*, const void* codeptr) {
  if (!recording(cfg::kOmpLoop)) return;
  if (endpoint == ompt_scope_begin) t_open.push(omp::region(Construct::Master, codeptr, false));
  else t_open.pop();
}

// Mutexes: a critical, atomic or ordered region spans the wait and the body (acquire ..
// released); a lock call's region spans the wait (acquire .. acquired). Test locks get their
// lock event only (a failed test has no end callback).
bool is_lock(ompt_mutex_t kind) {
  return kind == ompt_mutex_lock || kind == ompt_mutex_test_lock || kind == ompt_mutex_nest_lock || kind == ompt_mutex_test_nest_lock;
}
bool is_test(ompt_mutex_t kind) { return kind == ompt_mutex_test_lock || kind == ompt_mutex_test_nest_lock; }

bool mutex_recorded(ompt_mutex_t kind) { return recording(is_lock(kind) ? cfg::kOmpLock : cfg::kOmpSync); }


void on_mutex_acquire(ompt_mutex_t kind, unsigned, unsigned, ompt_wait_id_t, const void* codeptr) {
  if (!mutex_recorded(kind) || is_test(kind)) return;
  switch (kind) {
    case ompt_mutex_lock: t_open.push(omp::lock_region(omp::LockCall::Set)); break;
    case ompt_mutex_nest_lock: t_open.push(omp::lock_region(omp::LockCall::SetNest)); break;
    case ompt_mutex_atomic: t_open.push(omp::region(Construct::Atomic, codeptr, false)); break;
    case ompt_mutex_ordered: t_open.push(omp::region(Construct::Ordered, codeptr, false)); break;
    default: t_open.push(omp::region(Construct::Critical, codeptr, false)); break;
  }
}

void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void*) {
  if (!mutex_recorded(kind)) return;
  omp::acquired(reinterpret_cast<const void*>(wait_id));
  if (is_lock(kind) && !is_test(kind)) t_open.pop();
}

void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void*) {
  if (!mutex_recorded(kind)) return;
  if (is_lock(kind)) {
    const RegionId r = omp::lock_region(kind == ompt_mutex_nest_lock || kind == ompt_mutex_test_nest_lock ? omp::LockCall::UnsetNest
                                                                                                       : omp::LockCall::Unset);
    const bool in = omp::enter(r);
    omp::releasing(reinterpret_cast<const void*>(wait_id));
    if (in) omp::leave(r);
  } else {
    omp::releasing(reinterpret_cast<const void*>(wait_id));
    t_open.pop();
  }
}

// Explicit tasks: task_data->value = the creating call's address * 2, + 1 once it started
// (a suspended task that resumes is not entered again).
void on_task_create(ompt_data_t*, const ompt_frame_t*, ompt_data_t* task, int flags, int, const void* codeptr) {
  if (!recording(cfg::kOmpTask) || !(flags & ompt_task_explicit)) return;
  task->value = reinterpret_cast<std::uintptr_t>(codeptr) << 1;
  const RegionId r = omp::region(Construct::TaskCreate, codeptr, false);
  if (omp::enter(r)) omp::leave(r);
}

void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  if (!recording(cfg::kOmpTask)) return;
  if (prior && prior->value && status != ompt_task_switch && status != ompt_task_yield && status != ompt_task_detach) {
    prior->value &= ~std::uint64_t{1};
    t_open.pop();
  }
  if (next && next->value && !(next->value & 1)) {
    next->value |= 1;
    t_open.push(omp::region(Construct::Task, reinterpret_cast<const void*>(next->value >> 1), false));
  }
}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set) return 0;
  const auto cb = [&](ompt_callbacks_t which, auto fn) { set(which, reinterpret_cast<ompt_callback_t>(fn)); };
  cb(ompt_callback_parallel_begin, &on_parallel_begin);
  cb(ompt_callback_parallel_end, &on_parallel_end);
  cb(ompt_callback_implicit_task, &on_implicit_task);
  cb(ompt_callback_work, &on_work);
  cb(ompt_callback_sync_region, &on_sync_region);
  cb(ompt_callback_masked, &on_masked);
  cb(ompt_callback_mutex_acquire, &on_mutex_acquire);
  cb(ompt_callback_mutex_acquired, &on_mutex_acquired);
  cb(ompt_callback_mutex_released, &on_mutex_released);
  cb(ompt_callback_task_create, &on_task_create);
  cb(ompt_callback_task_schedule, &on_task_schedule);
  omp::g_ompt_started.store(true, std::memory_order_release);
  omp::g_gomp_on.store(false, std::memory_order_release);
  g_ompt_on.store(omp::g_enabled != 0, std::memory_order_release);
  return 1;
}

void finalize(ompt_data_t*) { g_ompt_on.store(false, std::memory_order_release); }

ompt_start_tool_result_t g_tool = {&initialize, &finalize, {0}};

}  // namespace

namespace prof::openmp {
void ompt_adapter_ready() { g_ompt_on.store(g_ompt_started.load(std::memory_order_acquire) && g_enabled != 0, std::memory_order_release); }
void ompt_adapter_stop() { g_ompt_on.store(false, std::memory_order_release); }
}  // namespace prof::openmp

extern "C" PROF_API PROF_NO_INSTRUMENT ompt_start_tool_result_t* ompt_start_tool(unsigned, const char*) {
  // Only for programs that have the adapter (prof-wrap links it for -fopenmp; prof-run has all).
  for (const prof_adapter* const* a = prof::adapters::linked(); *a; ++a)
    if (*a == &prof_adapter_openmp) return &g_tool;
  return nullptr;
}
