// SPDX-License-Identifier: BSD-3-Clause
// Parsing, formatting and documenting the configuration variables of every table.
#include "measurement/config/config.hpp"

#include <climits>

#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>

#include "measurement/one_line.hpp"

namespace prof::config {

Immortal<Values> g_values_storage;

namespace {

/// The text each variable's value in effect was parsed from (given_text()); parse() records it.
Immortal<std::vector<std::pair<const Var*, std::string>>> g_given;

/// PROF_* names that are not configuration variables but are read elsewhere (prof-wrap);
/// load() does not warn about them.
constexpr const char* kNotConfigVars[] = {
    "PROF_WRAPPER",
    "PROF_WRAPPER_INSTRUMENTER_FLAGS",
    "PROF_WRAPPER_COMPILER_FLAGS",
};

constexpr std::string_view kPrefix = "PROF_";
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
constexpr const char* kSeparators = ", \t\n\r\f\v:;";
constexpr const char* kSpace = " \t\n\r\f\v";
constexpr int kWrapColumns = 80;

// Words every Set accepts besides its members; no member may use them.
constexpr const char* kSetAll = "all";
constexpr const char* kSetDefault = "default";
constexpr const char* kSetNone = "none";
constexpr const char* kSetNo = "no";

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(kSpace);
  return s.substr(first, last - first + 1);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

/// The value as shown inside '...' in a message: control characters escaped, so that every
/// message stays one line whatever the environment holds.
std::string shown(std::string_view value) { return one_line(value); }

/// Longer values are cut in messages, which must stay one line of a readable length.
constexpr std::size_t kShownMax = 80;

/// "PROF_X='value'": the start of every parse error.
std::string subject(const Table& table, const Var& var, std::string_view value) {
  return env_name(table, var) + "=" + quoted(value);
}

/// Decimal digits with overflow check; false when `s` is empty or holds anything else.
/// `overflow` is set when the digits do not fit.
bool parse_decimal(std::string_view s, std::uint64_t* out, bool* overflow) {
  *overflow = false;
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (kMax - d) / 10) *overflow = true;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

/// The aliases of a member ("default/yes" → {"default", "yes"}).
std::vector<std::string_view> aliases(const Member& m) {
  std::vector<std::string_view> out;
  std::string_view s = m.name;
  while (true) {
    const auto slash = s.find('/');
    out.push_back(s.substr(0, slash));
    if (slash == std::string_view::npos) break;
    s.remove_prefix(slash + 1);
  }
  return out;
}

std::string_view primary_name(const Member& m) { return aliases(m).front(); }

const Member* find_member(const Var& var, std::string_view lowered) {
  for (const Member* m = var.members; m && m->name; ++m) {
    for (std::string_view a : aliases(*m)) {
      if (a == lowered) return m;
    }
  }
  return nullptr;
}

/// "a, b or c" from a list of words.
std::string or_list(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += (i + 1 == words.size()) ? " or " : ", ";
    out += words[i];
  }
  return out;
}

/// Every word a Set or Option accepts, in table order (aliases included), then the Set words.
std::vector<std::string> accepted_words(const Var& var) {
  std::vector<std::string> words;
  for (const Member* m = var.members; m && m->name; ++m) {
    for (std::string_view a : aliases(*m)) words.emplace_back(a);
  }
  if (var.type == Type::Set) {
    words.emplace_back(kSetAll);
    words.emplace_back(kSetDefault);
    words.emplace_back(kSetNone);
  }
  return words;
}

std::uint64_t all_bits(const Var& var) {
  std::uint64_t bits = 0;
  for (const Member* m = var.members; m && m->name; ++m) bits |= m->bits;
  return bits;
}

/// The shortest exact form of a byte count: 16M, 64K, 1000.
std::string format_size(std::uint64_t v) {
  static const char kUnits[] = {'T', 'G', 'M', 'K'};
  static const int kShifts[] = {40, 30, 20, 10};
  if (v == 0) return "0";
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t unit = std::uint64_t{1} << kShifts[i];
    if (v % unit == 0) return std::to_string(v / unit) + kUnits[i];
  }
  return std::to_string(v);
}

std::string format_value(Type type, std::uint64_t v) {
  return type == Type::Size ? format_size(v) : std::to_string(v);
}

