// SPDX-License-Identifier: BSD-3-Clause
#include "otf2-writer/event_chunks.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace prof::otf2w::chunks {

namespace {

bool read_at(int fd, unsigned char* p, std::uint64_t n, std::uint64_t at) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::uint64_t>(r);
    at += static_cast<std::uint64_t>(r);
  }
  return true;
}

bool write_all(int fd, const unsigned char* p, std::uint64_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::uint64_t>(w);
  }
  return true;
}

bool is_chunk_size(std::uint64_t n) { return n >= (256u << 10) && n <= (16u << 20) && (n & (n - 1)) == 0; }

/// The output side of recut_file: chunks of `size` bytes filled event by event.
class ChunkOut {
 public:
  ChunkOut(int fd, std::uint64_t size) : fd_(fd), c_(size) {}

  /// Appends an event's bytes (its attribute list and itself) at time `time`, as event `index`.
  /// False when even a fresh chunk cannot hold it, or on a write error (*why says which).
  bool put(const unsigned char* p, std::uint64_t n, std::uint64_t time, std::uint64_t index, std::string* why) {
    const std::uint64_t stamp = has_time_ && time_ == time ? 0 : 9;
    if (used_ == 0 || used_ + stamp + n + 2 > c_.size()) {
      if (used_ && !flush(false)) return fail(why, "cannot write");
      if (kHeaderBytes + 9 + n + 2 > c_.size()) return fail(why, "an event of " + std::to_string(n) + " bytes does not fit");
      start(index);
    }
    if (!has_time_ || time_ != time) {
      c_[used_] = kTimestamp;
      std::memcpy(&c_[used_ + 1], &time, 8);
      used_ += 9;
      time_ = time;
      has_time_ = true;
    }
    std::memcpy(&c_[used_], p, n);
    used_ += n;
    last_ = index;
    return true;
  }

  /// The last chunk, short, ended as a closed writer ends it. `events`: the file's event count.
  bool finish(std::uint64_t events) {
    if (used_ == 0) start(events + 1);
    return flush(true);
  }
  std::uint64_t written() const { return written_; }

 private:
  void start(std::uint64_t first) {
    std::memset(c_.data(), 0, c_.size());
    c_[0] = kHeader;
    c_[1] = kEndianness;
    first_ = first;
    last_ = first - 1;
    used_ = kHeaderBytes;
    has_time_ = false;
  }
  bool flush(bool final) {
    std::memcpy(&c_[2], &first_, 8);
    std::memcpy(&c_[10], &last_, 8);
    std::uint64_t n = c_.size();
    if (final) {
      c_[used_] = kEndOfFile;
      c_[used_ + 1] = kEndOfBuffer;
      n = used_ + 2;
    } else {
      c_[used_] = kEndOfChunk;
    }
    written_ += n;
    return write_all(fd_, c_.data(), n);
  }
  static bool fail(std::string* why, const std::string& text) {
    *why = text;
    return false;
  }

  int fd_;
  std::vector<unsigned char> c_;
  std::uint64_t used_ = 0, first_ = 0, last_ = 0, time_ = 0, written_ = 0;
  bool has_time_ = false;
};

}  // namespace

std::uint64_t record_bytes(const unsigned char* c, std::uint64_t pos, std::uint64_t len) {
  if (pos >= len || c[pos] <= kHeader) return 0;
  if (c[pos] == kTimestamp) return pos + 9 <= len ? 9 : 0;
  if (pos + 2 > len) return 0;
  std::uint64_t n = c[pos + 1], head = 2;
  if (n == 0xff) {
    if (pos + 10 > len) return 0;
    std::memcpy(&n, &c[pos + 2], 8);
    head = 10;
  }
  if (n > len || pos + head + n > len) return 0;
  return head + n;
}

