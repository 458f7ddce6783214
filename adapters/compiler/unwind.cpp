// SPDX-License-Identifier: BSD-3-Clause
// Interposers that tell the shadow stack about frames left without exit hooks: longjmp (no
// hooks at all) and a caught exception (clang calls no exit hook while unwinding; GCC does,
// so for GCC this finds nothing to repair).
// Compiled a second time with -DPROF_STATIC_WRAP for libprof.a: there the functions are
// __wrap_<name> and call __real_<name> (ld --wrap, passed by prof-wrap for -static links).
#ifndef PROF_STATIC_WRAP
#include <dlfcn.h>
#endif

#include <type_traits>

#include "adapters/wrap.hpp"
#include "measurement/events.hpp"

struct __jmp_buf_tag;

namespace {
#ifndef PROF_STATIC_WRAP
template <class F>
F next(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  return reinterpret_cast<F>(p ? p : prof::wrap::find_missing(name));
}
#endif

PROF_NO_INSTRUMENT inline void note_longjmp() {
  if (prof::Location* loc = prof::tls_location) loc->unwind_check = true;
}
}  // namespace

// Each wrapper below is written once (adapters/wrap.hpp); PROF_REAL(f, type) is the real f.
#ifdef PROF_STATIC_WRAP
extern "C" {
[[noreturn]] void __real_longjmp(__jmp_buf_tag*, int);
[[noreturn]] void __real__longjmp(__jmp_buf_tag*, int);
[[noreturn]] void __real_siglongjmp(__jmp_buf_tag*, int);
[[noreturn]] void __real___longjmp_chk(__jmp_buf_tag*, int);
void* __real___cxa_begin_catch(void*) noexcept;
}
#define PROF_REAL(name, type) (PROF_STATIC_LISTED(name), type{&__real_##name})
#else
#define PROF_REAL(name, type) next<type>(#name)
#endif

extern "C" {

using longjmp_fn = void (*)(__jmp_buf_tag*, int);

PROF_API PROF_NO_INSTRUMENT [[noreturn]] void PROF_WRAPPER_NAME(longjmp)(__jmp_buf_tag* env, int val) {
  static longjmp_fn real = PROF_REAL(longjmp, longjmp_fn);
  note_longjmp();
  real(env, val);
  __builtin_unreachable();
}

PROF_API PROF_NO_INSTRUMENT [[noreturn]] void PROF_WRAPPER_NAME(_longjmp)(__jmp_buf_tag* env, int val) {
  static longjmp_fn real = PROF_REAL(_longjmp, longjmp_fn);
  note_longjmp();
  real(env, val);
  __builtin_unreachable();
}

PROF_API PROF_NO_INSTRUMENT [[noreturn]] void PROF_WRAPPER_NAME(siglongjmp)(__jmp_buf_tag* env, int val) {
  static longjmp_fn real = PROF_REAL(siglongjmp, longjmp_fn);
  note_longjmp();
  real(env, val);
  __builtin_unreachable();
}

PROF_API PROF_NO_INSTRUMENT [[noreturn]] void PROF_WRAPPER_NAME(__longjmp_chk)(__jmp_buf_tag* env, int val) {
  static longjmp_fn real = PROF_REAL(__longjmp_chk, longjmp_fn);
  note_longjmp();
  real(env, val);
  __builtin_unreachable();
}

using begin_catch_fn = void* (*)(void*);

// Called by the handler that catches: frames deeper than the handler's are gone.
PROF_API PROF_NO_INSTRUMENT void* PROF_WRAPPER_NAME(__cxa_begin_catch)(void* exc) noexcept {
  static begin_catch_fn real = PROF_REAL(__cxa_begin_catch, begin_catch_fn);
  prof::Location* loc = prof::tls_location;
  if (loc && !loc->busy && loc->active && loc->depth) {
    loc->busy = true;
    prof::unwind_to(loc, reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa()));
    loc->busy = false;
  }
  return real(exc);
}

}  // extern "C"

#ifdef PROF_STATIC_WRAP
// Every unwind line of static_wraps.def has its wrapper above.
#define PROF_WRAP_SYMBOL(file, sym) PROF_WRAP_SYMBOL_##file(sym)
#define PROF_WRAP_SYMBOL_pthread(sym)
#define PROF_WRAP_SYMBOL_exec(sym)
#define PROF_WRAP_SYMBOL_unwind(sym) \
  static_assert(std::is_function_v<decltype(__wrap_##sym)>, "static_wraps.def lists " #sym " without a wrapper");
#include "adapters/static_wraps.def"
#endif
