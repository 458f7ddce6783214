// SPDX-License-Identifier: BSD-3-Clause
// Where prof-wrap finds libprof and the prof headers: <prefix>/lib and <prefix>/include, with
// <prefix> the directory above prof-wrap's own bin/, the same in the build tree and an install.
#pragma once

#include <string>

namespace prof::wrap {

/// The measurement's files, relative to one prefix.
struct Layout {
  std::string prefix;

  std::string lib_dir() const { return prefix + "/lib"; }
  std::string include_dir() const { return prefix + "/include"; }
  std::string libprof() const { return lib_dir() + "/libprof.so"; }
  std::string libprof_static() const { return lib_dir() + "/libprof.a"; }  ///< for -static links
  std::string instrumented_header() const { return include_dir() + "/prof/instrumented.h"; }
  std::string gcc_plugin() const { return lib_dir() + "/prof_gcc_plugin.so"; }
  /// Fortran's prof_user.mod (built where prof was built with a Fortran compiler).
  std::string fortran_module_dir() const { return include_dir() + "/prof/fortran"; }
  bool fortran_modules_exist() const;
};

/// The layout for an executable at `exe_path` (".../bin/prof-wrap" → prefix "...").
Layout layout_for_executable(const std::string& exe_path);

/// The program a command name runs: the name itself when it has a '/', else its first executable
/// PATH entry, else the name unchanged (prof-wrap's compilers, prof-run's programs).
std::string program_path(const std::string& name);

/// The running executable's real path (/proc/self/exe, symlinks resolved). Throws WrapError.
std::string self_executable();

/// Throws WrapError naming the first file of the layout that does not exist (libprof.a too
/// for a -static link).
void check_layout(const Layout& layout, bool static_link = false);

}  // namespace prof::wrap
