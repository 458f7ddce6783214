// SPDX-License-Identifier: BSD-3-Clause
// Converts raw per-location event buffers into an OTF2 archive (traces.otf2, traces.def,
// traces/). The only component that talks to the OTF2 library; callers serialise all calls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "measurement/buffer.hpp"
#include "measurement/definitions/comms.hpp"
#include "measurement/definitions/regions.hpp"
#include "measurement/memory/pool.hpp"
#include "measurement/unify.hpp"

namespace prof {
class Mpp;
}

namespace prof::otf2w {

struct ClockInfo {
  std::uint64_t resolution = 1000000000;  ///< ticks per second
  std::uint64_t offset = 0;               ///< first tick of the run
  std::uint64_t length = 0;               ///< ticks from offset to the end
  std::uint64_t realtime_ns = 0;          ///< wall clock (ns since 1970, UTC) at offset
};

/// What finish() writes. Every process writes the local definitions of its own locations (clock
/// offsets, mapping tables); the global ones (traces.def) come from rank 0 only, which holds the
/// unified definitions of all processes.
struct Definitions {
  ClockInfo clock;
  std::string machine;
  /// "MPI" for a job of MPI processes: location groups "MPI Rank <r>", MPI communicators. nullptr:
  /// one process, its group named "Process".
  const char* mpp_paradigm = nullptr;
  std::vector<std::uint64_t> local_locations;  ///< this process's location ids
  /// This process's clock offsets to the global (rank 0's) time: (local time, offset) with
  /// global = local + offset, ascending; empty: offset 0 all along.
  std::vector<std::pair<std::uint64_t, std::int64_t>> clock_offsets;
  std::vector<std::uint32_t> region_map;       ///< this process: local region id → global
  std::vector<std::uint32_t> comm_map;         ///< this process: local communicator id → global
  std::vector<std::uint32_t> window_map;       ///< this process: local communicator id → global RMA window (Cuda)
  std::vector<std::uint32_t> context_map;      ///< this process: local calling context → global (sampling)
  std::vector<std::uint32_t> generator_map;    ///< this process: local interrupt generator → global
  bool is_root = true;                         ///< writes the global definitions (rank 0)
  // The global definitions (root only).
  std::vector<regions::RegionDef> regions;
  std::vector<comms::CommDef> comms;
  std::vector<unify::ProcessPart> processes;  ///< by rank: host, locations with their event counts
  std::vector<contexts::ContextDef> contexts;      ///< calling contexts, global ids (parents first)
  std::vector<contexts::GeneratorDef> generators;  ///< interrupt generators, global ids
};

/// One process's local definitions: its locations, clock offsets to the global time and the
/// mapping tables from the local ids its events carry to the global ones (see Definitions).
struct LocalDefs {
  std::vector<std::uint64_t> locations;
  std::vector<std::pair<std::uint64_t, std::int64_t>> clock_offsets;
  std::vector<std::uint32_t> region_map, comm_map, window_map, context_map, generator_map;
};

/// A rank that left no data in an archive merged after a failure (TraceWriter::write_merged):
/// the id of its one empty location, so that communicators can still name all ranks.
constexpr std::uint64_t placeholder_location(std::uint32_t rank) {
  return (std::uint64_t{0xfffffffe} << 32) | rank;
}

/// A metric of the Metric events that accompany Enter and Leave records (measurement/metrics).
struct MetricMember {
  std::string name, description, unit;
  bool papi = false;      ///< OTF2_METRIC_TYPE_PAPI, else OTHER
  bool absolute = false;  ///< a level (ABSOLUTE_POINT), else a counter since the start (ACCUMULATED_START)
};

/// Counters of the writer, for the end-of-run report and tests.
struct WriterStats {
  std::uint64_t events = 0;              ///< OTF2 events written, all locations
  std::uint64_t otf2_over_budget = 0;    ///< OTF2 chunks that had to come from malloc
  std::uint64_t otf2_over_budget_peak = 0;  ///< the most of them in use at once
  std::uint64_t otf2_block_bytes = 0;    ///< the size of one (the archive's chunk size)
  std::uint64_t otf2_flushes = 0;        ///< OTF2 buffer writes to disk
  /// Kept consistent when events were lost for lack of memory: Leaves whose Enter is missing
  /// are dropped, and regions whose Leave is missing are closed (at the next Leave of an outer
  /// region, or at the location's last time when it is closed).
  std::uint64_t dropped_leaves = 0;
  std::uint64_t closed_regions = 0;
  /// After a write error (failed()): records handed to drop_events, never written.
  std::uint64_t dropped_events = 0;
};

/// What a salvage (prof-salvage, partial_trace::salvage) needs of a writer besides the
/// definitions to write the definitions for event files it left: the strings and metric classes
/// its events refer to (ProgramBegin's, Metric events'), in the order it made them, and its chunk size.
struct SalvageState {
  std::string program;
  std::vector<std::string> args;
  std::vector<MetricMember> metrics;
  unsigned metric_threads = 0;   ///< set_metrics' thread_count
  std::uint64_t event_chunk = 0; ///< the archive's event chunk size
};

/// A location's writer as a stop dump saves it (the raw-first write-out at a stop signal,
/// partial_trace): what a salvage needs to go on with its event stream where the writer was.
struct WriterResume {
  std::uint64_t events = 0;          ///< events the writer took so far
  Timestamp last = 0;                ///< the time of its last event
  std::uint32_t correlation = 0;     ///< a CorrelationId waiting for its Enter/Leave
  std::vector<std::uint32_t> open;   ///< regions entered and not left, innermost last
  /// The writer's chunk not on disk yet: its header, its events, then END_OF_CHUNK; `first` is
  /// its first event's position. Empty (and `first` 0) when every event is on disk, or the
  /// chunk could not be read (the salvage then names the events it misses).
  std::vector<unsigned char> pending;
  std::uint64_t first = 0;
};

/// Removes a scratch archive's folder (its anchor, definitions and traces/) without following
/// links.
void remove_scratch_archive(const std::string& path);

class TraceWriter {
 public:
  TraceWriter();
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  /// Opens `<dir>/traces.otf2`. OTF2 event chunks of `event_chunk` bytes (256 KiB to 16 MiB;
  /// 0: `blocks`' chunk size, at least 256 KiB) come from `blocks` (whose chunks must be at least
  /// that big), one per open location writer; OTF2 writes a buffer to disk when it needs a second
  /// one. With `mpp`, all its processes open the one archive together (a collective call; OTF2's
  /// collectives run over `mpp`, which must outlive the writer), with the same `event_chunk`.
  /// `join`: without `mpp`, `dir/traces` may exist already: processes that write one archive
  /// without collectives (the checkpoints of MPI ranks), each merging it with write_merged.
  /// Returns false with a one-line error.
  bool open(const std::string& dir, ChunkPool* blocks, std::string* error, Mpp* mpp = nullptr, std::uint64_t event_chunk = 0,
            bool join = false);
  bool is_open() const;
  /// The `dir` given to open().
  const std::string& directory() const;

