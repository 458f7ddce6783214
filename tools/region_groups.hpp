// SPDX-License-Identifier: BSD-3-Clause
// How prof's tools (prof-score, prof-report) group the regions of a profile: by paradigm, like
// scorep-score (USR, COM, MPI, CUDA, GPU, ...), and what a region on a GPU stream is.
#pragma once

#include <map>
#include <string>

#include "tools/cube4_reader.hpp"

namespace prof::region_groups {

enum class GpuKind { Kernel, Copy, Memset };

/// What a region on a GPU stream is: copies and memsets have the role "data transfer".
inline GpuKind gpu_kind(const cube4::Region& r) {
  if (r.role != "data transfer") return GpuKind::Kernel;
  if (r.name.find("emset") != std::string::npos) return GpuKind::Memset;  // "cudaMemset"
  return GpuKind::Copy;
}

/// Whether a copy writes RMA events: every direction with a device (or array or peer) side;
/// not host-to-host copies and not copies of unknown direction ("cudaMemcpy").
inline bool copy_has_rma(const cube4::Region& r) {
  const std::string& n = r.name;
  const bool host_to_host = n.size() >= 4 && n.compare(n.size() - 4, 4, "HtoH") == 0;
  return gpu_kind(r) == GpuKind::Copy && n.find(' ') != std::string::npos && !host_to_host;
}

// GPU: the activities on GPU stream locations (kernels, copies, memsets), apart from the host's
// CUDA API calls (CUDA).
enum class Group { ALL, USR, COM, PROF, PTHREAD, MPI, OMP, CUDA, GPU, SHMEM, OPENCL, OPENACC, HIP, KOKKOS, IO, MEMORY, LIB, COUNT };
inline const char* const kGroupName[] = {"ALL",   "USR",    "COM",     "PROF", "PTHREAD", "MPI", "OMP",    "CUDA", "GPU",
                                  "SHMEM", "OPENCL", "OPENACC", "HIP",  "KOKKOS",  "IO",  "MEMORY", "LIB"};
static_assert(sizeof kGroupName / sizeof *kGroupName == static_cast<std::size_t>(Group::COUNT), "one name per group");

/// The group of a region by its paradigm; user code is USR here and becomes COM later when it
/// leads to a call of another paradigm.
inline Group paradigm_group(const std::string& paradigm) {
  static const std::map<std::string, Group> kByParadigm = {
      {"compiler", Group::USR},      {"user", Group::USR},       {"sampling", Group::USR},      {"python", Group::USR},
      {"", Group::USR},              {"measurement", Group::PROF}, {"pthread", Group::PTHREAD}, {"mpi", Group::MPI},
      {"openmp", Group::OMP},        {"cuda", Group::CUDA},      {"shmem", Group::SHMEM},    {"opencl", Group::OPENCL},
      {"openacc", Group::OPENACC},   {"hip", Group::HIP},        {"kokkos", Group::KOKKOS},  {"io", Group::IO},
      {"memory", Group::MEMORY},     {"libwrap", Group::LIB},
  };
  auto it = kByParadigm.find(paradigm);
  if (it != kByParadigm.end()) return it->second;
  // Score-P writes sub-paradigms such as "kokkos:..."; anything else unknown counts as user code.
  if (paradigm.rfind("kokkos", 0) == 0) return Group::KOKKOS;
  if (paradigm.rfind("hip", 0) == 0) return Group::HIP;
  return Group::USR;
}

inline bool is_user(Group g) { return g == Group::USR || g == Group::COM; }

}  // namespace prof::region_groups
