// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by unit tests: a temporary directory and running an external checker.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <catch2/catch.hpp>

namespace prof_test {

struct TempDir {
  std::string path;
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

struct RunResult {
  int rc = -1;
  std::string out;
  std::string err;
};

/// Runs `cmd` with /bin/sh. stderr goes to `err` (through a file in `scratch_dir`), or, when
/// `scratch_dir` is empty, into `out` as well (2>&1).
inline RunResult run(const std::string& cmd, const std::string& scratch_dir) {
  RunResult r;
  const std::string err_file = scratch_dir.empty() ? std::string() : scratch_dir + "/stderr.txt";
  const std::string full = cmd + (err_file.empty() ? std::string(" 2>&1") : " 2>'" + err_file + "'");
  FILE* p = ::popen(full.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!err_file.empty()) {
    std::ifstream in(err_file);
    std::stringstream ss;
    ss << in.rdbuf();
    r.err = ss.str();
    std::remove(err_file.c_str());
  }
  return r;
}

}  // namespace prof_test
