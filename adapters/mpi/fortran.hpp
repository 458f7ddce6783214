// SPDX-License-Identifier: BSD-3-Clause
// What the generated Fortran wrappers (generate.py, Open MPI only) need: the real binding they
// forward to, and the C view of Fortran arguments that the semantics (semantics.hpp) read.
//
// Open MPI's Fortran bindings (mpif.h and `use mpi`: mpi_send_ and its manglings in
// libmpi_mpifh; `use mpi_f08`: mpi_send_f08_ in libmpi_usempif08) convert their arguments and call
// PMPI_ C functions directly, so the C wrappers never see a Fortran call. libprof_mpi therefore
// defines the Fortran symbols too: each wrapper records the call like the C one (same region,
// same semantics, on C views of its arguments) and forwards the Fortran arguments unchanged to the
// next definition of the same symbol (dlsym(RTLD_NEXT)), which does the real conversion. Nothing
// below that records again: the bindings call PMPI_ or pmpi_*_ (never MPI_ nor mpi_*_), checked
// by tests/e2e/mpi's Fortran programs, whose Enter counts must equal their calls.
#pragma once

#include <atomic>
#include <vector>

#include "adapters/mpi/mpi_adapter.hpp"

extern "C" {
// Open MPI's Fortran sentinels (MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS(ES)_IGNORE): common blocks
// of mpif.h and `use mpi`, module variables bound to the same names in mpi_f08. Every library
// and the program refer to one interposed definition, so an argument is a sentinel when its
// address is that definition's.
extern MPI_Fint mpi_fortran_bottom_;
extern MPI_Fint mpi_fortran_in_place_;
extern MPI_Fint mpi_fortran_status_ignore_[];
extern MPI_Fint mpi_fortran_statuses_ignore_[];
}

namespace prof::mpi::fortran {

static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are read as int arrays");
/// MPI_STATUS_SIZE: a Fortran status (an INTEGER array, or mpi_f08's TYPE(MPI_Status), which has
/// the same layout in Open MPI) is the C MPI_Status's bytes.
constexpr int kStatusSize = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));
static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "a status is a whole number of INTEGERs");

/// The real definition of Fortran symbol `name` (the next one after libprof_mpi), else the
/// profiling entry `pname`; cached in `slot`. Neither found: one error line, then abort (the
/// program called a binding its MPI library does not have).
void* resolve(std::atomic<void*>& slot, const char* name, const char* pname);
template <class Fn>
Fn next(std::atomic<void*>& slot, const char* name, const char* pname) {
  void* p = slot.load(std::memory_order_acquire);
  if (!p) p = resolve(slot, name, pname);
  return reinterpret_cast<Fn>(p);
}

/// A choice buffer as C sees it: MPI_IN_PLACE and MPI_BOTTOM for the Fortran sentinels.
inline void* buffer(void* f) {
  if (f == &mpi_fortran_in_place_) return MPI_IN_PLACE;
  if (f == &mpi_fortran_bottom_) return MPI_BOTTOM;
  return f;
}
/// The status the real call writes: the user's, or `own` where the user passed MPI_STATUS_IGNORE
/// (the semantics need source, tag and size of every receive).
inline MPI_Fint* status_or(MPI_Fint* f, MPI_Fint* own) { return f == mpi_fortran_status_ignore_ ? own : f; }
/// A 1-based Fortran index as C's (MPI_UNDEFINED stays).
inline int zero_based(MPI_Fint i) { return i == MPI_UNDEFINED ? MPI_UNDEFINED : i - 1; }
/// The ranks a collective's per-rank arrays have entries for (the remote group's on an
/// intercommunicator).
int peers(MPI_Comm comm);

/// Storage for the C views of array arguments of the calling wrapper: one per thread and nesting
/// level, like semantics' Scratch (which the semantics fill themselves, so it cannot be shared).
struct Frame {
  std::vector<MPI_Request> requests;
  std::vector<MPI_Status> statuses;   // C views of the statuses after the call
  std::vector<MPI_Fint> own_statuses; // what the real call writes where the user ignores them
  std::vector<int> indices;
  std::vector<MPI_Datatype> types[2];
};
Frame& frame();

/// C handles of `count` Fortran requests, as they are before the call.
MPI_Request* requests(Frame& fr, const MPI_Fint* f, int count);
/// `count` C datatypes of Fortran handles into `out`.
const MPI_Datatype* types(std::vector<MPI_Datatype>& out, const MPI_Fint* f, int count);
/// The statuses the real call writes: the user's array, or the frame's where MPI_STATUSES_IGNORE.
MPI_Fint* statuses_or(Frame& fr, MPI_Fint* f, int count);
/// Room for `count` C statuses (filled after the call by to_c).
MPI_Status* c_statuses(Frame& fr, int count);
/// The C statuses of `count` Fortran statuses.
void to_c(const MPI_Fint* f, MPI_Status* c, int count);
/// Room for `count` C indices (filled after the call by zero_based).
int* c_indices(Frame& fr, int count);
void zero_based(const MPI_Fint* f, int* c, int count);

}  // namespace prof::mpi::fortran
