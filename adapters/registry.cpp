// SPDX-License-Identifier: BSD-3-Clause
// Finds the adapter list prof-wrap generated into the executable (a weak reference, so a
// program without one, e.g. under LD_PRELOAD, falls back to libprof's own adapters).
#include "adapters/adapter.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "measurement/compiler.hpp"

extern "C" {
// Weak, so the core (and its unit tests) links without the adapters.
extern const prof_adapter prof_adapter_compiler __attribute__((weak));
extern const prof_adapter prof_adapter_user __attribute__((weak));
extern const prof_adapter prof_adapter_pthread __attribute__((weak));
extern const prof_adapter* const prof_linked_adapters[] __attribute__((weak));
// Defined by the adapter list of a program linked with prof-wrap --mpp=none.
extern const int prof_mpi_adapter_declined __attribute__((weak));
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

const char* missing_mpi_adapter() {
  if (&prof_mpi_adapter_declined) return nullptr;
  for (const prof_adapter* const* a = linked(); *a; ++a)
    if (std::strcmp((*a)->name, "mpi") == 0) return nullptr;
  // PMPI_Init: every MPI library defines it; a serial build's MPI stand-in rarely does.
  if (!::dlsym(RTLD_DEFAULT, "PMPI_Init")) return nullptr;
  // The ranks cannot be told apart without the adapter; the launchers' variables can: rank 0 says it.
  for (const char* rank : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(rank); v && std::strcmp(v, "0") != 0) return nullptr;
  return "this program has an MPI library loaded but was linked without prof's MPI adapter: MPI calls are not recorded "
         "and each rank writes its own experiment; link it with prof-wrap mpicc or mpicxx, or add --mpp=mpi to prof-wrap";
}

}  // namespace prof::adapters
