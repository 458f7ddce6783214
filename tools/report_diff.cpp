// SPDX-License-Identifier: BSD-3-Clause
// prof-report --diff: compares two experiments' figures section by section, judges each change
// by the noise rule of docs/REPORT.md and writes the result as text, JSON or one HTML page.
#include "tools/report_diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "tools/json_text.hpp"

namespace prof::report {
namespace {

using prof::json::json_number;
using prof::json::json_string;

std::string seconds_text(double s) {
  char buf[32];
  const double a = std::fabs(s);
  if (a >= 1) std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (a >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  return buf;
}

std::string signed_seconds(double s) { return (s >= 0 ? "+" : "") + seconds_text(s); }

std::string number_text(double v) {
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string value_text(const DiffRow& r, double v) { return r.unit == "s" ? seconds_text(v) : number_text(v); }

std::string percent_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", p);
  return buf;
}

std::string joined(const std::vector<std::string>& words, std::size_t from = 0) {
  std::string s;
  for (std::size_t i = from; i < words.size(); ++i) s += (i > from ? " " : "") + words[i];
  return s;
}

Spread spread_of(const RegionFigures& r) {
  Spread s;
  s.known = r.locations >= 2;
  s.min = r.min;
  s.mean = r.mean;
  s.max = r.max;
  s.n = r.locations;
  return s;
}

// Rows judged or new/gone first, most time at stake first; unchanged rows after, largest first.
void order_rows(std::vector<DiffRow>& rows) {
  auto rank = [](Verdict v) { return static_cast<int>(v); };  // Regression, Improvement, New, Gone, Unchanged, ...
  auto weight = [](const DiffRow& r) {
    switch (r.verdict) {
      case Verdict::Regression: return r.b - r.a;
      case Verdict::Improvement: return r.a - r.b;
      case Verdict::New: return r.b;
      case Verdict::Gone: return r.a;
      default: return std::max(r.a, r.b);
    }
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const DiffRow& x, const DiffRow& y) {
    if (rank(x.verdict) != rank(y.verdict)) return rank(x.verdict) < rank(y.verdict);
    return weight(x) > weight(y);
  });
}

DiffRow time_row(const std::string& key, double a, double b, double floor_s, const DiffOptions& o) {
  DiffRow r;
  r.key = key;
  r.a = a;
  r.b = b;
  r.verdict = judge(a, b, r.spread_a, r.spread_b, o.threshold_percent, floor_s, &r.reason);
  return r;
}

DiffRow count_row(const std::string& key, double a, double b) {
  DiffRow r;
  r.key = key;
  r.unit = "";
  r.a = a;
  r.b = b;
  r.verdict = a == b ? Verdict::Same : Verdict::Changed;
  return r;
}

// The key a region is matched by: its name and paradigm; the file too where one experiment has
// two regions of that name and paradigm (static functions of different files).
std::vector<std::string> region_keys(const std::vector<const RegionFigures*>& rows) {
  std::map<std::string, int> seen;
  for (const RegionFigures* r : rows) ++seen[r->paradigm + '\x1f' + r->name];
  std::vector<std::string> keys;
  for (const RegionFigures* r : rows) {
    std::string k = r->paradigm + '\x1f' + r->name;
    if (seen[k] > 1) k += '\x1f' + r->file;
    keys.push_back(k);
  }
  return keys;
}

// One section of region rows (CPU or GPU) of both experiments, matched by key.
DiffSection region_section(const Experiment& a, const Experiment& b, bool gpu, const DiffOptions& o) {
  DiffSection s;
  s.name = gpu ? "gpu" : "regions";
  s.title = gpu ? "GPU activities" : "Regions";
  s.figure = gpu ? "time on the GPU streams" : "exclusive time";
  const double base = gpu ? (a.gpu_time_s > 0 ? a.gpu_time_s : b.gpu_time_s) : (a.total_time_s > 0 ? a.total_time_s : b.total_time_s);
  s.floor_s = std::max(o.floor_min_s, o.floor_percent / 100 * base);
  std::vector<const RegionFigures*> ra, rb;
  for (const RegionFigures& r : a.regions)
    if (r.gpu == gpu) ra.push_back(&r);
  for (const RegionFigures& r : b.regions)
    if (r.gpu == gpu) rb.push_back(&r);
  const std::vector<std::string> ka = region_keys(ra), kb = region_keys(rb);
  std::map<std::string, std::pair<const RegionFigures*, const RegionFigures*>> both;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    if (!both.count(ka[i])) order.push_back(ka[i]);
    both[ka[i]].first = ra[i];
  }
  for (std::size_t i = 0; i < rb.size(); ++i) {
    if (!both.count(kb[i])) order.push_back(kb[i]);
    both[kb[i]].second = rb[i];
  }
  for (const std::string& k : order) {
    const RegionFigures* x = both[k].first;
    const RegionFigures* y = both[k].second;
    const RegionFigures& any = y ? *y : *x;
    DiffRow r;
    r.key = any.name;
    if (k.size() > any.paradigm.size() + 1 + any.name.size()) r.key += " (" + any.file + ")";
    r.label = gpu ? any.kind : any.group + " " + any.paradigm;
    r.in_a = x != nullptr;
    r.in_b = y != nullptr;
    r.a = x ? x->excl : 0;
    r.b = y ? y->excl : 0;
    if (x) r.spread_a = spread_of(*x);
    if (y) r.spread_b = spread_of(*y);
    const auto fig = [&](const char* name, double (*get)(const RegionFigures&)) {
      r.figures.push_back(Figure{name, x ? get(*x) : 0, y ? get(*y) : 0});
    };
    if (gpu) {
      fig("calls", [](const RegionFigures& f) { return f.visits; });
      fig("avg_s", [](const RegionFigures& f) { return f.visits > 0 ? f.excl / f.visits : 0; });
      fig("min_s", [](const RegionFigures& f) { return f.min_one; });
      fig("max_s", [](const RegionFigures& f) { return f.max_one; });
    } else {
      fig("inclusive_s", [](const RegionFigures& f) { return f.incl; });
      fig("visits", [](const RegionFigures& f) { return f.visits; });
      fig("per_visit_s", [](const RegionFigures& f) { return f.visits > 0 ? f.excl / f.visits : 0; });
    }
    fig("locations", [](const RegionFigures& f) { return static_cast<double>(f.locations); });
    if (!x) {
      r.verdict = Verdict::New;
      r.reason = "only in B";
    } else if (!y) {
      r.verdict = Verdict::Gone;
      r.reason = "only in A";
    } else {
      r.verdict = judge(r.a, r.b, r.spread_a, r.spread_b, o.threshold_percent, s.floor_s, &r.reason);
      if (r.verdict == Verdict::Regression || r.verdict == Verdict::Improvement) {
        const double va = r.figures[gpu ? 0 : 1].a, vb = r.figures[gpu ? 0 : 1].b;
        if (va != vb) r.reason += "; " + std::string(gpu ? "calls " : "visits ") + number_text(va) + " -> " + number_text(vb);
      }
    }
    s.rows.push_back(std::move(r));
  }
  order_rows(s.rows);
  return s;
}

std::string command_text(const Experiment& e) { return e.command.empty() ? "(program unknown)" : joined(e.command); }

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Regression: return "regression";
    case Verdict::Improvement: return "improvement";
    case Verdict::New: return "new";
    case Verdict::Gone: return "gone";
    case Verdict::Unchanged: return "unchanged";
    case Verdict::Changed: return "changed";
    case Verdict::Same: return "same";
  }
  return "?";
}

