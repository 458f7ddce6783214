// SPDX-License-Identifier: BSD-3-Clause
#include "measurement/profiling/profile_merge.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "measurement/bytes.hpp"
#include "measurement/definitions/regions.hpp"
#include "measurement/mpp.hpp"
#include "measurement/unify.hpp"

namespace prof::profile_merge {

namespace {

// One process: its group made explicit, so that merging only ever appends groups.
void make_groups(cube4::Profile& p) {
  if (!p.groups.empty()) return;
  cube4::Profile::Group g;
  g.name = p.process;
  g.rank = p.rank;
  g.node = p.node;
  p.groups.push_back(std::move(g));
  p.location_group.assign(p.locations.size(), 0);
}

using RegionKey = std::tuple<std::string, std::string, std::string, int, int, std::string, std::string>;
RegionKey key_of(const cube4::Region& r) {
  return {r.name, r.canonical, r.file, r.begin_line, r.end_line, r.paradigm, r.role};
}

}  // namespace

std::vector<char> encode(const cube4::Profile& in) {
  cube4::Profile p = in;
  make_groups(p);
  bytes::Writer o;
  o.u64(p.regions.size());
  for (const auto& r : p.regions) {
    o.str(r.name);
    o.str(r.canonical);
    o.str(r.file);
    o.i64(r.begin_line);
    o.i64(r.end_line);
    o.str(r.paradigm);
    o.str(r.role);
    o.u64(r.throttled_visits);
    o.u32(r.throttled_mean_ns);
  }
  o.u64(p.cnodes.size());
  for (const auto& c : p.cnodes) {
    o.u32(c.region);
    o.i64(c.parent);
  }
  o.u64(p.groups.size());
  for (const auto& g : p.groups) {
    o.str(g.name);
    o.i64(g.rank);
    o.str(g.node);
    o.str(g.type);
    o.i64(g.creator);
  }
  o.u64(p.locations.size());
  for (std::size_t l = 0; l < p.locations.size(); ++l) {
    o.str(p.locations[l]);
    o.u32(p.location_group[l]);
    o.str(l < p.location_types.size() ? p.location_types[l] : std::string("thread"));
  }
  // Cells: visits, time, min, max; then the extra metrics by name.
  for (std::size_t i = 0; i < p.visits.size(); ++i) {
    o.u64(p.visits[i]);
    o.f64(p.time_incl[i]);
    o.f64(p.min_time[i]);
    o.f64(p.max_time[i]);
  }
  o.u64(p.extra_metrics.size());
  for (const auto& m : p.extra_metrics) {
    o.str(m.uniq_name);
    o.str(m.disp_name);
    o.str(m.uom);
    o.str(m.url);
    o.str(m.descr);
    for (std::uint64_t v : m.values) o.u64(v);
  }
  return std::move(o.data());
}

bool decode(const std::vector<char>& data, cube4::Profile* out) {
  bytes::Reader in(data.data(), data.size());
  cube4::Profile p;
  const std::uint64_t nr = in.count(8);
  for (std::uint64_t i = 0; i < nr && in.ok(); ++i) {
    cube4::Region r;
    r.name = in.str();
    r.canonical = in.str();
    r.file = in.str();
    r.begin_line = static_cast<int>(in.i64());
    r.end_line = static_cast<int>(in.i64());
    r.paradigm = in.str();
    r.role = in.str();
    r.throttled_visits = in.u64();
    r.throttled_mean_ns = in.u32();
    p.regions.push_back(std::move(r));
  }
  const std::uint64_t nc = in.count(12);
  for (std::uint64_t i = 0; i < nc && in.ok(); ++i) {
    cube4::CallNode c;
    c.region = in.u32();
    c.parent = in.i64();
    p.cnodes.push_back(c);
  }
  const std::uint64_t ng = in.count(8);
  for (std::uint64_t i = 0; i < ng && in.ok(); ++i) {
    cube4::Profile::Group g;
    g.name = in.str();
    g.rank = in.i64();
    g.node = in.str();
    g.type = in.str();
    g.creator = in.i64();
    p.groups.push_back(std::move(g));
  }
  const std::uint64_t nl = in.count(20);
  for (std::uint64_t i = 0; i < nl && in.ok(); ++i) {
    p.locations.push_back(in.str());
    p.location_group.push_back(in.u32());
    p.location_types.push_back(in.str());
  }
  const std::uint64_t cells = nc * nl;
  if (!in.ok() || (nl && cells / nl != nc)) return false;
  for (std::uint64_t i = 0; i < cells && in.ok(); ++i) {
    p.visits.push_back(in.u64());
    p.time_incl.push_back(in.f64());
    p.min_time.push_back(in.f64());
    p.max_time.push_back(in.f64());
  }
  const std::uint64_t nm = in.count(8);
  for (std::uint64_t k = 0; k < nm && in.ok(); ++k) {
    cube4::ExtraMetric m;
    m.uniq_name = in.str();
    m.disp_name = in.str();
    m.uom = in.str();
    m.url = in.str();
    m.descr = in.str();
    for (std::uint64_t i = 0; i < cells && in.ok(); ++i) m.values.push_back(in.u64());
    p.extra_metrics.push_back(std::move(m));
  }
  if (!in.ok() || !in.done()) return false;
  for (std::size_t i = 0; i < p.cnodes.size(); ++i) {
    const cube4::CallNode& c = p.cnodes[i];
    if (c.region >= p.regions.size() || c.parent >= static_cast<std::int64_t>(i) || (i > 0 && c.parent < 0)) return false;
  }
  for (std::uint32_t g : p.location_group)
    if (g >= p.groups.size()) return false;
  for (const auto& g : p.groups)
    if (g.creator >= static_cast<std::int64_t>(p.groups.size())) return false;
  *out = std::move(p);
  return true;
}

void merge(cube4::Profile& into, const cube4::Profile& in) {
  if (in.locations.empty() || in.cnodes.empty()) return;  // a process that recorded no profile
  cube4::Profile other = in;
  make_groups(other);
  if (into.locations.empty() || into.cnodes.empty()) {  // nothing of its own yet
    into = std::move(other);
    return;
  }
  make_groups(into);
  // Regions.
  std::map<RegionKey, std::uint32_t> region_index;
  for (std::uint32_t i = 0; i < into.regions.size(); ++i) region_index.emplace(key_of(into.regions[i]), i);
  std::vector<std::uint32_t> region_map;
  for (const auto& r : other.regions) {
    auto [it, fresh] = region_index.emplace(key_of(r), static_cast<std::uint32_t>(into.regions.size()));
    if (fresh) into.regions.push_back(r);
    else regions::keep_throttled(into.regions[it->second], r);
    region_map.push_back(it->second);
  }
  // Call paths: other's parents come before their children, so each maps onto a known parent.
  const std::size_t old_cnodes = into.cnodes.size();
  std::map<std::pair<std::int64_t, std::uint32_t>, std::int64_t> child;
  for (std::size_t i = 0; i < into.cnodes.size(); ++i)
    child.emplace(std::make_pair(into.cnodes[i].parent, into.cnodes[i].region), static_cast<std::int64_t>(i));
  std::vector<std::int64_t> cnode_map;
  for (const auto& c : other.cnodes) {
    if (c.parent < 0) {
      // Its root: the job has one (the program root of rank 0's executable; an MPMD job's other
      // executables hang below it too).
      cnode_map.push_back(0);
      continue;
    }
    const std::int64_t parent = cnode_map[static_cast<std::size_t>(c.parent)];
    const std::uint32_t region = region_map[c.region];
    auto [it, fresh] = child.emplace(std::make_pair(parent, region), static_cast<std::int64_t>(into.cnodes.size()));
    if (fresh) into.cnodes.push_back({region, parent});
    cnode_map.push_back(it->second);
  }
  // The cells, re-laid for the new call paths and the appended locations.
  const std::size_t n = into.cnodes.size(), la = into.locations.size(), lb = other.locations.size(), l = la + lb;
  auto relayout = [&](auto& a, const auto& b) {
    using V = typename std::decay_t<decltype(a)>::value_type;
    std::vector<V> out(n * l, V{});
    for (std::size_t c = 0; c < old_cnodes; ++c)
      for (std::size_t j = 0; j < la; ++j) out[c * l + j] = a[c * la + j];
    for (std::size_t c = 0; c < other.cnodes.size(); ++c)
      for (std::size_t j = 0; j < lb; ++j) out[static_cast<std::size_t>(cnode_map[c]) * l + la + j] = b[c * lb + j];
    a = std::move(out);
  };
  relayout(into.visits, other.visits);
  relayout(into.time_incl, other.time_incl);
  relayout(into.min_time, other.min_time);
  relayout(into.max_time, other.max_time);
  for (auto& m : into.extra_metrics) {
    const cube4::ExtraMetric* theirs = nullptr;
    for (const auto& o : other.extra_metrics)
      if (o.uniq_name == m.uniq_name) theirs = &o;
    const std::vector<std::uint64_t> zeros(other.cnodes.size() * lb, 0);
    relayout(m.values, theirs ? theirs->values : zeros);
  }
  for (const auto& o : other.extra_metrics) {
    bool known = false;
    for (const auto& m : into.extra_metrics) known = known || m.uniq_name == o.uniq_name;
    if (known) continue;
    cube4::ExtraMetric m = o;  // zero in into's cells
    m.values.assign(n * l, 0);
    for (std::size_t c = 0; c < other.cnodes.size(); ++c)
      for (std::size_t j = 0; j < lb; ++j) m.values[static_cast<std::size_t>(cnode_map[c]) * l + la + j] = o.values[c * lb + j];
    into.extra_metrics.push_back(std::move(m));
  }
  // Locations and their groups.
  const auto group_base = static_cast<std::uint32_t>(into.groups.size());
  for (auto g : other.groups) {
    if (g.creator >= 0) g.creator += group_base;
    into.groups.push_back(std::move(g));
  }
  into.location_types.resize(la, "thread");
  for (std::size_t j = 0; j < lb; ++j) {
    into.locations.push_back(other.locations[j]);
    into.location_group.push_back(group_base + other.location_group[j]);
    into.location_types.push_back(j < other.location_types.size() ? other.location_types[j] : "thread");
  }
}

void order_by_node(cube4::Profile& p) {
  if (p.groups.size() < 2) return;
  // The new order of the groups.
  std::vector<std::string> nodes;
  for (const auto& g : p.groups)
    if (std::find(nodes.begin(), nodes.end(), g.node) == nodes.end()) nodes.push_back(g.node);
  std::vector<std::uint32_t> group_order;  // new position -> old group
  for (const auto& n : nodes)
    for (std::uint32_t g = 0; g < p.groups.size(); ++g)
      if (p.groups[g].node == n) group_order.push_back(g);
  bool same = true;
  for (std::uint32_t i = 0; i < group_order.size(); ++i) same = same && group_order[i] == i;
  if (same) return;
  std::vector<std::uint32_t> new_group(p.groups.size());
  for (std::uint32_t i = 0; i < group_order.size(); ++i) new_group[group_order[i]] = i;
  // The new order of the locations: by new group, in their order within it.
  std::vector<std::size_t> loc_order;  // new column -> old column
  for (std::uint32_t g : group_order)
    for (std::size_t l = 0; l < p.locations.size(); ++l)
      if (p.location_group[l] == g) loc_order.push_back(l);
  const std::size_t nl = p.locations.size(), nc = p.cnodes.size();
  auto permute = [&](auto& cells) {
    auto out = cells;
    for (std::size_t c = 0; c < nc; ++c)
      for (std::size_t j = 0; j < nl; ++j) out[c * nl + j] = cells[c * nl + loc_order[j]];
    cells = std::move(out);
  };
  permute(p.visits);
  permute(p.time_incl);
  permute(p.min_time);
  permute(p.max_time);
  for (auto& m : p.extra_metrics) permute(m.values);
  std::vector<std::string> locations, types;
  std::vector<std::uint32_t> location_group;
  for (std::size_t old : loc_order) {
    locations.push_back(p.locations[old]);
    location_group.push_back(new_group[p.location_group[old]]);
    types.push_back(old < p.location_types.size() ? p.location_types[old] : "thread");
  }
  std::vector<cube4::Profile::Group> groups;
  for (std::uint32_t g : group_order) {
    groups.push_back(p.groups[g]);
    if (groups.back().creator >= 0) groups.back().creator = new_group[static_cast<std::size_t>(groups.back().creator)];
  }
  p.locations = std::move(locations);
  p.location_group = std::move(location_group);
  p.location_types = std::move(types);
  p.groups = std::move(groups);
}

bool gather(Mpp* mpp, cube4::Profile* p, std::string* error) {
  if (!mpp) return true;
  const bool ok = unify::tree_reduce(
      mpp, [&] { return encode(*p); },
      [&](const std::vector<char>& b) {
        cube4::Profile other;
        if (!decode(b, &other)) return false;
        merge(*p, other);
        return true;
      },
      "profiles", error);
  if (ok && mpp->rank() == 0) order_by_node(*p);
  return ok;
}

}  // namespace prof::profile_merge
