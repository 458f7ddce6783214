// SPDX-License-Identifier: BSD-3-Clause
// PROF_FAIL_EXIT_STATUS (exit_status.hpp): a batch script learns from the exit status that the
// trace or profile is missing, not only from a line on stderr.
#include "measurement/exit_status.hpp"

#include <unistd.h>

#include <cstdio>

#include "measurement/config/config.hpp"
#include "measurement/log.hpp"
#include "measurement/runtime.hpp"

namespace prof::exit_status {

int replacement(int program_status, bool write_failed, std::uint64_t fail_status) {
  if (program_status != 0 || !write_failed || fail_status == 0 || fail_status > 255) return -1;
  return static_cast<int>(fail_status);
}

void apply(int program_status) {
  const int status = replacement(program_status, runtime::write_failed(), config::g_values.fail_exit_status);
  if (status < 0) return;
  log::info(0, "the program exited with status 0, but its trace or profile could not be written (see above): exit status %d "
               "(PROF_FAIL_EXIT_STATUS)", status);
  // exit() is running: a second one is undefined. _exit ends the process now; what exit would
  // still do for stdio is done here (handlers registered before prof's are skipped).
  std::fflush(nullptr);
  ::_exit(status);
}

}  // namespace prof::exit_status
