// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the filter-file parser and matcher (Score-P semantics, SCOREP-REFERENCE.md §2).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "measurement/filter/filter.hpp"

using prof::filter::Filter;
using prof::filter::Rule;

namespace {

Filter parsed(const std::string& text) {
  Filter f;
  std::string error;
  INFO(text);
  const bool ok = f.parse(text, "t.filter", &error);
  INFO(error);
  REQUIRE(ok);
  return f;
}

/// The error message for `text`, which must fail to parse.
std::string error_of(const std::string& text) {
  Filter f;
  std::string error;
  INFO(text);
  REQUIRE_FALSE(f.parse(text, "t.filter", &error));
  CHECK(error.find_first_of("\n\r") == std::string::npos);
  CHECK(f.empty());
  return error;
}

bool region_out(const Filter& f, const std::string& name, const std::string& mangled = "") {
  return f.excluded(name, mangled, "");
}

}  // namespace

TEST_CASE("an empty filter excludes nothing", "[filter]") {
  Filter f = parsed("");
  CHECK(f.empty());
  CHECK(f.rule_count() == 0);
  CHECK_FALSE(f.excluded("main", "", "/src/main.c"));
  Filter g = parsed("# only a comment\n\n   \n");
  CHECK(g.empty());
  Filter h = parsed("PROF_REGION_NAMES_BEGIN\nPROF_REGION_NAMES_END\n");
  CHECK(h.empty());
}

TEST_CASE("every rule form is parsed into rules", "[filter]") {
  Filter f = parsed(
      "PROF_FILE_NAMES_BEGIN\n"
      "  EXCLUDE */lib/*\n"
      "  INCLUDE */lib/keep.c\n"
      "PROF_FILE_NAMES_END\n"
      "PROF_REGION_NAMES_BEGIN\n"
      "  EXCLUDE foo*\n"
      "  INCLUDE foo_keep\n"
      "  EXCLUDE MANGLED _Z3barv\n"
      "  INCLUDE MANGLED _Z3bazv\n"
      "PROF_REGION_NAMES_END\n");
  REQUIRE(f.rule_count() == 6);
  REQUIRE(f.file_rules().size() == 2);
  REQUIRE(f.region_rules().size() == 4);
  const Rule& r0 = f.file_rules()[0];
  CHECK(r0.exclude);
  CHECK_FALSE(r0.mangled);
  CHECK(r0.pattern == "*/lib/*");
  CHECK(r0.line == 2);
  CHECK_FALSE(f.file_rules()[1].exclude);
  const auto& rr = f.region_rules();
  CHECK((rr[0].exclude && !rr[0].mangled && rr[0].pattern == "foo*" && rr[0].line == 6));
  CHECK((!rr[1].exclude && !rr[1].mangled && rr[1].pattern == "foo_keep" && rr[1].line == 7));
  CHECK((rr[2].exclude && rr[2].mangled && rr[2].pattern == "_Z3barv" && rr[2].line == 8));
  CHECK((!rr[3].exclude && rr[3].mangled && rr[3].pattern == "_Z3bazv" && rr[3].line == 9));

  CHECK(region_out(f, "foo1"));
  CHECK_FALSE(region_out(f, "foo_keep"));
  CHECK_FALSE(region_out(f, "other"));
  CHECK(region_out(f, "bar()", "_Z3barv"));
  CHECK(f.excluded("x", "", "/src/lib/a.c"));
  CHECK_FALSE(f.excluded("x", "", "/src/lib/keep.c"));
}

TEST_CASE("the last matching rule wins", "[filter]") {
  SECTION("across EXCLUDE and INCLUDE") {
    Filter f = parsed(
        "PROF_REGION_NAMES_BEGIN\n"
        "EXCLUDE *\n"
        "INCLUDE main\n"
        "EXCLUDE ma*\n"
        "PROF_REGION_NAMES_END\n");
    CHECK(region_out(f, "main"));      // EXCLUDE ma* comes last
    CHECK(region_out(f, "other"));
    Filter g = parsed(
        "PROF_REGION_NAMES_BEGIN\n"
        "EXCLUDE ma*\n"
        "INCLUDE main\n"
        "PROF_REGION_NAMES_END\n");
    CHECK_FALSE(region_out(g, "main"));
    CHECK(region_out(g, "malloc_wrapper"));
  }
  SECTION("within one line and across lines of one rule") {
    Filter f = parsed("PROF_REGION_NAMES_BEGIN EXCLUDE a* INCLUDE ab* EXCLUDE abc PROF_REGION_NAMES_END");
    CHECK(region_out(f, "a1"));
    CHECK_FALSE(region_out(f, "ab1"));
    CHECK(region_out(f, "abc"));
    CHECK_FALSE(region_out(f, "b"));
  }
  SECTION("across several blocks, in file order") {
    Filter f = parsed(
        "PROF_REGION_NAMES_BEGIN\n EXCLUDE *\nPROF_REGION_NAMES_END\n"
        "PROF_REGION_NAMES_BEGIN\n INCLUDE keep\nPROF_REGION_NAMES_END\n");
    CHECK(region_out(f, "x"));
    CHECK_FALSE(region_out(f, "keep"));
  }
  SECTION("an INCLUDE without an earlier EXCLUDE changes nothing (default INCLUDE)") {
    Filter f = parsed("PROF_REGION_NAMES_BEGIN\nINCLUDE foo\nPROF_REGION_NAMES_END\n");
    CHECK_FALSE(region_out(f, "foo"));
    CHECK_FALSE(region_out(f, "bar"));
  }
  SECTION("parse() appends, so a second file's rules come after the first's") {
    Filter f;
    std::string error;
    REQUIRE(f.parse("PROF_REGION_NAMES_BEGIN EXCLUDE * PROF_REGION_NAMES_END", "a", &error));
    REQUIRE(f.parse("PROF_REGION_NAMES_BEGIN INCLUDE main PROF_REGION_NAMES_END", "b", &error));
    CHECK(f.rule_count() == 2);
    CHECK_FALSE(region_out(f, "main"));
    CHECK(region_out(f, "other"));
    // A failed parse leaves the filter unchanged.
    CHECK_FALSE(f.parse("PROF_REGION_NAMES_BEGIN INCLUDE other", "c", &error));
    CHECK(f.rule_count() == 2);
    CHECK(region_out(f, "other"));
  }
}

