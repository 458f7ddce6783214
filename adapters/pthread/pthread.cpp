// SPDX-License-Identifier: BSD-3-Clause
// The pthread adapter. Threads created inside shared libraries count too (std::thread calls
// pthread_create from libstdc++.so, which `ld --wrap` never redirects), so for dynamic links
// libprof itself exports pthread_* and forwards to the next definition (dlsym RTLD_NEXT).
// Events follow OTF2's create/wait model on one thread contingent (comm 0): ThreadCreate on the
// parent, ThreadBegin/ThreadEnd on the child, ThreadWait on the joiner. With PROF_PTHREAD_ENABLE
// containing mutex/cond, lock operations become regions with ThreadAcquireLock/ReleaseLock.
// Compiled a second time with -DPROF_STATIC_WRAP for libprof.a: there the functions are
// __wrap_pthread_* and call __real_pthread_* (ld --wrap, which prof-wrap passes for -static
// links, applies to every object of a static link, libstdc++.a's std::thread included).
#ifndef PROF_STATIC_WRAP
#include <dlfcn.h>
#endif
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include "adapters/adapter.hpp"
#include "adapters/lock_table.hpp"
#include "adapters/wrap.hpp"
#include "measurement/config/config.hpp"
#include "measurement/events.hpp"
#include "measurement/runtime.hpp"

namespace {

using prof::Location;
using prof::RecordType;
using prof::RegionId;


using create_fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using join_fn = int (*)(pthread_t, void**);
using exit_fn = void (*)(void*);
using one_fn = int (*)(pthread_t);
using mutex_fn = int (*)(pthread_mutex_t*);
using timedlock_fn = int (*)(pthread_mutex_t*, const struct timespec*);
using cond_fn = int (*)(pthread_cond_t*);
using cond_wait_fn = int (*)(pthread_cond_t*, pthread_mutex_t*);
using cond_timedwait_fn = int (*)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);

#ifndef PROF_STATIC_WRAP
create_fn r_create;
join_fn r_join;
exit_fn r_exit;
one_fn r_detach, r_cancel;
mutex_fn r_lock, r_unlock, r_trylock;
timedlock_fn r_timedlock;
cond_fn r_signal, r_broadcast;
cond_wait_fn r_wait;
cond_timedwait_fn r_timedwait;
#endif

bool g_create_on = false;
bool g_mutex_on = false;
bool g_cond_on = false;

enum Fn { kCreate, kJoin, kDetach, kCancel, kLock, kUnlock, kTrylock, kTimedlock, kWait, kTimedwait, kSignal, kBroadcast, kFnCount };
const char* const kNames[kFnCount] = {"pthread_create",       "pthread_join",           "pthread_detach",
                                      "pthread_cancel",       "pthread_mutex_lock",     "pthread_mutex_unlock",
                                      "pthread_mutex_trylock", "pthread_mutex_timedlock", "pthread_cond_wait",
                                      "pthread_cond_timedwait", "pthread_cond_signal",   "pthread_cond_broadcast"};
RegionId g_region[kFnCount];

// pthread_t → ThreadCreate sequence number, for ThreadWait at join.
std::mutex* g_seq_mutex;
std::unordered_map<pthread_t, std::uint64_t>* g_seq;

// Lock ids (adapters/lock_table.hpp): mutexes by address.
prof::adapters::LockTable* g_locks;

void acquired(Location* loc, const void* m) { g_locks->acquired(loc, m, prof::LockModel::Pthread); }
void releasing(Location* loc, const void* m, bool all_levels) { g_locks->releasing(loc, m, all_levels, prof::LockModel::Pthread); }

struct StartArgs {
  void* (*fn)(void*);
  void* arg;
  std::uint64_t seq;
};

PROF_NO_INSTRUMENT void* trampoline(void* p) {
  StartArgs a = *static_cast<StartArgs*>(p);
  std::free(p);
  if (Location* loc = prof::current_location()) {
    loc->create_seq = a.seq;
    if (!loc->busy && loc->active) {
      loc->busy = true;
      prof::event(loc, prof::timer::now(), RecordType::ThreadBegin, 0, a.seq);
      loc->busy = false;
    }
  }
  return a.fn(a.arg);
}

#define PROF_CFA() reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa())

int adapter_init() {
  std::uint64_t bits = prof::config::g_values.pthread_enable;
  g_create_on = bits & prof::config::kPthreadCreate;
  g_mutex_on = bits & prof::config::kPthreadMutex;
  g_cond_on = bits & prof::config::kPthreadCond;
  g_seq_mutex = new std::mutex;
  g_seq = new std::unordered_map<pthread_t, std::uint64_t>;
  g_locks = new prof::adapters::LockTable;
  for (int i = 0; i < kFnCount; ++i) {
    prof::regions::RegionDef d;
    d.name = d.canonical = kNames[i];
    d.paradigm = prof::regions::Paradigm::Pthread;
    d.role = i == kCreate ? prof::regions::Role::ThreadCreate
             : i == kJoin ? prof::regions::Role::ThreadWait
                          : prof::regions::Role::Wrapper;
    g_region[i] = prof::regions::define(d);
  }
  return 0;
}

}  // namespace

