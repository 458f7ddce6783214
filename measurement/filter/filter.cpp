// SPDX-License-Identifier: BSD-3-Clause
// Filter files: tokenizer, parser state machine and the Score-P evaluation order (see filter.hpp).
#include "measurement/filter/filter.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <utility>

#include "measurement/one_line.hpp"

namespace prof::filter {

namespace {

enum class Block { None, Files, Regions };

/// A block keyword: PROF_|SCOREP_ + FILE|REGION + _NAMES_ + BEGIN|END.
struct BlockKeyword {
  bool valid = false;
  std::string_view prefix;   // "PROF_" or "SCOREP_"
  Block kind = Block::None;
  bool begin = false;
};

BlockKeyword block_keyword(std::string_view token) {
  BlockKeyword k;
  for (std::string_view prefix : {std::string_view("PROF_"), std::string_view("SCOREP_")}) {
    if (token.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = token.substr(prefix.size());
    Block kind = Block::None;
    if (rest.substr(0, 11) == "FILE_NAMES_") {
      kind = Block::Files;
      rest.remove_prefix(11);
    } else if (rest.substr(0, 13) == "REGION_NAMES_") {
      kind = Block::Regions;
      rest.remove_prefix(13);
    } else {
      return k;
    }
    if (rest != "BEGIN" && rest != "END") return k;
    k.valid = true;
    k.prefix = prefix;
    k.kind = kind;
    k.begin = rest == "BEGIN";
    return k;
  }
  return k;
}

bool is_keyword(std::string_view token) {
  return token == "EXCLUDE" || token == "INCLUDE" || token == "MANGLED" || token == "DEMANGLED" ||
         block_keyword(token).valid;
}

std::string block_name(std::string_view prefix, Block kind) {
  return std::string(prefix) + (kind == Block::Files ? "FILE_NAMES" : "REGION_NAMES");
}

/// True when the character at `pos` is preceded by an odd number of backslashes (quoted).
bool escaped(std::string_view line, std::size_t pos) {
  std::size_t n = 0;
  while (pos > n && line[pos - n - 1] == '\\') ++n;
  return n % 2 == 1;
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

/// `s` with control characters escaped (one_line.hpp), so that an error that quotes a token (a
/// stray carriage return inside a line, a binary file) stays one line.
std::string printable(std::string_view s) { return one_line(s); }

class Parser {
 public:
  Parser(std::string_view file, std::string* error) : file_(file), error_(error) {}

  bool run(std::string_view text) {
    int line_no = 0;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      ++line_no;
      if (!line(text.substr(start, end - start), line_no)) return false;
      start = end + 1;
    }
    return finish(line_no);
  }

  std::vector<Rule> file_rules;
  std::vector<Rule> region_rules;

 private:
  bool line(std::string_view text, int line_no) {
    line_ = line_no;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);   // CRLF files
    // Comment: the first '#' that is not quoted by a backslash ("\#" is a literal '#').
    for (std::size_t pos = text.find('#'); pos != std::string_view::npos;
         pos = text.find('#', pos + 1)) {
      if (!escaped(text, pos)) {
        text = text.substr(0, pos);
        break;
      }
    }
    if (!text.empty() && text.back() == '\\' && !escaped(text, text.size() - 1)) {
      return fail(line_no, "'\\' at the end of the line (line continuation is not supported)",
                  "the rule to go on with a pattern or keyword on the next line, without '\\'");
    }
    // Tokens: split at spaces and tabs that are not quoted by a backslash.
    std::size_t pos = 0;
    while (pos < text.size()) {
      while (pos < text.size() && is_space(text[pos])) ++pos;
      if (pos >= text.size()) break;
      std::size_t end = pos;
      while (end < text.size() && !(is_space(text[end]) && !escaped(text, end))) ++end;
      if (!token(text.substr(pos, end - pos))) return false;
      pos = end;
    }
    return true;
  }

  bool token(std::string_view tok) {
    if (const BlockKeyword k = block_keyword(tok); k.valid) {
      return k.begin ? begin_block(tok, k) : end_block(tok, k);
    }
    if (tok == "EXCLUDE" || tok == "INCLUDE") {
      if (block_ == Block::None) return outside_block(tok);
      if (!close_rule(tok)) return false;
      in_rule_ = true;
      rule_exclude_ = tok == "EXCLUDE";
      rule_mangled_ = false;
      rule_line_ = line_;
      rule_patterns_ = 0;
      return true;
    }
    if (tok == "MANGLED" || tok == "DEMANGLED") {
      if (block_ == Block::None) return outside_block(tok);
      const std::string end = block_name(prefix_, block_) + "_END";
      if (block_ == Block::Files) {
        return fail(line_, "'" + std::string(tok) + "' in a file block (it applies to region names only)",
                    "a file pattern, EXCLUDE, INCLUDE or " + end);
      }
      if (!in_rule_) {
        return fail(line_, "'" + std::string(tok) + "' before any EXCLUDE or INCLUDE",
                    "EXCLUDE, INCLUDE or " + end);
      }
      rule_mangled_ = tok == "MANGLED";
      return true;
    }
    // A pattern.
    if (block_ == Block::None) return outside_block(tok);
    if (!in_rule_) {
      std::string upper(tok);
      for (char& c : upper) c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
      const char* hint = is_keyword(upper) ? " (keywords are case-sensitive)" : "";
      return fail(line_, "'" + std::string(tok) + "' is not a rule keyword" + hint,
                  "EXCLUDE, INCLUDE or " + block_name(prefix_, block_) + "_END");
    }
    Rule rule{rule_exclude_, rule_mangled_, std::string(tok), line_, std::string(file_), RuleUse()};
    (block_ == Block::Files ? file_rules : region_rules).push_back(std::move(rule));
    ++rule_patterns_;
    return true;
  }

  bool begin_block(std::string_view tok, const BlockKeyword& k) {
    if (block_ != Block::None) {
      if (!close_rule(tok)) return false;
      const std::string open = block_name(prefix_, block_);
      return fail(line_, "'" + std::string(tok) + "' inside the " + open +
                             " block opened at line " + std::to_string(block_line_),
                  open + "_END before it (blocks do not nest)");
    }
    block_ = k.kind;
    prefix_ = k.prefix;
    block_line_ = line_;
    in_rule_ = false;
    return true;
  }

  bool end_block(std::string_view tok, const BlockKeyword& k) {
    if (block_ == Block::None) {
      return fail(line_, "'" + std::string(tok) + "' without an open block",
                  block_name(k.prefix, k.kind) + "_BEGIN before it");
    }
    if (!close_rule(tok)) return false;
    const std::string open = block_name(prefix_, block_);
    if (k.kind != block_ || k.prefix != prefix_) {
      return fail(line_, "'" + std::string(tok) + "' inside the " + open +
                             " block opened at line " + std::to_string(block_line_),
                  open + "_END");
    }
    block_ = Block::None;
    in_rule_ = false;
    return true;
  }

  bool outside_block(std::string_view tok) {
    return fail(line_, "'" + std::string(tok) + "' outside a block",
                std::string(prefix_) + "REGION_NAMES_BEGIN or " + std::string(prefix_) +
                    "FILE_NAMES_BEGIN before it");
  }

  /// The rule in progress ends at `next` (a keyword, or "" for the end of the file); it must
  /// have had a pattern.
  bool close_rule(std::string_view next) {
    if (!in_rule_ || rule_patterns_ > 0) return true;
    const char* kw = rule_exclude_ ? "EXCLUDE" : "INCLUDE";
    const std::string found =
        next.empty() ? std::string("the end of the file")
                     : "'" + std::string(next) + "' (line " + std::to_string(line_) + ")";
    return fail(rule_line_, "'" + std::string(kw) + "' is followed by " + found + " without a pattern",
                std::string("at least one pattern after ") + kw);
  }

  bool finish(int last_line) {
    line_ = last_line;
    if (block_ == Block::None) return true;
    if (!close_rule("")) return false;
    const std::string open = block_name(prefix_, block_);
    return fail(last_line, "end of file inside the " + open + " block opened at line " +
                               std::to_string(block_line_),
                open + "_END");
  }

  bool fail(int line_no, const std::string& found, const std::string& expected) {
    if (error_) {
      *error_ = printable(std::string(file_) + ":" + std::to_string(line_no) + ": " + found +
                          "; expected " + expected);
    }
    return false;
  }

  std::string_view file_;
  std::string* error_;
  int line_ = 0;
  Block block_ = Block::None;
  std::string_view prefix_ = "PROF_";   // spelling of the last block keyword, for messages
  int block_line_ = 0;
  bool in_rule_ = false;
  bool rule_exclude_ = false;
  bool rule_mangled_ = false;
  int rule_line_ = 0;
  int rule_patterns_ = 0;
};

/// fnmatch with flags 0. Score-P treats a matching error as "no match" (and disables the rule);
/// glibc only reports one for an out-of-memory or invalid multibyte input.
bool matches(const std::string& pattern, const std::string& subject) {
  return fnmatch(pattern.c_str(), subject.c_str(), 0) == 0;
}

/// The literal a pattern without wildcards stands for (backslash quoting removed), or false
/// when it has an unquoted '*', '?' or '['.
bool literal_of(const std::string& pattern, std::string* out) {
  out->clear();
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      *out += pattern[++i];
      continue;
    }
    if (c == '*' || c == '?' || c == '[') return false;
    *out += c;
  }
  return true;
}