TEST_CASE("patterns are fnmatch wildcards", "[filter]") {
  Filter f = parsed(
      "PROF_REGION_NAMES_BEGIN\n"
      "EXCLUDE star_* q? set[0-9] not[!a-z] ns::*\n"
      "PROF_REGION_NAMES_END\n");
  CHECK(region_out(f, "star_"));
  CHECK(region_out(f, "star_anything"));
  CHECK_FALSE(region_out(f, "star"));
  CHECK(region_out(f, "q1"));
  CHECK_FALSE(region_out(f, "q"));
  CHECK_FALSE(region_out(f, "q12"));
  CHECK(region_out(f, "set7"));
  CHECK_FALSE(region_out(f, "setx"));
  CHECK_FALSE(region_out(f, "set10"));
  CHECK(region_out(f, "not5"));
  CHECK_FALSE(region_out(f, "notx"));
  CHECK(region_out(f, "ns::f(int)"));
  CHECK_FALSE(region_out(f, "Star_x"));   // case-sensitive, as fnmatch with flags 0

  // With flags 0 a '*' also matches '/' (reference §2.1), so it stands for path prefixes.
  Filter g = parsed("PROF_FILE_NAMES_BEGIN EXCLUDE */tests/* PROF_FILE_NAMES_END");
  CHECK(g.excluded("f", "", "/home/u/proj/tests/deep/er/t.c"));
  CHECK(g.excluded("f", "", "a/tests/t.c"));
  CHECK_FALSE(g.excluded("f", "", "/home/u/proj/src/t.c"));
}

TEST_CASE("MANGLED patterns match the mangled name", "[filter]") {
  Filter f = parsed(
      "PROF_REGION_NAMES_BEGIN\n"
      "EXCLUDE MANGLED _ZN3foo*\n"
      "INCLUDE MANGLED _ZN3foo4keepEv\n"
      "PROF_REGION_NAMES_END\n");
  CHECK(region_out(f, "foo::bar()", "_ZN3foo3barEv"));
  CHECK_FALSE(region_out(f, "foo::keep()", "_ZN3foo4keepEv"));
  // The demangled name is not what MANGLED rules look at.
  CHECK_FALSE(region_out(f, "_ZN3foo_but_demangled", "_Z5otherv"));
  // Without a mangled name (C functions) the plain name is matched instead.
  CHECK(region_out(f, "_ZN3foo_c_name", ""));

  SECTION("plain rules never look at the mangled name") {
    Filter g = parsed("PROF_REGION_NAMES_BEGIN EXCLUDE _Z* PROF_REGION_NAMES_END");
    CHECK_FALSE(region_out(g, "foo()", "_Z3foov"));
  }
  SECTION("MANGLED lasts until the next keyword; DEMANGLED switches back within the rule") {
    Filter g = parsed(
        "PROF_REGION_NAMES_BEGIN\n"
        "EXCLUDE MANGLED _Z1av\n"
        "        _Z1bv DEMANGLED c()\n"
        "EXCLUDE d()\n"
        "PROF_REGION_NAMES_END\n");
    const auto& r = g.region_rules();
    REQUIRE(r.size() == 4);
    CHECK(r[0].mangled);
    CHECK(r[1].mangled);
    CHECK(r[1].line == 3);
    CHECK_FALSE(r[2].mangled);
    CHECK_FALSE(r[3].mangled);   // every rule starts demangled
    CHECK(region_out(g, "b()", "_Z1bv"));
    CHECK(region_out(g, "c()", "_Z1cv"));
    CHECK(region_out(g, "d()", "_Z1dv"));
    CHECK_FALSE(region_out(g, "e()", "_Z1ev"));
  }
}

