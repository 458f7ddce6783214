// SPDX-License-Identifier: BSD-3-Clause
// Finds the adapter list prof-wrap generated into the executable (a weak reference, so a
// program without one, e.g. under LD_PRELOAD, falls back to libprof's own adapters).
#include "adapters/adapter.hpp"

#include <initializer_list>

#include "measurement/compiler.hpp"

extern "C" {
// Weak, so the core (and its unit tests) links without the adapters.
extern const prof_adapter prof_adapter_compiler __attribute__((weak));
extern const prof_adapter prof_adapter_user __attribute__((weak));
extern const prof_adapter prof_adapter_pthread __attribute__((weak));
extern const prof_adapter* const prof_linked_adapters[] __attribute__((weak));
}

namespace prof::adapters {

const prof_adapter* const* linked() {
  if (prof_linked_adapters) return prof_linked_adapters;
  static const prof_adapter* kAll[4] = {};
  if (!kAll[0]) {
    int n = 0;
    for (const prof_adapter* a : {&prof_adapter_compiler, &prof_adapter_user, &prof_adapter_pthread})
      if (a) kAll[n++] = a;
  }
  return kAll;
}

}  // namespace prof::adapters
