// SPDX-License-Identifier: BSD-3-Clause
// libprof_run.so: what prof-run preloads (first, before libprof.so and, for MPI, libprof_mpi.so)
// into a program that prof-wrap never saw. It stands in for the two things prof-wrap's link step
// gives an executable:
//  - the adapter list (prof_linked_adapters, which libprof's registry references weakly): chosen
//    at start from the adapters present in the process, i.e. the libraries prof-run preloaded;
//  - the call of prof_init before main: from a wrapper of main that __libc_start_main gets, so that
//    it runs where an executable's constructor would (after every library's static initialisers,
//    after libc registered the dynamic linker's exit handler, which prof's must precede).
// Only the process that prof-run started is measured (PROFRUN_PID, the launcher's pid, which exec
// keeps); a shell in between (a job script, a pyenv shim, env) passes the measurement on to the
// program it execs and to the programs worth measuring that it starts (PROFRUN_SHELLS). Before a
// measured program's main, the libraries prof-run added (PROFRUN_PRELOAD) leave LD_PRELOAD again,
// so that programs it starts in turn run as they would without prof (a prof-run in front of them
// measures them), and a fork's child never writes (the runtime's fork handler).
// A program built with prof-wrap carries its own list and constructor: it is measured once, as
// built, and this library stays out of the way.
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
struct prof_adapter {
  const char* name;
};

#define PROF_RUN_API __attribute__((visibility("default")))

// libprof's registry reads this list (nullptr-terminated; exported as prof_linked_adapters),
// filled in before prof_init. This library writes it by its hidden name: a prof-wrap'd program
// defines prof_linked_adapters itself (read-only), and that definition wins for every reference
// by the exported name, ours included.
__attribute__((visibility("hidden"))) const prof_adapter* prof_run_adapters[8] = {};
extern PROF_RUN_API const prof_adapter* prof_linked_adapters[8] __attribute__((alias("prof_run_adapters")));
}

namespace {

using MainFn = int (*)(int, char**, char**);
using StartFn = int (*)(MainFn, int, char**, void (*)(), void (*)(), void (*)(), void*);

MainFn g_main = nullptr;

/// Whether this process is the one prof-run started.
bool measured_process() {
  const char* pid = std::getenv("PROFRUN_PID");
  return pid && std::strtol(pid, nullptr, 10) == static_cast<long>(::getpid());
}

/// Whether this process was started (fork+exec) by a shell that prof-run measures: PROFRUN_SHELLS
/// lists their pids.
bool child_of_measured_shell() {
  const char* shells = std::getenv("PROFRUN_SHELLS");
  if (!shells) return false;
  const long parent = static_cast<long>(::getppid());
  for (const char* p = shells; *p;) {
    char* end = nullptr;
    const long pid = std::strtol(p, &end, 10);
    if (end == p) break;
    if (pid == parent) return true;
    p = *end ? end + 1 : end;
  }
  return false;
}

/// The running executable's path ("" when unknown).
std::string self_exe() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  exe[n] = 0;
  return exe;
}

/// Of the programs a measured shell (a job script) runs, the ones measured: a Python interpreter,
/// and any program outside the system's folders (./app, /opt/..., a venv); the system's helpers
/// (/usr/bin/hostname, mkdir, date, mpirun...) run as they would without prof.
bool worth_measuring() {
  if (::dlsym(RTLD_DEFAULT, "Py_BytesMain")) return true;
  const std::string exe = self_exe();
  for (const char* system : {"/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/lib/", "/usr/libexec/", "/lib/", "/usr/lib64/"})
    if (exe.rfind(system, 0) == 0) return false;
  return !exe.empty();
}

/// LD_PRELOAD without the entries of PROFRUN_PRELOAD (both ':'/' '-separated lists).
void forget_preload() {
  const char* ours = std::getenv("PROFRUN_PRELOAD");
  const char* preload = std::getenv("LD_PRELOAD");
  if (ours && preload) {
    std::string kept, all = preload, mine = std::string(":") + ours + ":";
    for (std::size_t at = 0; at <= all.size();) {
      std::size_t end = all.find_first_of(": ", at);
      if (end == std::string::npos) end = all.size();
      const std::string item = all.substr(at, end - at);
      if (!item.empty() && mine.find(":" + item + ":") == std::string::npos) kept += (kept.empty() ? "" : ":") + item;
      at = end + 1;
    }
    if (kept.empty()) ::unsetenv("LD_PRELOAD");
    else ::setenv("LD_PRELOAD", kept.c_str(), 1);
  }
  ::unsetenv("PROFRUN_PRELOAD");
  ::unsetenv("PROFRUN_PID");
  ::unsetenv("PROFRUN_PYTHONPATH");
  ::unsetenv("PROFRUN_SHELLS");
}