  /// Program name and arguments for ProgramBegin records.
  void set_program(const std::string& name, const std::vector<std::string>& args);

  /// The metrics carried by Enter/Leave records with payload slots: metric class 0 has the first
  /// `thread_count` members (every thread), class 1 all of them (the process's first location,
  /// which also reads the per-process events). The record's aux names its class; its slots hold
  /// the values, two per slot. Each becomes an OTF2 Metric event just before its Enter/Leave;
  /// MetricValues records (read at samples) become Metric events alone.
  void set_metrics(const std::vector<MetricMember>& members, unsigned thread_count);

  /// Appends every record of `buffer` to location `location`'s event stream; timestamps are
  /// clamped to be non-decreasing per location, and Enter/Leave kept nested (WriterStats). `close` closes that location's writer (its
  /// event count is final). Returns false on an OTF2 error (message in last_error()).
  bool write_events(std::uint64_t location, const EventBuffer& buffer, bool close);

  /// Closes `location`'s writer: its event count is final. Its last, partial OTF2 chunk is
  /// written now (through OTF2's own 4 MiB file buffer), so give event memory back first.
  bool close_location(std::uint64_t location);

  /// Events written so far for `location`.
  std::uint64_t event_count(std::uint64_t location) const;
  /// `location`'s state now, for a stop dump; false when its writer is closed (its event file
  /// is complete).
  bool resume_state(std::uint64_t location, WriterResume* out) const;
  /// Before `location`'s first events: they continue a stream a stop dump saved (its open
  /// regions, time and waiting correlation id). A salvage's conversion.
  void resume(std::uint64_t location, const WriterResume& state);
  /// Whether `location` has an OTF2 event writer open (and so holds an OTF2 buffer).
  bool writing(std::uint64_t location) const;

