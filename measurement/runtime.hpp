// SPDX-License-Identifier: BSD-3-Clause
// Process-wide measurement lifecycle: init once, locations, flushes, the deferred "ready"
// step (experiment directory + OTF2 archive), finalize once.
#pragma once

#include <cstdint>
#include <string>

#include "measurement/compiler.hpp"
#include "measurement/location.hpp"
#include "measurement/record.hpp"

namespace prof {
class Mpp;
}

namespace prof::runtime {

/// Parses the configuration and starts measurement. Idempotent; called from libprof's
/// constructor and, lazily, by the first event. A malformed variable is fatal here.
void init();
/// Writes all data and stops measurement. Runs once (on_exit, with the exit status for
/// ProgramEnd); later calls do nothing.
void finalize(int exit_status = 0);
/// The program calls exec (adapters/exec/exec.cpp), whose new image runs no exit handler of this
/// one: writes the data measured so far as finalize does, with ProgramEnd's exit status "not
/// available" (OTF2_UNDEFINED_INT64). Measurement is off afterwards, also when the exec fails.
/// True when it wrote; false, doing nothing, before init, in a fork's child, and once finalize
/// has begun. Any thread, not from a signal handler; not in a vfork child (the caller checks).
bool finalize_before_exec();
/// Whether finalize could not write the trace or the profile it should have (a full disk, no
/// experiment directory). Any thread, after finalize.
bool write_failed();

/// Creates the calling thread's location (after init). nullptr when no memory or measurement off.
Location* create_location();
/// Creates a location no thread owns (a GPU stream, an NVTX lane), written by an adapter under
/// its own lock with explicit timestamps; traced when tracing is on; GPU streams are profiled
/// through api::gpu_activity.
/// `group`: an accelerator location group's name, "" for the process's group. nullptr when
/// measurement is not running.
Location* create_detached_location(const std::string& name, LocationType type, const std::string& group);
/// Threads created by code in shared objects whose file name starts with `prefix` get no
/// location (api::ignore_threads_of). Any thread; keeps the string.
void ignore_threads_of(const char* prefix);
/// The sampler's signal handler: a free chunk of the event pool (lock-free), or nullptr.
/// `samples_only`: for samples kept without a trace (at most a quarter of the pool).
void* sample_chunk(bool samples_only);
std::size_t chunk_bytes();
/// The program-root region (the profile's root).
RegionId root_region();
/// Whether code at `caller` belongs to such a shared object (pthread_create's wrapper asks).
bool creates_ignored_threads(const void* caller);
/// The calling thread ends: closes its open frames, writes ThreadEnd, hands its buffer on.
void end_location(Location* loc);

/// Slow path of the trace buffer: a new chunk, or a flush when the pool is empty. Returns
/// nullptr when the event cannot be stored (counted as lost). Owner thread only, busy set.
Record* reserve_slow(Location* loc, Timestamp t, unsigned slots);

/// Adapters that learn rank and shared directory later (MPI) call defer_ready() in their
/// init and ready(rank) once they know them; until then flushed chunks go to a spill file.
/// ready() creates the experiment directory and the archive and fixes the location ids
/// ((thread index << 32) | rank). Any thread; locks. Returns false when it cannot write.
void defer_ready();
/// The other processes of the job (the MPI adapter, inside MPI_Init, before ready()): the ready
/// step and the final write-out become collective over them. `mpp` must live until the end.
PROF_API void set_mpp(Mpp* mpp);
/// The process is being stopped (a fatal signal during or before the write-out): waits for other
/// processes must end now.
bool stop_requested();
/// A measured clock offset of this process to rank 0 (see api::add_clock_offset).
void add_clock_offset(Timestamp local, std::int64_t offset);

/// More profile-node memory for `loc` (its arena): a slab of a shared chunk, 4 KiB at first and
/// twice as much each time, up to a chunk of its own. False when the pool cannot spare a chunk:
/// every live tracing location keeps at least one chunk for its trace. Owner thread.
bool profile_chunk(Location* loc);
/// A chunk straight from the pool for `loc`'s profile nodes, lock-free (attach_child: GPU
/// activities and sampled frames, resolved with the State mutex held).
bool profile_chunk_unlocked(Location* loc);
bool ready(std::uint32_t rank = 0);

/// The artificial region "PROFILE MEMORY FULL". `define`: define it if needed (when a profile
/// first runs out of memory; locks once); otherwise kNoRegion until then. Any thread.
RegionId memory_full_region(bool define);

/// Code was unloaded (dlclose): every address → region mapping is forgotten, in the process
/// table now and in each thread's cache before its next event. Any thread; locks.
void code_unloaded();

/// True while prof creates a thread of its own (the signal writer): the pthread adapter lets it
/// pass without a location or events.
extern thread_local bool t_creating_own_thread;

/// Next ThreadCreate sequence number (1, 2, ...). Any thread.
std::uint64_t next_thread_seq();

}  // namespace prof::runtime
