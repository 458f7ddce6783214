// SPDX-License-Identifier: BSD-3-Clause
// OTF2 3.0's event files and anchor as prof reads and rewrites them without the library: the
// salvage of a killed run's event files (partial_trace) and the re-cut of a trace's event chunks
// to the size its readers can hold (TraceWriter::finish). No OTF2 header is needed.
//
// An event file is a sequence of chunks of the archive's event chunk size (the last one short).
// A chunk: its header (type 3, the byte 0x42, the positions of its first and last event, 8 bytes
// each, native order: 18 bytes), then records, then a terminator: END_OF_CHUNK (0; zeros pad the
// chunk) or, in the file's last chunk, END_OF_FILE (2) and END_OF_BUFFER (1). A record is a type
// byte and either a timestamp's 8 bytes (type 5: the time of the events after it) or a length
// (one byte, or 0xff and 8 bytes) and as many bytes; an attribute list (type 6) belongs to the
// event after it. A chunk's first event has a timestamp record before it in that chunk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace prof::otf2w::chunks {

constexpr unsigned char kEndOfChunk = 0, kEndOfBuffer = 1, kEndOfFile = 2, kHeader = 3, kTimestamp = 5,
                        kAttributeList = 6;
constexpr unsigned char kEndianness = 0x42;
constexpr std::uint64_t kHeaderBytes = 18;

/// The bytes of the record (timestamp, attribute list or event) at `c[pos]` of a chunk of `len`
/// bytes; 0 when `c[pos]` is a terminator or header, or the record does not fit.
std::uint64_t record_bytes(const unsigned char* c, std::uint64_t pos, std::uint64_t len);

struct RecutCounts {
  std::uint64_t events = 0;     ///< events in the file
  std::uint64_t bytes_in = 0;   ///< its size before
  std::uint64_t bytes_out = 0;  ///< and after
};

/// Writes the event file `from_path` (chunks of `from` bytes, written by a closed writer: it ends
/// in END_OF_FILE) to `to_path` (created, never followed or overwritten) in chunks of `to` bytes,
/// event for event: each new chunk gets its header with its event positions and the timestamp of
/// its first event. False with the reason in `error` (`to_path` is then removed).
bool recut_file(const std::string& from_path, const std::string& to_path, std::uint64_t from, std::uint64_t to,
                RecutCounts* counts, std::string* error);

struct SpliceCounts {
  std::uint64_t from_file = 0;     ///< events kept of the event file
  std::uint64_t gap = 0;           ///< events before `first` that the file did not have whole (cut by the kill)
  std::uint64_t from_pending = 0;  ///< of the writer's chunk that was in memory
  std::uint64_t from_tail = 0;     ///< of the converted rest
  std::uint64_t bytes_out = 0;
};

/// The salvage of a location whose writer was stopped by a stop dump: writes `to_path` (created,
/// never followed or overwritten) in chunks of `size` bytes with the events 1 .. `first` - 1 of
/// the event file `file` (missing, or cut short by the kill: what it has whole), then the events
/// of `pending` (the writer's chunk that was still in memory: its header, events and a
/// terminator; may be empty), then those of `tail` (a closed writer's event file; "" for none).
/// False with the reason in `error` (`to_path` is then removed).
bool splice_file(const std::string& file, const std::vector<unsigned char>& pending, std::uint64_t first,
                 const std::string& tail, const std::string& to_path, std::uint64_t size, SpliceCounts* counts,
                 std::string* error);

/// Writes `to_path`: the anchor file `anchor` with its event chunk size `from` changed to `to`.
/// False with the reason when the anchor does not have the layout OTF2 3.0 writes.
bool recut_anchor(const std::string& anchor, const std::string& to_path, std::uint64_t from, std::uint64_t to,
                  std::string* error);

}  // namespace prof::otf2w::chunks
