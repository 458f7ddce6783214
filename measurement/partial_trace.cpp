// SPDX-License-Identifier: BSD-3-Clause
#include "measurement/partial_trace.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>

#include "measurement/bytes.hpp"
#include "measurement/experiment_dir.hpp"
#include "measurement/definitions/comms.hpp"
#include "measurement/definitions/regions.hpp"
#include "measurement/timer.hpp"

namespace prof::partial_trace {

namespace {

constexpr std::uint32_t kMagic = 0x50525431;  // "PRT1"
constexpr int kLockSeconds = 20;              // another process merging: at most this long
constexpr const char* kParts = "prof-parts";  // in the experiment: the parts, the merges (write_merged)

struct Part {
  std::uint32_t rank = 0, size = 0;
  otf2w::LocalDefs local;
  std::vector<char> defs;  // unify::encode_part
};

std::vector<char> encode(const Part& p) {
  bytes::Writer o;
  o.u32(kMagic);
  o.u32(p.rank);
  o.u32(p.size);
  o.u64(p.local.locations.size());
  for (std::uint64_t id : p.local.locations) o.u64(id);
  o.u64(p.local.clock_offsets.size());
  for (const auto& [at, off] : p.local.clock_offsets) {
    o.u64(at);
    o.i64(off);
  }
  o.str(std::string(p.defs.begin(), p.defs.end()));
  return std::move(o.data());
}

bool decode(const std::vector<char>& b, Part* p) {
  bytes::Reader in(b.data(), b.size());
  if (in.u32() != kMagic) return false;
  p->rank = in.u32();
  p->size = in.u32();
  const std::uint64_t nl = in.count(8);
  for (std::uint64_t i = 0; i < nl && in.ok(); ++i) p->local.locations.push_back(in.u64());
  const std::uint64_t no = in.count(16);
  for (std::uint64_t i = 0; i < no && in.ok(); ++i) {
    const std::uint64_t at = in.u64();
    p->local.clock_offsets.emplace_back(at, in.i64());
  }
  const std::string d = in.str();
  p->defs.assign(d.begin(), d.end());
  return in.ok() && in.done();
}

bool write_file(const std::string& path, const std::vector<char>& data) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!f.flush()) return false;
  }
  return ::rename(tmp.c_str(), path.c_str()) == 0;
}

// flock with a bound: a process that holds the lock and hangs must not stop this one's exit.
int lock(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  for (int i = 0; i < kLockSeconds * 100; ++i) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
    if (errno != EWOULDBLOCK && errno != EINTR) break;
    struct timespec ts = {0, 10000000};
    ::nanosleep(&ts, nullptr);
  }
  ::close(fd);
  return -1;
}

std::string writing_marker(const std::string& dir, std::uint32_t rank) {
  return dir + "/" + kParts + "/writing.rank" + std::to_string(rank);
}

}  // namespace

void announce_writing(const std::string& dir, std::uint32_t rank) {
  ::mkdir((dir + "/" + kParts).c_str(), 0755);
  const std::string text = experiment_dir::host_name() + "\n" + std::to_string(::getpid()) + "\n";
  write_file(writing_marker(dir, rank), std::vector<char>(text.begin(), text.end()));
}

std::vector<std::uint32_t> finish_writing(const std::string& dir, std::uint32_t rank, int max_seconds) {
  ::unlink(writing_marker(dir, rank).c_str());
  const std::string parts_dir = dir + "/" + kParts, host = experiment_dir::host_name();
  std::vector<std::uint32_t> waited;
  for (int i = 0; i < max_seconds * 100; ++i) {
    std::vector<std::uint32_t> writing;
    if (DIR* d = ::opendir(parts_dir.c_str())) {
      while (const struct dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind("writing.rank", 0) != 0 || name.find(".tmp") != std::string::npos) continue;
        std::ifstream f(parts_dir + "/" + name);
        std::string their_host;
        long pid = 0;
        if (!(f >> their_host >> pid) || their_host != host || pid <= 0 || pid == ::getpid()) continue;
        if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)
          writing.push_back(static_cast<std::uint32_t>(std::strtoul(name.c_str() + 12, nullptr, 10)));
      }
      ::closedir(d);
    }
    if (writing.empty()) break;
    for (std::uint32_t r : writing)
      if (std::find(waited.begin(), waited.end(), r) == waited.end()) waited.push_back(r);
    struct timespec ts = {0, 10000000};
    ::nanosleep(&ts, nullptr);
  }
  std::sort(waited.begin(), waited.end());
  return waited;
}