namespace {

/// Reads the events of OTF2 chunks in order, keeping the time of the timestamp records between
/// them: each event (with its attribute list) goes to `put(bytes, n, time)`.
class EventWalk {
 public:
  enum End { kBad, kChunkEnd, kFileEnd };
  /// The chunk `c` of `len` bytes (at byte `at` of its file, for messages).
  template <class Put>
  End chunk(const unsigned char* c, std::uint64_t len, std::uint64_t at, Put&& put) {
    if (len < kHeaderBytes + 1 || c[0] != kHeader || c[1] != kEndianness) return bad(at, "no chunk header");
    for (std::uint64_t pos = kHeaderBytes;;) {
      if (pos >= len) return bad(at + pos, "a chunk without its end");
      if (c[pos] == kEndOfChunk) return kChunkEnd;
      if (c[pos] == kEndOfFile) return kFileEnd;
      if (c[pos] == kTimestamp) {
        if (!record_bytes(c, pos, len)) return bad(at + pos, "a cut timestamp");
        std::memcpy(&time_, &c[pos + 1], 8);
        timed_ = true;
        pos += 9;
        continue;
      }
      const std::uint64_t begin = pos;
      if (c[pos] == kAttributeList) {
        const std::uint64_t n = record_bytes(c, pos, len);
        if (!n) return bad(at + pos, "a cut attribute list");
        pos += n;
        if (pos >= len || c[pos] <= kHeader || c[pos] == kTimestamp || c[pos] == kAttributeList)
          return bad(at + pos, "an attribute list without its event");
      }
      const std::uint64_t n = record_bytes(c, pos, len);
      if (!n) return bad(at + pos, "an unknown or cut record");
      if (!timed_) return bad(at + pos, "an event before any timestamp");
      pos += n;
      std::string why;
      if (!put(&c[begin], pos - begin, time_, &why)) return bad(at + begin, why);
    }
  }
  const std::string& why() const { return why_; }

 private:
  End bad(std::uint64_t at, const std::string& what) {
    why_ = what + " at byte " + std::to_string(at);
    return kBad;
  }
  std::uint64_t time_ = 0;
  bool timed_ = false;
  std::string why_;
};

}  // namespace

