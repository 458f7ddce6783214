// SPDX-License-Identifier: BSD-3-Clause
// Filter files: the parser and the matcher, shared by the run time (PROF_FILTERING_FILE) and prof-wrap.
//
// Filter file syntax
// ------------------
// A filter file has two kinds of block, each optional and each allowed any number of times:
//
//   PROF_FILE_NAMES_BEGIN            # rules on source file names
//     EXCLUDE */tests/*
//     INCLUDE */tests/keep_me.c
//   PROF_FILE_NAMES_END
//
//   PROF_REGION_NAMES_BEGIN          # rules on region (function) names
//     EXCLUDE *
//     INCLUDE main solve_*
//             step_[0-9]             # patterns continue until the next keyword
//     EXCLUDE MANGLED _ZN3foo*       # matched against the mangled name
//     INCLUDE MANGLED _ZN3foo3barEv
//   PROF_REGION_NAMES_END
//
// Score-P filter files are accepted unchanged: SCOREP_FILE_NAMES_BEGIN/_END and
// SCOREP_REGION_NAMES_BEGIN/_END mean exactly the same as the PROF_ forms. A block is closed by
// the END of its own kind and spelling (PROF_REGION_NAMES_BEGIN needs PROF_REGION_NAMES_END).
//
// Tokens. The file is split into tokens at spaces and tabs; line breaks are ordinary
// whitespace, so a whole filter may sit on one line and a rule's patterns may span lines.
//   - Keywords are case-sensitive: PROF_FILE_NAMES_BEGIN, PROF_FILE_NAMES_END,
//     PROF_REGION_NAMES_BEGIN, PROF_REGION_NAMES_END (and the SCOREP_ forms), EXCLUDE, INCLUDE,
//     MANGLED, DEMANGLED. Any other token inside a rule is a pattern ("exclude" is a pattern).
//   - EXCLUDE or INCLUDE starts a rule; each following pattern, up to the next keyword, is one
//     rule of that kind. A rule needs at least one pattern.
//   - Region blocks only: MANGLED, after EXCLUDE or INCLUDE, makes the patterns that follow in
//     the same rule match the mangled name; DEMANGLED switches back. Every rule starts demangled.
//     Where a region has no mangled name (C), MANGLED patterns match the plain name.
//   - '#' starts a comment that runs to the end of the line, also after tokens. "\#" is a
//     literal '#', and a backslash before a space or tab makes it part of the pattern
//     ("my\ func"). A line that ends in a backslash (line continuation) is an error.
//   - A pattern that must equal a keyword can be written with a bracket, e.g. [E]XCLUDE.
//
// Patterns are shell wildcards with fnmatch(3) semantics and flags 0: '*' matches any string
// (including '/', so "*/tests/*" matches any path containing /tests/), '?' one character,
// "[...]" one character of a set ("[!...]" not in the set), and '\' quotes the next character.
// Patterns are kept as written, backslashes included, and handed to fnmatch as they are.
//
// Evaluation (as Score-P, src/utils/filter/scorep_filter_matching.c):
//   - Every name starts INCLUDED. Rules are tested in file order, across all blocks of the
//     kind: an EXCLUDE rule only while the name is included, an INCLUDE rule only while it is
//     excluded. In effect the LAST matching rule wins; with no matching rule a name is included.
//   - The file rules are evaluated first, on the source file name after simplification
//     ("//", "/./" and "dir/../" removed). A region whose file is excluded is filtered, and the
//     region rules cannot include it again; only a later INCLUDE in a file block can.
//     A region without a known file (empty file name) is decided by the region rules alone.
//   - Otherwise the region rules decide.
//
// Errors are fatal: parse() reports the first one as "<file>:<line>: <found>; expected <what>".
//
// Rules that match nothing (issue 30): the matchers note, per rule, whether its pattern ever
// matched a name they were given, also where the evaluation order skips the rule (an EXCLUDE
// while the name is already excluded), so a rule counts as matched when its pattern fits a name,
// whatever its effect. A pattern without wildcards that equals a demangled name up to its '('
// (a C++ function carries its signature: "ns::Foo::bar(int) const") is a near miss: the first
// such name is kept, and unmatched() suggests a pattern that matches it ("ns::Foo::bar(*)*").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace prof::filter {

/// `literal` as a pattern that matches exactly it: wildcard characters, backslashes, '#',
/// spaces and tabs quoted with a backslash, a keyword's first letter too.
std::string quote_pattern(std::string_view literal);

/// A region prof throttled during a run (PROF_THROTTLE), for throttle_filter_text.
struct ThrottledRegion {
  std::string name;       ///< demangled name
  std::string canonical;  ///< mangled name; equal to name (or "") when there is none
  std::uint64_t visits;   ///< visits of the call path that decided
  std::uint32_t mean_ns;  ///< their mean inclusive time
};
/// prof.throttle.filter: a filter file that EXCLUDEs exactly these regions (by mangled name
/// where they have one), with a comment per region and how to use it.
std::string throttle_filter_text(const std::vector<ThrottledRegion>& regions);

/// Whether a rule matched (see "Rules that match nothing" above). Written by the matchers from
/// any thread (relaxed atomics; the near-miss name is published once, with release), read by
/// unmatched(). Copying copies the state.
class RuleUse {
 public:
  RuleUse() = default;
  RuleUse(const RuleUse& o);
  RuleUse& operator=(const RuleUse& o);

  bool matched() const { return matched_.load(std::memory_order_relaxed); }
  void set_matched() {
    if (!matched()) matched_.store(true, std::memory_order_relaxed);
  }
  /// The first near-miss name, "" if none (yet).
  std::string near_miss() const;
  /// Keeps `name` (with the pattern that matches it) as the near miss unless one is kept already.
  void set_near_miss(std::string name, std::string suggestion);
  std::string suggestion() const;

