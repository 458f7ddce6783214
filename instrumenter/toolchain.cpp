// SPDX-License-Identifier: BSD-3-Clause
// The toolchain and adapter tables, and the construction of the commands prof-wrap runs.
#include "toolchain.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>

#include "prof_wrap_static_deps.hpp"  // generated: PROF_STATIC_LINK_DEPS

namespace prof::wrap {

namespace {

const std::vector<std::string> kGnuInstrument = {"-finstrument-functions"};
// clang: the hooks after inlining, so that inlined functions call none (there is no plugin of
// ours for clang). clang keeps no exit hook on exception unwinding; prof repairs those frames.
const std::vector<std::string> kClangInstrument = {"-finstrument-functions-after-inlining"};
const std::vector<std::string> kGnuAdapterCompile = {"-x", "c", "-c", "-fno-instrument-functions", "-fPIC"};
// clang (up to at least 14) rejects -fno-instrument-functions; the separate compile has no
// -finstrument-functions to undo anyway.
const std::vector<std::string> kClangAdapterCompile = {"-x", "c", "-c", "-fPIC"};

// nvcc: the host compiler's options through -Xcompiler, which nvcc splits at commas (hence one
// exclude option per name). -finstrument-functions cannot tell the host functions nvcc generates
// for each kernel (they call its __device_stub_) from the user's: those stay instrumented there;
// the GCC plugin leaves them out.
const std::vector<std::string> kNvccInstrument = {
    "-Xcompiler", "-finstrument-functions",
    "-Xcompiler", "-finstrument-functions-exclude-function-list=__device_stub_",
    "-Xcompiler", "-finstrument-functions-exclude-function-list=__cuda",
    "-Xcompiler", "-finstrument-functions-exclude-function-list=__nv_",
    "-Xcompiler", "-finstrument-functions-exclude-function-list=__sti__"};
const std::vector<std::string> kNvccAdapterCompile = {"-x", "c", "-c", "-Xcompiler", "-fPIC"};

// Adding a compiler is one row. The MPI compiler wrappers are GCC underneath (-dumpfullversion
// and -fplugin pass through them).
const Toolchain kToolchains[] = {
    {"gcc", Language::C, false, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"g++", Language::Cxx, false, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"cc", Language::C, false, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"c++", Language::Cxx, false, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"clang", Language::C, false, false, kClangInstrument, kClangAdapterCompile, Dialect::Gnu, false},
    {"clang++", Language::Cxx, false, false, kClangInstrument, kClangAdapterCompile, Dialect::Gnu, false},
    {"mpicc", Language::C, true, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"mpicxx", Language::Cxx, true, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"mpic++", Language::Cxx, true, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"mpiCC", Language::Cxx, true, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"nvcc", Language::Cuda, false, true, kNvccInstrument, kNvccAdapterCompile, Dialect::Nvcc, true},
    // Fortran: gfortran and the MPI wrappers around it. Their Fortran sources get
    // -finstrument-functions, not the GCC plugin: GCC's Fortran front end raises no
    // PLUGIN_PRE_GENERICIZE, so the plugin never sees a Fortran function (gcc_plugin_unusable_for).
    // The adapter list is C, compiled by GCC's C driver (adapter_c_compiler).
    {"gfortran", Language::Fortran, false, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"mpifort", Language::Fortran, true, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"mpif90", Language::Fortran, true, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
    {"mpif77", Language::Fortran, true, false, kGnuInstrument, kGnuAdapterCompile, Dialect::Gnu, true},
};

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

AdapterChoice always(const Plan&, const Toolchain&, const Options&) { return {true, ""}; }

AdapterChoice compiler_instrumentation(const Plan&, const Toolchain&, const Options& o) {
  if (o.nocompiler) return {false, "--nocompiler"};
  return {true, ""};
}

// MPI: an MPI compiler wrapper, or an MPI library on the link line however it is named (-lmpi,
// -lmpi_cxx, -lmpich, a path to libmpi.so as CMake's MPI::MPI_C gives it); --mpp=mpi|none overrides.
AdapterChoice mpi_program(const Plan& p, const Toolchain& tc, const Options& o) {
  if (o.mpp == Mpp::Mpi) return {true, "--mpp=mpi"};
  if (o.mpp == Mpp::None) return {false, "--mpp=none"};
  if (tc.mpi) return {true, std::string(tc.name) + " is an MPI compiler wrapper"};
  if (tc.dialect == Dialect::Nvcc) {
    // nvcc -ccbin mpicxx: the host compiler is an MPI compiler wrapper.
    std::string host = host_compiler(p, tc);
    host = host.substr(host.rfind('/') == std::string::npos ? 0 : host.rfind('/') + 1);
    const Toolchain* h = find_toolchain(host);
    if (h && h->mpi) return {true, "nvcc's host compiler " + host + " is an MPI compiler wrapper"};
  }
  for (const auto& l : p.libraries) {
    // -l:libmpi.so.40 names the file itself.
    if (l.rfind(':', 0) == 0 ? is_mpi_library(l.substr(1)) : is_mpi_library("lib" + l + ".so"))
      return {true, "the link has -l" + l};
  }
  for (const auto& in : p.inputs)
    if ((in.kind == InputKind::SharedLib || in.kind == InputKind::StaticLib) && is_mpi_library(in.path))
      return {true, "the link names " + in.path};
  return {false, "no MPI compiler wrapper or MPI library on the link line"};
}

// CUDA: nvcc, a .cu input, the CUDA runtime or driver library, or nvcc's -cudart (also through a
// compiler prof drives like GCC, e.g. Kokkos' nvcc_wrapper); --cuda and --nocuda override. An
// automatic decision gives way where prof was built without the adapter (main says so).
AdapterChoice cuda_program(const Plan& p, const Toolchain& tc, const Options& o) {
  if (o.cuda == Cuda::On) return {true, "--cuda"};
  if (o.cuda == Cuda::Off) return {false, "--nocuda"};
  std::string why;
  if (tc.cuda) why = "the compiler is " + std::string(tc.name);
  for (const auto& in : p.inputs) {
    if (!why.empty()) break;
    const bool cu = in.path.size() > 3 && in.path.compare(in.path.size() - 3, 3, ".cu") == 0;
    if (cu || in.kind == InputKind::CudaSource) why = in.path + " is CUDA source";
  }
  for (const char* lib : {"cudart", "cudart_static", "cuda"}) {
    if (!why.empty()) break;
    if (std::find(p.libraries.begin(), p.libraries.end(), lib) != p.libraries.end())
      why = std::string("the link has -l") + lib;
  }
  if (why.empty() && !p.cudart.empty()) why = "the command has -cudart=" + p.cudart;
  if (why.empty()) return {false, "no nvcc, .cu input, -lcudart or -lcuda"};
  if (o.cuda_adapter_missing) return {false, why + ", but prof was built without the CUDA adapter"};
  return {true, why};
}

// OpenMP: the link has -fopenmp (or -fopenmp=libomp, -qopenmp, -fiopenmp, nvcc's -Xcompiler
// -fopenmp); --noopenmp leaves the adapter out.
AdapterChoice openmp_program(const Plan& p, const Toolchain&, const Options& o) {
  if (o.noopenmp) return {false, "--noopenmp"};
  for (const auto& a : p.argv) {
    const bool flag = a == "-fopenmp" || a.rfind("-fopenmp=", 0) == 0 || a == "-qopenmp" || a == "-fiopenmp" || a == "-openmp";
    // nvcc -Xcompiler=-fopenmp, -Xcompiler=-O2,-fopenmp
    const bool passed = a.find("=-fopenmp") != std::string::npos || a.find(",-fopenmp") != std::string::npos;
    if (!flag && !passed) continue;
    // Its GOMP wrappers and OMPT's ompt_start_tool are libprof.so's: a -static link runs without.
    if (p.static_link) return {false, "the command has " + a + ", but -static: the OpenMP adapter needs libprof.so"};
    return {true, (flag ? "the command has " : "the command passes ") + a};
  }
  return {false, "no -fopenmp"};
}

// The adapters in the order the runtime initialises them.
const AdapterEntry kAdapters[] = {
    {"compiler", nullptr, "--nocompiler", compiler_instrumentation},
    {"user", nullptr, nullptr, always},
    {"pthread", nullptr, nullptr, always},
    {"openmp", nullptr, "--noopenmp", openmp_program},
    {"mpi", "prof_mpi", "--mpp=none", mpi_program},
    {"cuda", "prof_cuda", "--nocuda", cuda_program},
};

// -static links: every symbol libprof.a wraps, one list shared with the wrappers' sources.
const std::vector<std::string> kStaticWraps = {
#define PROF_WRAP_SYMBOL(file, symbol) #symbol,
#include "adapters/static_wraps.def"
#undef PROF_WRAP_SYMBOL
};

// -static links with Fortran: libgfortran.a calls these through weak references, only when
// libpthread is "active" (pthread_key_create is linked, as libprof.a links it). Nothing else may
// pull them out of libc.a, and a call of a missing one jumps to address 0 (close_unit_1 calls
// pthread_mutex_destroy at exit): -u makes the link take them all (GCC's gthr-posix.h list).
const char* const kGthreadFunctions[] = {
    "pthread_once", "pthread_getspecific", "pthread_setspecific", "pthread_create", "pthread_join", "pthread_equal",
    "pthread_self", "pthread_detach", "pthread_cancel", "sched_yield", "pthread_mutex_lock", "pthread_mutex_trylock",
    "pthread_mutex_timedlock", "pthread_mutex_unlock", "pthread_mutex_init", "pthread_mutex_destroy", "pthread_cond_init",
    "pthread_cond_broadcast", "pthread_cond_signal", "pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_destroy",
    "pthread_key_create", "pthread_key_delete", "pthread_mutexattr_init", "pthread_mutexattr_settype",
    "pthread_mutexattr_destroy"};

// -static links: libprof.a's own libraries (pkg-config --static --libs otf2 libdw when prof was
// configured, then the C++ runtime), so prof-wrap needs no pkg-config.
const std::vector<std::string> kStaticLinkDeps = {PROF_STATIC_LINK_DEPS};

// "gcc-12" → "gcc", "clang++-14" → "clang++"; names without a version suffix stay as they are.
std::string strip_version(const std::string& name) {
  const auto dash = name.rfind('-');
  if (dash == std::string::npos || dash + 1 == name.size()) return name;
  const bool version = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(dash) + 1, name.end(),
                                   [](char c) { return c == '.' || std::isdigit(static_cast<unsigned char>(c)); });
  return version ? name.substr(0, dash) : name;
}

void append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

const Toolchain* toolchain_for(const std::string& compiler, bool* known) {
  if (const Toolchain* tc = find_toolchain(compiler)) {
    if (known) *known = true;
    return tc;
  }
  if (known) *known = false;
  // Any other compiler is driven like GCC: -finstrument-functions, -Wl, options, and the
  // adapter list compiled without GCC-only options. C++ when its name says so.
  static const Toolchain kOtherC = {"other", Language::C, false, false, kGnuInstrument, kClangAdapterCompile, Dialect::Gnu, false};
  static const Toolchain kOtherCxx = {"other", Language::Cxx, false, false, kGnuInstrument, kClangAdapterCompile, Dialect::Gnu, false};
  static const Toolchain kOtherFortran = {"other", Language::Fortran, false, false, kGnuInstrument, kClangAdapterCompile,
                                          Dialect::Gnu, false};
  const std::string name = base_name(compiler);
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  // flang, flang-new, nvfortran, ifort, ifx: their adapter list goes to cc (adapter_c_compiler).
  if (has("fortran") || has("flang") || name.rfind("ifort", 0) == 0 || name.rfind("ifx", 0) == 0) return &kOtherFortran;
  const bool cxx = has("++") || has("xx") || has("CC") || has("cpp") ||
                   (name.size() > 2 && name.compare(name.size() - 2, 2, "px") == 0);  // icpx
  return cxx ? &kOtherCxx : &kOtherC;
}

const Toolchain* toolchain_for(const Plan& plan, const Options& options) {
  const Toolchain* wrapper = toolchain_for(plan.argv.empty() ? std::string() : plan.argv[0]);
  if (!wrapper->mpi || options.mpi_wrapped_compiler.empty()) return wrapper;
  const Toolchain* runs = toolchain_for(options.mpi_wrapped_compiler);
  // GCC underneath: the wrapper's own row (its messages stay "mpicc ..."). A wrapper that says it
  // runs another MPI wrapper is taken at its own word.
  if (runs->mpi || (runs->gcc && runs->instrument_flags == wrapper->instrument_flags)) return wrapper;
  // The wrapper with the options of the compiler it runs, kept for the life of prof-wrap (one
  // entry per wrapper and compiler; tests ask for several).
  static std::deque<std::string> names;
  static std::deque<Toolchain> resolved;
  const std::string name = std::string(wrapper->name) + " (" + base_name(options.mpi_wrapped_compiler) + ")";
  for (const Toolchain& tc : resolved)
    if (name == tc.name) return &tc;
  names.push_back(name);
  // A Fortran wrapper stays Fortran whatever its compiler is called (its adapter list needs a C compiler).
  const Language language = wrapper->language == Language::Fortran ? Language::Fortran : runs->language;
  resolved.push_back({names.back().c_str(), language, true, false, runs->instrument_flags, runs->adapter_compile_flags,
                      runs->dialect, runs->gcc});
  return &resolved.back();
}

std::string compiler_in_show_output(const std::string& output) {
  std::size_t at = 0;
  while (at < output.size()) {
    const std::size_t eol = std::min(output.find('\n', at), output.size());
    const std::vector<std::string> words = split_whitespace(output.substr(at, eol - at).c_str());
    if (!words.empty()) return words.front();
    at = eol + 1;
  }
  return "";
}

bool is_mpi_library(const std::string& path) {
  std::string stem = base_name(path);
  if (stem.rfind("lib", 0) != 0) return false;
  stem = stem.substr(3);
  const auto so = stem.find(".so");
  if (so != std::string::npos && (so + 3 == stem.size() || stem[so + 3] == '.')) stem = stem.substr(0, so);
  else if (stem.size() > 2 && stem.compare(stem.size() - 2, 2, ".a") == 0) stem = stem.substr(0, stem.size() - 2);
  else return false;
  // Open MPI (mpi, mpi_cxx, mpi_mpifh, mpi_usempif08), MPICH (mpich, mpichcxx, mpicxx, mpifort),
  // Intel MPI (mpi, mpicxx, mpifort), HPE MPT (mpi++); not libmpfr, libmpc, nor a serial build's
  // stand-in (LAMMPS' libmpi_stubs.a), which the MPI adapter would replace with the real MPI.
  if (stem.find("stub") != std::string::npos) return false;
  if (stem == "mpi" || stem == "mpicxx" || stem == "mpifort" || stem == "mpi++") return true;
  return stem.rfind("mpi_", 0) == 0 || stem.rfind("mpich", 0) == 0;
}

const Toolchain* find_toolchain(const std::string& compiler) {
  const std::string name = strip_version(base_name(compiler));
  for (const auto& tc : kToolchains)
    if (name == tc.name) return &tc;
  // A cross or target-prefixed name: "x86_64-linux-gnu-gcc".
  for (const auto& tc : kToolchains) {
    const std::string suffix = std::string("-") + tc.name;
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return &tc;
  }
  return nullptr;
}

std::string adapter_c_compiler(const Plan& plan, const Toolchain& tc, const Options& options) {
  const std::string self = plan.argv.empty() ? std::string() : plan.argv[0];
  if (tc.language != Language::Fortran) return self;
  // The Fortran compiler: the command's own, or the one an MPI wrapper runs (gfortran when it
  // did not say).
  std::string fc = self;
  if (tc.mpi) fc = options.mpi_wrapped_compiler.empty() ? std::string("gfortran") : options.mpi_wrapped_compiler;
  const auto slash = fc.rfind('/');
  const auto at = fc.rfind("gfortran");
  // GCC's drivers share a directory, target prefix and version suffix: x86_64-linux-gnu-gfortran-12
  // has x86_64-linux-gnu-gcc-12 beside it.
  if (at != std::string::npos && (slash == std::string::npos || at > slash)) return fc.substr(0, at) + "gcc" + fc.substr(at + 8);
  return "cc";
}

std::string gcc_plugin_unusable_for(const Plan& plan) {
  if (plan.fortran) return "it cannot instrument Fortran (GCC's Fortran front end has no PLUGIN_PRE_GENERICIZE event)";
  return "";
}

std::vector<std::string> host_compiler_option(const Toolchain& tc, const std::string& flag) {
  if (tc.dialect == Dialect::Nvcc) return {"-Xcompiler", flag};
  return {flag};
}

std::vector<std::string> linker_option(const Toolchain& tc, const std::string& opt) {
  if (tc.dialect == Dialect::Nvcc) return {"-Xlinker", opt};
  return {"-Wl," + opt};
}

std::string host_compiler(const Plan& plan, const Toolchain& tc) {
  if (tc.dialect != Dialect::Nvcc) return plan.argv.empty() ? "" : plan.argv[0];
  std::string bindir;
  for (std::size_t i = 1; i < plan.argv.size(); ++i) {
    const std::string& a = plan.argv[i];
    for (const char* o : {"-ccbin", "--compiler-bindir"}) {
      const std::string eq = std::string(o) + "=";
      if (a == o && i + 1 < plan.argv.size()) bindir = plan.argv[i + 1];
      else if (a.rfind(eq, 0) == 0) bindir = a.substr(eq.size());
    }
  }
  if (bindir.empty()) return "gcc";  // what nvcc runs without -ccbin (see nvcc --dryrun)
  struct stat st {};
  if (::stat(bindir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return bindir + "/gcc";
  return bindir;
}

const char* gcc_plugin_version() { return PROF_GCC_PLUGIN_VERSION; }

std::string gcc_plugin_unusable(const Toolchain& tc, const std::string& compiler_version, const std::string& plugin_path,
                                bool plugin_exists) {
  if (!tc.gcc) return std::string(std::strcmp(tc.name, "other") == 0 ? "the compiler" : tc.name) + " is not GCC";
  if (!*gcc_plugin_version()) return "prof was built without it (no GCC plugin headers; Debian: gcc-12-plugin-dev)";
  if (!plugin_exists) return plugin_path + " is missing";
  if (compiler_version != gcc_plugin_version())
    return "it was built for GCC " + std::string(gcc_plugin_version()) + ", the compiler is " +
           (compiler_version.empty() ? std::string("not GCC or did not say its version") : "GCC " + compiler_version);
  return "";
}

std::string supported_compilers() {
  std::string s;
  for (const auto& tc : kToolchains) {
    if (!s.empty()) s += ", ";
    s += tc.name;
  }
  return s;
}

const std::vector<std::string>& static_wrapped_symbols() { return kStaticWraps; }

const std::vector<std::string>& static_link_libraries() { return kStaticLinkDeps; }

std::vector<const AdapterEntry*> linked_adapters(const Plan& plan, const Toolchain& tc, const Options& options) {
  std::vector<const AdapterEntry*> list;
  for (const auto& a : kAdapters)
    if (a.choose(plan, tc, options).linked) list.push_back(&a);
  return list;
}

std::string adapter_decisions(const Plan& plan, const Toolchain& tc, const Options& options) {
  std::string linked, left_out;
  for (const auto& a : kAdapters) {
    const AdapterChoice c = a.choose(plan, tc, options);
    std::string& to = c.linked ? linked : left_out;
    if (!to.empty()) to += ", ";
    to += a.name;
    if (!c.why.empty()) to += " (" + c.why + ")";
  }
  if (linked.empty()) linked = "none";
  return left_out.empty() ? linked : linked + "; not linked: " + left_out;
}

std::string sanitizer_default_options(const Options& options) {
  if (options.sanitize != "address") return "";
  // libasan.so comes after libprof.so (build_commands). Whole allocation stacks through libraries
  // built without frame pointers (Open MPI, also in programs linked without the MPI adapter),
  // for leak reports and their suppressions by library; it costs measured programs little.
  // SIGSEGV, SIGBUS and SIGFPE left to prof's crash handler, as without ASan (prof installs its
  // handlers only where the disposition is SIG_DFL): a crash writes the data measured so far.
  return "verify_asan_link_order=0:fast_unwind_on_malloc=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0";
}

std::string adapter_list_source(const std::vector<const AdapterEntry*>& adapters,
                                const std::vector<std::string>& instrument_filters, bool mpi_declined,
                                const std::string& asan_options) {
  std::string s = "/* Generated by prof-wrap. Do not edit. */\nstruct prof_adapter;\n";
  for (const auto* a : adapters) s += std::string("extern const struct prof_adapter prof_adapter_") + a->name + ";\n";
  s += "const struct prof_adapter* const prof_linked_adapters[] = { ";
  for (const auto* a : adapters) s += std::string("&prof_adapter_") + a->name + ", ";
  s += "0 };\n";
  // Executables' constructors run after all shared libraries' static initialisers (libprof's
  // configuration tables included) and before main: the earliest safe moment to start.
  s += "extern void prof_init(void);\n"
       "__attribute__((constructor)) static void prof_init_from_executable(void) { prof_init(); }\n";
  // --mpp=none: the runtime does not warn that an MPI library is loaded without the MPI adapter.
  if (mpi_declined) s += "const int prof_mpi_adapter_declined = 1;\n";
  // PROF_SANITIZE=address: ASan's defaults for this program (ASAN_OPTIONS still overrides them);
  // weak, so that a program that defines its own keeps it.
  if (!asan_options.empty())
    s += "__attribute__((weak)) const char* __asan_default_options(void) { return \"" + asan_options + "\"; }\n";
  if (!instrument_filters.empty()) {
    // --instrument-filter: the runtime applies these files as run-time filters.
    s += "const char* const prof_instrument_filters[] = { ";
    for (const auto& f : instrument_filters) {
      s += '"';
      for (char c : f) {
        if (c == '"' || c == '\\') s += '\\';
        s += c;
      }
      s += "\", ";
    }
    s += "0 };\n";
  }
  return s;
}

std::vector<std::vector<std::string>> build_commands(const Plan& plan, const Layout& layout, const Options& options,
                                                     const WorkFiles& files) {
  if (plan.argv.empty()) throw WrapError("no compiler given");
  if (plan.passthrough()) return {plan.argv};
  const Toolchain* tc = toolchain_for(plan, options);
  if (plan.links && plan.static_link && plan.shared)
    throw WrapError("-static with -shared is not supported; link the shared library without -static");

  // Added before the user's arguments, so that the user's own options win (-fno-instrument-functions, -g0).
  std::vector<std::string> pre;
  if (plan.compiles && !options.nocompiler) {
    if (!options.gcc_plugin.empty()) {
      // The plugin writes names, file and lines into the object: no -g needed for prof.
      append(pre, host_compiler_option(*tc, "-fplugin=" + options.gcc_plugin));
      for (const auto& f : options.instrument_filters) {
        if (tc->dialect == Dialect::Nvcc && f.find(',') != std::string::npos)
          throw WrapError("--instrument-filter=" + f + ": nvcc splits host compiler options at commas; rename the file");
        append(pre, host_compiler_option(*tc, "-fplugin-arg-prof_gcc_plugin-filter=" + f));
      }
    } else {
      if (!plan.has_debug_option) pre.push_back("-g");  // file and line for the runtime's symbol lookup
      append(pre, tc->instrument_flags);
    }
    // The link guard is a C header: Fortran has no -include (gfortran warns and ignores it), so a
    // step that compiles Fortran plants none. Its hooks are -finstrument-functions', which glibc
    // defines empty: such objects link without prof-wrap and then measure nothing.
    if (!plan.fortran) append(pre, {"-include", layout.instrumented_header()});
  }
  // Also for -E and -M, so that preprocessing sees what the compile sees and finds <prof/user.h>.
  if (plan.compiles || plan.preprocess_only || plan.deps_only) {
    if (options.user) pre.push_back("-DPROF_USER_ENABLE");
    pre.push_back("-I" + layout.include_dir());
    // Fortran's `use prof_user` (prof_user.mod, where prof was built with a Fortran compiler;
    // gfortran warns about a missing -I folder).
    if (plan.fortran && layout.fortran_modules_exist()) pre.push_back("-I" + layout.fortran_module_dir());
  }

  // A -static executable: all of libprof.a, and before the user's objects. Its static
  // initialisers (the configuration tables) then run first, as libprof.so's do in a dynamic
  // link, before any instrumented constructor of the program can start the measurement.
  // All of it, so that every __wrap_ function is there for the references that ld --wrap
  // renames in archives read later (libstdc++.a's pthread_create, __cxa_begin_catch).
  const bool static_executable = plan.links_executable() && plan.static_link;
  if (static_executable && !options.sanitizer_runtime.empty())
    throw WrapError("-static links are not possible with this prof: it was built with PROF_SANITIZE=" + options.sanitize +
                    ", whose runtime is a shared library; link dynamically, or use a prof built without PROF_SANITIZE");
  if (static_executable) {
    append(pre, linker_option(*tc, "--whole-archive"));
    for (const auto* a : linked_adapters(plan, *tc, options))
      if (a->library) pre.push_back(layout.lib_dir() + "/lib" + a->library + ".a");
    pre.push_back(layout.libprof_static());
    append(pre, linker_option(*tc, "--no-whole-archive"));
  }

  std::vector<std::vector<std::string>> commands;
  std::vector<std::string> post;
  if (plan.links && !plan.relocatable) {
    const auto adapters = linked_adapters(plan, *tc, options);
    if (plan.links_executable()) {
      std::vector<std::string> cc{adapter_c_compiler(plan, *tc, options)};
      append(cc, plan.abi_flags);
      append(cc, tc->adapter_compile_flags);
      append(cc, {files.adapter_source, "-o", files.adapter_object});
      commands.push_back(std::move(cc));
      // A user's "-x c" would otherwise make the compiler read the object as C source.
      if (!plan.trailing_language.empty() && plan.trailing_language != "none") append(post, {"-x", "none"});
      if (!plan.static_link) post.push_back(files.adapter_object);
    }
    if (static_executable) {
      // ld --wrap for the interposed functions, libprof's own libraries, and the adapter list
      // last: constructors run in link order, and its prof_init is to run after the static
      // initialisers of the C++ runtime too, as in a dynamic link.
      for (const auto& sym : kStaticWraps) append(post, linker_option(*tc, "--wrap=" + sym));
      const bool fortran = tc->language == Language::Fortran || plan.fortran ||
                           std::find(plan.libraries.begin(), plan.libraries.end(), "gfortran") != plan.libraries.end();
      if (fortran)
        for (const char* sym : kGthreadFunctions) append(post, linker_option(*tc, std::string("-u,") + sym));
      append(post, kStaticLinkDeps);
      post.push_back(files.adapter_object);
    } else {
      post.push_back("-L" + layout.lib_dir());
      append(post, linker_option(*tc, "-rpath," + layout.lib_dir()));
      // push-state/pop-state: libprof is always recorded as needed (nothing calls it directly; it
      // interposes), and the user's own --as-needed setting is left as it was for what follows.
      // nvcc moves all -Xlinker options before the libraries, which would undo the pair: there the
      // adapter list's reference to prof_init keeps libprof needed.
      const bool bracket = tc->dialect != Dialect::Nvcc;
      // Adapter libraries that define the functions they wrap (the MPI adapter defines MPI_Send
      // and calls PMPI_Send) go before the user's arguments: the program binds each symbol to the
      // first library that defines it, and a user's own -lmpi must come after them.
      bool any_library = false;
      for (const auto* a : adapters) any_library = any_library || a->library != nullptr;
      if (any_library) {
        std::vector<std::string> first{"-L" + layout.lib_dir()};
        append(first, linker_option(*tc, "-rpath," + layout.lib_dir()));
        if (bracket) append(first, linker_option(*tc, "--push-state,--no-as-needed"));
        for (const auto* a : adapters)
          if (a->library) first.push_back(std::string("-l") + a->library);
        if (bracket) append(first, linker_option(*tc, "--pop-state"));
        pre.insert(pre.end(), first.begin(), first.end());
      }
      if (bracket) append(post, linker_option(*tc, "--push-state,--no-as-needed"));
      post.push_back("-lprof");
      // A sanitized libprof.so (PROF_SANITIZE): the sanitizer's runtime right after it, before
      // libc and the MPI libraries, so that the program's calls of pthread_create, longjmp, ...
      // reach prof's wrappers first (which see their real callers) and then the sanitizer's
      // interceptors. The program stays uninstrumented, so any compiler's objects (clang's too)
      // link with GCC's runtime. ASan's check that its runtime is the first library is turned off
      // by the adapter list (adapter_list_source).
      if (plan.links_executable() && !options.sanitizer_runtime.empty()) post.push_back(options.sanitizer_runtime);
      // GCC's -fopenmp links libgomp, but libprof.so defines the GOMP_* functions it wraps: a
      // program that calls nothing else of libgomp would lose it to --as-needed (Debian's
      // default), and the wrappers would find no real GOMP_parallel. Kept needed here.
      if (bracket && tc->gcc && std::find(plan.argv.begin(), plan.argv.end(), "-fopenmp") != plan.argv.end())
        post.push_back("-lgomp");
      if (bracket) append(post, linker_option(*tc, "--pop-state"));
      append(post, {"-lpthread", "-ldl"});
    }
  }

  std::vector<std::string> main_cmd{plan.argv[0]};
  append(main_cmd, pre);
  main_cmd.insert(main_cmd.end(), plan.argv.begin() + 1, plan.argv.end());
  append(main_cmd, post);
  commands.push_back(std::move(main_cmd));
  return commands;
}

}  // namespace prof::wrap
