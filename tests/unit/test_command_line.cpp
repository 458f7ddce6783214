// SPDX-License-Identifier: BSD-3-Clause
// prof-wrap: command classification, option parsing and command construction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "command_line.hpp"
#include "install_layout.hpp"
#include "test_support.hpp"
#include "toolchain.hpp"

using namespace prof::wrap;
using Argv = std::vector<std::string>;

namespace {

// Position of `word` in `cmd`, or -1.
long index_of(const Argv& cmd, const std::string& word) {
  const auto it = std::find(cmd.begin(), cmd.end(), word);
  return it == cmd.end() ? -1 : static_cast<long>(it - cmd.begin());
}

bool contains(const Argv& cmd, const std::string& word) { return index_of(cmd, word) >= 0; }

// True if `sub` occurs in `cmd` as a contiguous run.
bool contains_run(const Argv& cmd, const Argv& sub) {
  return std::search(cmd.begin(), cmd.end(), sub.begin(), sub.end()) != cmd.end();
}

const Layout kLayout{"/opt/prof"};

}  // namespace

TEST_CASE("classification of compiler commands", "[prof-wrap]") {
  struct Case {
    Argv argv;
    bool compiles, links, shared, preprocess_only, deps_only;
    Argv sources;
    std::optional<std::string> output;
  };
  const std::optional<std::string> none;
  // clang-format off
  const Case cases[] = {
    {{"gcc", "-c", "a.c"},                                  true,  false, false, false, false, {"a.c"}, none},
    {{"gcc", "-c", "a.c", "-o", "a.o"},                     true,  false, false, false, false, {"a.c"}, "a.o"},
    {{"gcc", "-c", "a.c", "-oa.o"},                         true,  false, false, false, false, {"a.c"}, "a.o"},
    {{"g++", "-c", "a.cpp", "b.cc", "c.cxx", "d.C", "e.c++"}, true, false, false, false, false,
        {"a.cpp", "b.cc", "c.cxx", "d.C", "e.c++"}, none},
    {{"gcc", "-S", "a.c"},                                  true,  false, false, false, false, {"a.c"}, none},
    {{"gcc", "-E", "a.c"},                                  false, false, false, true,  false, {"a.c"}, none},
    {{"gcc", "-M", "a.c"},                                  false, false, false, false, true,  {"a.c"}, none},
    {{"gcc", "-MM", "a.c", "-MF", "a.d"},                   false, false, false, false, true,  {"a.c"}, none},
    // -MD and friends accompany an ordinary compile; their arguments are not inputs.
    {{"gcc", "-MD", "-MF", "x.d", "-MT", "x.o", "-MQ", "y.o", "-c", "a.c", "-o", "x.o"},
                                                            true,  false, false, false, false, {"a.c"}, "x.o"},
    {{"gcc", "-MMD", "-MP", "-c", "a.c"},                   true,  false, false, false, false, {"a.c"}, none},
    {{"gcc", "a.o", "b.o", "-o", "app"},                    false, true,  false, false, false, {}, "app"},
    {{"gcc", "a.o", "libx.a", "liby.so", "libz.so.1.2", "-lm", "-o", "app"},
                                                            false, true,  false, false, false, {}, "app"},
    {{"gcc", "a.c", "-o", "app"},                           true,  true,  false, false, false, {"a.c"}, "app"},
    {{"gcc", "a.c", "b.c"},                                 true,  true,  false, false, false, {"a.c", "b.c"}, none},
    {{"gcc", "-shared", "-fPIC", "a.c", "-o", "liba.so"},   true,  true,  true,  false, false, {"a.c"}, "liba.so"},
    {{"gcc", "-shared", "a.o", "-o", "liba.so"},            false, true,  true,  false, false, {}, "liba.so"},
    {{"gcc", "-r", "a.o", "b.o", "-o", "ab.o"},             false, true,  false, false, false, {}, "ab.o"},
    // Assembly is assembled and linked, never instrumented.
    {{"gcc", "-c", "a.s", "b.S"},                           false, false, false, false, false, {}, none},
    {{"gcc", "start.S", "a.o", "-o", "app"},                false, true,  false, false, false, {}, "app"},
    {{"gcc", "-c", "x.i"},                                  true,  false, false, false, false, {"x.i"}, none},
    {{"g++", "-c", "x.ii"},                                 true,  false, false, false, false, {"x.ii"}, none},
    // -x changes what counts as a source, until the next -x.
    {{"gcc", "-x", "c", "-c", "weird.txt"},                 true,  false, false, false, false, {"weird.txt"}, none},
    {{"gcc", "-xc++", "-c", "weird.txt"},                   true,  false, false, false, false, {"weird.txt"}, none},
    {{"gcc", "-x", "c", "a.txt", "-x", "none", "b.o"},      true,  true,  false, false, false, {"a.txt"}, none},
    {{"gcc", "-x", "assembler", "-c", "a.c"},               false, false, false, false, false, {}, none},
    {{"gcc", "-x", "c", "-c", "-", "-o", "s.o"},            true,  false, false, false, false, {"-"}, "s.o"},
    // Arguments of options are never inputs.
    {{"gcc", "-c", "-I", "inc.c", "-D", "X.c", "-U", "Y.c", "-include", "h.c", "-isystem", "s.c",
        "-idirafter", "d.c", "-iquote", "q.c", "-imacros", "m.c", "-iprefix", "p.c", "-isysroot", "r.c",
        "--sysroot", "t.c", "--param", "max-inline-insns-single=10", "a.c"},
                                                            true,  false, false, false, false, {"a.c"}, none},
    {{"gcc", "a.o", "-L", "lib.o", "-l", "m", "-Xlinker", "x.o", "-T", "ld.o", "-z", "now", "-u", "sym",
        "-e", "start", "-o", "app"},                        false, true,  false, false, false, {}, "app"},
    {{"gcc", "-Xpreprocessor", "p.c", "-Xassembler", "q.c", "-c", "a.c"},
                                                            true,  false, false, false, false, {"a.c"}, none},
    // Nothing to build.
    {{"gcc", "--version"},                                  false, false, false, false, false, {}, none},
    {{"gcc", "-v"},                                         false, false, false, false, false, {}, none},
    {{"gcc", "-fsyntax-only", "a.c"},                       false, false, false, false, false, {"a.c"}, none},
    {{"g++", "-x", "c++-header", "pch.hpp"},                false, false, false, false, false, {}, none},
    {{"g++", "-c", "pch.hpp"},                              false, false, false, false, false, {}, none},
  };
  // clang-format on
  for (const auto& c : cases) {
    INFO(shell_join(c.argv));
    const Plan p = classify(c.argv);
    CHECK(p.compiles == c.compiles);
    CHECK(p.links == c.links);
    CHECK(p.shared == c.shared);
    CHECK(p.preprocess_only == c.preprocess_only);
    CHECK(p.deps_only == c.deps_only);
    CHECK(p.sources == c.sources);
    CHECK(p.output == c.output);
    CHECK(p.argv == c.argv);
  }
}

TEST_CASE("classification details", "[prof-wrap]") {
  SECTION("-r is relocatable, not an executable") {
    const Plan p = classify({"gcc", "-r", "a.o", "-o", "ab.o"});
    CHECK(p.relocatable);
    CHECK_FALSE(p.links_executable());
  }
  SECTION("-static and -static-pie are static links; -static-libgcc is not") {
    CHECK(classify({"gcc", "a.o", "-static"}).static_link);
    CHECK(classify({"gcc", "a.o", "-static-pie"}).static_link);
    CHECK_FALSE(classify({"gcc", "a.o", "-static-libgcc", "-static-libstdc++"}).static_link);
  }
  SECTION("any -g option counts as the user's debug choice, -gz does not") {
    CHECK(classify({"gcc", "-c", "a.c", "-g"}).has_debug_option);
    CHECK(classify({"gcc", "-c", "a.c", "-g0"}).has_debug_option);
    CHECK(classify({"gcc", "-c", "a.c", "-ggdb3"}).has_debug_option);
    CHECK_FALSE(classify({"gcc", "-c", "a.c", "-gz"}).has_debug_option);
    CHECK_FALSE(classify({"gcc", "-c", "a.c", "-O2"}).has_debug_option);
  }
  SECTION("libraries, glued and separate") {
    CHECK(classify({"gcc", "a.o", "-lm", "-l", "mpi"}).libraries == Argv{"m", "mpi"});
  }
  SECTION("input kinds by extension") {
    CHECK(classify_input("x/a.c", "") == InputKind::CSource);
    CHECK(classify_input("a.C", "") == InputKind::CxxSource);
    CHECK(classify_input("a.s", "") == InputKind::Assembly);
    CHECK(classify_input("a.S", "") == InputKind::Assembly);
    CHECK(classify_input("a.o", "") == InputKind::Object);
    CHECK(classify_input("liba.a", "") == InputKind::StaticLib);
    CHECK(classify_input("/usr/lib/libm.so", "") == InputKind::SharedLib);
    CHECK(classify_input("libm.so.6", "") == InputKind::SharedLib);
    CHECK(classify_input("libm.so.6.0.1", "") == InputKind::SharedLib);
    CHECK(classify_input("notes.sorted", "") == InputKind::Other);
    CHECK(classify_input("script.ld", "") == InputKind::Other);
    CHECK(classify_input("Makefile", "") == InputKind::Other);
    CHECK(classify_input("a.h", "") == InputKind::Header);
    CHECK(classify_input("a.o", "c") == InputKind::CSource);
    // Fortran: fixed and free form, upper case (preprocessed) too; -x f77/f95 and their cpp forms.
    for (const char* f : {"a.f", "a.for", "a.ftn", "a.fpp", "a.f90", "a.f95", "a.f03", "a.f08", "a.F", "a.FOR", "a.FTN",
                          "a.FPP", "a.F90", "a.F95", "a.F03", "x/a.F08"}) {
      CAPTURE(f);
      CHECK(classify_input(f, "") == InputKind::FortranSource);
    }
    for (const char* x : {"f77", "f77-cpp-input", "f95", "f95-cpp-input"}) CHECK(classify_input("a.txt", x) == InputKind::FortranSource);
    CHECK(classify_input("a.f90x", "") == InputKind::Other);
    CHECK(classify_input("a.mod", "") == InputKind::Other);
  }
  SECTION("Fortran sources are compiled; objects of any language link") {
    const Plan c = classify({"gfortran", "-c", "heat.F90", "-o", "heat.o"});
    CHECK(c.compiles);
    CHECK_FALSE(c.links);
    CHECK(c.fortran);
    CHECK(c.sources == Argv{"heat.F90"});
    const Plan mixed = classify({"gfortran", "main.f90", "helper.o", "-o", "app"});
    CHECK(mixed.compiles);
    CHECK(mixed.links);
    CHECK(mixed.fortran);
    const Plan from_c = classify({"gcc", "main.o", "fsub.o", "-lgfortran", "-o", "app"});
    CHECK_FALSE(from_c.compiles);
    CHECK(from_c.links);
    CHECK_FALSE(from_c.fortran);
    CHECK(classify({"gcc", "-c", "a.c", "b.f"}).fortran);
    // gfortran's options with a separate argument: no input files.
    const Plan mods = classify({"gfortran", "-J", "mods", "-fintrinsic-modules-path", "/x/finclude", "-c", "a.f90"});
    CHECK(mods.inputs.size() == 1);
    CHECK(mods.sources == Argv{"a.f90"});
    CHECK(classify({"gfortran", "-Jmods", "-c", "a.f90"}).inputs.size() == 1);
    CHECK_FALSE(classify({"gcc", "-c", "a.c"}).fortran);
  }
  SECTION("- without -x is not a source") { CHECK(classify({"gcc", "-c", "-"}).sources.empty()); }
  SECTION("ABI flags are collected for the adapter-list compile") {
    const Plan p = classify({"gcc", "-m32", "-O2", "--target=x86_64-linux-gnu", "-target", "t", "a.o"});
    CHECK(p.abi_flags == Argv{"-m32", "--target=x86_64-linux-gnu", "-target", "t"});
  }
}

