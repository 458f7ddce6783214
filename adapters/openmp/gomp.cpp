// SPDX-License-Identifier: BSD-3-Clause
// GCC's libgomp has no OMPT: its entry points (GOMP_*, which gcc/g++/gfortran -fopenmp emit for
// every construct) are wrapped here, as Extrae does. libprof.so exports them and forwards to the
// next definition (dlsym RTLD_NEXT); prof-wrap links libprof before libgomp.
//
// What this path sees: parallel regions (GOMP_parallel*, the combined parallel loop and
// sections) with every thread's implicit barrier at their end, worksharing loops with dynamic, guided or runtime schedules (GOMP_loop_*; a static
// schedule is computed inline and only its closing barrier is a call), sections, the entry of
// single, barriers (GCC emits the same GOMP_barrier for explicit ones and for the implicit
// barrier after a worksharing construct), critical (named too), atomic regions done by lock,
// tasks (creation and execution), taskwait, taskgroup and the omp_*_lock API. Not seen: master
// and masked (inline thread-number tests), the end of a single's body.
#include <cstdint>
#include <cstring>

#include "adapters/openmp/openmp.hpp"
#include "adapters/wrap.hpp"
#include "measurement/compiler.hpp"

namespace {

using prof::RegionId;
using prof::openmp::Construct;
namespace cfg = prof::config;
namespace omp = prof::openmp;

#define REAL(name) prof::wrap::next(r_##name, #name)

inline bool recording(std::uint64_t feature) {
  return omp::g_gomp_on.load(std::memory_order_relaxed) && omp::on(feature);
}

// The worksharing construct the calling thread is in (its region), for the *_end calls; saved
// and restored around each parallel region the thread runs (nested parallelism).
thread_local RegionId t_workshare = 0;
thread_local bool t_in_workshare = false;
thread_local const void* t_workshare_at = nullptr;  // where it started: its implicit barrier's position

void open_workshare(RegionId r, const void* at) {
  if (t_in_workshare) omp::leave(t_workshare);  // a previous nowait loop never saw its end
  t_in_workshare = omp::enter(r);
  t_workshare = r;
  t_workshare_at = at;
}

void close_workshare() {
  if (!t_in_workshare) return;
  t_in_workshare = false;
  omp::leave(t_workshare);
}

/// A worksharing construct's end (GOMP_loop_end, GOMP_sections_end: `barrier`) with its
/// barrier, named after the construct's start, or without one (the *_nowait calls).
void end_workshare(void (*end)(), bool barrier) {
  if (!recording(prof::config::kOmpLoop)) return end();
  const bool b = barrier && t_in_workshare && recording(prof::config::kOmpBarrier);
  const RegionId r = b ? omp::region(Construct::ImplicitBarrier, t_workshare_at, false) : 0;
  const bool in = b && omp::enter(r);
  end();
  if (in) omp::leave(r);
  close_workshare();
}

/// The implicit barrier at the end of a parallel construct: named, as its parallel region is,
/// after the outlined body `fn` (its entry's line is the construct's), not after the
/// GOMP_parallel call, whose line at -O2 may be another statement's, the same for two constructs
/// of one function (their barriers then merged into one region).
RegionId end_barrier(void (*fn)(void*)) {
  return omp::region(Construct::ImplicitBarrier, reinterpret_cast<const void*>(fn), true);
}

// A parallel region's body on each team thread: team begin, the region, the body, and the
// implicit barrier at the end. The encountering thread entered its region before the call; its
// barrier lasts until GOMP_parallel returns (libgomp's join). The other threads wait for the
// join inside libgomp, which does not say when it ended: their barrier, region and team end
// are written when they next run a body, dated at the team's join (openmp.hpp: note_join), or
// at the end of measurement.
struct Parallel {
  void (*fn)(void*);
  void* data;
  RegionId region;
  RegionId workshare;  // a combined parallel loop/sections: every thread starts inside it (0: none)
  const void* master;  // the encountering thread's location
  const void* path;    // its call path at the fork (profile)
  const void* ra;      // where the construct was called
  bool barrier;        // the encountering thread entered the implicit barrier
};

// A team thread's region whose end barrier has not been seen to end.
struct Pending {
  RegionId region, barrier;
  bool in_region, in_barrier;
  bool active = false;
};
thread_local Pending t_pending;

void finish_pending() {
  if (!t_pending.active) return;
  t_pending.active = false;
  const prof::Timestamp at = omp::end_barrier_ends();
  if (t_pending.in_barrier) omp::leave(t_pending.barrier, at);
  if (t_pending.in_region) omp::leave(t_pending.region, at);
  omp::team_end(at);
}

void body(void* p) {
  auto* par = static_cast<Parallel*>(p);
  const bool master = prof::tls_location != nullptr && prof::tls_location == par->master;
  finish_pending();
  const RegionId saved_ws = t_workshare;
  const bool saved_in = t_in_workshare;
  const void* saved_at = t_workshare_at;
  t_in_workshare = false;
  bool in = false;
  if (!master) {
    omp::team_begin(par->path);
    in = omp::enter(par->region);
  }
  if (par->workshare) open_workshare(par->workshare, par->ra);
  par->fn(par->data);
  close_workshare();
  if (!master && in && omp::on(prof::config::kOmpBarrier)) {
    const RegionId barrier = end_barrier(par->fn);
    t_pending = Pending{par->region, barrier, in, omp::enter(barrier), true};
    omp::end_barrier_begins(par);
  } else if (!master) {
    if (in) omp::leave(par->region);
    omp::team_end();
  } else if (omp::on(prof::config::kOmpBarrier)) {
    par->barrier = omp::enter(end_barrier(par->fn));
  }
  t_workshare = saved_ws;
  t_in_workshare = saved_in;
  t_workshare_at = saved_at;
}

/// Runs the real parallel call `run(body, &par)` with the events around it.
template <class Run>
void parallel(void (*fn)(void*), void* data, unsigned threads, Construct ws, const void* ra, Run run) {
  Parallel par{fn, data, omp::region(Construct::Parallel, reinterpret_cast<const void*>(fn), true), 0, nullptr, nullptr, ra, false};
  // A combined construct's loop or sections: named after `fn` too (as end_barrier).
  if (ws != Construct::Count) par.workshare = omp::region(ws, reinterpret_cast<const void*>(fn), true);
  omp::fork(threads);
  par.path = omp::call_path();
  omp::team_begin(par.path);
  const bool in = omp::enter(par.region);
  par.master = prof::tls_location;  // made by the events above on a thread's first use
  run(&body, &par);
  omp::note_join(&par, prof::timer::now());
  if (par.barrier) omp::leave(end_barrier(fn));
  if (in) omp::leave(par.region);
  omp::team_end();
  omp::join();
}

// The real functions.
using fn_t = void (*)(void*);
void (*r_GOMP_parallel)(fn_t, void*, unsigned, unsigned);
void (*r_GOMP_parallel_sections)(fn_t, void*, unsigned, unsigned, unsigned);
void (*r_GOMP_barrier)();
void (*r_GOMP_critical_start)();
void (*r_GOMP_critical_end)();
void (*r_GOMP_critical_name_start)(void**);
void (*r_GOMP_critical_name_end)(void**);
void (*r_GOMP_atomic_start)();
void (*r_GOMP_atomic_end)();
bool (*r_GOMP_single_start)();
unsigned (*r_GOMP_sections_start)(unsigned);
void (*r_GOMP_sections_end)();
void (*r_GOMP_sections_end_nowait)();
void (*r_GOMP_loop_end)();
void (*r_GOMP_loop_end_nowait)();
void (*r_GOMP_ordered_start)();
void (*r_GOMP_ordered_end)();
void (*r_GOMP_taskwait)();
void (*r_GOMP_taskgroup_start)();
void (*r_GOMP_taskgroup_end)();
void (*r_GOMP_task)(fn_t, void*, void (*)(void*, void*), long, long, bool, unsigned, void**, int, void*);

}  // namespace

