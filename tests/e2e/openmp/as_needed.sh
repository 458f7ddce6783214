#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# OpenMP programs that call only the GOMP_* functions libprof wraps (issue 30, item 8): Debian's
# gcc links with --as-needed, which dropped libgomp, and the first parallel region crashed
# (SIGSEGV, a call of a null "real" GOMP_parallel), with the OpenMP adapter and without it.
#  1. gcc, g++ and gfortran -O2 -fopenmp through prof-wrap, with and without
#     PROF_OPENMP_ENABLE=none: each runs, counts OMP_NUM_THREADS=2 threads, exits 0, and its
#     binary needs libgomp (readelf -d); the default run's trace has the parallel region.
#  2. A link that lost libgomp anyway (compiled with -fopenmp, linked without it: libprof
#     defines every GOMP_* function the program calls): prof's wrapper loads libgomp itself.
# Usage: as_needed.sh <bin dir with prof-wrap> <work dir>
set -eu
bin=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "openmp_as_needed: FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export OMP_NUM_THREADS=2
ulimit -c 0

# run_min <binary> [VAR=value...]: runs it, checks the output and status
run_min() {
  local exe=$1
  shift
  set +e
  env PROF_EXPERIMENT_DIRECTORY=exp_$exe "$@" ./$exe >out 2>err
  local rc=$?
  set -e
  [ $rc -eq 0 ] || fail "./$exe $*: exit status $rc (a crash in the GOMP wrappers?); stderr: $(head -c 600 err)"
  grep -qx 'threads 2' out || fail "./$exe $*: output '$(cat out)', expected 'threads 2'"
  ! grep -q '^prof: \(error\|warning\)' err || fail "./$exe $*: $(cat err)"
}

cases=(gcc:c g++:cpp)
command -v gfortran >/dev/null 2>&1 && cases+=(gfortran:f90) || echo "openmp_as_needed: gfortran is not installed: its case skipped"
for c in "${cases[@]}"; do
  cc=${c%%:*} ext=${c#*:}
  src=$work/min_atomic.$ext
  cp "$here/min_atomic.${ext/cpp/c}" "$src"
  exe=min_$ext
  "$bin/prof-wrap" $cc -O2 -fopenmp "$src" -o $exe || fail "prof-wrap $cc -fopenmp cannot build $src"
  readelf -d $exe | grep -q 'NEEDED.*libgomp' || fail "$exe does not need libgomp: $(readelf -d $exe | grep NEEDED)"
  run_min $exe PROF_ENABLE_TRACING=true
  otf2-print exp_$exe/traces.otf2 >print 2>print.err || fail "otf2-print failed on $exe's trace: $(head -3 print.err)"
  [ ! -s print.err ] || fail "otf2-print complains: $(head -3 print.err)"
  grep -q 'THREAD_FORK' print || fail "$exe's trace has no fork of the parallel region"
  rm -rf exp_$exe
  run_min $exe PROF_OPENMP_ENABLE=none
  echo "ok: $cc -O2 -fopenmp: runs with libgomp needed, traced and with PROF_OPENMP_ENABLE=none"
done

# 2: libgomp lost at the link: the wrappers load it
"$bin/prof-wrap" gcc -O2 -fopenmp -c "$work/min_atomic.c" -o lost.o || fail "cannot compile min_atomic.c"
"$bin/prof-wrap" gcc lost.o -o lost || fail "cannot link lost.o"
! readelf -d lost | grep -q 'NEEDED.*libgomp' || fail "lost still needs libgomp: this case tests nothing"
run_min lost
echo "ok: a link without libgomp runs (prof's wrapper loaded libgomp)"
