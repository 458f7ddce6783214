// SPDX-License-Identifier: BSD-3-Clause
// Finds the adapter list prof-wrap generated into the executable (a weak reference, so a
// program without one, e.g. under LD_PRELOAD, falls back to libprof's own adapters).
#include "adapters/adapter.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>

#include "measurement/compiler.hpp"

extern "C" {
// Weak, so the core (and its unit tests) links without the adapters.
extern const prof_adapter prof_adapter_compiler __attribute__((weak));
extern const prof_adapter prof_adapter_user __attribute__((weak));
extern const prof_adapter prof_adapter_pthread __attribute__((weak));
extern const prof_adapter prof_adapter_openmp __attribute__((weak));
extern const prof_adapter* const prof_linked_adapters[] __attribute__((weak));
// Defined by the adapter list of a program linked with prof-wrap --mpp=none.
extern const int prof_mpi_adapter_declined __attribute__((weak));
}

namespace prof::adapters {

namespace {
constexpr int kMaxAdapters = 16;
// The program's list (or libprof's own adapters), then those started later (add()); readers
// walk it up to the first nullptr while add() may append, so each slot is written once, atomically.
std::atomic<const prof_adapter*> g_list[kMaxAdapters + 1];
std::once_flag g_list_once;
std::mutex g_add_mutex;
int g_count = 0;

void fill_list() {
  std::call_once(g_list_once, [] {
    int n = 0;
    if (prof_linked_adapters) {
      for (const prof_adapter* const* a = prof_linked_adapters; *a && n < kMaxAdapters; ++a) g_list[n++].store(*a);
    } else {
      for (const prof_adapter* a : {&prof_adapter_compiler, &prof_adapter_user, &prof_adapter_pthread, &prof_adapter_openmp})
        if (a) g_list[n++].store(a);
    }
    g_count = n;
  });
}
}  // namespace

const prof_adapter* const* linked() {
  fill_list();
  static_assert(sizeof(std::atomic<const prof_adapter*>) == sizeof(const prof_adapter*), "a plain pointer array");
  return reinterpret_cast<const prof_adapter* const*>(g_list);
}

bool add(const prof_adapter* adapter) {
  fill_list();
  std::lock_guard<std::mutex> lock(g_add_mutex);
  for (int i = 0; i < g_count; ++i)
    if (g_list[i].load() == adapter) return false;
  if (g_count >= kMaxAdapters) return false;
  g_list[g_count++].store(adapter);
  return true;
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
