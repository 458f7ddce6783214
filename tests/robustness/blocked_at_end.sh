#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The end of a run while a thread is blocked in a recorded pthread call (issue 30, item 12):
# before the fix the thread stayed "inside prof" for the whole call, the end of the run waited
# about a second for it, and every open frame of the process was closed after that wait (a leaf
# call of 22 us lasted 1.1 s in the trace).
#  join: SIGTERM while main waits in pthread_join for a worker that calls leaf() without end.
#  cond: a normal exit (PROF_PTHREAD_ENABLE=create,mutex,cond) while a worker waits in
#        pthread_cond_wait.
# Each run: status (143 / 0), a trace that otf2-print reads, and in it the longest leaf() call
# and the gap between the last event before the end and the close of the blocked call's frame
# below 0.2 s (before: 0.6 s or more). Checked with the otf2 Python module.
source "$ROBUSTNESS_SRC/common.sh"
build blocked "$ROBUSTNESS_SRC/progs/blocked_at_end.c" -pthread
ulimit -c 0
check() {  # check <exp> <case>
  otf2-print "$1/traces.otf2" >print 2>print.err || fail "$2: otf2-print failed: $(head -3 print.err)"
  [ ! -s print.err ] || fail "$2: otf2-print complains: $(head -3 print.err)"
  /usr/bin/python3 - "$1/traces.otf2" "$2" <<'PY' || fail "$2: see above"
import sys, otf2
from otf2.events import Enter, Leave
path, case = sys.argv[1], sys.argv[2]
with otf2.reader.open(path) as r:
    res = r.definitions.clock_properties.timer_resolution
    last = {}     # location -> time of its last event
    open_at = {}  # (location, region) -> enter time
    longest_leaf = 0
    blocked_close = None
    events = list(r.events)
    end = max(e.time for _, e in events)
    for loc, e in events:
        if isinstance(e, Enter):
            open_at.setdefault((loc, e.region.name), []).append(e.time)
        elif isinstance(e, Leave):
            t0 = open_at[(loc, e.region.name)].pop()
            if e.region.name == "leaf":
                longest_leaf = max(longest_leaf, e.time - t0)
            if e.region.name in ("pthread_join", "pthread_cond_wait"):
                blocked_close = e.time
    if blocked_close is None:
        sys.exit("%s: no closed pthread_join/pthread_cond_wait frame in the trace" % case)
    # the last event of the process before the closing of frames at the stop
    before = max(e.time for _, e in events if e.time < blocked_close) if any(e.time < blocked_close for _, e in events) else blocked_close
    gap = (blocked_close - before) / res
    leaf_s = longest_leaf / res
    print("%s: longest leaf() %.6f s, the blocked call's frame closed %.6f s after the last event before it" % (case, leaf_s, gap))
    if leaf_s > 0.2 or gap > 0.2:
        sys.exit("%s: the end of the run waited for the blocked thread" % case)
PY
}
set +e
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=join timeout --preserve-status -s TERM 0.4 ./blocked join 2>err_join
rc=$?
set -e
[ $rc -eq 143 ] || fail "join: exit status $rc, expected 143: $(cat err_join)"
check join join
set +e
PROF_ENABLE_TRACING=true PROF_PTHREAD_ENABLE=create,mutex,cond PROF_EXPERIMENT_DIRECTORY=cond ./blocked cond 2>err_cond
rc=$?
set -e
[ $rc -eq 0 ] || fail "cond: exit status $rc: $(cat err_cond)"
check cond cond
echo "ok: a stop during pthread_join and an exit during pthread_cond_wait end without waiting for the blocked thread"
