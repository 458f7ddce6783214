// SPDX-License-Identifier: BSD-3-Clause
// prof-wrap's command line: its own options, the environment, and the compile/link classification.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace prof::wrap {

/// A mistake on prof-wrap's own command line: main prints the message and the usage text.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Any other reason prof-wrap cannot go on: main prints the one-line message and exits 1.
struct WrapError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// How compile steps are instrumented.
enum class Instrument {
  Auto,       ///< the GCC plugin where it fits the compiler, else the compiler's hooks
  Plugin,     ///< the GCC plugin; an error where it cannot be used
  Functions,  ///< the compiler's hooks: -finstrument-functions (clang: ...-after-inlining)
};

/// Which multi-process paradigm a program uses (--mpp).
enum class Mpp {
  Auto,  ///< MPI when the compiler is an MPI wrapper or the link has -lmpi
  Mpi,   ///< link the MPI adapter
  None,  ///< never link it
};

/// Whether a program uses CUDA (--cuda, --nocuda).
enum class Cuda {
  Auto,  ///< CUDA when the compiler is nvcc, an input is a .cu file, or the link has -lcudart, -lcuda...
  On,    ///< link the CUDA adapter; an error where prof was built without it
  Off,   ///< never link it
};

/// prof-wrap's own options, those given before the compiler name.
struct Options {
  bool help = false;
  bool version = false;
  bool verbose = false;     ///< print each command on stderr before running it
  bool dry_run = false;     ///< print, do not run (implies verbose)
  bool nocompiler = false;  ///< no compiler instrumentation (still link libprof)
  bool noopenmp = false;    ///< --noopenmp: no OpenMP adapter even with -fopenmp
  bool user = false;        ///< define PROF_USER_ENABLE for the <prof/user.h> macros
  bool keep_files = false;  ///< keep the generated adapter-list source and object
  /// --instrument-filter=FILE (repeatable), absolute paths: checked at build time, applied inside
  /// the GCC plugin (no hooks at all) and by the runtime to what other compilers instrumented.
  std::vector<std::string> instrument_filters;
  Instrument instrument = Instrument::Auto;  ///< --instrument=auto|plugin|functions
  Mpp mpp = Mpp::Auto;                        ///< --mpp=mpi|none|auto
  Cuda cuda = Cuda::Auto;                     ///< --cuda, --nocuda
  /// Decided by prof-wrap before build_commands: libprof_cuda.so does not exist, so an automatic
  /// CUDA decision links no CUDA adapter (main says so once). --cuda is an error there instead.
  bool cuda_adapter_missing = false;
  /// Decided by prof-wrap before build_commands (it needs the compiler's version): compile steps
  /// load the GCC plugin at this path instead of -finstrument-functions. Empty: no plugin.
  std::string gcc_plugin;
  /// Decided by prof-wrap before build_commands for an MPI compiler wrapper: the compiler it runs
  /// (its --showme:command or -show), e.g. "clang++"; empty when it did not say. See toolchain_for.
  std::string mpi_wrapped_compiler;
  /// Set by prof-wrap when prof was built with PROF_SANITIZE: which sanitizer ("address",
  /// "thread") and its runtime (GCC's libasan.so, libtsan.so), linked right after libprof into
  /// every dynamic executable; -static links are refused. Empty: a normal build.
  std::string sanitize;
  std::string sanitizer_runtime;
};

/// The command line split into prof-wrap's part and the compiler's part.
struct CommandLine {
  Options options;
  std::vector<std::string> compiler_argv;  ///< compiler name first, then its arguments, exactly as given
};

/// Applies one prof-wrap option (e.g. "--verbose") to `options`; throws UsageError if unknown.
void apply_option(Options& options, const std::string& arg);

/// Splits `args` (argv without argv[0]) into prof-wrap options and the compiler command.
/// `env_instrumenter_flags` (PROF_WRAPPER_INSTRUMENTER_FLAGS) are applied before the command-line
/// options; `env_compiler_flags` (PROF_WRAPPER_COMPILER_FLAGS) are inserted right after the compiler
/// name. Either may be null. Throws UsageError for an unknown option. With --help or --version the
/// compiler may be missing; otherwise a missing compiler is a UsageError.
CommandLine parse_command_line(const std::vector<std::string>& args, const char* env_instrumenter_flags = nullptr,
                               const char* env_compiler_flags = nullptr);

/// True when PROF_WRAPPER has a value that turns the wrapper off: off, 0, no, false (any case).
bool wrapper_disabled(const char* prof_wrapper_value);

/// The pass-through command for PROF_WRAPPER=off: the compiler and its arguments exactly as
/// given, prof-wrap options dropped, PROF_WRAPPER_*_FLAGS ignored (as Score-P's wrapper does).
/// Returns nothing when the wrapper is on or when no compiler was named.
std::optional<std::vector<std::string>> passthrough_command(const char* prof_wrapper_value,
                                                            const std::vector<std::string>& args);

/// Splits on blanks (space, tab, newline); no quoting, like an unquoted shell expansion.
std::vector<std::string> split_whitespace(const char* text);

