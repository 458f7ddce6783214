// SPDX-License-Identifier: BSD-3-Clause
// The interface libprof exports to adapters built as separate libraries (libprof_mpi.so, later
// CUDA): they link against libprof.so, whose internals are hidden, and call only these. Each is
// an out-of-line call, which costs nanoseconds next to the microseconds of an MPI call.
#pragma once

#include <cstdint>

#include "measurement/compiler.hpp"
#include "measurement/config/config.hpp"
#include "measurement/definitions/comms.hpp"
#include "measurement/definitions/regions.hpp"
#include "measurement/record.hpp"

namespace prof {
struct Location;
class Mpp;
}  // namespace prof
extern "C" struct prof_adapter;

namespace prof::api {

/// The calling thread's location, marked busy (inside prof), or nullptr when no event may be
/// written now: measurement off or over, the thread already inside prof, no memory. Pair each
/// non-null result with release().
PROF_API Location* acquire();
PROF_API void release(Location* loc);
/// Whether `loc` records now (recording on, tracing or profiling).
PROF_API bool recording(const Location* loc);
PROF_API Timestamp now();
/// Timer ticks per second (now()'s unit).
PROF_API std::uint64_t ticks_per_second();
PROF_API void enter(Location* loc, RegionId region);
PROF_API void leave(Location* loc, RegionId region);
/// enter() of a call that makes GPU work, with the trace's CorrelationId record `correlation`
/// right before the Enter, both at one clock read.
PROF_API void enter_correlated(Location* loc, RegionId region, std::uint32_t correlation);
/// acquire + enter + release in one call, for adapters whose events are as frequent as function
/// calls (Python): false when no event could be written (see acquire()), so that the caller
/// leaves out the matching leave_now.
PROF_API bool enter_now(RegionId region);
/// acquire + leave + release in one call: the Leave of an enter_now that returned true.
PROF_API void leave_now(RegionId region);
/// A trace record with payload slots (see record.hpp); nothing when `loc` does not trace. False
/// when it was not written (no tracing, or no memory: then leave out what pairs with it).
PROF_API bool event(Location* loc, Timestamp t, RecordType type, std::uint32_t ref, std::uint16_t aux,
                    const Payload* p, unsigned n);
/// A location no thread owns (a GPU stream, an NVTX lane; see runtime::create_detached_location),
/// written with event() under the adapter's own lock. `group`: an accelerator location group's
/// name ("CUDA Context 1"), "" for the process's group. nullptr when measurement is not running.
PROF_API Location* create_location(const char* name, bool gpu_stream, const char* group);
/// The call path `loc` (the calling thread's, from acquire()) is in now: a token for
/// gpu_activity, valid until the end of the run (profile nodes are never freed). nullptr when
/// the location keeps no profile.
PROF_API const void* call_path(const Location* loc);
/// The profile of a GPU stream: one activity (kernel, copy, memset) of `region` from `start` to
/// `end`, under the call path `path` of the host call that launched it (from call_path(); nullptr:
/// under the root). The stream's column gets the visit and the time at `path` + region; the
/// path's own nodes there keep visits 0 and the sum of their children's time, so Cube's
/// inclusive rule holds. `bytes`: copied or set bytes (metric bytes_copied). The adapter's lock.
PROF_API void gpu_activity(Location* stream, const void* path, RegionId region, Timestamp start, Timestamp end,
                           std::uint64_t bytes);
/// A location's index in its process (its rank in the process's CUDA communicator).
PROF_API std::uint32_t location_index(const Location* loc);
/// Threads created by code in a shared object whose file name starts with `prefix` (e.g.
/// "libcuda.so", "libcupti.so": the driver's and CUPTI's own threads) get no location of
/// their own from the pthread adapter.
PROF_API void ignore_threads_of(const char* prefix);
/// Adds message bytes to the profile's call path `loc` is in now (the MPI call's own path).
PROF_API void add_bytes(Location* loc, std::uint64_t sent, std::uint64_t received);
PROF_API RegionId define_region(const regions::RegionDef& def);
/// define_region, or regions::kFiltered when the run-time filter (PROF_FILTERING_FILE) excludes
/// the region's name or file.
PROF_API RegionId define_region_unless_filtered(const regions::RegionDef& def);
PROF_API comms::CommId define_comm(const comms::CommDef& def);
/// An adapter that started after init (adapters::add): its finalize runs with the others'.
PROF_API bool add_adapter(const prof_adapter* adapter);
/// `address` lies in an interpreter's object (libpython): samples fold its frames away, landing
/// below the innermost interpreted region (see sampling::set_interpreter).
PROF_API void set_interpreter(const void* address);
/// The parsed configuration (valid after init()).
PROF_API const config::Values& values();
/// The text of prof.cfg: every variable's effective value, one "NAME=value" line each.
PROF_API std::string effective_config();
/// runtime::defer_ready / set_mpp / ready: see measurement/runtime.hpp.
PROF_API void defer_ready();
PROF_API void set_mpp(Mpp* mpp);
PROF_API bool ready(std::uint32_t rank);
/// This process's clock offset to rank 0 at local time `local` (rank 0's time = local + offset),
/// measured at MPI_Init; the runtime measures again at the end (Mpp::sync_clock).
PROF_API void add_clock_offset(Timestamp local, std::int64_t offset);
/// The process is being stopped by a signal: end any wait for other processes now.
PROF_API bool stop_requested();
/// Writes everything now (collective with an Mpp; `exit_status` for ProgramEnd); later finalize
/// calls do nothing.
PROF_API void finalize(int exit_status);
/// "prof: error: <text>" / "prof: warning: <text>".
PROF_API void error(const char* text);
PROF_API void warning(const char* text);
/// "prof: <text>" when PROF_VERBOSE >= level.
PROF_API void info(int level, const char* text);
/// Prefixes every later message of this process with "rank <r>: ".
PROF_API void set_log_rank(std::uint32_t rank);

}  // namespace prof::api