bool recut_file(const std::string& from_path, const std::string& to_path, std::uint64_t from, std::uint64_t to,
                RecutCounts* counts, std::string* error) {
  const int in = ::open(from_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (in < 0 || ::fstat(in, &st) != 0) {
    *error = "cannot read '" + from_path + "' (" + std::strerror(errno) + ")";
    if (in >= 0) ::close(in);
    return false;
  }
  const int out = ::open(to_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0) {
    *error = "cannot create '" + to_path + "' (" + std::strerror(errno) + ")";
    ::close(in);
    return false;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::vector<unsigned char> c(from);
  ChunkOut o(out, to);
  EventWalk walk;
  std::uint64_t index = 0;
  std::string why;
  const auto put = [&](const unsigned char* p, std::uint64_t n, std::uint64_t time, std::string* w) {
    return o.put(p, n, time, ++index, w);
  };
  EventWalk::End end = EventWalk::kChunkEnd;
  for (std::uint64_t at = 0; end == EventWalk::kChunkEnd && at < size; at += from) {
    const std::uint64_t len = std::min(from, size - at);
    if (!read_at(in, c.data(), len, at)) {
      why = "cannot read at byte " + std::to_string(at);
      end = EventWalk::kBad;
    } else if ((end = walk.chunk(c.data(), len, at, put)) == EventWalk::kBad) {
      why = walk.why();
    }
  }
  bool ok = end == EventWalk::kFileEnd;
  if (end == EventWalk::kChunkEnd) why = "no END_OF_FILE (a writer that was not closed) at byte " + std::to_string(size);
  ok = ok && o.finish(index);
  if (ok && ::close(out) != 0) {
    ok = false;
    why = "cannot write at byte " + std::to_string(o.written());
  } else if (!ok) {
    ::close(out);
  }
  ::close(in);
  if (!ok) {
    ::unlink(to_path.c_str());
    *error = "'" + from_path + "': " + why;
    return false;
  }
  counts->events = index;
  counts->bytes_in = size;
  counts->bytes_out = o.written();
  return true;
}

bool splice_file(const std::string& file, const std::vector<unsigned char>& pending, std::uint64_t first,
                 const std::string& tail, const std::string& to_path, std::uint64_t size, SpliceCounts* counts,
                 std::string* error) {
  *counts = SpliceCounts{};
  const int out = ::open(to_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (out < 0) {
    *error = "cannot create '" + to_path + "' (" + std::strerror(errno) + ")";
    return false;
  }
  ChunkOut o(out, size);
  std::uint64_t index = 0;
  std::uint64_t* tally = &counts->from_file;
  bool full = false;  // the file's part is complete: events 1 .. first - 1
  const auto put = [&](const unsigned char* p, std::uint64_t n, std::uint64_t time, std::string* w) {
    if (tally == &counts->from_file && index + 1 >= first) {
      full = true;
      return true;  // the events from here on come from `pending`
    }
    ++*tally;
    return o.put(p, n, time, ++index, w);
  };
  std::string why;
  bool ok = true;
  // 1. The file's events before `first`, up to the first chunk the kill cut short.
  const int in = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (in >= 0 && ::fstat(in, &st) == 0) {
    std::vector<unsigned char> c(size);
    EventWalk walk;
    const auto len_of = static_cast<std::uint64_t>(st.st_size);
    for (std::uint64_t at = 0; !full && at < len_of; at += size) {
      const std::uint64_t len = std::min(size, len_of - at);
      if (!read_at(in, c.data(), len, at)) break;
      const EventWalk::End end = walk.chunk(c.data(), len, at, put);
      if (end != EventWalk::kChunkEnd) break;  // cut short, damaged or the end: what came before is kept
    }
  }
  if (in >= 0) ::close(in);
  full = true;
  if (first > 1 && index < first - 1) counts->gap = first - 1 - index;
  // 2. The writer's chunk that was still in memory.
  tally = &counts->from_pending;
  if (!pending.empty()) {
    EventWalk walk;
    const EventWalk::End end = walk.chunk(pending.data(), pending.size(), 0, put);
    if (end == EventWalk::kBad) {
      ok = false;
      why = "the dumped chunk: " + walk.why();
    }
  }
  // 3. The events converted from the dump, as a closed writer wrote them.
  tally = &counts->from_tail;
  const int t = tail.empty() ? -1 : ::open(tail.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (ok && t >= 0 && ::fstat(t, &st) == 0) {
    std::vector<unsigned char> c(size);
    EventWalk walk;
    const auto len_of = static_cast<std::uint64_t>(st.st_size);
    EventWalk::End end = EventWalk::kChunkEnd;
    for (std::uint64_t at = 0; end == EventWalk::kChunkEnd && at < len_of; at += size) {
      const std::uint64_t len = std::min(size, len_of - at);
      end = read_at(t, c.data(), len, at) ? walk.chunk(c.data(), len, at, put) : EventWalk::kBad;
    }
    if (end != EventWalk::kFileEnd) {
      ok = false;
      why = "'" + tail + "': " + (walk.why().empty() ? std::string("no END_OF_FILE") : walk.why());
    }
  } else if (ok && !tail.empty()) {
    ok = false;
    why = "cannot read '" + tail + "' (" + std::strerror(errno) + ")";
  }
  if (t >= 0) ::close(t);
  ok = ok && o.finish(index);
  if (ok && ::close(out) != 0) ok = false;
  else if (!ok) ::close(out);
  if (!ok) {
    ::unlink(to_path.c_str());
    *error = why.empty() ? "cannot write '" + to_path + "'" : why;
    return false;
  }
  counts->bytes_out = o.written();
  return true;
}

bool recut_anchor(const std::string& anchor, const std::string& to_path, std::uint64_t from, std::uint64_t to,
                  std::string* error) {
  // OTF2 3.0.2's anchor: the header's two bytes, "OTF2", its format and version bytes, then the
  // event and definition chunk sizes as full 8-byte numbers, at bytes 12 and 20.
  static const unsigned char kMagic[] = {kHeader, kEndianness, 'O', 'T', 'F', '2', 0};
  constexpr std::uint64_t kEventsAt = 12, kDefsAt = 20;
  const int in = ::open(anchor.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (in < 0 || ::fstat(in, &st) != 0 || st.st_size < 28 || st.st_size > (1 << 20)) {
    *error = "cannot read the anchor '" + anchor + "'";
    if (in >= 0) ::close(in);
    return false;
  }
  std::vector<unsigned char> a(static_cast<std::size_t>(st.st_size));
  const bool got = read_at(in, a.data(), a.size(), 0);
  ::close(in);
  std::uint64_t events = 0, defs = 0;
  if (got) {
    std::memcpy(&events, &a[kEventsAt], 8);
    std::memcpy(&defs, &a[kDefsAt], 8);
  }
  if (!got || std::memcmp(a.data(), kMagic, sizeof kMagic) != 0 || events != from || !is_chunk_size(defs) ||
      !is_chunk_size(to)) {
    *error = "the anchor '" + anchor + "' does not have the layout of OTF2 3.0 (event chunk size at byte 12)";
    return false;
  }
  std::memcpy(&a[kEventsAt], &to, 8);
  const int out = ::open(to_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  bool ok = out >= 0 && write_all(out, a.data(), a.size());
  if (out >= 0 && ::close(out) != 0) ok = false;
  if (!ok) {
    *error = "cannot write '" + to_path + "' (" + std::strerror(errno) + ")";
    ::unlink(to_path.c_str());
  }
  return ok;
}

}  // namespace prof::otf2w::chunks