// Each wrapper below is written once (adapters/wrap.hpp); PROF_REAL(f, slot) is the real f,
// through dlsym(RTLD_NEXT) cached in `slot` (dynamic) or __real_f (static).
#ifdef PROF_STATIC_WRAP
#define PROF_WRAP_SYMBOL(file, sym) PROF_WRAP_SYMBOL_##file(sym)
#define PROF_WRAP_SYMBOL_pthread(sym) extern "C" decltype(sym) __real_##sym;
#define PROF_WRAP_SYMBOL_unwind(sym)
#define PROF_WRAP_SYMBOL_exec(sym)
#include "adapters/static_wraps.def"
#undef PROF_WRAP_SYMBOL_pthread
#define PROF_REAL(name, slot) (PROF_STATIC_LISTED(name), &__real_##name)
#else
#define PROF_REAL(name, slot) prof::wrap::next(slot, #name)
#endif

extern "C" {

PROF_API extern const prof_adapter prof_adapter_pthread = {"pthread", &adapter_init, nullptr, nullptr, nullptr};

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_create)(pthread_t* thread, const pthread_attr_t* attr, void* (*fn)(void*), void* arg) {
  create_fn rc = PROF_REAL(pthread_create, r_create);
  // also false when the adapter is not linked; prof's own thread (the signal writer) is no location
  if (!g_create_on || prof::runtime::t_creating_own_thread) return rc(thread, attr, fn, arg);
  // A runtime's own threads (the CUDA driver's, CUPTI's) are not the program's: no location.
  if (prof::runtime::creates_ignored_threads(__builtin_return_address(0))) return rc(thread, attr, fn, arg);
  prof::InProf in;
  if (!in.loc) return rc(thread, attr, fn, arg);
  auto* a = static_cast<StartArgs*>(std::malloc(sizeof(StartArgs)));
  if (!a) return rc(thread, attr, fn, arg);
  a->fn = fn;
  a->arg = arg;
  a->seq = prof::runtime::next_thread_seq();
  prof::enter(in.loc, g_region[kCreate], PROF_CFA());
  prof::event(in.loc, prof::timer::now(), RecordType::ThreadCreate, 0, a->seq);
  std::uint64_t seq = a->seq;
  int r = rc(thread, attr, &trampoline, a);
  if (r == 0) {
    std::lock_guard<std::mutex> lock(*g_seq_mutex);
    (*g_seq)[*thread] = seq;
  } else {
    std::free(a);
  }
  prof::leave(in.loc, g_region[kCreate], PROF_CFA());
  return r;
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_join)(pthread_t thread, void** ret) {
  join_fn rj = PROF_REAL(pthread_join, r_join);
  if (!g_create_on) return rj(thread, ret);
  prof::InProf in;
  if (!in.loc) return rj(thread, ret);
  prof::enter(in.loc, g_region[kJoin], PROF_CFA());
  in.pause();
  int r = rj(thread, ret);
  if (!in.resume()) return r;
  if (r == 0) {
    std::uint64_t seq = 0;
    {
      std::lock_guard<std::mutex> lock(*g_seq_mutex);
      auto it = g_seq->find(thread);
      if (it != g_seq->end()) {
        seq = it->second;
        g_seq->erase(it);
      }
    }
    if (seq) prof::event(in.loc, prof::timer::now(), RecordType::ThreadWait, 0, seq);
  }
  prof::leave(in.loc, g_region[kJoin], PROF_CFA());
  return r;
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_detach)(pthread_t thread) {
  one_fn rd = PROF_REAL(pthread_detach, r_detach);
  if (g_create_on && g_seq_mutex) {
    std::lock_guard<std::mutex> lock(*g_seq_mutex);
    g_seq->erase(thread);  // a detached thread is never waited for
  }
  return rd(thread);
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_cancel)(pthread_t thread) {
  one_fn rc = PROF_REAL(pthread_cancel, r_cancel);
  if (!g_create_on) return rc(thread);
  prof::InProf in;
  if (!in.loc) return rc(thread);
  prof::enter(in.loc, g_region[kCancel], PROF_CFA());
  int r = rc(thread);
  prof::leave(in.loc, g_region[kCancel], PROF_CFA());
  return r;
}

