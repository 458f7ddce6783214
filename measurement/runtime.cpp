// SPDX-License-Identifier: BSD-3-Clause
// Measurement lifecycle. Everything here is off the hot path: init, location creation,
// chunk hand-out and flushes, thread end, fork, finalize.
//
// Lifetime rules (glibc exit order: the exiting thread's thread_local destructors, atexit
// handlers in reverse order, then ELF destructors): the runtime state is allocated once and
// never destroyed, locations are reached through a raw __thread pointer, and every hook tests
// the phase, so late destructors of user statics that still call hooks do nothing harmful.
#include "measurement/runtime.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <linux/membarrier.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ftw.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/adapter.hpp"
#include "measurement/config/config.hpp"
#include "measurement/events.hpp"
#include "measurement/experiment_dir.hpp"
#include "measurement/exit_status.hpp"
#include "measurement/definitions/comms.hpp"
#include "measurement/definitions/contexts.hpp"
#include "measurement/filter/filter.hpp"
#include "measurement/log.hpp"
#include "measurement/memory/budget.hpp"
#include "measurement/memory/pool.hpp"
#include "measurement/mpp.hpp"
#include "measurement/partial_trace.hpp"
#include "measurement/timer.hpp"
#include "measurement/profiling/profile_merge.hpp"
#include "measurement/profiling/profile_writer.hpp"
#include "measurement/metrics/metrics.hpp"
#include "measurement/sampling/sampler.hpp"
#include "measurement/unify.hpp"
#include "otf2-writer/trace_writer.hpp"

extern char** environ;

// Written by prof-wrap into the executable for --instrument-filter (weak: usually absent).
extern "C" const char* const prof_instrument_filters[] __attribute__((weak));