/// Notes what a rule's pattern did with `subject` (a name it did not match so far): matched, or
/// a near miss, a demangled C++ name that the pattern, a literal, equals up to its '(' (or whose
/// last qualified part it equals: "bar" for "ns::Foo::bar(int)").
void note(const Rule& r, const std::string& subject, bool hit, bool demangled) {
  if (hit) {
    r.use.set_matched();
    return;
  }
  if (!demangled || r.mangled || !r.use.near_miss().empty()) return;
  std::string lit;
  if (!literal_of(r.pattern, &lit) || lit.empty() || lit == subject) return;
  std::size_t end = std::string::npos;
  if (subject.size() > lit.size() && subject.compare(0, lit.size(), lit) == 0 && subject[lit.size()] == '(') {
    end = lit.size();
  } else {
    const std::size_t open = subject.find('(');
    const std::size_t at = subject.rfind("::" + lit + "(", open);
    if (at != std::string::npos && at + 2 + lit.size() == open) end = open;
  }
  if (end == std::string::npos) return;
  // "(*)" where the name ends with its parameter list, else "(*)*" (" const", " [clone .cold]").
  const bool bare = subject.back() == ')' && subject.find(')', end) == subject.size() - 1;
  r.use.set_near_miss(subject, quote_pattern(subject.substr(0, end)) + (bare ? "(*)" : "(*)*"));
}

