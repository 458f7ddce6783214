// SPDX-License-Identifier: BSD-3-Clause
// dlclose may unload code, after which another library can be mapped at the same addresses:
// the address → region mappings are then forgotten (libprof.so only; static programs rarely
// unload code and have no RTLD_NEXT).
#include <dlfcn.h>

#include "measurement/runtime.hpp"

extern "C" PROF_API PROF_NO_INSTRUMENT int dlclose(void* handle) {
  using dlclose_fn = int (*)(void*);
  static dlclose_fn real = reinterpret_cast<dlclose_fn>(dlsym(RTLD_NEXT, "dlclose"));
  int r = real(handle);
  if (r == 0) prof::runtime::code_unloaded();
  return r;
}