namespace prof::runtime {

thread_local bool t_creating_own_thread = false;

namespace {

// OTF2 event chunks of 4 MiB (up to 256 locations; smaller for more, budget::otf2_chunk_bytes,
// so that readers can hold a chunk per location): OTF2's file layer copies every smaller write
// into a hidden 4 MiB malloc'ed buffer per open file, but writes chunks of at least that size
// straight to the file. So with 4 MiB chunks taken from PROF_TOTAL_MEMORY, all of OTF2's event
// memory is inside the budget (only a location's last, partial chunk goes through that buffer,
// when its writer is closed, after its event chunks were given back). Smaller chunks use the
// start of a 4 MiB block; a writer open across flushes then also holds OTF2's file buffer.
using budget::kOtf2BlockBytes;
using budget::kMinTracingMemory;

struct State {
  std::mutex mutex;           // locations list, ready step, conversion (one writer at a time)
  ChunkPool events;           // per-thread trace chunks
  ChunkPool otf2_blocks;      // OTF2's own event chunks
  otf2w::TraceWriter writer;
  std::vector<Location*> locations;
  std::vector<Location*> parked;   // locations of ended threads that new threads may take
  std::atomic<std::uint32_t> thread_locations{0};  // locations made for threads (detached ones not counted)
  std::atomic<std::uint32_t> live_tracing{0};  // tracing locations whose threads run
  pthread_key_t key{};
  bool deferred = false;      // ready() will be called by an adapter (MPI)
  bool is_ready = false;
  bool ready_failed = false;
  bool trace_abandoned = false;  // the archive could not be opened (here or on another rank): events are dropped
  bool profile_failed = false;   // the profile could not be written (a full disk): trace messages say so
  std::string directory;      // final experiment directory (its name, for messages)
  experiment_dir::Claim claim;  // the directory written to: io_path(claim) + "/file"
  std::string exe_name;
  std::vector<std::string> args;
  std::uint64_t flushes = 0;
  std::uint64_t bytes_recorded = 0;   // raw bytes converted so far, all locations
  std::uint64_t spilled_bytes = 0;
  std::uint32_t rank = 0;
  Mpp* mpp = nullptr;         // the other processes of the job (MPI adapter); nullptr: alone
  std::vector<std::pair<Timestamp, std::int64_t>> clock_offsets;  // (local time, offset to rank 0)
  RegionId root_region = 0;
  std::atomic<std::uint64_t> thread_seq{0};
  std::atomic<std::uint32_t> next_index{0};
  std::atomic<std::uint64_t> profile_bytes{0};  // pool memory held by profile nodes
  char* slab_pos = nullptr;  // the shared chunk profile slabs are carved from (mutex)
  char* slab_end = nullptr;
  std::array<std::size_t, 4> salvage_saved{};  // what the salvage part on disk holds (save_salvage_locked)
  bool salvage_failed = false;
};

State* g_state = nullptr;  // never destroyed
std::atomic<int> g_init_state{0};   // 0 none, 1 running, 2 done
std::atomic<bool> g_finalized{false};
std::atomic<bool> g_in_signal{false};  // finalize runs from a fatal signal: the job is being stopped
std::atomic<bool> g_finalize_done{false};  // the write-out is over
std::atomic<bool> g_finalize_started{false};  // finalize runs (its adapters' part comes before g_finalized)
std::atomic<bool> g_forked_child{false};      // a fork's child: measurement is off, signals take their default action
std::atomic<bool> g_before_exec{false};       // finalize runs before an exec: no exit status for ProgramEnd
std::atomic<bool> g_write_failed{false};      // the trace or the profile could not be written (PROF_FAIL_EXIT_STATUS)
// Set on the signal writer around the fork of a checkpoint (checkpoint()): that child writes.
thread_local bool t_checkpoint_fork = false;
std::atomic<int> g_flush_signal{0};          // PROF_FLUSH_SIGNAL's number, 0: none
std::atomic<unsigned> g_checkpoints{0};      // checkpoints written
bool g_checkpoint_child = false;             // this process is a checkpoint's copy (write_checkpoint)
/// membarrier(2) registered at init: finalize can make every thread's busy flag visible at once.
bool g_membarrier = false;
std::atomic<bool> g_checkpoint_running{false};  // a checkpoint is being written: finalize waits for it
std::atomic<std::size_t> g_sample_chunks{0};  // pool chunks holding samples kept without a trace
std::atomic<int> g_pending_signal{0};      // a stop signal that came during the write-out
std::atomic<int> g_stop_signal{0};         // the signal handed to the signal writer: the process ends by it
std::atomic<bool> g_stop_reported{false};  // its one line is printed (by the writer, or by an exit that came first)

void release_chunk(void* c) { g_state->events.release(c); }

// For buffers that are done for good: the chunks back to the pool, their pages to the kernel, in
// one madvise per run of adjacent chunks (a thread's chunks mostly are: the pool hands fresh ones
// out in order), not one per chunk.
void give_back_all(EventBuffer& trace) {
  ChunkPool& pool = g_state->events;
  char* run = nullptr;
  std::size_t count = 0;
  trace.release_all([&](void* chunk) {
    char* c = static_cast<char*>(chunk);
    if (run && c == run + count * pool.chunk_bytes()) {
      ++count;
      return;
    }
    if (run) pool.release_run(run, count);
    run = c;
    count = 1;
  });
  if (run) pool.release_run(run, count);
}

void read_cmdline(State& s) {
  s.exe_name = "program";
  int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::string all;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) all.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  std::size_t pos = 0;
  bool first = true;
  while (pos < all.size()) {
    std::size_t end = all.find('\0', pos);
    if (end == std::string::npos) end = all.size();
    std::string arg = all.substr(pos, end - pos);
    if (first) s.exe_name = arg;
    else s.args.push_back(arg);
    first = false;
    pos = end + 1;
  }
  // A Python script under prof (python3 -m prof, prof-run python3): the interpreter runs
  // `-m prof --measured [options] -- script ...`; the program is what the user ran, without prof's part.
  for (std::size_t i = 0; i + 2 < s.args.size(); ++i)
    if (s.args[i] == "-m" && s.args[i + 1] == "prof" && s.args[i + 2] == "--measured") {
      auto dashes = std::find(s.args.begin() + static_cast<std::ptrdiff_t>(i) + 3, s.args.end(), std::string("--"));
      if (dashes != s.args.end()) s.args.erase(s.args.begin() + static_cast<std::ptrdiff_t>(i), dashes + 1);
      break;
    }
}

// Checks made at init so that a bad directory is reported before the program's work, and
// no directory is left behind by a run that cannot write.
void check_directory(const config::Values& v) {
  const std::string why = experiment_dir::check(v.experiment_directory, v.overwrite_experiment_directory);
  if (!why.empty()) log::fatal("%s", why.c_str());
}

// Milliseconds on a monotonic clock, for the durations PROF_VERBOSE reports.
double wall_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Claims the experiment directory (experiment_dir.hpp) at the ready step: the first flush, the
// end of the run, or MPI_Init (rank 0); the run holds it from then to its end. Its name, or ""
// when it cannot (the error said). What can be known earlier is checked at init (check_directory).
std::string create_directory(State& s) {
  if (!s.claim.name.empty()) return s.claim.name;
  const config::Values& v = config::g_values;
  std::string err, notice;
  if (!experiment_dir::claim(v.experiment_directory, v.overwrite_experiment_directory, &s.claim, &err, &notice)) {
    log::error("%s", err.c_str());
    return "";
  }
  if (!notice.empty()) log::warning("%s", notice.c_str());
  return s.claim.name;
}

// The program and the metrics, for the trace's definitions.
void describe_trace(State& s) {
  auto slash = s.exe_name.find_last_of('/');
  s.writer.set_program(slash == std::string::npos ? s.exe_name : s.exe_name.substr(slash + 1), s.args);
  std::vector<otf2w::MetricMember> members;
  for (const metrics::MetricDef& d : metrics::defs())
    members.push_back({d.name, d.description, d.unit, d.papi, d.absolute});
  s.writer.set_metrics(members, metrics::location_count(false));
}

// The deferred ready step: experiment directory, prof.cfg, OTF2 archive. State mutex held.
// With other processes (s.mpp), collective: rank 0 creates the directory and tells the others
// its name, and all open the one OTF2 archive together.
bool ready_locked(State& s) {
  if (s.is_ready) return true;
  if (s.ready_failed) return false;
  const config::Values& v = config::g_values;
  std::string dir = s.rank == 0 ? create_directory(s) : "";
  // The trace's event chunk size, from the locations known now: this process's (the ready step
  // comes at the first flush or at the end) times the processes (MPI_Init); rank 0's for all.
  std::uint64_t chunk = budget::otf2_chunk_bytes(static_cast<std::uint64_t>(s.locations.size()) * (s.mpp ? s.mpp->size() : 1));
  if (s.mpp) {
    std::uint64_t n = dir.size();
    std::vector<char> name(dir.begin(), dir.end());
    bool ok = s.mpp->bcast(&n, sizeof n, 0) && s.mpp->bcast(&chunk, sizeof chunk, 0);
    name.resize(n);
    ok = ok && (n == 0 || s.mpp->bcast(name.data(), n, 0));
    if (!ok) {
      log::error("the experiment directory's name could not be received from rank 0; nothing is written");
      s.ready_failed = true;
      return false;
    }
    dir.assign(name.begin(), name.end());
    if (dir.empty() && s.rank != 0)
      log::error("rank 0 could not create the experiment directory (see its message); nothing is written");
  }
  if (dir.empty()) {
    s.ready_failed = true;
    return false;
  }
  s.directory = dir;
  if (s.claim.name.empty()) {
    // Another rank's claim: written through this rank's own descriptor of it (by name if none).
    std::string ignored;
    experiment_dir::open_claimed(dir, &s.claim, &ignored);
  }
  const std::string io = experiment_dir::io_path(s.claim);
  if (s.rank == 0) {
    // Created afresh through the claim's descriptor, never through a link (experiment_dir::write_file).
    std::string err = experiment_dir::write_file(s.claim, "prof.cfg", config::cfg_file_text());
    if (!err.empty()) log::error("%s; the experiment does not record its configuration", err.c_str());
    if (!v.filtering_file.empty()) {
      // The filter that shaped this experiment travels with it.
      std::ifstream in(v.filtering_file, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      err = experiment_dir::write_file(s.claim, "prof.filter", text);
      if (!err.empty()) log::error("%s; the experiment does not keep a copy of its filter", err.c_str());
    }
  }
  if (v.enable_tracing) {
    std::string err;
    if (!s.writer.open(io, &s.otf2_blocks, &err, s.mpp, chunk)) {
      // The profile is still written; the trace's events are dropped from now on.
      log::error("%s; this experiment has no trace", experiment_dir::readable(s.claim, err).c_str());
      s.trace_abandoned = true;
    } else if (s.rank == 0) {
      log::info(1, "trace: OTF2 event chunks of %" PRIu64 " KiB for %zu location(s)%s (a reader holds one per location)",
                chunk >> 10, s.locations.size(), s.mpp ? " x processes" : " known now");
    }
    describe_trace(s);
  }
  s.is_ready = true;
  if (s.rank == 0) log::info(1, "experiment directory: %s", dir.c_str());
  return true;
}

// PROF_MPI_DEBUG_CLOCK_SKEW="rank:ticks,...": the skew of this process, by the rank its launcher
// gives it (the MPI rank is not known this early). Fatal when malformed.
Timestamp debug_clock_skew(const std::string& spec) {
  if (spec.empty()) return 0;
  const char* env_rank = nullptr;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (!env_rank) env_rank = std::getenv(name);
  Timestamp skew = 0;
  std::size_t at = 0;
  while (at < spec.size()) {
    std::size_t end = spec.find(',', at);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(at, end - at);
    char* rest = nullptr;
    const unsigned long rank = std::strtoul(item.c_str(), &rest, 10);
    char* rest2 = nullptr;
    const unsigned long long ticks = rest && *rest == ':' ? std::strtoull(rest + 1, &rest2, 10) : 0;
    if (!rest || *rest != ':' || rest == item.c_str() || !rest2 || *rest2 != '\0' || rest2 == rest + 1)
      log::fatal("PROF_MPI_DEBUG_CLOCK_SKEW='%s': '%s' is not rank:ticks; give e.g. 1:2000000000, or leave it empty",
                 spec.c_str(), item.c_str());
    if (env_rank && std::strtoul(env_rank, nullptr, 10) == rank) skew = ticks;
    at = end + 1;
  }
  return skew;
}

// Spill files: a location's raw records, written by a flush that cannot convert them to OTF2
// now: before the ready step (MPI: before MPI_Init) in TMPDIR; after it, when the OTF2 buffers
// of PROF_TOTAL_MEMORY are all held by other locations' open writers, in the experiment
// directory (prof-spill-<location>, MPI: prof-spill-rank<r>-<location>). Converted, in order,
// before the location's later events (unspill_locked), one writer at a time at the end: memory
// stays within the budget however many threads flush at once. A run killed by SIGKILL leaves
// them behind, raw.
const std::string& spill_path(State& s, Location* loc) {
  if (loc->spill_file.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    // With MPI the ranks share the directory: the rank is part of the name (known once ready).
    loc->spill_file = s.is_ready ? experiment_dir::io_path(s.claim) + "/prof-spill-" +
                                       (s.mpp ? "rank" + std::to_string(s.rank) + "-" : std::string()) + std::to_string(loc->index)
                                 : std::string(tmp && *tmp ? tmp : "/tmp") + "/prof-spill-" + std::to_string(::getpid()) +
                                       "-" + std::to_string(loc->index);
  }
  return loc->spill_file;
}

bool spill_locked(State& s, Location* loc) {
  // A new spill file is created (O_EXCL), never a name that exists (TMPDIR is everyone's); later
  // flushes append to the one made. Never through a link.
  const bool fresh = loc->spill_file.empty();
  const int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (fresh ? O_CREAT | O_EXCL : 0);
  int fd = ::open(spill_path(s, loc).c_str(), flags, 0600);
  if (fd < 0) {
    const int e = errno;
    static bool said = false;  // state mutex held
    if (!said) {
      said = true;
      log::error("%s; flushes write to the trace instead where they can, else events are lost (the end of the run "
                 "counts them)",
                 experiment_dir::file_error(s.claim, experiment_dir::readable(s.claim, loc->spill_file), e, false).c_str());
    }
    if (fresh) loc->spill_file.clear();
    return false;
  }
  bool ok = true;
  // Records lie back to back within a chunk: one write per chunk.
  loc->trace.for_each_run([&](const char* run, std::size_t run_bytes) {
    for (std::size_t done = 0; ok && done < run_bytes;) {
      const ssize_t n = ::write(fd, run + done, run_bytes - done);
      if (n <= 0 && errno != EINTR) ok = false;
      if (n > 0) done += static_cast<std::size_t>(n);
    }
    s.spilled_bytes += run_bytes;
    s.bytes_recorded += run_bytes;  // the run's need of event memory (unspill_locked does not count them again)
    if (ok) loc->spill_bytes += run_bytes;
  });
  if (::close(fd) != 0) ok = false;
  if (ok) ++loc->spills;
  return ok;
}

// Converts a location's spill file (if any) before its buffered events, 16 chunks at a time.
void unspill_locked(State& s, Location* loc) {
  if (loc->spill_file.empty()) return;
  const std::string path = loc->spill_file;
  // A checkpoint's copy reads what the file held at the fork (the process goes on appending) and
  // leaves the file to the process.
  const std::uint64_t limit = loc->spill_bytes;
  std::uint64_t taken = 0;
  loc->spill_file.clear();
  loc->spill_bytes = 0;
  FILE* f = std::fopen(path.c_str(), "rbe");
  if (!f) return;
  std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
  const std::size_t chunk = s.events.chunk_bytes();
  std::vector<void*> all, spare;
  EventBuffer tmp;
  std::size_t held = 0;
  const auto new_block = [&] {
    void* b = nullptr;
    if (!spare.empty()) {
      b = spare.back();
      spare.pop_back();
    } else {
      b = std::malloc(chunk);
      if (!b) return false;
      all.push_back(b);
    }
    tmp.add_chunk(b, chunk);
    ++held;
    return true;
  };
  const auto write_out = [&] {
    sampling::resolve(loc, tmp, true);
    s.writer.write_events(loc->global_id, tmp, false);
    tmp.clear([&](void* b) { spare.push_back(b); });
    held = 1;
  };
  bool ok = new_block();
  Record head;
  while (ok && (!g_checkpoint_child || taken + sizeof head <= limit) && std::fread(&head, sizeof head, 1, f) == 1) {
    taken += sizeof head + kRecordBytes * head.slots;
    Record* r = tmp.try_reserve(head.slots);
    if (!r) {
      if (held >= 16) write_out();
      if (!new_block() || !(r = tmp.try_reserve(head.slots))) break;
    }
    *r = head;
    if (head.slots && std::fread(r + 1, kRecordBytes, head.slots, f) != head.slots) break;
    tmp.commit();
  }
  std::fclose(f);
  if (!g_checkpoint_child) ::unlink(path.c_str());
  write_out();
  tmp.release_all([](void*) {});
  for (void* b : all) std::free(b);
}

// Whether a flush of `loc` spills instead of converting: a trace is written, `loc` has no OTF2
// writer open, and every OTF2 buffer is held by another writer. (A conversion converts the spill
// file first: either keeps the order.)
bool spill_instead(State& s, Location* loc) {
  if (!ready_locked(s) || s.trace_abandoned || s.writer.failed() || !s.writer.is_open()) return false;
  // With checkpoints (PROF_FLUSH_SIGNAL) every flush spills: a checkpoint's copy of the process
  // converts the spill files into a trace of its own, which needs every event outside the archive.
  if (g_flush_signal.load(std::memory_order_relaxed)) return true;
  return !s.writer.writing(loc->global_id) && s.otf2_blocks.in_use() >= s.otf2_blocks.chunk_count();
}

bool convert_locked(State& s, Location* loc, bool close);

// Writes a location's buffered events out during the run (a flush, or a thread that ends and
// leaves its location to a later one): to its spill file where spill_instead says so, else to
// OTF2 (also where the spill failed). Keeps the buffer's current chunk. State mutex held.
bool write_out_locked(State& s, Location* loc) {
  if (spill_instead(s, loc) && spill_locked(s, loc)) {
    loc->trace.clear(release_chunk);
    return true;
  }
  return convert_locked(s, loc, false);
}

// An ended thread's location that no later thread takes: its events written out, its writer
// closed and its chunks given back. Where every OTF2 buffer is in use (spill_instead), its events
// go to its spill file and its chunks back instead; the end of the run converts it. State mutex held.
bool retire_locked(State& s, Location* loc) {
  if (s.is_ready && spill_instead(s, loc)) {
    if (loc->trace.empty() || spill_locked(s, loc)) {
      give_back_all(loc->trace);
      return true;
    }
  }
  return convert_locked(s, loc, true);
}

// The trace's first write error (a full disk): one line, once. The writer stopped the trace and
// removed its files; later events are dropped (convert_locked).
void report_trace_failure(State& s) {
  const char* kept = !config::g_values.enable_profiling || s.profile_failed ? nullptr
                     : g_finalized.load() ? "the profile is kept" : "the profile is still written at the end";
  const std::string line = s.writer.take_failure(kept);
  if (!line.empty()) log::error("%s", experiment_dir::readable(s.claim, line).c_str());
}

// The definitions a salvage of this run needs (partial_trace: prof-salvage turns the event files
// a killed run left into a trace), saved before events that may use them are converted, whenever
// definitions or locations were added. State mutex held.
void save_salvage_locked(State& s) {
  if (!s.writer.is_open() || s.writer.failed() || s.trace_abandoned || g_checkpoint_child) return;
  const std::size_t comm_count = comms::snapshot().size();
  const std::array<std::size_t, 4> key = {regions::count(), comm_count, contexts::count(), s.locations.size()};
  if (key == s.salvage_saved) return;
  unify::ProcessPart self;
  self.rank = s.rank;
  self.host = experiment_dir::host_name();
  self.start = timer::start();
  self.end = timer::now();
  std::vector<Location*> locs = s.locations;
  std::sort(locs.begin(), locs.end(), [](const Location* a, const Location* b) { return a->index < b->index; });
  std::vector<std::uint64_t> ids;
  for (const Location* loc : locs) {
    self.locations.push_back({loc->global_id, loc->name, s.writer.event_count(loc->global_id), static_cast<std::uint8_t>(loc->type),
                              loc->group});
    ids.push_back(loc->global_id);
  }
  partial_trace::SalvageInfo info;
  info.rank = s.rank;
  info.size = s.mpp ? s.mpp->size() : 1;
  info.paradigm = s.mpp ? s.mpp->paradigm() : "";
  info.writer = s.writer.salvage_state();
  info.resolution = timer::resolution();
  info.tick0 = timer::start();
  info.real0_ns = timer::realtime_ns(info.tick0);
  if (partial_trace::save_salvage_part(s.writer.directory(), info, self, ids, s.clock_offsets)) s.salvage_saved = key;
  else if (!s.salvage_failed) {
    s.salvage_failed = true;
    log::warning("cannot save the trace's definitions in '%s/prof-parts' (%s); a kill of this run would leave a trace that "
                 "prof-salvage cannot read", s.directory.c_str(), std::strerror(errno));
  }
}

// Writes a location's buffered events to the archive and empties the buffer (keeping its
// current chunk unless `close`). State mutex held. Returns false when nothing can be written.
bool convert_locked(State& s, Location* loc, bool close) {
  if (!ready_locked(s)) return false;
  if (loc->converted) return true;
  save_salvage_locked(s);
  if (s.trace_abandoned || s.writer.failed()) {
    s.bytes_recorded += loc->trace.bytes();  // the run's need of event memory, for its report
    s.writer.drop_events(loc->trace);
    if (!loc->samples_resolved) sampling::resolve(loc, loc->trace, false);  // the profile keeps the samples
    if (!loc->spill_file.empty() && !g_checkpoint_child) ::unlink(loc->spill_file.c_str());  // never the process's, from a checkpoint's copy
    loc->spill_file.clear();
    if (close) {
      give_back_all(loc->trace);
      loc->converted = true;
    } else {
      loc->trace.clear(release_chunk);
    }
    return true;
  }
  if (!s.writer.is_open()) return false;
  unspill_locked(s, loc);
  s.bytes_recorded += loc->trace.bytes();
  if (!loc->samples_resolved) sampling::resolve(loc, loc->trace, true);
  if (!s.writer.write_events(loc->global_id, loc->trace, false) && !s.writer.failed())
    log::error("writing the trace of location %u failed: %s", loc->index, s.writer.last_error().c_str());
  if (close) {
    give_back_all(loc->trace);  // before the close needs OTF2's file buffer
    s.writer.close_location(loc->global_id);
    loc->converted = true;
  } else {
    loc->trace.clear(release_chunk);
  }
  report_trace_failure(s);
  return true;
}

void flush_locked(State& s, Location* loc, Timestamp t) {
  bool written;
  if (!s.is_ready && s.deferred) {
    written = spill_locked(s, loc);
    if (written) loc->trace.clear(release_chunk);
    // Ended threads' buffers go to their spill files too, and their memory back to the pool.
    for (Location* other : s.locations)
      if (other != loc && other->ended && !other->parked && !other->converted && other->trace.has_chunk() && spill_locked(s, other))
        give_back_all(other->trace);
  } else {
    written = write_out_locked(s, loc);
    // Threads that ended keep chunks nobody writes any more: hand them back too.
    for (Location* other : s.locations)
      if (other != loc && other->ended && !other->parked && !other->converted) retire_locked(s, other);
  }
  if (!written) return;
  ++s.flushes;
  ++loc->flushes;
  Timestamp end = timer::now();
  // The BufferFlush record carries the triggering event's time and the real end of the flush.
  Record* r = loc->trace.try_reserve(1);
  if (r) {
    r->time = t;
    r->type = RecordType::BufferFlush;
    r->slots = 1;
    r->aux = 0;
    r->ref = 0;
    auto* p = reinterpret_cast<Payload*>(r + 1);
    p->a = end;
    p->b = 0;
    loc->trace.commit();
  }
}

void thread_exit(void* p) {
  auto* loc = static_cast<Location*>(p);
  if (loc) end_location(loc);
}


void atfork_child() {
  if (t_checkpoint_fork) return;  // a checkpoint's copy of the process: it writes the profile
  // The child must not write over the parent's files: measurement stops in the child and the
  // buffers it inherited (copies of the parent's) are forgotten, not written.
  g_phase.store(static_cast<int>(Phase::Post), std::memory_order_relaxed);
  g_compiler_hooks_on = false;
  g_finalized.store(true);
  g_forked_child.store(true);
  sampling::stop();  // the parent's sampling sources are not the child's
  metrics::forget_after_fork();  // nor its PAPI event sets
  if (Location* loc = tls_location) loc->active = false;
}

// A crash or a kill must not lose what was measured. The handler itself does almost nothing: it
// hands the signal to the signal writer, a thread of prof's own (created at init, every signal
// blocked, no location), which writes the data in normal thread context. The handler must not do
// that work: the interrupted code may hold a lock the write-out needs (prof's State mutex during
// a flush, malloc's arena lock), and the handler would wait for it forever.
// - Stop signals (the batch system's TERM/HUP/XCPU/USR1/USR2 before its kill, Ctrl-C's INT,
//   QUIT): the handler returns at once; the interrupted code goes on (a flush it was in
//   finishes and lets the writer have the lock) while recording is off; the writer writes
//   everything, then re-raises the signal with its default action, so the exit status stays
//   the signal's.
// - Faults (SEGV, BUS, ILL, FPE, ABRT): the thread cannot go on; its handler waits until the
//   writer is done (a watchdog alarm ends a write-out the crash left hung), then re-raises.
// Only signals whose disposition is still the default at init are taken; handlers the program
// installs later replace ours. Without the writer thread (it could not be created), the handler
// writes the data itself, as before.
constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
// A failed job: how long a process that has written its data waits for those of its host that
// still write (partial_trace::finish_writing); the watchdog alarms (30 s) stay above it.
constexpr int kStayForOthersSeconds = 10;
constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGXCPU, SIGUSR1, SIGUSR2};

bool is_fault(int sig) {
  for (int f : kFaultSignals)
    if (f == sig) return true;
  return false;
}

int g_writer_pipe[2] = {-1, -1};        // handler -> signal writer: the signal number
std::atomic<bool> g_writer_running{false};
std::atomic<pid_t> g_finalize_tid{0};   // the thread running finalize

/// The signal's default action, now, on the calling thread (blocked in the writer: unblocked).
[[noreturn]] void die_by(int sig) {
  ::signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);
  // A fault's default action takes effect when the faulting instruction runs again; a
  // stop signal's at the raise. Should neither happen, end the process with the status a
  // shell gives a signal.
  ::_exit(128 + sig);
}

