#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# PROF_FLUSH_SIGNAL (issue 15, "time-limit aware"): a batch system's early signal writes the
# profile of everything measured so far and the run goes on; a second signal writes it again; a
# job then killed with SIGKILL (no write-out at all) keeps the last checkpoint. The program calls
# leaf() 30,000 times, sends itself SIGUSR1, waits for the profile and copies it, calls leaf()
# 20,000 more times, signals again, waits for the new profile and kills itself with SIGKILL.
# Checked: exit status 137, two checkpoint lines, no stop line; both profiles read by
# cubex_check.py (else prof-score) with exactly as many visits of leaf() as calls made before each
# signal; with tracing, the second checkpoint's trace (checkpoint-2/traces.otf2, read by
# otf2-print, the otf2 module and otf2_check.py) holds every Enter, also at 8M where the run
# flushes (its flushes go to spill files that the checkpoint reads); bad values are one line.
source "$ROBUSTNESS_SRC/common.sh"
build cp "$ROBUSTNESS_SRC/progs/checkpoint_calls.c"
visits() {  # visits of leaf in a profile (cubex_check.py), or "" without it
  have_cubex_check || return 0
  /usr/bin/python3 "$tools/cubex_check.py" "$1" --dump | awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }'
}
for case in "false 16M 30000 20000" "true 16M 30000 20000" "true 8M 400000 300000"; do
  read -r tracing memory n1 n2 <<<"$case"
  total=$((n1 + n2))
  exp=exp_${tracing}_$memory
  set +e
  PROF_FLUSH_SIGNAL=USR1 PROF_ENABLE_TRACING=$tracing PROF_TOTAL_MEMORY=$memory PROF_EXPERIMENT_DIRECTORY=$exp \
    ./cp $exp/profile.cubex $n1 $n2 >out_$exp 2>err_$exp
  rc=$?
  set -e
  [ "$rc" -eq 137 ] || fail "$case: exit status $rc, expected 137 (SIGKILL after the checkpoints): $(cat err_$exp)"
  grep -q "^calls $n1 then $total\$" out_$exp || fail "$case: the program says: $(cat out_$exp) $(cat err_$exp)"
  # The program goes on (and here kills itself) once the profile is there; the copy writing the
  # checkpoint is a process of its own that finishes the trace and then says so.
  for _ in $(seq 300); do
    [ "$(grep -c '^prof: checkpoint' err_$exp)" -ge 2 ] && break
    sleep 0.1
  done
  trace_part=""
  [ "$tracing" = false ] || trace_part=", trace written: $exp/checkpoint-[12]/traces.otf2"
  [ "$(grep -c "^prof: checkpoint [12] (signal 10, USR1): profile written: $exp/profile.cubex$trace_part in [0-9]* ms; the measurement goes on\$" err_$exp)" -eq 2 ] ||
    fail "$case: expected two checkpoint lines: $(cat err_$exp)"
  expect_no_line err_$exp 'stopped by signal|warning|error'
  check_profile $exp/profile.cubex.1 --expect-region leaf
  check_profile $exp/profile.cubex --expect-region leaf
  v1=$(visits $exp/profile.cubex.1) v2=$(visits $exp/profile.cubex)
  if [ -n "$v1" ]; then
    [ "$v1" -eq "$n1" ] || fail "$case: the first checkpoint has $v1 visits of leaf, the program had made $n1 calls"
    [ "$v2" -eq "$total" ] || fail "$case: the second checkpoint has $v2 visits of leaf, the program had made $total calls"
  fi
  enters=-
  if [ "$tracing" = true ]; then
    # The second checkpoint's trace replaced the first's; the run's own trace was never finished.
    [ ! -e $exp/checkpoint-1 ] || fail "$case: checkpoint-1 is still there after checkpoint 2"
    check_trace $exp/checkpoint-2/traces.otf2
    otf2-print $exp/checkpoint-2/traces.otf2 >print_$exp 2>print_$exp.err || fail "$case: otf2-print failed: $(head -3 print_$exp.err)"
    [ ! -s print_$exp.err ] || fail "$case: otf2-print complains: $(head -3 print_$exp.err)"
    # The program still runs: its exit status is not known (issue 30, item 15: it said 0).
    expect_line print_$exp '^PROGRAM_END .*Exit status: UNDEFINED$'
    enters=$(awk '$1 == "ENTER" && /"leaf"/' print_$exp | wc -l)
    [ "$enters" -eq "$total" ] || fail "$case: the checkpoint's trace has $enters Enters of leaf, the program had made $total calls"
  fi
  echo "$case: checkpoints with ${v1:-?} and ${v2:-?} visits of leaf, $enters Enters in the trace; $(grep '^prof: checkpoint 2' err_$exp)"
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
