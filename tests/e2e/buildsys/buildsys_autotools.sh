#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds an autoconf/automake project with prof-wrap, both documented ways:
#   PROF_WRAPPER=off ./configure CC=prof-gcc && make
#   PROF_WRAPPER=off ./configure CC="prof-wrap gcc" && make
# Arguments: <bin dir with prof-wrap> <work dir> <source dir>
. "$(dirname -- "$0")/common.sh"

command -v autoreconf >/dev/null 2>&1 || skip "autoreconf is not installed (apt-get install autoconf automake)"
command -v automake >/dev/null 2>&1 || skip "automake is not installed (apt-get install automake)"

cp -R "$src_dir/autotools-project" "$tmp/src"
(cd "$tmp/src" && autoreconf -fi) >"$tmp/autoreconf.log" 2>&1 ||
  { cat "$tmp/autoreconf.log" >&2; fail "autoreconf -fi failed"; }

n=0
for cc in prof-gcc "prof-wrap gcc"; do
  n=$((n + 1))
  b="$tmp/b$n"
  mkdir "$b"
  (cd "$b" && PROF_WRAPPER=off ../src/configure CC="$cc") >"$b/configure.log" 2>&1 ||
    { cat "$b/configure.log" >&2; fail "configure CC='$cc' failed"; }
  (cd "$b" && make V=1 PROF_WRAPPER_INSTRUMENTER_FLAGS=--verbose) >"$b/make.log" 2>&1 ||
    { cat "$b/make.log" >&2; fail "make with CC='$cc' failed"; }
  grep -q -- '-finstrument-functions' "$b/make.log" ||
    { cat "$b/make.log" >&2; fail "CC='$cc': no compile step ran with -finstrument-functions"; }
  check_instrumented "$b/demo"
  check_run "$b/demo" "$tmp/exp$n"
done
done_ok
