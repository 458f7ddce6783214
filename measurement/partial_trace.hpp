// SPDX-License-Identifier: BSD-3-Clause
// The trace of an MPI job with a failed rank. No collective can run then (a dead rank would block
// the rest), so the archive's definitions are never unified and written the normal way. Instead
// each process that still writes saves its own definitions as a part file in
// `<experiment>/prof-parts/rank<r>` and then, under a lock the processes share (flock on
// prof-parts/.lock), merges every part saved so far into the archive's definitions
// (unify::merge_parts, TraceWriter::write_merged). The last process to get there leaves a trace
// of every rank that did; ranks that never did (killed, or still writing when the job ended)
// appear as an empty placeholder location, so that messages to them stay well-defined.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "measurement/unify.hpp"
#include "otf2-writer/trace_writer.hpp"

namespace prof::partial_trace {

/// Saves this process's part and merges all parts into `writer`'s archive (in `dir`, the
/// experiment directory as the writer knows it). `self`: this process, with its locations and
/// their event counts (their event files written and closed); `offsets`: its clock offsets to
/// rank 0. Returns false with a one-line error; else `ranks` lists the ranks the trace now holds.
bool save_and_merge(otf2w::TraceWriter& writer, const std::string& dir, std::uint32_t rank, std::uint32_t size,
                    const char* paradigm, const unify::ProcessPart& self, const std::vector<std::uint64_t>& locations,
                    const std::vector<std::pair<std::uint64_t, std::int64_t>>& offsets, std::vector<std::uint32_t>* ranks,
                    std::string* error);

/// mpirun kills the job's other processes soon after the first one that it stopped ends (Open
/// MPI: tens of milliseconds, not its odls_base_sigkill_timeout), which cut the write-out of the
/// ranks still writing, or still waiting for the merge lock, in about half of the runs of a
/// 3-rank job on 2 cores. So each process of a failed job announces its write-out
/// (`<dir>/prof-parts/writing.rank<r>`: host and pid) and, when done, stays until the processes
/// of its host that announced theirs are done or gone, at most `max_seconds`.
void announce_writing(const std::string& dir, std::uint32_t rank);
/// Ends this process's announcement and waits as above; returns the ranks it waited for.
std::vector<std::uint32_t> finish_writing(const std::string& dir, std::uint32_t rank, int max_seconds);

// ---- Killed runs (prof-salvage) ----
// A process killed without a chance to write (SIGKILL, the OOM killer, a node's end) leaves the
// event files of its flushes in `<experiment>/traces/` without definitions or anchor. So while a
// trace is written during the run, each process keeps its definitions on disk too, as a part file
// `<experiment>/prof-parts/salvage.rank<r>` like a failed rank's (plus what the writer's events
// refer to), replaced whenever definitions or locations were added before a flush converts
// events that may use them, and removed once the trace is written at the end. salvage() turns
// what a killed run left into a readable trace.

/// What a salvage part holds besides the definitions.
struct SalvageInfo {
  std::uint32_t rank = 0, size = 1;
  std::string paradigm;                  ///< "" for one process, else the Mpp's ("MPI")
  otf2w::SalvageState writer;
  std::uint64_t resolution = 0;          ///< timer ticks per second
  std::uint64_t tick0 = 0, real0_ns = 0; ///< a timer tick and its wall-clock time (ns since 1970)
};
/// Replaces this process's salvage part in `dir`. Any thread, under the runtime's lock.
bool save_salvage_part(const std::string& dir, const SalvageInfo& info, const unify::ProcessPart& self,
                       const std::vector<std::uint64_t>& locations,
                       const std::vector<std::pair<std::uint64_t, std::int64_t>>& offsets);
/// The trace was written: the part goes, with the stop dump (and prof-parts/ when empty).
void remove_salvage_part(const std::string& dir, std::uint32_t rank);
/// prof-salvage: writes the definitions and anchor for the event files in `experiment`/traces from
/// its salvage parts, with each location's event count as an OTF2 reader reads them (a chunk cut by
/// the kill and what follows are left out). `report`: lines saying what the trace holds and what
/// was lost. False with a one-line error (nothing to salvage, damaged parts, no room).
bool salvage(const std::string& experiment, std::vector<std::string>* report, std::string* error);

// ---- Stop dumps (the raw-first write-out at a stop signal) ----
// A batch system stops a job with SIGTERM and kills it a grace time later (Slurm's KillWait,
// srun's 2 s after a second Ctrl-C, timeout -k). Converting buffered events to OTF2 costs about
// 37 ns each (bench: 2.6 s per GiB of buffers on a 2-core VM), writing them raw only the copy
// into the page cache, which a SIGKILL does not undo. So when a stop signal finds a large
// trace buffered, the write-out first dumps each location's raw records, with its OTF2
// writer's state and the writer's chunk still in memory, to `<experiment>/prof-parts/stop.rank<r>`
// (and the salvage part with every definition they use), then converts as usual and removes
// the dump with the salvage part once the trace is written. Killed in between, salvage()
// converts the dump after each location's flushed events: nothing measured is lost.

struct StopEntry {
  std::uint64_t location = 0;
  otf2w::WriterResume writer;
  const EventBuffer* events = nullptr;
};
/// Writes the dump (under a temporary name, renamed once whole). `bytes`: its size. False with
/// errno set.
bool save_stop_dump(const std::string& dir, std::uint32_t rank, const std::vector<StopEntry>& entries, std::uint64_t* bytes);

/// "0-2,5 of 8" for the ranks in a message.
std::string describe_ranks(const std::vector<std::uint32_t>& ranks, std::uint32_t size);

}  // namespace prof::partial_trace