  /// Closes all writers, writes local and global definitions and closes the archive (with an
  /// Mpp: collective). When writing failed here or on any other process, every process removes
  /// its files of the archive (rank 0 also traces.otf2, traces.def and traces/) and it returns
  /// false; `error` is then empty where take_failure() has this process's line, else it names the
  /// rank that failed (rank 0 only: one line for the job).
  bool finish(const Definitions& defs, std::string* error);

  /// After a failed rank, when no collective can run (the archive is never closed): writes the
  /// definitions of an archive of the processes that saved their parts, for the event files
  /// already in `dir/traces` (their writers closed: write_events with close, or close_location).
  /// `global`: the merged definitions (every rank of the job; a rank without locations gets an
  /// empty placeholder_location); `locals`: the local definitions of each present process.
  /// The anchor and traces.def are written into `dir/<stage>/trace-<pid>`; `dir/traces.otf2` and
  /// `dir/traces.def` are relative links through `dir/<stage>/current`, which one rename points
  /// at the new merge, so that a reader sees the previous merge or this one whenever the process
  /// is killed. Local definitions go into `dir/traces` first: they must fit both (the callers
  /// keep earlier merges' global ids). Serial: callers hold a lock between processes. False
  /// with a one-line error.
  bool write_merged(const Definitions& global, const std::vector<LocalDefs>& locals, const std::string& stage,
                    std::string* error);
  /// Tests: called after each step of write_merged ("written", "local definitions", "current",
  /// "traces.def", "traces.otf2"), where a kill could come.
  void on_merge_step(std::function<void(const std::string&)> observer);

  /// This writer's SalvageState (open writers).
  SalvageState salvage_state() const;
  /// On a writer never opened: the definitions of an archive whose event files a killed process
  /// left in `dir/traces` (writers never closed): `dir/traces.otf2`, `dir/traces.def` and each
  /// location's `dir/traces/<id>.def`, written in a scratch folder and renamed into place, the
  /// anchor last. `state` from salvage_state() of the writer that wrote the events. False with a
  /// one-line error.
  /// `empty`: locations without an event file (no flush; ranks without data): empty ones too.
  bool write_salvaged(const std::string& dir, const SalvageState& state, const Definitions& global,
                      const std::vector<LocalDefs>& locals, const std::vector<std::uint64_t>& empty, std::string* error);
  /// The events an OTF2 reader reads of each of `locations` in the archive `anchor`, up to the
  /// first it cannot read (a chunk the kill cut short). False with a one-line error when the
  /// archive cannot be opened.
  static bool count_events(const std::string& anchor, const std::vector<std::uint64_t>& locations,
                           std::vector<std::uint64_t>* counts, std::string* error);

  const WriterStats& stats() const;
  const std::string& last_error() const;

  /// Whether writing failed (a full disk, a quota, an I/O error: OTF2 reported an error). The
  /// writer then stops the trace at once: its event files are closed and removed (the space goes
  /// back to the program and to the profile), later records are only counted (drop_events), and
  /// finish() removes the rest of the archive, so that no traces.otf2 is left that points at
  /// missing or truncated files. OTF2's own messages are captured, never printed.
  bool failed() const;
  /// The first write error as one line (cause, directory, what is lost, the fix), once: "" on
  /// later calls and when nothing failed. `kept`: what the run still writes (e.g. "the profile
  /// is still written"), or nullptr.
  std::string take_failure(const char* kept);
  /// Counts the records of `buffer` as dropped (WriterStats::dropped_events): a buffer that is
  /// not written because the trace failed.
  void drop_events(const EventBuffer& buffer);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace prof::otf2w
