#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds a CMake Fortran project (Fortran and C) with prof-gfortran and prof-gcc as its compilers:
#   PROF_WRAPPER=off cmake -S src -B b -DCMAKE_Fortran_COMPILER=prof-gfortran -DCMAKE_C_COMPILER=prof-gcc
#   cmake --build b
# Fortran compile steps get -finstrument-functions (the GCC plugin cannot see Fortran); regions
# are named as the program spells them. Arguments: <bin dir with prof-wrap> <work dir> <source dir> [cmake]
. "$(dirname -- "$0")/common.sh"
cmake=${4:-cmake}

command -v gfortran >/dev/null 2>&1 || skip "gfortran is not installed (apt-get install gfortran)"
[ -x "$bin_dir/prof-gfortran" ] || fail "$bin_dir/prof-gfortran does not exist; build the prof-wrap target first"

cp -R "$src_dir/cmake-fortran-project" "$tmp/src"
PROF_WRAPPER=off "$cmake" -S "$tmp/src" -B "$tmp/b" -DCMAKE_Fortran_COMPILER=prof-gfortran -DCMAKE_C_COMPILER=prof-gcc \
  -DCMAKE_BUILD_TYPE=Debug >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log" >&2; fail "cmake configure with CMAKE_Fortran_COMPILER=prof-gfortran CMAKE_C_COMPILER=prof-gcc failed"; }
PROF_WRAPPER_INSTRUMENTER_FLAGS=--verbose "$cmake" --build "$tmp/b" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; fail "cmake --build failed"; }
for src in heat_mod.F90 main.f90 legacy.f; do
  grep -q -- "^\([^ ]*/\)\?gfortran .*-finstrument-functions.* -c [^ ]*$src" "$tmp/build.log" ||
    { cat "$tmp/build.log" >&2; fail "the compile step of $src was not instrumented with -finstrument-functions"; }
done
grep -q -- "^prof-wrap: instrumentation: -finstrument-functions (the GCC plugin does not fit: it cannot instrument Fortran" "$tmp/build.log" ||
  grep -q -- "^prof-wrap: instrumentation: -finstrument-functions (the GCC plugin does not fit: prof was built without it" "$tmp/build.log" ||
  { cat "$tmp/build.log" >&2; fail "prof-wrap --verbose did not say why Fortran gets -finstrument-functions"; }
if grep -q -- '^\([^ ]*/\)\?gfortran .*-include' "$tmp/build.log"; then
  cat "$tmp/build.log" >&2; fail "a Fortran compile step got -include (the C link guard header)"
fi
# The adapter list of the program's link is C, compiled by gcc.
grep -q -- '^\([^ ]*/\)\?gcc -x c -c .*prof_adapters\.c' "$tmp/build.log" ||
  { cat "$tmp/build.log" >&2; fail "the adapter list was not compiled by gcc"; }

# cnorm.c was built by prof-gcc: the program carries the link guard through it.
check_instrumented "$tmp/b/fdemo"
readelf -d "$tmp/b/libheat.so" | grep -q 'NEEDED.*\[libprof\.so' || fail "libheat.so does not need libprof.so"
check_enters "$tmp/b/fdemo" "$tmp/exp" main 1 fdemo 1 heat_mod::step 4 heat_mod::step::smooth 32 heat_mod::total 1 \
  lscale 2 cnorm 1
echo "$test_name: a Fortran program (free and fixed form, a module in a shared library, C): instrumented, exact Enter counts"
done_ok
