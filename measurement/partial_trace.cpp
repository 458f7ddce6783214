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
#include "otf2-writer/event_chunks.hpp"

namespace prof::partial_trace {

namespace {

constexpr std::uint32_t kMagic = 0x50525431;  // "PRT1"
constexpr int kLockSeconds = 20;              // another process merging: at most this long
constexpr const char* kParts = "prof-parts";  // in the experiment: the parts, the merges (write_merged)

std::string stop_file(const std::string& dir, std::uint32_t rank) {
  return dir + "/" + kParts + "/stop.rank" + std::to_string(rank);
}

// A stop dump: "PROFSTOP", its version, the rank, the count of locations; per location its id,
// the writer's event count, last time, waiting correlation id, the count of open regions, the
// pending chunk's first event and size, the bytes of raw records, then the open regions, the
// pending chunk and the records; at the end "PROFSTOP" again (a dump cut short has none).
constexpr char kStopMagic[8] = {'P', 'R', 'O', 'F', 'S', 'T', 'O', 'P'};
constexpr std::uint32_t kStopVersion = 1;

struct StopHead {
  std::uint64_t location, events, last;
  std::uint32_t correlation, open;
  std::uint64_t first, pending, records;
};
static_assert(sizeof(StopHead) == 56, "the dump's layout");


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

// Written afresh under a temporary name and renamed into place: never through a link (a name
// in the temporary's place, left by a killed run or planted, is removed, not followed).
template <class Emit>
bool write_fresh(const std::string& path, mode_t mode, Emit&& emit) {
  const std::string tmp = path + ".tmp";
  constexpr int kCreate = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(tmp.c_str(), kCreate, mode);
  if (fd < 0 && errno == EEXIST && ::unlink(tmp.c_str()) == 0) fd = ::open(tmp.c_str(), kCreate, mode);
  if (fd < 0) return false;
  bool ok = true;
  int failure = 0;  // the first error, for the caller's message
  emit([&](const void* p, std::size_t n) {
    const auto* c = static_cast<const char*>(p);
    for (std::size_t done = 0; ok && done < n;) {
      const ssize_t w = ::write(fd, c + done, n - done);
      if (w > 0) {
        done += static_cast<std::size_t>(w);
      } else if (w == 0 || errno != EINTR) {
        ok = false;
        failure = w == 0 ? ENOSPC : errno;
      }
    }
  });
  if (::close(fd) != 0 && ok) {
    ok = false;
    failure = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) == 0) return true;
  if (ok) failure = errno;
  ::unlink(tmp.c_str());
  errno = failure;
  return false;
}

bool write_file(const std::string& path, const std::vector<char>& data) {
  return write_fresh(path, 0644, [&](const auto& put) { put(data.data(), data.size()); });
}

/// The files of `dir` whose names `keep` accepts, each read whole: (name, bytes).
template <class Keep>
std::vector<std::pair<std::string, std::vector<char>>> read_files(const std::string& dir, Keep keep) {
  std::vector<std::pair<std::string, std::vector<char>>> files;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const struct dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (!keep(name)) continue;
      std::ifstream f(dir + "/" + name, std::ios::binary);
      files.emplace_back(name, std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
    }
    ::closedir(d);
  }
  return files;
}

/// The global definitions of merged parts (clock resolution and wall time left to the caller,
/// which knows whose timer they are).
otf2w::Definitions global_definitions(unify::Result& merged, const char* paradigm) {
  otf2w::Definitions g;
  g.clock.offset = merged.start;
  g.clock.length = merged.end - merged.start;
  g.machine = "Linux";
  g.mpp_paradigm = paradigm;
  g.regions = std::move(merged.regions);
  g.comms = std::move(merged.comms);
  g.processes = std::move(merged.processes);
  g.contexts = std::move(merged.contexts);
  g.generators = std::move(merged.generators);
  return g;
}

/// A part's local definitions with the mapping tables merge_parts gave it.
otf2w::LocalDefs with_maps(otf2w::LocalDefs l, unify::Result& map) {
  l.region_map = std::move(map.region_map);
  l.comm_map = std::move(map.comm_map);
  l.window_map = std::move(map.window_map);
  l.context_map = std::move(map.context_map);
  l.generator_map = std::move(map.generator_map);
  return l;
}

