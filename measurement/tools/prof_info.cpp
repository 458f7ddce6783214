// SPDX-License-Identifier: BSD-3-Clause
// prof-info: the configuration variables, their documentation and the values in effect.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "measurement/config/config.hpp"

extern char** environ;

namespace {

namespace config = prof::config;

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

const char kUsage[] =
    "usage: prof-info <command> [option]\n"
    "\n"
    "commands:\n"
    "  config-vars             every configuration variable: description, type, default\n"
    "  config-vars --full      also the full description and the accepted values\n"
    "  config-vars --values    the values in effect in this environment, as in prof.cfg\n"
    "  config-vars --markdown  the reference as markdown (share/doc/config-vars.md)\n"
    "  --version               print the version\n"
    "  --help                  print this help\n";

void error(const std::string& message) { std::cerr << "prof-info: error: " << message << "\n"; }

int usage_error(const std::string& message) {
  error(message);
  std::cerr << kUsage;
  return kExitUsage;
}

int print(const std::string& text) {
  std::cout << text << std::flush;
  if (!std::cout) {
    error("cannot write to standard output");
    return kExitError;
  }
  return 0;
}

int config_vars(const std::vector<std::string>& options) {
  if (options.size() > 1) {
    return usage_error("config-vars takes at most one of --full, --values and --markdown");
  }
  const std::string option = options.empty() ? "" : options.front();
  if (option.empty()) return print(config::vars_text(false));
  if (option == "--full") return print(config::vars_text(true));
  if (option == "--markdown") return print(config::vars_markdown());
  if (option == "--values") {
    std::string why;
    std::vector<std::string> warnings;
    const bool ok = config::load(environ, &why, &warnings);
    for (const std::string& w : warnings) std::cerr << "prof-info: warning: " << w << "\n";
    if (!ok) {
      error(why);
      return kExitError;
    }
    return print(config::cfg_file_text());
  }
  return usage_error("unknown option '" + option + "' for config-vars");
}

int run(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("no command given");
  const std::string& command = args.front();
  if (command == "--help" || command == "-h" || command == "help") return print(kUsage);
  if (command == "--version") return print(std::string("prof-info ") + PROF_VERSION + "\n");
  if (command == "config-vars") return config_vars({args.begin() + 1, args.end()});
  return usage_error("unknown command '" + command + "'");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run({argv + 1, argv + argc});
  } catch (const std::exception& e) {
    error(e.what());
  } catch (...) {
    error("unexpected exception");
  }
  return kExitError;
}