TEST_CASE("file rules come first and an excluded file cannot be re-included by region rules",
          "[filter]") {
  // SCOREP-REFERENCE.md §2.2: "The file block is evaluated first. A region whose source file is
  // excluded is filtered and cannot be re-included by the region block. Otherwise the region
  // block decides." (Score-P: SCOREP_Filter_Match = match_file || match_function.)
  Filter f = parsed(
      "PROF_REGION_NAMES_BEGIN\n"
      "  INCLUDE *\n"
      "  EXCLUDE helper\n"
      "  INCLUDE important\n"
      "PROF_REGION_NAMES_END\n"
      "PROF_FILE_NAMES_BEGIN\n"
      "  EXCLUDE */vendor/*\n"
      "  INCLUDE */vendor/ours/*\n"
      "PROF_FILE_NAMES_END\n");
  CHECK(f.excluded("important", "", "/p/vendor/lib.c"));       // region INCLUDE cannot help
  CHECK(f.excluded("anything", "", "/p/vendor/lib.c"));
  CHECK_FALSE(f.excluded("important", "", "/p/vendor/ours/x.c"));   // file INCLUDE can
  CHECK(f.excluded("helper", "", "/p/vendor/ours/x.c"));        // then the region rules decide
  CHECK(f.excluded("helper", "", "/p/src/x.c"));
  CHECK_FALSE(f.excluded("main", "", "/p/src/x.c"));
  CHECK(f.file_excluded("/p/vendor/lib.c"));
  CHECK_FALSE(f.region_excluded("important", ""));

  SECTION("an unknown file (\"\") is decided by the region rules alone") {
    Filter g = parsed("PROF_FILE_NAMES_BEGIN EXCLUDE * PROF_FILE_NAMES_END");
    CHECK_FALSE(g.excluded("main", "", ""));
    CHECK(g.excluded("main", "", "main.c"));
  }
  SECTION("file names are simplified before matching") {
    Filter g = parsed("PROF_FILE_NAMES_BEGIN EXCLUDE /p/vendor/* PROF_FILE_NAMES_END");
    CHECK(g.excluded("f", "", "/p/src/../vendor/x.c"));
    CHECK(g.excluded("f", "", "/p//vendor/./x.c"));
    CHECK(Filter::simplify_path("/a/b/../c//./d.c") == "/a/c/d.c");
    CHECK(Filter::simplify_path("./a/../../b.c") == "../b.c");
    CHECK(Filter::simplify_path("/../x.c") == "/x.c");
    CHECK(Filter::simplify_path("src/x.c") == "src/x.c");
  }
}

TEST_CASE("compile-time variant needs an explicit INCLUDE other than '*'", "[filter]") {
  // SCOREP-REFERENCE.md §2.2, scorep_filter_include_function.
  Filter f = parsed(
      "PROF_REGION_NAMES_BEGIN\n"
      "  INCLUDE *\n"
      "  INCLUDE inl_* other\n"
      "  EXCLUDE inl_bad\n"
      "  EXCLUDE gone\n"
      "PROF_REGION_NAMES_END\n"
      "PROF_FILE_NAMES_BEGIN EXCLUDE *.h PROF_FILE_NAMES_END\n");
  CHECK(f.explicitly_included("inl_ok", "", "a.c"));
  CHECK(f.explicitly_included("other", "", "a.c"));
  CHECK_FALSE(f.explicitly_included("plain", "", "a.c"));     // only INCLUDE * matched
  CHECK_FALSE(f.explicitly_included("inl_bad", "", "a.c"));   // a later EXCLUDE matched
  CHECK_FALSE(f.explicitly_included("inl_ok", "", "a.h"));    // file excluded
}

TEST_CASE("Score-P filter files are accepted unchanged", "[filter]") {
  Filter f = parsed(
      "SCOREP_FILE_NAMES_BEGIN\n"
      "  EXCLUDE */gen/*\n"
      "SCOREP_FILE_NAMES_END\n"
      "SCOREP_REGION_NAMES_BEGIN\n"
      "  EXCLUDE *\n"
      "  INCLUDE main MANGLED _Z4workv\n"
      "SCOREP_REGION_NAMES_END\n");
  CHECK(f.rule_count() == 4);
  CHECK(region_out(f, "x"));
  CHECK_FALSE(region_out(f, "main"));
  CHECK_FALSE(region_out(f, "work()", "_Z4workv"));
  CHECK(f.excluded("main", "", "/a/gen/b.c"));

  SECTION("both spellings in one file, each block closed by its own END") {
    Filter g = parsed(
        "SCOREP_REGION_NAMES_BEGIN EXCLUDE a SCOREP_REGION_NAMES_END\n"
        "PROF_REGION_NAMES_BEGIN EXCLUDE b PROF_REGION_NAMES_END\n");
    CHECK(region_out(g, "a"));
    CHECK(region_out(g, "b"));
  }
}

TEST_CASE("comments, escapes and whitespace", "[filter]") {
  Filter f = parsed(
      "# a comment line\n"
      "PROF_REGION_NAMES_BEGIN   # a comment after a keyword\n"
      "\tEXCLUDE\tfoo# a comment right after a pattern\n"
      "  EXCLUDE bar\\#1 # '\\#' is a literal '#'\n"
      "  EXCLUDE with\\ space\n"
      "  exclude   # lower case: not a keyword, so a pattern of the EXCLUDE rule\n"
      "PROF_REGION_NAMES_END\r\n");   // CRLF line ends are accepted
  const auto& r = f.region_rules();
  REQUIRE(r.size() == 4);
  CHECK(r[0].pattern == "foo");
  CHECK(r[1].pattern == "bar\\#1");   // kept as written; fnmatch reads "\#" as '#'
  CHECK(r[2].pattern == "with\\ space");
  CHECK(r[3].pattern == "exclude");
  CHECK(region_out(f, "foo"));
  CHECK(region_out(f, "bar#1"));
  CHECK_FALSE(region_out(f, "bar"));
  CHECK(region_out(f, "with space"));
  CHECK_FALSE(region_out(f, "with"));
  CHECK(region_out(f, "exclude"));

  SECTION("a keyword can be matched literally through a bracket") {
    Filter g = parsed("PROF_REGION_NAMES_BEGIN EXCLUDE [E]XCLUDE PROF_REGION_NAMES_END");
    CHECK(region_out(g, "EXCLUDE"));
  }
}

