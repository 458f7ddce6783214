// SPDX-License-Identifier: BSD-3-Clause
// Text from outside (an environment value, a filter file's token) as a message quotes it: control
// characters written as \n, \t or \xNN, so that every message stays one line. Header-only, no deps.
#pragma once

#include <string>
#include <string_view>

namespace prof {

inline std::string one_line(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace prof
