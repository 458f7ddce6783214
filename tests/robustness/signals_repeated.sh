#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A stop signal that comes again during the write-out (issue 30, item 1). Before the fix the
# handlers had SA_RESETHAND: coreutils timeout's second SIGTERM (to the process group), a second
# kill or a second Ctrl-C took the default action and nothing was written.
#  1. `timeout -s TERM` (child, then its process group), profiling and tracing: every run ends by
#     SIGTERM with its profile (and trace), one stop line.
#  2. Two signals, the second once the write-out runs (PROF_DEBUG_WRITE_PAUSE holds it open):
#     TERM+TERM at once, INT+INT 0.3 s apart: kept, no further line, status of the signal.
#  3. Stops after the first second: the first gets "still writing", the next one ends the program
#     at once (long before the pause is over) with "stopped again", by the signal.
# Usage: signals_repeated.sh <prof-wrap> <work> <tools> [RUNS]
source "$ROBUSTNESS_SRC/common.sh"
skip_under_tsan "ThreadSanitizer defers an asynchronous signal to its next interceptor, which a loop of instrumented calls never reaches"
runs=${1:-5}
build spin "$ROBUSTNESS_SRC/progs/paced_calls.c" -pthread
ulimit -c 0

# one_stop_line <err> <signal number>: exactly one error line, the stop line
one_stop_line() {
  grep -q "^prof: error: the program was stopped by signal $2 " "$1" || fail "no stop line: $(cat "$1")"
  [ "$(grep -c '^prof: error' "$1")" -eq 1 ] || fail "more than one error line: $(cat "$1")"
}

# --- 1: timeout -s TERM ---
for mode in profile trace; do
  for run in $(seq 1 "$runs"); do
    after=0.$(( 15 + (run * 37) % 35 ))
    exp=t_${mode}_$run
    env=(PROF_EXPERIMENT_DIRECTORY=$exp)
    [ $mode = trace ] && env+=(PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=16M)
    set +e
    env "${env[@]}" timeout --preserve-status -s TERM "$after" ./spin 2>err
    rc=$?
    set -e
    [ "$rc" -eq 143 ] || fail "timeout -s TERM $after ($mode) run $run: exit status $rc, expected 143; stderr: $(cat err)"
    one_stop_line err 15
    [ -s $exp/profile.cubex ] || fail "timeout -s TERM $after ($mode) run $run: no profile ($(ls $exp 2>&1 | tr '\n' ' '))"
    if [ $mode = trace ]; then
      [ -f $exp/traces.otf2 ] || fail "timeout ($mode) run $run: no trace"
      otf2-print $exp/traces.otf2 >print 2>print.err || fail "run $run: otf2-print failed: $(head -3 print.err)"
      [ ! -s print.err ] || fail "run $run: otf2-print complains: $(head -3 print.err)"
      expect_line print '^PROGRAM_END .*Exit status: 143$'
    fi
    [ "$run" -eq 1 ] && check_profile $exp/profile.cubex --expect-region leaf
    rm -rf $exp
  done
done
echo "ok: $((2 * runs)) runs under timeout -s TERM kept their data"

pid=
trap '[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true' EXIT  # a failed check leaves no program running
# start_spin <exp> [VAR=value...]: ./spin in the background; waits until it calls functions
start_spin() {
  local exp=$1
  shift
  rm -f err
  # A background job of a non-interactive shell starts with SIGINT ignored, and prof leaves
  # ignored signals alone: perl puts the default back before the exec.
  env PROF_EXPERIMENT_DIRECTORY="$exp" "$@" perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die' ./spin 2>err &
  pid=$!
  for _ in $(seq 1 100); do grep -q running err 2>/dev/null && break; sleep 0.02; done  # paced_calls: running
  sleep 0.2
}
# wait_for_line <regex>: until stderr has it (the write-out has begun)
wait_for_line() {
  for _ in $(seq 1 250); do grep -q "$1" err && return 0; sleep 0.02; done
  fail "no line '$1' within 5 s: $(cat err)"
}
# end_status: the background program's exit status
end_status() {
  set +e
  wait "$pid"
  rc=$?
  set -e
}

# --- 2: the same stop twice, the second during the write-out ---
for pair in "TERM 0" "INT 0.3"; do
  read -r sig gap <<<"$pair"
  num=$(kill -l "$sig")
  exp=twice_$sig
  start_spin $exp PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=32M PROF_DEBUG_WRITE_PAUSE=600
  kill -s "$sig" $pid
  wait_for_line "stopped by signal $num "
  sleep "$gap"
  kill -s "$sig" $pid
  end_status
  [ "$rc" -eq $((128 + num)) ] || fail "SIG$sig twice: exit status $rc, expected $((128 + num)); stderr: $(cat err)"
  one_stop_line err "$num"
  ! grep -q "still writing" err || fail "SIG$sig twice within a second: $(cat err)"
  check_profile $exp/profile.cubex --expect-region leaf
  [ -f $exp/traces.otf2 ] || fail "SIG$sig twice: no trace"
  otf2-print $exp/traces.otf2 >print 2>print.err || fail "SIG$sig twice: otf2-print failed: $(head -3 print.err)"
  [ ! -s print.err ] || fail "SIG$sig twice: otf2-print complains: $(head -3 print.err)"
  expect_line print "^PROGRAM_END .*Exit status: $((128 + num))\$"
  echo "ok: SIG$sig twice ($gap s apart, the second during the write-out): status $rc, trace and profile kept"
done

# --- 3: later stops: a warning, then the end ---
exp=thrice
start_spin $exp PROF_DEBUG_WRITE_PAUSE=20000
start=$(date +%s)
kill -TERM $pid
wait_for_line "stopped by signal 15 "
sleep 1.3
kill -TERM $pid
wait_for_line "^prof: still writing the data measured so far; a further stop signal ends the program without the rest\$"
kill -TERM $pid
end_status
secs=$(( $(date +%s) - start ))
[ "$rc" -eq 143 ] || fail "three stops: exit status $rc, expected 143; stderr: $(cat err)"
[ "$secs" -lt 10 ] || fail "three stops: the program ran on for ${secs}s: the third signal did not end it"
expect_line err "^prof: error: stopped again during the write-out; what was not written yet is lost\$"
echo "ok: a stop 1.3 s after the first warns, the next ends the program (${secs}s, status 143)"
