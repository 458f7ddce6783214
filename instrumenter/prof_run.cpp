// SPDX-License-Identifier: BSD-3-Clause
// prof-run [options] [--] <program> [args...]: measures a dynamically linked program that was not
// built with prof-wrap. It preloads libprof_run.so (the adapter list and the start before main,
// run_preload.cpp), libprof.so (pthreads, the measurement core) and, for an MPI program,
// libprof_mpi.so (PMPI interposition: it must come before libmpi, so it is chosen here, before the
// program starts: when the program or a library it needs links libmpi, or with --mpi, e.g. for
// Python with mpi4py, which loads MPI later). Without compiler hooks the program's own code is
// seen through call-stack sampling, on by default. Then it execs the program: same process, same
// environment variables, same experiment directory and outputs as a prof-wrap'd program. A Python
// interpreter runs its script as under python3 -m prof (Python functions as regions), prof's
// Python package found next to prof-run (PROFRUN_PYTHONPATH).
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "install_layout.hpp"

namespace {

using prof::wrap::WrapError;

void print_usage(FILE* to) {
  std::fputs(
      "Usage: prof-run [options] [--] <program> [args...]\n"
      "Measures a dynamically linked program that was not built with prof-wrap (prof's\n"
      "PROF_* variables apply as to a prof-wrap'd program).\n"
      "  --mpi          record MPI calls (default: when the program links libmpi; give it for\n"
      "                 programs that load MPI later, e.g. python3 with mpi4py)\n"
      "  --nompi        do not record MPI calls\n"
      "  --nocuda       do not record CUDA and NVTX (default: recorded whenever the program\n"
      "                 initialises CUDA, also when it loads CUDA later, as PyTorch does)\n"
      "  --cuda         fail unless prof can record CUDA\n"
      "  --nosampling   no call-stack sampling (default: on, perf_cpu_clock@1000000, 1 kHz of\n"
      "                 CPU time, or timer@1000 where perf events are not permitted)\n"
      "  --sampling=E   PROF_SAMPLING_EVENTS=E for this run (a PROF_SAMPLING_EVENTS already set\n"
      "                 is kept as it is)\n"
      "  -v, --verbose  PROF_VERBOSE=1: one line says which adapters are on and why\n"
      "  -h, --help     this text\n"
      "Only the program itself is measured: programs it starts run without prof; a fork's\n"
      "child writes nothing.\n",
      to);
}

/// The interpreter of a "#!" script, or "" for other files.
std::string script_interpreter(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (!std::getline(f, line) || line.rfind("#!", 0) != 0) return "";
  std::size_t at = line.find_first_not_of(" \t", 2);
  if (at == std::string::npos) return "";
  std::size_t end = line.find_first_of(" \t", at);
  std::string interp = line.substr(at, end == std::string::npos ? std::string::npos : end - at);
  // "#!/usr/bin/env python3": the program env runs.
  if (interp.size() >= 4 && interp.compare(interp.size() - 4, 4, "/env") == 0 && end != std::string::npos) {
    std::size_t a = line.find_first_not_of(" \t", end);
    if (a != std::string::npos) {
      std::size_t e = line.find_first_of(" \t", a);
      interp = prof::wrap::program_path(line.substr(a, e == std::string::npos ? std::string::npos : e - a));
    }
  }
  return interp;
}

/// Whether `path` is an ELF program that names a dynamic loader (PT_INTERP): only those take
/// LD_PRELOAD, and only those may be started with LD_TRACE_LOADED_OBJECTS (a static program
/// would run for real).
bool has_dynamic_loader(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  Elf64_Ehdr eh;
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
    return false;
  for (unsigned k = 0; k < eh.e_phnum; ++k) {
    Elf64_Phdr ph;
    f.seekg(static_cast<std::streamoff>(eh.e_phoff + k * sizeof ph));
    if (!f.read(reinterpret_cast<char*>(&ph), sizeof ph)) return false;
    if (ph.p_type == PT_INTERP) return true;
  }
  return false;
}

/// The dynamic loader's list of the libraries `program` loads at start ("" and `*dynamic` false
/// for a static or unreadable executable).
std::string loaded_libraries(const std::string& program, bool* dynamic) {
  int fds[2];
  *dynamic = false;
  if (!has_dynamic_loader(program) || ::pipe(fds) != 0) return "";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);
    ::close(fds[0]);
    ::setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);  // what ldd does, without running the program
    ::unsetenv("LD_PRELOAD");
    ::execl(program.c_str(), program.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR);)
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  if (pid > 0) ::waitpid(pid, &status, 0);
  *dynamic = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return out;
}