unsigned Diff::count(Verdict v) const {
  unsigned n = 0;
  for (const DiffSection& s : sections)
    for (const DiffRow& r : s.rows) n += r.verdict == v;
  return n;
}

Verdict judge(double a, double b, const Spread& sa, const Spread& sb, double threshold_percent, double floor_s,
              std::string* reason) {
  const double d = b - a;
  char buf[256];
  if (std::fabs(d) <= threshold_percent / 100 * std::fabs(a)) {
    std::snprintf(buf, sizeof buf, "within %g%%", threshold_percent);
    *reason = buf;
    return Verdict::Unchanged;
  }
  if (std::fabs(d) <= floor_s) {
    *reason = "change below the floor of " + seconds_text(floor_s);
    return Verdict::Unchanged;
  }
  // The spread over the locations: a change that the locations of one run already show among
  // themselves is not taken as a change between the runs.
  const auto range = [](const Spread& s) {
    return seconds_text(s.min) + ".." + seconds_text(s.max) + " over " + std::to_string(s.n) + " locations";
  };
  const bool up = d > 0;
  if (sa.known && (up ? sb.mean <= sa.max : sb.mean >= sa.min)) {
    *reason = "B's mean per location " + seconds_text(sb.mean) + " inside A's spread " + range(sa);
    return Verdict::Unchanged;
  }
  if (sb.known && (up ? sa.mean >= sb.min : sa.mean <= sb.max)) {
    *reason = "A's mean per location " + seconds_text(sa.mean) + " inside B's spread " + range(sb);
    return Verdict::Unchanged;
  }
  std::snprintf(buf, sizeof buf, "%s (%s): more than %g%% and %s", percent_text(a != 0 ? 100 * d / a : 0).c_str(),
                signed_seconds(d).c_str(), threshold_percent, seconds_text(floor_s).c_str());
  *reason = buf;
  if (sa.known || sb.known) *reason += ", outside the per-location spread";
  return up ? Verdict::Regression : Verdict::Improvement;
}

