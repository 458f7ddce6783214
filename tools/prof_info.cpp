// SPDX-License-Identifier: BSD-3-Clause
// prof-info: the configuration variables, their documentation and the values in effect.
#include <unistd.h>

#include <dlfcn.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "measurement/config/config.hpp"
#include "measurement/metrics/metrics.hpp"

#if __has_include(<papi.h>)
#include <papi.h>
#endif

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
    "  instrumentation [CC]    how prof-wrap instruments compile steps of CC (default: gcc, g++,\n"
    "                          clang, mpicc, nvcc), as prof-wrap decides it: the GCC plugin or\n"
    "                          the compiler's hooks, and why\n"
    "  sampling                the sampling events this machine supports now (PROF_SAMPLING_EVENTS)\n"
    "  metrics                 the perf events and PAPI events usable here now, PAPI's disabled\n"
    "                          components and why, the getrusage fields (PROF_METRIC_*)\n"
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

#ifndef PROF_GCC_PLUGIN_VERSION
#define PROF_GCC_PLUGIN_VERSION ""
#endif

/// What `prof-wrap --instrument=auto <cc>` does for a compile step, asked of the prof-wrap next to
/// this program (--dry-run: it runs only the version query and the plugin's trial compile), so that
/// the answer is prof-wrap's own decision: "GCC plugin <path>" or the compiler's hooks and why.
int instrumentation(const std::vector<std::string>& compilers) {
  std::string self(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  self.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  const std::string bin = self.substr(0, self.find_last_of('/'));
  const std::string wrap = bin + "/prof-wrap";
  if (::access(wrap.c_str(), X_OK) != 0) {
    error(wrap + " is missing: prof-info asks prof-wrap how it instruments; reinstall prof");
    return 1;
  }
  const std::string plugin_version = PROF_GCC_PLUGIN_VERSION;
  const std::string plugin = bin.substr(0, bin.find_last_of('/')) + "/lib/prof_gcc_plugin.so";
  std::string out;
  if (plugin_version.empty()) out += "GCC plugin: not built (no GCC plugin headers when prof was built; Debian: gcc-12-plugin-dev)\n";
  else out += "GCC plugin: " + plugin + (::access(plugin.c_str(), R_OK) == 0 ? "" : " (missing!)") + ", for GCC " + plugin_version + "\n";
  auto quote = [](const std::string& w) {
    std::string q = "'";
    for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  for (const std::string& cc : compilers) {
    // A C file for every compiler (nvcc and the MPI wrappers compile C as well), but a Fortran
    // file for Fortran compilers (gfortran, mpifort, mpif90, mpif77), which prof-wrap instruments
    // differently.
    const std::string base = cc.substr(cc.find_last_of('/') == std::string::npos ? 0 : cc.find_last_of('/') + 1);
    const bool fortran = base.find("fortran") != std::string::npos || base.rfind("mpif", 0) == 0;
    const std::string probe = fortran ? "prof_info_probe.f90" : "prof_info_probe.c";
    const std::string cmd = quote(wrap) + " --dry-run " + quote(cc) + " -c " + probe + " -o prof_info_probe.o 2>&1";
    std::string how, said;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char line[1024];
      const std::string tag = "prof-wrap: instrumentation: ";
      while (std::fgets(line, sizeof line, p)) {
        std::string l(line);
        while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
        if (l.rfind(tag, 0) == 0) how = l.substr(tag.size());
        else if (said.empty() && l.rfind("prof-wrap: ", 0) == 0) said = l;
      }
      ::pclose(p);
    }
    out += "  " + cc + ": " + (how.empty() ? (said.empty() ? "prof-wrap did not say" : said) : how) + "\n";
  }
  return print(out);
}

// What perf_event_open grants this process now, per event prof samples with, and the fallback
// PROF_SAMPLING_EVENTS would take.
int sampling() {
  struct Event {
    const char* name;
    std::uint32_t type;
    std::uint64_t config;
    const char* unit;
  };
  const Event events[] = {{"perf_cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"},
                          {"perf_cpu_clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "ns"},
                          {"perf_task_clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "ns"}};
  std::string out = "sampling events (PROF_SAMPLING_EVENTS=<event>@<period>):\n";
  for (const Event& e : events) {
    perf_event_attr a;
    std::memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = e.type;
    a.config = e.config;
    a.sample_period = 1000000;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    const long fd = ::syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    const int err = errno;
    if (fd >= 0) ::close(static_cast<int>(fd));
    out += std::string("  ") + e.name + "@<" + e.unit + ">: " + (fd >= 0 ? "available" : std::string("not available (") + std::strerror(err) + ")") + "\n";
  }
  out += "  timer@<us>: available (a POSIX timer on the thread's CPU time; it fires at the kernel tick at most)\n";
  std::ifstream paranoid("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  if (paranoid >> level) out += "perf_event_paranoid: " + level + " (above 2 forbids perf_event_open to unprivileged users)\n";
  void* h = ::dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  out += std::string("call stacks (PROF_ENABLE_UNWINDING): ") +
         (h ? "libunwind.so.8 found" : "libunwind.so.8 not found (Debian: libunwind8): samples record only the interrupted function") + "\n";
  out += "fallback when refused: perf_cycles -> perf_cpu_clock (period as ns) -> timer (period / 1000 as us)\n";
  return print(out);
}

// PROF_METRIC_PERF's events, each opened on this thread as prof would open it, and closed.
std::string perf_events() {
  namespace m = prof::metrics;
  std::string out = "perf events countable here (PROF_METRIC_PERF=<name>,...; append :u, :k or :uk for the domain):\n";
  std::vector<std::pair<std::string, std::vector<std::string>>> refused;  // why -> events
  bool hardware = false;
  for (const m::PerfEventName& n : m::perf_event_names()) {
    m::PerfSpec spec;
    m::parse_perf_event(n.name, &spec);
    const int fd = m::open_perf_event(spec, -1);
    if (fd >= 0) {
      ::close(fd);
      hardware = hardware || spec.hardware;
      out += std::string("  ") + n.name + ": " + n.description + " (" + n.unit + (n.kernel ? ", kernel domain" : "") + ")\n";
      continue;
    }
    const std::string why = m::perf_open_error(spec, fd);
    std::size_t i = 0;
    while (i < refused.size() && refused[i].first != why) ++i;
    if (i == refused.size()) refused.push_back({why, {}});
    refused[i].second.push_back(n.name);
  }
  if (hardware) out += "  r<hex>: a raw event of this CPU's PMU (its vendor's event code)\n";
  for (const auto& [why, names] : refused) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    out += "  not here: " + list + ": " + why + "\n";
  }
  return out;
}

// The perf events, the PAPI events of this machine (presets that exist here, then every
// component's native events, as papi_avail and papi_native_avail list them, and the components
// PAPI disabled, with PAPI's reason) and the getrusage fields.
int metrics() {
  std::string out = perf_events();
#if __has_include(<papi.h>)
  int version = 0;
  void* h = prof::metrics::open_papi(&version);
  auto init = h ? reinterpret_cast<int (*)(int)>(::dlsym(h, "PAPI_library_init")) : nullptr;
  auto enum_event = h ? reinterpret_cast<int (*)(int*, int)>(::dlsym(h, "PAPI_enum_event")) : nullptr;
  auto enum_cmp = h ? reinterpret_cast<int (*)(int*, int, int)>(::dlsym(h, "PAPI_enum_cmp_event")) : nullptr;
  auto info = h ? reinterpret_cast<int (*)(int, PAPI_event_info_t*)>(::dlsym(h, "PAPI_get_event_info")) : nullptr;
  auto components = h ? reinterpret_cast<int (*)()>(::dlsym(h, "PAPI_num_components")) : nullptr;
  auto component = h ? reinterpret_cast<const PAPI_component_info_t* (*)(int)>(::dlsym(h, "PAPI_get_component_info")) : nullptr;
  auto create = h ? reinterpret_cast<int (*)(int*)>(::dlsym(h, "PAPI_create_eventset")) : nullptr;
  auto add = h ? reinterpret_cast<int (*)(int, int)>(::dlsym(h, "PAPI_add_event")) : nullptr;
  auto start = h ? reinterpret_cast<int (*)(int)>(::dlsym(h, "PAPI_start")) : nullptr;
  auto stop = h ? reinterpret_cast<int (*)(int, long long*)>(::dlsym(h, "PAPI_stop")) : nullptr;
  auto cleanup = h ? reinterpret_cast<int (*)(int)>(::dlsym(h, "PAPI_cleanup_eventset")) : nullptr;
  auto destroy = h ? reinterpret_cast<int (*)(int*)>(::dlsym(h, "PAPI_destroy_eventset")) : nullptr;
  // "Usable now": the event alone on an event set of this thread starts (as prof would start it).
  auto countable = [&](int code) {
    int set = PAPI_NULL;
    if (create(&set) != PAPI_OK) return false;
    const bool ok = add(set, code) == PAPI_OK && start(set) == PAPI_OK;
    long long v[8];
    if (ok) stop(set, v);
    cleanup(set);
    destroy(&set);
    return ok;
  };
  if (!init || !enum_event || !enum_cmp || !info || !components || !component || !create || !add || !start || !stop ||
      !cleanup || !destroy || init(version) != version) {
    out += "PAPI: not available (no libpapi of PAPI 7, or it does not initialise; Debian: libpapi-dev)\n";
  } else {
    // A disabled component has no events at all: say which and PAPI's reason (what
    // papi_component_avail says), e.g. perf_event on a CPU that PAPI's libpfm4 does not know.
    std::string disabled;
    for (int c = 0; c < components(); ++c)
      if (const PAPI_component_info_t* ci = component(c); ci && ci->disabled)
        disabled += std::string("  ") + ci->name + ": " + (ci->disabled_reason[0] ? ci->disabled_reason : "no reason given") + "\n";
    if (!disabled.empty())
      out += "PAPI components disabled here (their events cannot be used; PROF_METRIC_PERF and PROF_METRIC_RUSAGE need no "
             "PAPI):\n" + disabled;
    out += "PAPI presets available here (PROF_METRIC_PAPI=<name>,...):\n";
    int code = PAPI_PRESET_MASK;
    std::size_t n = 0;
    if (enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK) {
      do {
        PAPI_event_info_t e;
        if (info(code, &e) == PAPI_OK && e.count > 0 && countable(code)) {
          out += std::string("  ") + e.symbol + ": " + e.long_descr + "\n";
          ++n;
        }
      } while (enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
    }
    if (n == 0) out += "  (none: no hardware counters here, e.g. in a VM; software events: PROF_METRIC_PERF, or PAPI's perf:: events)\n";
    out += "PAPI native events countable here (PROF_METRIC_PAPI=<name>,...):\n";
    std::size_t refused = 0, listed = 0;
    for (int c = 0; c < components(); ++c) {
      code = PAPI_NATIVE_MASK;
      if (enum_cmp(&code, PAPI_ENUM_FIRST, c) != PAPI_OK) continue;
      do {
        PAPI_event_info_t e;
        if (info(code, &e) != PAPI_OK) continue;
        if (!countable(code)) {
          ++refused;
          continue;
        }
        out += std::string("  ") + e.symbol + ": " + (e.short_descr[0] ? e.short_descr : e.long_descr) + "\n";
        ++listed;
      } while (enum_cmp(&code, PAPI_ENUM_EVENTS, c) == PAPI_OK);
    }
    if (!listed && !refused) out += "  (none)\n";
    if (refused)
      out += "  (" + std::to_string(refused) + " more native events exist but cannot be counted here now, e.g. hardware events in a VM)\n";
    out += "Events of the kernel (perf::CONTEXT-SWITCHES, perf::CPU-MIGRATIONS) count only with :k=1, e.g.\n"
           "perf::CONTEXT-SWITCHES:k=1: PAPI counts the user domain by default.\n";
  }
#else
  out += "PAPI: prof-info was built without PAPI's header (Debian: libpapi-dev)\n";
#endif
  out += "getrusage fields (PROF_METRIC_RUSAGE=all or <field>,...):\n";
  for (const auto& f : prof::metrics::rusage_fields()) out += std::string("  ") + f.name + ": " + f.description + "\n";
  return print(out);
}

int run(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("no command given");
  const std::string& command = args.front();
  if (command == "--help" || command == "-h" || command == "help") return print(kUsage);
  if (command == "--version") return print(std::string("prof-info ") + PROF_VERSION + "\n");
  if (command == "config-vars") return config_vars({args.begin() + 1, args.end()});
  if (command == "sampling") return sampling();
  if (command == "metrics") return metrics();
  if (command == "instrumentation") {
    std::vector<std::string> compilers(args.begin() + 1, args.end());
    if (compilers.empty()) compilers = {"gcc", "g++", "clang", "mpicc", "nvcc"};
    return instrumentation(compilers);
  }
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