void stopped_message(int sig) {
  char msg[192];
  int n = std::snprintf(msg, sizeof msg, "prof: error: the program was stopped by signal %d (%s); writing the data measured so far\n",
                        sig, strsignal(sig));
  if (n > 0) { ssize_t w = ::write(2, msg, static_cast<std::size_t>(n)); (void)w; }
}

void checkpoint(int sig);

/// The one line of a stop signal handed to the signal writer, by whichever thread writes first.
void report_stop(int sig) {
  if (!g_stop_reported.exchange(true))
    log::error("the program was stopped by signal %d (%s); writing the data measured so far", sig, strsignal(sig));
}

void* signal_writer(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  for (;;) {
    int sig = 0;
    const ssize_t n = ::read(g_writer_pipe[0], &sig, sizeof sig);
    if (n != static_cast<ssize_t>(sizeof sig)) {
      if (n < 0 && errno == EINTR) continue;
      g_writer_running.store(false);
      return nullptr;
    }
    if (sig < 0) {
      checkpoint(-sig);  // PROF_FLUSH_SIGNAL: write what was measured so far and go on
      continue;
    }
    report_stop(sig);
    g_in_signal.store(true);  // no collectives with other processes from here on
    finalize(128 + sig);
    if (!is_fault(sig)) die_by(sig);  // a fault: the faulting thread re-raises it
  }
}

void start_signal_writer() {
  if (::pipe2(g_writer_pipe, O_CLOEXEC) != 0) return;
  ::fcntl(g_writer_pipe[1], F_SETFL, O_NONBLOCK);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  t_creating_own_thread = true;  // the pthread adapter lets prof's own thread pass
  const int rc = pthread_create(&t, &attr, &signal_writer, nullptr);
  t_creating_own_thread = false;
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    ::close(g_writer_pipe[0]);
    ::close(g_writer_pipe[1]);
    g_writer_pipe[0] = g_writer_pipe[1] = -1;
    log::warning("cannot start prof's signal thread (%s); a signal's write-out then runs in the signal handler", std::strerror(rc));
    return;
  }
  pthread_setname_np(t, "prof-signals");
  g_writer_running.store(true);
}

/// Waits (async-signal-safe) until the write-out is over; the watchdog alarm bounds it.
void wait_for_write_out() {
  while (!g_finalize_done.load()) {
    struct timespec ts = {0, 1000000};
    ::nanosleep(&ts, nullptr);
  }
}

std::int64_t monotonic_ns() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void say(const char* text) {
  const ssize_t w = ::write(2, text, std::strlen(text));
  (void)w;
}

/// A stop signal that came while the data are written. Those within kStopBurstNs of the first
/// are the same stop delivered again (coreutils timeout signals the child and then its process
/// group; mpirun forwards what the rank got too; Ctrl-C reaches every process of the terminal's
/// group): they are noted. A later one gets a line saying the next ends the write-out; that next
/// one ends the process at once by the signal, with what is not written yet lost (SIGKILL too).
constexpr std::int64_t kStopBurstNs = 1000000000;
std::atomic<std::int64_t> g_first_stop_ns{0};  // when the first stop signal came (monotonic)
std::atomic<std::int64_t> g_safe_ns{0};        // when a kill could no longer lose the data (the stop dump)
constexpr std::int64_t kSlowStopNs = 2000000000;  // srun's and many scripts' kill wait
std::atomic<int> g_late_stops{0};              // stop signals after the burst

void repeated_stop(int sig) {
  g_in_signal.store(true);
  int none = 0;
  g_pending_signal.compare_exchange_strong(none, sig);
  std::int64_t first = 0;
  const std::int64_t now = monotonic_ns();
  if (g_first_stop_ns.compare_exchange_strong(first, now) || now - first < kStopBurstNs) return;
  if (g_late_stops.fetch_add(1) == 0) {
    say("prof: still writing the data measured so far; a further stop signal ends the program without the rest\n");
    return;
  }
  say("prof: error: stopped again during the write-out; what was not written yet is lost\n");
  die_by(sig);
}

void on_fatal_signal(int sig) {
  static std::atomic<int> taken{0};
  const int saved = errno;
  if (g_forked_child.load()) die_by(sig);  // nothing of prof's to write in a fork's child
  const bool fault = is_fault(sig);
  if (g_finalize_started.load() || taken.load()) {
    // The write-out runs already (the program ended, or an earlier signal).
    if (!fault) {
      // mpirun stops the job because another rank failed, or the same stop delivered again:
      // the write-out goes on; the signal takes effect at its end.
      repeated_stop(sig);
      errno = saved;
      return;
    }
    // The write-out crashed itself: nothing more to save. Another thread crashed meanwhile:
    // the data first.
    if (static_cast<pid_t>(::gettid()) != g_finalize_tid.load()) wait_for_write_out();
    die_by(sig);
  }
  if (taken.exchange(1) == 0) {
    if (!fault) g_first_stop_ns.store(monotonic_ns());
    if (g_writer_running.load()) {
      if (fault) ::alarm(30);
      g_stop_signal.store(sig);
      const ssize_t w = ::write(g_writer_pipe[1], &sig, sizeof sig);
      if (w == static_cast<ssize_t>(sizeof sig)) {
        if (!fault) {
          errno = saved;
          return;  // the interrupted code goes on; the writer raises the signal when done
        }
        wait_for_write_out();
        die_by(sig);
      }
    }
    // No writer thread: the write-out runs here, best effort (it may wait for a lock the
    // interrupted code holds: the watchdog alarm ends that).
    stopped_message(sig);
    ::alarm(30);
    g_in_signal.store(true);
    if (Location* loc = tls_location) loc->busy = false;  // the handler may interrupt a hook
    finalize(128 + sig);
  }
  die_by(sig);
}

// PROF_FLUSH_SIGNAL's handler: hands the signal to the signal writer (a negative number: a
// checkpoint, not a stop) and returns. Signals that come while a checkpoint is written are
// merged into the next one (the pipe is non-blocking; a full pipe drops them).
void on_flush_signal(int sig) {
  const int saved = errno;
  if (!g_finalize_started.load() && g_writer_running.load()) {
    const int code = -sig;
    const ssize_t w = ::write(g_writer_pipe[1], &code, sizeof code);
    (void)w;
  }
  errno = saved;
}

void install_signal_handlers() {
  bool any = false;
  const int flush = config::signal_of(config::g_values.flush_signal);
  const auto take = [&](int sig) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) return;
    struct sigaction sa {};
    sa.sa_handler = &on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    // No SA_RESETHAND: a stop signal that comes again during the write-out must not take the
    // default action (repeated_stop); die_by restores it when prof is done.
    sa.sa_flags = SA_NODEFER | SA_RESTART;
    any = ::sigaction(sig, &sa, nullptr) == 0 || any;
  };
  for (int sig : kFaultSignals) take(sig);
  for (int sig : kStopSignals)
    if (sig != flush) take(sig);
  if (flush) {
    struct sigaction old {};
    if (::sigaction(flush, nullptr, &old) == 0 && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
      log::warning("PROF_FLUSH_SIGNAL=%s: the program handles SIG%s itself; no checkpoints (choose another signal)",
                   config::g_values.flush_signal.c_str(), sigabbrev_np(flush));
    } else {
      struct sigaction sa {};
      sa.sa_handler = &on_flush_signal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      if (::sigaction(flush, &sa, nullptr) == 0) {
        g_flush_signal.store(flush);
        any = true;
      }
    }
  }
  if (any) start_signal_writer();
  if (g_flush_signal.load() && !g_writer_running.load())
    log::warning("PROF_FLUSH_SIGNAL=%s: prof's signal thread could not start; no checkpoints", config::g_values.flush_signal.c_str());
}

// Resident memory now and at its peak (KiB), for PROF_VERBOSE=2.
void log_rss(const char* where) {
  if (log::g_verbose < 2) return;
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return;
  char line[256];
  long rss = -1, hwm = -1;
  while (std::fgets(line, sizeof line, f)) {
    std::sscanf(line, "VmRSS: %ld", &rss);
    std::sscanf(line, "VmHWM: %ld", &hwm);
  }
  std::fclose(f);
  log::info(2, "memory %s: resident %ld KiB, peak %ld KiB", where, rss, hwm);
}

std::string size_text(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) std::snprintf(buf, sizeof buf, "%" PRIu64 "G", static_cast<std::uint64_t>(bytes >> 30));
  else std::snprintf(buf, sizeof buf, "%" PRIu64 "M", static_cast<std::uint64_t>((bytes + (1ull << 20) - 1) >> 20));
  return buf;
}

}  // namespace

// on_exit rather than atexit: its handler gets the exit status for ProgramEnd. Exit handlers run
// in reverse order of registration, and the dynamic linker's, which runs every library's
// destructors, is registered by libc just before the executable's constructors: when init runs
// earlier (a hook called from another library's constructor), this handler would run after those
// destructors. prof_init (the executable's constructor) then registers it again; finalize runs
// once, so the later registration, which runs first, wins. libprof's destructor (end of file) is
// the last resort for programs without that constructor.
void register_exit_handler() {
  on_exit([](int status, void*) {
    finalize(status);
    exit_status::apply(status);  // PROF_FAIL_EXIT_STATUS
  }, nullptr);
}

