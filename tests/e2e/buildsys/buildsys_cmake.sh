#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds a CMake project (C and C++) with prof-gcc and prof-g++ as its compilers, as documented:
#   PROF_WRAPPER=off cmake -S src -B b -DCMAKE_C_COMPILER=prof-gcc -DCMAKE_CXX_COMPILER=prof-g++
#   cmake --build b
# Arguments: <bin dir with prof-wrap> <work dir> <source dir> [cmake]
. "$(dirname -- "$0")/common.sh"
cmake=${4:-cmake}

cp -R "$src_dir/cmake-project" "$tmp/src"
PROF_WRAPPER=off "$cmake" -S "$tmp/src" -B "$tmp/b" -DCMAKE_C_COMPILER=prof-gcc -DCMAKE_CXX_COMPILER=prof-g++ \
  -DCMAKE_BUILD_TYPE=Debug >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log" >&2; fail "cmake configure with CMAKE_C_COMPILER=prof-gcc CMAKE_CXX_COMPILER=prof-g++ failed"; }
PROF_WRAPPER_INSTRUMENTER_FLAGS=--verbose "$cmake" --build "$tmp/b" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; fail "cmake --build failed"; }
grep -q -- '^\([^ ]*/\)\?gcc .*\(-finstrument-functions\|-fplugin=.*prof_gcc_plugin\)' "$tmp/build.log" ||
  { cat "$tmp/build.log" >&2; fail "no C compile step was instrumented (-finstrument-functions or the GCC plugin)"; }
grep -q -- '^\([^ ]*/\)\?g++ .*\(-finstrument-functions\|-fplugin=.*prof_gcc_plugin\)' "$tmp/build.log" ||
  { cat "$tmp/build.log" >&2; fail "no C++ compile step was instrumented (-finstrument-functions or the GCC plugin)"; }

check_instrumented "$tmp/b/demo"
check_instrumented "$tmp/b/demo_cxx"
readelf -d "$tmp/b/libgreet.so" | grep -q 'NEEDED.*\[libprof\.so' || fail "libgreet.so does not need libprof.so"
if nm -D "$tmp/b/libgreet.so" | grep -q ' [TDRB] prof_linked_adapters'; then
  fail "libgreet.so defines prof_linked_adapters; only executables may carry the adapter list"
fi
check_enters "$tmp/b/demo" "$tmp/exp" main 1 greet_sum 1 square 10
check_enters "$tmp/b/demo_cxx" "$tmp/exp_cxx" main 1 greet_sum 1 square 10 'demo::twice(int)' 3
echo "$test_name: C and C++ executables and a shared library: instrumented, exact Enter counts"
done_ok
