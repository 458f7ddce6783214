// SPDX-License-Identifier: BSD-3-Clause
// prof-wrap: runs a compiler command with the instrumentation and measurement libraries added.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "measurement/filter/filter.hpp"
#include "install_layout.hpp"
#include "object_symbols.hpp"
#include "toolchain.hpp"

#ifndef PROF_VERSION
#define PROF_VERSION "unknown"
#endif
#ifndef PROF_WRAP_CUDA_ROOT
#define PROF_WRAP_CUDA_ROOT "/usr/local/cuda"  // PROF_CUDA_ROOT when prof was configured
#endif

extern char** environ;

namespace {

using namespace prof::wrap;

const char kUsage[] =
    "Usage: prof-wrap [prof-options] <compiler> [compiler arguments...]\n"
    "\n"
    "Adds compiler instrumentation to compile steps and links the prof measurement into\n"
    "link steps; everything else runs unchanged. Supported compilers: %s; any other\n"
    "is driven like GCC (-finstrument-functions), with a notice.\n"
    "\n"
    "Options (before the compiler name):\n"
    "  -h, --help       show this help and exit\n"
    "      --version    show the version and exit\n"
    "  -v, --verbose    print each command on stderr before running it\n"
    "      --dry-run    print the commands, do not run them (implies --verbose)\n"
    "      --nocompiler no compiler instrumentation (-finstrument-functions); still link libprof\n"
    "      --compiler   undo --nocompiler (the default)\n"
    "      --user       enable the PROF_USER_* macros of <prof/user.h> (-DPROF_USER_ENABLE)\n"
    "      --nouser     undo --user (the default)\n"
    "      --keep-files keep the generated adapter list (source and object)\n"
    "      --instrument=plugin|functions|auto  how compile steps are instrumented: prof's GCC\n"
    "                   plugin (hooks only in functions not declared inline, each with a static\n"
    "                   region descriptor; needs the GCC version prof was built with), or compiler\n"
    "                   hooks (functions: -finstrument-functions; clang: -finstrument-functions-\n"
    "                   after-inlining). auto (the default): the plugin where it fits (Fortran\n"
    "                   always gets -finstrument-functions: the plugin cannot see it)\n"
    "      --instrument-filter=FILE  a filter file (prof or Score-P syntax), checked now; the GCC\n"
    "                   plugin leaves the functions it excludes without hooks, and the runtime\n"
    "                   applies it to what other compilers instrumented\n"
    "      --mpp=mpi|none|auto  link the MPI adapter (records MPI calls, one experiment for all\n"
    "                   ranks): auto (the default) for MPI compiler wrappers (mpicc, mpicxx...)\n"
    "                   and links with -lmpi\n"
    "      --cuda       link the CUDA adapter (records CUDA calls and kernels through CUPTI)\n"
    "      --nocuda     never link it. Without either, CUDA programs get it: nvcc, a .cu input,\n"
    "                   -lcudart, -lcudart_static or -lcuda, or nvcc's -cudart=...; where prof was\n"
    "                   built without it (no CUPTI), they are linked without it, with a notice\n"
    "      --noopenmp   no OpenMP adapter: without it, links with -fopenmp get it (records parallel\n"
    "                   regions, team threads, barriers, loops, tasks, locks: PROF_OPENMP_ENABLE)\n"
    "      --           end of prof-wrap options; the next word is the compiler\n"
    "\n"
    "Environment:\n"
    "  PROF_WRAPPER=off                     run the compiler unchanged (also 0, no, false);\n"
    "                                       use it while configuring (cmake, ./configure)\n"
    "  PROF_WRAPPER_INSTRUMENTER_FLAGS=...  extra prof-wrap options, before the command line's\n"
    "  PROF_WRAPPER_COMPILER_FLAGS=...      extra compiler arguments, right after the compiler name\n"
    "\n"
    "Per-compiler wrappers for build systems: prof-gcc, prof-g++, prof-cc, prof-c++, prof-clang,\n"
    "prof-clang++, prof-mpicc, prof-mpicxx, prof-nvcc, prof-gfortran, prof-mpifort, prof-mpif90, e.g.\n"
    "  PROF_WRAPPER=off cmake -DCMAKE_C_COMPILER=prof-gcc ... && make\n"
    "nvcc: host code only (-Xcompiler, -Xlinker); device code and nvcc's generated host stubs\n"
    "are never instrumented (with --instrument=functions the kernels' host-side launch functions are).\n";

void print_usage(std::FILE* to) { std::fprintf(to, kUsage, supported_compilers().c_str()); }

std::vector<char*> c_argv(std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (auto& a : argv) v.push_back(a.data());
  v.push_back(nullptr);
  return v;
}

[[noreturn]] void exec_or_die(std::vector<std::string> argv) {
  auto v = c_argv(argv);
  ::execvp(v[0], v.data());
  const int err = errno;
  std::fprintf(stderr, "prof-wrap: error: cannot run '%s': %s; check the compiler name and PATH\n", v[0],
               std::strerror(err));
  std::exit(127);
}

volatile std::sig_atomic_t g_child = 0;

// Forward termination signals to the compiler, so that prof-wrap itself lives to remove its
// temporary files and then reports the compiler's death as 128+signal.
extern "C" void forward_signal(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

// Runs argv and returns its exit status (128+signal if it was killed).
int run(std::vector<std::string> argv) {
  auto v = c_argv(argv);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, v[0], nullptr, nullptr, v.data(), environ);
  if (rc != 0) {
    std::fprintf(stderr, "prof-wrap: error: cannot run '%s': %s; check the compiler name and PATH\n", v[0],
                 std::strerror(rc));
    return 127;
  }
  g_child = pid;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "prof-wrap: error: waiting for '%s' failed: %s\n", v[0], std::strerror(errno));
      g_child = 0;
      return 1;
    }
  }
  g_child = 0;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// A private directory for the generated adapter list; removed at the end unless kept.
