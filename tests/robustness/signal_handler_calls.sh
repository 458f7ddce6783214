#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Calls from signal handlers (issue 15, defect 7): a SIGALRM handler calls instrumented functions
# 2,000 times while the main thread runs prof's hooks without pause (a filtered function built
# with -finstrument-functions), so
# most signals interrupt a hook. Before the fix those calls were dropped without a word (about
# 1,100 of 2,000 recorded); now they are recorded after the interrupted hook, with their own
# times: the trace and the profile both hold exactly as many visits of on_alarm and in_handler
# as the program counted, with tracing and with the profile alone.
source "$ROBUSTNESS_SRC/common.sh"
skip_under_tsan "ThreadSanitizer runs a signal handler late, at its next interceptor (often inside prof or after the measurement ended), so the handler's calls cannot be placed; and it reports the region registration of a function first called in a handler (malloc) as signal-unsafe, a known limitation (docs/TESTING.md)"
# -finstrument-functions: its hooks run for the filtered function too (with the GCC plugin a
# filtered function calls no hook at all, so no signal would interrupt one).
"$wrap" --instrument=functions gcc -O1 "$ROBUSTNESS_SRC/progs/signal_calls.c" -o sigc || fail "cannot build signal_calls.c"
printf 'SCOREP_REGION_NAMES_BEGIN\nEXCLUDE work\nSCOREP_REGION_NAMES_END\n' >work.filter
for tracing in true false; do
  exp=exp_$tracing
  PROF_ENABLE_TRACING=$tracing PROF_FILTERING_FILE=work.filter PROF_EXPERIMENT_DIRECTORY=$exp PROF_VERBOSE=1 \
    ./sigc >out_$tracing 2>err_$tracing || fail "tracing=$tracing: exit status $?: $(cat err_$tracing)"
  handled=$(sed -n 's/^handled \([0-9]*\)$/\1/p' out_$tracing)
  [ "${handled:-0}" -ge 2000 ] || fail "tracing=$tracing: the program says: $(cat out_$tracing)"
  expect_no_line err_$tracing '^prof: (warning|error)'
  deferred=$(sed -n 's/^prof: \([0-9]*\) events of signal handlers that interrupted prof were recorded after it$/\1/p' err_$tracing)
  [ "${deferred:-0}" -gt 0 ] || fail "tracing=$tracing: no signal interrupted a hook (nothing to test): $(cat err_$tracing)"
  echo "tracing=$tracing: handler ran $handled times, $deferred events recorded after the hook they interrupted"
  check_profile $exp/profile.cubex --expect-region in_handler --expect-region on_alarm
  if have_cubex_check; then
    for fn in on_alarm in_handler; do
      v=$(/usr/bin/python3 "$tools/cubex_check.py" $exp/profile.cubex --dump | awk -v fn="/$fn\$" '$1 == "visits" && $4 ~ fn { s += $NF } END { print s + 0 }')
      [ "$v" -eq "$handled" ] || fail "tracing=$tracing: the profile has $v visits of $fn, the handler ran $handled times"
    done
  fi
  if [ $tracing = true ]; then
    check_trace $exp/traces.otf2
    otf2-print $exp/traces.otf2 >print 2>print.err
    [ ! -s print.err ] || fail "otf2-print complains: $(head -3 print.err)"
    for fn in on_alarm in_handler; do
      n=$(awk -v fn="\"$fn\"" '$1 == "ENTER" && index($0, fn)' print | wc -l)
      [ "$n" -eq "$handled" ] || fail "the trace has $n Enters of $fn, the handler ran $handled times"
    done
  fi
done
echo "ok: every call from the signal handler is in the trace and the profile"
