// SPDX-License-Identifier: BSD-3-Clause
// Hand encoding of the Perfetto trace subset prof-export writes (TracePacket, TrackDescriptor,
// TrackEvent, InternedData, PerfSample), protozero-style: fields appended to a byte string, nested
// messages sized after the fact. Field numbers are those of Perfetto's perfetto_trace.proto.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace prof::pftrace {

// Field numbers (protos/perfetto/trace/...). Names follow the schema.
namespace field {
constexpr std::uint32_t kTracePacket = 1;  // Trace.packet
// TracePacket
constexpr std::uint32_t kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12, kSequenceFlags = 13,
                        kTraceDefaults = 59, kTrackDescriptor = 60, kPerfSample = 66, kFirstPacketOnSequence = 87;
// TracePacketDefaults / TrackEventDefaults
constexpr std::uint32_t kDefaultsTrackEvent = 11, kDefaultsTrackUuid = 11;
// TrackDescriptor
constexpr std::uint32_t kTdUuid = 1, kTdName = 2, kTdProcess = 3, kTdThread = 4, kTdParentUuid = 5, kTdCounter = 8,
                        kTdChildOrdering = 11, kTdSiblingOrderRank = 12, kTdDescription = 14,
                        kTdSiblingMergeBehavior = 15;
// ProcessDescriptor / ThreadDescriptor
constexpr std::uint32_t kPdPid = 1, kPdCmdline = 2, kPdProcessName = 6, kPdLabels = 8;
constexpr std::uint32_t kThPid = 1, kThTid = 2, kThThreadName = 5;
// CounterDescriptor
constexpr std::uint32_t kCdUnit = 3, kCdUnitName = 6, kCdIsIncremental = 5;
// TrackEvent
constexpr std::uint32_t kTeCategoryIids = 3, kTeDebugAnnotations = 4, kTeType = 9, kTeNameIid = 10,
                        kTeTrackUuid = 11, kTeName = 23, kTeCounterValue = 30, kTeDoubleCounterValue = 44,
                        kTeFlowIds = 47, kTeTerminatingFlowIds = 48, kTeCorrelationId = 52;
// DebugAnnotation
constexpr std::uint32_t kDaNameIid = 1, kDaBool = 2, kDaUint = 3, kDaInt = 4, kDaDouble = 5, kDaString = 6,
                        kDaName = 10;
// InternedData
constexpr std::uint32_t kIdEventCategories = 1, kIdEventNames = 2, kIdDebugAnnotationNames = 3,
                        kIdFunctionNames = 5, kIdFrames = 6, kIdCallstacks = 7, kIdMappingPaths = 17,
                        kIdMappings = 19;
constexpr std::uint32_t kIid = 1, kInternedName = 2;  // EventName/EventCategory/InternedString: iid, name|str
// Mapping / Frame / Callstack
constexpr std::uint32_t kMapPathStringIds = 7;
constexpr std::uint32_t kFrameFunctionNameId = 2, kFrameMappingId = 3, kFrameRelPc = 4;
constexpr std::uint32_t kCallstackFrameIds = 2;
// PerfSample
constexpr std::uint32_t kPsPid = 2, kPsTid = 3, kPsCallstackIid = 4;
}  // namespace field

// TrackEvent.Type
enum EventType : std::uint8_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4 };
// TracePacket.SequenceFlags
constexpr std::uint32_t kSeqIncrementalStateCleared = 1, kSeqNeedsIncrementalState = 2;
// CounterDescriptor.Unit
constexpr std::uint32_t kUnitTimeNs = 1, kUnitCount = 2, kUnitSizeBytes = 3;

/// A protobuf message being appended to a byte string.
class Encoder {
 public:
  explicit Encoder(std::string& out) : out_(out) {}