TEST_CASE("syntax errors give one line with file, line and what was expected", "[filter]") {
  SECTION("unknown keyword where a rule keyword must stand") {
    CHECK(error_of("PROF_REGION_NAMES_BEGIN\n\n  EXCLUDEX foo\nPROF_REGION_NAMES_END\n") ==
          "t.filter:3: 'EXCLUDEX' is not a rule keyword; expected EXCLUDE, INCLUDE or "
          "PROF_REGION_NAMES_END");
    CHECK(error_of("SCOREP_FILE_NAMES_BEGIN\nfoo.c\nSCOREP_FILE_NAMES_END\n") ==
          "t.filter:2: 'foo.c' is not a rule keyword; expected EXCLUDE, INCLUDE or "
          "SCOREP_FILE_NAMES_END");
    CHECK(error_of("PROF_REGION_NAMES_BEGIN\nexclude foo\nPROF_REGION_NAMES_END\n") ==
          "t.filter:2: 'exclude' is not a rule keyword (keywords are case-sensitive); expected "
          "EXCLUDE, INCLUDE or PROF_REGION_NAMES_END");
    CHECK(error_of("prof_region_names_begin\n") ==
          "t.filter:1: 'prof_region_names_begin' outside a block; expected "
          "PROF_REGION_NAMES_BEGIN or PROF_FILE_NAMES_BEGIN before it");
  }
  SECTION("rule outside a block") {
    CHECK(error_of("# header\nEXCLUDE foo\n") ==
          "t.filter:2: 'EXCLUDE' outside a block; expected PROF_REGION_NAMES_BEGIN or "
          "PROF_FILE_NAMES_BEGIN before it");
    CHECK(error_of("SCOREP_REGION_NAMES_BEGIN EXCLUDE a SCOREP_REGION_NAMES_END\nINCLUDE b\n") ==
          "t.filter:2: 'INCLUDE' outside a block; expected SCOREP_REGION_NAMES_BEGIN or "
          "SCOREP_FILE_NAMES_BEGIN before it");
    CHECK(error_of("PROF_REGION_NAMES_BEGIN EXCLUDE a PROF_REGION_NAMES_END\n\n  stray\n") ==
          "t.filter:3: 'stray' outside a block; expected PROF_REGION_NAMES_BEGIN or "
          "PROF_FILE_NAMES_BEGIN before it");
    CHECK(error_of("MANGLED\n") ==
          "t.filter:1: 'MANGLED' outside a block; expected PROF_REGION_NAMES_BEGIN or "
          "PROF_FILE_NAMES_BEGIN before it");
  }
  SECTION("nested BEGIN") {
    CHECK(error_of("PROF_REGION_NAMES_BEGIN\nEXCLUDE a\nPROF_FILE_NAMES_BEGIN\n") ==
          "t.filter:3: 'PROF_FILE_NAMES_BEGIN' inside the PROF_REGION_NAMES block opened at "
          "line 1; expected PROF_REGION_NAMES_END before it (blocks do not nest)");
    CHECK(error_of("PROF_FILE_NAMES_BEGIN\nPROF_FILE_NAMES_BEGIN\n") ==
          "t.filter:2: 'PROF_FILE_NAMES_BEGIN' inside the PROF_FILE_NAMES block opened at "
          "line 1; expected PROF_FILE_NAMES_END before it (blocks do not nest)");
  }
  SECTION("missing END at end of file") {
    CHECK(error_of("PROF_REGION_NAMES_BEGIN\n  EXCLUDE a\n  b\n") ==
          "t.filter:3: end of file inside the PROF_REGION_NAMES block opened at line 1; "
          "expected PROF_REGION_NAMES_END");
    CHECK(error_of("x\n") == "t.filter:1: 'x' outside a block; expected PROF_REGION_NAMES_BEGIN "
                             "or PROF_FILE_NAMES_BEGIN before it");
    CHECK(error_of("SCOREP_FILE_NAMES_BEGIN\nEXCLUDE a # no newline at the end") ==
          "t.filter:2: end of file inside the SCOREP_FILE_NAMES block opened at line 1; "
          "expected SCOREP_FILE_NAMES_END");
  }
  SECTION("END without BEGIN, or the wrong END") {
    CHECK(error_of("\nPROF_REGION_NAMES_END\n") ==
          "t.filter:2: 'PROF_REGION_NAMES_END' without an open block; expected "
          "PROF_REGION_NAMES_BEGIN before it");
    CHECK(error_of("PROF_FILE_NAMES_BEGIN EXCLUDE a\nPROF_REGION_NAMES_END\n") ==
          "t.filter:2: 'PROF_REGION_NAMES_END' inside the PROF_FILE_NAMES block opened at line "
          "1; expected PROF_FILE_NAMES_END");
    CHECK(error_of("SCOREP_REGION_NAMES_BEGIN EXCLUDE a\nPROF_REGION_NAMES_END\n") ==
          "t.filter:2: 'PROF_REGION_NAMES_END' inside the SCOREP_REGION_NAMES block opened at "
          "line 1; expected SCOREP_REGION_NAMES_END");
  }
  SECTION("EXCLUDE or INCLUDE without a pattern") {
    CHECK(error_of("PROF_REGION_NAMES_BEGIN\nEXCLUDE # foo\nINCLUDE bar\nPROF_REGION_NAMES_END\n") ==
          "t.filter:2: 'EXCLUDE' is followed by 'INCLUDE' (line 3) without a pattern; expected "
          "at least one pattern after EXCLUDE");
    CHECK(error_of("PROF_REGION_NAMES_BEGIN\nEXCLUDE a\nINCLUDE MANGLED\nPROF_REGION_NAMES_END\n") ==
          "t.filter:3: 'INCLUDE' is followed by 'PROF_REGION_NAMES_END' (line 4) without a "
          "pattern; expected at least one pattern after INCLUDE");
    CHECK(error_of("PROF_FILE_NAMES_BEGIN\nEXCLUDE\n") ==
          "t.filter:2: 'EXCLUDE' is followed by the end of the file without a pattern; "
          "expected at least one pattern after EXCLUDE");
  }
  SECTION("MANGLED in a file block or outside a rule") {
    CHECK(error_of("PROF_FILE_NAMES_BEGIN\nEXCLUDE MANGLED a.c\nPROF_FILE_NAMES_END\n") ==
          "t.filter:2: 'MANGLED' in a file block (it applies to region names only); expected "
          "a file pattern, EXCLUDE, INCLUDE or PROF_FILE_NAMES_END");
    CHECK(error_of("SCOREP_FILE_NAMES_BEGIN EXCLUDE a.c\n DEMANGLED\n") ==
          "t.filter:2: 'DEMANGLED' in a file block (it applies to region names only); expected "
          "a file pattern, EXCLUDE, INCLUDE or SCOREP_FILE_NAMES_END");
    CHECK(error_of("PROF_REGION_NAMES_BEGIN\nMANGLED _Z1av\n") ==
          "t.filter:2: 'MANGLED' before any EXCLUDE or INCLUDE; expected EXCLUDE, INCLUDE or "
          "PROF_REGION_NAMES_END");
  }
  SECTION("line continuation") {
    CHECK(error_of("PROF_REGION_NAMES_BEGIN\nEXCLUDE a \\\n b\nPROF_REGION_NAMES_END\n") ==
          "t.filter:2: '\\' at the end of the line (line continuation is not supported); "
          "expected the rule to go on with a pattern or keyword on the next line, without '\\'");
    // An escaped backslash at the end of a line is a literal backslash, not a continuation.
    Filter f = parsed("PROF_REGION_NAMES_BEGIN\nEXCLUDE a\\\\\nPROF_REGION_NAMES_END\n");
    CHECK(region_out(f, "a\\"));
  }
  SECTION("control characters in a token are escaped: the message stays one line") {
    // Found by tests/fuzz/fuzz_filter (corpus/filter/crash-carriage-return-in-token).
    CHECK(error_of("PROF_REGION_NAMES_BEGIN\nfoo\rbar\nPROF_REGION_NAMES_END\n") ==
          "t.filter:2: 'foo\\x0dbar' is not a rule keyword; expected EXCLUDE, INCLUDE or "
          "PROF_REGION_NAMES_END");
    CHECK(error_of("PROF_FILE_NAMES_BEGI\x01N\r\n") ==
          "t.filter:1: 'PROF_FILE_NAMES_BEGI\\x01N' outside a block; expected "
          "PROF_REGION_NAMES_BEGIN or PROF_FILE_NAMES_BEGIN before it");
  }
  SECTION("the first error is the one reported") {
    CHECK(error_of("PROF_REGION_NAMES_BEGIN\nFOO\nEXCLUDE\n") ==
          "t.filter:2: 'FOO' is not a rule keyword; expected EXCLUDE, INCLUDE or "
          "PROF_REGION_NAMES_END");
  }
}

