#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds a CMake project with prof-gcc as its C compiler, as documented:
#   PROF_WRAPPER=off cmake -S src -B b -DCMAKE_C_COMPILER=prof-gcc && cmake --build b
# Arguments: <bin dir with prof-wrap> <work dir> <source dir> [cmake]
. "$(dirname -- "$0")/common.sh"
cmake=${4:-cmake}

cp -R "$src_dir/cmake-project" "$tmp/src"
PROF_WRAPPER=off "$cmake" -S "$tmp/src" -B "$tmp/b" -DCMAKE_C_COMPILER=prof-gcc -DCMAKE_BUILD_TYPE=Debug \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log" >&2; fail "cmake configure with CMAKE_C_COMPILER=prof-gcc failed"; }
PROF_WRAPPER_INSTRUMENTER_FLAGS=--verbose "$cmake" --build "$tmp/b" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; fail "cmake --build failed"; }
grep -q -- '-finstrument-functions' "$tmp/build.log" ||
  { cat "$tmp/build.log" >&2; fail "no compile step ran with -finstrument-functions"; }

check_instrumented "$tmp/b/demo"
readelf -d "$tmp/b/libgreet.so" | grep -q 'NEEDED.*\[libprof\.so' || fail "libgreet.so does not need libprof.so"
if nm -D "$tmp/b/libgreet.so" | grep -q ' [TDRB] prof_linked_adapters'; then
  fail "libgreet.so defines prof_linked_adapters; only executables may carry the adapter list"
fi
check_run "$tmp/b/demo" "$tmp/exp"
done_ok
