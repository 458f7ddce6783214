// SPDX-License-Identifier: BSD-3-Clause
// CUBE4 profile reader (`.cubex`, as written by cube4_writer and by Score-P through CubeW 4.x),
// for tools such as prof-score; not part of libprof. Format: shared/CUBE4-FORMAT.md.
// Depends only on cube4_writer.hpp (for Region and CallNode) and the standard library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "measurement/profiling/cube4_writer.hpp"

namespace prof::cube4 {

struct ReadLocation {
  std::string name;               // e.g. "Master thread", "CUDA[0:13]"
  std::string type;               // "thread", "accelerator stream", "gpu", "metric", as written ("" when absent)
  std::int64_t rank = 0;          // rank of its location group
  std::string group;              // location-group name, e.g. "Process" / "MPI Rank 3" / "CUDA Context 1"
  std::uint32_t group_index = 0;  // dense index of its location group (0..groups-1) in file order

  /// A GPU stream (type "accelerator stream", or "gpu" as older Cube files say).
  bool gpu() const { return type == "accelerator stream" || type == "gpu"; }
};

/// A location group (§3.6), in file order.
struct ReadGroup {
  std::string name;          // "Process", "MPI Rank 3", "CUDA Context 1"
  std::int64_t rank = 0;
  std::string type;          // "process", "accelerator", "metrics", as written ("" when absent)
  std::string creator_name;  // <attr key="Creating location group" value=...>, "" when absent
  /// Index of the group named creator_name (the nearest one before this group when several
  /// have that name, else the first after it); -1 when there is no such attribute or group.
  std::int64_t creator = -1;
  /// The group whose process holds this group's locations (their events go to its trace
  /// buffers): the end of the creator chain from this group, or the group itself when it has
  /// no creator. A process group is its own process.
  std::uint32_t process = 0;
};

struct ReadMetric {
  std::string uniq_name, disp_name, dtype, uom, kind;  // kind: "EXCLUSIVE" or "INCLUSIVE"
  bool has_data = false;  // false when the metric has no .index/.data members (all zero)
  // Per (cnode, location): index cnode * locations.size() + location, AS STORED (an INCLUSIVE
  // metric holds inclusive values); zero where the file has no row.
  std::vector<double> values;
};

struct ReadProfile {
  // Region::canonical is the <mangled_name> (the display name when the file has none);
  // paradigm and role are "" when the file has none.
  std::vector<Region> regions;
  // In cnode-id order (the file's ids must be 0..N-1); parent -1 for roots (several roots are
  // allowed). Unlike the writer's input, a parent may have a larger id than its child, and
  // the sibling order of anchor.xml (which defines the row order of the data) is not kept.
  std::vector<CallNode> cnodes;
  std::vector<ReadLocation> locations;  // in location-id order
  std::uint32_t groups = 0;             // number of location groups (= location_groups.size())
  std::vector<ReadGroup> location_groups;  // in file order; ReadLocation::group_index indexes it
  // In metric-id order, only the metrics the reader understands: kind EXCLUSIVE or INCLUSIVE
  // (a missing type counts as EXCLUSIVE, like CubeLib) and a scalar dtype (DOUBLE, FLOAT,
  // UINT64, INT64, INTEGER, MINDOUBLE, MAXDOUBLE and the 1-, 2- and 4-byte integer types).
  // Others (derived, SIMPLE, TAU_ATOMIC, COMPLEX, HISTOGRAM, ...) are skipped.
  std::vector<ReadMetric> metrics;

  /// nullptr if absent.
  const ReadMetric* metric(const std::string& uniq_name) const;
  /// Exclusive values of an INCLUSIVE metric (value minus the children's values, per
  /// location). EXCLUSIVE and MINDOUBLE/MAXDOUBLE metrics are returned unchanged.
  std::vector<double> exclusive(const ReadMetric& m) const;
  /// Inclusive values (sum over the subtree) of an EXCLUSIVE metric. INCLUSIVE and
  /// MINDOUBLE/MAXDOUBLE metrics are returned unchanged.
  std::vector<double> inclusive(const ReadMetric& m) const;
};

/// Reads `path`. Returns false with a one-line error (naming the file and the cause, e.g.
/// "profile.cubex: member 2.index missing") when it cannot; `*out` is then empty.
/// Compressed data (ZCUBEX) is rejected. Never throws; `out` and `error` may be null.
/// `only`: the unique names of the metrics to read (the others are left out of `metrics`; each
/// costs call paths x locations x 8 bytes); null reads all.
bool read(const std::string& path, ReadProfile* out, std::string* error, const std::vector<std::string>* only = nullptr);

}  // namespace prof::cube4