#define RA() __builtin_return_address(0)

extern "C" {

PROF_API PROF_NO_INSTRUMENT void GOMP_parallel(fn_t fn, void* data, unsigned threads, unsigned flags) {
  auto rf = REAL(GOMP_parallel);
  if (!recording(cfg::kOmpParallel)) return rf(fn, data, threads, flags);
  parallel(fn, data, threads, Construct::Count, RA(), [&](fn_t b, void* p) { rf(b, p, threads, flags); });
}

PROF_API PROF_NO_INSTRUMENT void GOMP_parallel_sections(fn_t fn, void* data, unsigned threads, unsigned count, unsigned flags) {
  auto rf = REAL(GOMP_parallel_sections);
  if (!recording(cfg::kOmpParallel)) return rf(fn, data, threads, count, flags);
  const Construct ws = omp::on(cfg::kOmpLoop) ? Construct::Sections : Construct::Count;
  parallel(fn, data, threads, ws, RA(), [&](fn_t b, void* p) { rf(b, p, threads, count, flags); });
}

// The combined parallel loops: GOMP_parallel_loop_<schedule>(fn, data, threads, start, end,
// incr, chunk, flags); every thread starts inside the loop.
#define PROF_GOMP_PARALLEL_LOOP(sched)                                                                                  \
  static void (*r_GOMP_parallel_loop_##sched)(fn_t, void*, unsigned, long, long, long, long, unsigned);                 \
  PROF_API PROF_NO_INSTRUMENT void GOMP_parallel_loop_##sched(fn_t fn, void* data, unsigned threads, long start,       \
                                                              long end, long incr, long chunk, unsigned flags) {       \
    auto rf = REAL(GOMP_parallel_loop_##sched);                                                                         \
    if (!recording(cfg::kOmpParallel)) return rf(fn, data, threads, start, end, incr, chunk, flags);                    \
    const Construct ws = omp::on(cfg::kOmpLoop) ? Construct::Loop : Construct::Count;                                   \
    parallel(fn, data, threads, ws, RA(), [&](fn_t b, void* p) { rf(b, p, threads, start, end, incr, chunk, flags); }); \
  }
PROF_GOMP_PARALLEL_LOOP(static)
PROF_GOMP_PARALLEL_LOOP(dynamic)
PROF_GOMP_PARALLEL_LOOP(guided)
PROF_GOMP_PARALLEL_LOOP(nonmonotonic_dynamic)
PROF_GOMP_PARALLEL_LOOP(nonmonotonic_guided)
#undef PROF_GOMP_PARALLEL_LOOP
// The runtime schedules take no chunk size.
#define PROF_GOMP_PARALLEL_LOOP_RUNTIME(sched)                                                                   \
  static void (*r_GOMP_parallel_loop_##sched)(fn_t, void*, unsigned, long, long, long, unsigned);               \
  PROF_API PROF_NO_INSTRUMENT void GOMP_parallel_loop_##sched(fn_t fn, void* data, unsigned threads, long start, \
                                                              long end, long incr, unsigned flags) {           \
    auto rf = REAL(GOMP_parallel_loop_##sched);                                                                 \
    if (!recording(cfg::kOmpParallel)) return rf(fn, data, threads, start, end, incr, flags);                   \
    const Construct ws = omp::on(cfg::kOmpLoop) ? Construct::Loop : Construct::Count;                           \
    parallel(fn, data, threads, ws, RA(), [&](fn_t b, void* p) { rf(b, p, threads, start, end, incr, flags); }); \
  }
PROF_GOMP_PARALLEL_LOOP_RUNTIME(runtime)
PROF_GOMP_PARALLEL_LOOP_RUNTIME(nonmonotonic_runtime)
PROF_GOMP_PARALLEL_LOOP_RUNTIME(maybe_nonmonotonic_runtime)
#undef PROF_GOMP_PARALLEL_LOOP_RUNTIME

// Worksharing loops: GOMP_loop_<schedule>_start opens the loop region, GOMP_loop_end[_nowait]
// closes it (the end's barrier inside it as its implicit barrier).
#define PROF_GOMP_LOOP_START(sched)                                                                                 \
  static bool (*r_GOMP_loop_##sched##_start)(long, long, long, long, long*, long*);                                 \
  PROF_API PROF_NO_INSTRUMENT bool GOMP_loop_##sched##_start(long start, long end, long incr, long chunk, long* is, \
                                                             long* ie) {                                            \
    auto rf = REAL(GOMP_loop_##sched##_start);                                                                      \
    if (recording(cfg::kOmpLoop)) open_workshare(omp::region(Construct::Loop, RA(), false), RA());                        \
    return rf(start, end, incr, chunk, is, ie);                                                                     \
  }
PROF_GOMP_LOOP_START(static)
PROF_GOMP_LOOP_START(dynamic)
PROF_GOMP_LOOP_START(guided)
PROF_GOMP_LOOP_START(nonmonotonic_dynamic)
PROF_GOMP_LOOP_START(nonmonotonic_guided)
PROF_GOMP_LOOP_START(ordered_static)
PROF_GOMP_LOOP_START(ordered_dynamic)
PROF_GOMP_LOOP_START(ordered_guided)
#undef PROF_GOMP_LOOP_START
#define PROF_GOMP_LOOP_RUNTIME_START(sched)                                                                   \
  static bool (*r_GOMP_loop_##sched##_start)(long, long, long, long*, long*);                                 \
  PROF_API PROF_NO_INSTRUMENT bool GOMP_loop_##sched##_start(long start, long end, long incr, long* is, long* ie) { \
    auto rf = REAL(GOMP_loop_##sched##_start);                                                                \
    if (recording(cfg::kOmpLoop)) open_workshare(omp::region(Construct::Loop, RA(), false), RA());                  \
    return rf(start, end, incr, is, ie);                                                                      \
  }
PROF_GOMP_LOOP_RUNTIME_START(runtime)
PROF_GOMP_LOOP_RUNTIME_START(nonmonotonic_runtime)
PROF_GOMP_LOOP_RUNTIME_START(maybe_nonmonotonic_runtime)
PROF_GOMP_LOOP_RUNTIME_START(ordered_runtime)
#undef PROF_GOMP_LOOP_RUNTIME_START

// GCC 9+: the generic start (loops with task reductions, lastprivate(conditional:), ...).
static bool (*r_GOMP_loop_start)(long, long, long, long, long, long*, long*, std::uintptr_t*, void**);
PROF_API PROF_NO_INSTRUMENT bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long* is, long* ie,
                                                 std::uintptr_t* reductions, void** mem) {
  auto rf = REAL(GOMP_loop_start);
  if (recording(cfg::kOmpLoop)) open_workshare(omp::region(Construct::Loop, RA(), false), RA());
  return rf(start, end, incr, sched, chunk, is, ie, reductions, mem);
}

// Loops over unsigned long long (`up`: the direction); they end with the same GOMP_loop_end*.
using ull = unsigned long long;
#define PROF_GOMP_LOOP_ULL_START(sched)                                                                         \
  static bool (*r_GOMP_loop_ull_##sched##_start)(bool, ull, ull, ull, ull, ull*, ull*);                         \
  PROF_API PROF_NO_INSTRUMENT bool GOMP_loop_ull_##sched##_start(bool up, ull start, ull end, ull incr, ull chunk, \
                                                                 ull* is, ull* ie) {                            \
    auto rf = REAL(GOMP_loop_ull_##sched##_start);                                                              \
    if (recording(cfg::kOmpLoop)) open_workshare(omp::region(Construct::Loop, RA(), false), RA());              \
    return rf(up, start, end, incr, chunk, is, ie);                                                             \
  }
PROF_GOMP_LOOP_ULL_START(static)
PROF_GOMP_LOOP_ULL_START(dynamic)
PROF_GOMP_LOOP_ULL_START(guided)
PROF_GOMP_LOOP_ULL_START(nonmonotonic_dynamic)
PROF_GOMP_LOOP_ULL_START(nonmonotonic_guided)
#undef PROF_GOMP_LOOP_ULL_START
#define PROF_GOMP_LOOP_ULL_RUNTIME_START(sched)                                                                 \
  static bool (*r_GOMP_loop_ull_##sched##_start)(bool, ull, ull, ull, ull*, ull*);                              \
  PROF_API PROF_NO_INSTRUMENT bool GOMP_loop_ull_##sched##_start(bool up, ull start, ull end, ull incr, ull* is, \
                                                                 ull* ie) {                                     \
    auto rf = REAL(GOMP_loop_ull_##sched##_start);                                                              \
    if (recording(cfg::kOmpLoop)) open_workshare(omp::region(Construct::Loop, RA(), false), RA());              \
    return rf(up, start, end, incr, is, ie);                                                                    \
  }
PROF_GOMP_LOOP_ULL_RUNTIME_START(runtime)
PROF_GOMP_LOOP_ULL_RUNTIME_START(nonmonotonic_runtime)
PROF_GOMP_LOOP_ULL_RUNTIME_START(maybe_nonmonotonic_runtime)
#undef PROF_GOMP_LOOP_ULL_RUNTIME_START

PROF_API PROF_NO_INSTRUMENT void GOMP_loop_end() { end_workshare(REAL(GOMP_loop_end), true); }

PROF_API PROF_NO_INSTRUMENT void GOMP_loop_end_nowait() { end_workshare(REAL(GOMP_loop_end_nowait), false); }

PROF_API PROF_NO_INSTRUMENT unsigned GOMP_sections_start(unsigned count) {
  auto rf = REAL(GOMP_sections_start);
  if (recording(cfg::kOmpLoop)) open_workshare(omp::region(Construct::Sections, RA(), false), RA());
  return rf(count);
}

PROF_API PROF_NO_INSTRUMENT void GOMP_sections_end() { end_workshare(REAL(GOMP_sections_end), true); }

PROF_API PROF_NO_INSTRUMENT void GOMP_sections_end_nowait() { end_workshare(REAL(GOMP_sections_end_nowait), false); }

// A region around one runtime call.
#define PROF_AROUND(construct, feature, call)                                      \
  do {                                                                             \
    if (!recording(feature)) return call;                                          \
    const RegionId r_ = omp::region(construct, RA(), false);                       \
    const bool in_ = omp::enter(r_);                                               \
    call;                                                                          \
    if (in_) omp::leave(r_);                                                       \
  } while (0)

PROF_API PROF_NO_INSTRUMENT void GOMP_barrier() {
  auto rf = REAL(GOMP_barrier);
  PROF_AROUND(Construct::Barrier, cfg::kOmpBarrier, rf());
}

PROF_API PROF_NO_INSTRUMENT void GOMP_taskwait() {
  auto rf = REAL(GOMP_taskwait);
  PROF_AROUND(Construct::Taskwait, cfg::kOmpTask, rf());
}

// single: which thread runs the body is decided here; the body's end is not a call.
PROF_API PROF_NO_INSTRUMENT bool GOMP_single_start() {
  auto rf = REAL(GOMP_single_start);
  if (!recording(cfg::kOmpLoop)) return rf();
  const RegionId r = omp::region(Construct::Single, RA(), false);
  const bool in = omp::enter(r);
  const bool mine = rf();
  if (in) omp::leave(r);
  return mine;
}

}  // extern "C"

namespace {

// Regions that span several calls (taskgroup, critical, atomic, ordered): entered at the
// first, left at the last; a thread's open ones nest.
thread_local omp::RegionStack t_open;

}  // namespace

extern "C" {

PROF_API PROF_NO_INSTRUMENT void GOMP_taskgroup_start() {
  auto rf = REAL(GOMP_taskgroup_start);
  if (recording(cfg::kOmpTask)) t_open.push(omp::region(Construct::Taskgroup, RA(), false));
  rf();
}

PROF_API PROF_NO_INSTRUMENT void GOMP_taskgroup_end() {
  auto rf = REAL(GOMP_taskgroup_end);
  const bool rec = recording(cfg::kOmpTask);
  rf();
  if (rec) t_open.pop();
}

}  // extern "C"

namespace {

// critical and atomic: the region spans the wait and the body, with lock events when acquired
// and before the release. Unnamed criticals share one lock; a named one is GCC's pointer for
// its name (the runtime's lock is made behind it).
char g_unnamed_critical, g_atomic_lock, g_ordered_lock;

}  // namespace

extern "C" {

#define PROF_LOCKED_START(fn, construct, lock, ...)                          \
  auto rf = REAL(fn);                                                        \
  if (!recording(cfg::kOmpSync)) return rf(__VA_ARGS__);                     \
  t_open.push(omp::region(construct, RA(), false));                          \
  rf(__VA_ARGS__);                                                           \
  omp::acquired(lock)
#define PROF_LOCKED_END(fn, lock, ...)                                       \
  auto rf = REAL(fn);                                                        \
  if (!recording(cfg::kOmpSync)) return rf(__VA_ARGS__);                     \
  omp::releasing(lock);                                                      \
  rf(__VA_ARGS__);                                                           \
  t_open.pop()

PROF_API PROF_NO_INSTRUMENT void GOMP_critical_start() { PROF_LOCKED_START(GOMP_critical_start, Construct::Critical, &g_unnamed_critical); }
PROF_API PROF_NO_INSTRUMENT void GOMP_critical_end() { PROF_LOCKED_END(GOMP_critical_end, &g_unnamed_critical); }
PROF_API PROF_NO_INSTRUMENT void GOMP_critical_name_start(void** p) { PROF_LOCKED_START(GOMP_critical_name_start, Construct::Critical, p, p); }
PROF_API PROF_NO_INSTRUMENT void GOMP_critical_name_end(void** p) { PROF_LOCKED_END(GOMP_critical_name_end, p, p); }
PROF_API PROF_NO_INSTRUMENT void GOMP_atomic_start() { PROF_LOCKED_START(GOMP_atomic_start, Construct::Atomic, &g_atomic_lock); }
PROF_API PROF_NO_INSTRUMENT void GOMP_atomic_end() { PROF_LOCKED_END(GOMP_atomic_end, &g_atomic_lock); }
PROF_API PROF_NO_INSTRUMENT void GOMP_ordered_start() { PROF_LOCKED_START(GOMP_ordered_start, Construct::Ordered, &g_ordered_lock); }
PROF_API PROF_NO_INSTRUMENT void GOMP_ordered_end() { PROF_LOCKED_END(GOMP_ordered_end, &g_ordered_lock); }

}  // extern "C"

namespace {

// Tasks. The body is the compiler's outlined function, run by whichever thread libgomp picks,
// maybe later: the argument block libgomp copies gets a header in front of the program's (our
// copy function fills both), so the body knows its region wherever it runs.
struct TaskHead {
  fn_t fn;
  void (*cpyfn)(void*, void*);
  void* src;
  long size;
  long offset;  // of the program's block, a multiple of its alignment
  RegionId region;
};

void task_body(void* p) {
  auto* h = static_cast<TaskHead*>(p);
  const bool in = omp::enter(h->region);
  h->fn(static_cast<char*>(p) + h->offset);
  if (in) omp::leave(h->region);
}

void task_copy(void* dst, void* src) {
  auto* s = static_cast<TaskHead*>(src);
  std::memcpy(dst, s, sizeof(TaskHead));
  void* d = static_cast<char*>(dst) + s->offset;
  if (s->cpyfn) s->cpyfn(d, s->src);
  else if (s->size > 0) std::memcpy(d, s->src, static_cast<std::size_t>(s->size));
}

}  // namespace

extern "C" {

PROF_API PROF_NO_INSTRUMENT void GOMP_task(fn_t fn, void* data, void (*cpyfn)(void*, void*), long size, long align, bool if_clause,
                                           unsigned flags, void** depend, int priority, void* detach) {
  auto rf = REAL(GOMP_task);
  if (!recording(cfg::kOmpTask)) return rf(fn, data, cpyfn, size, align, if_clause, flags, depend, priority, detach);
  if (align < 1) align = 1;
  const long head = static_cast<long>(sizeof(TaskHead));
  TaskHead h{fn, cpyfn, data, size, (head + align - 1) / align * align,
             omp::region(Construct::Task, reinterpret_cast<const void*>(fn), true)};
  const long new_align = align > static_cast<long>(alignof(TaskHead)) ? align : static_cast<long>(alignof(TaskHead));
  const RegionId create = omp::region(Construct::TaskCreate, RA(), false);
  const bool in = omp::enter(create);
  rf(&task_body, &h, &task_copy, h.offset + size, new_align, if_clause, flags, depend, priority, detach);
  if (in) omp::leave(create);
}

// The lock API (libgomp's; under OMPT the runtime reports locks itself).
}  // extern "C"

namespace {

// A nest lock's events come at its first acquisition and last release (LockTable counts levels).
using lock_fn = void (*)(void*);
using test_fn = int (*)(void*);
lock_fn r_omp_set_lock, r_omp_unset_lock, r_omp_set_nest_lock, r_omp_unset_nest_lock;
test_fn r_omp_test_lock, r_omp_test_nest_lock;


void set_lock(lock_fn rf, void* lock, omp::LockCall which) {
  if (!recording(cfg::kOmpLock)) return rf(lock);
  const RegionId r = omp::lock_region(which);
  const bool in = omp::enter(r);
  rf(lock);
  omp::acquired(lock);
  if (in) omp::leave(r);
}

void unset_lock(lock_fn rf, void* lock, omp::LockCall which) {
  if (!recording(cfg::kOmpLock)) return rf(lock);
  const RegionId r = omp::lock_region(which);
  const bool in = omp::enter(r);
  omp::releasing(lock);
  rf(lock);
  if (in) omp::leave(r);
}

int test_lock(test_fn rf, void* lock, omp::LockCall which) {
  if (!recording(cfg::kOmpLock)) return rf(lock);
  const RegionId r = omp::lock_region(which);
  const bool in = omp::enter(r);
  const int got = rf(lock);  // omp_test_lock: 0 or 1; omp_test_nest_lock: the new nesting count
  if (got) omp::acquired(lock);
  if (in) omp::leave(r);
  return got;
}

}  // namespace

extern "C" {

PROF_API PROF_NO_INSTRUMENT void omp_set_lock(void* l) { set_lock(REAL(omp_set_lock), l, omp::LockCall::Set); }
PROF_API PROF_NO_INSTRUMENT void omp_unset_lock(void* l) { unset_lock(REAL(omp_unset_lock), l, omp::LockCall::Unset); }
PROF_API PROF_NO_INSTRUMENT int omp_test_lock(void* l) { return test_lock(REAL(omp_test_lock), l, omp::LockCall::Test); }
PROF_API PROF_NO_INSTRUMENT void omp_set_nest_lock(void* l) { set_lock(REAL(omp_set_nest_lock), l, omp::LockCall::SetNest); }
PROF_API PROF_NO_INSTRUMENT void omp_unset_nest_lock(void* l) { unset_lock(REAL(omp_unset_nest_lock), l, omp::LockCall::UnsetNest); }
PROF_API PROF_NO_INSTRUMENT int omp_test_nest_lock(void* l) { return test_lock(REAL(omp_test_nest_lock), l, omp::LockCall::TestNest); }

}  // extern "C"
