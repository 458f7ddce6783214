// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the configuration parser: the input is an environment, one NAME=value per line.
//
// Each input is used three ways:
//   1. its lines as the environment of config::load(), as a measured program's would be;
//   2. each line's value parsed alone by config::parse(), for the variable the line names or,
//      when it names none, for the variable its first byte picks, so that every value reaches
//      every type's parser even when load() stopped at an earlier error;
//   3. the whole input (newlines and NULs included) as one value of the variable its first byte picks.
// Checks beyond "no crash, no undefined behaviour, no leak": every message is one non-empty
// line, and a value that parsed gives back, through current_value(), text that parses to the
// same value (the round trip prof.cfg relies on).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "measurement/config/config.hpp"

namespace {

namespace config = prof::config;

/// At most 200 bytes of `s`, control characters as \xNN, for the line that explains an abort.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 200)) {
    const auto u = static_cast<unsigned char>(c);
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02x", u);
    out += (u < 0x20 || u == 0x7f) ? std::string(hex) : std::string(1, c);
  }
  return out;
}

[[noreturn]] void violated(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_config: %s: '%s'\n", what, printable(detail).c_str());
  std::abort();
}

void check_message(std::string_view message) {
  if (message.empty()) violated("empty message", message);
  if (message.find_first_of("\n\r") != std::string_view::npos) violated("message of more than one line", message);
}

struct Entry {
  const config::Table* table;
  const config::Var* var;
};

const std::vector<Entry>& all_vars() {
  static const std::vector<Entry> vars = [] {
    std::vector<Entry> out;
    for (const config::Table& t : config::tables())
      for (const config::Var* v = t.vars; v->name; ++v) out.push_back({&t, v});
    return out;
  }();
  return vars;
}

/// Parses `value` for `e`; when it parses, the value in effect must survive a round trip
/// through current_value().
void parse_one(const Entry& e, std::string_view value) {
  std::string error;
  if (!config::parse(*e.table, *e.var, value, &error)) {
    check_message(error);
    return;
  }
  const std::string shown = config::current_value(*e.table, *e.var);
  if (!config::parse(*e.table, *e.var, shown, &error)) violated("current_value() does not parse again", shown + " (" + error + ")");
  const std::string again = config::current_value(*e.table, *e.var);
  if (again != shown) violated("current_value() changes on a round trip", shown + " -> " + again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::vector<Entry>& vars = all_vars();

  // 1. The lines as an environment; an entry ends at a NUL, as a C string does.
  std::vector<std::string> lines;
  for (std::size_t at = 0; at <= input.size();) {
    const std::size_t end = std::min(input.find('\n', at), input.size());
    const std::string_view line = input.substr(at, end - at);
    lines.emplace_back(line.substr(0, line.find('\0')));
    at = end + 1;
  }
  std::vector<const char*> envp;
  for (const std::string& l : lines) envp.push_back(l.c_str());
  envp.push_back(nullptr);
  std::string error;
  std::vector<std::string> warnings;
  if (config::load(envp.data(), &error, &warnings)) {
    (void)config::cfg_file_text();
  } else {
    check_message(error);
  }
  for (const std::string& w : warnings) check_message(w);

  // 2. Each line's value alone.
  for (const std::string& l : lines) {
    const std::size_t eq = l.find('=');
    if (eq == std::string::npos || l.empty()) continue;
    const config::Table* table = nullptr;
    const config::Var* var = config::find_var(std::string_view(l).substr(0, eq), &table);
    const Entry e = var ? Entry{table, var} : vars[static_cast<unsigned char>(l[0]) % vars.size()];
    parse_one(e, std::string_view(l).substr(eq + 1));
  }

  // 3. The whole input as one value.
  if (!input.empty()) parse_one(vars[data[0] % vars.size()], input.substr(1));
  return 0;
}