TEST_CASE("prof-wrap options before the compiler", "[prof-wrap]") {
  SECTION("options, then the compiler and its arguments untouched") {
    const auto cl = parse_command_line({"--verbose", "--user", "--nocompiler", "--keep-files", "gcc", "-v", "--user", "a.c"});
    CHECK(cl.options.verbose);
    CHECK(cl.options.user);
    CHECK(cl.options.nocompiler);
    CHECK(cl.options.keep_files);
    CHECK_FALSE(cl.options.dry_run);
    CHECK(cl.compiler_argv == Argv{"gcc", "-v", "--user", "a.c"});
  }
  SECTION("-v is --verbose before the compiler; --dry-run implies verbose") {
    CHECK(parse_command_line({"-v", "gcc"}).options.verbose);
    const auto cl = parse_command_line({"--dry-run", "gcc"});
    CHECK(cl.options.dry_run);
    CHECK(cl.options.verbose);
  }
  SECTION("-- ends the options") {
    CHECK(parse_command_line({"--", "gcc", "-c"}).compiler_argv == Argv{"gcc", "-c"});
  }
  SECTION("unknown option") {
    CHECK_THROWS_AS(parse_command_line({"--xyz", "gcc", "a.c"}), UsageError);
    CHECK_THROWS_WITH(parse_command_line({"--xyz", "gcc"}), Catch::Contains("--xyz"));
  }
  SECTION("missing compiler, except for --help and --version") {
    CHECK_THROWS_AS(parse_command_line({"--verbose"}), UsageError);
    CHECK_THROWS_AS(parse_command_line({}), UsageError);
    CHECK(parse_command_line({"--help"}).options.help);
    CHECK(parse_command_line({"--version"}).options.version);
  }
  SECTION("PROF_WRAPPER_INSTRUMENTER_FLAGS and PROF_WRAPPER_COMPILER_FLAGS") {
    const auto cl = parse_command_line({"gcc", "-c", "a.c"}, " --user\t--verbose ", "-O2  -DX=1");
    CHECK(cl.options.user);
    CHECK(cl.options.verbose);
    CHECK(cl.compiler_argv == Argv{"gcc", "-O2", "-DX=1", "-c", "a.c"});
    CHECK_THROWS_WITH(parse_command_line({"gcc"}, "--bad", nullptr),
                      Catch::Contains("PROF_WRAPPER_INSTRUMENTER_FLAGS"));
  }
  SECTION("split_whitespace") {
    CHECK(split_whitespace(nullptr).empty());
    CHECK(split_whitespace("  ").empty());
    CHECK(split_whitespace("a  b\tc\n") == Argv{"a", "b", "c"});
  }
}

TEST_CASE("PROF_WRAPPER=off is a pure pass-through", "[prof-wrap]") {
  for (const char* off : {"off", "OFF", "Off", "0", "no", "NO", "false", "False"}) {
    INFO(off);
    CHECK(wrapper_disabled(off));
  }
  for (const char* on : {static_cast<const char*>(nullptr), "", "on", "1", "yes", "offf"}) {
    INFO((on ? on : "(unset)"));
    CHECK_FALSE(wrapper_disabled(on));
  }
  const Argv args{"--user", "--verbose", "gcc", "-c", "a b.c", "-o", "x.o"};
  CHECK(passthrough_command("off", args) == Argv{"gcc", "-c", "a b.c", "-o", "x.o"});
  CHECK_FALSE(passthrough_command("on", args).has_value());
  CHECK_FALSE(passthrough_command(nullptr, args).has_value());
  CHECK(passthrough_command("0", {"--", "clang", "-E", "x.c"}) == Argv{"clang", "-E", "x.c"});
  CHECK_FALSE(passthrough_command("off", {"--help"}).has_value());
}

TEST_CASE("toolchain lookup", "[prof-wrap]") {
  for (const char* c : {"gcc", "g++", "cc", "c++", "clang", "clang++"}) CHECK(find_toolchain(c) != nullptr);
  CHECK(std::string(find_toolchain("/usr/bin/gcc")->name) == "gcc");
  CHECK(std::string(find_toolchain("gcc-12")->name) == "gcc");
  CHECK(std::string(find_toolchain("clang++-14")->name) == "clang++");
  CHECK(std::string(find_toolchain("x86_64-linux-gnu-g++-12")->name) == "g++");
  CHECK(std::string(find_toolchain("x86_64-linux-gnu-gcc")->name) == "gcc");
  CHECK(find_toolchain("icc") == nullptr);
  CHECK(find_toolchain("ccache") == nullptr);
  for (const char* f : {"gfortran", "gfortran-12", "/usr/bin/gfortran", "x86_64-linux-gnu-gfortran-12", "mpifort", "mpif90",
                        "mpif77", "/usr/bin/mpif90"}) {
    CAPTURE(f);
    const Toolchain* tc = find_toolchain(f);
    REQUIRE(tc != nullptr);
    CHECK(tc->language == Language::Fortran);
    CHECK(tc->instrument_flags == Argv{"-finstrument-functions"});
    CHECK(tc->mpi == (std::string(tc->name).rfind("mpi", 0) == 0));
  }
  CHECK(std::string(find_toolchain("x86_64-linux-gnu-gfortran-12")->name) == "gfortran");
  CHECK(std::string(find_toolchain("mpif77")->name) == "mpif77");
  // Other Fortran compilers are driven like GCC, as Fortran.
  bool known = true;
  CHECK(toolchain_for("flang-new", &known)->language == Language::Fortran);
  CHECK_FALSE(known);
  CHECK(toolchain_for("nvfortran")->language == Language::Fortran);
  CHECK(toolchain_for("icx")->language == Language::C);
}

