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
#pragma once

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

/// One rule: one pattern of an EXCLUDE or INCLUDE keyword.
struct Rule {
  bool exclude;          ///< EXCLUDE (true) or INCLUDE (false)
  bool mangled;          ///< region rules: match the mangled name (always false for file rules)
  std::string pattern;   ///< as written in the file, backslashes kept (fnmatch quoting)
  int line;              ///< 1-based line of the pattern in its file
};

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
