// SPDX-License-Identifier: BSD-3-Clause
// JSON text for the tools' --json outputs (prof-score, prof-report): strings and numbers.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace prof::json {

/// A JSON string literal: quotes, backslashes and control characters escaped.
inline std::string json_string(const std::string& in) {
  std::string out = "\"";
  for (unsigned char c : in) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// A JSON number: integers exactly, others with 9 significant digits; NaN and infinities as null.
inline std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 9e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace prof::json