void init() {
  int expected = 0;
  if (!g_init_state.compare_exchange_strong(expected, 1)) return;  // done, or running on another thread
  int saved = errno;
  auto* s = new State;
  std::string err;
  std::vector<std::string> warnings;
  if (!config::load(environ, &err, &warnings)) log::fatal("%s", err.c_str());
  const config::Values& v = config::g_values;
  log::g_verbose = static_cast<int>(v.verbose);
  g_membarrier = ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  log::info(2, "finalize's barrier: %s", g_membarrier ? "membarrier" : "a 1 ms grace period (membarrier refused)");
  for (const auto& w : warnings) log::warning("%s", w.c_str());

  std::uint64_t page = v.page_size;
  std::uint64_t total = v.total_memory;
  if (v.enable_tracing && total < kMinTracingMemory)
    log::fatal("PROF_TOTAL_MEMORY=%s is too small for tracing; use at least 8M, e.g. PROF_TOTAL_MEMORY=16M",
               config::quoted(config::given_text("PROF_TOTAL_MEMORY")).c_str());
  const std::uint64_t otf2_bytes = budget::otf2_bytes(total, v.enable_tracing);
  const std::uint64_t event_bytes = budget::event_pool_bytes(total, v.enable_tracing);
  if (page * 4 > event_bytes && !std::getenv("PROF_PAGE_SIZE"))  // the page size is the default: the total is wrong
    log::fatal("PROF_TOTAL_MEMORY=%s (%" PRIu64 " bytes) is too small: the events need at least four chunks of "
               "PROF_PAGE_SIZE=64K; sizes take a unit, K, M or G (e.g. PROF_TOTAL_MEMORY=16M)",
               config::quoted(config::given_text("PROF_TOTAL_MEMORY")).c_str(), total);
  if (page < 4096 || (page & (page - 1)) != 0 || page * 4 > event_bytes)
    log::fatal("PROF_PAGE_SIZE=%s does not fit PROF_TOTAL_MEMORY=%s; use a power of two from 4K to a quarter of the event memory, "
               "e.g. 64K",
               config::quoted(config::given_text("PROF_PAGE_SIZE")).c_str(),
               config::quoted(config::given_text("PROF_TOTAL_MEMORY")).c_str());
  check_directory(v);
  if (!v.filtering_file.empty() || prof_instrument_filters) {
    // A malformed filter makes the run meaningless: fatal, before the program's work.
    auto* f = new filter::Filter;  // never destroyed: hooks may run during exit
    std::string ferr;
    for (const char* const* p = prof_instrument_filters; p && *p; ++p) {
      if (!f->load(*p, &ferr))
        log::fatal("the --instrument-filter file this program was built with cannot be used: %s; restore it or rebuild", ferr.c_str());
      log::info(1, "prof-wrap --instrument-filter=%s is applied as a run-time filter too (for code built without the GCC plugin)", *p);
    }
    if (!v.filtering_file.empty() && !f->load(v.filtering_file, &ferr)) log::fatal("PROF_FILTERING_FILE: %s", ferr.c_str());
    regions::set_filter(f);
    log::info(1, "filter: %zu rules", f->rule_count());
  }

  if (const char* w = timer::init(v.timer, debug_clock_skew(v.mpi_debug_clock_skew))) log::warning("%s", w);
  log::info(1, "timer: %s, %" PRIu64 " ticks/s", timer::name(), timer::resolution());
  // Throttling decides from the call-path profile (profile nodes exist with the summary too).
  const bool throttle = v.throttle && v.throttle_ns > 0 && (v.enable_profiling || v.summary);
  regions::set_throttle(throttle ? v.throttle_visits : 0, v.throttle_ns, static_cast<double>(timer::resolution()) / 1e9);
  if (throttle)
    log::info(1, "throttling: a function with >= %" PRIu64 " visits on a call path of mean < %" PRIu64 " ns is no longer measured",
              v.throttle_visits, v.throttle_ns);
  if (v.enable_tracing || v.enable_profiling || v.summary) {
    if (!s->events.init(event_bytes, page) || (v.enable_tracing && !s->otf2_blocks.init(otf2_bytes, kOtf2BlockBytes)))
      log::fatal("cannot reserve PROF_TOTAL_MEMORY=%s (%s); lower PROF_TOTAL_MEMORY",
                 config::quoted(config::given_text("PROF_TOTAL_MEMORY")).c_str(), std::strerror(errno));
    log::info(1, "memory: %" PRIu64 " chunks of %" PRIu64 " bytes for events and profile nodes, %" PRIu64 " KiB for OTF2 buffers",
              event_bytes / page, page, otf2_bytes >> 10);
  }
  read_cmdline(*s);
  {
    // The one root of every location's call tree: an artificial region named after the program.
    regions::RegionDef root;
    auto slash = s->exe_name.find_last_of('/');
    root.name = slash == std::string::npos ? s->exe_name : s->exe_name.substr(slash + 1);
    root.canonical = root.name;
    root.paradigm = regions::Paradigm::Measurement;
    root.role = regions::Role::Artificial;
    s->root_region = regions::define(root);
  }
  pthread_key_create(&s->key, &thread_exit);
  pthread_atfork(nullptr, nullptr, &atfork_child);
  install_signal_handlers();
  g_state = s;

  bool compiler = false;
  for (const prof_adapter* const* a = adapters::linked(); *a; ++a) {
    if (std::strcmp((*a)->name, "compiler") == 0) compiler = true;
    if ((*a)->init && (*a)->init() != 0) log::warning("adapter '%s' failed to initialise; its events are missing", (*a)->name);
    log::info(1, "adapter: %s", (*a)->name);
  }
  if (const char* w = adapters::missing_mpi_adapter()) log::warning("%s", w);
  // Sampling: parsed (a bad value is fatal here), sources probed, handler installed; every
  // thread's location then opens its sources.
  sampling::init();
  metrics::init();  // a bad event stops the program here
  g_phase.store(static_cast<int>(Phase::Within));
  g_compiler_hooks_on = compiler;
  register_exit_handler();
  g_init_state.store(2);

  if (Location* loc = create_location()) {
    // busy: the sampler's handler must not write into the buffer meanwhile
    loc->busy = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (v.enable_tracing) detail::put(loc, timer::start(), RecordType::ProgramBegin, 0);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    loc->busy = false;
  }
  log_rss("after init");
  errno = saved;
}

namespace {

/// The calling thread's side of a location it starts to use: metrics, adapters, sampling.
void start_on_this_thread(State& s, Location* loc) {
  metrics::thread_start(loc);  // before its first event
  for (const prof_adapter* const* a = adapters::linked(); *a; ++a)
    if ((*a)->init_location) (*a)->init_location(loc);
  pthread_setspecific(s.key, loc);
  tls_location = loc;
  sampling::thread_start(loc);
}

/// A parked location for the calling (new) thread, once the process has PROF_PTHREAD_REUSE_AFTER
/// thread locations; nullptr when none. Its events so far are written; it continues with a
/// fresh chunk and an empty stack, under the same OTF2 location and profile tree.
Location* take_parked_location(State& s) {
  Location* loc = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.parked.empty() || s.thread_locations < config::g_values.pthread_reuse_after) return nullptr;
    loc = s.parked.back();
    s.parked.pop_back();
    // Both under the mutex: a flush on another thread that saw it ended and not parked would
    // close it (convert_locked), and this thread's events would be dropped.
    loc->parked = false;
    loc->ended = false;
  }
  loc->depth = 0;
  loc->current_node = &loc->root_node;
  loc->profile_depth = 0;
  loc->unwind_check = false;
  loc->create_seq = 0;
  if (loc->tracing && !loc->trace.has_chunk()) {
    if (void* c = s.events.acquire()) loc->trace.add_chunk(c, s.events.chunk_bytes());
  }
  ++loc->reuses;
  if (loc->tracing) s.live_tracing.fetch_add(1, std::memory_order_relaxed);
  loc->active = true;
  start_on_this_thread(s, loc);
  return loc;
}

}  // namespace

Location* create_location() {
  State* s = g_state;
  if (!s || g_phase.load(std::memory_order_relaxed) != static_cast<int>(Phase::Within)) return nullptr;
  int saved = errno;
  bool main_thread = ::gettid() == ::getpid();
  if (Location* loc = main_thread ? nullptr : take_parked_location(*s)) {
    errno = saved;
    return loc;
  }
  auto* loc = new Location;
  loc->index = s->next_index.fetch_add(1);
  loc->name = main_thread ? "Master thread" : "Pthread thread " + std::to_string(loc->index);
  loc->tracing = config::g_values.enable_tracing;
  loc->profiling = config::g_values.enable_profiling || config::g_values.summary;  // PROF_SUMMARY needs the call tree
  loc->root_node = ProfileNode{s->root_region, 0, nullptr, nullptr, nullptr, 0, 0, ~std::uint64_t{0}, 0};
  loc->current_node = &loc->root_node;
  loc->profile_max_depth = static_cast<std::uint32_t>(config::g_values.profiling_max_callpath_depth);
  if (loc->tracing) {
    void* c = s->events.acquire();
    if (!c) {
      std::lock_guard<std::mutex> lock(s->mutex);
      for (Location* other : s->locations)
        if (other->ended && !other->parked && !other->converted) retire_locked(*s, other);
      c = s->events.acquire();
    }
    if (c) loc->trace.add_chunk(c, s->events.chunk_bytes());
  }
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    // The id embeds the rank, which ready() may change (at MPI_Init) under the same lock.
    loc->global_id = (static_cast<std::uint64_t>(loc->index) << 32) | s->rank;
    s->locations.push_back(loc);
    ++s->thread_locations;
  }
  if (loc->tracing) s->live_tracing.fetch_add(1, std::memory_order_relaxed);
  start_on_this_thread(*s, loc);
  errno = saved;
  return loc;
}

Location* create_detached_location(const std::string& name, LocationType type, const std::string& group) {
  State* s = g_state;
  if (!s || g_phase.load(std::memory_order_relaxed) != static_cast<int>(Phase::Within)) return nullptr;
  auto* loc = new Location;
  loc->index = s->next_index.fetch_add(1);
  loc->name = name;
  loc->type = type;
  loc->group = group;
  loc->detached = true;
  loc->tracing = config::g_values.enable_tracing;
  // GPU streams get profile columns (api::gpu_activity); NVTX lanes are trace-only.
  loc->profiling = type == LocationType::GpuStream && config::g_values.enable_profiling;
  loc->root_node = ProfileNode{s->root_region, 0, nullptr, nullptr, nullptr, 0, 0, ~std::uint64_t{0}, 0};
  loc->current_node = &loc->root_node;
  std::lock_guard<std::mutex> lock(s->mutex);
  // The id embeds the rank, which ready() may change (at MPI_Init) under the same lock.
  loc->global_id = (static_cast<std::uint64_t>(loc->index) << 32) | s->rank;
  s->locations.push_back(loc);
  return loc;
}

namespace {
std::mutex g_ignored_mutex;
std::vector<std::string>* g_ignored_prefixes;  // leaked: read at any time until exit
}  // namespace

void ignore_threads_of(const char* prefix) {
  std::lock_guard<std::mutex> lock(g_ignored_mutex);
  if (!g_ignored_prefixes) g_ignored_prefixes = new std::vector<std::string>;
  g_ignored_prefixes->emplace_back(prefix);
}

bool creates_ignored_threads(const void* caller) {
  {
    std::lock_guard<std::mutex> lock(g_ignored_mutex);
    if (!g_ignored_prefixes || g_ignored_prefixes->empty()) return false;
  }
  Dl_info info;
  if (!caller || !::dladdr(caller, &info) || !info.dli_fname) return false;
  const char* base = std::strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  std::lock_guard<std::mutex> lock(g_ignored_mutex);
  for (const auto& p : *g_ignored_prefixes)
    if (std::strncmp(base, p.c_str(), p.size()) == 0) return true;
  return false;
}

void resolve_profile_samples_locked(Location* loc);

/// A blocking MPI collective `loc` is still in (Location::open_coll: its rank was stopped inside
/// it, e.g. waiting in MPI_Barrier for a rank that failed) ends unfinished at `at`: the frames
/// opened inside its MPI function close, then its MpiCollectiveEnd (the operation and
/// communicator of its Begin, no root, 0 bytes) comes before that function's Leave, so the trace
/// pairs every Begin with an End. Returns the frames closed.
std::uint32_t close_collective(Location* loc, Timestamp at) {
  std::uint32_t n = 0;
  for (; loc->depth > loc->open_coll; ++n) detail::pop(loc, at);
  constexpr std::uint64_t kNoRoot = 0xffffffffu;  // OTF2_UNDEFINED_UINT32
  const Payload p[2] = {{kNoRoot, 0}, {0, 0}};
  if (event(loc, at, RecordType::MpiCollectiveEnd, loc->open_coll_comm, loc->open_coll_op, p, 2)) ++loc->unfinished_collectives;
  loc->open_coll = 0;
  loc->closed_at_end += n;
  return n;
}

/// Closes `loc`'s open frames at the end of its thread or of measurement (`now`), or at
/// Location::close_at where an adapter set it (with its ThreadTeamEnd); returns how many. A
/// collective still open ends first (close_collective).
std::uint32_t close_frames(Location* loc, Timestamp now) {
  Timestamp at = now;
  if (loc->close_at != 0 && loc->close_at < now) at = std::max(loc->close_at, loc->tracing ? loc->trace.last_time() : 0);
  const std::uint32_t n = (loc->open_coll != 0 ? close_collective(loc, at) : 0) + close_all_frames(loc, at);
  if (loc->close_at != 0 && loc->close_team != 0 && loc->tracing) event(loc, at, RecordType::ThreadTeamEnd, loc->close_team - 1, 0);
  // Used once: a thread that takes this location later (PROF_PTHREAD_REUSE_AFTER) starts clean.
  loc->close_at = 0;
  loc->close_team = 0;
  return n;
}

