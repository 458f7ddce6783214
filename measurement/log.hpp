// SPDX-License-Identifier: BSD-3-Clause
// One-line messages: "prof: <level>: <cause>; <fix>", warnings once per cause.
#pragma once

#include <cstdarg>
#include <cstdint>

namespace prof::log {

/// Verbosity from PROF_VERBOSE (0, 1, 2); set once at init.
extern int g_verbose;

/// Every later line of this process says "prof: rank <r>: ..." (MPI jobs).
void set_rank(std::uint32_t rank);

/// The first warning and error lines of this process (at most 32), as printed, without the
/// newline: kept_line(i) for i < kept_count() (nullptr while a thread still writes it). Any thread.
unsigned kept_count();
const char* kept_line(unsigned i);
/// "prof: error: ..." on stderr. Any thread; allocates nothing beyond a stack buffer.
void error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/// "prof: warning: ..." on stderr.
void warning(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/// "prof: ..." on stderr when PROF_VERBOSE >= level.
void info(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/// Fatal user error before the program's work: prints the error and exits with status 1.
[[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
/// Internal invariant broken: prints file:line and aborts.
[[noreturn]] void bug(const char* file, int line, const char* what);

}  // namespace prof::log

#define PROF_BUG_ON(cond, what) \
  do { if (__builtin_expect(!!(cond), 0)) ::prof::log::bug(__FILE__, __LINE__, what); } while (0)
