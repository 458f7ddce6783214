// SPDX-License-Identifier: BSD-3-Clause
// prof-wrap's option parsing and the compile/link classification of a compiler command.
#include "command_line.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace prof::wrap {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Options whose argument is the next word. The argument must never be taken as an input file.
const char* const kOptionsWithSeparateArg[] = {
    "-o", "-I", "-L", "-l", "-D", "-U", "-A", "-B", "-T", "-z", "-u", "-e",
    "-include", "-imacros", "-isystem", "-idirafter", "-iquote", "-iprefix", "-iwithprefix",
    "-iwithprefixbefore", "-isysroot", "--sysroot", "-MF", "-MT", "-MQ", "-MJ", "-x",
    "-Xlinker", "-Xpreprocessor", "-Xassembler", "-Xclang", "-mllvm", "-target", "--param",
    "-aux-info", "-dumpbase", "-dumpdir",
    "-J", "-fintrinsic-modules-path",  // gfortran: where .mod files go, where intrinsic modules are
};

// nvcc's options that take the next word (they also take "=value"), beyond the GCC-like ones.
const char* const kNvccOptionsWithSeparateArg[] = {
    "-ccbin", "--compiler-bindir", "-Xcompiler", "--compiler-options", "-Xptxas", "--ptxas-options",
    "-Xnvlink", "--nvlink-options", "-Xarchive", "--archive-options", "-Xcudafe", "-arch", "--gpu-architecture",
    "-code", "--gpu-code", "-gencode", "--generate-code", "-odir", "--output-directory", "-maxrregcount",
    "--maxrregcount", "-optf", "--options-file", "-rdc", "--relocatable-device-code", "-t", "--threads",
    "-keep-dir", "--keep-dir", "-ldir", "--libdevice-directory", "-std", "--std", "--output-file",
    "--linker-options", "--pre-include", "--include-path", "--system-include", "--define-macro", "--undefine-macro",
    "--library", "--library-path", "-ftz", "--ftz", "-prec-div", "--prec-div", "-prec-sqrt", "--prec-sqrt", "-fmad",
    "--fmad", "-cudart", "--cudart", "-cudadevrt", "--cudadevrt", "--x", "--dependency-output",
    "--dependency-target-name", "-Werror", "--Werror", "-diag-suppress", "--diag-suppress", "-diag-warn",
    "--diag-warn", "-diag-error", "--diag-error", "-split-compile", "--split-compile", "-time", "--time",
    "--run-args", "-run-args", "-default-stream", "--default-stream"};

// nvcc's options that stop before an executable link: they compile, or make a library or a
// device-link object of their own.
const char* const kNvccCompileOnly[] = {
    "-c", "--compile", "-dc", "--device-c", "-dw", "--device-w", "-ptx", "--ptx", "-cubin", "--cubin",
    "-fatbin", "--fatbin", "-cuda", "--cuda", "-optix-ir", "--optix-ir", "-ltoir", "--ltoir"};

bool one_of(const std::string& arg, const char* const* begin, const char* const* end) {
  return std::any_of(begin, end, [&](const char* o) { return arg == o; });
}

bool takes_separate_arg(const std::string& arg, bool nvcc) {
  return one_of(arg, std::begin(kOptionsWithSeparateArg), std::end(kOptionsWithSeparateArg)) ||
         (nvcc && one_of(arg, std::begin(kNvccOptionsWithSeparateArg), std::end(kNvccOptionsWithSeparateArg)));
}

// Flags that change the ABI or the tools used: the adapter-list object is compiled with them too.
bool is_abi_flag(const std::string& arg) {
  return arg == "-m16" || arg == "-m32" || arg == "-m64" || arg == "-mx32" || starts_with(arg, "-mabi=") ||
         starts_with(arg, "--target=") || (starts_with(arg, "-B") && arg.size() > 2);
}