TEST_CASE("the shipped example filters parse and mean what they say", "[filter]") {
  SECTION("share/filters/example.filter (prof syntax)") {
    Filter f;
    std::string error;
    INFO(error);
    REQUIRE(f.load(PROF_SOURCE_DIR "/share/filters/example.filter", &error));
    CHECK(f.file_rules().size() == 2);
    CHECK(f.region_rules().size() == 7);
    CHECK(f.excluded("x", "", "/src/third_party/zlib/inflate.c"));
    CHECK_FALSE(f.excluded("x", "", "/src/third_party/solver/cg.c"));
    CHECK(f.excluded("get_size", "", "/src/a.c"));
    CHECK_FALSE(f.excluded("get_result", "", "/src/a.c"));
    CHECK(f.excluded("set_x", "", "/src/a.c"));
    CHECK(f.excluded("vec_add_inline", "", "/src/a.c"));
    CHECK(f.excluded("tiny_helper", "", "/src/a.c"));
    CHECK(f.excluded("Matrix::at(int)", "_ZN6Matrix2atEi", "/src/m.cpp"));
    CHECK_FALSE(f.excluded("Matrix::multiply(Matrix const&)", "_ZN6Matrix8multiplyERKS_",
                           "/src/m.cpp"));
    CHECK_FALSE(f.excluded("main", "", "/src/a.c"));
    bool mangled = false, plain_include = false;
    for (const Rule& r : f.region_rules()) {
      mangled = mangled || r.mangled;
      plain_include = plain_include || (!r.exclude && !r.mangled);
    }
    CHECK(mangled);
    CHECK(plain_include);
  }
  SECTION("share/filters/scorep-example.filter (Score-P syntax)") {
    Filter f;
    std::string error;
    INFO(error);
    REQUIRE(f.load(PROF_SOURCE_DIR "/share/filters/scorep-example.filter", &error));
    CHECK(f.excluded("main", "", "/a/generated/b.c"));
    CHECK_FALSE(f.excluded("main", "", "/a/b.c"));
    CHECK(f.excluded("other", "", "/a/b.c"));
    CHECK_FALSE(f.excluded("compute_x", "", "/a/b.c"));
    CHECK(f.excluded("compute_debug_x", "", "/a/b.c"));
    CHECK_FALSE(f.excluded("solve()", "_Z5solvev", "/a/b.c"));
    CHECK_FALSE(f.excluded("solve_3", "", "/a/b.c"));
    CHECK_FALSE(f.excluded("bar#1", "", "/a/b.c"));
    CHECK(f.excluded("filter_not1 filtered1", "", "/a/b.c"));
  }
}