void end_location(Location* loc) {
  State* s = g_state;
  if (!s || loc->ended) return;
  int saved = errno;
  bool was_busy = loc->busy;
  loc->busy = true;
  // First the adapters (an OpenMP thread that never saw its team's end says when that was).
  for (const prof_adapter* const* a = adapters::linked(); *a; ++a)
    if ((*a)->finalize_location) (*a)->finalize_location(loc);
  if (loc->active && g_phase.load() == static_cast<int>(Phase::Within)) {
    const Timestamp t = timer::now();
    close_frames(loc, t);
    if (loc->create_seq) event(loc, t, RecordType::ThreadEnd, 0, loc->create_seq);
  }
  metrics::thread_end(loc);
  sampling::thread_end(loc);
  if (!loc->tracing && loc->sample_buffer.has_chunk()) {
    std::lock_guard<std::mutex> lock(s->mutex);
    if (!g_finalized.load()) resolve_profile_samples_locked(loc);  // else finalize does it
  }
  loc->active = false;
  loc->ended = true;
  if (loc->tracing) s->live_tracing.fetch_sub(1, std::memory_order_relaxed);
  bool park = false;
  if (g_phase.load() == static_cast<int>(Phase::Within) && !loc->detached) {
    std::lock_guard<std::mutex> lock(s->mutex);
    if (!g_finalized.load()) {
      // A thread other than the first may hand its location to a later thread: its events are
      // written now and its chunks go back to the pool; its OTF2 location stays open. Before the
      // ready step (MPI: before MPI_Init) it is closed at the end instead, as are the others.
      // Only where a later thread may take it (PROF_PTHREAD_REUSE_AFTER reached: until then an
      // ended thread's OTF2 buffer is given back at once) and without metrics (a thread's
      // counters start at 0: on a shared location its values would go down).
      // Not one that another thread's flush closed meanwhile (it saw `ended`, set above without
      // the mutex): a closed location drops what a later thread would record there.
      const bool can_park = loc->index != 0 && !was_busy && tls_location == loc && loc->metric_count == 0 && !loc->converted &&
                            s->thread_locations.load() >= config::g_values.pthread_reuse_after &&
                            (!loc->tracing || ((s->is_ready || !s->deferred) && ready_locked(*s) && !s->trace_abandoned));
      if (can_park && (!loc->tracing || write_out_locked(*s, loc))) {
        loc->trace.release_all(release_chunk);
        loc->parked = park = true;  // flushes leave it alone from now on
      } else if (loc->tracing && s->is_ready) {
        retire_locked(*s, loc);
      }
    }
  }
  loc->busy = was_busy;
  if (park) {
    // This thread may still run hooks (later thread-local destructors): from now on they reach an
    // inert location, never the one a later thread takes. Then the location is free to take.
    static Location* const inert = [] {
      auto* l = new Location;
      l->active = false;
      l->ended = true;
      return l;
    }();
    tls_location = inert;
    std::lock_guard<std::mutex> lock(s->mutex);
    if (!g_finalized.load()) s->parked.push_back(loc);
  }
  errno = saved;
}

/// Pool chunks that trace buffers leave free. For new threads (a new thread needs one for its
/// first event): without that, one busy thread took the whole pool and every thread started
/// after it lost events. For the profile: its nodes are never freed, and trace buffers, which a
/// flush empties, must not take the memory it needs (64 threads tracing at 16M ran their
/// profiles into PROFILE MEMORY FULL while the traces held all but the new threads' reserve).
std::size_t new_thread_reserve(const State& s) {
  const std::uint32_t live = s.live_tracing.load(std::memory_order_relaxed);
  const std::size_t others = (live > 1 ? live - 1 : 0) + (s.thread_locations.load(std::memory_order_relaxed) > 1 ? 1 : 0);
  return std::min(s.events.chunk_count() / 8, 2 * others);
}
std::size_t profile_reserve(const State& s) {
  if (!config::g_values.enable_profiling) return 0;
  return std::min<std::size_t>(s.events.chunk_count() / 8, s.live_tracing.load(std::memory_order_relaxed) + 1);
}

Record* reserve_slow(Location* loc, Timestamp t, unsigned slots) {
  State* s = g_state;
  // After the stop only finalize writes (the Leaves of open frames, ProgramEnd): it may flush.
  const bool finalizing = g_finalized.load(std::memory_order_relaxed);
  if (!s || !loc->tracing || (finalizing && static_cast<pid_t>(::gettid()) != g_finalize_tid.load())) {
    ++loc->lost_events;
    return nullptr;
  }
  // The last chunks of the pool are left to new threads and to the profile: a thread holding
  // several flushes its own instead. Its first chunk it always takes; a second only above the
  // profile's reserve (threads that start in a burst each took two, and left the profile none).
  const std::size_t profile = profile_reserve(*s);
  const std::size_t free_chunks = s->events.chunk_count() - s->events.in_use();
  const std::size_t held = loc->trace.chunk_count();
  if (held == 0 || free_chunks > new_thread_reserve(*s) + profile || (held == 1 && free_chunks > profile)) {
    if (void* c = s->events.acquire()) {
      loc->trace.add_chunk(c, s->events.chunk_bytes());
      return loc->trace.try_reserve(slots);
    }
  }
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    if (!g_finalized.load() || finalizing) flush_locked(*s, loc, t);
  }
  if (loc->trace.has_chunk())
    if (Record* r = loc->trace.try_reserve(slots)) return r;
  if (void* c = s->events.acquire()) {
    loc->trace.add_chunk(c, s->events.chunk_bytes());
    return loc->trace.try_reserve(slots);
  }
  ++loc->lost_events;
  return nullptr;
}

// Profile memory goes to a location in slabs carved from shared pool chunks: its first slab is
// 4 KiB, each next one twice the last, up to a whole chunk. Many short threads with a few call
// paths each then take a few KiB each, not a chunk each (which starved the traces of 320 short
// threads in 16 MiB).
bool profile_chunk(Location* loc) {
  State* s = g_state;
  if (!s || g_finalized.load(std::memory_order_relaxed)) return false;
  constexpr std::size_t kFirstSlab = 4096;
  const std::size_t chunk = s->events.chunk_bytes();
  const std::size_t want = std::min(chunk, kFirstSlab << std::min<std::uint32_t>(loc->arena.slabs, 16));
  std::lock_guard<std::mutex> lock(s->mutex);
  const auto take = [&](char* at, std::size_t bytes) {
    loc->arena.pos = at;
    loc->arena.end = at + bytes;
    ++loc->arena.slabs;
    return true;
  };
  const auto left = static_cast<std::size_t>(s->slab_end - s->slab_pos);
  if (want < chunk && left >= kFirstSlab) {
    const std::size_t bytes = std::min(want, left);  // the rest of the shared chunk when less is left
    char* at = s->slab_pos;
    s->slab_pos += bytes;
    return take(at, bytes);
  }
  // A new chunk, from what trace buffers leave (profile_reserve), before new threads' reserve.
  // Profile nodes are never freed, trace chunks come back: low on chunks, this thread's trace is
  // flushed and ended threads' buffers are written first; then the profile takes what is left.
  std::size_t free_chunks = s->events.chunk_count() - s->events.in_use();
  if (free_chunks <= new_thread_reserve(*s)) {
    if (loc->tracing) flush_locked(*s, loc, timer::now());
    for (Location* other : s->locations)
      if (other != loc && other->ended && !other->parked && !other->converted && s->is_ready) retire_locked(*s, other);
  }
  auto* c = static_cast<char*>(s->events.acquire());
  if (!c) return false;
  s->profile_bytes.fetch_add(chunk, std::memory_order_relaxed);
  if (want >= chunk) return take(c, chunk);  // a thread with many call paths: chunks of its own
  s->slab_pos = c + want;
  s->slab_end = c + chunk;
  return take(c, want);
}

bool profile_chunk_unlocked(Location* loc) {
  State* s = g_state;
  if (!s) return false;
  void* c = s->events.acquire();  // lock-free: callers may hold the State mutex
  if (!c) return false;
  loc->arena.pos = static_cast<char*>(c);
  loc->arena.end = loc->arena.pos + s->events.chunk_bytes();
  s->profile_bytes.fetch_add(s->events.chunk_bytes(), std::memory_order_relaxed);
  return true;
}

RegionId memory_full_region(bool define) {
  static std::atomic<RegionId> id{kNoRegion};
  RegionId r = id.load(std::memory_order_acquire);
  if (r != kNoRegion || !define || !g_state) return r;
  regions::RegionDef def;
  def.name = def.canonical = "PROFILE MEMORY FULL";
  def.paradigm = regions::Paradigm::Measurement;
  def.role = regions::Role::Artificial;
  r = regions::define(def);  // defines once: the same definition gives the same id
  id.store(r, std::memory_order_release);
  return r;
}

void defer_ready() {
  if (g_state) g_state->deferred = true;
}

bool stop_requested() { return g_in_signal.load(); }

void add_clock_offset(Timestamp local, std::int64_t offset) {
  if (!g_state) return;
  std::lock_guard<std::mutex> lock(g_state->mutex);
  g_state->clock_offsets.emplace_back(local, offset);
}

void set_mpp(Mpp* mpp) {
  if (!g_state) return;
  std::lock_guard<std::mutex> lock(g_state->mutex);
  g_state->mpp = mpp;
}

bool ready(std::uint32_t rank) {
  State* s = g_state;
  if (!s) return false;
  std::lock_guard<std::mutex> lock(s->mutex);
  if (!s->is_ready && rank != s->rank) {
    // Location ids embed the rank; nothing was written under the old ids yet (only spilled).
    s->rank = rank;
    for (Location* loc : s->locations) loc->global_id = (static_cast<std::uint64_t>(loc->index) << 32) | rank;
  }
  return ready_locked(*s);
}

void code_unloaded() {
  State* s = g_state;
  if (!s) return;
  regions::forget_addresses();
  std::lock_guard<std::mutex> lock(s->mutex);
  // A plain byte store into other threads' locations: each owner clears its own cache when it
  // next sees the flag (hooks test it next to `active`).
  for (Location* loc : s->locations) loc->cache_stale = true;
}

std::uint64_t next_thread_seq() { return g_state ? g_state->thread_seq.fetch_add(1) + 1 : 0; }

void* sample_chunk(bool samples_only) {
  State* s = g_state;
  if (!s) return nullptr;
  // Samples kept for the profile alone wait until their thread ends: they may take a quarter of
  // the pool, so that the profile's own nodes always find memory.
  if (samples_only && g_sample_chunks.load(std::memory_order_relaxed) >= s->events.chunk_count() / 4) return nullptr;
  void* c = s->events.acquire();
  if (c && samples_only) g_sample_chunks.fetch_add(1, std::memory_order_relaxed);
  return c;
}

// Samples kept without a trace go into the profile (the thread ended, or measurement stopped).
void resolve_profile_samples_locked(Location* loc) {
  if (loc->tracing || !loc->sample_buffer.has_chunk()) return;
  sampling::resolve(loc, loc->sample_buffer, false);
  g_sample_chunks.fetch_sub(loc->sample_buffer.chunk_count(), std::memory_order_relaxed);
  loc->sample_buffer.release_all(release_chunk);
}
std::size_t chunk_bytes() { return g_state ? g_state->events.chunk_bytes() : 0; }
RegionId root_region() { return g_state ? g_state->root_region : 0; }


namespace {

// The steps of finalize, in order.

/// Adapters hand over what they buffered (CUPTI's activity records) while recording still runs
/// (in a signal handler they only close their state: api::stop_requested()).
void finalize_adapters() {
  for (const prof_adapter* const* a = adapters::linked(); *a; ++a)
    if ((*a)->finalize) (*a)->finalize();
}

/// The hooks set loc->busy, then read the flags, with only a compiler fence between (no fence
/// instruction on the hot path). After finalize changed the flags, a barrier on every thread of
/// the process (membarrier) orders the two: each hook either saw the new flags or its busy is
/// visible now. False where the kernel refuses it.
bool barrier_on_all_threads() {
  return g_membarrier && ::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/// Stops recording everywhere, then waits (bounded) for threads still inside a hook, so their
/// buffers are read only up to what they committed. The locations, in creation order: a
/// location's position in its process is its index (RMA ranks rely on it).
std::vector<Location*> stop_recording(State& s, const Location* self) {
  g_compiler_hooks_on = false;
  sampling::stop();
  g_phase.store(static_cast<int>(Phase::Post));
  std::vector<Location*> locs;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    locs = s.locations;
  }
  std::sort(locs.begin(), locs.end(), [](const Location* a, const Location* b) { return a->index < b->index; });
  // A hook that read the flags just before they changed still finishes its event: wait until no
  // thread is busy. Its busy store is visible after the barrier; without membarrier, after a
  // grace period (a hook takes well under a microsecond).
  const auto wait_busy = [&] {
    for (Location* loc : locs) {
      if (loc == self) continue;
      for (int i = 0; i < 10000 && __atomic_load_n(&loc->busy, __ATOMIC_ACQUIRE) && !loc->ended; ++i) ::usleep(1);
    }
  };
  if (!barrier_on_all_threads()) ::usleep(1000);
  wait_busy();
  // A thread in the middle of a flush (the signal writer stops a run that was flushing) holds the
  // mutex until its buffer is written; then it stores the event that asked for room and leaves.
  { std::lock_guard<std::mutex> lock(s.mutex); }
  wait_busy();
  return locs;
}

/// What the locations counted during the run, summed for the end-of-run lines.
struct RunCounts {
  std::uint64_t repairs = 0, unmatched = 0, closed = 0, lost = 0, reentries = 0, late_reentries = 0, replayed = 0;
  std::uint64_t unfinished_collectives = 0;  // MPI collectives a stop ended (close_collective)
  RegionId first_repair_by = ~0u, first_repaired = ~0u, first_unmatched = ~0u;  // see Location
  std::uint64_t samples = 0, samples_in_prof = 0, samples_dropped = 0, sample_ticks = 0;
};

/// Closes the frames still open on locations that did not end (and reads their last metric
/// values), writes ProgramEnd with the exit status on the first location, sums the counters.
RunCounts close_locations(const std::vector<Location*>& locs, std::int64_t exit_status) {
  const Timestamp end = timer::now();
  RunCounts c;
  for (Location* loc : locs) {
    if (!loc->ended) {
      c.closed += close_frames(loc, end);
      metrics::thread_end(loc);  // the calling thread's own: its last values (others keep theirs)
      if (loc->index == 0 && loc->tracing) {
        event(loc, end, RecordType::ProgramEnd, 0, static_cast<std::uint64_t>(exit_status));
      }
    }
    c.samples += loc->samples;
    c.samples_in_prof += loc->samples_in_prof;
    c.samples_dropped += loc->samples_dropped;
    c.sample_ticks += loc->sample_ticks;
    if (c.repairs == 0 && loc->repairs) {
      c.first_repair_by = loc->first_repair_by;
      c.first_repaired = loc->first_repaired;
    }
    if (c.unmatched == 0 && loc->unmatched_leaves) c.first_unmatched = loc->first_unmatched;
    c.repairs += loc->repairs;
    c.unmatched += loc->unmatched_leaves;
    c.lost += loc->lost_events;
    c.reentries += loc->dropped_reentries;
    c.late_reentries += loc->late_reentries;
    c.replayed += loc->replayed_events;
    c.unfinished_collectives += loc->unfinished_collectives;
  }
  return c;
}

void report_sampling(const RunCounts& c) {
  if (!sampling::on()) return;
  const std::string unsampled = sampling::unsampled_warning();
  if (!unsampled.empty()) log::warning("%s", unsampled.c_str());
  const std::uint64_t handled = c.samples - std::min(c.samples, sampling::ring_samples());  // the others ran no handler
  log::info(1, "sampling: %" PRIu64 " samples, %" PRIu64 " inside prof itself, %" PRIu64 " dropped; %.0f ns per sample in the handler",
            c.samples, c.samples_in_prof, c.samples_dropped,
            handled ? static_cast<double>(c.sample_ticks) * 1e9 / static_cast<double>(timer::resolution()) / static_cast<double>(handled) : 0.0);
  if (c.samples_dropped)
    log::warning("sampling: %" PRIu64 " samples were dropped for lack of buffer memory; raise PROF_TOTAL_MEMORY", c.samples_dropped);
}

/// With other processes: are they all here? Without all of them no collective may run (a dead
/// rank would block the rest); then each process writes its own data, marked incomplete.
bool meet_other_processes(State& s) {
  if (!s.mpp) return true;
  std::string why;
  if (s.mpp->arrive(&why)) return true;
  log::error("%s; this rank writes its own data, unmerged, and marks the experiment incomplete", why.c_str());
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.is_ready) {
    char text[2048];
    std::snprintf(text, sizeof text, "This experiment is incomplete: %s.\nRank %u wrote its own profile (%s.rank%u.cubex)%s.\n",
                  why.c_str(), s.rank, config::g_values.profiling_base_name.c_str(), s.rank,
                  config::g_values.enable_tracing ? " and merged its trace into traces.otf2 with the ranks that got as far "
                                                    "(their definitions: prof-parts/)" : "");
    const std::string err = experiment_dir::write_file(s.claim, "incomplete.rank" + std::to_string(s.rank), text);
    if (!err.empty()) log::error("%s", err.c_str());
  }
  return false;
}

