// SPDX-License-Identifier: BSD-3-Clause
// prof-salvage EXPERIMENT: the trace of a run that was killed (SIGKILL, the OOM killer, a batch
// system's kill after its grace time, a lost node). Such a run wrote no definitions and no anchor,
// but its flushes left their events in EXPERIMENT/traces/ and their definitions in
// EXPERIMENT/prof-parts/salvage.rank<r> (partial_trace.hpp). This writes the trace's definitions and
// anchor for them, so that otf2-print, Vampir, prof-report and prof-export read it, and says what
// was lost.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "measurement/partial_trace.hpp"

namespace {
constexpr const char* kUsage =
    "usage: prof-salvage EXPERIMENT_DIRECTORY\n"
    "  Turns what a killed tracing run left in its experiment directory (the event files of its\n"
    "  flushes and the definitions saved with them) into a readable trace, traces.otf2, and says\n"
    "  what was lost. Runs that ended, even by a stop signal, have their trace already.\n";
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    std::fputs(kUsage, argc == 2 ? stdout : stderr);
    return argc == 2 ? 0 : 2;
  }
  std::string dir = argv[1];
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::vector<std::string> report;
  std::string error;
  if (!prof::partial_trace::salvage(dir, &report, &error)) {
    std::fprintf(stderr, "prof-salvage: error: %s\n", error.c_str());
    return 1;
  }
  for (const std::string& line : report) std::printf("prof-salvage: %s\n", line.c_str());
  return 0;
}