bool parse_bool(const Table& table, const Var& var, std::string_view value, bool* out,
                std::string* error) {
  const std::string v = lower(trim(value));
  if (v == "true" || v == "yes" || v == "on" || v == "1") {
    *out = true;
    return true;
  }
  if (v == "false" || v == "no" || v == "off" || v == "0") {
    *out = false;
    return true;
  }
  *error = subject(table, var, value) + " is not a boolean; use true/false, yes/no, on/off or 1/0";
  return false;
}

bool parse_size(const Table& table, const Var& var, std::string_view value, std::uint64_t* out,
                std::string* error) {
  const std::string_view v = trim(value);
  const auto digits_end = std::min(v.find_first_not_of("0123456789"), v.size());
  std::string_view rest = trim(v.substr(digits_end));
  int shift = 0;
  if (!rest.empty()) {
    switch (std::toupper(static_cast<unsigned char>(rest.front()))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: break;
    }
    if (shift != 0) rest.remove_prefix(1);
  }
  if (!rest.empty() && (rest.front() == 'B' || rest.front() == 'b')) rest.remove_prefix(1);
  std::uint64_t n = 0;
  bool overflow = false;
  if (!rest.empty() || !parse_decimal(v.substr(0, digits_end), &n, &overflow)) {
    *error = subject(table, var, value) +
             " is not a size; use a number with an optional K, M or G suffix, e.g. 64M";
    return false;
  }
  if (overflow || (shift != 0 && n > (kMax >> shift))) {
    *error = subject(table, var, value) +
             " is too large; use a size below 16777216T (2^64 bytes), e.g. 64M";
    return false;
  }
  *out = n << shift;
  return true;
}

bool parse_number(const Table& table, const Var& var, std::string_view value, std::uint64_t* out,
                  std::string* error) {
  bool overflow = false;
  if (!parse_decimal(trim(value), out, &overflow)) {
    *error = subject(table, var, value) +
             " is not a number; use a non-negative decimal integer, e.g. 1";
    return false;
  }
  if (overflow) {
    *error = subject(table, var, value) +
             " is too large; use a number below 18446744073709551616 (2^64), e.g. 1";
    return false;
  }
  return true;
}

/// The checks of min_value, max_value and power_of_two on a parsed Size or Number.
bool check_range(const Table& table, const Var& var, std::string_view value, std::uint64_t v,
                 std::string* error) {
  if (v < var.min_value || v > var.max_value) {
    *error = subject(table, var, value) + " is out of range; use " + constraints(var) +
             ", e.g. " + var.default_value;
    return false;
  }
  if (var.power_of_two && (v == 0 || (v & (v - 1)) != 0)) {
    *error = subject(table, var, value) + " is not a power of two; use " + constraints(var) +
             ", e.g. " + var.default_value;
    return false;
  }
  return true;
}

bool parse_set(const Table& table, const Var& var, std::string_view value, bool is_default,
               std::uint64_t* out, std::string* error) {
  std::uint64_t bits = 0;
  std::string_view rest = trim(value);
  while (!rest.empty()) {
    const auto end = std::min(rest.find_first_of(kSeparators), rest.size());
    const std::string_view written = rest.substr(0, end);  // as the user wrote it, for the message
    rest.remove_prefix(std::min(end + 1, rest.size()));
    if (written.empty()) continue;
    const std::string lowered = lower(written);
    std::string_view token = lowered;
    const bool remove = token.front() == '~';
    if (remove) token.remove_prefix(1);
    std::uint64_t token_bits = 0;
    bool known = true;
    if (const Member* m = find_member(var, token)) {
      token_bits = m->bits;
    } else if (token == kSetAll) {
      token_bits = all_bits(var);
    } else if (token == kSetDefault && !is_default) {
      std::string ignored;
      if (!parse_set(table, var, var.default_value, true, &token_bits, &ignored)) known = false;
    } else if ((token == kSetNone || token == kSetNo) && !remove) {
      bits = 0;   // "none" clears what came before it; on its own it is the empty set
      continue;
    } else {
      known = false;
    }
    if (!known) {
      std::string example;
      int n = 0;
      for (const Member* m = var.members; m && m->name && n < 2; ++m, ++n) {
        example += (n ? "," : "") + std::string(primary_name(*m));
      }
      *error = subject(table, var, value) + " has the unknown value " + quoted(written) +
               "; use a comma list of " + or_list(accepted_words(var)) + ", e.g. " + example;
      return false;
    }
    bits = remove ? (bits & ~token_bits) : (bits | token_bits);
  }
  *out = bits;
  return true;
}