/// Splits the text of a response file into arguments by GCC's rules (libiberty's buildargv, as in
/// GCC 12): blanks (space, tab, newline, CR, VT, FF) separate; single and double quotes group and
/// are removed; a backslash takes the next character literally, inside quotes too; an unclosed
/// quote ends with the text; "" is an empty argument; text of blanks only gives no argument; the
/// text ends at a NUL byte.
std::vector<std::string> split_response_file(const std::string& text);

/// Reads one response file: its contents, or nothing when it is not a readable regular file.
using ResponseFileReader = std::function<std::optional<std::string>(const std::string& path)>;

/// The contents of the file at `path`, or nothing if it does not exist, is a directory, or cannot
/// be read (GCC then keeps the "@path" argument as it is).
std::optional<std::string> read_response_file(const std::string& path);

/// `argv` with every "@file" argument after argv[0] replaced by the file's arguments, as GCC's
/// driver does (libiberty's expandargv): nested @files are expanded too, their names relative to
/// the working directory; an @file that cannot be read stays a literal argument; after 2000
/// expansions the rest stays literal (GCC stops there with an error). For classification only:
/// the compiler still gets the @file arguments.
std::vector<std::string> expand_response_files(const std::vector<std::string>& argv,
                                               const ResponseFileReader& read = read_response_file);

/// What an input file is, by -x language or by extension.
enum class InputKind {
  CSource,     ///< .c .i, or -x c
  CxxSource,   ///< .cc .cpp .cxx .c++ .cp .C .CPP .ii, or -x c++
  CudaSource,  ///< .cu, or -x cu (nvcc): its host code is instrumented
  FortranSource,  ///< .f .for .ftn .f90 .f95 .f03 .f08 and their upper-case (preprocessed) forms,
                  ///< or -x f77, f95, f77-cpp-input, f95-cpp-input
  Assembly,    ///< .s .S .sx: assembled, not instrumented
  Header,      ///< .h .hh .hpp ...: precompiled-header builds, ignored
  Object,      ///< .o
  StaticLib,   ///< .a
  SharedLib,   ///< .so, .so.N...
  Other,       ///< anything else, handed to the linker untouched (linker scripts, .lo, ...)
};

/// Classifies one input by the current -x language ("none" or empty: by extension).
InputKind classify_input(const std::string& path, const std::string& language);

/// True for the kinds that prof-wrap instruments.
inline bool is_source(InputKind k) {
  return k == InputKind::CSource || k == InputKind::CxxSource || k == InputKind::CudaSource || k == InputKind::FortranSource;
}

/// One input file of the compiler command.
struct Input {
  std::string path;
  InputKind kind;
};

/// What the compiler command does, decided from its arguments alone.
struct Plan {
  std::vector<std::string> argv;       ///< compiler first, then the user's arguments, untouched
  bool compiles = false;               ///< at least one C/C++/CUDA/Fortran source is compiled
  bool fortran = false;                ///< a Fortran source is among the inputs (compiled or preprocessed)
  bool links = false;                  ///< the linker runs (executable, shared object or -r)
  bool preprocess_only = false;        ///< -E
  bool deps_only = false;              ///< -M or -MM (they imply -E): dependency lists only
  bool shared = false;                 ///< -shared
  bool relocatable = false;            ///< -r
  bool static_link = false;            ///< -static or -static-pie
  bool has_debug_option = false;       ///< the user gave some -g* option
  bool nothing_to_build = false;       ///< -fsyntax-only, -###, or no input files (e.g. --version)
  bool linker_inputs = false;          ///< -l, -Wl,..., -Xlinker: GCC links with these alone
  std::vector<Input> inputs;           ///< every input file, in order
  std::vector<std::string> sources;    ///< the C/C++/CUDA/Fortran sources among them
  std::optional<std::string> output;   ///< -o value, if given
  std::vector<std::string> libraries;  ///< -l names (without -l)
  std::string cudart;                  ///< nvcc's -cudart/--cudart value (shared, static, none), if given
  std::vector<std::string> abi_flags;  ///< flags the adapter-list object must share (-m32, --target=...)
  std::string trailing_language;       ///< the -x language still in effect after the last argument

  /// The link produces an executable (so it gets the adapter list).
  bool links_executable() const { return links && !shared && !relocatable; }
  /// Nothing to add: the command runs as given.
  bool passthrough() const { return !compiles && !links && !preprocess_only && !deps_only; }
};

/// Classifies a compiler command; argv[0] is the compiler (nvcc's options are read as nvcc
/// reads them: -dc, -lib, -dlink, -Xcompiler X, -ccbin X...). Never throws for odd arguments:
/// what it does not understand it passes through. Response files (@file) are read with `read`
/// and classified by their contents (expand_response_files); Plan::argv keeps them as given.
Plan classify(const std::vector<std::string>& argv, const ResponseFileReader& read = read_response_file);

/// Quotes one argument for a POSIX shell, only when needed (for --verbose output).
std::string shell_quote(const std::string& arg);

/// Joins a command with shell quoting.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace prof::wrap