TEST_CASE("compile commands", "[prof-wrap]") {
  const Options defaults;
  SECTION("compile flags go before the user's arguments, which stay untouched and in order") {
    const Argv argv{"gcc", "-O2", "-c", "a.c", "-o", "a.o", "-fno-instrument-functions"};
    const auto cmds = build_commands(classify(argv), kLayout, defaults);
    REQUIRE(cmds.size() == 1);
    const Argv expected{"gcc", "-g", "-finstrument-functions", "-include", "/opt/prof/include/prof/instrumented.h",
                        "-I/opt/prof/include", "-O2", "-c", "a.c", "-o", "a.o", "-fno-instrument-functions"};
    CHECK(cmds[0] == expected);
    // The user's -fno-instrument-functions comes later and wins.
    CHECK(index_of(cmds[0], "-finstrument-functions") < index_of(cmds[0], "-fno-instrument-functions"));
  }
  SECTION("Fortran: the compiler's hooks and -g; no link guard (a C header)") {
    const auto cmds = build_commands(classify({"gfortran", "-O2", "-c", "heat.f90", "-o", "heat.o"}), kLayout, defaults);
    REQUIRE(cmds.size() == 1);
    CHECK(cmds[0] == Argv{"gfortran", "-g", "-finstrument-functions", "-I/opt/prof/include", "-O2", "-c", "heat.f90", "-o", "heat.o"});
    // One step with C and Fortran: the guard would make gfortran warn about the Fortran file.
    CHECK_FALSE(contains(build_commands(classify({"gfortran", "-c", "a.c", "b.F90"}), kLayout, defaults)[0], "-include"));
    CHECK(contains(build_commands(classify({"gfortran", "-c", "a.c"}), kLayout, defaults)[0], "-include"));
    // The plugin never sees Fortran (whichever driver compiles it); C through gfortran is fine.
    CHECK(gcc_plugin_unusable_for(classify({"gfortran", "-c", "a.f90"})) ==
          "it cannot instrument Fortran (GCC's Fortran front end has no PLUGIN_PRE_GENERICIZE event)");
    CHECK_FALSE(gcc_plugin_unusable_for(classify({"gcc", "-c", "a.c", "b.f"})).empty());
    CHECK(gcc_plugin_unusable_for(classify({"gfortran", "-c", "a.c"})).empty());
    CHECK(gcc_plugin_unusable_for(classify({"gcc", "-c", "a.c"})).empty());
    // --user: the macros reach preprocessed Fortran (.F90) too.
    Options user;
    user.user = true;
    CHECK(contains(build_commands(classify({"gfortran", "-c", "a.F90"}), kLayout, user)[0], "-DPROF_USER_ENABLE"));
  }
  SECTION("no -g when the user chose one") {
    const auto cmds = build_commands(classify({"gcc", "-g0", "-c", "a.c"}), kLayout, defaults);
    CHECK(std::count(cmds[0].begin(), cmds[0].end(), "-g") == 0);
    CHECK(contains(cmds[0], "-g0"));
  }
  SECTION("--user defines PROF_USER_ENABLE") {
    Options o;
    o.user = true;
    const auto cmd = build_commands(classify({"g++", "-c", "a.cpp"}), kLayout, o).back();
    CHECK(contains(cmd, "-DPROF_USER_ENABLE"));
    CHECK(contains(cmd, "-I/opt/prof/include"));
    CHECK(contains(cmd, "-finstrument-functions"));
  }
  SECTION("--nocompiler: no instrumentation, no guard, but the include path") {
    Options o;
    o.nocompiler = true;
    const auto cmd = build_commands(classify({"gcc", "-c", "a.c"}), kLayout, o).back();
    CHECK(cmd == Argv{"gcc", "-I/opt/prof/include", "-c", "a.c"});
  }
  SECTION("assembly-only compiles get nothing") {
    const Argv argv{"gcc", "-c", "a.S"};
    CHECK(build_commands(classify(argv), kLayout, defaults) == std::vector<Argv>{argv});
  }
  SECTION("-E and -M get the include path only") {
    CHECK(build_commands(classify({"gcc", "-E", "a.c"}), kLayout, defaults).back() ==
          Argv{"gcc", "-I/opt/prof/include", "-E", "a.c"});
    CHECK(build_commands(classify({"gcc", "-MM", "a.c"}), kLayout, defaults).back() ==
          Argv{"gcc", "-I/opt/prof/include", "-MM", "a.c"});
  }
  SECTION("nothing to build: the command as given") {
    const Argv argv{"gcc", "--version"};
    CHECK(build_commands(classify(argv), kLayout, defaults) == std::vector<Argv>{argv});
  }
  SECTION("the GCC plugin replaces -finstrument-functions and -g; filters become plugin arguments") {
    Options o;
    o.gcc_plugin = kLayout.gcc_plugin();
    o.instrument_filters = {"/f/a.filter", "/f/b.filter"};
    const auto cmd = build_commands(classify({"g++", "-O2", "-c", "a.cpp"}), kLayout, o).back();
    const Argv expected{"g++", "-fplugin=/opt/prof/lib/prof_gcc_plugin.so", "-fplugin-arg-prof_gcc_plugin-filter=/f/a.filter",
                        "-fplugin-arg-prof_gcc_plugin-filter=/f/b.filter", "-include", "/opt/prof/include/prof/instrumented.h",
                        "-I/opt/prof/include", "-O2", "-c", "a.cpp"};
    CHECK(cmd == expected);
  }
}

TEST_CASE("--instrument and when the GCC plugin can be used", "[prof-wrap]") {
  Options o;
  apply_option(o, "--instrument=plugin");
  CHECK(o.instrument == Instrument::Plugin);
  apply_option(o, "--instrument=functions");
  CHECK(o.instrument == Instrument::Functions);
  apply_option(o, "--instrument=auto");
  CHECK(o.instrument == Instrument::Auto);
  CHECK_THROWS_WITH(apply_option(o, "--instrument=magic"), "--instrument=magic is not one of plugin, functions, auto");

  const Toolchain& gcc = *find_toolchain("gcc");
  const Toolchain& clang = *find_toolchain("clang");
  const std::string v = gcc_plugin_version();
  CHECK(gcc_plugin_unusable(clang, v, "/p.so", true) == "clang is not GCC");
  if (v.empty()) {
    CHECK(gcc_plugin_unusable(gcc, "12.2.0", "/p.so", true).find("prof was built without it") == 0);
  } else {
    CHECK(gcc_plugin_unusable(gcc, v, "/p.so", true).empty());
    CHECK(gcc_plugin_unusable(gcc, v, "/p.so", false) == "/p.so is missing");
    CHECK(gcc_plugin_unusable(gcc, "99.1.0", "/p.so", true) == "it was built for GCC " + v + ", the compiler is GCC 99.1.0");
    CHECK(gcc_plugin_unusable(gcc, "", "/p.so", true) == "it was built for GCC " + v + ", the compiler is not GCC or did not say its version");
  }
}