Diff diff(const Experiment& a, const Experiment& b, const DiffOptions& o) {
  Diff d;
  d.a = a;
  d.b = b;
  d.options = o;
  // What makes the two runs different experiments (said in one line; the diff is made anyway).
  const std::string pa = a.command.empty() ? "" : a.command[0], pb = b.command.empty() ? "" : b.command[0];
  if (pa != pb) d.differences.push_back("program " + (pa.empty() ? "(unknown)" : pa) + " vs " + (pb.empty() ? "(unknown)" : pb));
  else if (joined(a.command, 1) != joined(b.command, 1))
    d.differences.push_back("arguments '" + joined(a.command, 1) + "' vs '" + joined(b.command, 1) + "'");
  std::set<std::string> keys;
  for (const auto& kv : a.config) keys.insert(kv.first);
  for (const auto& kv : b.config) keys.insert(kv.first);
  for (const std::string& k : keys) {
    if (k == "PROF_EXPERIMENT_DIRECTORY") continue;
    const auto x = a.config.find(k), y = b.config.find(k);
    const std::string va = x == a.config.end() ? "(unset)" : x->second, vb = y == b.config.end() ? "(unset)" : y->second;
    if (va != vb) d.differences.push_back(k + "=" + va + " vs " + vb);
  }
  if (a.processes != b.processes || a.threads != b.threads || a.gpu_streams != b.gpu_streams)
    d.differences.push_back("processes/threads/GPU streams " + number_text(a.processes) + "/" + number_text(a.threads) + "/" +
                            number_text(a.gpu_streams) + " vs " + number_text(b.processes) + "/" + number_text(b.threads) + "/" +
                            number_text(b.gpu_streams));

  DiffSection run;
  run.name = "run";
  run.title = "Run";
  run.figure = "run-level figures";
  run.floor_s = o.floor_min_s;
  run.rows.push_back(time_row("total time", a.total_time_s, b.total_time_s, run.floor_s, o));
  run.rows.back().label = "sum over all locations";
  if (a.trace && b.trace) {
    run.rows.push_back(time_row("duration", a.duration_s, b.duration_s, run.floor_s, o));
    run.rows.back().label = "wall clock (trace)";
  }
  if (a.gpu_time_s > 0 || b.gpu_time_s > 0) {
    run.rows.push_back(time_row("GPU time", a.gpu_time_s, b.gpu_time_s, run.floor_s, o));
    run.rows.back().label = "sum over the GPU streams";
  }
  run.rows.push_back(count_row("processes", a.processes, b.processes));
  run.rows.push_back(count_row("threads", a.threads, b.threads));
  run.rows.push_back(count_row("GPU streams", a.gpu_streams, b.gpu_streams));
  if (a.trace && b.trace) run.rows.push_back(count_row("trace events", a.trace_events, b.trace_events));
  run.rows.push_back(count_row("buffer flushes", a.buffer_flushes, b.buffer_flushes));
  run.rows.push_back(count_row("lost events", a.lost_events, b.lost_events));
  run.rows.push_back(count_row("exit status", a.exit_status, b.exit_status));
  d.sections.push_back(std::move(run));
  d.sections.push_back(region_section(a, b, false, o));
  bool gpu = false;
  for (const Experiment* e : {&a, &b})
    for (const RegionFigures& r : e->regions) gpu |= r.gpu;
  if (gpu) d.sections.push_back(region_section(a, b, true, o));
  return d;
}