std::string describe_ranks(const std::vector<std::uint32_t>& ranks, std::uint32_t size) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(ranks[i]);
    if (j > i) s += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return (s.empty() ? "none" : s) + " of " + std::to_string(size);
}

bool save_and_merge(otf2w::TraceWriter& writer, const std::string& dir, std::uint32_t rank, std::uint32_t size,
                    const char* paradigm, const unify::ProcessPart& self, const std::vector<std::uint64_t>& locations,
                    const std::vector<std::pair<std::uint64_t, std::int64_t>>& offsets, std::vector<std::uint32_t>* ranks,
                    std::string* error) {
  const std::string parts_dir = dir + "/" + kParts;
  ::mkdir(parts_dir.c_str(), 0755);
  Part mine;
  mine.rank = rank;
  mine.size = size;
  mine.local.locations = locations;
  mine.local.clock_offsets = offsets;
  mine.defs = unify::encode_part(self, regions::snapshot(), comms::snapshot(), rank);
  if (!write_file(parts_dir + "/rank" + std::to_string(rank), encode(mine))) {
    *error = "cannot save this rank's trace definitions in '" + parts_dir + "' (" + std::strerror(errno) +
             "); its events are in the trace's folder without definitions";
    return false;
  }
  const int fd = lock(parts_dir + "/.lock");
  if (fd < 0) {
    *error = "cannot lock '" + parts_dir + "/.lock' within " + std::to_string(kLockSeconds) +
             " s to merge the ranks' trace definitions; this rank's part is saved there";
    return false;
  }
  // Every part saved so far (ordered below).
  std::vector<Part> parts;
  if (DIR* d = ::opendir(parts_dir.c_str())) {
    while (const struct dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind("rank", 0) != 0 || name.find('.') != std::string::npos) continue;
      std::ifstream f(parts_dir + "/" + name, std::ios::binary);
      std::vector<char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      Part p;
      if (decode(b, &p) && p.size == size && p.rank < size) parts.push_back(std::move(p));
    }
    ::closedir(d);
  }
  // In the order of earlier merges, then the new parts by rank: the global ids of what was merged
  // before stay as they were (unification numbers new keys after the known ones), so each
  // location's mapping tables, renamed into place before traces.def, still fit the previous
  // traces.def until the new one replaces it.
  const std::string order_file = parts_dir + "/order";
  std::vector<std::uint32_t> order;
  {
    std::ifstream f(order_file);
    for (std::uint32_t r; f >> r;) order.push_back(r);
  }
  const auto position = [&](std::uint32_t r) {
    const auto it = std::find(order.begin(), order.end(), r);
    return it == order.end() ? order.size() + r : static_cast<std::size_t>(it - order.begin());
  };
  std::sort(parts.begin(), parts.end(), [&](const Part& a, const Part& b) { return position(a.rank) < position(b.rank); });
  std::vector<std::vector<char>> defs;
  for (const Part& p : parts) defs.push_back(p.defs);
  unify::Result merged;
  std::vector<unify::Result> maps;
  bool ok = unify::merge_parts(defs, size, &merged, &maps, error);
  if (ok) {
    otf2w::Definitions g;
    g.clock.resolution = timer::resolution();
    g.clock.offset = merged.start;
    g.clock.length = merged.end - merged.start;
    g.clock.realtime_ns = timer::realtime_ns(merged.start);
    g.machine = "Linux";
    g.mpp_paradigm = paradigm;
    g.regions = std::move(merged.regions);
    g.comms = std::move(merged.comms);
    g.processes = std::move(merged.processes);
    g.contexts = std::move(merged.contexts);
    g.generators = std::move(merged.generators);
    std::vector<otf2w::LocalDefs> locals;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      otf2w::LocalDefs l = std::move(parts[i].local);
      l.region_map = std::move(maps[i].region_map);
      l.comm_map = std::move(maps[i].comm_map);
      l.window_map = std::move(maps[i].window_map);
      l.context_map = std::move(maps[i].context_map);
      l.generator_map = std::move(maps[i].generator_map);
      locals.push_back(std::move(l));
      ranks->push_back(parts[i].rank);
    }
    std::sort(ranks->begin(), ranks->end());
    ok = writer.write_merged(g, locals, kParts, error);
    if (ok) {
      std::string text;
      for (const Part& p : parts) text += std::to_string(p.rank) + "\n";
      write_file(order_file, std::vector<char>(text.begin(), text.end()));
    }
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
  return ok;
}

}  // namespace prof::partial_trace
