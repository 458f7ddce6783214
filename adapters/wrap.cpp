// SPDX-License-Identifier: BSD-3-Clause
// The slow path of prof::wrap::next (wrap.hpp): a wrapped function that no library after libprof
// defines. Debian links with --as-needed, so a gcc -fopenmp program whose only OpenMP calls are
// GOMP_* functions, which libprof.so defines, loses its libgomp: the real ones are not loaded.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "adapters/wrap.hpp"
#include "measurement/log.hpp"

namespace prof::wrap {

namespace {
/// The library that defines `name`, by its prefix (nullptr: none known).
const char* provider_of(const char* name) {
  if (std::strncmp(name, "GOMP_", 5) == 0 || std::strncmp(name, "omp_", 4) == 0) return "libgomp.so.1";
  if (std::strncmp(name, "_Unwind_", 8) == 0) return "libgcc_s.so.1";
  if (std::strncmp(name, "__cxa_", 6) == 0) return "libstdc++.so.6";
  return nullptr;
}
}  // namespace

void* find_missing(const char* name) {
  const char* lib = provider_of(name);
  if (lib) {
    // RTLD_GLOBAL: the program's later omp_* calls and libgomp's own lookups find the same copy.
    if (void* h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL))
      if (void* f = dlsym(h, name)) return f;
    const char* why = dlerror();
    log::error("the program calls %s, which no library of the process defines, and %s cannot be loaded (%s); "
               "link it (e.g. -fopenmp at the link, or -Wl,--no-as-needed -lgomp)",
               name, lib, why ? why : "it does not define it");
  } else {
    log::error("the program calls %s, which prof wraps but no library of the process defines; link the library "
               "that provides it", name);
  }
  std::abort();
}

}  // namespace prof::wrap
