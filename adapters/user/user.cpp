// SPDX-License-Identifier: BSD-3-Clause
// The user adapter: implements <prof/user.h>.
#include "prof/user.h"

#include <cerrno>
#include <cstddef>
#include <string>

#include "adapters/adapter.hpp"
#include "measurement/definitions/symbols.hpp"
#include "measurement/events.hpp"

namespace {
PROF_COLD PROF_NO_INSTRUMENT prof::RegionId define(prof_user_handle* handle, const char* name, const char* file, int line) {
  int saved = errno;
  prof::regions::RegionDef def;
  def.name = name ? name : "(null)";
  def.canonical = def.name;
  def.file = file ? file : "";
  def.begin_line = line;
  def.paradigm = prof::regions::Paradigm::User;
  def.role = prof::regions::Role::Function;
  prof::RegionId id = prof::regions::define(def);
  __atomic_store_n(handle, id + 1, __ATOMIC_RELEASE);
  errno = saved;
  return id;
}
}  // namespace

extern "C" {

PROF_API PROF_NO_INSTRUMENT void prof_user_region_begin(prof_user_handle* handle, const char* name, const char* file, int line) {
  prof::InProf in;
  if (!in.loc) return;
  prof_user_handle h = __atomic_load_n(handle, __ATOMIC_ACQUIRE);
  prof::RegionId id = h ? h - 1 : define(handle, name, file, line);
  prof::enter(in.loc, id, reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa()));
}

PROF_API PROF_NO_INSTRUMENT void prof_user_region_end(prof_user_handle* handle) {
  prof::InProf in;
  if (!in.loc) return;
  prof_user_handle h = __atomic_load_n(handle, __ATOMIC_ACQUIRE);
  if (!h) {
    ++in.loc->unmatched_leaves;
    return;
  }
  prof::leave(in.loc, h - 1, reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa()));
}

PROF_API PROF_NO_INSTRUMENT void prof_recording_off(void) { prof::set_recording(false); }
PROF_API PROF_NO_INSTRUMENT void prof_recording_on(void) { prof::set_recording(true); }
PROF_API PROF_NO_INSTRUMENT int prof_recording_is_on(void) { return prof::g_recording ? 1 : 0; }

// Fortran (the prof_user module, measurement/include/prof/prof_user.f90): gfortran's names and
// calling convention, a CHARACTER's length passed after the other arguments. The region's file
// and line are the call's (the line table of its return address).
PROF_API PROF_NO_INSTRUMENT void prof_region_begin_(prof_user_handle* handle, const char* name, std::size_t len) {
  if (!__atomic_load_n(handle, __ATOMIC_ACQUIRE)) {
    std::size_t n = len;
    while (n > 0 && name[n - 1] == ' ') --n;  // a Fortran string's trailing blanks
    std::string file;
    int line = -1;
    if (!prof::symbols::source_position(static_cast<const char*>(__builtin_return_address(0)) - 1, &file, &line)) line = -1;
    const std::string s(name, n);
    prof::InProf in;
    if (in.loc) define(handle, s.c_str(), file.c_str(), line);
  }
  prof_user_region_begin(handle, nullptr, nullptr, -1);
}
PROF_API PROF_NO_INSTRUMENT void prof_region_end_(prof_user_handle* handle) { prof_user_region_end(handle); }
PROF_API PROF_NO_INSTRUMENT void prof_recording_off_() { prof::set_recording(false); }
PROF_API PROF_NO_INSTRUMENT void prof_recording_on_() { prof::set_recording(true); }
PROF_API PROF_NO_INSTRUMENT int prof_recording_is_on_() { return prof::g_recording ? 1 : 0; }

PROF_API extern const prof_adapter prof_adapter_user = {"user", nullptr, nullptr, nullptr, nullptr};

}  // extern "C"