 private:
  std::atomic<bool> matched_{false};
  std::atomic<int> near_state_{0};  // 0 none, 1 being written, 2 ready
  std::string near_name_, suggestion_;
};

/// One rule: one pattern of an EXCLUDE or INCLUDE keyword.
struct Rule {
  bool exclude;          ///< EXCLUDE (true) or INCLUDE (false)
  bool mangled;          ///< region rules: match the mangled name (always false for file rules)
  std::string pattern;   ///< as written in the file, backslashes kept (fnmatch quoting)
  int line;              ///< 1-based line of the pattern in its file
  std::string file;      ///< the file it came from, as given to parse()
  mutable RuleUse use;   ///< whether it matched a name so far (the const matchers note it)
};

/// A rule whose pattern matched no name the matchers were given: Filter::unmatched().
struct UnmatchedRule {
  std::string file;
  int line = 0;
  bool exclude = false;
  bool mangled = false;
  bool file_rule = false;   ///< a rule on source file names
  std::string pattern;      ///< as written
  std::string near_miss;    ///< a name the pattern equals up to its '(' (a C++ signature), or ""
  std::string suggestion;   ///< a pattern that matches near_miss (quoted), or ""
};

/// `rules` for a message: at most `max_listed` of them as "<file>:<line> EXCLUDE <pattern>", with
/// the suggested pattern where there is one ("(a C++ name carries its signature: use ns::f(*),
/// which matches ns::f(int))"), then "and N more". One line; names longer than 100 characters
/// are cut.
std::string unmatched_text(const std::vector<UnmatchedRule>& rules, std::size_t max_listed = 3);

/// The end-of-run warning (without "prof: warning: ") for the rules of `filtering_file`
/// (PROF_FILTERING_FILE) that matched no function of the run, or "" when every rule matched. ""
/// also when `filtering_file` is one of `compile_time_files` (prof-wrap --instrument-filter, a
/// null-terminated list or null): the GCC plugin applied those rules at compile time, and the
/// functions they excluded never reach the run time.
class Filter;
std::string unmatched_warning(const Filter& f, const std::string& filtering_file,
                              const char* const* compile_time_files);

/// A parsed filter: the file rules and the region rules, each in file order.
/// Parsing is single-threaded; afterwards the const members may be called from any thread at
/// once. The matchers allocate (file name simplification) and are not async-signal-safe: call
/// them once per region, when its definition is created, and cache the answer.
class Filter {
 public:
  /// Parses `text` (from `file`, used in messages) and appends its rules to the ones already
  /// held, so several filter files can be combined. On a syntax error returns false, leaves the
  /// filter unchanged and sets `error` (if not null) to ONE line, without a "prof: error: "
  /// prefix: "<file>:<line>: <what was found>; expected <what>", e.g.
  /// "my.filter:3: 'EXCLUDEX' is not a rule keyword; expected EXCLUDE, INCLUDE or PROF_REGION_NAMES_END".
  bool parse(std::string_view text, std::string_view file, std::string* error);

  /// The most bytes load() reads: a filter file is text of rules (wildcards cover many names).
  static constexpr std::size_t kMaxFileBytes = std::size_t{16} << 20;

  /// Reads the file at `path` and parse()s it. An unreadable file returns false with a one-line
  /// `error` naming it: "<path>: cannot read the filter file (<strerror>); expected a readable file".
  /// Refused the same way, before anything is parsed, and without waiting: anything but a regular
  /// file (a FIFO, /dev/zero, a directory), a file over kMaxFileBytes, and one with a NUL byte
  /// (a binary file).
  bool load(const std::string& path, std::string* error);

  /// True when a region (demangled `name`, `mangled` name or "" if none, source `file` or ""
  /// if unknown) is filtered out: its file is excluded, or the region rules exclude it.
  bool excluded(std::string_view name, std::string_view mangled, std::string_view file) const;

  /// True when the file rules exclude `file` (simplified first). "" is never excluded.
  bool file_excluded(std::string_view file) const;

  /// True when the region rules exclude the region (file rules not consulted).
  bool region_excluded(std::string_view name, std::string_view mangled) const;

  /// Compile-time variant (Score-P's scorep_filter_include_function): true when the region is
  /// not excluded (file or region rules) AND it matched an INCLUDE rule whose pattern is not the
  /// bare "*" with no matching EXCLUDE rule after it. prof-wrap uses it to instrument functions
  /// it would skip by default, such as inline ones; "INCLUDE *" cannot force that.
  bool explicitly_included(std::string_view name, std::string_view mangled,
                           std::string_view file) const;

  /// The rules of `file` (of every file when empty) whose pattern matched no name that
  /// excluded(), file_excluded(), region_excluded() or explicitly_included() were given, in file
  /// order, each file:line:pattern once (a file loaded twice). The catch-all "*" is never listed.
  /// Any thread; allocates.
  std::vector<UnmatchedRule> unmatched(std::string_view file = {}) const;

  /// True when no rule was parsed (every region is included).
  bool empty() const;
  /// Number of rules (one per pattern), file and region rules together.
  std::size_t rule_count() const;

  const std::vector<Rule>& file_rules() const { return file_rules_; }
  const std::vector<Rule>& region_rules() const { return region_rules_; }

  /// `path` with "//", "/./" and "dir/../" removed (a leading "./" too), as matched by the file rules.
  static std::string simplify_path(std::string_view path);

 private:
  std::vector<Rule> file_rules_;
  std::vector<Rule> region_rules_;
};

}  // namespace prof::filter
