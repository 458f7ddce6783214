#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A tracing run stopped by a batch system's or a user's signal while its buffers flush (issue 15,
# defects 1 and 9): `timeout -s <SIG>` on a program that calls instrumented functions without
# end, with PROF_TOTAL_MEMORY=8M, so that a flush runs most of the time and the signal usually
# lands in one (before the fix the handler waited for the mutex the interrupted flush held: the
# run hung until prof's 30 s alarm and left no trace and no profile). Every run must end within
# seconds with the signal's exit status and one line, and leave a trace that otf2-print reads
# without a complaint, with ProgramEnd carrying the signal's status, and a profile whose visits of
# leaf() equal the trace's Enters of leaf(). The first run's trace gets the full check (otf2
# module, otf2_check.py where present). Then SIGTERM just before main returns (progs/term_then_exit.c).
# Usage: signals_stop.sh <prof-wrap> <work> <tools> [SIGNAL...]
source "$ROBUSTNESS_SRC/common.sh"
skip_under_tsan "ThreadSanitizer defers an asynchronous signal to its next interceptor, which a loop of instrumented calls never reaches: the program dies by the default action before prof sees the signal"
signals=("$@")
[ ${#signals[@]} -gt 0 ] || signals=(TERM INT HUP XCPU USR1 USR2 QUIT TERM)
build spin "$ROBUSTNESS_SRC/progs/spin_calls.c"
ulimit -c 0
run=0
for sig in "${signals[@]}"; do
  run=$((run + 1))
  num=$(kill -l "$sig")
  # Between 0.15 and 0.5 s of running: different points in the flush cycle.
  after=0.$(( 15 + (run * 37) % 35 ))
  exp=exp$run
  start=$(date +%s%N)
  set +e
  PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=8M PROF_EXPERIMENT_DIRECTORY=$exp \
    timeout --preserve-status -s "$sig" "$after" ./spin 2>err$run
  rc=$?
  set -e
  secs=$(( ($(date +%s%N) - start) / 1000000000 ))
  echo "run $run: SIG$sig after ${after}s: exit status $rc, ${secs}s, $(ls $exp 2>/dev/null | tr '\n' ' ')"
  [ "$rc" -eq $((128 + num)) ] || fail "run $run: exit status $rc, expected $((128 + num)) (SIG$sig); stderr: $(cat err$run)"
  [ "$secs" -lt 20 ] || fail "run $run: took ${secs}s: the write-out hung"
  grep -q "^prof: error: the program was stopped by signal $num " err$run || fail "run $run: no stop line: $(cat err$run)"
  [ "$(grep -c '^prof: error' err$run)" -eq 1 ] || fail "run $run: more than one error line: $(cat err$run)"
  [ -f $exp/traces.otf2 ] || fail "run $run: no trace"
  otf2-print $exp/traces.otf2 >print$run 2>print$run.err || fail "run $run: otf2-print failed: $(head -3 print$run.err)"
  [ ! -s print$run.err ] || fail "run $run: otf2-print complains: $(head -3 print$run.err)"
  expect_line print$run "^PROGRAM_END .*Exit status: $((128 + num))\$"
  enters=$(awk '$1 == "ENTER" && /"leaf"/' print$run | wc -l)
  leaves=$(awk '$1 == "LEAVE" && /"leaf"/' print$run | wc -l)
  [ "$enters" -gt 1000 ] || fail "run $run: only $enters Enters of leaf"
  [ "$enters" -eq "$leaves" ] || fail "run $run: $enters Enters, $leaves Leaves of leaf"
  check_profile $exp/profile.cubex --expect-region leaf
  if have_cubex_check; then
    visits=$(/usr/bin/python3 "$tools/cubex_check.py" $exp/profile.cubex --dump | awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }')
    [ "$visits" -eq "$enters" ] || fail "run $run: the profile has $visits visits of leaf, the trace $enters Enters"
  fi
  [ "$run" -eq 1 ] && check_trace $exp/traces.otf2
  rm -rf $exp print$run
done
# SIGTERM just before main returns: the exiting main thread and the signal writer race; the
# process must still end by the signal (before the fix it often exited with status 0: a batch
# script saw success), with its profile and one line.
build term_exit "$ROBUSTNESS_SRC/progs/term_then_exit.c"
for i in $(seq 1 20); do
  set +e
  PROF_EXPERIMENT_DIRECTORY=term$i ./term_exit >/dev/null 2>err_term
  rc=$?
  set -e
  [ "$rc" -eq 143 ] || fail "SIGTERM before main returns, run $i: exit status $rc, expected 143; stderr: $(cat err_term)"
  grep -q "^prof: error: the program was stopped by signal 15 " err_term || fail "run $i: no stop line: $(cat err_term)"
  [ "$i" -gt 1 ] || check_profile term$i/profile.cubex --expect-region leaf
  [ -s term$i/profile.cubex ] || fail "SIGTERM before main returns, run $i: no profile"
  rm -rf term$i
done
echo "ok: ${#signals[@]} runs stopped by a signal, each with its trace and profile; 20 runs with SIGTERM just before main returns ended by it (status 143)"

# A write-out that leaves the data open to a kill for more than 2 s after the signal (a batch
# system's short kill wait) says so in one line with what helps; a quick one says nothing.
# PROF_DEBUG_WRITE_PAUSE holds the write-out 2.5 s (with a trace below PROF_STOP_DUMP_MIN, the
# data are safe only once the trace is written).
for pause in 2500 0; do
  set +e
  PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=8M PROF_DEBUG_WRITE_PAUSE=$pause PROF_EXPERIMENT_DIRECTORY=slow$pause \
    timeout -s TERM 0.5 ./spin 2>err_slow$pause
  set -e
  [ -f slow$pause/traces.otf2 ] || fail "pause $pause: no trace: $(cat err_slow$pause)"
done
expect_line err_slow2500 '^prof: warning: the data were safe from a kill only 2\.[5-9] s after the stop signal \(the write-out took [0-9.]+ s\); .*sbatch --signal=B:TERM@120.*PROF_FLUSH_SIGNAL'
expect_no_line err_slow0 'safe from a kill'
echo "ok: a write-out that kept the data open to a kill for over 2 s says so in one line; a quick one does not"
