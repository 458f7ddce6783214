#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The installed prefix is usable from other build systems (issue 14, item 9): a small project
# that calls the user API builds against it with CMake's find_package(prof) (prof::user, and
# PROF_WRAP_EXECUTABLE as the compiler launcher) and with pkg-config (prof.pc); each program runs
# and its trace holds its user region with the right count (otf2-print, the otf2 Python module).
# Usage: install_package.sh <build-dir> <work-dir>
set -euo pipefail
build=$1 work=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work/src"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in lib/cmake/prof/profConfig.cmake lib/cmake/prof/profConfigVersion.cmake lib/cmake/prof/profTargets.cmake lib/pkgconfig/prof.pc; do
  [ -e "$work/prefix/$f" ] || fail "$f is not installed"
done
cd "$work"
cat >src/app.c <<'C'
#include <prof/user.h>
#include <stdio.h>
static double step(int i) { return i * 0.5; }
int main(void) {
  double s = 0;
  for (int i = 0; i < 7; ++i) {
    PROF_USER_REGION_BEGIN(solve, "solve");
    s += step(i);
    PROF_USER_REGION_END(solve);
  }
  printf("%g\n", s);
  return 0;
}
C
cat >src/CMakeLists.txt <<'C'
cmake_minimum_required(VERSION 3.20)
project(app C)
find_package(prof 0.1 REQUIRED)
message(STATUS "prof ${PROF_VERSION}: prof-wrap ${PROF_WRAP_EXECUTABLE}")
add_executable(app app.c)
target_link_libraries(app PRIVATE prof::user)
C
# count_enters <experiment> <region>: Enter events of the region, by otf2-print and the otf2 module
count_enters() {
  otf2-print "$1/traces.otf2" >trace.txt 2>trace.err
  [ ! -s trace.err ] || { cat trace.err; fail "otf2-print wrote to stderr for $1"; }
  local a b
  a=$(grep -c "^ENTER .*Region: \"$2\"" trace.txt || true)
  b=$(/usr/bin/python3 -c '
import sys, otf2
with otf2.reader.open(sys.argv[1] + "/traces.otf2") as r:
    print(sum(1 for _, e in r.events if isinstance(e, otf2.events.Enter) and e.region.name == sys.argv[2]))' "$1" "$2")
  [ "$a" = "$b" ] || fail "$1: otf2-print counts $a Enter events of $2, the otf2 module $b"
  echo "$a"
}

# 1. CMake, find_package(prof) with the prefix on CMAKE_PREFIX_PATH.
cmake -S src -B b1 -DCMAKE_PREFIX_PATH="$work/prefix" >cmake1.log || { cat cmake1.log; fail "configure with find_package(prof)"; }
grep -q "prof 0.1.0: prof-wrap $work/prefix/bin/prof-wrap" cmake1.log || fail "PROF_VERSION/PROF_WRAP_EXECUTABLE: $(grep 'prof ' cmake1.log)"
cmake --build b1 >build1.log || { cat build1.log; fail "build with prof::user"; }
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp1 b1/app >out1.txt
[ "$(cat out1.txt)" = 10.5 ] || fail "the CMake-built program printed $(cat out1.txt)"
n=$(count_enters exp1 solve); [ "$n" = 7 ] || fail "CMake build: solve entered $n times, expected 7"

# 2. CMake with prof-wrap as the compiler launcher: functions are measured too.
cmake -S src -B b2 -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_C_COMPILER_LAUNCHER="$work/prefix/bin/prof-wrap" >cmake2.log
cmake --build b2 >build2.log || { cat build2.log; fail "build with the launcher"; }
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp2 b2/app >/dev/null
n=$(count_enters exp2 step); [ "$n" = 7 ] || fail "launcher build: step entered $n times, expected 7"

# 3. pkg-config, from the installed prof.pc (relocatable: the prefix is found from the file).
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
[ "$(pkg-config --modversion prof)" = 0.1.0 ] || fail "pkg-config --modversion prof: $(pkg-config --modversion prof)"
wrap=$(pkg-config --variable=prof_wrap prof)
[ -x "$wrap" ] || fail "pkg-config --variable=prof_wrap prof gives $wrap, not an executable"
# shellcheck disable=SC2046
gcc -O1 src/app.c -o app_pc $(pkg-config --cflags --libs prof)
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp3 ./app_pc >/dev/null
n=$(count_enters exp3 solve); [ "$n" = 7 ] || fail "pkg-config build: solve entered $n times, expected 7"
echo ok
