// SPDX-License-Identifier: BSD-3-Clause
// Reads an OTF2 archive (prof's or another tool's) for prof-export and prof-report: its global
// definitions into plain tables, then its events, merged in time order, into an EventSink.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace prof::otf2 {

constexpr std::uint32_t kUndefined32 = 0xffffffffu;
constexpr std::uint64_t kUndefined64 = ~std::uint64_t{0};

// OTF2's paradigm numbers for the ones prof writes (OTF2_Paradigm).
enum Paradigm : std::uint8_t {
  kParadigmUnknown = 0, kParadigmUser = 1, kParadigmCompiler = 2, kParadigmOpenMP = 3, kParadigmMpi = 4,
  kParadigmCuda = 5, kParadigmMeasurement = 6, kParadigmPthread = 7, kParadigmSampling = 21,
};

// OTF2_Type values of metric values.
constexpr std::uint8_t kTypeInt64 = 8, kTypeDouble = 10;

struct Region {
  std::string name;
  std::string file;
  std::uint8_t paradigm = 0;
  std::uint8_t role = 0;
};

struct SystemTreeNode {
  std::string name, class_name;
  std::uint32_t parent = kUndefined32;
};

struct LocationGroup {
  std::string name;
  std::uint8_t type = 0;                     // OTF2_LOCATION_GROUP_TYPE_{PROCESS=1,ACCELERATOR=2}
  std::uint32_t node = kUndefined32;         // system tree node
  std::uint32_t creator = kUndefined32;      // creating location group (accelerators)
};

struct Location {
  std::uint64_t ref = 0;
  std::string name;
  std::uint8_t type = 0;                     // OTF2_LOCATION_TYPE_{CPU_THREAD=1,ACCELERATOR_STREAM=2,METRIC=3}
  std::uint32_t group = 0;
  std::uint64_t events = 0;
};

struct MetricMember {
  std::string name, unit, description;
  std::uint8_t value_type = 0;               // OTF2_Type: INT64 / UINT64 / DOUBLE
  std::uint8_t mode = 0;                     // OTF2_MetricMode
};

struct Group {
  std::uint8_t type = 0;                     // OTF2_GroupType
  std::uint8_t paradigm = 0;
  std::vector<std::uint64_t> members;
};

struct CallingContext {
  std::uint32_t region = kUndefined32;
  std::uint32_t parent = kUndefined32;
};

/// The global definitions of an archive, indexed by their OTF2 reference.
struct Definitions {
  std::map<std::uint32_t, std::string> strings;
  std::map<std::uint32_t, Region> regions;
  std::map<std::uint32_t, SystemTreeNode> nodes;
  std::map<std::uint32_t, LocationGroup> groups;
  std::vector<Location> locations;           // in definition order
  std::map<std::uint32_t, MetricMember> metric_members;
  std::map<std::uint32_t, std::vector<std::uint32_t>> metric_classes;  // class -> members
  std::map<std::uint32_t, Group> comm_groups;  // Group definitions
  std::map<std::uint32_t, std::uint32_t> comms;  // comm -> group
  std::map<std::uint32_t, CallingContext> calling_contexts;
  std::uint32_t correlation_attribute = kUndefined32;  // prof's "CUDA correlation id"
  std::uint64_t timer_resolution = 1000000000;
  std::uint64_t global_offset = 0;
  std::uint64_t trace_length = 0;
  std::uint64_t realtime_ns = 0;             // start of the trace, ns since the epoch (0: unknown)
  /// By region reference: defined (Reader::open() checks that every reference is below 2^24).
  std::vector<bool> region_defined;

  const std::string& str(std::uint32_t ref) const;
  /// The host (system tree node of class "node", else the group's node) of a location group.
  std::string host_of(std::uint32_t group) const;
};

// OTF2's location group and location types (OTF2_LocationGroupType, OTF2_LocationType).
constexpr std::uint8_t kGroupProcess = 1;
constexpr std::uint8_t kLocationCpuThread = 1;
constexpr std::uint8_t kLocationGpuStream = 2;

/// What a location is, as prof's tools show it: a CPU thread, a GPU stream, or an NVTX lane (a
/// CPU-thread location prof names "NVTX ..."); metric locations are Other.
enum class LocationKind { Thread, Stream, Lane, Other };

/// The processes of an archive (its PROCESS location groups in definition order, which is rank
/// order) and the process of each location: an accelerator group's locations belong to the
/// process that created the group.
class ProcessMap {
 public:
  explicit ProcessMap(const Definitions& defs);
  /// The location groups of the processes, by process index.
  const std::vector<std::uint32_t>& groups() const { return groups_; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(groups_.size()); }
  /// The process index of location `d`; false when it belongs to none (not shown).
  bool process_of(const Location& d, std::uint32_t* process) const;
  static LocationKind kind(const Location& d);

 private:
  const Definitions& defs_;
  std::vector<std::uint32_t> groups_;
  std::map<std::uint32_t, std::uint32_t> index_;  // process group -> process index
};

/// MPI ranks in an archive: a location's rank in MPI_COMM_WORLD (its place in the MPI
/// COMM_LOCATIONS group), ranks in a communicator and back.
class MpiRanks {
 public:
  explicit MpiRanks(const Definitions& defs);
  /// The world rank of a location; kUndefined32 for locations outside MPI.
  std::uint32_t world_rank(std::uint64_t location) const;
  /// The rank of world rank `world` in communicator `comm`; kUndefined32 when not a member.
  std::uint32_t rank_in(std::uint32_t comm, std::uint32_t world);
  /// The world rank of rank `rank` of communicator `comm`; kUndefined32 when unknown.
  std::uint32_t world_of(std::uint32_t comm, std::uint32_t rank) const;
  /// The location of a world rank (its master thread); kUndefined64 when unknown.
  std::uint64_t location_of(std::uint32_t world) const;
  std::uint32_t size() const { return static_cast<std::uint32_t>(locations_.size()); }