// The file name after the last '/'.
std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "libfoo.so", "libfoo.so.1", "libfoo.so.1.2.3".
bool is_shared_lib_name(const std::string& path) {
  const std::string name = base_name(path);
  const auto pos = name.find(".so");
  if (pos == std::string::npos || pos == 0) return false;
  const std::string rest = name.substr(pos + 3);
  if (rest.empty()) return true;
  if (rest[0] != '.') return false;
  return std::all_of(rest.begin(), rest.end(), [](char c) { return c == '.' || std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

void apply_option(Options& o, const std::string& arg) {
  if (arg == "--help" || arg == "-h") o.help = true;
  else if (arg == "--version") o.version = true;
  else if (arg == "--verbose" || arg == "-v") o.verbose = true;
  else if (arg == "--dry-run") o.dry_run = o.verbose = true;
  else if (arg == "--nocompiler") o.nocompiler = true;
  else if (arg == "--compiler") o.nocompiler = false;
  else if (arg == "--user") o.user = true;
  else if (arg == "--nouser") o.user = false;
  else if (arg == "--keep-files") o.keep_files = true;
  else if (arg.rfind("--instrument=", 0) == 0) {
    const std::string how = arg.substr(std::strlen("--instrument="));
    if (how == "auto") o.instrument = Instrument::Auto;
    else if (how == "plugin") o.instrument = Instrument::Plugin;
    else if (how == "functions") o.instrument = Instrument::Functions;
    else throw UsageError("--instrument=" + how + " is not one of plugin, functions, auto");
  } else if (arg.rfind("--mpp=", 0) == 0) {
    const std::string mpp = arg.substr(std::strlen("--mpp="));
    if (mpp == "mpi") o.mpp = Mpp::Mpi;
    else if (mpp == "none") o.mpp = Mpp::None;
    else if (mpp == "auto") o.mpp = Mpp::Auto;
    else throw UsageError("--mpp=" + mpp + " is not one of mpi, none, auto");
  } else if (arg == "--cuda") o.cuda = Cuda::On;
  else if (arg == "--nocuda") o.cuda = Cuda::Off;
  else if (arg == "--noopenmp") o.noopenmp = true;
  else if (arg.rfind("--instrument-filter=", 0) == 0) {
    std::string file = arg.substr(std::strlen("--instrument-filter="));
    if (file.empty()) throw UsageError("--instrument-filter= needs a file, e.g. --instrument-filter=my.filter");
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(file, ec);
    o.instrument_filters.push_back(ec ? file : abs.lexically_normal().string());
  } else throw UsageError("unknown option '" + arg + "' before the compiler name");
}

std::vector<std::string> split_whitespace(const char* text) {
  std::vector<std::string> words;
  if (!text) return words;
  std::string word;
  for (const char* p = text;; ++p) {
    if (*p == '\0' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
      if (!word.empty()) words.push_back(word);
      word.clear();
      if (*p == '\0') break;
    } else {
      word += *p;
    }
  }
  return words;
}

CommandLine parse_command_line(const std::vector<std::string>& args, const char* env_instrumenter_flags,
                               const char* env_compiler_flags) {
  CommandLine cl;
  for (const auto& w : split_whitespace(env_instrumenter_flags)) {
    try {
      apply_option(cl.options, w);
    } catch (const UsageError&) {
      throw UsageError("unknown option '" + w + "' in PROF_WRAPPER_INSTRUMENTER_FLAGS");
    }
  }
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') break;
    apply_option(cl.options, a);
  }
  if (i < args.size()) {
    cl.compiler_argv.push_back(args[i]);
    for (auto& w : split_whitespace(env_compiler_flags)) cl.compiler_argv.push_back(std::move(w));
    cl.compiler_argv.insert(cl.compiler_argv.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  } else if (!cl.options.help && !cl.options.version) {
    throw UsageError("no compiler given");
  }
  return cl;
}

bool wrapper_disabled(const char* value) {
  if (!value) return false;
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return v == "off" || v == "0" || v == "no" || v == "false";
}

std::optional<std::vector<std::string>> passthrough_command(const char* prof_wrapper_value,
                                                            const std::vector<std::string>& args) {
  if (!wrapper_disabled(prof_wrapper_value)) return std::nullopt;
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    if (args[i] == "--") {
      ++i;
      break;
    }
    if (args[i].empty() || args[i][0] != '-') break;
  }
  if (i >= args.size()) return std::nullopt;
  return std::vector<std::string>(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
}

std::vector<std::string> split_response_file(const std::string& text_in) {
  // Like GCC's driver, which reads the file as a C string.
  const std::string text = text_in.substr(0, text_in.find('\0'));
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  std::vector<std::string> args;
  std::size_t i = 0;
  while (i < text.size() && blank(text[i])) ++i;  // blanks only: no argument (GCC's only_whitespace)
  while (i < text.size()) {
    std::string arg;
    bool squote = false, dquote = false, escaped = false;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (blank(c) && !squote && !dquote && !escaped) break;
      if (escaped) {
        escaped = false;
        arg += c;  // GCC 12: any character, a newline and inside single quotes too
      } else if (c == '\\') {
        escaped = true;
      } else if (squote) {
        if (c == '\'') squote = false;
        else arg += c;
      } else if (dquote) {
        if (c == '"') dquote = false;
        else arg += c;
      } else if (c == '\'') {
        squote = true;
      } else if (c == '"') {
        dquote = true;
      } else {
        arg += c;
      }
    }
    args.push_back(std::move(arg));
    while (i < text.size() && blank(text[i])) ++i;
  }
  return args;
}

std::optional<std::string> read_response_file(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

std::vector<std::string> expand_response_files(const std::vector<std::string>& argv, const ResponseFileReader& read) {
  std::vector<std::string> args = argv;
  int expansions_left = 2000;  // GCC's limit; it reports "too many @-files encountered" itself
  for (std::size_t i = 1; i < args.size();) {
    if (args[i].empty() || args[i][0] != '@' || expansions_left == 0) {
      ++i;
      continue;
    }
    const std::optional<std::string> text = read(args[i].substr(1));
    if (!text) {
      ++i;  // unreadable: a literal argument, as in GCC
      continue;
    }
    --expansions_left;
    std::vector<std::string> inner = split_response_file(*text);
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(i), inner.begin(), inner.end());
    // No ++i: the inserted arguments are scanned again, so nested @files are expanded too.
  }
  return args;
}

InputKind classify_input(const std::string& path, const std::string& language) {
  if (!language.empty() && language != "none") {
    if (language == "c" || language == "cpp-output" || language == "objective-c") return InputKind::CSource;
    if (language == "c++" || language == "c++-cpp-output" || language == "objective-c++") return InputKind::CxxSource;
    if (language == "cu") return InputKind::CudaSource;  // nvcc -x cu
    if (language == "f77" || language == "f77-cpp-input" || language == "f95" || language == "f95-cpp-input")
      return InputKind::FortranSource;
    if (language == "assembler" || language == "assembler-with-cpp") return InputKind::Assembly;
    if (ends_with(language, "-header")) return InputKind::Header;
    return InputKind::Other;
  }
  const std::string name = base_name(path);
  const auto dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0) return InputKind::Other;
  const std::string ext = name.substr(dot);  // case matters: .c is C, .C is C++
  if (ext == ".c" || ext == ".i") return InputKind::CSource;
  if (ext == ".cc" || ext == ".cp" || ext == ".cxx" || ext == ".cpp" || ext == ".CPP" || ext == ".c++" ||
      ext == ".C" || ext == ".ii")
    return InputKind::CxxSource;
  if (ext == ".cu") return InputKind::CudaSource;
  // GCC's Fortran suffixes: fixed form (.f .for .ftn), free form (.f90 ... .f08); upper case (and
  // .fpp) runs the preprocessor first.
  for (const char* f : {".f", ".for", ".ftn", ".fpp", ".f90", ".f95", ".f03", ".f08", ".F", ".FOR", ".FTN", ".FPP", ".F90",
                        ".F95", ".F03", ".F08"})
    if (ext == f) return InputKind::FortranSource;
  if (ext == ".s" || ext == ".S" || ext == ".sx") return InputKind::Assembly;
  if (ext == ".h" || ext == ".hh" || ext == ".H" || ext == ".hp" || ext == ".hxx" || ext == ".hpp" ||
      ext == ".HPP" || ext == ".h++" || ext == ".tcc")
    return InputKind::Header;
  if (ext == ".o") return InputKind::Object;
  if (ext == ".a") return InputKind::StaticLib;
  if (is_shared_lib_name(name)) return InputKind::SharedLib;
  return InputKind::Other;
}

Plan classify(const std::vector<std::string>& original_argv, const ResponseFileReader& read) {
  Plan p;
  p.argv = original_argv;
  // Classified by what the compiler will read; the @file arguments themselves go to the compiler.
  const std::vector<std::string> argv = expand_response_files(original_argv, read);
  bool compile_only = false, assemble_only = false, no_output = false;
  const std::string compiler = base_name(original_argv.empty() ? std::string() : original_argv[0]);
  const bool nvcc = compiler.rfind("nvcc", 0) == 0;
  std::string language;  // the current -x language; applies to the inputs after it
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    const bool has_next = i + 1 < argv.size();
    if (a.size() > 1 && a[0] == '-') {
      if (takes_separate_arg(a, nvcc)) {
        if (!has_next) continue;  // the compiler reports the missing argument
        const std::string& v = argv[++i];
        if (a == "-o") p.output = v;
        else if (a == "-x" || a == "--x") language = v;
        else if (nvcc && (a == "--output-file")) p.output = v;
        else if (nvcc && a == "--library") p.libraries.push_back(v);
        else if (nvcc && (a == "-cudart" || a == "--cudart")) p.cudart = v;
        // nvcc's host compiler: the adapter-list compile must use the same one.
        else if (nvcc && (a == "-ccbin" || a == "--compiler-bindir")) p.abi_flags.insert(p.abi_flags.end(), {a, v});
        else if (a == "-l") p.libraries.push_back(v);
        else if (a == "-target" || a == "-B") p.abi_flags.insert(p.abi_flags.end(), {a, v});
        if (a == "-l" || a == "-Xlinker" || a == "--library" || a == "--linker-options") p.linker_inputs = true;
        continue;
      }
      if (nvcc) {
        // nvcc: -lib makes a static library, -dlink a device-link object: no executable link.
        if (one_of(a, std::begin(kNvccCompileOnly), std::end(kNvccCompileOnly)) || a == "-lib" || a == "--lib" ||
            a == "-dlink" || a == "--device-link")
          compile_only = true;
        else if (a == "--preprocess") p.preprocess_only = true;
        else if (a == "--generate-dependencies") p.deps_only = true;
        else if (a == "--shared") p.shared = true;
        else if (a == "--dryrun") no_output = true;
        else if (starts_with(a, "-x=") || starts_with(a, "--x=")) language = a.substr(a.find('=') + 1);
        else if (starts_with(a, "-o=") || starts_with(a, "--output-file=")) p.output = a.substr(a.find('=') + 1);
        else if (starts_with(a, "-Xlinker=") || starts_with(a, "--linker-options=")) p.linker_inputs = true;
        else if (starts_with(a, "--library=")) {
          p.libraries.push_back(a.substr(a.find('=') + 1));
          p.linker_inputs = true;
        } else if (starts_with(a, "-cudart=") || starts_with(a, "--cudart=")) {
          p.cudart = a.substr(a.find('=') + 1);
        } else if (starts_with(a, "-ccbin=") || starts_with(a, "--compiler-bindir=")) {
          p.abi_flags.push_back(a);
        }
        else if (a == "--debug") p.has_debug_option = true;
        // -G, -lineinfo: device debug information only; prof still adds -g for the host code.
      }
      if (a == "-c") compile_only = true;
      else if (a == "-S") assemble_only = true;
      else if (a == "-E") p.preprocess_only = true;
      else if (a == "-M" || a == "-MM") p.deps_only = true;
      else if (a == "-shared") p.shared = true;
      else if (a == "-r") p.relocatable = true;
      else if (a == "-static" || a == "-static-pie") p.static_link = true;
      else if (a == "-fsyntax-only" || a == "-###") no_output = true;
      else if (starts_with(a, "-o") && !nvcc) p.output = a.substr(2);
      else if (starts_with(a, "-x") && !nvcc) language = a.substr(2);
      else if (starts_with(a, "-l") && !(nvcc && (a == "-lib" || a == "-lineinfo" || a == "-lto" || a == "-ltoir" || a == "-link"))) {
        p.libraries.push_back(a.substr(2));
        p.linker_inputs = true;
      } else if (starts_with(a, "-Wl,")) p.linker_inputs = true;
      else if (starts_with(a, "-g") && !starts_with(a, "-gz") && !(nvcc && starts_with(a, "-gencode")))
        p.has_debug_option = true;  // -gz only compresses
      if (is_abi_flag(a)) p.abi_flags.push_back(a);
      continue;
    }
    // What is left of an "@file" here could not be read: GCC takes it as a file name (and fails).
    if (a == "-") {
      // stdin is a source only with an explicit -x; without one gcc refuses it anyway.
      p.inputs.push_back({a, language.empty() ? InputKind::Other : classify_input(a, language)});
    } else {
      p.inputs.push_back({a, classify_input(a, language)});
    }
    if (is_source(p.inputs.back().kind)) p.sources.push_back(a);
    if (p.inputs.back().kind == InputKind::FortranSource) p.fortran = true;
  }

  p.trailing_language = language;
  const bool has_inputs = std::any_of(p.inputs.begin(), p.inputs.end(),
                                      [](const Input& in) { return in.kind != InputKind::Header; });
  // GCC links when it has linker inputs alone (-Wl,@objects.rsp -o app): so does prof-wrap.
  p.nothing_to_build = no_output || (!has_inputs && !p.linker_inputs);
  if (p.deps_only || p.preprocess_only || p.nothing_to_build) return p;
  p.compiles = !p.sources.empty();
  p.links = !compile_only && !assemble_only;
  return p;
}

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && std::all_of(arg.begin(), arg.end(), [](unsigned char c) {
        return std::isalnum(c) || std::strchr("_@%+=:,./-", c) != nullptr;
      }))
    return arg;
  std::string q = "'";
  for (char c : arg) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += shell_quote(a);
  }
  return s;
}

}  // namespace prof::wrap
