// SPDX-License-Identifier: BSD-3-Clause
// The wrapper layer shared by the interposers (pthread.cpp, unwind.cpp, openmp/gomp.cpp). In libprof.so a wrapper
// carries the function's own name and finds the real one with dlsym(RTLD_NEXT); in libprof.a
// (-DPROF_STATIC_WRAP) it is __wrap_<name> and the real one is __real_<name> (ld --wrap, which
// prof-wrap passes for every symbol of static_wraps.def).
#pragma once

#ifdef PROF_STATIC_WRAP
namespace prof_static_wraps {
#define PROF_WRAP_SYMBOL(file, sym) listed_##sym,
enum Listed {
#include "adapters/static_wraps.def"
};
#undef PROF_WRAP_SYMBOL
}  // namespace prof_static_wraps
#define PROF_WRAPPER_NAME(name) __wrap_##name
/// Compiles only for symbols listed in static_wraps.def, so the --wrap list cannot miss one.
#define PROF_STATIC_LISTED(name) static_cast<void>(prof_static_wraps::listed_##name)
#else
#define PROF_WRAPPER_NAME(name) name

#include <dlfcn.h>

namespace prof::wrap {
/// `name` when no library after libprof defines it: the library that should (libgomp for GOMP_*
/// and omp_*, which a link with --as-needed drops when the program calls only functions libprof
/// wraps), opened now; without one, one line and abort (the fault handler writes the data).
/// Never returns null.
void* find_missing(const char* name);

/// The real implementation of `name`: the next definition after libprof (dlsym RTLD_NEXT),
/// cached in `slot`, resolved on first use without any lock or guarded static (a guard could
/// itself lock a mutex and recurse into a wrapper). Never null.
template <class F>
F next(F& slot, const char* name) {
  F f = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  if (!f) {
    void* p = dlsym(RTLD_NEXT, name);
    if (!p) p = find_missing(name);
    f = reinterpret_cast<F>(p);
    __atomic_store_n(&slot, f, __ATOMIC_RELEASE);
  }
  return f;
}
}  // namespace prof::wrap
#endif
