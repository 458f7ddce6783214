// SPDX-License-Identifier: BSD-3-Clause
// CUBE4 profile writer (`profile.cubex`): an uncompressed ustar archive holding anchor.xml
// and one SPARSE <id>.index + uncompressed <id>.data pair per metric with data, laid out as
// Score-P 8.x/9.x writes it through CubeW 4.8 (specification: shared/CUBE4-FORMAT.md).
// No dependency on the rest of prof.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace prof::cube4 {

struct Region {
  std::string name;        // display name, e.g. "main", "void ns::f(int)"
  std::string canonical;   // mangled name (may equal name; "" = same as name)
  std::string file;        // "" if unknown
  int begin_line = -1, end_line = -1;
  std::string paradigm;    // "compiler", "user", "pthread", "measurement", ... ("" = "unknown")
  std::string role;        // "function", "wrapper", "artificial", "thread create", ... ("" = "unknown")
  /// Throttled by prof (PROF_THROTTLE): visits and mean ns when it was decided; 0 = not.
  std::uint64_t throttled_visits = 0;
  std::uint32_t throttled_mean_ns = 0;
};

struct CallNode {
  std::uint32_t region;    // index into regions
  std::int64_t parent;     // index into cnodes, -1 for the (single) root; parent index < own index
};

/// An additional EXCLUSIVE UINT64 metric (Score-P's `bytes_sent`, `bytes_received`, ...):
/// metric ids 4, 5, ... in vector order. Only the call paths with a non-zero value on some
/// location get a row; a metric that is zero everywhere is defined but gets no data files.
struct ExtraMetric {
  std::string uniq_name;   // [A-Za-z0-9:_=]; other characters are written as '_'
  std::string disp_name;   // "" = uniq_name
  std::string uom = "bytes";
  std::string url;
  std::string descr;
  std::vector<std::uint64_t> values;  // per (cnode, location) like Profile::visits; exclusive
};

struct Profile {
  std::vector<Region> regions;
  std::vector<CallNode> cnodes;              // exactly one root (cnodes[0]); a child always after its parent
  std::string machine = "Linux", node;       // system tree: machine -> node -> process -> locations
  std::string process = "Process";           // location group name (one process: groups empty)
  std::int64_t rank = 0;
  std::vector<std::string> locations;        // one CPU-thread location per column, e.g. "Master thread", "Pthread thread 1"
  /// Several processes (an MPI job): one location group each, on its node; then location_group
  /// gives each location's group, and the locations of a group are consecutive, groups in order.
  /// Empty: one process (process, rank, node above).
  struct Group {
    std::string name;  // "MPI Rank 3", "CUDA Context 1"
    std::int64_t rank = 0;
    std::string node;
    std::string type = "process";  // or "accelerator" (a GPU context)
    std::int64_t creator = -1;     // accelerator groups: the index of the process group that created it
  };
  std::vector<Group> groups;
  std::vector<std::uint32_t> location_group;
  /// Per location: "thread" or "accelerator stream"; empty = all threads. Accelerator streams
  /// need explicit groups (their accelerator group), after the threads of their process.
  std::vector<std::string> location_types;
  // Values per (cnode, location), index cnode * locations.size() + location. All EXCLUSIVE of children
  // except `time_incl`, which is inclusive (the writer converts to whatever each metric's kind needs).
  std::vector<std::uint64_t> visits;
  std::vector<double> time_incl;             // seconds, inclusive of children
  std::vector<double> min_time, max_time;    // seconds, min/max inclusive time of one visit (0 when visits == 0)

  std::vector<ExtraMetric> extra_metrics;    // optional, metric ids 4.. (e.g. bytes_sent)
  std::string creator = "prof";              // <attr key="Creator">
};

/// Writes `path` (normally <experiment>/profile.cubex). Returns false with a one-line error
/// (naming the file and the cause) when it cannot; never throws.
/// The file is written under a temporary name beside `path` and renamed at the end, so a
/// failed write leaves no partial profile behind.
///
/// Metrics (ids, dtypes and kinds as Score-P writes them):
///   0 visits   UINT64    EXCLUSIVE  (= Profile::visits)
///   1 time     DOUBLE    INCLUSIVE  (= Profile::time_incl)
///   2 min_time MINDOUBLE EXCLUSIVE  (= Profile::min_time)
///   3 max_time MAXDOUBLE EXCLUSIVE  (= Profile::max_time)
///   4.. extra_metrics    UINT64 EXCLUSIVE
/// visits/time/min_time/max_time get a row for every call path (Score-P's dense metrics).
bool write(const std::string& path, const Profile& profile, std::string* error);

/// The anchor.xml document `write` would store, before the '\n' padding that keeps its size
/// off multiples of 512. Empty (and `error` set) when the profile is malformed. Never throws.
std::string anchor_xml(const Profile& profile, std::string* error = nullptr);

}  // namespace prof::cube4
