// SPDX-License-Identifier: BSD-3-Clause
// The compiler adapter: GCC/clang -finstrument-functions hooks → prof::enter/leave.
#include <cerrno>

#include "adapters/adapter.hpp"
#include "adapters/compiler/hook.hpp"

namespace {

PROF_COLD PROF_NO_INSTRUMENT prof::RegionId resolve(prof::Location* loc, void* fn) {
  int saved = errno;
  prof::RegionId r = prof::regions::for_address(fn);
  loc->cache.insert(fn, r);
  errno = saved;
  return r;
}

/// The region of a hook address: the thread's cache, then the process table (symbols).
struct ByAddress {
  static constexpr bool kAddressCache = true;
  PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE static prof::RegionId region(prof::Location* loc, void* fn) {
    prof::RegionId r = loc->cache.find(fn);
    if (PROF_UNLIKELY(r == prof::kNoRegion)) r = resolve(loc, fn);
    return r;
  }
  PROF_NO_INSTRUMENT PROF_ALWAYS_INLINE static prof::RegionId known_region(prof::Location* loc, void* fn) { return loc->cache.find(fn); }
};

}  // namespace

extern "C" {

PROF_API PROF_NO_INSTRUMENT void __cyg_profile_func_enter(void* fn, void*) {
  prof::compiler_hook::event<ByAddress, true>(fn, PROF_CALLER_CFA());
}

PROF_API PROF_NO_INSTRUMENT void __cyg_profile_func_exit(void* fn, void*) {
  prof::compiler_hook::event<ByAddress, false>(fn, PROF_CALLER_CFA());
}

PROF_API extern const prof_adapter prof_adapter_compiler = {"compiler", nullptr, nullptr, nullptr, nullptr};

}  // extern "C"