// flock with a bound: a process that holds the lock and hangs must not stop this one's exit.
int lock(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);  // never through a link
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

bool save_stop_dump(const std::string& dir, std::uint32_t rank, const std::vector<StopEntry>& entries, std::uint64_t* bytes) {
  ::mkdir((dir + "/" + kParts).c_str(), 0755);
  *bytes = 0;
  return write_fresh(stop_file(dir, rank), 0600, [&](const auto& write) {
    const auto put = [&](const void* p, std::size_t n) {
      write(p, n);
      *bytes += n;
    };
    const std::uint64_t count = entries.size();
    put(kStopMagic, 8);
    put(&kStopVersion, 4);
    put(&rank, 4);
    put(&count, 8);
    for (const StopEntry& e : entries) {
      const StopHead h{e.location,
                       e.writer.events,
                       e.writer.last,
                       e.writer.correlation,
                       static_cast<std::uint32_t>(e.writer.open.size()),
                       e.writer.first,
                       e.writer.pending.size(),
                       e.events ? e.events->bytes() : 0};
      put(&h, sizeof h);
      put(e.writer.open.data(), 4 * e.writer.open.size());
      put(e.writer.pending.data(), e.writer.pending.size());
      if (e.events) e.events->for_each_run([&](const char* p, std::size_t n) { put(p, n); });
    }
    put(kStopMagic, 8);
  });
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
  const auto rank_file = [](const std::string& name) { return name.rfind("rank", 0) == 0 && name.find('.') == std::string::npos; };
  for (const auto& [name, b] : read_files(parts_dir, rank_file)) {
    Part p;
    if (decode(b, &p) && p.size == size && p.rank < size) parts.push_back(std::move(p));
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
    otf2w::Definitions g = global_definitions(merged, paradigm);
    g.clock.resolution = timer::resolution();
    g.clock.realtime_ns = timer::realtime_ns(merged.start);
    std::vector<otf2w::LocalDefs> locals;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      locals.push_back(with_maps(std::move(parts[i].local), maps[i]));
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

namespace {

constexpr std::uint32_t kSalvageMagic = 0x50525332;  // "PRS2"

std::string salvage_file(const std::string& dir, std::uint32_t rank) {
  return dir + "/" + kParts + "/salvage.rank" + std::to_string(rank);
}

// A failed rank's Part (rank, size, locations, clock offsets, definitions) after the rest.
struct SalvagePart {
  SalvageInfo info;
  Part part;
};

std::vector<char> encode_salvage(const SalvagePart& p) {
  bytes::Writer o;
  o.u32(kSalvageMagic);
  o.str(p.info.paradigm);
  o.u64(p.info.resolution);
  o.u64(p.info.tick0);
  o.u64(p.info.real0_ns);
  const otf2w::SalvageState& w = p.info.writer;
  o.u64(w.event_chunk);
  o.str(w.program);
  o.u64(w.args.size());
  for (const std::string& a : w.args) o.str(a);
  o.u32(w.metric_threads);
  o.u64(w.metrics.size());
  for (const otf2w::MetricMember& m : w.metrics) {
    o.str(m.name);
    o.str(m.description);
    o.str(m.unit);
    o.u8(static_cast<std::uint8_t>((m.papi ? 1 : 0) | (m.absolute ? 2 : 0)));
  }
  const std::vector<char> part = encode(p.part);
  o.str(std::string(part.begin(), part.end()));
  return std::move(o.data());
}

bool decode_salvage(const std::vector<char>& b, SalvagePart* p) {
  bytes::Reader in(b.data(), b.size());
  if (in.u32() != kSalvageMagic) return false;
  p->info.paradigm = in.str();
  p->info.resolution = in.u64();
  p->info.tick0 = in.u64();
  p->info.real0_ns = in.u64();
  otf2w::SalvageState& w = p->info.writer;
  w.event_chunk = in.u64();
  w.program = in.str();
  const std::uint64_t na = in.count(8);
  for (std::uint64_t i = 0; i < na && in.ok(); ++i) w.args.push_back(in.str());
  w.metric_threads = in.u32();
  const std::uint64_t nm = in.count(25);
  for (std::uint64_t i = 0; i < nm && in.ok(); ++i) {
    otf2w::MetricMember m;
    m.name = in.str();
    m.description = in.str();
    m.unit = in.str();
    const std::uint8_t f = in.u8();
    m.papi = f & 1;
    m.absolute = f & 2;
    w.metrics.push_back(std::move(m));
  }
  const std::string part = in.str();
  if (!in.ok() || !in.done() || !decode(std::vector<char>(part.begin(), part.end()), &p->part)) return false;
  p->info.rank = p->part.rank;
  p->info.size = p->part.size;
  return p->info.size > 0 && p->info.rank < p->info.size && p->info.resolution > 0 && w.event_chunk > 0;
}

/// Where the records of the chunk at `at` (`len` bytes) of `fd` end: the offset of its terminator
/// in the file, and the terminator, OTF2 3.0's END_OF_CHUNK (0), END_OF_BUFFER (1) or END_OF_FILE
/// (2); -1 when it does not look like a chunk (otf2-writer/event_chunks.hpp has the layout).
int chunk_end(int fd, off_t at, std::uint64_t len, off_t* end) {
  namespace chunks = otf2w::chunks;
  if (len < 32) return -1;
  std::vector<unsigned char> c(len);
  if (::pread(fd, c.data(), len, at) != static_cast<ssize_t>(len) || c[0] != chunks::kHeader || c[1] != chunks::kEndianness)
    return -1;
  for (std::uint64_t pos = chunks::kHeaderBytes; pos + 2 <= len;) {
    const unsigned char t = c[pos];
    if (t <= chunks::kEndOfFile) {
      *end = at + static_cast<off_t>(pos);
      return t;
    }
    const std::uint64_t n = chunks::record_bytes(c.data(), pos, len);
    if (!n) return -1;
    pos += n;
  }
  return -1;
}

/// An event file as a reader can take it: a writer closed at the end wrote its last chunk short
/// and ending in END_OF_FILE (kept); a writer never closed left whole chunks, the last ending in
/// END_OF_CHUNK, so a reader looks for a next chunk and fails: that marker becomes END_OF_FILE and
/// END_OF_BUFFER, as a closed writer ends. A part of a chunk cut by the kill is cut off. Returns
/// the bytes cut off.
std::uint64_t end_event_file(const std::string& evt, std::uint64_t chunk) {
  struct stat st {};
  if (::stat(evt.c_str(), &st) != 0) return 0;
  const int fd = ::open(evt.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  const auto size = static_cast<std::uint64_t>(st.st_size), rest = size % chunk;
  off_t end = 0;
  std::uint64_t cut = 0;
  if (rest && chunk_end(fd, static_cast<off_t>(size - rest), rest, &end) != 2) {
    if (::ftruncate(fd, static_cast<off_t>(size - rest)) == 0) cut = rest;
  }
  if ((!rest || cut) && size - cut >= chunk && chunk_end(fd, static_cast<off_t>(size - cut - chunk), chunk, &end) == 0) {
    const unsigned char marks[2] = {2, 1};
    const ssize_t w = ::pwrite(fd, marks, 2, end);
    (void)w;  // not written: the count below stops where the chunk ends, as before
  }
  ::close(fd);
  return cut;
}

/// Reads the next `n` bytes of `f`.
bool read_n(FILE* f, void* p, std::size_t n) { return n == 0 || std::fread(p, 1, n, f) == n; }

/// Converts the dump of one rank (`path`) for the salvage: each location's raw records through a
/// scratch writer that continues the saved writer's stream, then its event file spliced: the
/// flushed events, the pending chunk, the converted rest. `counts`: events and locations done.
bool convert_stop_dump(const std::string& dir, const std::string& path, const otf2w::SalvageState& state,
                       std::uint64_t* events, std::uint64_t* gap, std::size_t* locations, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "rbe");
  if (!f) {
    *error = "cannot read '" + path + "' (" + std::strerror(errno) + ")";
    return false;
  }
  std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
  const auto damaged = [&](const char* what) {
    *error = "'" + path + "' is damaged (" + what + "); remove it to salvage the flushed events alone";
    std::fclose(f);
    return false;
  };
  char magic[8];
  std::uint32_t version = 0, rank = 0;
  std::uint64_t count = 0;
  if (!read_n(f, magic, 8) || std::memcmp(magic, kStopMagic, 8) != 0 || !read_n(f, &version, 4) || version != kStopVersion ||
      !read_n(f, &rank, 4) || !read_n(f, &count, 8) || count > (1u << 24))
    return damaged("no dump header");
  // The trailer first: a dump the kill cut short was never renamed into place, but a damaged
  // one must not half-convert.
  char tail[8];
  if (std::fseek(f, -8, SEEK_END) != 0 || !read_n(f, tail, 8) || std::memcmp(tail, kStopMagic, 8) != 0 || std::fseek(f, 24, SEEK_SET) != 0)
    return damaged("no end");
  const std::string scratch = dir + "/" + kParts + "/stop-" + std::to_string(::getpid());
  otf2w::remove_scratch_archive(scratch);
  if (::mkdir(scratch.c_str(), 0700) != 0) {
    *error = "cannot create '" + scratch + "' (" + std::strerror(errno) + ")";
    std::fclose(f);
    return false;
  }
  struct Done {
    std::uint64_t location;
    otf2w::WriterResume writer;
  };
  std::vector<Done> done;
  bool ok = true;
  {
    otf2w::TraceWriter w;
    if (!w.open(scratch, nullptr, error, nullptr, state.event_chunk)) {
      std::fclose(f);
      otf2w::remove_scratch_archive(scratch);
      return false;
    }
    // The same string and metric ids as the writer that wrote the events (set_program first).
    w.set_program(state.program, state.args);
    w.set_metrics(state.metrics, state.metric_threads);
    // Raw records into 1 MiB blocks, written out 16 at a time.
    constexpr std::size_t kBlock = 1 << 20;
    std::vector<void*> blocks;
    for (std::uint64_t i = 0; ok && i < count; ++i) {
      StopHead h{};
      if (!read_n(f, &h, sizeof h) || h.open > (1u << 20) || h.pending > (1u << 30)) {
        ok = false;
        *error = "'" + path + "' is damaged (a location's header)";
        break;
      }
      Done d{h.location, {}};
      d.writer.events = h.events;
      d.writer.last = h.last;
      d.writer.correlation = h.correlation;
      d.writer.first = h.first;
      d.writer.open.resize(h.open);
      d.writer.pending.resize(h.pending);
      if (!read_n(f, d.writer.open.data(), 4u * h.open) || !read_n(f, d.writer.pending.data(), h.pending)) {
        ok = false;
        *error = "'" + path + "' is damaged (a location's state)";
        break;
      }
      w.resume(h.location, d.writer);
      EventBuffer buf;
      std::size_t used = 0;
      const auto next_block = [&] {
        if (used == blocks.size()) {
          void* b = std::malloc(kBlock);
          if (!b) return false;
          blocks.push_back(b);
        }
        buf.add_chunk(blocks[used++], kBlock);
        return true;
      };
      const auto write_out = [&] {
        if (!buf.empty() && !w.write_events(h.location, buf, false)) ok = false;
        buf.release_all([](void*) {});
        used = 0;
      };
      std::uint64_t left = h.records;
      Record head;
      while (ok && left >= sizeof head) {
        if (!read_n(f, &head, sizeof head) || left < kRecordBytes * (1u + head.slots)) {
          ok = false;
          break;
        }
        Record* r = buf.has_chunk() ? buf.try_reserve(head.slots) : nullptr;
        if (!r) {
          if (used >= 16) write_out();
          if (!next_block() || !(r = buf.try_reserve(head.slots))) {
            ok = false;
            break;
          }
        }
        *r = head;
        if (head.slots && !read_n(f, r + 1, kRecordBytes * head.slots)) {
          ok = false;
          break;
        }
        buf.commit();
        left -= kRecordBytes * (1u + head.slots);
      }
      if (ok && left) ok = false;
      if (ok) write_out();
      else buf.release_all([](void*) {});
      if (!ok) {
        if (error->empty() || w.failed()) *error = "'" + path + "': " + (w.failed() ? w.last_error() : std::string("damaged records"));
        break;
      }
      if (!w.close_location(h.location)) {
        ok = false;
        *error = "'" + path + "': " + w.last_error();
        break;
      }
      *events += w.event_count(h.location);
      done.push_back(std::move(d));
    }
    for (void* b : blocks) std::free(b);
  }
  std::fclose(f);
  // Each location's file: its flushed events, the pending chunk, the converted rest.
  for (const Done& d : done) {
    if (!ok) break;
    const std::string evt = dir + "/traces/" + std::to_string(d.location) + ".evt";
    const std::string rest = scratch + "/traces/" + std::to_string(d.location) + ".evt";
    const std::string to = evt + ".stop";
    ::unlink(to.c_str());
    otf2w::chunks::SpliceCounts c;
    const std::uint64_t first = d.writer.pending.empty() ? d.writer.events + 1 : d.writer.first;
    if (!otf2w::chunks::splice_file(evt, d.writer.pending, first, rest, to, state.event_chunk, &c, error) ||
        ::rename(to.c_str(), evt.c_str()) != 0) {
      if (error->empty()) *error = "cannot write '" + evt + "' (" + std::strerror(errno) + ")";
      ok = false;
      break;
    }
    *events += c.from_pending;
    *gap += c.gap;
    ++*locations;
  }
  otf2w::remove_scratch_archive(scratch);
  return ok;
}

std::string size_text(std::uint64_t bytes) {
  char buf[64];
  if (bytes >= (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  return buf;
}

}  // namespace

bool save_salvage_part(const std::string& dir, const SalvageInfo& info, const unify::ProcessPart& self,
                       const std::vector<std::uint64_t>& locations,
                       const std::vector<std::pair<std::uint64_t, std::int64_t>>& offsets) {
  SalvagePart p;
  p.info = info;
  p.part.rank = info.rank;
  p.part.size = info.size;
  p.part.local.locations = locations;
  p.part.local.clock_offsets = offsets;
  p.part.defs = unify::encode_part(self, regions::snapshot(), comms::snapshot(), info.rank);
  ::mkdir((dir + "/" + kParts).c_str(), 0755);
  return write_file(salvage_file(dir, info.rank), encode_salvage(p));
}

void remove_salvage_part(const std::string& dir, std::uint32_t rank) {
  ::unlink(salvage_file(dir, rank).c_str());
  ::unlink((salvage_file(dir, rank) + ".tmp").c_str());
  ::unlink(stop_file(dir, rank).c_str());
  ::unlink((stop_file(dir, rank) + ".tmp").c_str());
  ::rmdir((dir + "/" + kParts).c_str());  // only when empty (a failed job's merges stay)
}

bool salvage(const std::string& experiment, std::vector<std::string>* report, std::string* error) {
  const std::string dir = experiment, parts_dir = dir + "/" + kParts;
  struct stat st {};
  if (::lstat((dir + "/traces.otf2").c_str(), &st) == 0) {
    *error = "'" + dir + "' has a trace already (traces.otf2); nothing to salvage";
    return false;
  }
  std::vector<SalvagePart> parts;
  std::uint64_t spilled = 0;
  const auto is_part = [](const std::string& name) {
    return name.rfind("salvage.rank", 0) == 0 && name.find(".tmp") == std::string::npos;
  };
  for (const auto& [name, b] : read_files(parts_dir, is_part)) {
    SalvagePart p;
    if (!decode_salvage(b, &p)) {
      *error = "'" + parts_dir + "/" + name + "' is damaged; the trace of that process cannot be salvaged";
      return false;
    }
    parts.push_back(std::move(p));
  }
  if (DIR* d = ::opendir(dir.c_str())) {  // raw spill files: events never converted
    while (const struct dirent* e = ::readdir(d))
      if (std::strncmp(e->d_name, "prof-spill-", 11) == 0 && ::stat((dir + "/" + e->d_name).c_str(), &st) == 0)
        spilled += static_cast<std::uint64_t>(st.st_size);
    ::closedir(d);
  }
  if (parts.empty()) {
    *error = "'" + dir + "' holds no definitions of a killed run (prof-parts/salvage.rank<r>): not an experiment of a "
             "tracing run that flushed, or its trace was written";
    return false;
  }
  std::sort(parts.begin(), parts.end(), [](const SalvagePart& a, const SalvagePart& b) { return a.info.rank < b.info.rank; });
  const SalvageInfo& first = parts.front().info;
  for (const SalvagePart& p : parts)
    if (p.info.size != first.size || p.info.writer.event_chunk != first.writer.event_chunk) {
      *error = "the salvage parts in '" + parts_dir + "' come from different runs; remove the stale ones";
      return false;
    }
  // Each event file as a reader can take it (a kill during a write may leave a part of a chunk).
  const std::uint64_t chunk = first.writer.event_chunk;
  // The stop dumps first: a location's event file then holds its events up to the stop. A
  // salvage run again after a failure here splices the same events again (the file's part ends
  // where the dump's begins).
  std::uint64_t dumped = 0, gap = 0;
  std::size_t dumped_locations = 0;
  std::vector<std::uint32_t> dumped_ranks;
  for (const SalvagePart& p : parts) {
    const std::string stop = stop_file(dir, p.info.rank);
    if (::lstat(stop.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (!convert_stop_dump(dir, stop, p.info.writer, &dumped, &gap, &dumped_locations, error)) return false;
    ::unlink(stop.c_str());
    dumped_ranks.push_back(p.info.rank);
  }
  std::uint64_t cut = 0;
  for (const SalvagePart& p : parts)
    for (std::uint64_t id : p.part.local.locations) cut += end_event_file(dir + "/traces/" + std::to_string(id) + ".evt", chunk);
  std::vector<std::vector<char>> defs;
  for (const SalvagePart& p : parts) defs.push_back(p.part.defs);
  unify::Result merged;
  std::vector<unify::Result> maps;
  if (!unify::merge_parts(defs, first.size, &merged, &maps, error)) {
    *error = "the salvage parts in '" + parts_dir + "': " + *error;
    return false;
  }
  const std::uint64_t start = merged.start, known_end = merged.end;
  otf2w::Definitions g = global_definitions(merged, first.paradigm.empty() ? nullptr : first.paradigm.c_str());
  g.clock.resolution = first.resolution;
  // The events of the files end before the files' last change: the trace's length reaches there
  // (the parts' end is their last save).
  std::uint64_t last_ns = 0;
  for (const SalvagePart& p : parts)
    for (std::uint64_t id : p.part.local.locations)
      if (::stat((dir + "/traces/" + std::to_string(id) + ".evt").c_str(), &st) == 0)
        last_ns = std::max<std::uint64_t>(last_ns, static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
                                                       static_cast<std::uint64_t>(st.st_mtim.tv_nsec));
  const auto tick_of = [&](std::uint64_t ns) {
    const double d = (static_cast<double>(ns) - static_cast<double>(first.real0_ns)) * 1e-9 * static_cast<double>(first.resolution);
    return d <= 0 ? first.tick0 : first.tick0 + static_cast<std::uint64_t>(d);
  };
  const std::uint64_t end = std::max<std::uint64_t>(known_end, tick_of(last_ns) + first.resolution);  // 1 s to spare
  g.clock.length = end - start;
  g.clock.realtime_ns = first.real0_ns + static_cast<std::uint64_t>((static_cast<double>(start) - static_cast<double>(first.tick0)) *
                                                                     1e9 / static_cast<double>(first.resolution));
  std::vector<otf2w::LocalDefs> locals;
  std::vector<std::uint64_t> ids;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    locals.push_back(with_maps(parts[i].part.local, maps[i]));
    for (std::uint64_t id : locals.back().locations) ids.push_back(id);
  }
  // Ranks without a part: one empty placeholder location each, so that communicators can still
  // name all ranks (as a failed job's merge does).
  otf2w::LocalDefs placeholders;
  for (std::size_t r = 0; r < g.processes.size(); ++r) {
    auto& p = g.processes[r];
    if (!p.locations.empty()) continue;
    const std::uint64_t id = otf2w::placeholder_location(static_cast<std::uint32_t>(r));
    p.locations.push_back({id, "no data (the rank left no definitions)", 0, 0, ""});
    if (p.host.empty()) p.host = "unknown host";
    placeholders.locations.push_back(id);
    ids.push_back(id);
  }
  if (!placeholders.locations.empty()) locals.push_back(placeholders);
  // A location that never flushed has no event file: an empty one, so that readers find every
  // location's events.
  ::mkdir((dir + "/traces").c_str(), 0755);
  std::vector<std::uint64_t> missing;
  for (std::uint64_t id : ids)
    if (::stat((dir + "/traces/" + std::to_string(id) + ".evt").c_str(), &st) != 0) missing.push_back(id);
  // Twice: with the parts' event counts (what the writer took in), then with what a reader reads.
  std::uint64_t taken = 0;
  for (const auto& p : g.processes)
    for (const auto& l : p.locations) taken += l.events;
  {
    otf2w::TraceWriter w;
    if (!w.write_salvaged(dir, first.writer, g, locals, missing, error)) return false;
  }
  std::vector<std::uint64_t> counts;
  if (!otf2w::TraceWriter::count_events(dir + "/traces.otf2", ids, &counts, error)) return false;
  std::uint64_t kept = 0;
  std::size_t with_events = 0;
  for (auto& p : g.processes)
    for (auto& l : p.locations) {
      const auto at = std::find(ids.begin(), ids.end(), l.id);
      l.events = at == ids.end() ? 0 : counts[static_cast<std::size_t>(at - ids.begin())];
      kept += l.events;
      with_events += l.events > 0;
    }
  {
    otf2w::TraceWriter w;
    if (!w.write_salvaged(dir, first.writer, g, locals, {}, error)) return false;
  }
  std::vector<std::uint32_t> ranks;
  for (const SalvagePart& p : parts) ranks.push_back(p.info.rank);
  report->push_back("trace written: " + dir + "/traces.otf2, " + std::to_string(kept) + " events of " + std::to_string(with_events) +
                    " of " + std::to_string(ids.size()) + " locations" +
                    (first.size > 1 ? " (ranks " + describe_ranks(ranks, first.size) + ")" : std::string()));
  if (!dumped_ranks.empty())
    report->push_back("the events in memory at the stop signal: " + std::to_string(dumped) + " events of " +
                      std::to_string(dumped_locations) + " locations converted from the stop dump" +
                      (first.size > 1 ? " of ranks " + describe_ranks(dumped_ranks, first.size) : std::string()));
  const bool all_dumped = dumped_ranks.size() == parts.size();
  std::string lost = all_dumped ? "lost: nothing recorded up to the stop signal"
                                : std::string("lost: the events after each thread's last flush (they were in memory), and each "
                                              "location's last OTF2 chunk that was not full yet") +
                                      (dumped_ranks.empty() ? "" : " (of the ranks without a stop dump)");
  if (gap)
    lost += "; " + std::to_string(gap) + " events flushed before the stop that never reached the disk (OTF2 holds chunks "
            "under 4 MiB, those of traces of over 256 locations, in a buffer of its own; their regions' nesting breaks there)";
  if (taken > kept) lost += " (" + std::to_string(taken - kept) + " events that the last definitions save had counted)";
  if (cut) lost += "; " + size_text(cut) + " of chunks the kill cut short";
  if (spilled) lost += "; " + size_text(spilled) + " of raw events in prof-spill-* files, which are not converted";
  report->push_back(lost);
  bool profile = false;  // written before the kill (the write-out's first step), or a checkpoint's
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const struct dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      profile = profile || (name.size() > 6 && name.compare(name.size() - 6, 6, ".cubex") == 0);
    }
    ::closedir(d);
  }
  const std::string open = all_dumped ? "" : "regions still open at the kill stay open in the trace; ";
  report->push_back(open + (profile ? "the profile was written before the kill"
                                    : "there is no profile (it is kept in memory until the end: PROF_FLUSH_SIGNAL writes "
                                      "checkpoints of it during the run)"));
  if (first.size > parts.size())
    report->push_back("ranks without definitions on disk (no flush, or a node lost): " + std::to_string(first.size - parts.size()) +
                      " of " + std::to_string(first.size));
  return true;
}

}  // namespace prof::partial_trace
