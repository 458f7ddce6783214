#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Throttling (PROF_THROTTLE) end to end: hot_cold.c built with prof-wrap (the GCC plugin,
# -finstrument-functions, or mpicc + the plugin under mpirun with 2 ranks), traced and profiled;
# checked by otf2-print, the otf2 module (check_throttle.py, otf2_basic_check.py), otf2_check.py
# and cubex_check.py where ../shared/tools is. Runs: the default (tiny and fib throttled, cold
# never, prof.throttle.filter written, one line on stderr), PROF_THROTTLE=false (nothing
# throttled), a filter that INCLUDEs tiny (tiny never throttled), and the emitted filter applied
# (plugin: prof-wrap --instrument-filter, the functions compiled without hooks; functions:
# PROF_FILTERING_FILE): no tiny or fib region at all.
# Usage: throttle.sh <bin dir with prof-wrap> <work dir> <shared tools dir or ""> plugin|functions|mpi
set -eu
bin=$1 work=$2 tools=$3 case=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../checkers.sh"
name=throttle_$case
dir=$work/$name
fail() { echo "$name: FAIL: $*"; echo "$name: files kept in $dir"; exit 1; }
skip() { echo "$name: SKIP: $*"; exit 77; }

rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export PROF_ENABLE_TRACING=true
how=--instrument=plugin cc=gcc ranks=1
case $case in
  functions) how=--instrument=functions ;;
  mpi)
    command -v mpicc >/dev/null 2>&1 || skip "mpicc is not installed"
    command -v mpirun >/dev/null 2>&1 || skip "mpirun is not installed"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    cc="mpicc -DWITH_MPI" ranks=2 ;;
esac
build() {  # build <output> [prof-wrap options...]
  local out=$1
  shift
  "$bin/prof-wrap" $how "$@" $cc -O2 -g "$here/hot_cold.c" -o "$out" >build.txt 2>&1 || { cat build.txt; fail "prof-wrap could not build hot_cold.c"; }
}
# run <experiment dir> [VAR=value...]: runs ./app (under mpirun for mpi) into the directory
run() {
  local exp=$1
  shift
  rm -rf "$exp"
  if [ $ranks -gt 1 ]; then
    local xs="-x PROF_ENABLE_TRACING -x PROF_EXPERIMENT_DIRECTORY=$exp" kv
    for kv in "$@"; do xs="$xs -x $kv"; done
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np $ranks $xs ./app >"$exp.out" 2>"$exp.err" || { cat "$exp.out" "$exp.err"; fail "the MPI run into $exp failed"; }
  else
    env PROF_EXPERIMENT_DIRECTORY="$exp" "$@" ./app >"$exp.out" 2>"$exp.err" || { cat "$exp.out" "$exp.err"; fail "the run into $exp failed"; }
  fi
  if grep -E '^prof: .*(warning|error)' "$exp.err"; then fail "prof warned in the run into $exp"; fi
  check_trace "$exp/traces.otf2" $([ $ranks -gt 1 ] && echo --mpi) || fail "the trace of $exp is not valid"
}
# check <experiment dir> <case>: check_throttle.py, with the profile's visits where cubex_check.py is
check() {
  local exp=$1 what=$2 dump=
  if have_cubex_check; then
    /usr/bin/python3 "$tools/cubex_check.py" "$exp/profile.cubex" >"$exp.cube" 2>&1 || { cat "$exp.cube"; fail "cubex_check.py rejects $exp/profile.cubex"; }
    /usr/bin/python3 "$tools/cubex_check.py" "$exp/profile.cubex" --dump >"$exp.dump" 2>&1
    [ $ranks -eq 1 ] && dump="--cube-dump $exp.dump"
  fi
  /usr/bin/python3 "$here/check_throttle.py" "$exp" "$exp.out" --case "$what" --ranks $ranks $dump >"$exp.check" 2>&1 || { cat "$exp.check"; fail "check_throttle.py ($what)"; }
  cat "$exp.check"
}

build app
run exp
check exp default
grep -q "^prof: \(rank 0: \)\?2 functions were throttled .*--instrument-filter=exp/prof.throttle.filter" exp.err || { cat exp.err; fail "no end-of-run line naming the 2 throttled functions and the filter"; }

run off PROF_THROTTLE=false
check off off
! grep -q "throttled" off.err || fail "PROF_THROTTLE=false still reports throttling"

printf 'PROF_REGION_NAMES_BEGIN\n  INCLUDE tiny\nPROF_REGION_NAMES_END\n' >keep_tiny.filter
run incl PROF_FILTERING_FILE="$PWD/keep_tiny.filter"
check incl include

# The emitted filter, used as the message says.
if [ "$case" = functions ]; then
  run refiltered PROF_FILTERING_FILE="$PWD/exp/prof.throttle.filter"
else
  cp exp/prof.throttle.filter throttle.filter
  build app --instrument-filter="$PWD/throttle.filter"
  # the plugin left tiny and fib without descriptors and hooks; cold keeps its own
  nm app | grep -q '__prof_region\.cold$' || fail "cold lost its instrumentation"
  if nm app | grep -E '__prof_region\.(tiny|fib)$'; then fail "the throttle filter did not remove the instrumentation of tiny and fib"; fi
  run refiltered
fi
check refiltered rebuilt
echo "$name: ok"