/// Score-P's order: start included; EXCLUDE tested only while included, INCLUDE only while
/// excluded, so the last matching rule wins. The rules the order skips are still tested (until
/// they first match) for unmatched().
bool evaluate(const std::vector<Rule>& rules, const std::string& name, const std::string& mangled, bool files) {
  bool excluded = false;
  for (const Rule& r : rules) {
    const bool by_mangled = r.mangled && !mangled.empty();
    const std::string& subject = by_mangled ? mangled : name;
    if (r.exclude == excluded) {
      if (!r.use.matched()) note(r, subject, matches(r.pattern, subject), !files && !by_mangled);
      continue;
    }
    const bool hit = matches(r.pattern, subject);
    if (!r.use.matched()) note(r, subject, hit, !files && !by_mangled);
    if (hit) excluded = r.exclude;
  }
  return excluded;
}

/// For unmatched(): tests the rules not matched so far (the region rules of a region whose file
/// is excluded, which the evaluation never reaches).
void track(const std::vector<Rule>& rules, const std::string& name, const std::string& mangled) {
  for (const Rule& r : rules) {
    if (r.use.matched()) continue;
    const bool by_mangled = r.mangled && !mangled.empty();
    const std::string& subject = by_mangled ? mangled : name;
    note(r, subject, matches(r.pattern, subject), !by_mangled);
  }
}

/// `s` for a message: one line, at most 100 characters.
std::string shown(const std::string& s) {
  std::string out = one_line(s);
  if (out.size() > 100) out = out.substr(0, 97) + "...";
  return out;
}

}  // namespace

bool Filter::parse(std::string_view text, std::string_view file, std::string* error) {
  Parser parser(file, error);
  if (!parser.run(text)) return false;
  for (Rule& r : parser.file_rules) file_rules_.push_back(std::move(r));
  for (Rule& r : parser.region_rules) region_rules_.push_back(std::move(r));
  return true;
}

