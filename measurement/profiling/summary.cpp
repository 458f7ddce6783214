// SPDX-License-Identifier: BSD-3-Clause
#include "measurement/profiling/summary.hpp"

#include <algorithm>
#include <cstdio>

namespace prof::summary {

std::vector<double> exclusive_time(const Input& in) {
  const auto& cn = *in.cnodes;
  const std::size_t nl = in.locations;
  std::vector<double> excl(*in.time_incl);
  for (std::size_t c = 0; c < cn.size(); ++c) {
    if (cn[c].parent < 0) continue;
    const auto p = static_cast<std::size_t>(cn[c].parent);
    for (std::size_t l = 0; l < nl; ++l) excl[p * nl + l] -= (*in.time_incl)[c * nl + l];
  }
  return excl;
}

std::vector<RegionTotals> by_region(const Input& in) {
  const auto& cn = *in.cnodes;
  const std::size_t nl = in.locations;
  const std::vector<double> excl = exclusive_time(in);
  std::vector<RegionTotals> t(in.regions);
  constexpr char kOccurs = 1, kHasVisit = 2;  // the region is in the tree; min/max set
  std::vector<char> seen(in.regions, 0);
  for (std::size_t r = 0; r < in.regions; ++r) t[r].region = static_cast<std::uint32_t>(r);
  // A cnode is outermost for its region when no ancestor has the same region: only those add
  // inclusive time. The walk up is bounded by the depth of the tree.
  for (std::size_t c = 0; c < cn.size(); ++c) {
    const std::uint32_t r = cn[c].region;
    if (r >= in.regions) continue;
    RegionTotals& rt = t[r];
    bool outermost = true;
    for (std::int64_t a = cn[c].parent; a >= 0; a = cn[static_cast<std::size_t>(a)].parent)
      if (cn[static_cast<std::size_t>(a)].region == r) {
        outermost = false;
        break;
      }
    for (std::size_t l = 0; l < nl; ++l) {
      const std::size_t i = c * nl + l;
      const double v = (*in.visits)[i];
      rt.visits += v;
      rt.excl += excl[i];
      if (outermost) rt.incl += (*in.time_incl)[i];
      if (v > 0 && in.min_time && in.max_time) {
        const double mn = (*in.min_time)[i], mx = (*in.max_time)[i];
        const bool first = !(seen[r] & kHasVisit);
        if (first || mn < rt.min) rt.min = mn;
        if (first || mx > rt.max) rt.max = mx;
        seen[r] |= kHasVisit;
      }
    }
    seen[r] |= kOccurs;
  }
  std::vector<RegionTotals> out;
  for (std::size_t r = 0; r < in.regions; ++r)
    if (seen[r]) out.push_back(t[r]);
  return out;
}

std::string table(const std::vector<RegionTotals>& totals, const std::vector<std::string>& names, std::size_t top,
                  std::size_t locations) {
  std::vector<RegionTotals> rows(totals);
  std::stable_sort(rows.begin(), rows.end(), [](const RegionTotals& a, const RegionTotals& b) { return a.excl > b.excl; });
  double all = 0;
  for (const RegionTotals& r : rows) all += r.excl;
  char line[512];
  std::string out;
  std::snprintf(line, sizeof line,
                "prof: summary: %.6f s in %zu regions on %zu location%s (exclusive time, summed over threads); top %zu:\n", all,
                rows.size(), locations, locations == 1 ? "" : "s", std::min(top, rows.size()));
  out += line;
  std::snprintf(line, sizeof line, "prof: %7s %12s %12s %12s %15s %12s %12s  %s\n", "excl%", "excl [s]", "incl [s]", "visits",
                "excl/visit [us]", "min [us]", "max [us]", "region");
  out += line;
  for (std::size_t i = 0; i < rows.size() && i < top; ++i) {
    const RegionTotals& r = rows[i];
    const double pct = all > 0 ? 100.0 * r.excl / all : 0.0;
    char per[32];
    if (r.visits > 0) std::snprintf(per, sizeof per, "%.3f", 1e6 * r.excl / r.visits);
    else std::snprintf(per, sizeof per, "-");
    std::snprintf(line, sizeof line, "prof: %6.2f%% %12.6f %12.6f %12.0f %15s %12.3f %12.3f  %s\n", pct, r.excl, r.incl,
                  r.visits, per, 1e6 * r.min, 1e6 * r.max, r.region < names.size() ? names[r.region].c_str() : "?");
    out += line;
  }
  return out;
}

}  // namespace prof::summary
