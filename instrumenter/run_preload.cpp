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
// keeps; a shell in between, e.g. a wrapper script, passes it on to the program it execs): before its main, the libraries prof-run added (PROFRUN_PRELOAD) leave LD_PRELOAD again,
// so that programs it starts in turn run as they would without prof (a prof-run in front of them
// measures them), and a fork's child never writes (the runtime's fork handler).
// A program built with prof-wrap carries its own list and constructor: it is measured once, as
// built, and this library stays out of the way.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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
}

/// Whether this process is a shell or a launcher that execs the real program (a pyenv shim, a job
/// script, `env`, `numactl`): the exec keeps the pid, so the measurement passes on to that program.
bool is_shell() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return false;
  exe[n] = 0;
  const char* base = std::strrchr(exe, '/');
  base = base ? base + 1 : exe;
  for (const char* sh : {"sh", "bash", "dash", "zsh", "ksh", "mksh", "env", "nice", "nohup", "stdbuf", "taskset",
                         "numactl", "chrt", "ionice"})
    if (std::strcmp(base, sh) == 0) return true;
  return false;
}

int main_with_measurement(int argc, char** argv, char** envp) {
  const bool measured = measured_process();
  // A shell started by prof-run: the program it execs (same pid) is the one to measure; programs
  // it forks get their own pid and run unmeasured.
  if (measured && is_shell()) return g_main(argc, argv, envp);
  forget_preload();
  const void* theirs = ::dlsym(RTLD_DEFAULT, "prof_linked_adapters");
  if (measured && theirs == static_cast<const void*>(prof_run_adapters)) {
    // The adapters present: libprof's own, and those of the libraries prof-run preloaded.
    int n = 0;
    for (const char* name : {"prof_adapter_user", "prof_adapter_pthread", "prof_adapter_mpi", "prof_adapter_cuda"})
      if (const void* a = ::dlsym(RTLD_DEFAULT, name)) prof_run_adapters[n++] = static_cast<const prof_adapter*>(a);
    if (auto init = reinterpret_cast<void (*)()>(::dlsym(RTLD_DEFAULT, "prof_init"))) init();
    else std::fprintf(stderr, "prof: error: prof-run: libprof.so is not loaded (LD_PRELOAD was changed?); nothing is measured\n");
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
