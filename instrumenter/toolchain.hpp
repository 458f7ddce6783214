// SPDX-License-Identifier: BSD-3-Clause
// The compilers prof-wrap knows, the adapters a program links, and the commands prof-wrap runs.
#pragma once

#include <string>
#include <vector>

#include "command_line.hpp"
#include "install_layout.hpp"

namespace prof::wrap {

enum class Language { C, Cxx, Cuda, Fortran };

/// How a compiler's command line passes options on: GCC's (-Wl,opt) or nvcc's (-Xcompiler opt,
/// -Xlinker opt; nvcc rejects -Wl, and splits both values at commas).
enum class Dialect { Gnu, Nvcc };

/// One supported compiler: one row of kToolchains in toolchain.cpp.
struct Toolchain {
  const char* name;                               ///< program name: "gcc", "mpicc", "nvcc"
  Language language;                              ///< the language it compiles by default
  bool mpi;                                       ///< an MPI compiler wrapper (links the mpi adapter)
  bool cuda;                                      ///< a CUDA compiler (links the cuda adapter)
  std::vector<std::string> instrument_flags;      ///< compiler instrumentation, e.g. -finstrument-functions
  std::vector<std::string> adapter_compile_flags; ///< compile the generated C adapter list to an object
  Dialect dialect;                                ///< how options reach the host compiler and the linker
  bool gcc;                                       ///< GCC compiles its host code: can load prof's GCC plugin
};

/// The C compiler that compiles the generated adapter list of a link by `plan`'s compiler: that
/// compiler itself, except for Fortran compilers (gfortran, mpifort...), where it is GCC's C
/// driver beside their gfortran ("/opt/gcc/bin/gfortran-12" -> "/opt/gcc/bin/gcc-12"; an MPI
/// wrapper's options.mpi_wrapped_compiler), or "cc" for another Fortran compiler.
std::string adapter_c_compiler(const Plan& plan, const Toolchain& tc, const Options& options);

/// Why prof's GCC plugin cannot instrument a compile step of `plan`: "" when it can, else one
/// phrase (today: the step compiles Fortran, which the plugin never sees).
std::string gcc_plugin_unusable_for(const Plan& plan);

/// `flag` for the compiler that compiles host code: itself, or for nvcc {"-Xcompiler", flag}.
std::vector<std::string> host_compiler_option(const Toolchain& tc, const std::string& flag);

/// One linker option: "-Wl,<opt>", or for nvcc {"-Xlinker", opt}.
std::vector<std::string> linker_option(const Toolchain& tc, const std::string& opt);

/// The GCC driver that compiles `plan`'s host code, for the plugin's version check: argv[0]
/// itself, or for nvcc its -ccbin/--compiler-bindir (a directory: its gcc), else "gcc".
std::string host_compiler(const Plan& plan, const Toolchain& tc);

/// The GCC version prof's plugin was built for, "" when it was not built.
const char* gcc_plugin_version();

/// Whether compile steps of `compiler` (version `compiler_version`, from -dumpfullversion) can
/// load the plugin at `plugin_path` for `options`: "" if yes, else why not (one phrase).
std::string gcc_plugin_unusable(const Toolchain& tc, const std::string& compiler_version, const std::string& plugin_path,
                                bool plugin_exists);

/// The toolchain for a compiler given by name or path ("/usr/bin/gcc", "gcc-12",
/// "x86_64-linux-gnu-g++" all find their row); nullptr if unsupported.
const Toolchain* find_toolchain(const std::string& compiler);

/// find_toolchain, or for a compiler prof does not know a row that drives it like GCC
/// (-finstrument-functions, -Wl,); `known` (if given) says which. Never nullptr.
const Toolchain* toolchain_for(const std::string& compiler, bool* known = nullptr);

/// The toolchain `plan`'s compile and link steps use: toolchain_for(argv[0]), except for an MPI
/// compiler wrapper that runs a compiler other than GCC (options.mpi_wrapped_compiler, e.g.
/// clang++ under OMPI_CXX=clang++): then a row named "mpicxx (clang++)" that is an MPI wrapper
/// with that compiler's options (clang's hooks, no GCC plugin). Never nullptr.
const Toolchain* toolchain_for(const Plan& plan, const Options& options);

/// The compiler an MPI compiler wrapper runs, from what it prints for --showme:command (Open MPI:
/// "clang++") or -show (MPICH, Intel MPI: the whole command): the first word; "" if none.
std::string compiler_in_show_output(const std::string& output);

/// True when `path` names an MPI library file: lib<name>.so[.N...] or lib<name>.a with an MPI
/// library's name (mpi, mpi_*, mpich*, mpicxx, mpifort, mpi++), with or without a directory;
/// not a stand-in whose name has "stub" (libmpi_stubs.a).
bool is_mpi_library(const std::string& path);

/// "gcc, g++, cc, c++, clang, clang++, ...": for messages.
std::string supported_compilers();

/// The functions libprof.a interposes in a -static link, each passed as -Wl,--wrap=<symbol>
/// (adapters/static_wraps.def, the list the wrappers themselves are checked against).
const std::vector<std::string>& static_wrapped_symbols();

/// libprof.a's own libraries for a -static link ("-lopen-trace-format2", "-ldw", ...): from
/// pkg-config --static when prof was configured, then the C++ runtime.
const std::vector<std::string>& static_link_libraries();

/// Whether a program is linked with one adapter, and why (prof-wrap --verbose says it).
struct AdapterChoice {
  bool linked = false;
  std::string why;  ///< "mpicxx is an MPI compiler wrapper", "--nocuda"; "" for the adapters always linked
};

/// One adapter a program can be linked with: one row of kAdapters in toolchain.cpp.
/// Its descriptor in the runtime is `prof_adapter_<name>`.
struct AdapterEntry {
  const char* name;        ///< "compiler", "user", "pthread", "mpi", "cuda"
  const char* library;     ///< an extra library to link (e.g. "prof_mpi"), or nullptr: part of libprof
  const char* off_option;  ///< the prof-wrap option that leaves it out ("--nocuda"), or nullptr
  AdapterChoice (*choose)(const Plan&, const Toolchain&, const Options&);
};

/// The adapters a link step of `plan` needs, in table order.
std::vector<const AdapterEntry*> linked_adapters(const Plan& plan, const Toolchain& tc, const Options& options);

/// The adapters by name, for `plan`'s link step, each decision with its reason: for --verbose,
/// e.g. "compiler, user, pthread, cuda (the compiler is nvcc); not linked: mpi (no MPI compiler
/// wrapper, no -lmpi)".
std::string adapter_decisions(const Plan& plan, const Toolchain& tc, const Options& options);

/// The generated C source naming `adapters` in `prof_linked_adapters[]`; with `mpi_declined`
/// (--mpp=none) also `prof_mpi_adapter_declined`, which keeps the runtime from warning that an
/// MPI library is loaded without the MPI adapter; with `asan_options` an `__asan_default_options`
/// that returns them.
std::string adapter_list_source(const std::vector<const AdapterEntry*>& adapters,
                                const std::vector<std::string>& instrument_filters = {}, bool mpi_declined = false,
                                const std::string& asan_options = {});

/// The ASan options an executable needs where prof was built with PROF_SANITIZE=address
/// (options.sanitize), for adapter_list_source; "" otherwise.
std::string sanitizer_default_options(const Options& options);

/// Where the generated adapter list goes (main makes them unique temporaries).
struct WorkFiles {
  std::string adapter_source = "prof_adapters.c";
  std::string adapter_object = "prof_adapters.o";
};

/// The commands to run for `plan`, in order; the last is the user's command with prof-wrap's
/// additions. An executable link is preceded by the compile of the adapter list (which main
/// writes to files.adapter_source first); a -static one links libprof.a with ld --wrap instead
/// of libprof.so. With options.sanitizer_runtime, dynamic executables link it right after
/// libprof. Throws WrapError for an unsupported compiler, -static with -shared, or -static with
/// a sanitizer runtime.
std::vector<std::vector<std::string>> build_commands(const Plan& plan, const Layout& layout, const Options& options,
                                                     const WorkFiles& files = {});

}  // namespace prof::wrap