bool parse_option(const Table& table, const Var& var, std::string_view value, std::uint64_t* out,
                  std::string* error) {
  if (const Member* m = find_member(var, lower(trim(value)))) {
    *out = m->bits;
    return true;
  }
  *error = subject(table, var, value) + " is not an accepted value; use one of " +
           or_list(accepted_words(var));
  return false;
}

/// Levenshtein distance, for the nearest-name hint.
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string unknown_variable_warning(std::string_view name) {
  // Compare without the prefix and case, so PROF_enable_tracing finds PROF_ENABLE_TRACING.
  const std::string wanted = upper(name.substr(kPrefix.size()));
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const Table& t : tables()) {
    for (const Var* var = t.vars; var->name; ++var) {
      const std::string candidate = env_name(t, *var);
      const std::size_t close = std::max<std::size_t>(2, std::max(wanted.size(), candidate.size() - kPrefix.size()) / 3);
      // The distance is at least the difference in length: a name far longer than every
      // variable's (a garbled environment) costs no quadratic comparison.
      const std::size_t length = candidate.size() - kPrefix.size();
      if ((wanted.size() > length ? wanted.size() - length : length - wanted.size()) > close) continue;
      const std::size_t d = distance(wanted, std::string_view(candidate).substr(kPrefix.size()));
      if (d <= close && d < best_distance) {
        best = candidate;
        best_distance = d;
      }
    }
  }
  // The name as the environment has it, control characters escaped: the warning stays one line.
  std::string out = shown(name) + " is not a known variable; ";
  return out + (best.empty() ? "run prof-info config-vars for the list" : "did you mean " + best + "?");
}

/// Appends `text` re-wrapped at kWrapColumns, each line starting with `indent`. Paragraphs are
/// separated by an empty line in `text`; single line breaks inside a paragraph are spaces.
/// `hanging` (when given) replaces `indent` on the second and later lines of a paragraph.
void append_wrapped(std::string* out, std::string_view text, std::string_view indent,
                    int columns = kWrapColumns, std::string_view hanging = {}) {
  if (hanging.empty()) hanging = indent;
  bool first_paragraph = true;
  while (!text.empty()) {
    const auto end = std::min(text.find("\n\n"), text.size());
    std::string_view paragraph = text.substr(0, end);
    text.remove_prefix(std::min(end + 2, text.size()));
    if (trim(paragraph).empty()) continue;
    if (!first_paragraph) *out += "\n";
    first_paragraph = false;
    std::string line(indent);
    bool line_empty = true;
    while (!paragraph.empty()) {
      const auto start = paragraph.find_first_not_of(kSpace);
      if (start == std::string_view::npos) break;
      paragraph.remove_prefix(start);
      const auto word_end = std::min(paragraph.find_first_of(kSpace), paragraph.size());
      const std::string_view word = paragraph.substr(0, word_end);
      paragraph.remove_prefix(word_end);
      if (!line_empty && line.size() + 1 + word.size() > static_cast<std::size_t>(columns)) {
        *out += line + "\n";
        line = std::string(hanging);
        line_empty = true;
      }
      if (!line_empty) line += ' ';
      line += word;
      line_empty = false;
    }
    *out += line + "\n";
  }
}

std::string shown_default(const Var& var) {
  return *var.default_value ? std::string(var.default_value) : std::string("(empty)");
}

/// The accepted values of a Set or Option as (name, help) pairs, the Set words included.
std::vector<std::pair<std::string, std::string>> value_help(const Var& var) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Member* m = var.members; m && m->name; ++m) out.emplace_back(m->name, m->help);
  if (var.type == Type::Set) {
    out.emplace_back(kSetAll, "every value above");
    out.emplace_back(kSetDefault, std::string("the default (") + var.default_value + ")");
    out.emplace_back(std::string(kSetNone) + "/" + kSetNo, "nothing");
  }
  return out;
}