// ---- Text
std::string diff_text(const Diff& d) {
  std::ostringstream t;
  char line[1024];
  t << "prof-report --diff: A = " << d.a.dir << ", B = " << d.b.dir << "\n";
  for (const Experiment* e : {&d.a, &d.b})
    t << (e == &d.a ? "A: " : "B: ") << command_text(*e) << (e->date.empty() ? "" : ", " + e->date) << "\n";
  if (d.differences.empty()) {
    t << "A and B ran the same program with the same arguments and configuration\n";
  } else {
    t << "A and B differ: ";
    for (std::size_t i = 0; i < d.differences.size(); ++i) t << (i ? "; " : "") << d.differences[i];
    t << "\n";
  }
  std::snprintf(line, sizeof line,
                "rule: a regression (or improvement) changes by more than %g%% and more than the floor (%g%% of A's "
                "total, at least %s), outside the per-location min..max of either run\n",
                d.options.threshold_percent, d.options.floor_percent, seconds_text(d.options.floor_min_s).c_str());
  t << line;
  t << "result: " << d.count(Verdict::Regression) << " regression" << (d.count(Verdict::Regression) == 1 ? "" : "s") << ", "
    << d.count(Verdict::Improvement) << " improvement" << (d.count(Verdict::Improvement) == 1 ? "" : "s") << ", "
    << d.count(Verdict::New) << " new, " << d.count(Verdict::Gone) << " gone\n";
  for (const DiffSection& s : d.sections) {
    if (s.name == "run") {
      t << "\nRun:\n";
      std::snprintf(line, sizeof line, "  %-16s %14s %14s %14s %8s  %s\n", "figure", "A", "B", "change", "change%", "verdict");
      t << line;
      for (const DiffRow& r : s.rows) {
        const bool timed = r.unit == "s";
        std::snprintf(line, sizeof line, "  %-16s %14s %14s %14s %8s  %s\n", r.key.c_str(), value_text(r, r.a).c_str(),
                      value_text(r, r.b).c_str(),
                      timed ? signed_seconds(r.change()).c_str() : ((r.change() >= 0 ? "+" : "") + number_text(r.change())).c_str(),
                      timed && r.a != 0 ? percent_text(r.change_percent()).c_str() : "", verdict_name(r.verdict));
        t << line;
      }
      continue;
    }
    t << "\n" << s.title << " (" << s.figure << "; floor " << seconds_text(s.floor_s) << "), regressions first:\n";
    const bool gpu = s.name == "gpu";
    std::snprintf(line, sizeof line, "  %-11s %13s %8s %12s %12s %23s  %s\n", "verdict", "change", "change%", "A", "B",
                  gpu ? "calls A -> B" : "visits A -> B", gpu ? "activity" : "region");
    t << line;
    const std::size_t shown = std::max<std::size_t>(d.options.top, d.count(Verdict::Regression));
    std::size_t n = 0;
    for (const DiffRow& r : s.rows) {
      if (n++ >= shown) break;
      const Figure* calls = nullptr;
      for (const Figure& f : r.figures)
        if (f.name == (gpu ? "calls" : "visits")) calls = &f;
      std::string visits;
      if (calls) visits = (r.in_a ? number_text(calls->a) : "-") + " -> " + (r.in_b ? number_text(calls->b) : "-");
      std::snprintf(line, sizeof line, "  %-11s %13s %8s %12s %12s %23s  %s", verdict_name(r.verdict),
                    signed_seconds(r.change()).c_str(), r.in_a && r.in_b && r.a != 0 ? percent_text(r.change_percent()).c_str() : "",
                    r.in_a ? seconds_text(r.a).c_str() : "-", r.in_b ? seconds_text(r.b).c_str() : "-", visits.c_str(),
                    r.key.c_str());
      t << line << " [" << r.label << "]";
      // Say why a large change is not judged one.
      if (r.verdict == Verdict::Unchanged && std::fabs(r.change_percent()) > d.options.threshold_percent) t << " (" << r.reason << ")";
      t << "\n";
    }
    if (s.rows.size() > shown) t << "  ... " << s.rows.size() - shown << " more rows unchanged or smaller (--top N shows more)\n";
  }
  return t.str();
}

// ---- JSON
namespace {

std::string experiment_json(const Experiment& e) {
  std::string j = "{\"experiment\": " + json_string(e.dir) + ", \"program\": " + json_string(e.command.empty() ? "" : e.command[0]) +
                  ", \"args\": [";
  for (std::size_t i = 1; i < e.command.size(); ++i) j += (i > 1 ? ", " : "") + json_string(e.command[i]);
  j += "], \"date\": " + json_string(e.date) + ", \"trace\": " + (e.trace ? "true" : "false") + "}";
  return j;
}

std::string spread_json(const Spread& s) {
  if (!s.known) return "null";
  return "{\"min_s\": " + json_number(s.min) + ", \"mean_s\": " + json_number(s.mean) + ", \"max_s\": " + json_number(s.max) +
         ", \"locations\": " + std::to_string(s.n) + "}";
}

}  // namespace

