// SPDX-License-Identifier: BSD-3-Clause
// The core's configuration variables (namespace "", so PROF_<NAME>).
#include "measurement/config/config.hpp"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <string>

namespace prof::config {

int signal_of(std::string_view v) {
  static const struct {
    const char* name;
    int sig;
  } kTaken[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"XCPU", SIGXCPU}};
  std::string up;
  for (char c : v) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (up.rfind("SIG", 0) == 0) up.erase(0, 3);
  if (!up.empty() && up.size() <= 3 && std::all_of(up.begin(), up.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const int n = std::stoi(up);
    for (const auto& t : kTaken)
      if (t.sig == n) return n;
    return 0;
  }
  for (const auto& t : kTaken)
    if (up == t.name) return t.sig;
  return 0;
}

namespace {

// The checks of String and Path values beyond their type (Var::check): "" or what is wrong.

/// The profile's file name: `<name>.cubex`, or `<name>.rank<r>.cubex`, written first as
/// `....tmp.<pid>`; 200 characters leave room for all of that within a file name's 255.
std::string check_base_name(std::string_view v) {
  if (v.empty()) return "is empty; give a file name such as profile";
  if (v.size() > 200) return "is too long; give a file name of at most 200 characters, such as profile";
  if (v.find('/') != std::string_view::npos)
    return "contains '/'; give a file name without a directory, such as profile (PROF_EXPERIMENT_DIRECTORY "
           "chooses the directory)";
  if (v.front() == '.') return "starts with '.' (a hidden file, or a directory); give a file name such as profile";
  for (char c : v)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return "contains a control character; give a file name such as profile";
  return {};
}

std::string check_flush_signal(std::string_view v) {
  if (v.empty() || signal_of(v) > 0) return {};
  return "is not a signal prof takes for checkpoints; use USR1, USR2, HUP or XCPU (with or without SIG, or its "
         "number), or nothing for none";
}

/// The experiment directory: room for the names prof derives from it (`<name>-old-<date>_<pid>`,
/// `<name>-<n>`) and for the files below it.
std::string check_experiment_directory(std::string_view v) {
  if (v.empty()) return {};
  if (v.size() > 3800) return "is too long; give a name of at most 3800 characters";
  std::string_view rest = v;
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty()) return "names the root directory; give the name of a directory for this run, e.g. exp";
  const std::string_view last = rest.substr(rest.find_last_of('/') + 1);
  if (last == "." || last == "..")
    return "names an existing directory ('.' or '..'), not one for this run; give a new name, e.g. exp";
  for (std::string_view p = v; !p.empty();) {
    const auto slash = std::min(p.find('/'), p.size());
    if (slash > 200)
      return "has a part of " + std::to_string(slash) +
             " characters between '/'; give a name whose parts have at most 200 characters";
    p.remove_prefix(std::min(slash + 1, p.size()));
  }
  return {};
}

/// The separators of the metric lists: one character that event names do not use.
std::string check_separator(std::string_view v) {
  if (v.size() != 1) return "is not one character; give one such as , or ; (the default is ,)";
  const auto c = static_cast<unsigned char>(v.front());
  if (c < 0x20 || c >= 0x7f) return "is not a printable character; give one such as , or ;";
  if (std::string_view("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:-.=@").find(v.front()) !=
      std::string_view::npos)
    return "is a character that event names use; give one such as , or ;";
  return {};
}

/// PROF_SAMPLING_DEBUG_REFUSE: empty, hardware, software or both, comma-separated.
std::string check_refuse(std::string_view v) {
  for (std::size_t at = 0; !v.empty() && at <= v.size();) {
    const std::size_t end = std::min(v.find(',', at), v.size());
    const std::string_view item = v.substr(at, end - at);
    if (item != "hardware" && item != "software")
      return "has the item " + quoted(item) +
             ", which is neither hardware nor software; give hardware, software or hardware,software "
             "(tests only; leave it empty)";
    at = end + 1;
  }
  return {};
}

const Member kTimerMembers[] = {
    {"auto", kTimerAuto,
     "`tsc` when the kernel clocksource is tsc and the calibration agrees, otherwise "
     "`clock_gettime`"},
    {"tsc", kTimerTsc, "the CPU time-stamp counter, calibrated at start"},
    {"clock_gettime", kTimerClockGettime, "`clock_gettime(CLOCK_MONOTONIC)`"},
    {nullptr, 0, nullptr},
};

}  // namespace