// ---- a Python interpreter: run the script as python3 -m prof does ----

/// Whether prof's package folder `dir` (…/prof's parent) has the extension for the running
/// Python, whose version Py_GetVersion gives ("3.12.1 (main, …)": _prof.cpython-312-*.so).
bool has_extension_for(const std::string& dir, const char* version, std::string* tag) {
  const char* dot = std::strchr(version, '.');
  if (!dot) return false;
  *tag = std::string(version, dot) + std::string(dot + 1, std::strcspn(dot + 1, ".+ "));
  const std::string want = "_prof.cpython-" + *tag + "-";
  DIR* d = ::opendir((dir + "/prof").c_str());
  if (!d) return false;
  bool found = false;
  while (dirent* e = ::readdir(d))
    if (std::strncmp(e->d_name, want.c_str(), want.size()) == 0) found = true;
  ::closedir(d);
  return found;
}

/// The interpreter's arguments with `-m prof --measured --` put before the script (or before
/// `-m module`), so that Python functions are regions as under python3 -m prof. Empty when the
/// command has no script to run that way (-c, stdin, --version) or ignores PYTHONPATH (-E, -I):
/// `why` says so.
std::vector<char*> python_argv(int argc, char** argv, std::string* why) {
  static char kM[] = "-m", kProf[] = "prof", kMeasured[] = "--measured", kDashes[] = "--";
  std::vector<char*> out = {argv[0]};
  static std::vector<std::string> split;  // a combined "-um" becomes "-u" and "-m"
  for (int i = 1; i < argc; ++i) {
    const std::string t = argv[i];
    if (t == "--" || t[0] != '-') {
      const int script = t == "--" ? i + 1 : i;
      if (script >= argc || std::strcmp(argv[script], "-") == 0) break;
      for (char* a : {kM, kProf, kMeasured, kDashes}) out.push_back(a);
      for (int k = script; k < argc; ++k) out.push_back(argv[k]);
      out.push_back(nullptr);
      return out;
    }
    if (t == "-") break;  // the script on standard input
    if (t.rfind("--", 0) == 0) {
      if (t == "--check-hash-based-pycs" && i + 1 < argc) out.push_back(argv[i++]);
      else if (t == "--help" || t == "--version") break;
      out.push_back(argv[i]);
      continue;
    }
    bool takes_next = false;
    for (std::size_t j = 1; j < t.size(); ++j) {
      const char c = t[j];
      if (c == 'E' || c == 'I') {
        *why = "the interpreter runs with -E or -I, which ignore PYTHONPATH: run python3 -m prof instead";
        return {};
      }
      if (c == 'c') {
        *why = "a command (-c) is not a script: run a script, or python3 -m prof -m module";
        return {};
      }
      if (c == 'm') {
        const std::string module = j + 1 < t.size() ? t.substr(j + 1) : (i + 1 < argc ? argv[i + 1] : "");
        if (module.empty()) return {};
        if (j > 1) out.push_back(const_cast<char*>(split.emplace_back(t.substr(0, j)).c_str()));
        for (char* a : {kM, kProf, kMeasured}) out.push_back(a);
        // python3 -m prof [options] script: prof's own front end, told that prof-run runs it already.
        if (module != "prof") {
          for (char* a : {kDashes, kM}) out.push_back(a);
          out.push_back(const_cast<char*>(split.emplace_back(module).c_str()));
        }
        for (int k = i + (j + 1 < t.size() ? 1 : 2); k < argc; ++k) out.push_back(argv[k]);
        out.push_back(nullptr);
        return out;
      }
      if (c == 'W' || c == 'X') {
        takes_next = j + 1 == t.size();
        break;
      }
    }
    out.push_back(argv[i]);
    if (takes_next && i + 1 < argc) out.push_back(argv[++i]);
  }
  if (why->empty()) *why = "no script to run (an interactive interpreter, standard input or --version)";
  return {};
}

bool verbose() {
  const char* v = std::getenv("PROF_VERBOSE");
  return v && std::strtol(v, nullptr, 10) >= 1;
}

