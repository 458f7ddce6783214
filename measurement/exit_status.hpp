// SPDX-License-Identifier: BSD-3-Clause
// PROF_FAIL_EXIT_STATUS: the exit status of a program whose data prof could not write.
#pragma once

#include <cstdint>

namespace prof::exit_status {

/// The status the process ends with instead of `program_status`, or -1 to leave it: only a
/// program that exited 0 gets `fail_status` (1-255; 0: off), and only when prof could not write
/// its trace or profile (`write_failed`). Pure.
int replacement(int program_status, bool write_failed, std::uint64_t fail_status);

/// The end of prof's exit handler, after finalize: when replacement() says so, one line, stdio
/// flushed, and _exit with PROF_FAIL_EXIT_STATUS; otherwise returns.
void apply(int program_status);

}  // namespace prof::exit_status
