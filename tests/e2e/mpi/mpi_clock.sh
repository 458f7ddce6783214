#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Clock correction between ranks: PROF_MPI_DEBUG_CLOCK_SKEW=1:2000000000 puts rank 1's clock 2e9
# ticks (1 s with the TSC here, 2 s with clock_gettime) ahead of rank 0's, as a rank on another host may be. prof must
# measure the offset (ping-pong with rank 0 at MPI_Init and at the end) and write it as OTF2
# ClockOffset records: rank 1's locations get offsets of -2e9 (within 1e6 ticks), the readers'
# corrected timestamps fall inside the trace (otf2_check.py) and no message is received before it
# was sent (otf2_check.py --mpi warns about that; a warning fails this test).
# Usage: mpi_clock.sh <bin dir with prof-mpicc> <work dir> <source dir> <shared tools dir>
set -eu
bin=$1 work=$2 src=$3 tools=$4
name=mpi_clock_skew
command -v mpicc >/dev/null 2>&1 || { echo "$name: SKIP: mpicc is not installed"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "$name: SKIP: mpirun is not installed"; exit 77; }
dir=$work/$name
fail() { echo "$name: FAIL: $*"; echo "$name: files kept in $dir"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
"$bin/prof-mpicc" -O2 -I"$src" "$src/ring.c" -o ring || fail "prof-mpicc could not build ring.c"
skew=2000000000
timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY=exp \
  -x PROF_MPI_DEBUG_CLOCK_SKEW=1:$skew ./ring >out.txt 2>&1 || { cat out.txt; fail "the run failed"; }
/usr/bin/python3 "$tools/otf2_check.py" exp/traces.otf2 --mpi >check.txt 2>&1 || { cat check.txt; fail "otf2_check.py --mpi rejects the trace"; }
tail -n 1 check.txt
! grep -q "WARNING" check.txt || { cat check.txt; fail "otf2_check.py warns (a message received before it was sent?): the clock correction is wrong"; }
otf2-print -C exp/traces.otf2 >clock.txt 2>&1 || fail "otf2-print -C failed"
# Rank 1's master location is 1; every ClockOffset of it must be about -skew; rank 0's are 0.
awk -v skew=$skew '
  $1 == "CLOCK_OFFSET" && $2 == 1 { n1++; o = $6; sub(/,$/, "", o); d = o + skew; if (d < -1000000 || d > 1000000) bad = bad " " o }
  $1 == "CLOCK_OFFSET" && $2 == 0 { n0++; o = $6; sub(/,$/, "", o); if (o + 0 != 0) bad = bad " rank0:" o }
  END { if (n1 < 2 || n0 < 2 || bad != "") { printf "offsets of rank 1: %d records, of rank 0: %d, wrong:%s\n", n1, n0, bad; exit 1 } }
' clock.txt || { grep CLOCK_OFFSET clock.txt; fail "rank 1's ClockOffset records are not -$skew (+-1e6 ticks), or rank 0's not 0"; }
grep "^CLOCK_OFFSET *1 " clock.txt
echo "$name: PASS"
rm -rf "$dir"
