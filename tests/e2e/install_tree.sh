#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `cmake --install` gives a working prefix: prof-wrap there instruments, links and traces.
# Usage: install_tree.sh <build-dir> <work-dir> <source-of-a-test-program> [<shared-tools-dir>]
set -euo pipefail
build=$1 work=$2 src=$3 tools=${4:-}
. "$(dirname "$0")/checkers.sh"
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in bin/prof-wrap bin/prof-info bin/prof-score bin/prof-export bin/prof-report bin/prof-gcc bin/prof-mpicc bin/prof-gfortran bin/prof-mpifort bin/prof-mpif90 lib/libprof.so include/prof/user.h include/prof/instrumented.h; do
  [ -e "$work/prefix/$f" ] || { echo "FAIL: $f is not installed"; exit 1; }
done
# Outputs go to files before grep -q reads them: under pipefail, grep's early exit can end the
# writer with SIGPIPE once its output passes a pipe buffer (prof-info's list is over 4 KiB).
"$work/prefix/bin/prof-info" config-vars >"$work/info.txt" && grep -q PROF_ENABLE_TRACING "$work/info.txt" || { echo "FAIL: prof-info"; exit 1; }
cd "$work"
"$work/prefix/bin/prof-wrap" gcc -O2 "$src" -o prog
readelf -d prog | grep -q "$work/prefix/lib" || { echo "FAIL: prog does not take libprof from the prefix"; exit 1; }
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp ./prog
check_trace exp/traces.otf2 --expect-region fib --expect-locations 1
"$work/prefix/bin/prof-score" -r exp >score.txt && grep -Eq "^ +USR +[0-9,]+ +1,973 .*  fib$" score.txt || { echo "FAIL: prof-score from the prefix"; exit 1; }
"$work/prefix/bin/prof-report" exp >/dev/null && [ -s exp/report.html ] || { echo "FAIL: prof-report from the prefix"; exit 1; }
"$work/prefix/bin/prof-export" -q exp >/dev/null && [ -s exp/trace.pftrace ] || { echo "FAIL: prof-export from the prefix"; exit 1; }
if [ -e "$work/prefix/lib/prof_gcc_plugin.so" ]; then
  "$work/prefix/bin/prof-wrap" -v --instrument=plugin gcc -O2 "$src" -o prog_plugin 2>plugin.err
  grep -q "^prof-wrap: instrumentation: GCC plugin $work/prefix/lib/prof_gcc_plugin.so$" plugin.err || { echo "FAIL: the plugin from the prefix"; cat plugin.err; exit 1; }
  PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_plugin ./prog_plugin
  check_trace exp_plugin/traces.otf2 --expect-region fib --expect-locations 1
fi
if command -v gfortran >/dev/null 2>&1; then
  # prof-gfortran from the prefix: a module procedure named module::procedure.
  printf 'module m\ncontains\n  subroutine work(n)\n    integer :: n\n    n = n + 1\n  end subroutine\nend module\nprogram p\n  use m\n  integer :: i, n\n  n = 0\n  do i = 1, 3\n    call work(n)\n  end do\n  print *, n\nend program\n' >f.f90
  "$work/prefix/bin/prof-gfortran" -O0 f.f90 -o prog_fortran
  PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_fortran ./prog_fortran >/dev/null
  check_trace exp_fortran/traces.otf2 --expect-region m::work --expect-locations 1
  n=$(otf2-print exp_fortran/traces.otf2 | grep -c '^ENTER .*Region: "m::work"' || true)
  [ "$n" = 3 ] || { echo "FAIL: prof-gfortran from the prefix: m::work entered $n times, expected 3"; exit 1; }
else
  echo "note: gfortran is not installed: prof-gfortran from the prefix not tried"
fi
echo ok