struct WorkDir {
  std::string path;
  bool keep = false;
  ~WorkDir() {
    if (path.empty()) return;
    if (keep) {
      std::fprintf(stderr, "prof-wrap: kept the adapter list in %s\n", path.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// What `argv` prints on stdout (its stderr discarded), or nothing when it fails.
std::optional<std::string> command_output(const std::vector<std::string>& argv) {
  const std::string cmd = shell_join(argv) + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  char buf[512];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  if (::pclose(p) != 0) return std::nullopt;
  return out;
}

/// The compiler's own version (-dumpfullversion), "" when it does not say.
std::string compiler_version(const std::string& compiler) {
  std::string v = command_output({compiler, "-dumpfullversion"}).value_or("");
  v = v.substr(0, v.find('\n'));
  while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.pop_back();
  return v;
}

/// The compiler an MPI compiler wrapper runs, as it says: Open MPI's --showme:command, else
/// MPICH's and Intel MPI's -show. "" when neither answers (the wrapper is then driven like GCC).
std::string mpi_wrapped_compiler(const std::string& wrapper, bool verbose) {
  for (const char* ask : {"--showme:command", "-show"}) {
    const std::string compiler = compiler_in_show_output(command_output({wrapper, ask}).value_or(""));
    if (compiler.empty()) continue;
    if (verbose) std::fprintf(stderr, "prof-wrap: %s runs %s (%s %s)\n", wrapper.c_str(), compiler.c_str(), wrapper.c_str(), ask);
    return compiler;
  }
  if (verbose) std::fprintf(stderr, "prof-wrap: %s does not say which compiler it runs (--showme:command, -show); driven like GCC\n", wrapper.c_str());
  return "";
}

/// An object or archive of an executable's link that leaves an MPI function undefined:
/// "MPI_Init in main.o", or "" when none does.
std::string mpi_call_in_inputs(const Plan& plan) {
  // A serial build against an MPI stand-in (-lmpi_stubs, libmpi_stubs.a) calls MPI_ functions
  // that are no MPI.
  auto stand_in = [](const std::string& name) { return name.find("mpi") != std::string::npos && name.find("stub") != std::string::npos; };
  for (const std::string& l : plan.libraries)
    if (stand_in(l)) return "";
  for (const Input& in : plan.inputs)
    if (stand_in(in.path.substr(in.path.rfind('/') == std::string::npos ? 0 : in.path.rfind('/') + 1))) return "";
  for (const Input& in : plan.inputs) {
    if (in.kind != InputKind::Object && in.kind != InputKind::StaticLib) continue;
    const std::string symbol = first_undefined_symbol(in.path, "MPI_");
    if (!symbol.empty()) return symbol + " in " + in.path;
  }
  return "";
}

/// A text that changes when the file changes: path, size, modification time.
std::string file_stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path + ":missing";
  return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

/// Whether `compiler` really loads the plugin: its version string can match while its build
/// differs (another configuration, a cross compiler), and GCC then refuses the plugin. One trial
/// compile of an empty file answers it; a success is kept in $XDG_CACHE_HOME/prof (or
/// ~/.cache/prof), keyed by the compiler's and the plugin's path, size and time. Empty when it
/// loads, else GCC's first line.
std::string plugin_load_error(const std::string& compiler, const std::string& plugin) {
  std::error_code ec;
  const std::string program = program_path(compiler);
  const std::filesystem::path real = std::filesystem::canonical(program, ec);  // gcc -> gcc-12
  const std::string key = file_stamp(ec ? program : real.string()) + "|" + file_stamp(plugin);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016zx", std::hash<std::string>{}(key));
  std::string cache_dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) cache_dir = std::string(x) + "/prof";
  else if (const char* h = std::getenv("HOME"); h && *h) cache_dir = std::string(h) + "/.cache/prof";
  const std::string cache = cache_dir.empty() ? "" : cache_dir + "/gcc-plugin-" + hex;
  if (!cache.empty()) {
    std::ifstream in(cache);
    std::string line;
    if (std::getline(in, line)) return line == "ok" ? "" : line;
  }
  const std::string cmd = shell_quote(compiler) + " -fplugin=" + shell_quote(plugin) + " -x c -c /dev/null -o /dev/null 2>&1";
  std::string answer = "ok";
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[512] = {0};
    const bool said = std::fgets(buf, sizeof buf, p) != nullptr;
    if (::pclose(p) != 0) {
      answer = said ? buf : "the trial compile failed";
      while (!answer.empty() && (answer.back() == '\n' || answer.back() == '\r')) answer.pop_back();
      if (answer.empty() || answer == "ok") answer = "the trial compile failed";
    }
  }
  // Only a success is kept: a failure may be passing (a full disk, a broken environment), and
  // a compiler that cannot load the plugin just pays the trial on each compile step.
  if (!cache.empty() && answer == "ok") {
    std::filesystem::create_directories(cache_dir, ec);
    const std::string tmp = cache + ".tmp" + std::to_string(::getpid());
    std::ofstream(tmp) << answer << "\n";
    std::filesystem::rename(tmp, cache, ec);
    if (ec) std::filesystem::remove(tmp, ec);
  }
  return answer == "ok" ? "" : answer;
}

/// Fills options.gcc_plugin when compile steps are to load the GCC plugin; says why not when
/// --instrument=plugin asked for it (an error) or, with --verbose, what was chosen.
void choose_instrumentation(Options& options, const Plan& plan, const Layout& layout) {
  if (!plan.compiles || options.nocompiler) return;
  const Toolchain* tc = toolchain_for(plan, options);
  std::string hooks_flag;
  for (const auto& f : tc->instrument_flags)
    if (hooks_flag.empty() && f.rfind("-finstrument", 0) == 0) hooks_flag = f;
  const char* hooks = hooks_flag.c_str();
  if (options.instrument == Instrument::Functions) {
    if (options.verbose) std::fprintf(stderr, "prof-wrap: instrumentation: %s (--instrument=functions)\n", hooks);
    return;
  }
  // The user's own -f[no-]instrument-functions (the last one counts): with it, the compiler's
  // hooks and the user's choice decide, as they do without the plugin.
  std::string user_flag;
  for (std::size_t i = 1; i < plan.argv.size(); ++i)
    if (plan.argv[i] == "-finstrument-functions" || plan.argv[i] == "-fno-instrument-functions") user_flag = plan.argv[i];
  if (!user_flag.empty()) {
    if (options.instrument == Instrument::Plugin && user_flag == "-finstrument-functions")
      throw WrapError("--instrument=plugin and -finstrument-functions would instrument every function twice; drop one of them");
    if (options.verbose) std::fprintf(stderr, "prof-wrap: instrumentation: %s (the command has %s)\n", hooks, user_flag.c_str());
    return;
  }
  const std::string plugin = layout.gcc_plugin();
  std::error_code ec;
  // nvcc: the plugin goes to its host compiler, which is what must fit.
  const std::string host = host_compiler(plan, *tc);
  // Fortran sources (gfortran, mpifort, or gcc given a .f90): the compiler's hooks.
  std::string why = gcc_plugin_unusable_for(plan);
  if (why.empty())
    why = gcc_plugin_unusable(*tc, tc->gcc ? compiler_version(host) : "", plugin, std::filesystem::exists(plugin, ec));
  if (why.empty()) {
    const std::string load = plugin_load_error(host, plugin);
    if (!load.empty()) why = "the compiler cannot load it (" + load + ")";
  }
  if (why.empty()) {
    options.gcc_plugin = plugin;
    if (options.verbose) std::fprintf(stderr, "prof-wrap: instrumentation: GCC plugin %s\n", plugin.c_str());
    return;
  }
  if (options.instrument == Instrument::Plugin)
    throw WrapError("--instrument=plugin: the GCC plugin cannot be used: " + why + "; use --instrument=functions");
  if (options.verbose) std::fprintf(stderr, "prof-wrap: instrumentation: %s (the GCC plugin does not fit: %s)\n", hooks, why.c_str());
}

/// Where an adapter's own library is in `layout` (lib<library>.so).
std::string library_path(const Layout& layout, const AdapterEntry& a) { return layout.lib_dir() + "/lib" + a.library + ".so"; }

bool library_exists(const Layout& layout, const AdapterEntry& a) {
  std::error_code ec;
  return std::filesystem::exists(library_path(layout, a), ec);
}

std::string temp_root() {
  const char* t = std::getenv("TMPDIR");
  return (t && *t) ? t : "/tmp";
}

int wrap(const std::vector<std::string>& args) {
  // PROF_WRAPPER=off: a pure pass-through, for configure checks and wrapper recursion.
  if (auto cmd = passthrough_command(std::getenv("PROF_WRAPPER"), args)) exec_or_die(*cmd);

  const CommandLine cl = parse_command_line(args, std::getenv("PROF_WRAPPER_INSTRUMENTER_FLAGS"),
                                            std::getenv("PROF_WRAPPER_COMPILER_FLAGS"));
  if (cl.options.help) {
    print_usage(stdout);
    return 0;
  }
  if (cl.options.version) {
    std::printf("prof-wrap %s\n", PROF_VERSION);
    return 0;
  }
  Options opt = cl.options;
  opt.sanitize = PROF_WRAP_SANITIZE;
  opt.sanitizer_runtime = PROF_WRAP_SANITIZER_RUNTIME;
  for (const auto& f : opt.instrument_filters) {
    // A malformed filter fails the build here, not the run later.
    prof::filter::Filter filter;
    std::string err;
    if (!filter.load(f, &err)) throw WrapError("--instrument-filter: " + err);
  }
  const Plan plan = classify(cl.compiler_argv);

  Layout layout = layout_for_executable(self_executable());
  if (plan.compiles || plan.links) check_layout(layout, plan.links_executable() && plan.static_link);
  // The compiler we run must not be wrapped again (mpicc calling a prof-gcc, a CC=prof-gcc make),
  // nor the version query and trial compile that choose the instrumentation.
  ::setenv("PROF_WRAPPER", "off", 1);
  if (const Toolchain* tc = find_toolchain(plan.argv[0]); tc && tc->mpi && (plan.compiles || plan.links))
    opt.mpi_wrapped_compiler = mpi_wrapped_compiler(plan.argv[0], opt.verbose);
  choose_instrumentation(opt, plan, layout);

  if (plan.links && !plan.relocatable) {
    const Toolchain& tc = *toolchain_for(plan, opt);
    // The CUDA adapter where prof was built without it (no CUPTI): an automatic decision goes on
    // without it, with one notice; --cuda cannot be honoured.
    for (const AdapterEntry* a : linked_adapters(plan, tc, opt)) {
      if (std::string(a->name) != "cuda" || library_exists(layout, *a)) continue;
      const std::string missing = library_path(layout, *a) + " does not exist: prof was built without its CUDA adapter (no CUPTI under " +
                                  PROF_WRAP_CUDA_ROOT + " when it was configured)";
      if (opt.cuda == Cuda::On)
        throw WrapError(missing + "; rebuild prof with the CUDA toolkit installed (configure with -DPROF_CUDA_ROOT=<toolkit>), or drop --cuda");
      std::fprintf(stderr, "prof-wrap: notice: %s; CUDA calls and kernels are not recorded (rebuild prof with "
                           "-DPROF_CUDA_ROOT=<toolkit> to record them; --nocuda drops this notice)\n", missing.c_str());
      opt.cuda_adapter_missing = true;
    }
    const auto adapters = linked_adapters(plan, tc, opt);
    if (opt.verbose) std::fprintf(stderr, "prof-wrap: adapters: %s\n", adapter_decisions(plan, tc, opt).c_str());
    bool mpi = false;
    for (const AdapterEntry* a : adapters) mpi = mpi || std::string(a->name) == "mpi";
    // An executable whose objects call MPI, linked without the adapter although nobody said
    // --mpp=none (MPI reached through a library prof-wrap does not recognise as MPI's): its
    // ranks would each write an experiment of their own without MPI events. One line says so
    // (and the program says it again when it runs).
    if (!mpi && opt.mpp == Mpp::Auto && plan.links_executable()) {
      const std::string call = mpi_call_in_inputs(plan);
      if (!call.empty())
        std::fprintf(stderr, "prof-wrap: warning: %s calls MPI (%s) but the link names no MPI library prof-wrap recognises, so it gets "
                             "no MPI adapter: MPI calls are not recorded and each rank writes its own experiment; link with prof-wrap "
                             "mpicc/mpicxx, or add --mpp=mpi (--mpp=none drops this warning)\n",
                     plan.output.value_or("a.out").c_str(), call.c_str());
    }
    // Adapters in libraries of their own (MPI, CUDA): prof must have been built with them (a
    // missing CUDA adapter was dealt with above, so only MPI's can be missing here).
    for (const AdapterEntry* a : adapters) {
      if (!a->library) continue;
      if (plan.static_link)
        throw WrapError(std::string("-static links with the ") + a->name + " adapter are not supported; link dynamically, or use " +
                        a->off_option);
      if (!library_exists(layout, *a))
        throw WrapError(library_path(layout, *a) + " does not exist: prof was built without its " + a->name +
                        " adapter (no MPI library when it was configured); rebuild prof with MPI installed (Debian: libopenmpi-dev), or link with --mpp=none");
    }
  }

  WorkDir dir;
  WorkFiles files;
  const bool adapter_list = plan.links_executable();
  if (adapter_list) {
    if (opt.dry_run) {
      dir.path.clear();
      files.adapter_source = temp_root() + "/prof-wrap.XXXXXX/prof_adapters.c";
      files.adapter_object = temp_root() + "/prof-wrap.XXXXXX/prof_adapters.o";
    } else {
      std::string tmpl = temp_root() + "/prof-wrap.XXXXXX";
      if (!::mkdtemp(tmpl.data()))
        throw WrapError("cannot create a directory in " + temp_root() + ": " + std::strerror(errno) +
                        "; set TMPDIR to a writable directory");
      dir.path = tmpl;
      dir.keep = opt.keep_files;
      files.adapter_source = tmpl + "/prof_adapters.c";
      files.adapter_object = tmpl + "/prof_adapters.o";
    }
  }

  const auto commands = build_commands(plan, layout, opt, files);
  bool known = true;
  toolchain_for(plan.argv[0], &known);
  if (!known && (plan.compiles || plan.links))
    std::fprintf(stderr, "prof-wrap: notice: '%s' is not a compiler prof knows (%s); it is driven like GCC: "
                         "-finstrument-functions, -Wl, link options\n",
                 plan.argv[0].c_str(), supported_compilers().c_str());
  if (adapter_list && !opt.dry_run) {
    std::ofstream out(files.adapter_source);
    out << adapter_list_source(linked_adapters(plan, *toolchain_for(plan, opt), opt), opt.instrument_filters, opt.mpp == Mpp::None,
                               sanitizer_default_options(opt));
    if (!out.flush()) throw WrapError("cannot write " + files.adapter_source + "; check TMPDIR");
  }

  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);

  for (const auto& cmd : commands) {
    if (opt.verbose) std::fprintf(stderr, "%s\n", shell_join(cmd).c_str());
    if (opt.dry_run) continue;
    if (const int status = run(cmd); status != 0) return status;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return wrap(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "prof-wrap: error: %s; see prof-wrap --help\n", e.what());
    print_usage(stderr);
    return 1;
  } catch (const WrapError& e) {
    std::fprintf(stderr, "prof-wrap: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "prof-wrap: error: %s\n", e.what());
    return 1;
  }
}