TEST_CASE("link commands", "[prof-wrap]") {
  const Options defaults;
  const WorkFiles files{"/tmp/w/prof_adapters.c", "/tmp/w/prof_adapters.o"};
  const Argv link_tail{"-L/opt/prof/lib", "-Wl,-rpath,/opt/prof/lib", "-Wl,--push-state,--no-as-needed", "-lprof",
                       "-Wl,--pop-state", "-lpthread", "-ldl"};

  SECTION("an executable link: the adapter list is compiled first, then linked with libprof") {
    const Argv argv{"gcc", "a.o", "b.o", "-o", "app", "-lm"};
    const auto cmds = build_commands(classify(argv), kLayout, defaults, files);
    REQUIRE(cmds.size() == 2);
    CHECK(cmds[0] == Argv{"gcc", "-x", "c", "-c", "-fno-instrument-functions", "-fPIC", "/tmp/w/prof_adapters.c",
                          "-o", "/tmp/w/prof_adapters.o"});
    Argv expected = argv;
    expected.push_back("/tmp/w/prof_adapters.o");
    expected.insert(expected.end(), link_tail.begin(), link_tail.end());
    CHECK(cmds[1] == expected);
  }
  SECTION("compile and link in one call: both additions, one command after the adapter compile") {
    const auto cmds = build_commands(classify({"g++", "-O2", "main.cpp", "-o", "app"}), kLayout, defaults, files);
    REQUIRE(cmds.size() == 2);
    const Argv& cmd = cmds[1];
    CHECK(cmd[1] == "-g");
    CHECK(contains(cmd, "-finstrument-functions"));
    CHECK(contains_run(cmd, {"-O2", "main.cpp", "-o", "app", "/tmp/w/prof_adapters.o"}));
    CHECK(contains_run(cmd, link_tail));
    CHECK(index_of(cmd, "-finstrument-functions") < index_of(cmd, "main.cpp"));
    CHECK(index_of(cmd, "-lprof") > index_of(cmd, "app"));
  }
  SECTION("the adapter object is not read as source after a user's -x c") {
    const auto cmds = build_commands(classify({"gcc", "-x", "c", "in.txt", "-o", "app"}), kLayout, defaults, files);
    CHECK(contains_run(cmds.back(), {"in.txt", "-o", "app", "-x", "none", "/tmp/w/prof_adapters.o"}));
  }
  SECTION("Fortran links: the adapter list is compiled by GCC's C driver beside gfortran") {
    const auto cmds = build_commands(classify({"gfortran", "-O2", "main.f90", "helper.o", "-o", "app"}), kLayout, defaults, files);
    REQUIRE(cmds.size() == 2);
    CHECK(cmds[0] == Argv{"gcc", "-x", "c", "-c", "-fno-instrument-functions", "-fPIC", "/tmp/w/prof_adapters.c", "-o",
                          "/tmp/w/prof_adapters.o"});
    CHECK(cmds[1][0] == "gfortran");
    CHECK(contains_run(cmds[1], {"-O2", "main.f90", "helper.o", "-o", "app", "/tmp/w/prof_adapters.o"}));
    CHECK(contains_run(cmds[1], link_tail));
    CHECK(contains(cmds[1], "-finstrument-functions"));
    CHECK_FALSE(contains(cmds[1], "-include"));
    const Plan versioned = classify({"/opt/gcc/bin/x86_64-linux-gnu-gfortran-12", "a.o"});
    CHECK(build_commands(versioned, kLayout, defaults, files)[0][0] == "/opt/gcc/bin/x86_64-linux-gnu-gcc-12");
    // An MPI wrapper: the C driver beside the gfortran it runs (gcc when it does not say).
    Options ompi;
    ompi.mpi_wrapped_compiler = "/usr/bin/gfortran-12";
    CHECK(adapter_c_compiler(classify({"mpifort", "a.o"}), *find_toolchain("mpifort"), ompi) == "/usr/bin/gcc-12");
    CHECK(adapter_c_compiler(classify({"mpif90", "a.o"}), *find_toolchain("mpif90"), defaults) == "gcc");
    // Another Fortran compiler: cc, and no GCC-only option for it.
    ompi.mpi_wrapped_compiler = "flang-new";
    const Plan flang = classify({"mpifort", "a.o"});
    const Toolchain& mpifort_flang = *toolchain_for(flang, ompi);
    CHECK(std::string(mpifort_flang.name) == "mpifort (flang-new)");
    CHECK(mpifort_flang.language == Language::Fortran);
    CHECK(build_commands(flang, kLayout, ompi, files)[0] == Argv{"cc", "-x", "c", "-c", "-fPIC", "/tmp/w/prof_adapters.c",
                                                                "-o", "/tmp/w/prof_adapters.o"});
    CHECK(build_commands(classify({"flang-new", "a.o"}), kLayout, defaults, files)[0][0] == "cc");
    // C and C++ links keep their own compiler, -lgfortran or not.
    CHECK(build_commands(classify({"gcc", "main.o", "fsub.o", "-lgfortran"}), kLayout, defaults, files)[0][0] == "gcc");
    CHECK(adapter_c_compiler(classify({"g++-12", "a.o"}), *find_toolchain("g++-12"), defaults) == "g++-12");
  }
  SECTION("-static with Fortran: every weak pthread function of libgfortran.a is linked") {
    const Argv fortran = build_commands(classify({"gfortran", "-static", "a.o", "-o", "app"}), kLayout, defaults, files).back();
    CHECK(contains(fortran, "-Wl,-u,pthread_mutex_destroy"));
    CHECK(contains(fortran, "-Wl,-u,pthread_cond_init"));
    CHECK(contains(build_commands(classify({"gcc", "-static", "a.o", "-lgfortran"}), kLayout, defaults, files).back(),
                   "-Wl,-u,pthread_mutex_destroy"));
    CHECK_FALSE(contains(build_commands(classify({"gcc", "-static", "a.o"}), kLayout, defaults, files).back(),
                         "-Wl,-u,pthread_mutex_destroy"));
    CHECK_FALSE(contains(build_commands(classify({"gfortran", "a.o"}), kLayout, defaults, files).back(), "-Wl,-u,pthread_mutex_destroy"));
  }
  SECTION("clang's adapter-list compile has no -fno-instrument-functions (clang rejects it)") {
    const auto cmds = build_commands(classify({"clang", "a.o"}), kLayout, defaults, files);
    CHECK(cmds[0] == Argv{"clang", "-x", "c", "-c", "-fPIC", "/tmp/w/prof_adapters.c", "-o", "/tmp/w/prof_adapters.o"});
  }
  SECTION("ABI flags reach the adapter-list compile") {
    const auto cmds = build_commands(classify({"gcc", "-m32", "a.o"}), kLayout, defaults, files);
    CHECK(contains_run(cmds[0], {"gcc", "-m32", "-x", "c"}));
  }
  SECTION("-shared: libprof, but no adapter list") {
    const Argv argv{"gcc", "-shared", "a.o", "-o", "liba.so"};
    const auto cmds = build_commands(classify(argv), kLayout, defaults, files);
    REQUIRE(cmds.size() == 1);
    Argv expected = argv;
    expected.insert(expected.end(), link_tail.begin(), link_tail.end());
    CHECK(cmds[0] == expected);
  }
  SECTION("-r: no link flags") {
    const Argv argv{"gcc", "-r", "a.o", "b.o", "-o", "ab.o"};
    CHECK(build_commands(classify(argv), kLayout, defaults, files) == std::vector<Argv>{argv});
  }
  SECTION("-static: all of libprof.a first, --wrap for every wrapper, libprof's libraries, the adapter list last") {
    const Argv argv{"gcc", "-static", "a.o", "-o", "app", "-lm"};
    const auto cmds = build_commands(classify(argv), kLayout, defaults, files);
    REQUIRE(cmds.size() == 2);
    CHECK(cmds[0] == Argv{"gcc", "-x", "c", "-c", "-fno-instrument-functions", "-fPIC", "/tmp/w/prof_adapters.c",
                          "-o", "/tmp/w/prof_adapters.o"});
    Argv expected{"gcc", "-Wl,--whole-archive", "/opt/prof/lib/libprof.a", "-Wl,--no-whole-archive"};
    expected.insert(expected.end(), argv.begin() + 1, argv.end());
    for (const std::string& sym : static_wrapped_symbols()) expected.push_back("-Wl,--wrap=" + sym);
    expected.insert(expected.end(), static_link_libraries().begin(), static_link_libraries().end());
    expected.push_back("/tmp/w/prof_adapters.o");
    CHECK(cmds[1] == expected);
    // Nothing of the dynamic link.
    CHECK_FALSE(contains(cmds[1], "-lprof"));
    CHECK_FALSE(contains(cmds[1], "-Wl,-rpath,/opt/prof/lib"));
  }
  SECTION("-static: the wrapped functions, as in adapters/static_wraps.def") {
    const Argv wraps = static_wrapped_symbols();
    for (const char* sym : {"pthread_create", "pthread_join", "pthread_exit", "pthread_detach", "pthread_cancel",
                            "pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_timedlock",
                            "pthread_mutex_unlock", "pthread_cond_wait", "pthread_cond_timedwait",
                            "pthread_cond_signal", "pthread_cond_broadcast", "longjmp", "_longjmp", "siglongjmp",
                            "__longjmp_chk", "__cxa_begin_catch", "execve", "execv", "execvp", "execvpe", "execl",
                            "execlp", "execle", "fexecve"}) {
      INFO(sym);
      CHECK(contains(wraps, sym));
    }
    CHECK(wraps.size() == 26);
  }
  SECTION("-static: libprof's own libraries, the C++ runtime after OTF2 and libdw") {
    const Argv& deps = static_link_libraries();
    for (const char* lib : {"-lopen-trace-format2", "-ldw", "-lelf", "-lz", "-lstdc++", "-lm", "-lpthread", "-ldl"}) {
      INFO(lib);
      CHECK(contains(deps, lib));
    }
    CHECK(index_of(deps, "-lopen-trace-format2") < index_of(deps, "-ldw"));
    CHECK(index_of(deps, "-ldw") < index_of(deps, "-lelf"));
    CHECK(index_of(deps, "-lelf") < index_of(deps, "-lz"));
    CHECK(index_of(deps, "-ldw") < index_of(deps, "-lstdc++"));
    for (const auto& d : deps) CHECK(std::count(deps.begin(), deps.end(), d) == 1);
  }
  SECTION("-static compile and link in one call, g++ and clang++") {
    for (const char* cxx : {"g++", "clang++"}) {
      INFO(cxx);
      const auto cmds = build_commands(classify({cxx, "-O2", "-static", "-pthread", "main.cpp", "-o", "app"}), kLayout,
                                       defaults, files);
      REQUIRE(cmds.size() == 2);
      const Argv& cmd = cmds[1];
      CHECK(contains(cmd, std::string(cxx) == "g++" ? "-finstrument-functions" : "-finstrument-functions-after-inlining"));
      CHECK(contains_run(cmd, {"-Wl,--whole-archive", "/opt/prof/lib/libprof.a", "-Wl,--no-whole-archive", "-O2",
                               "-static", "-pthread", "main.cpp"}));
      CHECK(contains(cmd, "-Wl,--wrap=pthread_create"));
      CHECK(contains(cmd, "-Wl,--wrap=__cxa_begin_catch"));
      CHECK(cmd.back() == "/tmp/w/prof_adapters.o");
    }
  }
  SECTION("-static-pie is a static link too") {
    const auto cmd = build_commands(classify({"gcc", "-static-pie", "a.o"}), kLayout, defaults, files).back();
    CHECK(contains(cmd, "/opt/prof/lib/libprof.a"));
    CHECK(contains(cmd, "-Wl,--wrap=pthread_create"));
  }
  SECTION("-static after a user's -x c: the adapter object is not read as source") {
    const auto cmds = build_commands(classify({"gcc", "-static", "-x", "c", "in.txt", "-o", "app"}), kLayout, defaults,
                                     files);
    const Argv& cmd = cmds.back();
    CHECK(index_of(cmd, "/opt/prof/lib/libprof.a") < index_of(cmd, "-x"));  // before the user's -x c
    CHECK(contains_run(cmd, {"in.txt", "-o", "app", "-x", "none", "-Wl,--wrap=pthread_create"}));
    CHECK(cmd.back() == "/tmp/w/prof_adapters.o");
  }
  SECTION("-static with -shared is refused; -static on a compile-only step or -r is harmless") {
    CHECK_THROWS_WITH(build_commands(classify({"gcc", "-static", "-shared", "a.o", "-o", "liba.so"}), kLayout,
                                     defaults, files),
                      "-static with -shared is not supported; link the shared library without -static");
    CHECK_THROWS_AS(build_commands(classify({"gcc", "-shared", "-static", "a.o"}), kLayout, defaults, files),
                    WrapError);
    const Argv compile{"gcc", "-static", "-c", "a.c"};
    const auto cmds = build_commands(classify(compile), kLayout, defaults, files);
    REQUIRE(cmds.size() == 1);
    CHECK_FALSE(contains(cmds[0], "/opt/prof/lib/libprof.a"));
    const Argv relocatable{"gcc", "-static", "-r", "a.o", "b.o", "-o", "ab.o"};
    CHECK(build_commands(classify(relocatable), kLayout, defaults, files) == std::vector<Argv>{relocatable});
  }
  SECTION("the MPI compiler wrappers are driven like GCC, the Fortran ones too") {
    for (const char* mpi : {"mpicc", "mpicxx", "mpic++", "mpiCC", "/usr/bin/mpicxx"}) {
      const Toolchain* tc = find_toolchain(mpi);
      REQUIRE(tc != nullptr);
      CHECK(tc->mpi);
      CHECK(tc->gcc);
      const auto link = build_commands(classify({mpi, "a.o", "-o", "app"}), kLayout, defaults, files);
      REQUIRE(link.size() == 2);
      // The MPI adapter's library before the user's arguments (and so before the MPI library),
      // inside a --no-as-needed bracket; libprof at the end as always.
      CHECK(contains_run(link.back(), {"-L/opt/prof/lib", "-Wl,-rpath,/opt/prof/lib", "-Wl,--push-state,--no-as-needed",
                                       "-lprof_mpi", "-Wl,--pop-state", "a.o"}));
      CHECK(contains_run(link.back(), link_tail));
      const Plan plan = classify({mpi, "a.o", "-o", "app"});
      CHECK(adapter_list_source(linked_adapters(plan, *tc, defaults)).find("&prof_adapter_mpi") != std::string::npos);
      CHECK(contains(build_commands(classify({mpi, "-c", "a.c"}), kLayout, defaults).back(), "-finstrument-functions"));
    }
    // gcc with -lmpi is an MPI link; --mpp=none and --mpp=mpi override the detection.
    const Toolchain& gcc = *find_toolchain("gcc");
    const Plan with_lmpi = classify({"gcc", "a.o", "-lmpi", "-o", "app"});
    const Argv lmpi_link = build_commands(with_lmpi, kLayout, defaults, files).back();
    CHECK(index_of(lmpi_link, "-lprof_mpi") >= 0);
    CHECK(index_of(lmpi_link, "-lprof_mpi") < index_of(lmpi_link, "-lmpi"));  // binds MPI_Send to the wrapper
    Options none;
    apply_option(none, "--mpp=none");
    CHECK_FALSE(contains(build_commands(with_lmpi, kLayout, none, files).back(), "-lprof_mpi"));
    CHECK(linked_adapters(classify({"mpicc", "a.o"}), *find_toolchain("mpicc"), none).size() == 3);
    Options force;
    apply_option(force, "--mpp=mpi");
    CHECK(linked_adapters(classify({"gcc", "a.o"}), gcc, force).back()->name == std::string("mpi"));
    CHECK(linked_adapters(classify({"gcc", "a.o"}), gcc, defaults).size() == 3);
    CHECK_THROWS_WITH(apply_option(force, "--mpp=shmem"), "--mpp=shmem is not one of mpi, none, auto");
    CHECK(build_commands(classify({"mpifort", "--version"}), kLayout, defaults) == std::vector<Argv>{{"mpifort", "--version"}});
    for (const char* mpi : {"mpifort", "mpif90", "mpif77"}) {
      CAPTURE(mpi);
      const Plan plan = classify({mpi, "a.o", "-o", "app"});
      CHECK(linked_adapters(plan, *find_toolchain(mpi), defaults).back()->name == std::string("mpi"));
      const auto link = build_commands(plan, kLayout, defaults, files);
      REQUIRE(link.size() == 2);
      CHECK(link[0][0] == "gcc");  // the adapter list is C
      CHECK(contains_run(link.back(), {"-Wl,--push-state,--no-as-needed", "-lprof_mpi", "-Wl,--pop-state", "a.o"}));
      CHECK(contains(build_commands(classify({mpi, "-c", "a.f90"}), kLayout, defaults).back(), "-finstrument-functions"));
    }
  }
  SECTION("an MPI library on the link line, however it is named, links the MPI adapter before it") {
    // CMake's MPI::MPI_C names libmpi by its full path (issue 14, item 4).
    const std::string libmpi = "/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so";
    const Plan cmake = classify({"cc", "main.o", "-o", "app", "-Wl,-rpath,/usr/lib/x86_64-linux-gnu/openmpi/lib", libmpi});
    const Toolchain& cc = *find_toolchain("cc");
    CHECK(adapter_decisions(cmake, cc, defaults) == "compiler, user, pthread, mpi (the link names " + libmpi + "); not linked: "
                                                    "openmp (no -fopenmp), cuda (no nvcc, .cu input, -lcudart or -lcuda)");
    const Argv link = build_commands(cmake, kLayout, defaults, files).back();
    CHECK(index_of(link, "-lprof_mpi") >= 0);
    CHECK(index_of(link, "-lprof_mpi") < index_of(link, libmpi));
    for (const Argv& with : std::vector<Argv>{{"-lmpi_cxx", "-lmpi"}, {"-lmpich"}, {"-l:libmpi.so.40"}, {"/opt/mpich/lib/libmpich.a"},
                                              {"/opt/intel/mpi/lib/libmpifort.so.12"}, {"libmpi_cxx.so"}}) {
      Argv argv{"g++", "main.o", "-o", "app"};
      argv.insert(argv.end(), with.begin(), with.end());
      CAPTURE(with);
      CHECK(linked_adapters(classify(argv), cc, defaults).back()->name == std::string("mpi"));
    }
    // Not MPI: other libraries whose names start alike, and a serial build's MPI stand-in.
    for (const char* other : {"-lmpfr", "-lmpc", "/usr/lib/libmpfr.so.6", "libmpi_stubs.a", "-lmpi_stubs", "/x/libmpi.so.txt"}) {
      CAPTURE(other);
      CHECK(linked_adapters(classify({"gcc", "main.o", other}), cc, defaults).size() == 3);
    }
    CHECK(is_mpi_library("libmpi.so"));
    CHECK(is_mpi_library("/usr/lib/libmpi.so.40.30.4"));
    CHECK(is_mpi_library("libmpi++.so"));
    CHECK_FALSE(is_mpi_library("mpi.so"));
    CHECK_FALSE(is_mpi_library("libmpi.sox"));
    // --mpp=none: the generated list tells the runtime not to warn about the MPI library it finds.
    Options none;
    none.mpp = Mpp::None;
    CHECK(linked_adapters(cmake, cc, none).size() == 3);
    CHECK(adapter_list_source(linked_adapters(cmake, cc, none), {}, true).find("const int prof_mpi_adapter_declined = 1;\n") !=
          std::string::npos);
    CHECK(adapter_list_source(linked_adapters(cmake, cc, defaults)).find("prof_mpi_adapter_declined") == std::string::npos);
  }
  SECTION("an MPI compiler wrapper that runs clang is driven like clang, MPI included") {
    // What the wrappers say: Open MPI's --showme:command, MPICH's -show.
    CHECK(compiler_in_show_output("clang++\n") == "clang++");
    CHECK(compiler_in_show_output("\n  gcc -I/opt/mpich/include -L/opt/mpich/lib -lmpi\n") == "gcc");
    CHECK(compiler_in_show_output("") == "");
    Options o;
    o.mpi_wrapped_compiler = "clang++";
    const Plan compile = classify({"mpicxx", "-O2", "-c", "a.cpp"});
    const Toolchain* tc = toolchain_for(compile, o);
    CHECK(tc->name == std::string("mpicxx (clang++)"));
    CHECK(tc->mpi);
    CHECK_FALSE(tc->gcc);
    CHECK(gcc_plugin_unusable(*tc, "", "/p.so", true) == "mpicxx (clang++) is not GCC");
    const Argv cc = build_commands(compile, kLayout, o).back();
    CHECK(contains(cc, "-finstrument-functions-after-inlining"));
    CHECK_FALSE(contains(cc, "-finstrument-functions"));
    const Plan link = classify({"mpicxx", "a.o", "-o", "app"});
    const auto cmds = build_commands(link, kLayout, o, files);
    REQUIRE(cmds.size() == 2);
    for (const Argv& cmd : cmds) CHECK_FALSE(contains(cmd, "-fno-instrument-functions"));  // clang 14 rejects it
    CHECK(contains(cmds.back(), "-lprof_mpi"));
    CHECK(adapter_decisions(link, *tc, o).find("mpi (mpicxx (clang++) is an MPI compiler wrapper)") != std::string::npos);
    // The same object for the same question; GCC underneath keeps the wrapper's own row.
    CHECK(toolchain_for(link, o) == tc);
    o.mpi_wrapped_compiler = "/usr/bin/g++-12";
    CHECK(toolchain_for(link, o) == find_toolchain("mpicxx"));
    o.mpi_wrapped_compiler = "icx";
    CHECK(toolchain_for(classify({"mpicc", "-c", "a.c"}), o)->name == std::string("mpicc (icx)"));
    CHECK(toolchain_for(classify({"gcc", "-c", "a.c"}), o) == find_toolchain("gcc"));
  }
  SECTION("a compiler prof does not know is driven like GCC") {
    bool known = true;
    CHECK(toolchain_for("icx", &known)->language == Language::C);
    CHECK_FALSE(known);
    CHECK(toolchain_for("/opt/intel/bin/icpx")->language == Language::Cxx);
    CHECK(toolchain_for("nvc++")->language == Language::Cxx);
    CHECK(toolchain_for("g++", &known) == find_toolchain("g++"));
    CHECK(known);
    const auto compile = build_commands(classify({"icx", "-c", "a.c"}), kLayout, defaults);
    CHECK(contains(compile.back(), "-finstrument-functions"));
    const auto link = build_commands(classify({"icx", "a.o", "-o", "app"}), kLayout, defaults, files);
    REQUIRE(link.size() == 2);
    CHECK_FALSE(contains(link[0], "-fno-instrument-functions"));  // the adapter list: no GCC-only option
    CHECK(contains_run(link.back(), link_tail));
  }
  SECTION("--nocompiler still links libprof") {
    Options o;
    o.nocompiler = true;
    CHECK(contains_run(build_commands(classify({"gcc", "a.o"}), kLayout, o, files).back(), link_tail));
  }
}

