// SPDX-License-Identifier: BSD-3-Clause
// Interposers that tell the shadow stack about frames left without exit hooks: longjmp (no
// hooks at all) and a caught exception (clang calls no exit hook while unwinding; GCC does,
// so for GCC this finds nothing to repair).
#include <dlfcn.h>

#include "measurement/events.hpp"

struct __jmp_buf_tag;

namespace {
template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

PROF_NO_INSTRUMENT inline void note_longjmp() {
  if (prof::Location* loc = prof::tls_location) loc->unwind_check = true;
}
}  // namespace

extern "C" {

using longjmp_fn = void (*)(__jmp_buf_tag*, int);

PROF_API PROF_NO_INSTRUMENT [[noreturn]] void longjmp(__jmp_buf_tag* env, int val) {
  static longjmp_fn real = next<longjmp_fn>("longjmp");
  note_longjmp();
  real(env, val);
  __builtin_unreachable();
}

PROF_API PROF_NO_INSTRUMENT [[noreturn]] void _longjmp(__jmp_buf_tag* env, int val) {
  static longjmp_fn real = next<longjmp_fn>("_longjmp");
  note_longjmp();
  real(env, val);
  __builtin_unreachable();
}

PROF_API PROF_NO_INSTRUMENT [[noreturn]] void siglongjmp(__jmp_buf_tag* env, int val) {
  static longjmp_fn real = next<longjmp_fn>("siglongjmp");
  note_longjmp();
  real(env, val);
  __builtin_unreachable();
}

PROF_API PROF_NO_INSTRUMENT [[noreturn]] void __longjmp_chk(__jmp_buf_tag* env, int val) {
  static longjmp_fn real = next<longjmp_fn>("__longjmp_chk");
  note_longjmp();
  real(env, val);
  __builtin_unreachable();
}

using begin_catch_fn = void* (*)(void*);

// Called by the handler that catches: frames deeper than the handler's are gone.
PROF_API PROF_NO_INSTRUMENT void* __cxa_begin_catch(void* exc) noexcept {
  static begin_catch_fn real = next<begin_catch_fn>("__cxa_begin_catch");
  prof::Location* loc = prof::tls_location;
  if (loc && !loc->busy && loc->active && loc->depth) {
    loc->busy = true;
    prof::unwind_to(loc, reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa()));
    loc->busy = false;
  }
  return real(exc);
}

}  // extern "C"