 private:
  const std::vector<std::uint64_t>* members(std::uint32_t comm) const;
  const Definitions& defs_;
  std::vector<std::uint64_t> locations_;                      // world rank -> location
  std::map<std::uint64_t, std::uint32_t> world_;              // location -> world rank
  std::map<std::uint64_t, std::uint32_t> rank_cache_;         // comm << 32 | world -> rank in comm
};

/// Receives the events of the selected locations, in time order (OTF2's global event reader).
/// Times are OTF2 ticks, with the locations' clock offsets applied by OTF2.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void enter(std::uint64_t, std::uint64_t, std::uint32_t) {}
  virtual void leave(std::uint64_t, std::uint64_t, std::uint32_t) {}
  virtual void metric(std::uint64_t, std::uint64_t, std::uint32_t /*metric class or instance*/, unsigned /*n*/,
                      const std::uint8_t* /*types*/, const std::uint64_t* /*raw values*/) {}
  /// Point-to-point: send (send == true, peer = receiver) or receive (peer = sender), ranks in comm.
  virtual void message(std::uint64_t, std::uint64_t, bool /*send*/, std::uint32_t /*peer*/, std::uint32_t /*comm*/,
                       std::uint32_t /*tag*/, std::uint64_t /*bytes*/) {}
  virtual void collective_end(std::uint64_t, std::uint64_t, std::uint8_t /*op*/, std::uint32_t /*comm*/,
                              std::uint32_t /*root*/, std::uint64_t /*sent*/, std::uint64_t /*received*/) {}
  /// RmaGet (get == true) or RmaPut: prof's GPU copies (get: to the GPU).
  virtual void rma(std::uint64_t, std::uint64_t, bool /*get*/, std::uint32_t /*remote*/, std::uint64_t /*bytes*/) {}
  virtual void sample(std::uint64_t, std::uint64_t, std::uint32_t /*calling context*/) {}
  /// prof's "CUDA correlation id" attribute, right before the Enter that carries it: a launching
  /// host call's, or its GPU work's on a stream.
  virtual void correlation(std::uint64_t, std::uint64_t, std::uint32_t /*id*/) {}
  virtual void buffer_flush(std::uint64_t, std::uint64_t, std::uint64_t /*stop*/) {}
  virtual void measurement_on_off(std::uint64_t, std::uint64_t, bool /*on*/) {}
  /// ProgramBegin: the program's name and arguments (strings of the definitions).
  virtual void program_begin(std::uint64_t, std::uint64_t, const std::string& /*name*/,
                             const std::vector<std::string>& /*args*/) {}
  /// Called every few thousand events; return false to stop reading.
  virtual bool keep_going() { return true; }
};

/// One archive, opened for reading. Errors are one-line messages in error(). The archive is
/// untrusted input: open() checks that the definitions refer only to definitions that exist (a
/// location's group, a group's system tree node, a calling context's region, a comm's group, ...)
/// and read_events() that each event's region or calling context is defined, so the sinks may
/// index their tables by them. The OTF2 library's own error messages are not printed but kept:
/// error() ends with "(OTF2: <its first message>)".
class Reader {
 public:
  Reader();
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  /// Opens the archive (its .otf2 anchor file) and reads the global definitions.
  bool open(const std::string& anchor);
  const Definitions& defs() const { return defs_; }
  /// Reads the events of the given locations (all when empty) into sink, in time order.
  /// Returns false if the archive could not be read to its end; what was read went to the sink
  /// and error() says why (a damaged or truncated location file, for instance).
  bool read_events(EventSink& sink, const std::vector<std::uint64_t>& locations = {});
  /// Events read by the last read_events().
  std::uint64_t events_read() const { return events_read_; }
  const std::string& error() const { return error_; }
  /// Whether the error is about the archive's content (a damaged or truncated file, a reference to
  /// nothing): error() then names no file and the tool adds "the trace is damaged".
  bool damaged() const { return damaged_; }
  /// Warnings collected while reading (missing location files, ...), one line each.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Impl;
  Impl* impl_;
  Definitions defs_;
  std::uint64_t events_read_ = 0;
  std::string error_;
  bool damaged_ = false;
  std::vector<std::string> warnings_;
};

/// Converts OTF2 ticks (after the global offset) to nanoseconds, exactly.
class TickConverter {
 public:
  TickConverter(std::uint64_t resolution, std::uint64_t offset) : resolution_(resolution ? resolution : 1), offset_(offset) {}
  std::uint64_t ns(std::uint64_t ticks) const {
    if (ticks <= offset_) return 0;
    const std::uint64_t d = ticks - offset_;
    if (resolution_ == 1000000000) return d;
    // Exact: whole seconds, then the rest (rest * 10^9 fits 64 bits for clocks below 18 GHz).
    if (resolution_ < 18000000000ull) return d / resolution_ * 1000000000u + d % resolution_ * 1000000000u / resolution_;
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(d) * 1000000000u / resolution_);
  }
  std::uint64_t ticks(double seconds) const {
    return offset_ + static_cast<std::uint64_t>(seconds * static_cast<double>(resolution_));
  }

 private:
  std::uint64_t resolution_;
  std::uint64_t offset_;
};

}  // namespace prof::otf2
