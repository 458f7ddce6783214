// SPDX-License-Identifier: BSD-3-Clause
// The user adapter: implements <prof/user.h>.
#include "prof/user.h"

#include <cerrno>

#include "adapters/adapter.hpp"
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

PROF_API extern const prof_adapter prof_adapter_user = {"user", nullptr, nullptr, nullptr, nullptr};

}  // extern "C"