TEST_CASE("adapter list", "[prof-wrap]") {
  const Plan p = classify({"gcc", "a.o"});
  const Toolchain& tc = *find_toolchain("gcc");
  SECTION("default: compiler, user, pthread") {
    const std::string src = adapter_list_source(linked_adapters(p, tc, Options{}));
    CHECK(src ==
          "/* Generated by prof-wrap. Do not edit. */\n"
          "struct prof_adapter;\n"
          "extern const struct prof_adapter prof_adapter_compiler;\n"
          "extern const struct prof_adapter prof_adapter_user;\n"
          "extern const struct prof_adapter prof_adapter_pthread;\n"
          "const struct prof_adapter* const prof_linked_adapters[] = { &prof_adapter_compiler, &prof_adapter_user, "
          "&prof_adapter_pthread, 0 };\n"
          "extern void prof_init(void);\n"
          "__attribute__((constructor)) static void prof_init_from_executable(void) { prof_init(); }\n");
  }
  SECTION("--nocompiler drops the compiler adapter") {
    Options o;
    o.nocompiler = true;
    const std::string src = adapter_list_source(linked_adapters(p, tc, o));
    CHECK(src.find("prof_adapter_compiler") == std::string::npos);
    CHECK(src.find("&prof_adapter_user, &prof_adapter_pthread, 0 }") != std::string::npos);
  }
}

TEST_CASE("a prof built with PROF_SANITIZE", "[prof-wrap]") {
  Options o;
  o.sanitize = "address";
  o.sanitizer_runtime = "/usr/lib/gcc/x86_64-linux-gnu/12/libasan.so";
  const WorkFiles files{"/tmp/w/prof_adapters.c", "/tmp/w/prof_adapters.o"};
  SECTION("executables link the runtime right after libprof; libraries and compiles do not") {
    const Argv link = build_commands(classify({"clang", "a.o", "-o", "app"}), kLayout, o, files).back();
    CHECK(contains_run(link, {"-Wl,--push-state,--no-as-needed", "-lprof", o.sanitizer_runtime, "-Wl,--pop-state"}));
    CHECK_FALSE(contains(build_commands(classify({"gcc", "-shared", "a.o", "-o", "liba.so"}), kLayout, o, files).back(),
                         o.sanitizer_runtime));
    CHECK_FALSE(contains(build_commands(classify({"gcc", "-c", "a.c"}), kLayout, o).back(), o.sanitizer_runtime));
  }
  SECTION("-static is refused") {
    CHECK_THROWS_WITH(build_commands(classify({"gcc", "-static", "a.o"}), kLayout, o, files),
                      Catch::Matchers::StartsWith("-static links are not possible with this prof: it was built with PROF_SANITIZE=address"));
  }
  SECTION("ASan's defaults in the adapter list: link order, whole stacks, crash signals") {
    const auto adapters = linked_adapters(classify({"gcc", "a.o"}), *find_toolchain("gcc"), o);
    const std::string asan = "verify_asan_link_order=0:fast_unwind_on_malloc=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0";
    CHECK(sanitizer_default_options(o) == asan);
    CHECK(adapter_list_source(adapters, {}, false, sanitizer_default_options(o))
              .find("__attribute__((weak)) const char* __asan_default_options(void) { return \"" + asan + "\"; }\n") !=
          std::string::npos);
    CHECK(adapter_list_source(adapters).find("__asan_default_options") == std::string::npos);
    Options thread = o;
    thread.sanitize = "thread";
    CHECK(sanitizer_default_options(thread).empty());
    CHECK(sanitizer_default_options(Options{}).empty());
  }
}