/// The first library of `libs` whose name starts with one of `prefixes`, or "".
std::string needs(const std::string& libs, std::initializer_list<const char*> prefixes) {
  std::size_t at = 0;
  while (at < libs.size()) {
    std::size_t end = libs.find('\n', at);
    if (end == std::string::npos) end = libs.size();
    std::string line = libs.substr(at, end - at);
    const std::size_t b = line.find_first_not_of(" \t");
    if (b != std::string::npos) {
      line = line.substr(b, line.find_first_of(" \t", b) - b);
      const std::string base = line.substr(line.find_last_of('/') + 1);
      for (const char* p : prefixes)
        if (base.rfind(p, 0) == 0) return base;
    }
    at = end + 1;
  }
  return "";
}

/// Whether this process may open a software CPU clock perf event (perf_event_paranoid, seccomp).
bool perf_clock_permitted() {
  struct perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  const long fd = ::syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
  if (fd < 0) return false;
  ::close(static_cast<int>(fd));
  return true;
}

/// The folder that holds prof's Python package (…/prof/__main__.py) for the prefix: the build
/// tree's <prefix>/python, or <prefix>/lib/python3/dist-packages, <prefix>/lib/python3.X/dist-packages
/// of an install. "" when there is none (prof built without python3-dev).
std::string python_package_dir(const std::string& prefix) {
  std::vector<std::string> dirs = {prefix + "/python", prefix + "/lib/python3/dist-packages"};
  if (DIR* d = ::opendir((prefix + "/lib").c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::strncmp(e->d_name, "python3.", 8) == 0) dirs.push_back(prefix + "/lib/" + e->d_name + "/dist-packages");
    ::closedir(d);
  }
  for (const std::string& dir : dirs)
    if (::access((dir + "/prof/__main__.py").c_str(), R_OK) == 0) return dir;
  return "";
}

bool is_rank_zero() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const char* r = std::getenv(v)) return std::strcmp(r, "0") == 0;
  return true;
}

