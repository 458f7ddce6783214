#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Two MPI jobs (2 ranks each) with one PROF_EXPERIMENT_DIRECTORY at the same time (issue 15,
# defect 2, with MPI): rank 0 claims the directory in MPI_Init and gives its name to the other
# ranks. Before the fix the second job's rank 0 renamed the first job's live directory aside; now
# it says in one warning line that it writes to exp-2, and both experiments are complete: a trace
# that passes the checks (--mpi) with 2 locations and exactly 2n Enters of leaf(), a profile with
# 2n visits, and a prof.lock naming its own rank 0.
# Usage: dirs_concurrent_mpi.sh <prof-wrap> <work> <tools>
source "${ROBUSTNESS_SRC:?}/common.sh"
command -v mpicc >/dev/null 2>&1 || skip "mpicc is not installed"
command -v mpirun >/dev/null 2>&1 || skip "mpirun is not installed"
n=200000
"$prof_bin/prof-mpicc" -O1 "$here/progs/dir_mpi_calls.c" -o app || fail "prof-mpicc cannot build dir_mpi_calls.c"

wait_for() { for _ in $(seq 3000); do [ -e "$1" ] && return 0; sleep 0.01; done; fail "no $1 after 30 s"; }
job() {  # job <mine> <partner> <output>
  timeout 120 mpirun --oversubscribe -np 2 -x PROF_ENABLE_TRACING=true -x PROF_TOTAL_MEMORY=8M \
    -x PROF_EXPERIMENT_DIRECTORY=exp ./app $n "$1" "$2" >"$3" 2>&1
}

check_job() {  # check_job <dir> <output of the job>
  local dir=$1 out=$2
  [ -f "$dir/traces.otf2" ] || fail "$dir: no trace ($(ls "$dir" | tr '\n' ' '))"
  local pid
  pid=$(sed -n 's/^pid \([0-9]*\) host .*/\1/p' "$dir/prof.lock")
  expect_line "$out" "^rank 0: done $n\$"
  check_trace "$dir/traces.otf2" --mpi --expect-locations 2 --expect-region leaf
  otf2-print "$dir/traces.otf2" >"$dir.print" 2>/dev/null || fail "$dir: otf2-print failed"
  local enters
  enters=$(awk '$1 == "ENTER" && /"leaf"/' "$dir.print" | wc -l)
  [ "$enters" -eq $((2 * n)) ] || fail "$dir: $enters Enters of leaf in the trace, the job made $((2 * n)) calls"
  check_profile "$dir/profile.cubex" --expect-region leaf
  if have_cubex_check; then
    local visits
    visits=$(/usr/bin/python3 "$tools/cubex_check.py" "$dir/profile.cubex" --dump | awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }')
    [ "$visits" -eq $((2 * n)) ] || fail "$dir: $visits visits of leaf in the profile, the job made $((2 * n)) calls"
  fi
  [ -n "$pid" ] || fail "$dir: prof.lock names no process: $(cat "$dir/prof.lock")"
  rm -f "$dir.print"
}

job a.ready b.ready out.a &
job_a=$!
wait_for a.ready
set +e
job b.ready a.ready out.b
rc_b=$?
wait $job_a
rc_a=$?
set -e
echo "job a: exit $rc_a; job b: exit $rc_b; $(ls -d exp* | tr '\n' ' ')"
[ "$rc_a" -eq 0 ] && [ "$rc_b" -eq 0 ] || fail "exit status $rc_a and $rc_b: $(grep prof: out.a out.b | head)"
expect_no_line out.a "in use by another run"
expect_line out.b "^prof: rank 0: warning: PROF_EXPERIMENT_DIRECTORY='exp' is in use by another run \(pid [0-9]+ on [^)]*\); this run writes to 'exp-2'\$"
expect_no_line out.a "prof: .*error"
expect_no_line out.b "prof: .*error"
[ "$(ls -d exp* | tr '\n' ' ')" = "exp exp-2 " ] || fail "expected exp and exp-2, found: $(ls -d exp*)"
check_job exp out.a
check_job exp-2 out.b
[ "$(sed -n 's/^pid \([0-9]*\) .*/\1/p' exp/prof.lock)" != "$(sed -n 's/^pid \([0-9]*\) .*/\1/p' exp-2/prof.lock)" ] ||
  fail "both experiments name the same owner"
echo "ok: two MPI jobs with one directory name kept both experiments (exp, exp-2), each with its $((2 * n)) calls"
