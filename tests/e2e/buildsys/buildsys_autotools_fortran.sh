#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds an autoconf/automake Fortran project (free and fixed form, and C) with prof-wrap:
#   PROF_WRAPPER=off ./configure FC=prof-gfortran F77=prof-gfortran CC=prof-gcc && make
# Arguments: <bin dir with prof-wrap> <work dir> <source dir>
. "$(dirname -- "$0")/common.sh"

command -v gfortran >/dev/null 2>&1 || skip "gfortran is not installed (apt-get install gfortran)"
command -v autoreconf >/dev/null 2>&1 || skip "autoreconf is not installed (apt-get install autoconf automake)"
command -v automake >/dev/null 2>&1 || skip "automake is not installed (apt-get install automake)"

cp -R "$src_dir/autotools-fortran-project" "$tmp/src"
for f in heat_mod.F90 main.f90 legacy.f cnorm.c; do cp "$src_dir/cmake-fortran-project/$f" "$tmp/src/"; done
(cd "$tmp/src" && autoreconf -fi) >"$tmp/autoreconf.log" 2>&1 ||
  { cat "$tmp/autoreconf.log" >&2; fail "autoreconf -fi failed"; }
mkdir "$tmp/b"
(cd "$tmp/b" && PROF_WRAPPER=off ../src/configure FC=prof-gfortran F77=prof-gfortran CC=prof-gcc) >"$tmp/b/configure.log" 2>&1 ||
  { cat "$tmp/b/configure.log" >&2; fail "configure FC=prof-gfortran F77=prof-gfortran CC=prof-gcc failed"; }
(cd "$tmp/b" && make V=1) >"$tmp/b/make.log" 2>&1 || { cat "$tmp/b/make.log" >&2; fail "make failed"; }
for src in heat_mod.F90 main.f90 legacy.f; do
  grep -q -- "^prof-gfortran .*$src" "$tmp/b/make.log" || { cat "$tmp/b/make.log" >&2; fail "$src was not compiled by prof-gfortran"; }
done
check_instrumented "$tmp/b/fdemo"
check_enters "$tmp/b/fdemo" "$tmp/exp" main 1 fdemo 1 heat_mod::step 4 heat_mod::step::smooth 32 heat_mod::total 1 \
  lscale 2 cnorm 1
echo "$test_name: FC=prof-gfortran F77=prof-gfortran CC=prof-gcc: instrumented, exact Enter counts"
done_ok
