// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of what the OpenMP adapter relies on in the core: which symbols are compilers'
// outlined OpenMP bodies (filtered, the construct is the region), and the line-table position
// of a call's return address (the construct's "@file:line").
#include <catch2/catch.hpp>

#include <string>

#include "measurement/definitions/regions.hpp"
#include "measurement/definitions/symbols.hpp"

namespace {

[[gnu::noinline]] const void* return_address() {
  const void* ra = __builtin_return_address(0);
  asm volatile("" ::: "memory");
  return ra;
}

}  // namespace

TEST_CASE("outlined OpenMP bodies of GCC and clang are recognised, nothing else", "[openmp]") {
  using prof::regions::outlined_by_compiler;
  for (const char* s : {"main._omp_fn.0", "MAIN__._omp_fn.3", "_Z5solvev._omp_fn.12", "main._omp_cpyfn.1", ".omp_outlined.",
                        ".omp_outlined._debug__", ".omp_task_entry.", ".omp.reduction.reduction_func"}) {
    CAPTURE(s);
    CHECK(outlined_by_compiler(s));
  }
  for (const char* s : {"main", "omp_fn", "_Z3ompv", "my_omp_fn_0", "solve.omp", "__module_MOD_omp_fn", ""}) {
    CAPTURE(s);
    CHECK_FALSE(outlined_by_compiler(s));
  }
}

TEST_CASE("source_position gives the line of a call from its return address", "[openmp][symbols]") {
  const int line = __LINE__ + 1;
  const void* ra = return_address();
  std::string file;
  int got = -1;
  REQUIRE(prof::symbols::source_position(static_cast<const char*>(ra) - 1, &file, &got));
  CHECK(got == line);
  const std::string tail = "/tests/unit/test_openmp.cpp";
  CAPTURE(file);
  CHECK((file.size() > tail.size() && file.compare(file.size() - tail.size(), tail.size(), tail) == 0));
  CHECK_FALSE(prof::symbols::source_position(nullptr, &file, &got));
}
