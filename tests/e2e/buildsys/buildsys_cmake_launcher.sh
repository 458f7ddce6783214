#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds a CMake project (C and C++) with prof-wrap as the compiler and the linker launcher
# (CMake >= 3.21), the compilers left as they are:
#   cmake -S src -B b -DCMAKE_C_COMPILER_LAUNCHER=prof-wrap -DCMAKE_C_LINKER_LAUNCHER=prof-wrap \
#                     -DCMAKE_CXX_COMPILER_LAUNCHER=prof-wrap -DCMAKE_CXX_LINKER_LAUNCHER=prof-wrap
# with the Makefile generator and object response files (@file on the link line), with Ninja
# where it is installed, and checks that the compiler launcher alone fails at the link guard.
# Arguments: <bin dir with prof-wrap> <work dir> <source dir> [cmake]
. "$(dirname -- "$0")/common.sh"
cmake=${4:-cmake}

version=$("$cmake" --version | sed -n 's/^cmake version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p')
set -- $version
[ $# -eq 2 ] || fail "cannot read the version of $cmake"
if [ "$1" -lt 3 ] || { [ "$1" -eq 3 ] && [ "$2" -lt 21 ]; }; then
  skip "CMake $1.$2 has no CMAKE_<LANG>_LINKER_LAUNCHER (3.21 or later); use CMAKE_<LANG>_COMPILER=prof-gcc instead"
fi

cp -R "$src_dir/cmake-project" "$tmp/src"
launchers="-DCMAKE_C_COMPILER_LAUNCHER=prof-wrap -DCMAKE_CXX_COMPILER_LAUNCHER=prof-wrap"
linker_launchers="-DCMAKE_C_LINKER_LAUNCHER=prof-wrap -DCMAKE_CXX_LINKER_LAUNCHER=prof-wrap"

# build <dir> <cmake options...>: configure (no PROF_WRAPPER=off needed: CMake's compiler checks
# do not use the launchers) and build with --verbose, the commands in <dir>.log.
build() {
  d=$1
  shift
  "$cmake" -S "$tmp/src" -B "$tmp/$d" -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Debug "$@" \
    >"$tmp/$d.configure.log" 2>&1 || { cat "$tmp/$d.configure.log" >&2; fail "$d: cmake configure $* failed"; }
  PROF_WRAPPER_INSTRUMENTER_FLAGS=--verbose "$cmake" --build "$tmp/$d" --verbose >"$tmp/$d.log" 2>&1
}

# check_build <dir>: both executables and the library instrumented, exact Enter counts.
check_build() {
  d=$1
  grep -q -- '^\([^ ]*/\)\?gcc .*\(-finstrument-functions\|-fplugin=.*prof_gcc_plugin\)' "$tmp/$d.log" ||
    { cat "$tmp/$d.log" >&2; fail "$d: no C compile step was instrumented (-finstrument-functions or the GCC plugin)"; }
  grep -q -- '^\([^ ]*/\)\?g++ .*\(-finstrument-functions\|-fplugin=.*prof_gcc_plugin\)' "$tmp/$d.log" ||
    { cat "$tmp/$d.log" >&2; fail "$d: no C++ compile step was instrumented (-finstrument-functions or the GCC plugin)"; }
  check_instrumented "$tmp/$d/demo"
  check_instrumented "$tmp/$d/demo_cxx"
  readelf -d "$tmp/$d/libgreet.so" | grep -q 'NEEDED.*\[libprof\.so' || fail "$d: libgreet.so does not need libprof.so"
  check_enters "$tmp/$d/demo" "$tmp/$d.exp" main 1 greet_sum 1 square 10
  check_enters "$tmp/$d/demo_cxx" "$tmp/$d.exp_cxx" main 1 greet_sum 1 square 10 'demo::twice(int)' 3
}

# Makefiles, the objects of each link in a response file.
# shellcheck disable=SC2086
build make $launchers $linker_launchers -DCMAKE_C_USE_RESPONSE_FILE_FOR_OBJECTS=ON \
  -DCMAKE_CXX_USE_RESPONSE_FILE_FOR_OBJECTS=ON -DCMAKE_C_USE_RESPONSE_FILE_FOR_LIBRARIES=ON \
  -DCMAKE_CXX_USE_RESPONSE_FILE_FOR_LIBRARIES=ON || { cat "$tmp/make.log" >&2; fail "make: cmake --build failed"; }
grep -q 'prof-wrap .* @CMakeFiles/demo\.dir/objects[0-9]*' "$tmp/make.log" ||
  { cat "$tmp/make.log" >&2; fail "make: the link of demo had no object response file; the test does not test @file"; }
check_build make
echo "$test_name: Makefiles, C and C++ COMPILER_LAUNCHER and LINKER_LAUNCHER, objects in @file: instrumented, exact Enter counts"

if command -v ninja >/dev/null 2>&1; then
  # shellcheck disable=SC2086
  build ninja -G Ninja $launchers $linker_launchers || { cat "$tmp/ninja.log" >&2; fail "ninja: cmake --build failed"; }
  check_build ninja
  echo "$test_name: Ninja, C and C++ COMPILER_LAUNCHER and LINKER_LAUNCHER: instrumented, exact Enter counts"
else
  echo "$test_name: ninja is not installed: the Ninja generator not checked"
fi

# The compiler launcher alone: the objects are instrumented, the plain link fails at the guard.
# shellcheck disable=SC2086
if build nolinker $launchers; then
  fail "nolinker: the build succeeded with CMAKE_<LANG>_COMPILER_LAUNCHER alone; the link guard did not fire"
fi
grep -q 'link_this_object_with_prof_wrap' "$tmp/nolinker.log" ||
  { cat "$tmp/nolinker.log" >&2; fail "nolinker: the link failed without naming the link guard"; }
echo "$test_name: COMPILER_LAUNCHER without LINKER_LAUNCHER fails the link naming the link guard"
done_ok