TEST_CASE("an unreadable filter file gives one line naming it", "[filter]") {
  Filter f;
  std::string error;
  CHECK_FALSE(f.load("/nonexistent/dir/my.filter", &error));
  CHECK(error == "/nonexistent/dir/my.filter: cannot read the filter file (No such file or "
                 "directory); expected a readable file");
  CHECK_FALSE(f.load(PROF_SOURCE_DIR "/share/filters", &error));
  CHECK(error == PROF_SOURCE_DIR "/share/filters: cannot read the filter file (Is a directory); "
                 "expected a readable file");
  CHECK(f.empty());
}

TEST_CASE("load() refuses at once what is no filter file: FIFO, device, large, binary (issue 30)", "[filter]") {
  // Before: /dev/zero and a FIFO were read forever; a 300 MB binary file cost 7x its size.
  Filter f;
  std::string error;
  CHECK_FALSE(f.load("/dev/zero", &error));
  CHECK(error == "/dev/zero: is a character device, not a regular file; give a text file of filter rules");

  char dir_template[] = "/tmp/prof_test_filter_XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  const std::string fifo = dir + "/fifo.filter";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);  // no writer: opening it for reading would block
  CHECK_FALSE(f.load(fifo, &error));
  CHECK(error == fifo + ": is a FIFO, not a regular file; give a text file of filter rules");

  const std::string large = dir + "/large.filter";
  {
    std::ofstream out(large, std::ios::binary);
    const std::string line = "PROF_REGION_NAMES_BEGIN EXCLUDE foo PROF_REGION_NAMES_END\n";
    for (std::size_t n = 0; n <= Filter::kMaxFileBytes / line.size(); ++n) out << line;
  }
  CHECK_FALSE(f.load(large, &error));
  CHECK(error == large + ": is larger than 16 MiB, the most a filter file may have; give a text file of filter rules "
                         "(wildcards cover many names in one rule)");

  const std::string binary = dir + "/binary.filter";
  {
    std::ofstream out(binary, std::ios::binary);
    out << "PROF_REGION_NAMES_BEGIN\n" << std::string("EXC\0LUDE", 8) << "\n";
  }
  CHECK_FALSE(f.load(binary, &error));
  CHECK(error == binary + ": holds a NUL byte at offset 27: a binary file, not a filter file; give a text file of "
                          "filter rules");
  CHECK(f.empty());

  // A file just under the limit is read.
  const std::string ok = dir + "/ok.filter";
  {
    std::ofstream out(ok, std::ios::binary);
    out << "PROF_REGION_NAMES_BEGIN\n  EXCLUDE foo\nPROF_REGION_NAMES_END\n" << std::string(1 << 20, '\n');
  }
  CHECK(f.load(ok, &error));
  CHECK(f.rule_count() == 1);
  for (const std::string& p : {fifo, large, binary, ok}) ::unlink(p.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("a load() error carries the path and line", "[filter]") {
  // load() passes the path to parse() for its messages.
  const std::string path = PROF_SOURCE_DIR "/tests/unit/test_filter.cpp";
  Filter f;
  std::string error;
  CHECK_FALSE(f.load(path, &error));
  CHECK(error.rfind(path + ":1: ", 0) == 0);
}

TEST_CASE("quote_pattern: a literal name matches itself only", "[filter][throttle]") {
  const std::vector<std::string> names = {"plain",        "operator[]",   "a*b",       "what?",    "x#y",
                                          "back\\slash",  "with space",   "EXCLUDE",   "INCLUDE",  "MANGLED",
                                          "PROF_REGION_NAMES_END", "tab\there", "std::vector<int>::at(unsigned long) const"};
  for (const std::string& n : names) {
    INFO(n);
    const Filter f = parsed("PROF_REGION_NAMES_BEGIN\n  EXCLUDE " + prof::filter::quote_pattern(n) + "\nPROF_REGION_NAMES_END\n");
    REQUIRE(f.region_rules().size() == 1);
    CHECK(region_out(f, n));
    CHECK_FALSE(region_out(f, n + "x"));
    CHECK_FALSE(region_out(f, "x" + n));
  }
  // the wildcard characters are literal: "a*b" does not match "aXb"
  CHECK_FALSE(region_out(parsed("PROF_REGION_NAMES_BEGIN EXCLUDE " + prof::filter::quote_pattern("a*b") + " PROF_REGION_NAMES_END"), "aXb"));
}

TEST_CASE("throttle_filter_text: a filter that excludes exactly the throttled regions", "[filter][throttle]") {
  const std::vector<prof::filter::ThrottledRegion> regions = {
      {"tiny", "tiny", 1024, 21},
      {"Vec3<double>::dot(Vec3<double> const&) const", "_ZNK4Vec3IdE3dotERKS0_", 2048, 12},
      {"ns::f [clone .cold]", "", 4096, 3},
  };
  const std::string text = prof::filter::throttle_filter_text(regions);
  INFO(text);
  const Filter f = parsed(text);
  CHECK(f.region_rules().size() == 3);
  CHECK(region_out(f, "tiny"));
  // by the mangled name where there is one: another name with that mangled name is excluded too
  CHECK(f.excluded("whatever", "_ZNK4Vec3IdE3dotERKS0_", ""));
  CHECK_FALSE(f.excluded("Vec3<double>::dot(Vec3<double> const&) const", "_ZNK4Vec3IfE3dotERKS0_", ""));
  CHECK(region_out(f, "ns::f [clone .cold]"));
  CHECK_FALSE(region_out(f, "main"));
  CHECK_FALSE(region_out(f, "tiny2"));
  // every region is named in a comment with its figures, and the file says how to use it
  CHECK(text.find("# 1024 visits of 21 ns") != std::string::npos);
  CHECK(text.find("# Vec3<double>::dot(Vec3<double> const&) const: 2048 visits of 12 ns") != std::string::npos);
  CHECK(text.find("prof-wrap --instrument-filter=prof.throttle.filter") != std::string::npos);
  CHECK(text.find("PROF_FILTERING_FILE=prof.throttle.filter") != std::string::npos);
}

TEST_CASE("unmatched(): each rule knows whether it ever matched a name (issue 30)", "[filter][unmatched]") {
  Filter f = parsed(
      "PROF_FILE_NAMES_BEGIN\n"
      "  EXCLUDE */tests/*\n"           // line 2: no such file
      "  EXCLUDE */gen/*\n"             // line 3: matches
      "PROF_FILE_NAMES_END\n"
      "PROF_REGION_NAMES_BEGIN\n"
      "  EXCLUDE *\n"                   // line 6: the catch-all is never listed
      "  INCLUDE main ns::Foo::bar\n"   // line 7: main matches; ns::Foo::bar does not
      "  EXCLUDE main\n"                // line 8: matches
      "  INCLUDE solve_*\n"             // line 9: matches nothing
      "  EXCLUDE MANGLED _Z3bazv\n"     // line 10: matches by the mangled name
      "  INCLUDE gen_only\n"            // line 11: its only region is in an excluded file
      "PROF_REGION_NAMES_END\n");
  CHECK(f.unmatched().size() == 8);  // nothing was asked yet; "*" is not listed
  f.excluded("main", "", "/src/main.c");
  f.excluded("ns::Foo::bar(int)", "_ZN2ns3Foo3barEi", "/src/foo.cpp");
  f.excluded("baz()", "_Z3bazv", "/src/baz.cpp");
  f.excluded("gen_only", "", "/src/gen/g.c");
  const std::vector<prof::filter::UnmatchedRule> u = f.unmatched();
  REQUIRE(u.size() == 3);
  CHECK((u[0].line == 2 && u[0].file_rule && u[0].exclude && u[0].pattern == "*/tests/*" && u[0].file == "t.filter"));
  CHECK((u[1].line == 7 && !u[1].file_rule && !u[1].exclude && u[1].pattern == "ns::Foo::bar"));
  CHECK(u[1].near_miss == "ns::Foo::bar(int)");
  CHECK(u[1].suggestion == "ns::Foo::bar(*)");
  CHECK((u[2].line == 9 && u[2].pattern == "solve_*" && u[2].suggestion.empty()));
  // only the rules of one file
  CHECK(f.unmatched("other.filter").empty());
  CHECK(f.unmatched("t.filter").size() == 3);
}

TEST_CASE("unmatched(): the rules the evaluation order skips still count when they match", "[filter][unmatched]") {
  // EXCLUDE bar is never tested by Score-P's order (bar is already excluded), but it names bar.
  Filter f = parsed("PROF_REGION_NAMES_BEGIN EXCLUDE * EXCLUDE bar INCLUDE nothing_like_this PROF_REGION_NAMES_END");
  CHECK(f.excluded("bar", "", ""));
  const auto u = f.unmatched();
  REQUIRE(u.size() == 1);
  CHECK(u[0].pattern == "nothing_like_this");
  // explicitly_included (prof-wrap, throttling) notes matches too
  Filter g = parsed("PROF_REGION_NAMES_BEGIN INCLUDE keep EXCLUDE drop PROF_REGION_NAMES_END");
  CHECK(g.explicitly_included("keep", "", ""));
  REQUIRE(g.unmatched().size() == 1);
  CHECK(g.unmatched()[0].pattern == "drop");
}

TEST_CASE("unmatched(): a near miss by a C++ signature gets a pattern that matches it", "[filter][unmatched]") {
  struct Case {
    std::string pattern, name, suggestion;
  };
  const std::vector<Case> cases = {
      {"Foo::bar", "Foo::bar(int)", "Foo::bar(*)"},
      {"ns::Foo::bar", "ns::Foo::bar(int) const", "ns::Foo::bar(*)*"},   // const: "(*)" alone would not match
      {"bar", "ns::Foo::bar(int, double)", "ns::Foo::bar(*)"},          // the unqualified name
      {"Foo::bar", "ns::Foo::bar()", "ns::Foo::bar(*)"},
      {"op\\[\\]", "op[](unsigned long)", "op\\[\\](*)"},                // quoted literal, quoted suggestion
      {"V<int,\\ long>::at", "V<int, long>::at(unsigned long) const", "V<int,\\ long>::at(*)*"},
      {"Foo::operator()", "Foo::operator()(int)", "Foo::operator()(*)"},
      {"f", "f(void (*)(int))", "f(*)*"},
  };
  for (const Case& c : cases) {
    INFO(c.pattern << " / " << c.name);
    Filter f = parsed("PROF_REGION_NAMES_BEGIN\n  EXCLUDE " + c.pattern + "\nPROF_REGION_NAMES_END\n");
    CHECK_FALSE(f.excluded(c.name, "_Zwhatever", ""));
    const auto u = f.unmatched();
    REQUIRE(u.size() == 1);
    CHECK(u[0].near_miss == c.name);
    CHECK(u[0].suggestion == c.suggestion);
    // the suggestion is a pattern that matches the name
    CHECK(parsed("PROF_REGION_NAMES_BEGIN\n  EXCLUDE " + u[0].suggestion + "\nPROF_REGION_NAMES_END\n").excluded(c.name, "", ""));
  }
  SECTION("no suggestion for wildcards, MANGLED patterns, other names, or a prefix that is no whole name") {
    for (std::string rule : {"EXCLUDE Foo::bar?", "EXCLUDE MANGLED Foo::bar", "EXCLUDE Foo::ba", "EXCLUDE oo::bar"}) {
      INFO(rule);
      Filter f = parsed("PROF_REGION_NAMES_BEGIN " + rule + " PROF_REGION_NAMES_END");
      f.excluded("Foox::bar(int)", "_ZN4Foox3barEi", "");
      f.excluded("Foo::bar2(int)", "_ZN3Foo4bar2Ei", "");
      const auto u = f.unmatched();
      REQUIRE(u.size() == 1);
      CHECK(u[0].suggestion.empty());
    }
  }
}

TEST_CASE("unmatched_text and unmatched_warning: one line, a few rules, then how many more", "[filter][unmatched]") {
  Filter f = parsed(
      "PROF_REGION_NAMES_BEGIN\n"
      "  EXCLUDE Foo::bar a b c\n"
      "  INCLUDE main\n"
      "PROF_REGION_NAMES_END\n");
  f.excluded("Foo::bar(int)", "_ZN3Foo3barEi", "");
  f.excluded("main", "", "");
  const std::string w = prof::filter::unmatched_warning(f, "t.filter", nullptr);
  CHECK(w ==
        "4 rules of PROF_FILTERING_FILE matched no function of this run: t.filter:2 EXCLUDE Foo::bar (a C++ name carries "
        "its signature: use Foo::bar(*), which matches Foo::bar(int)), t.filter:2 EXCLUDE a, t.filter:2 EXCLUDE b, and 1 more; "
        "correct their patterns or remove them (a function that never ran is not seen)");
  // the file is a compile-time filter too: its rules were applied by the GCC plugin
  const char* const compile_time[] = {"t.filter", nullptr};
  CHECK(prof::filter::unmatched_warning(f, "t.filter", compile_time).empty());
  // every rule matched: no warning
  Filter g = parsed("PROF_REGION_NAMES_BEGIN EXCLUDE Foo::bar(*) PROF_REGION_NAMES_END");
  g.excluded("Foo::bar(int)", "", "");
  CHECK(prof::filter::unmatched_warning(g, "t.filter", nullptr).empty());
  // one rule
  Filter h = parsed("PROF_REGION_NAMES_BEGIN\nEXCLUDE x\nPROF_REGION_NAMES_END");
  h.excluded("main", "", "");
  CHECK(prof::filter::unmatched_warning(h, "t.filter", nullptr) ==
        "1 rule of PROF_FILTERING_FILE matched no function of this run: t.filter:2 EXCLUDE x; correct its pattern or "
        "remove it (a function that never ran is not seen)");
  CHECK(w.find('\n') == std::string::npos);
}