// The thread ends here without returning through its frames: close them now, with the right
// time; the key destructor then writes ThreadEnd.
PROF_API PROF_NO_INSTRUMENT [[noreturn]] void PROF_WRAPPER_NAME(pthread_exit)(void* ret) {
  exit_fn re = PROF_REAL(pthread_exit, r_exit);
  if (Location* loc = prof::tls_location) {
    if (!loc->busy && loc->active) {
      loc->busy = true;
      prof::close_all_frames(loc, prof::timer::now());
      loc->busy = false;
    }
  }
  re(ret);
  __builtin_unreachable();
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_mutex_lock)(pthread_mutex_t* m) {
  mutex_fn rl = PROF_REAL(pthread_mutex_lock, r_lock);
  if (!g_mutex_on) return rl(m);
  prof::InProf in(false);
  if (!in.loc) return rl(m);
  prof::enter(in.loc, g_region[kLock], PROF_CFA());
  in.pause();
  int r = rl(m);
  if (!in.resume()) return r;
  if (r == 0) acquired(in.loc, m);
  prof::leave(in.loc, g_region[kLock], PROF_CFA());
  return r;
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_mutex_trylock)(pthread_mutex_t* m) {
  mutex_fn rt = PROF_REAL(pthread_mutex_trylock, r_trylock);
  if (!g_mutex_on) return rt(m);
  prof::InProf in(false);
  if (!in.loc) return rt(m);
  prof::enter(in.loc, g_region[kTrylock], PROF_CFA());
  int r = rt(m);
  if (r == 0) acquired(in.loc, m);  // EBUSY: no lock was taken, no event
  prof::leave(in.loc, g_region[kTrylock], PROF_CFA());
  return r;
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_mutex_timedlock)(pthread_mutex_t* m, const struct timespec* abstime) {
  timedlock_fn rt = PROF_REAL(pthread_mutex_timedlock, r_timedlock);
  if (!g_mutex_on) return rt(m, abstime);
  prof::InProf in(false);
  if (!in.loc) return rt(m, abstime);
  prof::enter(in.loc, g_region[kTimedlock], PROF_CFA());
  in.pause();
  int r = rt(m, abstime);
  if (!in.resume()) return r;
  if (r == 0) acquired(in.loc, m);  // ETIMEDOUT: not acquired
  prof::leave(in.loc, g_region[kTimedlock], PROF_CFA());
  return r;
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_mutex_unlock)(pthread_mutex_t* m) {
  mutex_fn ru = PROF_REAL(pthread_mutex_unlock, r_unlock);
  if (!g_mutex_on) return ru(m);
  prof::InProf in(false);
  if (!in.loc) return ru(m);
  prof::enter(in.loc, g_region[kUnlock], PROF_CFA());
  releasing(in.loc, m, false);
  int r = ru(m);
  prof::leave(in.loc, g_region[kUnlock], PROF_CFA());
  return r;
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_cond_wait)(pthread_cond_t* c, pthread_mutex_t* m) {
  cond_wait_fn rw = PROF_REAL(pthread_cond_wait, r_wait);
  if (!g_cond_on) return rw(c, m);
  prof::InProf in(false);
  if (!in.loc) return rw(c, m);
  prof::enter(in.loc, g_region[kWait], PROF_CFA());
  releasing(in.loc, m, true);
  in.pause();
  int r = rw(c, m);
  if (!in.resume()) return r;
  acquired(in.loc, m);  // the mutex is held again whatever the result
  prof::leave(in.loc, g_region[kWait], PROF_CFA());
  return r;
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_cond_timedwait)(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* t) {
  cond_timedwait_fn rw = PROF_REAL(pthread_cond_timedwait, r_timedwait);
  if (!g_cond_on) return rw(c, m, t);
  prof::InProf in(false);
  if (!in.loc) return rw(c, m, t);
  prof::enter(in.loc, g_region[kTimedwait], PROF_CFA());
  releasing(in.loc, m, true);
  in.pause();
  int r = rw(c, m, t);
  if (!in.resume()) return r;
  acquired(in.loc, m);  // also after ETIMEDOUT: the mutex is reacquired before returning
  prof::leave(in.loc, g_region[kTimedwait], PROF_CFA());
  return r;
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_cond_signal)(pthread_cond_t* c) {
  cond_fn rs = PROF_REAL(pthread_cond_signal, r_signal);
  if (!g_cond_on) return rs(c);
  prof::InProf in(false);
  if (!in.loc) return rs(c);
  prof::enter(in.loc, g_region[kSignal], PROF_CFA());
  int r = rs(c);
  prof::leave(in.loc, g_region[kSignal], PROF_CFA());
  return r;
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(pthread_cond_broadcast)(pthread_cond_t* c) {
  cond_fn rb = PROF_REAL(pthread_cond_broadcast, r_broadcast);
  if (!g_cond_on) return rb(c);
  prof::InProf in(false);
  if (!in.loc) return rb(c);
  prof::enter(in.loc, g_region[kBroadcast], PROF_CFA());
  int r = rb(c);
  prof::leave(in.loc, g_region[kBroadcast], PROF_CFA());
  return r;
}

}  // extern "C"

#ifdef PROF_STATIC_WRAP
// Every pthread line of static_wraps.def has its wrapper above.
#define PROF_WRAP_SYMBOL_pthread(sym) \
  static_assert(std::is_function_v<decltype(__wrap_##sym)>, "static_wraps.def lists " #sym " without a wrapper");
#include "adapters/static_wraps.def"
#endif