std::string diff_json(const Diff& d) {
  std::string j = "{\n\"format\": \"prof-report-diff\", \"diff_version\": 1,\n\"a\": " + experiment_json(d.a) +
                  ",\n\"b\": " + experiment_json(d.b) + ",\n\"same\": " + (d.differences.empty() ? "true" : "false") +
                  ", \"differences\": [";
  for (std::size_t i = 0; i < d.differences.size(); ++i) j += (i ? ", " : "") + json_string(d.differences[i]);
  j += "],\n\"rule\": {\"threshold_percent\": " + json_number(d.options.threshold_percent) + ", \"floor_percent\": " +
       json_number(d.options.floor_percent) + ", \"floor_min_s\": " + json_number(d.options.floor_min_s) +
       ", \"spread\": \"per-location min..max\"}";
  j += ",\n\"regressions\": " + std::to_string(d.count(Verdict::Regression)) + ", \"improvements\": " +
       std::to_string(d.count(Verdict::Improvement)) + ", \"new\": " + std::to_string(d.count(Verdict::New)) +
       ", \"gone\": " + std::to_string(d.count(Verdict::Gone));
  j += ",\n\"sections\": [";
  for (std::size_t si = 0; si < d.sections.size(); ++si) {
    const DiffSection& s = d.sections[si];
    j += std::string(si ? ",\n" : "\n") + "{\"name\": " + json_string(s.name) + ", \"title\": " + json_string(s.title) +
         ", \"figure\": " + json_string(s.figure) + ", \"floor_s\": " + json_number(s.floor_s) + ", \"rows\": [";
    for (std::size_t i = 0; i < s.rows.size(); ++i) {
      const DiffRow& r = s.rows[i];
      j += std::string(i ? ",\n " : "\n ") + "{\"key\": " + json_string(r.key) + ", \"label\": " + json_string(r.label) +
           ", \"unit\": " + json_string(r.unit) + ", \"a\": " + (r.in_a ? json_number(r.a) : "null") + ", \"b\": " +
           (r.in_b ? json_number(r.b) : "null") + ", \"change\": " + json_number(r.change()) + ", \"change_percent\": " +
           (r.in_a && r.in_b && r.a != 0 ? json_number(r.change_percent()) : "null") + ", \"verdict\": \"" +
           verdict_name(r.verdict) + "\", \"reason\": " + json_string(r.reason) + ", \"spread_a\": " + spread_json(r.spread_a) +
           ", \"spread_b\": " + spread_json(r.spread_b);
      if (!r.figures.empty()) {
        j += ", \"figures\": {";
        for (std::size_t f = 0; f < r.figures.size(); ++f)
          j += (f ? ", " : "") + json_string(r.figures[f].name) + ": [" + (r.in_a ? json_number(r.figures[f].a) : "null") + ", " +
               (r.in_b ? json_number(r.figures[f].b) : "null") + "]";
        j += "}";
      }
      j += "}";
    }
    j += "]}";
  }
  j += "]\n}\n";
  return j;
}

// ---- HTML
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&') o += "&amp;";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

const char kStyle[] =
    "body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }\n"
    "header { background: #263238; color: #fff; padding: 10px 20px; }\n"
    "header h1 { margin: 0; font-size: 20px; }\n"
    "section { background: #fff; margin: 14px 20px; padding: 10px 16px; border: 1px solid #ddd; border-radius: 4px; overflow-x: auto; }\n"
    "h2 { font-size: 17px; margin: 4px 0 10px; }\n"
    "table { border-collapse: collapse; font-size: 13px; }\n"
    "th, td { padding: 3px 8px; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }\n"
    "th { background: #eceff1; }\n"
    "td.name, th.name { text-align: left; max-width: 620px; overflow: hidden; text-overflow: ellipsis; }\n"
    "td.why, th.why { text-align: left; white-space: normal; min-width: 320px; }\n"
    ".kv td { text-align: left; }\n"
    ".muted { color: #777; }\n"
    "tr.regression td { background: #ffebee; color: #b71c1c; }\n"
    "tr.improvement td { background: #e8f5e9; color: #1b5e20; }\n"
    "tr.new td, tr.gone td, tr.changed td { background: #fff8e1; }\n";

}  // namespace

