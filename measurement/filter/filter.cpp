// SPDX-License-Identifier: BSD-3-Clause
// Filter files: tokenizer, parser state machine and the Score-P evaluation order (see filter.hpp).
#include "measurement/filter/filter.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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
    Rule rule{rule_exclude_, rule_mangled_, std::string(tok), line_};
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

/// Score-P's order: start included; EXCLUDE tested only while included, INCLUDE only while
/// excluded, so the last matching rule wins.
bool evaluate(const std::vector<Rule>& rules, const std::string& name, const std::string& mangled) {
  bool excluded = false;
  for (const Rule& r : rules) {
    if (r.exclude == excluded) continue;
    const bool hit = matches(r.pattern, r.mangled && !mangled.empty() ? mangled : name);
    if (hit) excluded = r.exclude;
  }
  return excluded;
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

bool Filter::file_excluded(std::string_view file) const {
  if (file.empty() || file_rules_.empty()) return false;
  return evaluate(file_rules_, simplify_path(file), std::string());
}

bool Filter::region_excluded(std::string_view name, std::string_view mangled) const {
  if (region_rules_.empty()) return false;
  return evaluate(region_rules_, std::string(name), std::string(mangled));
}

bool Filter::excluded(std::string_view name, std::string_view mangled,
                      std::string_view file) const {
  // Score-P (SCOREP_Filter_Match): file rules first; an excluded file cannot be re-included
  // by the region rules.
  return file_excluded(file) || region_excluded(name, mangled);
}

bool Filter::explicitly_included(std::string_view name, std::string_view mangled,
                                 std::string_view file) const {
  if (file_excluded(file)) return false;
  const std::string n(name), m(mangled);
  bool excluded = false;
  bool explicit_include = false;
  for (const Rule& r : region_rules_) {
    const bool hit = matches(r.pattern, r.mangled && !m.empty() ? m : n);
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