/// Markdown text: '<' and '>' outside `code spans` are escaped, so `<unique>` stays visible.
std::string md_escape(std::string_view s) {
  std::string out;
  bool code = false;
  for (char c : s) {
    if (c == '`') code = !code;
    if (!code && c == '<') {
      out += "&lt;";
    } else if (!code && c == '>') {
      out += "&gt;";
    } else if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

const std::vector<Table>& tables() {
  // Never destroyed: finalize reads it after exit has begun (immortal.hpp says why).
  static const std::vector<Table>* all = new std::vector<Table>{
      {"", kCoreVars},
      {"PTHREAD", kPthreadVars},
      {"MPI", kMpiVars},
      {"CUDA", kCudaVars},
      {"OPENMP", kOpenMPVars},
  };
  return *all;
}

std::string env_name(const Table& table, const Var& var) {
  std::string name(kPrefix);
  if (*table.ns) name += upper(table.ns) + "_";
  return name + upper(var.name);
}

const Var* find_var(std::string_view name, const Table** table) {
  for (const Table& t : tables()) {
    for (const Var* var = t.vars; var->name; ++var) {
      if (env_name(t, *var) == name) {
        if (table) *table = &t;
        return var;
      }
    }
  }
  return nullptr;
}

namespace {

bool parse_value(const Table& table, const Var& var, std::string_view value, std::string* error) {
  *g_values_storage;  // the targets below point into it: built before the first write
  switch (var.type) {
    case Type::Bool: {
      bool v = false;
      if (!parse_bool(table, var, value, &v, error)) return false;
      *static_cast<bool*>(var.target) = v;
      return true;
    }
    case Type::Size:
    case Type::Number: {
      std::uint64_t v = 0;
      const bool ok = var.type == Type::Size ? parse_size(table, var, value, &v, error)
                                             : parse_number(table, var, value, &v, error);
      if (!ok || !check_range(table, var, value, v, error)) return false;
      *static_cast<std::uint64_t*>(var.target) = v;
      return true;
    }
    case Type::String:
    case Type::Path: {
      if (var.check) {
        const std::string why = var.check(value);
        if (!why.empty()) {
          *error = subject(table, var, value) + " " + why;
          return false;
        }
      }
      if (var.type == Type::Path && value.size() >= PATH_MAX) {
        *error = subject(table, var, value) + " is too long; give a name of at most " +
                 std::to_string(PATH_MAX - 1) + " characters";
        return false;
      }
      *static_cast<std::string*>(var.target) = std::string(value);
      return true;
    }
    case Type::Set:
    case Type::Option: {
      std::uint64_t v = 0;
      const bool ok = var.type == Type::Set ? parse_set(table, var, value, false, &v, error)
                                            : parse_option(table, var, value, &v, error);
      if (!ok) return false;
      *static_cast<std::uint64_t*>(var.target) = v;
      return true;
    }
  }
  *error = env_name(table, var) + " has an unknown type";
  return false;
}

}  // namespace

bool parse(const Table& table, const Var& var, std::string_view value, std::string* error) {
  std::string ignored;
  if (!error) error = &ignored;
  if (!parse_value(table, var, value, error)) return false;
  auto& given = *g_given;
  const auto it = std::find_if(given.begin(), given.end(), [&](const auto& g) { return g.first == &var; });
  if (it != given.end()) it->second.assign(value);
  else given.emplace_back(&var, std::string(value));
  return true;
}

std::string given_text(std::string_view name) {
  const Var* var = find_var(name);
  if (!var) return {};
  for (const auto& [v, text] : *g_given)
    if (v == var) return text;
  return var->default_value;
}

std::string quoted(std::string_view value) {
  if (value.size() <= kShownMax) return "'" + shown(value) + "'";
  return "'" + shown(value.substr(0, kShownMax / 2)) + "...' (" + std::to_string(value.size()) + " characters)";
}

bool load(const char* const* envp, std::string* error, std::vector<std::string>* warnings) {
  std::string ignored;
  if (!error) error = &ignored;
  for (const Table& t : tables()) {
    for (const Var* var = t.vars; var->name; ++var) {
      std::string why;
      if (!parse(t, *var, var->default_value, &why)) {
        *error = "internal error: the default of " + env_name(t, *var) + " does not parse: " + why;
        return false;
      }
    }
  }
  // Unknown names first, so their warnings appear even when a value below is malformed.
  for (const char* const* e = envp; e && *e; ++e) {
    const std::string_view entry = *e;
    const std::string_view name = entry.substr(0, entry.find('='));
    if (name.substr(0, kPrefix.size()) != kPrefix || find_var(name)) continue;
    const bool allowed = std::any_of(std::begin(kNotConfigVars), std::end(kNotConfigVars),
                                     [&](const char* n) { return name == n; });
    if (!allowed && warnings) warnings->push_back(unknown_variable_warning(name));
  }
  for (const Table& t : tables()) {
    for (const Var* var = t.vars; var->name; ++var) {
      const std::string name = env_name(t, *var);
      // The first occurrence wins, as with getenv().
      for (const char* const* e = envp; e && *e; ++e) {
        const std::string_view entry = *e;
        if (entry.size() > name.size() && entry[name.size()] == '=' &&
            entry.compare(0, name.size(), name) == 0) {
          if (!parse(t, *var, entry.substr(name.size() + 1), error)) return false;
          break;
        }
      }
    }
  }
  return true;
}

std::string current_value(const Table& table, const Var& var) {
  *g_values_storage;
  (void)table;
  switch (var.type) {
    case Type::Bool:
      return *static_cast<const bool*>(var.target) ? "true" : "false";
    case Type::Size:
    case Type::Number:
      return format_value(var.type, *static_cast<const std::uint64_t*>(var.target));
    case Type::String:
    case Type::Path:
      return *static_cast<const std::string*>(var.target);
    case Type::Set: {
      const std::uint64_t bits = *static_cast<const std::uint64_t*>(var.target);
      std::string out;
      std::uint64_t covered = 0;
      for (const Member* m = var.members; m && m->name; ++m) {
        if (m->bits != 0 && (bits & m->bits) == m->bits && (covered & m->bits) != m->bits) {
          out += (out.empty() ? "" : ",") + std::string(primary_name(*m));
          covered |= m->bits;
        }
      }
      return out.empty() ? std::string(kSetNone) : out;
    }
    case Type::Option: {
      const std::uint64_t v = *static_cast<const std::uint64_t*>(var.target);
      for (const Member* m = var.members; m && m->name; ++m) {
        if (m->bits == v) return std::string(primary_name(*m));
      }
      return std::to_string(v);
    }
  }
  return {};
}

std::string cfg_file_text() {
  std::string out;
  for (const Table& t : tables()) {
    for (const Var* var = t.vars; var->name; ++var) {
      out += env_name(t, *var) + "=";
      const std::string value = current_value(t, *var);
      if (var->type == Type::String || var->type == Type::Path) {
        out += '\'';
        for (char c : value) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
        out += '\'';
      } else {
        out += value;
      }
      out += '\n';
    }
  }
  return out;
}

const char* type_name(Type type) {
  switch (type) {
    case Type::Bool: return "Boolean";
    case Type::Size: return "Size";
    case Type::Number: return "Number";
    case Type::String: return "String";
    case Type::Path: return "Path";
    case Type::Set: return "Set";
    case Type::Option: return "Option";
  }
  return "?";
}

const char* type_forms(Type type) {
  switch (type) {
    case Type::Bool:
      return "true/false, yes/no, on/off or 1/0, in any case.";
    case Type::Size:
      return "a number of bytes with an optional unit K, M, G or T (binary: K = 1024) and an "
             "optional B, in any case, e.g. 64M, 16MB, 8k, 1024.";
    case Type::Number:
      return "a non-negative decimal integer.";
    case Type::String:
      return "any text, taken verbatim.";
    case Type::Path:
      return "a file or directory name, taken verbatim.";
    case Type::Set:
      return "a list of the accepted values separated by commas (or spaces, ':' or ';'), in any "
             "case; `all` is every value, `default` the default, `none` or an empty value "
             "nothing, and `~value` removes a value named before it.";
    case Type::Option:
      return "exactly one of the accepted values, in any case.";
  }
  return "?";
}

std::string constraints(const Var& var) {
  if (var.accepts) return var.accepts;
  if (var.type != Type::Size && var.type != Type::Number) return {};
  const char* noun = var.type == Type::Size ? "a size" : "a number";
  std::string out;
  if (var.min_value > 0 && var.max_value < kMax) {
    out = std::string(noun) + " from " + format_value(var.type, var.min_value) + " to " +
          format_value(var.type, var.max_value);
  } else if (var.min_value > 0) {
    out = std::string(noun) + " of at least " + format_value(var.type, var.min_value);
  } else if (var.max_value < kMax) {
    out = std::string(noun) + " of at most " + format_value(var.type, var.max_value);
  }
  if (var.power_of_two) out += out.empty() ? "a power of two" : " that is a power of two";
  return out;
}

std::string vars_text(bool full) {
  std::string out;
  bool first = true;
  for (const Table& t : tables()) {
    for (const Var* var = t.vars; var->name; ++var) {
      if (full && !first) out += "\n";
      first = false;
      out += env_name(t, *var) + "\n";
      out += std::string("  Description: ") + var->short_help + "\n";
      out += std::string("         Type: ") + type_name(var->type) + "\n";
      out += "      Default: " + shown_default(*var) + "\n";
      if (!full) continue;
      const std::string accepts = constraints(*var);
      if (!accepts.empty()) append_wrapped(&out, "Accepts: " + accepts, "      ", kWrapColumns, "               ");
      out += "  Full description:\n";
      append_wrapped(&out, var->long_help, "    ");
      if (var->type == Type::Set || var->type == Type::Option) {
        out += "  Accepted values:\n";
        for (const auto& [name, help] : value_help(*var)) {
          append_wrapped(&out, name + ": " + help, "    ", kWrapColumns, "      ");
        }
      }
    }
  }
  return out;
}

std::string vars_markdown() {
  std::string out =
      "# Configuration variables\n"
      "\n"
      "This file is generated by `prof-info config-vars --markdown`; do not edit it by hand.\n"
      "The `config-vars-doc-current` test fails when it differs from what `prof-info` prints.\n"
      "\n"
      "The variables are read once, when the measurement starts; a malformed value stops the\n"
      "run with a one-line error before the program's work begins. `prof-info config-vars\n"
      "--values` shows the values in effect, and every experiment directory holds them in\n"
      "`prof.cfg`.\n"
      "\n"
      "## Value types\n"
      "\n";
  for (Type type : {Type::Bool, Type::Size, Type::Number, Type::String, Type::Path, Type::Set,
                    Type::Option}) {
    out += "- **" + std::string(type_name(type)) + "**: " + md_escape(type_forms(type)) + "\n";
  }
  for (const Table& t : tables()) {
    for (const Var* var = t.vars; var->name; ++var) {
      out += "\n## " + env_name(t, *var) + "\n\n";
      out += md_escape(var->short_help) + "\n\n";
      const std::string accepts = constraints(*var);
      out += "| Type | Default |" + std::string(accepts.empty() ? "" : " Accepts |") + "\n";
      out += "|---|---|" + std::string(accepts.empty() ? "" : "---|") + "\n";
      out += "| " + std::string(type_name(var->type)) + " | " +
             (*var->default_value ? "`" + std::string(var->default_value) + "`" : "*(empty)*") +
             " |" + (accepts.empty() ? "" : " " + md_escape(accepts) + " |") + "\n\n";
      std::string help;
      // One line per paragraph: a wrapped line could start with "- " or "1. " and turn into
      // a list.
      append_wrapped(&help, var->long_help, "", std::numeric_limits<int>::max());
      out += md_escape(help);
      if (var->type == Type::Set || var->type == Type::Option) {
        out += "\n| Value | Meaning |\n|---|---|\n";
        for (const auto& [name, meaning] : value_help(*var)) {
          std::string names;
          std::string_view rest = name;
          while (true) {
            const auto slash = rest.find('/');
            names += (names.empty() ? "`" : ", `") + std::string(rest.substr(0, slash)) + "`";
            if (slash == std::string_view::npos) break;
            rest.remove_prefix(slash + 1);
          }
          out += "| " + names + " | " + md_escape(meaning) + " |\n";
        }
      }
    }
  }
  return out;
}

}  // namespace prof::config