/// Whether this process is a shell or a launcher that execs the real program (a pyenv shim, a job
/// script, `env`, `numactl`): the exec keeps the pid, so the measurement passes on to that program.
bool is_shell() {
  const std::string exe = self_exe();
  if (exe.empty()) return false;
  const char* base = std::strrchr(exe.c_str(), '/');
  base = base ? base + 1 : exe.c_str();
  for (const char* sh : {"sh", "bash", "dash", "zsh", "ksh", "mksh", "env", "nice", "nohup", "stdbuf", "taskset",
                         "numactl", "chrt", "ionice"})
    if (std::strcmp(base, sh) == 0) return true;
  return false;
}

int main_with_measurement(int argc, char** argv, char** envp) {
  const bool direct = measured_process(), via_shell = !direct && child_of_measured_shell();
  // A shell started by prof-run (or by such a shell): the program it execs (same pid) and the
  // programs worth measuring that it starts (a job script's python3 train.py, ./app) are measured,
  // each with its own experiment.
  if ((direct || via_shell) && is_shell()) {
    const char* old = std::getenv("PROFRUN_SHELLS");
    const std::string me = std::to_string(::getpid());
    ::setenv("PROFRUN_SHELLS", (old && *old ? std::string(old) + "," + me : me).c_str(), 1);
    return g_main(argc, argv, envp);
  }
  const bool measured = direct || (via_shell && worth_measuring());
  // Its CUDA too (the injection library starts only in the process PROFRUN_CUDA_PID names).
  if (via_shell && measured && std::getenv("PROFRUN_CUDA_PID")) ::setenv("PROFRUN_CUDA_PID", std::to_string(::getpid()).c_str(), 1);
  const char* pypath = std::getenv("PROFRUN_PYTHONPATH");
  const std::string python_dir = pypath ? pypath : "";
  forget_preload();
  const void* theirs = ::dlsym(RTLD_DEFAULT, "prof_linked_adapters");
  if (measured && theirs == static_cast<const void*>(prof_run_adapters)) {
    // The adapters present: libprof's own, and those of the libraries prof-run preloaded.
    int n = 0;
    for (const char* name : {"prof_adapter_user", "prof_adapter_pthread", "prof_adapter_openmp", "prof_adapter_mpi", "prof_adapter_cuda"})
      if (const void* a = ::dlsym(RTLD_DEFAULT, name)) prof_run_adapters[n++] = static_cast<const prof_adapter*>(a);
    if (auto init = reinterpret_cast<void (*)()>(::dlsym(RTLD_DEFAULT, "prof_init"))) init();
    else std::fprintf(stderr, "prof: error: prof-run: libprof.so is not loaded (LD_PRELOAD was changed?); nothing is measured\n");
    // A Python interpreter (libpython in the process): its script runs as under python3 -m prof.
    if (auto version = reinterpret_cast<const char* (*)()>(::dlsym(RTLD_DEFAULT, "Py_GetVersion"));
        version && ::dlsym(RTLD_DEFAULT, "Py_BytesMain")) {
      std::string why, tag;
      std::vector<char*> args;
      if (python_dir.empty()) why = "prof's Python package is not installed next to prof-run";
      else if (!has_extension_for(python_dir, version(), &tag))
        why = "prof's Python package (" + python_dir + "/prof) has no extension for Python " +
              std::string(version(), std::strcspn(version(), " ")) +
              "; build prof for it: cmake -DPROF_EXTRA_PYTHONS=/path/to/python (docs/PYTHON.md)";
      else args = python_argv(argc, argv, &why);
      if (!args.empty()) {
        const char* old = std::getenv("PYTHONPATH");
        ::setenv("PYTHONPATH", (python_dir + (old && *old ? std::string(":") + old : "")).c_str(), 1);
        if (verbose())
          std::fprintf(stderr, "prof: prof-run: Python %.*s: Python functions are regions (as python3 -m prof)\n",
                       static_cast<int>(std::strcspn(version(), " ")), version());
        return g_main(static_cast<int>(args.size() - 1), args.data(), envp);
      }
      if (!why.empty()) std::fprintf(stderr, "prof: warning: prof-run: Python functions are not regions, only samples: %s\n", why.c_str());
    }
  }
  return g_main(argc, argv, envp);
}

}  // namespace

extern "C" PROF_RUN_API int __libc_start_main(MainFn main, int argc, char** argv, void (*init)(), void (*fini)(),
                                              void (*rtld_fini)(), void* stack_end) {
  auto real = reinterpret_cast<StartFn>(::dlsym(RTLD_NEXT, "__libc_start_main"));
  g_main = main;
  return real(&main_with_measurement, argc, argv, init, fini, rtld_fini, stack_end);
}
