#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Thread churn (issue 15, defects 5 and 6): 10,000 threads started one after another (one alive at
# a time), 4 calls of leaf() each, tracing with the default 16M. Before the fix events were lost,
# the profile kept about a quarter of the visits (every thread's location kept its memory), and the
# trace had 10,001 locations, which otf2-print and the otf2 module could not read (a 4 MiB buffer
# per location: 24 GB, OOM). Now ended threads' locations are reused after
# PROF_PTHREAD_REUSE_AFTER=16: no event lost, the trace has at most 17 locations and both readers
# read it under a 2 GB address-space limit, and the trace's Enters and the profile's visits of
# leaf() are exactly the 40,000 calls made.
source "$ROBUSTNESS_SRC/common.sh"
build tc "$ROBUSTNESS_SRC/progs/thread_churn.c" -pthread
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp ./tc 10000 1 4 >out 2>err || fail "exit status $?: $(cat err)"
grep -q '^threads 10000 calls 40000$' out || fail "the program says: $(cat out)"
expect_no_line err 'lost|dropped|ran out of memory'
locs=$(ls exp/traces/*.evt | wc -l)
echo "10,000 threads: $locs locations in the trace"
[ "$locs" -le 17 ] || fail "$locs locations for 10,000 threads that never ran at the same time"
(
  ulimit -v 2000000
  check_trace exp/traces.otf2
  otf2-print exp/traces.otf2 >print 2>print.err || fail "otf2-print failed under ulimit -v 2000000: $(head -3 print.err)"
)
[ ! -s print.err ] || fail "otf2-print complains: $(head -3 print.err)"
enters=$(awk '$1 == "ENTER" && /"leaf"/' print | wc -l)
begins=$(awk '$1 == "THREAD_BEGIN"' print | wc -l)
[ "$enters" -eq 40000 ] || fail "the trace has $enters Enters of leaf, the program made 40000 calls"
[ "$begins" -eq 10000 ] || fail "the trace has $begins ThreadBegin events for 10000 threads"
check_profile exp/profile.cubex --expect-region leaf
if have_cubex_check; then
  v=$(/usr/bin/python3 "$tools/cubex_check.py" exp/profile.cubex --dump | awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }')
  [ "$v" -eq 40000 ] || fail "the profile has $v visits of leaf, the program made 40000 calls"
fi
# One location per thread on request (Score-P's way): every thread still gets its own.
PROF_PTHREAD_REUSE_AFTER=4294967295 PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_never ./tc 40 1 4 >out2 2>err2 ||
  fail "PROF_PTHREAD_REUSE_AFTER=4294967295: exit status $?: $(cat err2)"
[ "$(ls exp_never/traces/*.evt | wc -l)" -eq 41 ] || fail "PROF_PTHREAD_REUSE_AFTER=4294967295: $(ls exp_never/traces/*.evt | wc -l) locations for 40 threads and main"
check_trace exp_never/traces.otf2
echo "ok: 10,000 threads, $locs locations, no event lost, 40,000 visits in trace and profile"