TEST_CASE("install layout and shell quoting", "[prof-wrap]") {
  CHECK(layout_for_executable("/opt/prof/bin/prof-wrap").prefix == "/opt/prof");
  CHECK(layout_for_executable("/b/./bin/prof-wrap").libprof() == "/b/lib/libprof.so");
  CHECK(layout_for_executable("/b/bin/prof-wrap").instrumented_header() == "/b/include/prof/instrumented.h");
  CHECK(layout_for_executable("/b/bin/prof-wrap").libprof_static() == "/b/lib/libprof.a");
  CHECK_THROWS_AS(check_layout(Layout{"/nonexistent/prof"}), WrapError);
  CHECK_THROWS_WITH(check_layout(Layout{"/nonexistent/prof"}), Catch::Contains("/nonexistent/prof/lib/libprof.so"));

  CHECK(shell_quote("-DX=1") == "-DX=1");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_join({"gcc", "-DMSG=\"hi there\"", "a.c"}) == "gcc '-DMSG=\"hi there\"' a.c");
}

namespace {

// A response-file reader over an in-memory file system: name → contents.
ResponseFileReader fake_files(std::vector<std::pair<std::string, std::string>> files) {
  return [files = std::move(files)](const std::string& path) -> std::optional<std::string> {
    for (const auto& f : files)
      if (f.first == path) return f.second;
    return std::nullopt;
  };
}

}  // namespace

TEST_CASE("response files are split by GCC's rules", "[prof-wrap][rsp]") {
  SECTION("blanks separate: space, tab, newline, CR, VT, FF") {
    CHECK(split_response_file("-O2 -c\ta.c\n-o\r\na.o\v-g\f-Wall\n") ==
          Argv{"-O2", "-c", "a.c", "-o", "a.o", "-g", "-Wall"});
    CHECK(split_response_file("  leading and trailing  \n") == Argv{"leading", "and", "trailing"});
  }
  SECTION("blanks only, or nothing: no argument") {
    CHECK(split_response_file("").empty());
    CHECK(split_response_file(" \t\n\n ").empty());
  }
  SECTION("single and double quotes group and are removed, also inside a word") {
    CHECK(split_response_file("'a b' \"c d\" -DX='1 2'y") == Argv{"a b", "c d", "-DX=1 2y"});
    CHECK(split_response_file("\"it's\" 'say \"hi\"'") == Argv{"it's", "say \"hi\""});
  }
  SECTION("\"\" and '' are empty arguments") {
    CHECK(split_response_file("a \"\" b ''") == Argv{"a", "", "b", ""});
  }
  SECTION("a backslash takes the next character literally, inside quotes too (GCC 12)") {
    CHECK(split_response_file("a\\ b c\\\\d \\'e\\\"") == Argv{"a b", "c\\d", "'e\""});
    CHECK(split_response_file("\"p\\\"q\\r\" 'x\\'y'") == Argv{"p\"qr", "x'y"});
    CHECK(split_response_file("one\\\ntwo") == Argv{"one\ntwo"});
  }
  SECTION("an unclosed quote ends with the text; a trailing backslash is dropped") {
    CHECK(split_response_file("-DQ='open end") == Argv{"-DQ=open end"});
    CHECK(split_response_file("a\\") == Argv{"a"});
  }
  SECTION("the text ends at a NUL byte") {
    CHECK(split_response_file(std::string("a b\0c d", 7)) == Argv{"a", "b"});
  }
}

TEST_CASE("response files are expanded for classification only", "[prof-wrap][rsp]") {
  SECTION("expansion in place, nested files relative to the working directory") {
    const auto read = fake_files({{"args.rsp", "-O2 @inner.rsp -o a.o"}, {"inner.rsp", "-c a.c"}});
    CHECK(expand_response_files({"gcc", "-g", "@args.rsp", "-Wall"}, read) ==
          Argv{"gcc", "-g", "-O2", "-c", "a.c", "-o", "a.o", "-Wall"});
  }
  SECTION("a missing file, \"@\" alone and argv[0] stay literal") {
    const auto read = fake_files({{"x.rsp", "-c"}});
    CHECK(expand_response_files({"@x.rsp", "@missing.rsp", "@", "@x.rsp"}, read) ==
          Argv{"@x.rsp", "@missing.rsp", "@", "-c"});
  }
  SECTION("an empty file, or one of blanks, is no argument") {
    const auto read = fake_files({{"empty.rsp", ""}, {"blank.rsp", " \n"}});
    CHECK(expand_response_files({"gcc", "@empty.rsp", "a.o", "@blank.rsp"}, read) == Argv{"gcc", "a.o"});
  }
  SECTION("a file that names itself stops after GCC's 2000 expansions") {
    const auto read = fake_files({{"loop.rsp", "-g @loop.rsp"}});
    const Argv out = expand_response_files({"gcc", "@loop.rsp"}, read);
    CHECK(out.size() == 2 + 2000);
    CHECK(out.back() == "@loop.rsp");
    CHECK(std::count(out.begin(), out.end(), "-g") == 2000);
  }
  SECTION("a compile from a response file: classified by its contents, the command keeps @file") {
    const auto read = fake_files({{"args.rsp", "-O2 -c a.c -o a.o"}});
    const Argv argv{"gcc", "@args.rsp"};
    const Plan p = classify(argv, read);
    CHECK(p.compiles);
    CHECK_FALSE(p.links);
    CHECK(p.sources == Argv{"a.c"});
    CHECK(p.output == std::optional<std::string>("a.o"));
    CHECK(p.argv == argv);
    const auto cmds = build_commands(p, kLayout, Options{});
    REQUIRE(cmds.size() == 1);
    CHECK(contains(cmds[0], "-finstrument-functions"));
    CHECK(contains(cmds[0], "@args.rsp"));
    CHECK_FALSE(contains(cmds[0], "a.c"));
  }
  SECTION("a link from a response file: the adapter list and libprof") {
    const auto read = fake_files({{"link.rsp", "main.o fib.o -o app"}});
    const Plan p = classify({"gcc", "@link.rsp"}, read);
    CHECK_FALSE(p.compiles);
    CHECK(p.links_executable());
    CHECK(p.output == std::optional<std::string>("app"));
    const auto cmds = build_commands(p, kLayout, Options{}, {"/t/prof_adapters.c", "/t/prof_adapters.o"});
    REQUIRE(cmds.size() == 2);
    CHECK(contains_run(cmds[1], {"gcc", "@link.rsp", "/t/prof_adapters.o"}));
    CHECK(contains(cmds[1], "-lprof"));
  }
  SECTION("quoted names, nested files, -x and -shared inside") {
    const auto read = fake_files({{"outer.rsp", "@sub.rsp -x c 'my file.txt' -o \"lib x.so\""},
                                  {"sub.rsp", "-shared -fPIC"}});
    const Plan p = classify({"gcc", "@outer.rsp"}, read);
    CHECK(p.compiles);
    CHECK(p.shared);
    CHECK_FALSE(p.links_executable());
    CHECK(p.sources == Argv{"my file.txt"});
    CHECK(p.output == std::optional<std::string>("lib x.so"));
    CHECK(p.trailing_language == "c");
  }
  SECTION("-M inside a response file: dependencies only") {
    const auto read = fake_files({{"deps.rsp", "-MM a.c -MF a.d"}});
    const Plan p = classify({"gcc", "@deps.rsp"}, read);
    CHECK(p.deps_only);
    CHECK_FALSE(p.compiles);
  }
  SECTION("an unreadable @file is a literal input, as GCC takes it") {
    const Plan p = classify({"gcc", "-c", "a.c", "@missing.rsp"}, fake_files({}));
    CHECK(p.compiles);
    REQUIRE(p.inputs.size() == 2);
    CHECK(p.inputs[1].path == "@missing.rsp");
    CHECK(p.inputs[1].kind == InputKind::Other);
  }
  SECTION("the real file system: read_response_file") {
    prof_test::TempDir dir("prof_rsp_");
    const std::string file = dir.path + "/args.rsp";
    std::ofstream(file) << "-c 'a b.c'\n";
    CHECK(read_response_file(file) == std::optional<std::string>("-c 'a b.c'\n"));
    CHECK_FALSE(read_response_file(dir.path).has_value());  // a directory
    CHECK_FALSE(read_response_file(dir.path + "/missing.rsp").has_value());
    CHECK_FALSE(read_response_file("").has_value());
    CHECK(classify({"gcc", "@" + file}).sources == Argv{"a b.c"});
  }
}

TEST_CASE("linker options alone make a link, as in GCC", "[prof-wrap]") {
  SECTION("-Wl,@objects.rsp, -Xlinker and -l are linker inputs") {
    for (const Argv& argv : {Argv{"gcc", "-Wl,@objs.rsp", "-o", "app"}, Argv{"gcc", "-Xlinker", "@objs.rsp"},
                             Argv{"gcc", "-lfoo", "-o", "app"}, Argv{"gcc", "-l", "foo"}}) {
      INFO(shell_join(argv));
      const Plan p = classify(argv);
      CHECK(p.linker_inputs);
      CHECK(p.links_executable());
      CHECK_FALSE(p.nothing_to_build);
    }
  }
  SECTION("but they do not make a compile, nor undo -c, -E or -M") {
    CHECK(classify({"gcc", "-c", "-Wl,-z,now"}).passthrough());
    CHECK(classify({"gcc", "-E", "-Wl,-z,now", "a.c"}).preprocess_only);
    CHECK_FALSE(classify({"gcc", "-E", "-Wl,-z,now", "a.c"}).links);
  }
  SECTION("compiler queries stay queries") {
    for (const Argv& argv : {Argv{"gcc", "--version"}, Argv{"gcc", "-dumpversion"}, Argv{"gcc", "-dumpfullversion"},
                             Argv{"gcc", "-v"}, Argv{"gcc", "-print-file-name=libc.so"}, Argv{"gcc", "-dumpmachine"},
                             Argv{"g++", "-print-search-dirs"}, Argv{"gcc", "-print-prog-name=ld"}}) {
      INFO(shell_join(argv));
      const Plan p = classify(argv);
      CHECK(p.passthrough());
      CHECK(build_commands(p, kLayout, Options{}) == std::vector<Argv>{argv});
    }
  }
}