bool Filter::load(const std::string& path, std::string* error) {
  auto fail = [&](int err) {
    if (error) {
      *error = path + ": cannot read the filter file (" + std::strerror(err) +
               "); expected a readable file";
    }
    return false;
  };
  auto refuse = [&](const std::string& why) {
    if (error) *error = path + ": " + why;
    return false;
  };
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below, as is anything
  // but a regular file: /dev/zero or a FIFO would be read forever).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return fail(e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    if (S_ISDIR(st.st_mode)) return fail(EISDIR);
    const char* what = S_ISFIFO(st.st_mode)  ? "a FIFO"
                       : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return refuse(std::string("is ") + what + ", not a regular file; give a text file of filter rules");
  }
  const std::string too_large = "is larger than " + std::to_string(kMaxFileBytes >> 20) +
                                " MiB, the most a filter file may have; give a text file of filter rules "
                                "(wildcards cover many names in one rule)";
  if (st.st_size > static_cast<off_t>(kMaxFileBytes)) {
    ::close(fd);
    return refuse(too_large);
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return fail(e);
    }
    if (const void* nul = std::memchr(buf, '\0', static_cast<std::size_t>(n))) {
      const std::size_t at = text.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - buf);
      ::close(fd);
      return refuse("holds a NUL byte at offset " + std::to_string(at) +
                    ": a binary file, not a filter file; give a text file of filter rules");
    }
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxFileBytes) {  // grew since fstat
      ::close(fd);
      return refuse(too_large);
    }
  }
  ::close(fd);
  return parse(text, path, error);
}

RuleUse::RuleUse(const RuleUse& o) { *this = o; }

RuleUse& RuleUse::operator=(const RuleUse& o) {
  if (this == &o) return *this;
  matched_.store(o.matched(), std::memory_order_relaxed);
  near_name_ = o.near_miss();
  suggestion_ = near_name_.empty() ? std::string() : o.suggestion();
  near_state_.store(near_name_.empty() ? 0 : 2, std::memory_order_relaxed);
  return *this;
}

std::string RuleUse::near_miss() const {
  return near_state_.load(std::memory_order_acquire) == 2 ? near_name_ : std::string();
}

std::string RuleUse::suggestion() const {
  return near_state_.load(std::memory_order_acquire) == 2 ? suggestion_ : std::string();
}

