// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the CUBE4 reader (tools/cube4_reader, used by prof-score): the input is a .cubex file.
//
// The reader takes a path, so each input is written to a memory file (memfd) and read through
// /proc/self/fd. Checks beyond "no crash, no undefined behaviour, no leak": a failure gives one
// non-empty line naming the file, and a profile that was read is consistent (every cnode's
// region and parent exist, values sized call paths x locations, exclusive()/inclusive() sized
// alike), and reading it again with `only` one metric gives the same call tree.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cube4_reader.hpp"

namespace {

namespace cube4 = prof::cube4;

[[noreturn]] void violated(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_cube4: %s: %.*s\n", what, static_cast<int>(std::min<std::size_t>(detail.size(), 200)),
               detail.data());
  std::abort();
}

int memory_file() {
  static const int fd = [] {
    const int f = ::memfd_create("fuzz.cubex", MFD_CLOEXEC);
    if (f < 0) {
      std::perror("fuzz_cube4: memfd_create");
      std::abort();
    }
    return f;
  }();
  return fd;
}

void check(const cube4::ReadProfile& p) {
  const std::size_t n = p.cnodes.size(), nloc = p.locations.size();
  for (const auto& c : p.cnodes) {
    if (c.region >= p.regions.size()) violated("cnode with an unknown region", "");
    if (c.parent < -1 || c.parent >= static_cast<std::int64_t>(n)) violated("cnode with an unknown parent", "");
  }
  for (const auto& l : p.locations)
    if (l.group_index >= p.groups) violated("location with an unknown group", l.name);
  if (p.location_groups.size() != p.groups) violated("group count differs", "");
  for (const auto& g : p.location_groups)
    if (g.process >= p.groups || g.creator >= static_cast<std::int64_t>(p.groups)) violated("bad group link", g.name);
  for (const cube4::ReadMetric& m : p.metrics) {
    if (m.values.size() != n * nloc) violated("values not call paths x locations", m.uniq_name);
    if (p.exclusive(m).size() != m.values.size() || p.inclusive(m).size() != m.values.size())
      violated("exclusive()/inclusive() resized the values", m.uniq_name);
    if (p.metric(m.uniq_name) == nullptr) violated("metric() does not find a metric", m.uniq_name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = memory_file();
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
    std::perror("fuzz_cube4: writing the memory file");
    std::abort();
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  cube4::ReadProfile profile;
  std::string error;
  if (!cube4::read(path, &profile, &error)) {
    if (error.empty() || error.find_first_of("\n\r") != std::string::npos) violated("bad error message", error);
    if (error.compare(0, path.size() + 2, path + ": ") != 0) violated("error without the file name", error);
    if (!profile.cnodes.empty() || !profile.metrics.empty()) violated("failed read left data behind", error);
    return 0;
  }
  check(profile);
  // Reading only some metrics (prof-score's --metric): the same profile, fewer metrics.
  if (!profile.metrics.empty()) {
    const std::vector<std::string> only = {profile.metrics.back().uniq_name, "no such metric"};
    cube4::ReadProfile some;
    if (!cube4::read(path, &some, &error, &only)) violated("a profile read once fails with `only`", error);
    if (some.cnodes.size() != profile.cnodes.size() || some.metrics.empty() || some.metrics.size() > profile.metrics.size())
      violated("`only` changed more than the metrics", error);
    check(some);
  }
  return 0;
}