using ClockOffsets = std::vector<std::pair<Timestamp, std::int64_t>>;

/// The clocks: a second offset to rank 0 now (the first was taken at MPI_Init), so readers can
/// interpolate between them; before the first one the first offset holds. Empty without MPI.
ClockOffsets final_clock_offsets(State& s, bool together, Timestamp last) {
  if (s.mpp && together) {
    Timestamp at = 0;
    std::int64_t offset = 0;
    if (s.mpp->sync_clock(&at, &offset)) add_clock_offset(at, offset);
  }
  ClockOffsets offsets;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    offsets = s.clock_offsets;
  }
  if (!offsets.empty()) {
    offsets.insert(offsets.begin(), {timer::start(), offsets.front().second});
    if (offsets.back().first < last) offsets.emplace_back(last, offsets.back().second);
  }
  return offsets;
}

/// Converts what the locations still hold, unifies the definitions of all processes and closes
/// the archive. Every process takes part in the unification and the archive's collective close.
/// Not `together` (MPI, a failed rank or a checkpoint's copy): merges this rank's part with those
/// of the ranks that got as far (partial_trace); `merged` then gets the ranks the trace holds, and
/// the line about it is the caller's (else it is logged here). True: a trace was written.
bool write_trace(State& s, const std::vector<Location*>& locs, bool together, const ClockOffsets& offsets, Timestamp last,
                 std::vector<std::uint32_t>* merged = nullptr) {
  const auto global = [&](Timestamp t, std::int64_t off) { return static_cast<Timestamp>(static_cast<std::int64_t>(t) + off); };
  std::lock_guard<std::mutex> lock(s.mutex);
  const double write_start = wall_ms();
  s.events.trim();  // free chunks go back before OTF2 needs memory to close its files
  log_rss("before the final conversion");
  // Locations with an open OTF2 writer first: each close gives its buffer back for the others.
  for (Location* loc : locs)
    if (s.writer.writing(loc->global_id)) convert_locked(s, loc, true);
  for (Location* loc : locs) convert_locked(s, loc, true);
  log_rss("after the final conversion");
  // Opening the archive was agreed (TraceWriter::open), so either all have it or none (trace_abandoned).
  unify::ProcessPart self;
  self.rank = s.rank;
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  self.host = host;
  // In rank 0's time: the global start and end of the trace.
  self.start = offsets.empty() ? timer::start() : global(timer::start(), offsets.front().second);
  self.end = offsets.empty() ? last : global(last, offsets.back().second);
  otf2w::Definitions defs;
  for (Location* loc : locs) {
    if (s.writer.is_open())
      self.locations.push_back({loc->global_id, loc->name, s.writer.event_count(loc->global_id),
                                static_cast<std::uint8_t>(loc->type), loc->group});
    defs.local_locations.push_back(loc->global_id);
  }
  unify::Result unified;
  std::string err;
  const double unify_start = wall_ms();
  const bool unified_ok = together && !s.trace_abandoned && (s.writer.is_open() || s.mpp) &&
                          unify::unify(s.mpp, self, regions::snapshot(), comms::snapshot(), &unified, &err);
  if (unified_ok && s.mpp && s.rank == 0)
    log::info(1, "unification: %zu processes, %zu regions, %zu communicators in %.1f ms; rank 0 received %" PRIu64
                 " bytes, the merged definitions are %" PRIu64 " bytes",
              unified.processes.size(), unified.regions.size(), unified.comms.size(), wall_ms() - unify_start,
              unified.bytes_received, unified.bytes_union);
  if (!together && s.mpp && s.writer.is_open() && !s.trace_abandoned && !s.writer.failed()) {
    // A failed rank: no unification with the others; this rank's part joins those already saved.
    std::vector<std::uint32_t> ranks;
    if (!partial_trace::save_and_merge(s.writer, s.writer.directory(), s.rank, s.mpp->size(), s.mpp->paradigm(), self,
                                       defs.local_locations, offsets, &ranks, &err)) {
      log::error("%s", experiment_dir::readable(s.claim, err).c_str());
      return false;
    }
    partial_trace::remove_salvage_part(s.writer.directory(), s.rank);
    if (merged) *merged = ranks;
    else
      log::info(0, "trace merged without the other ranks' help: %s/traces.otf2 holds ranks %s (a rank that writes later "
                   "adds itself)", s.directory.c_str(), partial_trace::describe_ranks(ranks, s.mpp->size()).c_str());
    return true;
  }
  if (!unified_ok && !err.empty()) log::error("%s; the trace is not written", err.c_str());
  if (unified_ok && !err.empty()) log::error("%s", err.c_str());
  if (!unified_ok || !s.writer.is_open()) return false;
  defs.clock.resolution = timer::resolution();
  defs.clock.offset = unified.start;
  defs.clock.length = unified.end - unified.start;
  defs.clock.realtime_ns = timer::realtime_ns(unified.start);
  defs.clock_offsets = offsets;
  defs.machine = "Linux";
  defs.mpp_paradigm = s.mpp ? s.mpp->paradigm() : nullptr;
  defs.region_map = std::move(unified.region_map);
  defs.comm_map = std::move(unified.comm_map);
  defs.window_map = std::move(unified.window_map);
  defs.context_map = std::move(unified.context_map);
  defs.generator_map = std::move(unified.generator_map);
  defs.contexts = std::move(unified.contexts);
  defs.generators = std::move(unified.generators);
  defs.is_root = s.rank == 0;
  defs.regions = std::move(unified.regions);
  defs.comms = std::move(unified.comms);
  defs.processes = std::move(unified.processes);
  const bool written = s.writer.finish(defs, &err);
  partial_trace::remove_salvage_part(s.writer.directory(), s.rank);  // written, or removed after a failure
  if (!written) {
    report_trace_failure(s);
    if (!err.empty()) log::error("%s", err.c_str());
    if (const std::uint64_t dropped = s.writer.stats().dropped_events)
      log::info(1, "%" PRIu64 " events recorded after the trace failed were dropped", dropped);
  } else if (s.rank == 0)
    log::info(1, "trace written: %s/traces.otf2 (%" PRIu64 " events here; the final conversion and the archive's close took %.0f ms)",
              s.directory.c_str(), s.writer.stats().events, wall_ms() - write_start);
  log_rss("after writing the definitions");
  return written;
}

/// The raw-first write-out at a stop signal (partial_trace: stop dumps): when the trace still
/// buffered is PROF_STOP_DUMP_MIN or more, each location's raw records and its writer's state
/// go to disk first, so that a SIGKILL during the conversion that follows loses nothing that
/// prof-salvage cannot convert.
void dump_at_stop(State& s, const std::vector<Location*>& locs) {
  std::lock_guard<std::mutex> lock(s.mutex);
  if (g_checkpoint_child || (s.mpp && !s.is_ready)) return;  // never a collective (ready) from here
  std::uint64_t buffered = 0;
  for (const Location* loc : locs)
    if (!loc->converted) buffered += loc->trace.bytes() + loc->spill_bytes;
  if (buffered == 0 || buffered < config::g_values.stop_dump_min) return;
  if (!ready_locked(s) || !s.writer.is_open() || s.writer.failed() || s.trace_abandoned) return;
  const double start = wall_ms();
  for (Location* loc : locs) {
    if (loc->converted) continue;
    unspill_locked(s, loc);  // rare (more threads flushed at once than OTF2 has buffers): converted now
    if (!loc->samples_resolved) sampling::resolve(loc, loc->trace, true);  // calling contexts defined before the save
    loc->samples_resolved = true;
  }
  save_salvage_locked(s);
  std::vector<partial_trace::StopEntry> entries;
  for (const Location* loc : locs) {
    partial_trace::StopEntry e;
    e.location = loc->global_id;
    e.events = &loc->trace;
    if (!loc->converted && s.writer.resume_state(loc->global_id, &e.writer)) entries.push_back(std::move(e));
  }
  std::uint64_t bytes = 0;
  if (partial_trace::save_stop_dump(s.writer.directory(), s.rank, entries, &bytes)) {
    g_safe_ns.store(monotonic_ns());
    log::info(1, "stop: %s of buffered events of %zu locations dumped raw in %.0f ms (a kill before the trace is written "
                 "leaves them to prof-salvage)",
              size_text(bytes).c_str(), entries.size(), wall_ms() - start);
  } else {
    log::warning("cannot dump the buffered events at the stop in '%s/prof-parts' (%s); a kill before the trace is "
                 "written loses them",
                 s.directory.c_str(), std::strerror(errno));
  }
}

/// After a stop signal's write-out: one line when a kill could still have lost data more than
/// 2 s after the signal (the raw dump, or the whole write-out without one), with what helps.
void report_slow_stop() {
  const std::int64_t first = g_first_stop_ns.load();
  if (!g_stop_signal.load() || !first) return;
  const std::int64_t now = monotonic_ns(), safe = g_safe_ns.load() ? g_safe_ns.load() : now;
  if (safe - first <= kSlowStopNs) return;
  log::warning("the data were safe from a kill only %.1f s after the stop signal (the write-out took %.1f s); batch "
               "systems kill a grace time after their signal (Slurm: KillWait; srun, timeout -k: often 2 s): ask for the "
               "signal earlier (sbatch --signal=B:TERM@120), keep checkpoints (PROF_FLUSH_SIGNAL), or buffer less "
               "(PROF_TOTAL_MEMORY)",
               static_cast<double>(safe - first) * 1e-9, static_cast<double>(now - first) * 1e-9);
}

/// The samples still in trace buffers (and spill files, which come first) give the profile their
/// hits now, before the profile is written; the trace conversion later leaves them as they are.
/// `traced`: a trace is written (spill files are converted into it, samples kept for it).
void resolve_trace_samples(State& s, const std::vector<Location*>& locs, bool traced) {
  if (!sampling::on()) return;
  std::lock_guard<std::mutex> lock(s.mutex);
  for (Location* loc : locs) {
    if (!loc->tracing || loc->converted || loc->samples_resolved) continue;
    if (traced && !loc->spill_file.empty() && ready_locked(s) && s.writer.is_open()) unspill_locked(s, loc);
    sampling::resolve(loc, loc->trace, traced);
    loc->samples_resolved = true;
  }
}

