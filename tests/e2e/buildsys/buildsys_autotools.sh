#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds an autoconf/automake project (C and C++) with prof-wrap, both documented ways:
#   PROF_WRAPPER=off ./configure CC=prof-gcc CXX=prof-g++ && make
#   PROF_WRAPPER=off ./configure CC="prof-wrap gcc" CXX="prof-wrap g++" && make
# Arguments: <bin dir with prof-wrap> <work dir> <source dir>
. "$(dirname -- "$0")/common.sh"

command -v autoreconf >/dev/null 2>&1 || skip "autoreconf is not installed (apt-get install autoconf automake)"
command -v automake >/dev/null 2>&1 || skip "automake is not installed (apt-get install automake)"

cp -R "$src_dir/autotools-project" "$tmp/src"
(cd "$tmp/src" && autoreconf -fi) >"$tmp/autoreconf.log" 2>&1 ||
  { cat "$tmp/autoreconf.log" >&2; fail "autoreconf -fi failed"; }

n=0
for pair in "prof-gcc:prof-g++" "prof-wrap gcc:prof-wrap g++"; do
  cc=${pair%%:*}
  cxx=${pair#*:}
  n=$((n + 1))
  b="$tmp/b$n"
  mkdir "$b"
  (cd "$b" && PROF_WRAPPER=off ../src/configure CC="$cc" CXX="$cxx") >"$b/configure.log" 2>&1 ||
    { cat "$b/configure.log" >&2; fail "configure CC='$cc' CXX='$cxx' failed"; }
  (cd "$b" && make V=1 PROF_WRAPPER_INSTRUMENTER_FLAGS=--verbose) >"$b/make.log" 2>&1 ||
    { cat "$b/make.log" >&2; fail "make with CC='$cc' CXX='$cxx' failed"; }
  grep -q -- '^\([^ ]*/\)\?gcc .*\(-finstrument-functions\|-fplugin=.*prof_gcc_plugin\)' "$b/make.log" ||
    { cat "$b/make.log" >&2; fail "CC='$cc': no C compile step was instrumented (-finstrument-functions or the GCC plugin)"; }
  grep -q -- '^\([^ ]*/\)\?g++ .*\(-finstrument-functions\|-fplugin=.*prof_gcc_plugin\)' "$b/make.log" ||
    { cat "$b/make.log" >&2; fail "CXX='$cxx': no C++ compile step was instrumented (-finstrument-functions or the GCC plugin)"; }
  check_instrumented "$b/demo"
  check_instrumented "$b/demo_cxx"
  check_enters "$b/demo" "$tmp/exp$n" main 1 greet_sum 1 square 10
  check_enters "$b/demo_cxx" "$tmp/exp_cxx$n" main 1 greet_sum 1 square 10 'demo::twice(int)' 3
  echo "$test_name: CC='$cc' CXX='$cxx': C and C++ programs with an ar library: instrumented, exact Enter counts"
done
done_ok
