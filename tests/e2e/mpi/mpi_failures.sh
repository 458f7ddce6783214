#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# MPI jobs that go wrong must neither hang nor leave an experiment that claims to be complete:
#   config:  ranks with different PROF_* settings (mpirun -np 1 -x PROF_ENABLE_TRACING=true ./a : -np 1 ./a):
#            one line naming the variable and `mpirun -x`, the job stops before its work;
#   exit:    rank 1 exits early (mpirun then stops the job): the others name the missing rank, each
#            writes its own profile (cubex_check.py) and an incomplete.rank<r> marker, no merged
#            profile.cubex; a traces.otf2, if any, is one merged by the ranks that wrote (their "trace
#            merged" line, otf2_check.py and a silent otf2-print; a rank without data is an empty
#            "no data" location), never the collective archive of a complete job;
#   hang:    rank 1 arrives 4 s late, PROF_MPI_FINALIZE_TIMEOUT=1: the others do not wait for it;
#   abort:   MPI_Abort: no profile.cubex; a traces.otf2 only as a merge of the ranks that wrote;
#   normal:  the same program without failure gives one trace and one profile (the control);
#   mpmd:    two executables in one job (mpirun -np 2 ./app : -np 1 ./app2): one trace, and one
#            profile with one root (rank 0's program) that holds rank 2's calls too (cubex_check.py).
# Usage: mpi_failures.sh <bin dir with prof-mpicc> <work dir> <source dir> <shared tools dir> <case>
set -eu
bin=$1 work=$2 src=$3 tools=$4 case=$5
name=mpi_failures_$case
command -v mpicc >/dev/null 2>&1 || { echo "$name: SKIP: mpicc is not installed"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "$name: SKIP: mpirun is not installed"; exit 77; }
fail() { echo "$name: FAIL: $*"; echo "$name: files kept in $dir"; exit 1; }
dir=$work/$name
# A job with a failed rank: traces.otf2 only as the ranks' merge (partial_trace), valid as it is.
check_merged_trace() {
  [ -e exp/traces.otf2 ] || return 0
  grep -q "trace merged without the other ranks' help: exp/traces.otf2 holds ranks" out.txt ||
    fail "traces.otf2 exists, but no rank says it merged it: the archive claims to be complete"
  # Published in one rename (TraceWriter::write_merged): links through prof-parts/current.
  [ "$(readlink exp/traces.otf2)" = prof-parts/current/traces.otf2 ] && [ "$(readlink exp/traces.def)" = prof-parts/current/traces.def ] ||
    fail "the merged trace's traces.otf2 and traces.def are not links into prof-parts/current"
  # One merge's folder, and one more only where a kill cut a merge short (the next merge removes it).
  [ "$(ls -d exp/prof-parts/trace-* | wc -l)" -le 2 ] || fail "merges left behind: $(ls -d exp/prof-parts/trace-*)"
  /usr/bin/python3 "$tools/otf2_check.py" exp/traces.otf2 | tail -n 1 | grep -q '^otf2 ok' ||
    fail "otf2_check.py rejects the merged trace: $(/usr/bin/python3 "$tools/otf2_check.py" exp/traces.otf2 | tail -n 3)"
  otf2-print exp/traces.otf2 >print.txt 2>print.err || fail "otf2-print cannot read the merged trace"
  [ ! -s print.err ] || fail "otf2-print complains about the merged trace: $(head -3 print.err)"
  echo "merged trace: $(grep -o 'holds ranks [-0-9,]* of 3' out.txt | tr '\n' ';')"
}
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
"$bin/prof-mpicc" -O2 "$src/early_exit.c" -o app || fail "prof-mpicc could not build early_exit.c"
case $case in
  config)
    set +e
    timeout 60 mpirun --allow-run-as-root --oversubscribe -np 1 -x PROF_EXPERIMENT_DIRECTORY=exp -x PROF_ENABLE_TRACING=true ./app : \
      -np 1 -x PROF_EXPERIMENT_DIRECTORY=exp ./app >out.txt 2>&1
    rc=$?
    set -e
    cat out.txt
    [ "$rc" -ne 124 ] || fail "the job hung"
    [ "$rc" -ne 0 ] || fail "the job ran to its end although the ranks' configurations differ"
    grep -q "^prof: rank 1: error: PROF_ENABLE_TRACING is false on this rank but true on rank 0: .*mpirun -x PROF_ENABLE_TRACING" out.txt ||
      fail "no line naming PROF_ENABLE_TRACING and mpirun -x"
    ! grep -q "^rank [01]: sum" out.txt || fail "the program's work ran"
    ;;
  mpmd)
    cp app app2
    set +e
    timeout 60 mpirun --allow-run-as-root --oversubscribe -np 2 -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY=exp ./app : \
      -np 1 -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY=exp ./app2 >out.txt 2>&1
    rc=$?
    set -e
    cat out.txt
    [ "$rc" -eq 0 ] || fail "the MPMD job failed with status $rc"
    /usr/bin/python3 "$tools/otf2_check.py" exp/traces.otf2 --mpi | tail -n 1
    # one location per rank: the MPI library's own threads are none
    /usr/bin/python3 "$tools/cubex_check.py" exp/profile.cubex --expect-locations 3 --dump >dump.txt || { tail -n 3 dump.txt; fail "cubex_check.py rejects the MPMD profile"; }
    tail -n 1 dump.txt
    # The job has one root (rank 0's program); app2's own root merges into it, its main below.
    grep -q "^visits (EXCLUSIVE) *[0-9]* *app/main  *[0-9]* (MPI Rank 2 / Master thread) *1$" dump.txt ||
      fail "app2's (rank 2's) main is not under the job's one root"
    ;;
  exit|hang|abort|normal)
    arg=$case
    [ "$case" = normal ] && arg=""
    set +e
    timeout 60 mpirun --allow-run-as-root --oversubscribe -np 3 -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY=exp \
      -x PROF_MPI_FINALIZE_TIMEOUT=1 ./app $arg >out.txt 2>&1
    rc=$?
    set -e
    cat out.txt
    [ "$rc" -ne 124 ] || fail "the job hung (timeout 60 s)"
    ls exp
    if [ "$case" = normal ] || [ "$case" = hang ]; then
      [ "$case" = hang ] || [ "$rc" -eq 0 ] || fail "the job failed with status $rc"
    fi
    case $case in
      normal)
        /usr/bin/python3 "$tools/otf2_check.py" exp/traces.otf2 --mpi | tail -n 1
        /usr/bin/python3 "$tools/cubex_check.py" exp/profile.cubex | tail -n 1
        [ ! -e exp/incomplete.rank0 ] || fail "a complete run left an incomplete marker"
        ;;
      exit|hang)
        grep -q "^prof: rank 0: error: rank(s) 1 did not reach the end of the measurement" out.txt ||
          fail "rank 0 did not name the missing rank 1"
        for r in 0 2; do
          [ -f "exp/incomplete.rank$r" ] || fail "rank $r wrote no incomplete.rank$r marker"
          /usr/bin/python3 "$tools/cubex_check.py" "exp/profile.rank$r.cubex" | tail -n 1
        done
        check_merged_trace
        [ ! -e exp/profile.cubex ] || fail "an incomplete job wrote a merged profile.cubex"
        if [ "$case" = hang ]; then
          # The late rank finds nobody at the end and writes its own data, too.
          [ -f exp/incomplete.rank1 ] && [ -f exp/profile.rank1.cubex ] || fail "the late rank 1 did not write its own data"
          grep -q "^rank 0: sum 6" out.txt || fail "the program itself did not finish"
        fi
        ;;
      abort)
        [ "$rc" -ne 0 ] || fail "MPI_Abort did not fail the job"
        check_merged_trace
        [ ! -e exp/profile.cubex ] || fail "an aborted job wrote a merged profile.cubex"
        ;;
    esac
    ;;
  *) fail "unknown case $case" ;;
esac
echo "$name: PASS"
rm -rf "$dir"