/// The functions throttled in `profile` (the job's, on rank 0) as prof.throttle.filter, and one
/// line that says how many and how to reuse it (not from a checkpoint's copy: the end says it).
void write_throttle_filter(State& s, const cube4::Profile& profile) {
  if (s.rank != 0) return;
  std::vector<filter::ThrottledRegion> throttled;
  for (const cube4::Region& r : profile.regions)
    if (r.throttled_visits) throttled.push_back({r.name, r.canonical, r.throttled_visits, r.throttled_mean_ns});
  if (throttled.empty()) return;
  std::sort(throttled.begin(), throttled.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::string path, err;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!ready_locked(s)) return;
    err = experiment_dir::write_file(s.claim, "prof.throttle.filter", filter::throttle_filter_text(throttled));
    path = s.directory + "/prof.throttle.filter";
  }
  if (!err.empty()) log::error("%s; the list of throttled functions is not written (the profile names them)", err.c_str());
  if (g_checkpoint_child || !err.empty()) return;
  const config::Values& v = config::g_values;
  log::info(0, "%zu function%s throttled (visits of < %" PRIu64 " ns each: PROF_THROTTLE; later calls are in their callers' time); "
            "to leave them out from the start: prof-wrap --instrument-filter=%s (or PROF_FILTERING_FILE=%s); PROF_THROTTLE=false measures every call",
            throttled.size(), throttled.size() == 1 ? " was" : "s were", v.throttle_ns, path.c_str(), path.c_str());
}

/// Builds the call-path profile (with the samples kept without a trace), merges the ranks' into
/// one on rank 0, writes it (PROF_ENABLE_PROFILING) and the summary table (PROF_SUMMARY).
void write_profile(State& s, const std::vector<Location*>& locs, bool together, Timestamp last) {
  const config::Values& v = config::g_values;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    for (Location* loc : locs) {
      resolve_profile_samples_locked(loc);  // samples kept without a trace
      sampling::attribute_prof_samples(loc);
      sampling::attribute_ring_samples(loc);  // threads that block the sampling signal
    }
  }
  cube4::Profile profile;
  if (s.mpp) {
    profile.process = std::string(s.mpp->paradigm()) + " Rank " + std::to_string(s.rank);
    profile.rank = s.rank;
  }
  std::string err;
  bool built = build_profile(locs, last, &profile, &err);
  if (!built) log::error("%s; no profile written", err.c_str());
  std::string profile_name = v.profiling_base_name;
  if (s.mpp && !together) {
    profile_name += ".rank" + std::to_string(s.rank);
  } else if (s.mpp) {
    // One profile for the job: every rank takes part, also one without a profile of its own.
    if (!built) profile = cube4::Profile{};
    std::string merge_err;
    const double merge_start = wall_ms();
    if (!profile_merge::gather(s.mpp, &profile, &merge_err)) log::error("%s; the profile is not written", merge_err.c_str());
    else if (g_checkpoints.load() && s.is_ready)  // this rank's checkpoint: the job's profile replaces it
      ::unlink((experiment_dir::io_path(s.claim) + "/" + profile_name + ".rank" + std::to_string(s.rank) + ".cubex").c_str());
    else if (s.rank == 0)
      log::info(1, "profile merge: %zu call paths, %zu locations in %.1f ms", profile.cnodes.size(), profile.locations.size(),
                wall_ms() - merge_start);
    built = s.rank == 0 && !profile.cnodes.empty() && merge_err.empty();
  }
  if (!built) return;
  write_throttle_filter(s, profile);
  if (v.enable_profiling) {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (ready_locked(s)) {
      std::string path = experiment_dir::io_path(s.claim) + "/" + profile_name + ".cubex";
      if (!cube4::write(path, profile, &err)) {
        log::error("%s", experiment_dir::readable(s.claim, err).c_str());
        s.profile_failed = true;
      } else log::info(1, "profile written: %s/%s.cubex", s.directory.c_str(), profile_name.c_str());
    }
  }
  if (v.summary) std::fputs(summary_table(profile, 10).c_str(), stderr);
}

/// The profile's own limits: visits folded at the depth limit, call paths without memory.
void report_profile_limits(State& s, const std::vector<Location*>& locs) {
  const config::Values& v = config::g_values;
  std::uint64_t folded = 0, too_deep = 0, misses = 0, nodes = 0;
  DistinctCounter missing;
  for (Location* loc : locs) {
    folded += loc->profile_folded;
    too_deep += loc->profile_too_deep;
    misses += loc->full.misses;
    if (loc->full.misses) missing.merge(loc->full.missing);
    nodes += loc->arena.nodes;
  }
  if (too_deep)
    log::warning("%" PRIu64 " visits deeper than PROF_PROFILING_MAX_CALLPATH_DEPTH=%s"
                 " were folded into their ancestor at that depth (their time is in its inclusive time); raise the variable to see them",
                 too_deep, config::given_text("PROF_PROFILING_MAX_CALLPATH_DEPTH").c_str());
  if (misses) {
    // The memory the missing call paths would have taken, with a margin for the estimate's
    // error and for each location's partly used last slab, on top of today's event pool.
    const auto paths = static_cast<std::uint64_t>(missing.estimate() + 0.5);
    // A node carries its metric sums after it (events.cpp, node_bytes): whole cache lines.
    const std::uint64_t node = sizeof(ProfileNode) + (std::uint64_t{metrics::location_count(true)} * 8 + 63) / 64 * 64;
    // The margin: each location's partly used last slab in a run with room (at most the next
    // slab it would take: 4 KiB doubling per slab, up to a page), and the shared chunk's rest.
    std::uint64_t unused = v.page_size;
    for (const Location* l : locs) unused += std::min<std::uint64_t>(v.page_size, std::uint64_t{4096} << std::min<std::uint32_t>(l->arena.slabs, 16));
    const std::uint64_t more = paths * node + unused;
    const double need = static_cast<double>(s.events.chunk_count() * s.events.chunk_bytes()) + 1.125 * static_cast<double>(more);
    const std::string in_caller = folded ? " (" + std::to_string(folded) + " visits in their caller: no more such nodes)" : "";
    std::uint64_t total = budget::total_for_event_pool(need, v.enable_tracing, v.page_size);
    // With flushes, trace buffers took the pool: a little more memory would go to them again
    // (16M said 17M, 17M said 18M). What ends the flushes leaves the profile room for good.
    std::uint64_t raw = s.bytes_recorded;  // the profile is written before the last conversion: and what is still buffered
    for (const Location* l : locs)
      if (l->tracing && !l->converted) raw += l->trace.bytes();
    if (v.enable_tracing && s.flushes)
      total = std::max(total, budget::total_without_flush(static_cast<double>(raw),
                                                          static_cast<double>(s.profile_bytes.load() + more),
                                                          static_cast<double>(locs.size()), v.page_size));
    log::warning("the profile ran out of memory: it holds %" PRIu64 " call paths (%s), about %" PRIu64
                 " more are in 'PROFILE MEMORY FULL' nodes%s; it needed about %s more%s: set PROF_TOTAL_MEMORY=%s",
                 nodes, size_text(s.profile_bytes.load()).c_str(), paths, in_caller.c_str(), size_text(more).c_str(),
                 v.enable_tracing && s.flushes ? ", and trace buffers took the rest" : "", size_text(total).c_str());
  }
}

/// One line per cause, at the end, never from the hot path.
void report_end_of_run(State& s, const std::vector<Location*>& locs, const RunCounts& c) {
  const config::Values& v = config::g_values;
  if (s.flushes) {
    // Without flushes the pool holds every record of the run at once, the profile, and per
    // location the chunks partly used or kept back: the model prof-score uses (budget.hpp).
    const double raw = static_cast<double>(s.bytes_recorded), profile = static_cast<double>(s.profile_bytes.load());
    const double nlocs = static_cast<double>(locs.size());
    const auto needed = static_cast<std::uint64_t>(budget::event_memory_without_flush(raw, profile, nlocs, v.page_size));
    const std::string times = s.flushes == 1 ? std::string("once") : std::to_string(s.flushes) + " times";
    log::warning("trace buffers were flushed %s during the run, which disturbs the timings; the run needed about %s of event memory; "
                 "set PROF_TOTAL_MEMORY=%s to avoid it",
                 times.c_str(), size_text(needed).c_str(),
                 size_text(budget::total_without_flush(raw, profile, nlocs, v.page_size)).c_str());
  }
  if (const otf2w::WriterStats& ws = s.writer.stats(); ws.otf2_over_budget)
    log::warning("%" PRIu64 " times an OTF2 write buffer (%s) had to come from outside PROF_TOTAL_MEMORY, at most %" PRIu64
                 " at once (%s over the budget): more locations wrote their trace at the same time than its %" PRIu64
                 " OTF2 buffers (a quarter of PROF_TOTAL_MEMORY, at least 1 and at most 16) hold; raise PROF_TOTAL_MEMORY",
                 ws.otf2_over_budget, size_text(ws.otf2_block_bytes).c_str(), ws.otf2_over_budget_peak,
                 size_text(ws.otf2_over_budget_peak * ws.otf2_block_bytes).c_str(),
                 static_cast<std::uint64_t>(s.otf2_blocks.chunk_count()));
  if (c.repairs || c.unmatched) {
    // Which regions: the first case of each (the region definitions, looked up once here).
    const std::vector<regions::RegionDef> defs = regions::snapshot();
    auto name = [&](RegionId id) { return id < defs.size() ? "\"" + defs[id].name + "\"" : std::string("?"); };
    std::string first;
    if (c.repairs)
      first += "; the first: " + name(c.first_repaired) +
               (c.first_repair_by == kRepairByJump ? " left by a longjmp or an exception" : " closed at the exit of " + name(c.first_repair_by));
    if (c.unmatched) first += std::string(c.repairs ? ", " : "; ") + "the first exit without entry: " + name(c.first_unmatched);
    log::warning("%" PRIu64 " function exits were never reported (longjmp, exceptions without exit hooks) and were closed by prof, %" PRIu64
                 " exits had no matching entry; the trace stays balanced%s",
                 c.repairs, c.unmatched, first.c_str());
  }
  if (c.lost)
    log::warning("%" PRIu64 " events were lost for lack of memory (the trace stays well nested: %" PRIu64
                 " Leaves without their Enter dropped, %" PRIu64 " regions without their Leave closed); raise PROF_TOTAL_MEMORY "
                 "or lower PROF_PAGE_SIZE",
                 c.lost, s.writer.stats().dropped_leaves, s.writer.stats().closed_regions);
  if (s.spilled_bytes)
    log::info(1, "%" PRIu64 " bytes of events were flushed to spill files (before the experiment directory existed, or while "
              "every OTF2 buffer was in use) and converted at the end", s.spilled_bytes);
  if (c.replayed) log::info(1, "%" PRIu64 " events of signal handlers that interrupted prof were recorded after it", c.replayed);
  if (c.reentries)  // no room to keep them (issue 30: the old reason named the nesting, not prof's long busy spells)
    log::warning("%" PRIu64 " events of signal handlers were dropped, their functions' visits are missing: more than %u came while "
                 "prof was busy on their thread%s",
                 c.reentries, kDeferredEvents + kDeferredMore,
                 s.flushes ? ", writing full trace buffers (or waiting for another thread's); a PROF_TOTAL_MEMORY that avoids the "
                             "flushes (see above) keeps them"
                           : ": a handler made that many calls at once; filter out its short functions");
  if (c.late_reentries)
    log::info(1, "%" PRIu64 " events of signal handlers that interrupted prof came as the measurement ended and were not recorded",
              c.late_reentries);
  if (const filter::Filter* f = regions::filter())  // rules that matched nothing (issue 30)
    if (const std::string w = filter::unmatched_warning(*f, v.filtering_file, prof_instrument_filters); !w.empty())
      log::warning("%s", w.c_str());
  if (c.unfinished_collectives)
    log::warning("%" PRIu64 " MPI collective%s never finished (the run ended while this rank waited in it, e.g. for a rank that "
                 "failed); the trace closes %s with an MpiCollectiveEnd of 0 bytes at the end",
                 c.unfinished_collectives, c.unfinished_collectives == 1 ? "" : "s", c.unfinished_collectives == 1 ? "it" : "them");
  if (c.closed) log::info(1, "%" PRIu64 " frames were still open at the end and were closed", c.closed);
  log::info(1, "shadow stack: %" PRIu64 " repairs, %" PRIu64 " unmatched exits, %" PRIu64 " frames closed at the end", c.repairs, c.unmatched, c.closed);
}

/// Appends this process's line to the experiment's prof.run, for prof-report: what it cost and
/// what went wrong (flushes, lost events, repairs, its first warnings). One write(2) with
/// O_APPEND per process, so the ranks of a job share the file.
void write_run_file(State& s, const std::vector<Location*>& locs, const RunCounts& c, int exit_status) {
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.is_ready) return;
  }
  char head[512];
  std::snprintf(head, sizeof head,
                "rank=%u exit_status=%d locations=%zu flushes=%" PRIu64 " lost_events=%" PRIu64 " repairs=%" PRIu64
                " unmatched_exits=%" PRIu64 " closed_at_end=%" PRIu64 " dropped_signal_events=%" PRIu64 " samples=%" PRIu64
                " samples_dropped=%" PRIu64 "\n",
                s.rank, exit_status, locs.size(), s.flushes, c.lost, c.repairs, c.unmatched, c.closed, c.reentries, c.samples,
                c.samples_dropped);
  std::string text = head;
  if (s.rank == 0) {
    // The command line as the user gave it (prof-report's Run table without a trace): tab-separated.
    std::string command = "rank=0 command=" + s.exe_name;
    for (std::string a : s.args) {
      std::replace(a.begin(), a.end(), '\t', ' ');
      std::replace(a.begin(), a.end(), '\n', ' ');
      command += "\t" + a;
    }
    text += command + "\n";
  }
  for (unsigned i = 0; i < log::kept_count(); ++i)
    if (const char* line = log::kept_line(i)) text += "rank=" + std::to_string(s.rank) + " message=" + line + "\n";
  // Shared by the ranks: appended to, created by the first, never through a link.
  const int fd = experiment_dir::open_append(s.claim, "prof.run", 0644);
  if (fd < 0) {  // the data files are written; this summary is a convenience
    log::error("%s; the run's summary for prof-report is not written", experiment_dir::file_error(s.claim, "prof.run", errno).c_str());
    return;
  }
  const ssize_t w = ::write(fd, text.data(), text.size());
  (void)w;
  ::close(fd);
}