int run(int argc, char** argv) {
  int mpi = -1;   // -1: as the program's libraries say
  int cuda = -1;  // -1: whenever the program initialises CUDA
  bool sampling = true, verbose = false;
  std::string sampling_events;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') break;
    if (a == "--mpi") mpi = 1;
    else if (a == "--nompi") mpi = 0;
    else if (a == "--cuda") cuda = 1;
    else if (a == "--nocuda") cuda = 0;
    else if (a == "--nosampling") sampling = false;
    else if (a.rfind("--sampling=", 0) == 0) sampling_events = a.substr(11);
    else if (a == "-v" || a == "--verbose") verbose = true;
    else if (a == "-h" || a == "--help") {
      print_usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "prof-run: error: unknown option '%s'; see prof-run --help\n", a.c_str());
      return 2;
    }
  }
  if (i >= argc) {
    std::fprintf(stderr, "prof-run: error: no program to run; e.g. prof-run ./app, prof-run python3 train.py\n");
    print_usage(stderr);
    return 2;
  }
  const std::string program = prof::wrap::program_path(argv[i]);
  const bool in_path = program.find('/') != std::string::npos;  // a bare name that PATH lacks stays bare
  if (!in_path || ::access(program.c_str(), X_OK) != 0)
    throw WrapError("cannot run '" + std::string(argv[i]) + "': " +
                    (!in_path ? "not found in PATH" : std::string(std::strerror(errno))) + "; give its path");
  const prof::wrap::Layout layout = prof::wrap::layout_for_executable(prof::wrap::self_executable());
  const std::string run_lib = layout.lib_dir() + "/libprof_run.so", mpi_lib = layout.lib_dir() + "/libprof_mpi.so";
  for (const std::string& f : {run_lib, layout.libprof()})
    if (::access(f.c_str(), R_OK) != 0) throw WrapError("prof's library '" + f + "' is missing; reinstall prof");

  // What the program loads at start: that of its interpreter for a script (an interpreter that is
  // a script itself, e.g. a pyenv shim, is followed once more).
  std::string interp = script_interpreter(program);
  if (!interp.empty() && !has_dynamic_loader(interp)) {
    const std::string next = script_interpreter(interp);
    if (!next.empty()) interp = next;
  }
  const std::string binary = interp.empty() ? program : interp;
  bool dynamic = false;
  const std::string libs = loaded_libraries(binary, &dynamic);
  if (!dynamic)
    throw WrapError("'" + binary + "' is not a dynamically linked program (or cannot run here): prof-run measures " +
                    "programs through the dynamic loader; build a static one with prof-wrap instead");

  std::vector<std::string> preload = {run_lib, layout.libprof()};
  std::string adapters = "pthread (always)", off;
  const std::string libmpi = needs(libs, {"libmpi.so", "libmpich.so", "libmpi_"});
  if (mpi == 1 || (mpi == -1 && !libmpi.empty())) {
    if (::access(mpi_lib.c_str(), R_OK) != 0)
      throw WrapError("MPI is asked for, but prof was built without its MPI adapter ('" + mpi_lib +
                      "' is missing); install libopenmpi-dev and rebuild prof, or run with --nompi");
    preload.push_back(mpi_lib);
    adapters += mpi == 1 ? ", mpi (--mpi)" : ", mpi (the program loads " + libmpi + "; --nompi turns it off)";
  } else {
    off += mpi == 0 ? ", mpi (--nompi)" : ", mpi (no libmpi at start; --mpi for programs that load it later)";
  }
  // CUDA through its injection variables: the driver loads libprof_cuda.so at cuInit (also when
  // the program loads CUDA late, as PyTorch does), NVTX at its first call.
  const std::string cuda_lib = layout.lib_dir() + "/libprof_cuda.so";
  const std::string libcuda = needs(libs, {"libcudart.so", "libcuda.so"});
  if (cuda == 0) {
    off += ", cuda (--nocuda)";
  } else if (::access(cuda_lib.c_str(), R_OK) != 0) {
    if (cuda == 1 || !libcuda.empty())
      throw WrapError("the program " + (libcuda.empty() ? std::string("is to record CUDA (--cuda)") : "loads " + libcuda) +
                      ", but prof was built without its CUDA adapter ('" + cuda_lib +
                      "' is missing: no CUPTI where prof was built); rebuild prof with PROF_CUDA_ROOT set, or run with --nocuda");
    off += ", cuda (prof was built without its CUDA adapter)";
  } else {
    const char* other = std::getenv("CUDA_INJECTION64_PATH");
    if (other && *other && cuda_lib != other) {
      std::fprintf(stderr, "prof-run: warning: CUDA_INJECTION64_PATH names another tool (%s): prof records no CUDA; unset it, "
                           "or run with --nocuda\n", other);
      off += ", cuda (CUDA_INJECTION64_PATH names another tool)";
    } else {
      ::setenv("CUDA_INJECTION64_PATH", cuda_lib.c_str(), 1);
      const char* nvtx = std::getenv("NVTX_INJECTION64_PATH");
      if (!nvtx || !*nvtx) ::setenv("NVTX_INJECTION64_PATH", cuda_lib.c_str(), 1);
      ::setenv("PROFRUN_CUDA_PID", std::to_string(::getpid()).c_str(), 1);
      adapters += libcuda.empty() ? ", cuda and nvtx (when the program initialises CUDA or calls NVTX; --nocuda turns it off)"
                                  : ", cuda and nvtx (the program loads " + libcuda + "; --nocuda turns it off)";
    }
  }

  std::string sampling_line;
  if (const char* given = std::getenv("PROF_SAMPLING_EVENTS"); given && sampling_events.empty())
    sampling_line = std::string(*given ? "as PROF_SAMPLING_EVENTS=" : "off (PROF_SAMPLING_EVENTS is empty)") + given;
  else if (!sampling)
    sampling_line = "off (--nosampling)";
  else {
    if (sampling_events.empty()) sampling_events = perf_clock_permitted() ? "perf_cpu_clock@1000000" : "timer@1000";
    ::setenv("PROF_SAMPLING_EVENTS", sampling_events.c_str(), 1);
    sampling_line = sampling_events + (sampling_events == "perf_cpu_clock@1000000" ? " (1 kHz of each thread's CPU time)"
                                       : sampling_events == "timer@1000"          ? " (1 kHz of each thread's CPU time; perf events are not permitted here)"
                                                                                  : "") +
                    "; --nosampling turns it off";
  }
  if (verbose) ::setenv("PROF_VERBOSE", "1", 0);
  const char* v = std::getenv("PROF_VERBOSE");
  if (v && std::strtol(v, nullptr, 10) >= 1 && is_rank_zero())
    std::fprintf(stderr, "prof: prof-run: adapters: %s%s%s; sampling: %s\n", adapters.c_str(), off.empty() ? "" : "; off: ",
                 off.empty() ? "" : off.c_str() + 2, sampling_line.c_str());

  std::string ours, all;
  for (const std::string& p : preload) ours += (ours.empty() ? "" : ":") + p;
  all = ours;
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) all += std::string(":") + old;
  ::setenv("LD_PRELOAD", all.c_str(), 1);
  ::setenv("PROFRUN_PRELOAD", ours.c_str(), 1);
  ::setenv("PROFRUN_PID", std::to_string(::getpid()).c_str(), 1);
  // prof's Python package, for a Python interpreter (libprof_run.so runs its script as
  // python3 -m prof does): the build tree's <prefix>/python, or an install's dist-packages.
  if (const std::string dir = python_package_dir(layout.prefix); !dir.empty()) ::setenv("PROFRUN_PYTHONPATH", dir.c_str(), 1);
  ::execv(program.c_str(), argv + i);
  throw WrapError("cannot run '" + program + "': " + std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "prof-run: error: %s\n", e.what());
    return 127;
  }
}