const Var kCoreVars[] = {
    {"ENABLE_PROFILING", Type::Bool, "true", &g_values.enable_profiling,
     "Record a call-path profile (profile.cubex).",
     "Records per thread a call tree of the instrumented regions, with visit counts and "
     "times, to be written as `profile.cubex` into the experiment directory.\n\n"
     "The profile is `<PROF_PROFILING_BASE_NAME>.cubex` (CUBE4, read by Cube, CubeLib and "
     "Extra-P) with the metrics `visits`, `time` (inclusive), `min_time` and `max_time`, one "
     "column per thread. Every thread's tree hangs below one artificial root region named "
     "after the program, which also holds code run before and after `main`. Profile nodes "
     "come from `PROF_TOTAL_MEMORY` and are never freed. Tracing and profiling can be on "
     "together."},
    {"ENABLE_TRACING", Type::Bool, "false", &g_values.enable_tracing,
     "Record an OTF2 trace.",
     "Events are buffered per thread in chunks of `PROF_PAGE_SIZE` taken from "
     "`PROF_TOTAL_MEMORY`, and converted to OTF2 when a chunk is flushed or at the end of the "
     "run. The trace is written as an OTF2 archive into the experiment directory. Tracing and "
     "profiling can be on together."},
    {"TOTAL_MEMORY", Type::Size, "16M", &g_values.total_memory,
     "Memory for all measurement data of one process.",
     "One budget per process, shared by all its threads. With tracing on, a quarter of it "
     "(1 to 16 blocks of 4 MiB) holds OTF2's write buffers: one per thread whose events are "
     "being written to disk at the same time (a thread that flushes while all are taken writes "
     "its raw events to a spill file `prof-spill-<n>` in the experiment directory instead, "
     "converted at the end); 5 % is left for the OTF2 library's own "
     "bookkeeping; the rest is split into chunks of `PROF_PAGE_SIZE` for the per-thread "
     "event buffers. Units are binary: `K` = 1024 bytes, `M` = 1024 K, `G` = 1024 M. With "
     "tracing on, at least `8M` is needed. When the memory fills up, a thread's buffer is "
     "converted and written to disk during the run (a flush, recorded as an OTF2 "
     "BufferFlush event); no event is lost, but flushes disturb the timings, and a warning at "
     "the end of the run says how often they happened and which value would have avoided "
     "them."},
    {"PAGE_SIZE", Type::Size, "64K", &g_values.page_size,
     "Size of the chunks of the per-thread event buffers.",
     "`PROF_TOTAL_MEMORY` is split into chunks of this size. Each thread holds at least one "
     "chunk, so at most `PROF_TOTAL_MEMORY / PROF_PAGE_SIZE` threads can record at the same "
     "time. It must be a power of two, at least `4K` and at most a quarter of the event "
     "memory (see `PROF_TOTAL_MEMORY`).",
     nullptr, 4u << 10, ~std::uint64_t{0}, true},
    {"EXPERIMENT_DIRECTORY", Type::Path, "", &g_values.experiment_directory,
     "Name of the experiment directory.",
     "The directory receives all output of one run: `prof.cfg`, `prof.lock`, the trace and the "
     "profile. Empty means `prof-YYYYMMDD_HHMMSS_<pid>` in the current working directory, a new "
     "name for every run. A relative name is taken relative to the current working directory; "
     "its parent must exist and be writable.\n\n"
     "Its checks are made at start, before the program's work. The run claims the directory "
     "when it first writes (its first buffer flush or the end of the run; with MPI: rank 0, in "
     "MPI_Init) by creating it, and holds a lock on `prof.lock` in it until it ends; it writes "
     "through the directory it opened then, so renaming the directory during the run does not "
     "split the data. An empty "
     "directory of that name is used as it is. An existing experiment directory of a run that "
     "has ended is renamed aside (see `PROF_OVERWRITE_EXPERIMENT_DIRECTORY`). One whose run is "
     "still going on (its lock is held: runs of a job array with one fixed name) is never "
     "touched: this run takes the first free name `<name>-2`, `<name>-3`, ... and says so in one "
     "warning. Nor is the finished experiment of a run that overlapped this one: of a program "
     "this one started (posix_spawn, vfork or fork+exec) with the same name, or of this process "
     "itself before it called exec (the default name holds the pid, which exec keeps; an exec "
     "writes the data measured so far first, and an instrumented new image starts an experiment "
     "of its own): this run takes `<name>-2` too (one warning; none for the default name), "
     "whatever `PROF_OVERWRITE_EXPERIMENT_DIRECTORY` says. A name that exists as a file, or as a directory that is not a prof experiment "
     "(no `prof.lock` in it: `prof.cfg` alone proves nothing), stops the run at start with one "
     "line; prof renames only its own experiment directories.\n\n"
     "Nobody else may be able to plant links in the directory (OTF2 opens its files by path): a "
     "directory owned by another user (also for root), one writable by its group or by all "
     "(sticky or not: `chmod go-w` it), and a symbolic link as the name itself stop the run at "
     "start with one line; a directory prof creates is writable by its owner only (mode 0755 "
     "less the umask). So does a place on a file system of the kernel's (`/proc`, `/sys`). A "
     "file system with less than 256 KiB free at start gets a warning.",
     nullptr, 0, ~std::uint64_t{0}, false, &check_experiment_directory,
     "empty, or a name of at most 3800 characters whose '/'-separated parts have at most 200, "
     "not ending in . or .."},
    {"OVERWRITE_EXPERIMENT_DIRECTORY", Type::Bool, "true",
     &g_values.overwrite_experiment_directory,
     "Rename an existing experiment directory aside instead of failing.",
     "Applies when `PROF_EXPERIMENT_DIRECTORY` names an experiment directory that already exists "
     "and is not empty. With `true` the existing directory is renamed aside "
     "(`<name>-old-<date>_<time>_<pid>`) and a fresh one is created, so the data of two runs is "
     "never mixed; a directory whose run is still going on, or ended while this run went on (a "
     "program it started, this process before an exec), is never renamed (this run takes "
     "`<name>-2`, see `PROF_EXPERIMENT_DIRECTORY`). With `false` the run stops with a fatal "
     "error before the program's work starts."},
    {"FLUSH_SIGNAL", Type::String, "", &g_values.flush_signal,
     "Signal that writes a checkpoint of the data so far (empty: none).",
     "On this signal (e.g. `USR1`: Slurm sends it ahead of the time limit with "
     "`--signal=USR1@120`), prof writes the call-path profile of everything measured so far "
     "(the open regions' time up to the signal included) and the program goes on being "
     "measured; each later signal writes it again, and the end of the run writes the final one. "
     "A job that is then killed without a chance to write (SIGKILL, a node failure) keeps the "
     "last checkpoint. The profile is `<name>.cubex` (MPI: each rank's own "
     "`<name>.rank<r>.cubex`, removed when the job's profile is written at the end), replaced "
     "atomically; one line says where and how long it took. With tracing (not under MPI: there "
     "the profiles only), a checkpoint also writes a trace of its own, "
     "`checkpoint-<n>/traces.otf2`, with every event up to the signal, and removes the previous "
     "one; the run's own trace is still written at the end (for that, flushes write raw spill "
     "files while this is set). The "
     "checkpoint is written by a copy of the process (fork), so the program's threads are not "
     "stopped. A signal the "
     "program handles itself is left to it (one warning); this signal then no longer stops the "
     "run.",
     nullptr, 0, ~std::uint64_t{0}, false, &check_flush_signal,
     "empty, or USR1, USR2, HUP, XCPU (SIG prefix and case optional) or their numbers"},
    {"FAIL_EXIT_STATUS", Type::Number, "0", &g_values.fail_exit_status,
     "Exit status if prof cannot write trace or profile (0: off).",
     "A number from 1 to 255: a program that exits with status 0 ends with this status instead "
     "when prof could not write its trace or its profile (a full disk, an experiment directory "
     "that cannot be created; the error line says which), so that a batch script notices. The "
     "program's own failure (a status other than 0) and a signal are never masked. The process "
     "then ends right after prof's write-out (`_exit`, standard output flushed): exit handlers "
     "registered before prof's (library destructors) do not run. Not applied after an exec, "
     "whose status is unknown. `0` (the default) leaves the program's status as it is.",
     nullptr, 0, 255},
    {"STEP", Type::String, "", &g_values.step,
     "The region whose calls are the run's steps (prof-report).",
     "Names the iteration of the program for `prof-report`'s per-step table and findings: a "
     "Python function (`__main__:train_step`), a C/C++ function, an NVTX range or a user-API "
     "region, as the report names regions. The measurement records it in `prof.cfg` and does "
     "nothing else with it; empty lets prof-report find the user-API or NVTX range that repeats "
     "and covers the most time. `prof-report --step` overrides it. Give the same value to all "
     "ranks.",
     nullptr, 0, 0},
    {"STOP_DUMP_MIN", Type::Size, "512M", &g_values.stop_dump_min,
     "Buffered trace from which a stop signal first dumps it raw.",
     "At a stop signal (SIGTERM, SIGINT, ...) the write-out converts the buffered events to "
     "OTF2, about 2 to 2.6 s per GiB of buffers on a small machine, longer than many batch "
     "systems wait before SIGKILL. When at least this much trace is still buffered, it first "
     "writes the raw events, as fast as the disk's page cache takes them (here 3 to 4 times "
     "faster than the conversion from 1 GiB on; below 512M both take well under a second and "
     "the dump only adds its time), to "
     "`prof-parts/stop.rank<r>` in the experiment directory, then converts them as usual and "
     "removes the dump. A SIGKILL during the conversion leaves the dump, which `prof-salvage` "
     "turns into the rest of the trace: nothing recorded before the stop is lost. `0` dumps "
     "always; a size larger than `PROF_TOTAL_MEMORY` never.",
     nullptr, 0, ~std::uint64_t{0}},
    {"DEBUG_WRITE_PAUSE", Type::Number, "0", &g_values.debug_write_pause,
     "For testing: ms the write-out waits before writing.",
     "The write-out at the end (or at a stop signal) pauses this long after the profile, "
     "before the trace, so that tests can send signals (and SIGKILL) while it runs. Leave it "
     "at 0.",
     nullptr, 0, 60000},
    {"TIMER", Type::Option, "auto", &g_values.timer,
     "Time source for event time stamps.",
     "`auto` picks `tsc` when the kernel clocksource is tsc and a calibration against "
     "`CLOCK_MONOTONIC_RAW` agrees, otherwise `clock_gettime(CLOCK_MONOTONIC)`. `tsc` reads "
     "the CPU time-stamp counter, the cheapest source; force it only on machines whose TSC "
     "is invariant and synchronised across cores. With `PROF_VERBOSE=1` the choice is "
     "explained.",
     kTimerMembers},
    {"VERBOSE", Type::Number, "0", &g_values.verbose,
     "Amount of diagnostic output on stderr.",
     "`0` prints only warnings and errors. `1` explains each decision once: the timer "
     "chosen, the adapters active, the memory sizes and the experiment directory. `2` adds "
     "debug detail. Values above 2 are an error.",
     nullptr, 0, 2},
    {"PROFILING_MAX_CALLPATH_DEPTH", Type::Number, "100", &g_values.profiling_max_callpath_depth,
     "Deepest call path the profile records.",
     "Calls deeper than this (counted from the program root, which is depth 0) are folded "
     "into their ancestor at the cutoff: their time stays in its inclusive time, their "
     "visits are not recorded, and the end of the run says once how many were folded. "
     "Deep recursion thus cannot fill the profile memory, and readers that walk call trees "
     "recursively stay within their limits. Score-P's default is the same.",
     nullptr, 1, 100000},
    {"FILTERING_FILE", Type::Path, "", &g_values.filtering_file,
     "Filter file: regions to leave out of the measurement.",
     "Regions excluded by the file are not measured at all: no trace events, no profile "
     "entry, no region definition. The decision is made once per function (the hooks then "
     "return at once; given to `prof-wrap --instrument-filter` instead, the GCC plugin compiles "
     "the functions without hooks). The syntax is prof's (`PROF_REGION_NAMES_BEGIN` ... "
     "`_END`, `PROF_FILE_NAMES_BEGIN` ... `_END`, `EXCLUDE`/`INCLUDE` rules, shell "
     "wildcards, `MANGLED`, `#` comments, the last matching rule wins) and Score-P filter "
     "files are accepted unchanged; see `share/filters/example.filter`. A malformed file is a "
     "fatal error at start naming file, line and what was expected; so is anything but a "
     "regular file (a FIFO, a device such as `/dev/zero`, a directory), a file over 16 MiB, and "
     "a file with a NUL byte (a binary file). The file is copied into "
     "the experiment directory as `prof.filter`."},
    {"THROTTLE", Type::Bool, "true", &g_values.throttle,
     "Stop measuring functions whose calls are many and short.",
     "A compiler-instrumented function is throttled once one of its call paths in one thread "
     "has at least `PROF_THROTTLE_VISITS` visits whose mean inclusive time is below "
     "`PROF_THROTTLE_NS` (checked when the visits reach a power of two). From then on its calls "
     "are not measured: no time stamps, no trace events, no new visits (with the GCC plugin the "
     "hooks are not even called: a load and a branch per call; with `-finstrument-functions` "
     "they return at once). What it did before stays in the profile and the trace; the time of "
     "its later calls is in its caller's exclusive time, so inclusive = exclusive + the "
     "children's inclusive still holds for every call path, and functions it calls that are "
     "not throttled appear below its caller. The trace's and the profile's region definitions "
     "say that it was throttled, after how many visits and of what mean time.\n\n"
     "The end of the run says how many functions were throttled, and writes them as a filter "
     "file, `prof.throttle.filter` in the experiment directory, for `prof-wrap "
     "--instrument-filter` (the plugin then compiles them without hooks) or "
     "`PROF_FILTERING_FILE`. A function that an `INCLUDE` rule of the filter names (not the "
     "bare `*`) is never throttled, nor are MPI, OpenMP, CUDA, pthread, Python and user-API "
     "regions. The decision needs the call-path profile: with `PROF_ENABLE_PROFILING=false` "
     "nothing is throttled. `false` measures every call, as before."},
    {"THROTTLE_VISITS", Type::Number, "1000", &g_values.throttle_visits,
     "Visits of one call path before a function may be throttled.",
     "See `PROF_THROTTLE`. The mean is taken over a call path's visits in one thread when "
     "they reach a power of two, from this number on (the default: at 1024, 2048, ...).",
     nullptr, 1, ~std::uint64_t{0}},
    {"THROTTLE_NS", Type::Number, "300", &g_values.throttle_ns,
     "Mean time per visit (ns) below which a function is throttled.",
     "See `PROF_THROTTLE`. The measured time includes prof's own cost of the function's "
     "calls. `0` throttles nothing.",
     nullptr, 0, 1000000000},
    {"PROFILING_BASE_NAME", Type::String, "profile", &g_values.profiling_base_name,
     "File name of the profile, without `.cubex`.",
     "The profile is written as `<experiment directory>/<name>.cubex` (an MPI job whose ranks did "
     "not all reach the end: `<name>.rank<r>.cubex`). A file name, not a path: a name with '/', "
     "an empty one, one starting with '.' (hidden) and one longer than 200 characters stop the "
     "run at start with one line.",
     nullptr, 0, ~std::uint64_t{0}, false, &check_base_name,
     "a file name of 1 to 200 characters without '/' or control characters, not starting with ."},
    {"SUMMARY", Type::Bool, "false", &g_values.summary,
     "Print the regions with the most time at the end of the run.",
     "At the end of the run, prof prints to stderr a table of the ten regions with the most "
     "exclusive time (summed over threads): share of the total, exclusive and inclusive "
     "seconds, visits, exclusive time per visit, and the shortest and longest visit. It "
     "needs the call-path profile, which is recorded for it even with "
     "`PROF_ENABLE_PROFILING=false` (then no `profile.cubex` is written). For the whole "
     "profile, use `prof-score -r` on `profile.cubex`."},
    {"SAMPLING_EVENTS", Type::String, "", &g_values.sampling_events,
     "Sample each thread's call stack at a fixed rate (empty: off).",
     "A comma list of event[@period] items: `perf_cycles@<cycles>` (hardware CPU cycles), "
     "`perf_cpu_clock@<ns>`, `perf_task_clock@<ns>` (software clocks, through "
     "perf_event_open) or `timer@<us>` (a POSIX timer on the thread's CPU time); without a "
     "period about 1 kHz (2000000 cycles, 1000000 ns, 1000 us: at most 1 % of run time on "
     "real hardware, docs/PERFORMANCE.md). Each thread "
     "gets its own counter when it starts, and every period a real-time signal interrupts it "
     "and records where it is (its call stack, with PROF_ENABLE_UNWINDING), so time in code "
     "nobody instrumented shows up too. An event the machine refuses falls back, in one line: "
     "hardware cycles to the CPU clock (the period read as nanoseconds), the CPU clock to the "
     "timer. Example: `PROF_SAMPLING_EVENTS=perf_cycles@2000000`. `prof-info sampling` lists "
     "what this machine supports."},
    {"ENABLE_UNWINDING", Type::Bool, "true", &g_values.enable_unwinding,
     "Record the call stack of each sample.",
     "With sampling, each sample records the interrupted call stack (libunwind, up to 48 "
     "frames); without it only the interrupted function. The stack below the innermost "
     "instrumented function hangs under that function's call path."},
    {"SAMPLING_DEBUG_REFUSE", Type::String, "", &g_values.sampling_debug_refuse,
     "For testing: sampling sources to treat as refused.",
     "`hardware`, `software` or both, comma-separated: prof acts as if perf_event_open "
     "refused them, so that every fallback path can be tested on any machine. Leave it empty.",
     nullptr, 0, ~std::uint64_t{0}, false, &check_refuse, "empty, hardware, software or hardware,software"},
    {"METRIC_PAPI", Type::String, "", &g_values.metric_papi,
     "PAPI events to read per thread (e.g. PAPI_TOT_CYC,PAPI_TOT_INS).",
     "Preset or native PAPI events, separated by PROF_METRIC_PAPI_SEP, read through one PAPI "
     "event set per thread at every enter and exit of a recorded region: OTF2 Metric events "
     "in the trace, one exclusive metric per event in the profile. They are checked at start: "
     "a name PAPI does not know, an event this machine cannot count and events that cannot be "
     "counted together stop the program with one line giving PAPI's reason. `prof-info "
     "metrics` and papi_avail list the events of the machine; a VM usually has only software "
     "events such as perf::TASK-CLOCK. Every enter and exit costs one PAPI_read of all the "
     "thread's events (a system call for software events; see docs/METRICS.md)."},
    {"METRIC_PAPI_PER_PROCESS", Type::String, "", &g_values.metric_papi_per_process,
     "PAPI events to read once per process.",
     "As PROF_METRIC_PAPI (checked the same way), but read by the process's first thread "
     "only (the master thread), at its enters and exits: for events that count the whole "
     "socket or machine (uncore, RAPL energy). Events of another PAPI component get event "
     "sets of their own. A per-thread event given here counts that thread only."},
    {"METRIC_PAPI_SEP", Type::String, ",", &g_values.metric_papi_sep,
     "Separator of the PAPI event lists.",
     "For native event names that contain commas: one printable character that event names do "
     "not use (not a letter, a digit or _ : - . = @), e.g. `;`.",
     nullptr, 0, ~std::uint64_t{0}, false, &check_separator,
     "a blank or one punctuation character other than _ : - . = @"},
    {"METRIC_PERF", Type::String, "", &g_values.metric_perf,
     "perf events to read per thread, without PAPI (e.g. task-clock).",
     "The perf tool's event names, separated by PROF_METRIC_PERF_SEP: software events "
     "(task-clock, cpu-clock, page-faults, minor-faults, major-faults, context-switches, "
     "cpu-migrations, ...), which every Linux counts, VMs too, and hardware events (cycles, "
     "instructions, cache-references, cache-misses, branches, branch-misses, ..., "
     "L1-dcache-load-misses, LLC-load-misses, or r<hex> for a raw PMU event) where the "
     "machine has a PMU. Each thread opens them with perf_event_open and reads them at every "
     "enter and exit of a recorded region, like PROF_METRIC_PAPI: OTF2 Metric events in the "
     "trace, one exclusive metric per event in the profile. A read is one read() system call "
     "per kernel PMU in use (the software events, task-clock, cpu-clock, the CPU's counters). "
     "Events count in user space, context-switches and cpu-migrations in the kernel; `:u`, "
     "`:k` or `:uk` after a name choose. They are checked at start: an unknown name, an event "
     "this machine cannot count or may not count (perf_event_paranoid) stops the program with "
     "one line. `prof-info metrics` lists what this machine counts now."},
    {"METRIC_PERF_SEP", Type::String, ",", &g_values.metric_perf_sep,
     "Separator of the perf event list.",
     "For symmetry with PROF_METRIC_PAPI_SEP; the same characters are accepted.",
     nullptr, 0, ~std::uint64_t{0}, false, &check_separator,
     "a blank or one punctuation character other than _ : - . = @"},
    {"METRIC_RUSAGE", Type::String, "", &g_values.metric_rusage,
     "getrusage fields to read per thread (all, or e.g. ru_minflt).",
     "`all` or fields of getrusage(RUSAGE_THREAD) separated by PROF_METRIC_RUSAGE_SEP, read "
     "at every enter and exit of a recorded region like the PAPI events; `prof-info metrics` "
     "lists them. An unknown field stops the program with one line."},
    {"METRIC_RUSAGE_SEP", Type::String, ",", &g_values.metric_rusage_sep,
     "Separator of the getrusage field list.",
     "For symmetry with PROF_METRIC_PAPI_SEP (Score-P has both); the same characters are accepted.",
     nullptr, 0, ~std::uint64_t{0}, false, &check_separator,
     "a blank or one punctuation character other than _ : - . = @"},
    {},
};

}  // namespace prof::config