  void varint(std::uint32_t field, std::uint64_t v) {
    raw_varint(static_cast<std::uint64_t>(field) << 3);
    raw_varint(v);
  }
  void sint(std::uint32_t field, std::int64_t v) { varint(field, static_cast<std::uint64_t>(v)); }  // int32/int64
  void fixed64(std::uint32_t field, std::uint64_t v) {
    raw_varint(static_cast<std::uint64_t>(field) << 3 | 1);
    char b[8];
    std::memcpy(b, &v, 8);  // little-endian hosts only (x86-64, aarch64)
    out_.append(b, 8);
  }
  void dbl(std::uint32_t field, double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    fixed64(field, bits);
  }
  void bytes(std::uint32_t field, std::string_view s) {
    raw_varint(static_cast<std::uint64_t>(field) << 3 | 2);
    raw_varint(s.size());
    out_.append(s.data(), s.size());
  }
  /// Starts a nested message; returns the mark to give to end().
  std::size_t begin(std::uint32_t field) {
    raw_varint(static_cast<std::uint64_t>(field) << 3 | 2);
    out_.push_back('\0');  // one length byte; end() makes room for more
    return out_.size();
  }
  void end(std::size_t mark) {
    const std::size_t len = out_.size() - mark;
    if (len < 0x80) {
      out_[mark - 1] = static_cast<char>(len);
      return;
    }
    char b[10];
    std::size_t n = 0;
    for (std::uint64_t v = len; v >= 0x80; v >>= 7) b[n++] = static_cast<char>((v & 0x7f) | 0x80);
    b[n] = static_cast<char>(len >> (7 * n));
    ++n;
    out_.insert(mark - 1, b, n - 1);  // the extra length bytes go before the body
    std::memcpy(&out_[mark - 1], b, n);
  }

 private:
  void raw_varint(std::uint64_t v) {
    char b[10];
    std::size_t n = 0;
    while (v >= 0x80) {
      b[n++] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    b[n++] = static_cast<char>(v);
    out_.append(b, n);
  }
  std::string& out_;
};

/// Appends a varint at p (at most 10 bytes); returns the end.
inline char* put_varint(char* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

/// A .pftrace file: packets appended to a 1 MiB buffer, written out when it is full. Small
/// packets are encoded straight into the buffer (reserve/commit); others are built with an Encoder
/// in a scratch string (packet/done) and copied in.
class File {
 public:
  File() : data_(new char[kBlock + kSlack]) {}
  ~File() { close(); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  bool open(const std::string& path) {
    path_ = path;
    f_ = std::fopen(path.c_str(), "wb");
    written_ = 0;
    used_ = 0;
    return f_ != nullptr;
  }
  /// Room for a packet of at most kSlack bytes, to be encoded at the pointer returned.
  char* reserve() { return data_.get() + used_; }
  void commit(const char* end) {
    used_ = static_cast<std::size_t>(end - data_.get());
    if (used_ >= kBlock) flush();
  }
  /// The scratch string a larger packet is encoded into: start one with packet(), finish with done().
  std::string& buffer() { return scratch_; }
  std::size_t packet() {
    scratch_.clear();
    Encoder e(scratch_);
    return e.begin(field::kTracePacket);
  }
  void done(std::size_t mark) {
    Encoder(scratch_).end(mark);
    if (used_ + scratch_.size() > kBlock + kSlack) flush();
    if (scratch_.size() > kBlock) {
      write(scratch_.data(), scratch_.size());
    } else {
      std::memcpy(data_.get() + used_, scratch_.data(), scratch_.size());
      used_ += scratch_.size();
      if (used_ >= kBlock) flush();
    }
  }
  bool flush() {
    if (used_) write(data_.get(), used_);
    used_ = 0;
    return ok_;
  }
  /// Bytes in the file so far, buffered ones included.
  std::uint64_t size() const { return written_ + used_; }
  bool close() {
    if (!f_) return ok_;
    flush();
    if (std::fclose(f_) != 0) ok_ = false;
    f_ = nullptr;
    return ok_;
  }
  bool ok() const { return ok_; }
  const std::string& path() const { return path_; }

  static constexpr std::size_t kSlack = 256;  // reserve() guarantees this much

 private:
  void write(const char* p, std::size_t n) {
    if (f_ && std::fwrite(p, 1, n, f_) != n) ok_ = false;
    written_ += n;
  }
  static constexpr std::size_t kBlock = 1 << 20;
  std::unique_ptr<char[]> data_;
  std::size_t used_ = 0;
  std::string scratch_;
  std::FILE* f_ = nullptr;
  std::string path_;
  std::uint64_t written_ = 0;
  bool ok_ = true;
};

}  // namespace prof::pftrace
