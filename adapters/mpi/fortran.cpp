// SPDX-License-Identifier: BSD-3-Clause
// The helpers of the generated Fortran wrappers (fortran.hpp).
#include "adapters/mpi/fortran.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

// Open MPI only: its sentinels' names (fortran.hpp), and its bindings' calls into PMPI_, which make
// the scheme record once (other libraries' bindings are unchecked).
#if defined(OPEN_MPI)
namespace prof::mpi::fortran {

void* resolve(std::atomic<void*>& slot, const char* name, const char* pname) {
  // RTLD_NEXT: the MPI library's definition of the symbol the program called (libprof_mpi comes
  // before it). The profiling entry is the same function where no next definition is visible
  // (libprof_mpi loaded behind the bindings); it is never prof's own.
  void* p = ::dlsym(RTLD_NEXT, name);
  if (!p) p = ::dlsym(RTLD_DEFAULT, pname);
  if (!p) {
    const std::string text = std::string("the program called the Fortran MPI binding ") + name + " but neither " + name +
                             " nor " + pname + " is defined by the loaded MPI libraries; link the program with its MPI "
                             "compiler wrapper (mpifort)";
    api::error(text.c_str());
    std::abort();
  }
  slot.store(p, std::memory_order_release);  // a race stores the same pointer twice
  return p;
}

int peers(MPI_Comm comm) {
  int inter = 0, n = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) PMPI_Comm_remote_size(comm, &n);
  else PMPI_Comm_size(comm, &n);
  return n;
}

Frame& frame() {
  // One per nesting level, as semantics' scratch(): an MPI call from a callback inside another
  // MPI call must not overwrite the outer call's views while its real call may still use them.
  constexpr int kLevels = 8;
  static thread_local Frame f[kLevels];
  const int depth = call_depth();
  return f[depth < 1 ? 0 : (depth > kLevels ? kLevels - 1 : depth - 1)];
}

namespace {
std::size_t size(int count) { return static_cast<std::size_t>(count > 0 ? count : 0); }
}  // namespace

MPI_Request* requests(Frame& fr, const MPI_Fint* f, int count) {
  fr.requests.resize(size(count));
  for (std::size_t i = 0; i < fr.requests.size(); ++i) fr.requests[i] = PMPI_Request_f2c(f[i]);
  return fr.requests.data();
}

const MPI_Datatype* types(std::vector<MPI_Datatype>& out, const MPI_Fint* f, int count) {
  out.resize(size(count));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = PMPI_Type_f2c(f[i]);
  return out.data();
}

MPI_Fint* statuses_or(Frame& fr, MPI_Fint* f, int count) {
  if (f != mpi_fortran_statuses_ignore_) return f;
  fr.own_statuses.assign(size(count) * kStatusSize, 0);
  return fr.own_statuses.data();
}

MPI_Status* c_statuses(Frame& fr, int count) {
  fr.statuses.resize(size(count));
  return fr.statuses.data();
}

void to_c(const MPI_Fint* f, MPI_Status* c, int count) {
  for (int i = 0; i < count; ++i) PMPI_Status_f2c(f + static_cast<std::size_t>(i) * kStatusSize, &c[i]);
}

int* c_indices(Frame& fr, int count) {
  fr.indices.resize(size(count));
  return fr.indices.data();
}

void zero_based(const MPI_Fint* f, int* c, int count) {
  for (int i = 0; i < count; ++i) c[i] = zero_based(f[i]);
}

}  // namespace prof::mpi::fortran
#endif  // OPEN_MPI