TEST_CASE("awkward real-world commands", "[prof-wrap]") {
  SECTION("LTO: -flto is an ordinary compile and link flag") {
    CHECK(classify({"gcc", "-O2", "-flto", "-c", "a.c"}).compiles);
    CHECK(classify({"gcc", "-flto=auto", "-fuse-linker-plugin", "a.o", "b.o", "-o", "app"}).links_executable());
  }
  SECTION("PIE and PGO flags change nothing in the classification") {
    CHECK(classify({"gcc", "-pie", "a.o", "-o", "app"}).links_executable());
    CHECK(classify({"gcc", "-no-pie", "a.o", "-o", "app"}).links_executable());
    CHECK(classify({"gcc", "-fprofile-generate", "-O2", "-c", "a.c"}).compiles);
    CHECK(classify({"gcc", "-fprofile-use=prof.d", "-O2", "a.c", "-o", "app"}).links_executable());
  }
  SECTION("dependency generation alongside a compile, and alone") {
    const Plan md = classify({"gcc", "-MD", "-MF", "x.d", "-MT", "x.o", "-c", "a.c", "-o", "x.o"});
    CHECK(md.compiles);
    CHECK_FALSE(md.deps_only);
    const Plan mm = classify({"gcc", "-MM", "-MG", "-MP", "-MT", "t", "-MF", "x.d", "a.c"});
    CHECK(mm.deps_only);
    CHECK(mm.sources == Argv{"a.c"});
    CHECK(build_commands(mm, kLayout, Options{}).back() ==
          Argv{"gcc", "-I/opt/prof/include", "-MM", "-MG", "-MP", "-MT", "t", "-MF", "x.d", "a.c"});
  }
}

TEST_CASE("nvcc: classification and commands", "[prof-wrap][nvcc]") {
  const Options defaults;
  const WorkFiles files{"/tmp/w/prof_adapters.c", "/tmp/w/prof_adapters.o"};
  SECTION("nvcc's options and .cu files are read as nvcc reads them") {
    // CMake's compile line: -ccbin X and --options-file X take the next word; -x cu makes a source.
    const Plan p = classify({"nvcc", "-forward-unknown-to-host-compiler", "-ccbin", "g++", "--options-file",
                             "inc.rsp", "--generate-code=arch=compute_75,code=[compute_75,sm_75]", "-MD", "-MT",
                             "k.o", "-MF", "k.o.d", "-x", "cu", "-c", "k.cu", "-o", "k.o"});
    CHECK(p.compiles);
    CHECK_FALSE(p.links);
    CHECK(p.sources == Argv{"k.cu"});
    CHECK_FALSE(p.has_debug_option);  // -gencode/--generate-code is no -g
    CHECK(classify({"nvcc", "-gencode", "arch=compute_80,code=sm_80", "-c", "a.cu"}).sources == Argv{"a.cu"});
    CHECK(classify_input("k.cu", "") == InputKind::CudaSource);
    CHECK(classify_input("k.txt", "cu") == InputKind::CudaSource);
    // Separate compilation, libraries and device links: compiled, never an executable link.
    for (const char* only : {"-dc", "--device-c", "-lib", "-dlink", "-ptx", "-cubin", "-fatbin"}) {
      const Plan q = classify({"nvcc", only, "a.cu", "-o", "out"});
      CHECK_FALSE(q.links);
      CHECK(q.compiles);
    }
    CHECK_FALSE(classify({"nvcc", "-dlink", "a.o", "b.o", "-o", "dlink.o"}).links);
    // -lib and -lineinfo are no libraries; -lcublas is one.
    const Plan l = classify({"nvcc", "-lineinfo", "a.o", "-lcublas", "-o", "app"});
    CHECK(l.libraries == Argv{"cublas"});
    CHECK(l.links_executable());
    CHECK(classify({"nvcc", "--dryrun", "a.cu"}).passthrough());
    // -ewp is a flag (its next word is a source); --library names a library; the host compiler
    // goes to the adapter-list compile too.
    CHECK(classify({"nvcc", "-ewp", "a.cu", "-c"}).sources == Argv{"a.cu"});
    CHECK(classify({"nvcc", "a.o", "--library", "mpi", "--library=cublas", "-o", "app"}).libraries == Argv{"mpi", "cublas"});
    CHECK(classify({"nvcc", "-ccbin", "g++-12", "a.o", "-o", "app"}).abi_flags == Argv{"-ccbin", "g++-12"});
  }
  SECTION("host instrumentation through -Xcompiler; the header and include path as nvcc options") {
    Options o;
    o.gcc_plugin = kLayout.gcc_plugin();
    o.instrument_filters = {"/f/a.filter"};
    const auto cmd = build_commands(classify({"nvcc", "-O2", "-c", "k.cu"}), kLayout, o).back();
    const Argv expected{"nvcc", "-Xcompiler", "-fplugin=/opt/prof/lib/prof_gcc_plugin.so", "-Xcompiler",
                        "-fplugin-arg-prof_gcc_plugin-filter=/f/a.filter", "-include",
                        "/opt/prof/include/prof/instrumented.h", "-I/opt/prof/include", "-O2", "-c", "k.cu"};
    CHECK(cmd == expected);
    // nvcc splits -Xcompiler values at commas: a filter path with one is refused, not mangled.
    o.instrument_filters = {"/f/a,b.filter"};
    CHECK_THROWS_WITH(build_commands(classify({"nvcc", "-c", "k.cu"}), kLayout, o),
                      Catch::Contains("nvcc splits host compiler options at commas"));
    const auto hooks = build_commands(classify({"nvcc", "-c", "k.cu"}), kLayout, defaults).back();
    CHECK(contains_run(hooks, {"-Xcompiler", "-finstrument-functions"}));
    CHECK(contains_run(hooks, {"-Xcompiler", "-finstrument-functions-exclude-function-list=__device_stub_"}));
    CHECK(contains(hooks, "-g"));
    CHECK_FALSE(contains(hooks, "-finstrument-functions-exclude-function-list=__device_stub_,__cuda"));
  }
  SECTION("an executable link: the adapter list through nvcc, linker options through -Xlinker") {
    const auto cmds = build_commands(classify({"nvcc", "a.o", "k.o", "-o", "app"}), kLayout, defaults, files);
    REQUIRE(cmds.size() == 2);
    CHECK(cmds[0] == Argv{"nvcc", "-x", "c", "-c", "-Xcompiler", "-fPIC", "/tmp/w/prof_adapters.c", "-o",
                          "/tmp/w/prof_adapters.o"});
    const Argv tail{"/tmp/w/prof_adapters.o", "-L/opt/prof/lib", "-Xlinker", "-rpath,/opt/prof/lib", "-lprof", "-lpthread", "-ldl"};
    CHECK(contains_run(cmds[1], tail));
    for (const auto& w : cmds[1]) CHECK(w.rfind("-Wl,", 0) != 0);  // nvcc rejects -Wl,
  }
  SECTION("the host compiler that loads the plugin") {
    const Toolchain& nvcc = *find_toolchain("/usr/local/cuda/bin/nvcc");
    CHECK(nvcc.cuda);
    CHECK(nvcc.dialect == Dialect::Nvcc);
    CHECK(host_compiler(classify({"nvcc", "-c", "k.cu"}), nvcc) == "gcc");
    CHECK(host_compiler(classify({"nvcc", "-ccbin", "g++-12", "-c", "k.cu"}), nvcc) == "g++-12");
    CHECK(host_compiler(classify({"nvcc", "--compiler-bindir=/usr/bin/gcc-12", "-c", "k.cu"}), nvcc) == "/usr/bin/gcc-12");
    CHECK(host_compiler(classify({"nvcc", "-ccbin", "/usr/bin", "-c", "k.cu"}), nvcc) == "/usr/bin/gcc");
    CHECK(host_compiler(classify({"g++", "-c", "a.cpp"}), *find_toolchain("g++")) == "g++");
  }
}

namespace {

// The names of the adapters a link step of `argv` gets with `options`.
Argv adapter_names(const Argv& argv, const Options& options = {}) {
  Argv names;
  for (const AdapterEntry* a : linked_adapters(classify(argv), *toolchain_for(argv[0]), options)) names.push_back(a->name);
  return names;
}

bool has_adapter(const Argv& argv, const char* name, const Options& options = {}) {
  return contains(adapter_names(argv, options), name);
}

}  // namespace

TEST_CASE("--cuda and --nocuda", "[prof-wrap][cuda]") {
  Options o;
  CHECK(o.cuda == Cuda::Auto);
  apply_option(o, "--cuda");
  CHECK(o.cuda == Cuda::On);
  apply_option(o, "--nocuda");
  CHECK(o.cuda == Cuda::Off);
  CHECK(parse_command_line({"--nocuda", "--cuda", "g++", "a.o"}).options.cuda == Cuda::On);  // the last one counts
  CHECK(parse_command_line({"g++", "a.o"}, "--nocuda", nullptr).options.cuda == Cuda::Off);
  // After the compiler name they are the compiler's (nvcc's own --cuda means "compile to .ii").
  const auto cl = parse_command_line({"nvcc", "--cuda", "k.cu"});
  CHECK(cl.options.cuda == Cuda::Auto);
  CHECK(cl.compiler_argv == Argv{"nvcc", "--cuda", "k.cu"});
  CHECK_THROWS_AS(apply_option(o, "--cuda=yes"), UsageError);
}