void RuleUse::set_near_miss(std::string name, std::string suggestion) {
  // The first thread to claim the slot writes it; readers look only once it is published.
  int none = 0;
  if (!near_state_.compare_exchange_strong(none, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
  near_name_ = std::move(name);
  suggestion_ = std::move(suggestion);
  near_state_.store(2, std::memory_order_release);
}

bool Filter::file_excluded(std::string_view file) const {
  if (file.empty() || file_rules_.empty()) return false;
  return evaluate(file_rules_, simplify_path(file), std::string(), true);
}

bool Filter::region_excluded(std::string_view name, std::string_view mangled) const {
  if (region_rules_.empty()) return false;
  return evaluate(region_rules_, std::string(name), std::string(mangled), false);
}

bool Filter::excluded(std::string_view name, std::string_view mangled,
                      std::string_view file) const {
  // Score-P (SCOREP_Filter_Match): file rules first; an excluded file cannot be re-included
  // by the region rules (which are still tested, for unmatched()).
  if (file_excluded(file)) {
    track(region_rules_, std::string(name), std::string(mangled));
    return true;
  }
  return region_excluded(name, mangled);
}

bool Filter::explicitly_included(std::string_view name, std::string_view mangled,
                                 std::string_view file) const {
  if (file_excluded(file)) return false;
  const std::string n(name), m(mangled);
  bool excluded = false;
  bool explicit_include = false;
  for (const Rule& r : region_rules_) {
    const bool by_mangled = r.mangled && !m.empty();
    const bool hit = matches(r.pattern, by_mangled ? m : n);
    if (!r.use.matched()) note(r, by_mangled ? m : n, hit, !by_mangled);
    if (hit) {
      if (r.exclude) {
        explicit_include = false;
      } else if (r.pattern != "*") {
        explicit_include = true;
      }
    }
    if (r.exclude != excluded && hit) excluded = r.exclude;
  }
  return !excluded && explicit_include;
}

std::vector<UnmatchedRule> Filter::unmatched(std::string_view file) const {
  std::vector<UnmatchedRule> out;
  auto add = [&](const std::vector<Rule>& rules, bool files) {
    for (const Rule& r : rules) {
      if (r.use.matched() || r.pattern == "*" || (!file.empty() && r.file != file)) continue;
      const bool seen = std::any_of(out.begin(), out.end(), [&](const UnmatchedRule& u) {
        return u.file_rule == files && u.line == r.line && u.file == r.file && u.pattern == r.pattern;
      });
      if (seen) continue;  // the same file loaded twice
      out.push_back({r.file, r.line, r.exclude, r.mangled, files, r.pattern, r.use.near_miss(), r.use.suggestion()});
    }
  };
  add(file_rules_, true);
  add(region_rules_, false);
  std::stable_sort(out.begin(), out.end(), [](const UnmatchedRule& a, const UnmatchedRule& b) {
    return std::tie(a.file, a.line) < std::tie(b.file, b.line);
  });
  return out;
}

std::string unmatched_text(const std::vector<UnmatchedRule>& rules, std::size_t max_listed) {
  std::string t;
  for (std::size_t i = 0; i < rules.size() && i < max_listed; ++i) {
    const UnmatchedRule& u = rules[i];
    if (i) t += ", ";
    t += shown(u.file) + ":" + std::to_string(u.line) + (u.exclude ? " EXCLUDE " : " INCLUDE ") +
         (u.mangled ? "MANGLED " : "") + shown(u.pattern);
    if (u.file_rule) t += " (a file name rule)";
    if (!u.suggestion.empty())
      t += " (a C++ name carries its signature: use " + shown(u.suggestion) + ", which matches " + shown(u.near_miss) + ")";
  }
  if (rules.size() > max_listed) t += ", and " + std::to_string(rules.size() - max_listed) + " more";
  return t;
}

std::string unmatched_warning(const Filter& f, const std::string& filtering_file, const char* const* compile_time_files) {
  if (filtering_file.empty()) return std::string();
  struct stat a, b;
  const bool stat_ok = ::stat(filtering_file.c_str(), &a) == 0;
  for (const char* const* p = compile_time_files; p && *p; ++p)
    if (filtering_file == *p || (stat_ok && ::stat(*p, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino))
      return std::string();
  const std::vector<UnmatchedRule> none = f.unmatched(filtering_file);
  if (none.empty()) return std::string();
  const std::string n = std::to_string(none.size());
  return (none.size() == 1 ? "1 rule" : n + " rules") + " of PROF_FILTERING_FILE matched no function of this run: " +
         unmatched_text(none) + "; correct " + (none.size() == 1 ? "its pattern or remove it" : "their patterns or remove them") +
         " (a function that never ran is not seen)";
}

bool Filter::empty() const { return file_rules_.empty() && region_rules_.empty(); }

std::size_t Filter::rule_count() const { return file_rules_.size() + region_rules_.size(); }

std::string Filter::simplify_path(std::string_view path) {
  if (path.empty()) return std::string();
  const bool absolute = path.front() == '/';
  std::vector<std::string_view> parts;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    std::size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(part);   // a relative path may climb above its start
      }                          // "/.." is "/"
      continue;
    }
    parts.push_back(part);
  }
  std::string out = absolute ? "/" : "";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out.append(parts[i]);
  }
  if (out.empty()) out = ".";
  return out;
}

std::string quote_pattern(std::string_view literal) {
  std::string out;
  if (is_keyword(literal)) out += '\\';
  for (char c : literal) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\' || c == '#' || is_space(c)) out += '\\';
    out += c;
  }
  return out;
}

std::string throttle_filter_text(const std::vector<ThrottledRegion>& regions) {
  std::string t =
      "# Functions prof throttled during this run (PROF_THROTTLE): many visits, each short.\n"
      "# Their calls after that were not measured; their time is in their callers' exclusive time.\n"
      "# To leave them out from the start of the next run:\n"
      "#   prof-wrap --instrument-filter=prof.throttle.filter <compiler> ...   (GCC plugin: compiled without hooks)\n"
      "#   PROF_FILTERING_FILE=prof.throttle.filter                             (any build: the hooks return at once)\n"
      "# Edit it freely: an INCLUDE rule after these keeps a function measured (and never throttled).\n"
      "PROF_REGION_NAMES_BEGIN\n";
  for (const ThrottledRegion& r : regions) {
    const bool mangled = !r.canonical.empty() && r.canonical != r.name;
    t += "  EXCLUDE ";
    if (mangled) t += "MANGLED ";
    t += quote_pattern(mangled ? r.canonical : r.name);
    t += "\n    # " + one_line(mangled ? r.name : std::string()) + (mangled ? ": " : "") + std::to_string(r.visits) + " visits of " +
         std::to_string(r.mean_ns) + " ns on average when throttled\n";
  }
  t += "PROF_REGION_NAMES_END\n";
  return t;
}
}  // namespace prof::filter
