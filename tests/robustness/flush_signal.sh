#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# PROF_FLUSH_SIGNAL (issue 15, "time-limit aware"): a batch system's early signal writes the
# profile of everything measured so far and the run goes on; a second signal writes it again; a
# job then killed with SIGKILL (no write-out at all) keeps the last checkpoint. The program calls
# leaf() 30,000 times, sends itself SIGUSR1, waits for the profile and copies it, calls leaf()
# 20,000 more times, signals again, waits for the new profile and kills itself with SIGKILL.
# Checked: exit status 137, two checkpoint lines, no stop line; both profiles read by
# cubex_check.py (else prof-score) with exactly 30,000 and 50,000 visits of leaf(); with tracing on
# as well; the program's own SIGUSR1 handler wins with one warning; bad values are one line.
source "$ROBUSTNESS_SRC/common.sh"
build cp "$ROBUSTNESS_SRC/progs/checkpoint_calls.c"
visits() {  # visits of leaf in a profile (cubex_check.py), or "" without it
  have_cubex_check || return 0
  /usr/bin/python3 "$tools/cubex_check.py" "$1" --dump | awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }'
}
for tracing in false true; do
  exp=exp_$tracing
  set +e
  PROF_FLUSH_SIGNAL=USR1 PROF_ENABLE_TRACING=$tracing PROF_EXPERIMENT_DIRECTORY=$exp ./cp $exp/profile.cubex 30000 20000 >out_$tracing 2>err_$tracing
  rc=$?
  set -e
  [ "$rc" -eq 137 ] || fail "tracing=$tracing: exit status $rc, expected 137 (SIGKILL after the checkpoints): $(cat err_$tracing)"
  grep -q '^calls 30000 then 50000$' out_$tracing || fail "tracing=$tracing: the program says: $(cat out_$tracing) $(cat err_$tracing)"
  [ "$(grep -c '^prof: checkpoint [12] (signal 10, USR1): profile written: .*/profile.cubex in [0-9]* ms; the measurement goes on$' err_$tracing)" -eq 2 ] ||
    fail "tracing=$tracing: expected two checkpoint lines: $(cat err_$tracing)"
  expect_no_line err_$tracing 'stopped by signal|warning|error'
  check_profile $exp/profile.cubex.1 --expect-region leaf
  check_profile $exp/profile.cubex --expect-region leaf
  v1=$(visits $exp/profile.cubex.1) v2=$(visits $exp/profile.cubex)
  if [ -n "$v1" ]; then
    [ "$v1" -eq 30000 ] || fail "tracing=$tracing: the first checkpoint has $v1 visits of leaf, the program had made 30000 calls"
    [ "$v2" -eq 50000 ] || fail "tracing=$tracing: the second checkpoint has $v2 visits of leaf, the program had made 50000 calls"
  fi
  echo "tracing=$tracing: checkpoints with ${v1:-?} and ${v2:-?} visits of leaf; $(grep '^prof: checkpoint 2' err_$tracing)"
done
# Bad values: one line, exit status 1, before the program's work.
for bad in KILL SEGV 9 TERMx ALRM; do
  set +e
  PROF_FLUSH_SIGNAL=$bad PROF_EXPERIMENT_DIRECTORY=exp_bad ./cp exp_bad/profile.cubex 1 1 >/dev/null 2>err_bad
  rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "PROF_FLUSH_SIGNAL=$bad: exit status $rc, expected 1: $(cat err_bad)"
  [ "$(wc -l <err_bad)" -eq 1 ] || fail "PROF_FLUSH_SIGNAL=$bad: more than one line: $(cat err_bad)"
  expect_line err_bad "^prof: error: PROF_FLUSH_SIGNAL='$bad' is not a signal prof takes for checkpoints; use USR1, USR2, HUP or XCPU"
  [ ! -e exp_bad ] || fail "PROF_FLUSH_SIGNAL=$bad: an experiment directory was created"
done
echo "ok: two checkpoints kept after SIGKILL with exact visits, with and without tracing; bad values refused"
