// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the filter file parser (prof and Score-P syntax) and its matcher.
//
// The input is a filter file. Checks beyond "no crash, no undefined behaviour, no leak": an
// error is one non-empty line starting with "<file>:<line>: " and leaves the filter unchanged;
// a filter that parsed parses again into as many rules more (parse() appends); every rule's
// pattern is matched against names built from the patterns (fnmatch on fuzzed patterns);
// simplify_path() is idempotent.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "measurement/filter/filter.hpp"

namespace {

using prof::filter::Filter;
using prof::filter::Rule;

constexpr std::string_view kFile = "fuzz.filter";

[[noreturn]] void violated(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_filter: %s: %.*s\n", what, static_cast<int>(std::min<std::size_t>(detail.size(), 200)),
               detail.data());
  std::abort();
}

void check_simplify(std::string_view path) {
  const std::string once = Filter::simplify_path(path);
  if (!path.empty() && once.empty()) violated("simplify_path() made a path empty", path);
  if (Filter::simplify_path(once) != once) violated("simplify_path() is not idempotent", path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Filter filter;
  std::string error;
  if (!filter.parse(text, kFile, &error)) {
    if (error.empty() || error.find_first_of("\n\r") != std::string::npos) violated("bad error message", error);
    if (error.compare(0, kFile.size() + 1, std::string(kFile) + ":") != 0) violated("error without file name", error);
    if (!filter.empty()) violated("a failed parse left rules behind", error);
    return 0;
  }
  const std::size_t rules = filter.rule_count();
  if (!filter.parse(text, kFile, &error) || filter.rule_count() != 2 * rules) violated("second parse differs", error);

  // Names to match: each pattern itself, and the pattern with its wildcards removed. Bounded,
  // so that a large filter does not make one input take seconds.
  std::size_t budget = 64;
  for (const auto* rules_of : {&filter.file_rules(), &filter.region_rules()}) {
    for (const Rule& r : *rules_of) {
      if (budget-- == 0) break;
      if (r.pattern.empty()) violated("empty pattern", text);
      std::string plain;
      for (char c : r.pattern)
        if (c != '*' && c != '?' && c != '[' && c != ']' && c != '\\') plain += c;
      for (const std::string& name : {r.pattern, plain}) {
        (void)filter.excluded(name, name, name);
        (void)filter.explicitly_included(name, "", name);
        check_simplify(name);
      }
    }
  }
  check_simplify(text.substr(0, 4096));
  return 0;
}