/// Removes a directory tree (a checkpoint's trace that a newer one replaced).
void remove_tree(const std::string& path) {
  ::nftw(path.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16, FTW_DEPTH | FTW_PHYS);
}

/// The checkpoint's copy of the process (the only thread there): closes the open frames of its
/// copy at the signal's time and writes the profile of everything measured so far under the
/// final name (MPI: this rank's own), replacing the file atomically; with tracing, a trace of its
/// own, `checkpoint-<n>/traces.otf2` (MPI: merged with the other ranks' copies), from the spill files
/// (every flush spills while checkpoints are on: spill_instead) and the buffers, and then removes
/// the previous checkpoint's. Touches nothing the process still uses: not its OTF2 archive, not
/// the sampling or metric sources (shared descriptors), not MPI; spill files are read up to what
/// they held at the fork and left in place.
int write_checkpoint(State& s, unsigned n, int sig, double started) {
  g_checkpoint_child = true;
  config::Values& v = config::g_values;
  v.summary = false;
  g_compiler_hooks_on = false;
  g_phase.store(static_cast<int>(Phase::Post));
  std::vector<Location*> locs = s.locations;
  std::sort(locs.begin(), locs.end(), [](const Location* a, const Location* b) { return a->index < b->index; });
  // Open frames closed and ProgramEnd, now (metrics: no thread's own here). The program runs on:
  // its exit status is OTF2's "not available" (OTF2_UNDEFINED_INT64), not 0.
  close_locations(locs, std::numeric_limits<std::int64_t>::min());
  const Timestamp end = timer::now();
  const std::string io = experiment_dir::io_path(s.claim);
  const std::string trace_dir = "checkpoint-" + std::to_string(n);
  // MPI: every rank's copy writes its events into the one checkpoint-<n> archive and merges its
  // definitions with those of the ranks already there (partial_trace: no collectives here), in
  // the event chunk size the job agreed on.
  bool trace = v.enable_tracing && !s.trace_abandoned && !s.writer.failed() && s.writer.is_open();
  if (trace) {
    const std::uint64_t chunk = s.mpp ? s.writer.stats().otf2_block_bytes : budget::otf2_chunk_bytes(locs.size());
    ::mkdir((io + "/" + trace_dir).c_str(), 0755);
    new (&s.writer) otf2w::TraceWriter();  // the process's own archive is left alone (not closed)
    std::string err;
    trace = s.writer.open(io + "/" + trace_dir, &s.otf2_blocks, &err, nullptr, chunk, /*join=*/s.mpp != nullptr);
    if (trace) describe_trace(s);
    else log::error("checkpoint %u: %s; it has no trace", n, experiment_dir::readable(s.claim, err).c_str());
  }
  resolve_trace_samples(s, locs, trace);  // as finalize does, into this copy's own trace
  std::string what;
  if (v.enable_profiling) {
    write_profile(s, locs, /*together=*/false, end);
    if (s.profile_failed) return 1;
    what = "profile written: " + s.directory + "/" + v.profiling_base_name + (s.mpp ? ".rank" + std::to_string(s.rank) : "") + ".cubex";
  }
  if (trace) {
    s.directory += "/" + trace_dir;
    std::vector<std::uint32_t> merged;
    const ClockOffsets offsets = s.mpp ? final_clock_offsets(s, /*together=*/false, end) : ClockOffsets{};
    if (!write_trace(s, locs, /*together=*/!s.mpp, offsets, end, &merged)) return 1;
    what += (what.empty() ? "" : ", ") + std::string("trace written: ") + s.directory + "/traces.otf2";
    if (s.mpp) what += " (with ranks " + partial_trace::describe_ranks(merged, s.mpp->size()) + " so far)";
    // The previous checkpoint goes once this one is whole: with MPI, once every rank is in it (each
    // rank's copies run one after another, so none still writes the previous one then).
    if (n > 1 && (!s.mpp || merged.size() == s.mpp->size()))
      remove_tree(io + "/checkpoint-" + std::to_string(n - 1));
  }
  if (what.empty()) return 0;
  log::info(0, "checkpoint %u (signal %d, %s): %s in %.0f ms; the measurement goes on", n, sig, sigabbrev_np(sig), what.c_str(),
            wall_ms() - started);
  return 0;
}

/// PROF_FLUSH_SIGNAL, on the signal writer: the profile of everything measured so far, written by
/// a copy of the process (fork), so that the program's threads go on at once. The fork happens
/// while no flush runs and no region is being defined (their locks held), so the copy is whole.
void checkpoint(int sig) {
  State* s = g_state;
  // Running first, then the check; finalize does the opposite: either this checkpoint sees the
  // end has begun, or the end waits for it (its profile must not replace the final one).
  g_checkpoint_running.store(true);
  struct Done {
    ~Done() { g_checkpoint_running.store(false); }
  } done;
  if (!s || g_finalize_started.load()) return;
  const double started = wall_ms();
  const unsigned n = g_checkpoints.load() + 1;
  std::unique_lock<std::mutex> lock(s->mutex);
  if (!s->is_ready && s->deferred) {
    log::warning("checkpoint %u (signal %d): not before MPI_Init (the experiment directory is not chosen yet); skipped", n, sig);
    return;
  }
  if (!ready_locked(*s)) return;
  regions::lock_for_fork();
  t_checkpoint_fork = true;
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The copy: a crash or a signal here is its own, never the parent's (on_fatal_signal dies at
    // once in a fork's child; the flush signal is ignored); a copy that hangs (a lock some other
    // thread held at the fork) ends after 60 s, so the parent's signal writer goes on.
    g_forked_child.store(true);
    ::signal(sig, SIG_IGN);
    ::signal(SIGALRM, SIG_DFL);  // not the program's handler, if it has one
    ::alarm(60);
    regions::unlock_after_fork();
    lock.unlock();
    ::_exit(write_checkpoint(*s, n, sig, started));
  }
  t_checkpoint_fork = false;
  const int fork_errno = errno;
  regions::unlock_after_fork();
  lock.unlock();
  if (pid < 0) {
    log::warning("checkpoint %u (signal %d): cannot fork a writer (%s); nothing written", n, sig, std::strerror(fork_errno));
    return;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    g_checkpoints.store(n);
  } else {
    log::warning("checkpoint %u (signal %d): the writer %s; the previous checkpoint, if any, is kept", n, sig,
                 WIFSIGNALED(status) ? (std::string("died by signal ") + std::to_string(WTERMSIG(status))).c_str()
                                     : "could not write the profile (see its message)");
  }
}

}  // namespace

void finalize(int exit_status) {
  State* s = g_state;
  if (!s || g_forked_child.load()) return;  // a fork's child writes nothing
  if (g_finalize_started.exchange(true)) {
    // Another thread writes (the signal writer, or a thread that called exit): the process must
    // not end before that is done. Its own later calls (the exit handler after a signal's
    // write-out) return at once.
    if (static_cast<pid_t>(::gettid()) != g_finalize_tid.load()) {
      wait_for_write_out();
      // The program was stopped by a signal: it ends by that signal, not with the exit status
      // of the thread that got here (main returning while mpirun's SIGTERM was written out).
      if (const int sig = g_stop_signal.load()) die_by(sig);
    }
    return;
  }
  g_finalize_tid.store(static_cast<pid_t>(::gettid()));
  if (const int sig = g_stop_signal.load()) {
    // The program's exit came before the signal writer (a signal right before main returned):
    // this thread writes, and the run is one the signal stopped.
    report_stop(sig);
    g_in_signal.store(true);
    exit_status = 128 + sig;
  }
  while (g_checkpoint_running.load()) {  // PROF_FLUSH_SIGNAL's copy is writing (at most 60 s)
    struct timespec ts = {0, 1000000};
    ::nanosleep(&ts, nullptr);
  }
  finalize_adapters();
  g_finalized.store(true);
  int saved = errno;
  Location* self = tls_location;
  if (self) self->busy = true;
  const std::vector<Location*> locs = stop_recording(*s, self);
  sampling::check_unsampled_threads(locs);
  // Before an exec the exit status is OTF2's "not available", as for a checkpoint.
  const RunCounts counts = close_locations(locs, g_before_exec.load() ? std::numeric_limits<std::int64_t>::min() : exit_status);
  report_sampling(counts);
  if (const char* w = timer::finalize()) log::warning("%s", w);
  const Timestamp last = timer::now();
  const bool together = meet_other_processes(*s);
  // A failed job: mpirun ends the others soon after this process ends (partial_trace).
  std::string announced;
  if (!together) {
    std::lock_guard<std::mutex> lock(s->mutex);
    if (s->is_ready) announced = experiment_dir::io_path(s->claim);
  }
  if (!announced.empty()) partial_trace::announce_writing(announced, s->rank);
  const ClockOffsets offsets = final_clock_offsets(*s, together, last);
  // The profile first: it is small and quick, so a full disk or mpirun's kill after a failed
  // rank, which may cut the trace's write short, leaves it whole.
  if (config::g_values.enable_profiling || config::g_values.summary) {
    resolve_trace_samples(*s, locs, !s->trace_abandoned);
    write_profile(*s, locs, together, last);
  }
  if (config::g_values.enable_tracing) {
    // What prof-salvage needs of the events flushed so far, before the trace's long step: a
    // SIGKILL during it (a batch system's short grace time) leaves a trace it can read.
    std::lock_guard<std::mutex> lock(s->mutex);
    save_salvage_locked(*s);
  }
  if (config::g_values.enable_tracing && g_stop_signal.load()) dump_at_stop(*s, locs);
  if (const std::uint64_t ms = config::g_values.debug_write_pause) {  // tests: signals and kills during the write-out
    struct timespec ts = {static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000};
    while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
  }
  if (config::g_values.enable_tracing && !write_trace(*s, locs, together, offsets, last)) g_write_failed.store(true);
  report_slow_stop();
  if (config::g_values.enable_profiling && (s->profile_failed || s->ready_failed)) g_write_failed.store(true);
  report_profile_limits(*s, locs);
  report_end_of_run(*s, locs, counts);
  write_run_file(*s, locs, counts, exit_status);
  if (!announced.empty()) {
    const std::vector<std::uint32_t> waited = partial_trace::finish_writing(announced, s->rank, kStayForOthersSeconds);
    if (!waited.empty())
      log::info(1, "stayed until rank(s) %s of this host had written their data (mpirun stops them soon after one ends)",
                partial_trace::describe_ranks(waited, s->mpp->size()).c_str());
  }
  if (self) self->busy = false;
  errno = saved;
  g_finalize_done.store(true);
  if (const int sig = g_pending_signal.exchange(0)) die_by(sig);  // stopped during the write-out: now
  // A thread that called exit got here before the signal writer: the signal still ends the process.
  if (const int sig = g_stop_signal.load()) die_by(sig);
}

bool write_failed() { return g_write_failed.load(); }

bool finalize_before_exec() {
  if (!g_state || g_forked_child.load() || g_finalize_started.load()) return false;
  g_before_exec.store(true);
  finalize(0);
  return true;
}

}  // namespace prof::runtime

namespace prof {
Location* current_location() {
  Location* loc = tls_location;
  if (PROF_LIKELY(loc != nullptr)) return loc;
  if (g_phase.load(std::memory_order_relaxed) == static_cast<int>(Phase::Pre)) {
    runtime::init();
    if (tls_location) return tls_location;  // init made this thread's location
  }
  return runtime::create_location();
}
}  // namespace prof

// Called from a constructor in the executable that prof-wrap generates at the link step:
// executables' constructors run after every shared library's static initialisers (libprof's
// own configuration tables included), and before main, so a malformed variable stops the run
// before the program's work. Programs without it initialise on their first event.
extern "C" PROF_API void prof_init(void) {
  const bool earlier = prof::runtime::g_init_state.load() != 0;  // from a hook in a library's constructor
  prof::runtime::init();
  if (earlier) prof::runtime::register_exit_handler();
}

// The last resort when init ran before libc registered the dynamic linker's exit handler and no
// prof_init followed (see register_exit_handler): libprof's destructors run before those of the
// libraries it uses, and finalize does nothing when it ran already. The exit status is not known
// here: ProgramEnd says 0.
__attribute__((destructor)) static void prof_finalize_at_unload(void) { prof::runtime::finalize(0); }

// The link guard: instrumented objects reference it (see <prof/instrumented.h>).
extern "C" PROF_API const char prof_wrap_link_guard__link_this_object_with_prof_wrap = 1;

// For adapters built as separate libraries (MPI: rank and shared directory are known only
// inside MPI_Init) and for tests: defer the ready step, then take it.
extern "C" PROF_API void prof_defer_ready(void) { prof::runtime::defer_ready(); }
extern "C" PROF_API int prof_ready(void) { return prof::runtime::ready() ? 1 : 0; }
