// SPDX-License-Identifier: BSD-3-Clause
// prof-report --diff: two experiments side by side, as sections of rows (run figures, regions,
// GPU activities; later steps and findings), each row judged against a noise rule
// (docs/REPORT.md, "Comparing two runs"). No I/O here: prof_report.cpp reads the experiments.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace prof::report {

/// One row of prof-report's region table (a region's CPU executions, or its executions on GPU
/// streams), as the diff compares it. Times in seconds, summed over the locations.
struct RegionFigures {
  std::string name, paradigm, group, file;
  bool gpu = false;                    // executions on GPU streams (a GPU activity)
  std::string kind;                    // GPU rows: "kernel", "copy" or "memset"
  double visits = 0, excl = 0, incl = 0;
  double min = 0, mean = 0, max = 0;   // exclusive time per location that ran it
  unsigned locations = 0;
  double min_one = 0, max_one = 0;     // GPU rows: one execution's min and max
};

/// What the diff needs of one experiment (prof_report.cpp fills it from its Report).
struct Experiment {
  std::string dir;
  std::vector<std::string> command;    // program (base name) and arguments; empty when unknown
  std::string date;                    // "" when unknown (no trace)
  bool trace = false;
  double duration_s = 0;               // trace only
  double total_time_s = 0;             // sum over all locations (profile)
  double gpu_time_s = 0;
  double processes = 0, threads = 0, gpu_streams = 0, trace_events = 0, buffer_flushes = 0, lost_events = 0;
  int exit_status = 0;
  std::map<std::string, std::string> config;  // prof.cfg
  std::vector<RegionFigures> regions;
};

struct DiffOptions {
  double threshold_percent = 10;   // --threshold: smallest relative change that counts
  double floor_percent = 1;        // of A's section total (total time, GPU time)
  double floor_min_s = 1e-3;       // and never less than this
  unsigned top = 20;               // --top: rows per section in the text
  bool fail_on_regression = false;
};

enum class Verdict { Regression, Improvement, New, Gone, Unchanged, Changed, Same };
const char* verdict_name(Verdict v);

/// A known spread of one run's figure: over the locations that ran a region (min/mean/max).
struct Spread {
  bool known = false;  // two or more locations
  double min = 0, mean = 0, max = 0;
  unsigned n = 0;
};

/// A further figure shown beside the judged one (inclusive time, visits, time per visit, ...).
struct Figure {
  std::string name;  // JSON key, e.g. "visits", "inclusive_s"
  double a = 0, b = 0;
};

struct DiffRow {
  std::string key;     // what is compared: a region's name, "total time", ...
  std::string label;   // its group and paradigm, or a GPU activity's kind; "" when none
  std::string unit = "s";  // of a and b: "s" (judged), or "" for a count (only Same or Changed)
  bool in_a = true, in_b = true;
  double a = 0, b = 0; // the judged figure (the section's unit)
  Spread spread_a, spread_b;
  Verdict verdict = Verdict::Unchanged;
  std::string reason;  // why it is (not) a regression, in words
  std::vector<Figure> figures;

  double change() const { return b - a; }
  /// Relative change in percent; 0 when a is 0.
  double change_percent() const { return a != 0 ? 100 * (b - a) / a : 0; }
};

/// A table of the diff: "run", "regions", "gpu" (later "steps", "findings").
struct DiffSection {
  std::string name, title;
  std::string figure;  // what a and b are, e.g. "exclusive time"
  double floor_s = 0;  // the absolute floor used for this section
  std::vector<DiffRow> rows;  // regressions (most time lost first), improvements, new, gone, unchanged
};

struct Diff {
  Experiment a, b;
  DiffOptions options;
  std::vector<std::string> differences;  // program, arguments, configuration, layout; empty: same
  std::vector<DiffSection> sections;
  unsigned count(Verdict v) const;
};

/// Compares two experiments: the run figures, the regions by name and paradigm (not by id: ids
/// differ between runs), the GPU activities by name and kind (a section only where either run
/// has GPU activities).
Diff diff(const Experiment& a, const Experiment& b, const DiffOptions& o);

/// One row's verdict by the noise rule (docs/REPORT.md): a regression or an improvement only
/// when |b - a| is more than threshold_percent of a, more than floor_s, and (where a spread is
/// known) b's mean lies outside a's min..max and a's mean outside b's.
Verdict judge(double a, double b, const Spread& sa, const Spread& sb, double threshold_percent, double floor_s,
              std::string* reason);

std::string diff_text(const Diff& d);
std::string diff_json(const Diff& d);
/// A self-contained page (no script, no network): the tables, regressions red, improvements green.
std::string diff_html(const Diff& d);

}  // namespace prof::report
