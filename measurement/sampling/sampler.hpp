// SPDX-License-Identifier: BSD-3-Clause
// The sampler (PROF_SAMPLING_EVENTS): one interrupt source per thread (perf_event_open hardware
// cycles or software clocks, or a POSIX CPU-time timer), each overflow a real-time signal to that
// very thread; its handler unwinds the interrupted stack (libunwind's unw_backtrace, loaded with
// dlopen so that programs without sampling never see libunwind's _Unwind_* and backtrace symbols)
// into a RawSample record of the thread's own trace buffer. Converting a RawSample into a calling
// context (resolve()) happens off the handler, when the buffer is written out. A thread that
// blocks the signal gets, for the perf sources, events whose samples the kernel writes into a
// ring that prof's sampler thread reads (sampler.cpp: "the kernel's ring buffer").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "measurement/buffer.hpp"
#include "measurement/record.hpp"

namespace prof {
struct Location;
}

namespace prof::sampling {

/// An interrupt source as the trace's InterruptGenerator names it.
struct Generator {
  std::string name;          ///< the effective event, e.g. "perf_cpu_clock"
  bool time_based = true;    ///< period in nanoseconds (false: a count of events, e.g. cycles)
  std::uint64_t period = 0;  ///< ns, or events
};

/// The accepted forms of PROF_SAMPLING_EVENTS, one line (for errors and prof-info).
const char* accepted_forms();

/// Parses PROF_SAMPLING_EVENTS (fatal configuration error, naming the accepted forms, on a bad
/// item), probes the sources in the order hardware → software clock → timer (each step
/// announced once, PROF_SAMPLING_DEBUG_REFUSE forcing refusals), installs the signal handler and
/// loads libunwind. False when sampling is off. Once, at init.
bool init();
bool on();
/// The calling thread's interrupt sources (thread start) and their end (thread end).
void thread_start(Location* loc);
void thread_end(Location* loc);
/// Stops every source; before the write-out.
void stop();
/// At the end, for the threads still running: counts those that ran at least 20 sampling
/// periods of CPU time without a sample (ended threads are counted at their end).
void check_unsampled_threads(const std::vector<Location*>& locs);
/// One warning line about those threads, or "".
std::string unsampled_warning();
/// The samples taken through the kernel's ring buffer (counted in Location::samples too).
std::uint64_t ring_samples();
/// The profile: the samples that landed inside prof itself become hits of an artificial region
/// "prof (measurement system)" below the root, never the user's code. At finalize.
void attribute_prof_samples(Location* loc);
/// The profile: the samples the kernel took through its ring buffer from a thread of `loc` that
/// blocks the sampling signal (prof's sampler thread read them) become hits of their frames
/// below the thread's root (a frame of an instrumented function: its call path there, if any).
/// At finalize, after stop().
void attribute_ring_samples(Location* loc);
const std::vector<Generator>& generators();
/// The object (executable or shared library) that `address` lies in is an interpreter's
/// (libpython, or a python executable linked with it): the sampled frames of a sample stop at its
/// first frame above the leaf, so samples land below the innermost interpreted region (a Python
/// function) with the interpreter's own frames (_PyEval_EvalFrameDefault and friends) folded
/// away, and native code the interpreted code called (a C extension, libtorch) below it.
void set_interpreter(const void* address);

/// Rewrites the RawSample records of `buffer` (written by `loc`'s handler) into
/// CallingContextSample records: the calling context is the location's instrumented call path at
/// the sample (replayed from its Enter/Leave records, kept across calls in `loc`) followed by the
/// sampled frames below the innermost instrumented function; and, with profiling, a hit on the
/// profile's call path (the node the thread was in, plus the sampled frames). `trace`: the
/// buffer is the trace's (records rewritten); else it holds only samples (profile only). The
/// owner does not record meanwhile (its own thread, or it ended, or measurement stopped).
void resolve(Location* loc, EventBuffer& buffer, bool trace);

}  // namespace prof::sampling