std::string diff_html(const Diff& d) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<!-- prof-report --diff: a self-contained page (no script, no network). -->\n<html lang=\"en\">\n"
       "<head>\n<meta charset=\"utf-8\">\n<title>prof diff: "
    << esc(d.a.dir) << " vs " << esc(d.b.dir) << "</title>\n<style>\n"
    << kStyle << "</style>\n</head>\n<body>\n<header><h1>prof diff: A " << esc(d.a.dir) << ", B " << esc(d.b.dir)
    << "</h1></header>\n";
  h << "<section id=\"summary\"><h2>A and B</h2><table class=\"kv\">\n";
  for (const Experiment* e : {&d.a, &d.b})
    h << "<tr><td>" << (e == &d.a ? "A" : "B") << "</td><td>" << esc(e->dir) << "</td><td>" << esc(command_text(*e)) << "</td><td>"
      << esc(e->date) << "</td></tr>\n";
  h << "</table>\n<p id=\"same\">";
  if (d.differences.empty()) {
    h << "A and B ran the same program with the same arguments and configuration.";
  } else {
    h << "A and B differ: ";
    for (std::size_t i = 0; i < d.differences.size(); ++i) h << (i ? "; " : "") << esc(d.differences[i]);
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "</p>\n<p id=\"result\"><b>%u regression%s, %u improvement%s, %u new, %u gone.</b> "
                "<span class=\"muted\">A regression (or improvement) changes by more than %g%% and more than the floor (%g%% "
                "of A's total, at least %s), outside the per-location min..max of either run.</span></p></section>\n",
                d.count(Verdict::Regression), d.count(Verdict::Regression) == 1 ? "" : "s", d.count(Verdict::Improvement),
                d.count(Verdict::Improvement) == 1 ? "" : "s", d.count(Verdict::New), d.count(Verdict::Gone),
                d.options.threshold_percent, d.options.floor_percent, seconds_text(d.options.floor_min_s).c_str());
  h << buf;
  for (const DiffSection& s : d.sections) {
    h << "<section id=\"" << esc(s.name) << "\"><h2>" << esc(s.title) << "</h2><p class=\"muted\">" << esc(s.figure);
    if (s.name != "run") h << "; floor " << esc(seconds_text(s.floor_s)) << "; regressions first";
    h << "</p>\n<table id=\"" << esc(s.name) << "-table\"><tr><th class=\"name\">" << (s.name == "run" ? "figure" : "name")
      << "</th><th>verdict</th><th>change</th><th>change%</th><th>A</th><th>B</th>";
    const std::vector<Figure>* figs = s.rows.empty() ? nullptr : &s.rows.front().figures;
    if (figs)
      for (const Figure& f : *figs) h << "<th>" << esc(f.name) << " A</th><th>" << esc(f.name) << " B</th>";
    h << "<th class=\"why\">why</th></tr>\n";
    for (const DiffRow& r : s.rows) {
      const bool timed = r.unit == "s";
      h << "<tr class=\"" << verdict_name(r.verdict) << "\" data-key=\"" << esc(r.key) << "\" data-change=\""
        << json_number(r.change()) << "\"><td class=\"name\">" << esc(r.key)
        << (r.label.empty() ? "" : " <span class=\"muted\">" + esc(r.label) + "</span>") << "</td><td>" << verdict_name(r.verdict)
        << "</td><td>"
        << esc(timed ? signed_seconds(r.change()) : number_text(r.change())) << "</td><td>"
        << (timed && r.in_a && r.in_b && r.a != 0 ? percent_text(r.change_percent()) : "") << "</td><td>"
        << (r.in_a ? esc(value_text(r, r.a)) : "-") << "</td><td>" << (r.in_b ? esc(value_text(r, r.b)) : "-") << "</td>";
      for (const Figure& f : r.figures) {
        const bool secs = f.name.size() > 2 && f.name.compare(f.name.size() - 2, 2, "_s") == 0;
        h << "<td>" << (r.in_a ? esc(secs ? seconds_text(f.a) : number_text(f.a)) : "-") << "</td><td>"
          << (r.in_b ? esc(secs ? seconds_text(f.b) : number_text(f.b)) : "-") << "</td>";
      }
      h << "<td class=\"why\">" << esc(r.reason) << "</td></tr>\n";
    }
    h << "</table></section>\n";
  }
  h << "</body>\n</html>\n";
  return h.str();
}

}  // namespace prof::report