TEST_CASE("CUDA programs get the CUDA adapter", "[prof-wrap][cuda]") {
  SECTION("detection: nvcc, a .cu input, the CUDA runtime or driver library, nvcc's -cudart") {
    for (const Argv& argv : {Argv{"nvcc", "a.o", "-o", "app"}, Argv{"/usr/local/cuda/bin/nvcc", "k.cu"},
                             Argv{"g++", "main.o", "k.cu", "-o", "app"}, Argv{"clang++", "k.cu"},
                             Argv{"g++", "a.o", "-lcudart"}, Argv{"g++", "a.o", "-l", "cudart"},
                             Argv{"g++", "a.o", "-lcudart_static"}, Argv{"gcc", "a.o", "-lcuda"},
                             Argv{"nvcc_wrapper", "a.o", "-cudart=shared"}, Argv{"nvcc_wrapper", "a.o", "--cudart", "none"}}) {
      INFO(shell_join(argv));
      CHECK(has_adapter(argv, "cuda"));
      CHECK_FALSE(has_adapter(argv, "mpi"));
    }
    for (const Argv& argv : {Argv{"g++", "a.o", "-o", "app"}, Argv{"gcc", "a.o", "-lcublas"}, Argv{"g++", "a.o", "-lcudadevrt"},
                             Argv{"g++", "a.o", "cudart.o"}, Argv{"g++", "k.cuh.o"}, Argv{"mpicc", "a.o"}}) {
      INFO(shell_join(argv));
      CHECK_FALSE(has_adapter(argv, "cuda"));
    }
    CHECK(classify({"nvcc", "-cudart=static", "a.o"}).cudart == "static");
    CHECK(classify({"nvcc", "--cudart", "shared", "a.o"}).cudart == "shared");
    CHECK(classify({"nvcc", "-cudart", "none", "a.o"}).inputs.size() == 1);  // "none" is no input
    CHECK(classify({"g++", "-cudart=static", "a.o"}).cudart.empty());         // nvcc's option only
  }
  SECTION("--nocuda wins over detection, --cuda forces it; MPI and CUDA get both") {
    Options off, on;
    off.cuda = Cuda::Off;
    on.cuda = Cuda::On;
    CHECK_FALSE(has_adapter({"nvcc", "k.cu", "-o", "app"}, "cuda", off));
    CHECK_FALSE(has_adapter({"g++", "a.o", "-lcudart"}, "cuda", off));
    CHECK(has_adapter({"g++", "a.o"}, "cuda", on));
    CHECK(adapter_names({"mpicxx", "a.o", "-o", "app", "-lcudart"}) == Argv{"compiler", "user", "pthread", "mpi", "cuda"});
    Options no_mpi;
    no_mpi.mpp = Mpp::None;
    CHECK(adapter_names({"mpicxx", "a.o", "-lcudart"}, no_mpi) == Argv{"compiler", "user", "pthread", "cuda"});
  }
  SECTION("a prof built without the adapter: an automatic decision leaves it out, --cuda does not") {
    Options missing;
    missing.cuda_adapter_missing = true;
    CHECK_FALSE(has_adapter({"nvcc", "k.cu"}, "cuda", missing));
    missing.cuda = Cuda::On;
    CHECK(has_adapter({"nvcc", "k.cu"}, "cuda", missing));  // prof-wrap reports the missing library
  }
  SECTION("the link: libprof_cuda like libprof_mpi, -Xlinker for nvcc; the adapter list names it") {
    const WorkFiles files{"/tmp/w/prof_adapters.c", "/tmp/w/prof_adapters.o"};
    const Argv gxx = build_commands(classify({"g++", "a.o", "-o", "app", "-lcudart"}), kLayout, Options{}, files).back();
    CHECK(contains_run(gxx, {"g++", "-L/opt/prof/lib", "-Wl,-rpath,/opt/prof/lib", "-Wl,--push-state,--no-as-needed",
                             "-lprof_cuda", "-Wl,--pop-state", "a.o"}));
    const Argv both = build_commands(classify({"mpicxx", "a.o", "-lcudart"}), kLayout, Options{}, files).back();
    CHECK(contains_run(both, {"-Wl,--push-state,--no-as-needed", "-lprof_mpi", "-lprof_cuda", "-Wl,--pop-state", "a.o"}));
    const Argv nvcc = build_commands(classify({"nvcc", "-O2", "k.cu", "-o", "app"}), kLayout, Options{}, files).back();
    CHECK(contains_run(nvcc, {"-L/opt/prof/lib", "-Xlinker", "-rpath,/opt/prof/lib", "-lprof_cuda", "-O2", "k.cu"}));
    for (const auto& w : nvcc) CHECK(w.rfind("-Wl,", 0) != 0);
    Options off;
    off.cuda = Cuda::Off;
    CHECK_FALSE(contains(build_commands(classify({"nvcc", "k.cu"}), kLayout, off, files).back(), "-lprof_cuda"));
    CHECK_FALSE(contains(build_commands(classify({"nvcc", "-c", "k.cu"}), kLayout, Options{}).back(), "-lprof_cuda"));
    const Plan p = classify({"nvcc", "k.cu", "-o", "app"});
    const std::string src = adapter_list_source(linked_adapters(p, *find_toolchain("nvcc"), Options{}));
    CHECK(src.find("extern const struct prof_adapter prof_adapter_cuda;\n") != std::string::npos);
    CHECK(src.find("&prof_adapter_pthread, &prof_adapter_cuda, 0 }") != std::string::npos);
  }
  SECTION("--verbose says which adapters are linked and why") {
    const Toolchain& gxx = *find_toolchain("g++");
    CHECK(adapter_decisions(classify({"g++", "a.o"}), gxx, Options{}) ==
          "compiler, user, pthread; not linked: openmp (no -fopenmp), mpi (no MPI compiler wrapper or MPI library on the link line), "
          "cuda (no nvcc, .cu input, -lcudart or -lcuda)");
    CHECK(adapter_decisions(classify({"mpicxx", "a.o", "-lcudart"}), *find_toolchain("mpicxx"), Options{}) ==
          "compiler, user, pthread, mpi (mpicxx is an MPI compiler wrapper), cuda (the link has -lcudart); not linked: openmp (no -fopenmp)");
    CHECK(adapter_decisions(classify({"nvcc", "k.cu"}), *find_toolchain("nvcc"), Options{}) ==
          "compiler, user, pthread, cuda (the compiler is nvcc); not linked: openmp (no -fopenmp), mpi (no MPI compiler wrapper or MPI "
          "library on the link line)");
    CHECK(adapter_decisions(classify({"mpifort", "a.o"}), *find_toolchain("mpifort"), Options{}) ==
          "compiler, user, pthread, mpi (mpifort is an MPI compiler wrapper); not linked: openmp (no -fopenmp), cuda (no nvcc, .cu "
          "input, -lcudart or -lcuda)");
    CHECK(adapter_decisions(classify({"g++", "m.o", "k.cu"}), gxx, Options{}).find("cuda (k.cu is CUDA source)") != std::string::npos);
    Options o;
    o.nocompiler = true;
    o.cuda = Cuda::Off;
    o.mpp = Mpp::Mpi;
    CHECK(adapter_decisions(classify({"nvcc", "k.cu"}), *find_toolchain("nvcc"), o) ==
          "user, pthread, mpi (--mpp=mpi); not linked: compiler (--nocompiler), openmp (no -fopenmp), cuda (--nocuda)");
    Options missing;
    missing.cuda_adapter_missing = true;
    CHECK(adapter_decisions(classify({"g++", "a.o", "-lcuda"}), gxx, missing).find(
              "cuda (the link has -lcuda, but prof was built without the CUDA adapter)") != std::string::npos);
  }
}

TEST_CASE("the OpenMP adapter: links with -fopenmp, not -static ones, not with --noopenmp", "[prof-wrap][openmp]") {
  const Options defaults;
  const auto names = [](const std::vector<const AdapterEntry*>& v) {
    std::vector<std::string> out;
    for (const AdapterEntry* a : v) out.push_back(a->name);
    return out;
  };
  const auto has_openmp = [&](const Argv& argv, const Options& o) {
    const Plan p = classify(argv);
    const auto v = names(linked_adapters(p, *toolchain_for(p, o), o));
    return std::find(v.begin(), v.end(), "openmp") != v.end();
  };
  for (const Argv& argv : std::vector<Argv>{{"gcc", "-fopenmp", "a.c", "-o", "app"},
                                            {"clang", "-fopenmp=libomp", "a.o"},
                                            {"gfortran", "-fopenmp", "a.f90"},
                                            {"mpicc", "-O2", "-fopenmp", "a.o", "-o", "app"},
                                            {"nvcc", "-Xcompiler=-O2,-fopenmp", "a.o"}}) {
    CAPTURE(argv);
    CHECK(has_openmp(argv, defaults));
  }
  CHECK_FALSE(has_openmp({"gcc", "a.c", "-o", "app"}, defaults));
  CHECK_FALSE(has_openmp({"gcc", "-fopenmp-simd", "a.c"}, defaults));  // SIMD only: no runtime
  Options no;
  apply_option(no, "--noopenmp");
  CHECK_FALSE(has_openmp({"gcc", "-fopenmp", "a.o"}, no));
  const Plan st = classify({"gcc", "-static", "-fopenmp", "a.o"});
  CHECK(adapter_decisions(st, *toolchain_for(st, defaults), defaults).find("openmp (the command has -fopenmp, but -static") !=
        std::string::npos);
  const Plan dyn = classify({"gcc", "-fopenmp", "a.o"});
  CHECK(adapter_decisions(dyn, *toolchain_for(dyn, defaults), defaults) ==
        "compiler, user, pthread, openmp (the command has -fopenmp); not linked: mpi (no MPI compiler wrapper or MPI library on the "
        "link line), cuda (no nvcc, .cu input, -lcudart or -lcuda)");
  // The generated list names it, so the program's runtime starts it.
  CHECK(adapter_list_source(linked_adapters(dyn, *toolchain_for(dyn, defaults), defaults)).find("&prof_adapter_openmp") !=
        std::string::npos);
}
