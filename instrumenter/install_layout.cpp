// SPDX-License-Identifier: BSD-3-Clause
// Locates the measurement relative to prof-wrap's own executable.
#include "install_layout.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "command_line.hpp"

namespace prof::wrap {

namespace fs = std::filesystem;

std::string program_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t at = 0; at <= dirs.size();) {
    std::size_t colon = dirs.find(':', at);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string dir = dirs.substr(at, colon - at);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    at = colon + 1;
  }
  return name;
}

bool Layout::fortran_modules_exist() const {
  std::error_code ec;
  return fs::exists(fortran_module_dir() + "/prof_user.mod", ec);
}

Layout layout_for_executable(const std::string& exe_path) {
  return Layout{fs::path(exe_path).lexically_normal().parent_path().parent_path().string()};
}

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw WrapError("cannot read /proc/self/exe (" + ec.message() + "); prof-wrap needs a mounted /proc");
  return p.string();
}

void check_layout(const Layout& layout, bool static_link) {
  for (const std::string& f : {layout.libprof(), layout.instrumented_header()}) {
    std::error_code ec;
    if (!fs::exists(f, ec))
      throw WrapError(f + " does not exist; build the 'prof' target (or install prof) next to this prof-wrap");
  }
  std::error_code ec;
  if (static_link && !fs::exists(layout.libprof_static(), ec))
    throw WrapError(layout.libprof_static() +
                    " does not exist; build the 'prof_static' target (or install prof) for -static links");
}

}  // namespace prof::wrap
