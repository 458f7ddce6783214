#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Checks a trace of two_threads.cu: `otf2-print -A <trace>` on stdin (its clock properties give
# the ticks per second), the program's output file as argument. Every kernel the program launched must be on the stream location, the spin kernels
# (all but the first, which spins 0 ns) each within 5 % of their duration; exit 1 with one line
# per problem otherwise.
import re
import sys

m = re.search(r"PROF_SPIN kernels=(\d+) ns=(\d+)", open(sys.argv[1]).read())
if not m:
    sys.exit("two_threads_check: no PROF_SPIN line in %s" % sys.argv[1])
total, ns = int(m.group(1)), int(m.group(2))
open_, durations = {}, []
ev = re.compile(r'^(ENTER|LEAVE)\s+(\d+)\s+(\d+)\s+Region: "spin')
ticks = None
for line in sys.stdin:
    c = re.search(r"Ticks per Seconds: (\d+)", line)
    if c:
        ticks = int(c.group(1))
    e = ev.match(line)
    if not e:
        continue
    loc, t = int(e.group(2)), int(e.group(3))
    if e.group(1) == "ENTER":
        open_[loc] = t
    elif loc in open_:
        durations.append(t - open_.pop(loc))
if not ticks:
    sys.exit("two_threads_check: no clock properties on stdin (give it otf2-print -A)")
durations = [d * 1e9 / ticks for d in durations]  # ns
problems = []
if len(durations) != total:
    problems.append("%d spin kernels in the trace, the program launched %d" % (len(durations), total))
timed = sorted(durations)[1:]  # the 0-ns warm-up kernel is the shortest
bad = [d for d in timed if abs(d - ns) > 0.05 * ns]
if bad:
    problems.append("%d of %d spin kernels are more than 5 %% off %d ns (e.g. %.0f ns); %d with zero duration"
                    % (len(bad), len(timed), ns, bad[0], sum(1 for d in timed if d == 0)))
total = re.search(r"PROF_SPIN_TOTAL ns=(\d+)", open(sys.argv[1]).read())
if total:
    print("two_threads: the program's cudaEvent time of the spin kernels: %s ns; the trace's sum: %.0f ns"
          % (total.group(1), sum(timed)))
timed.sort()
if timed:
    print("two_threads: %d spin kernels: min %.0f, median %.0f, max %.0f ns" % (len(timed), timed[0], timed[len(timed) // 2], timed[-1]))
for p in problems:
    print("two_threads: FAIL: " + p)
if not problems:
    print("two_threads: ok: %d kernels, durations %.0f..%.0f ns (each within 5 %% of %d ns)"
          % (len(durations), min(timed), max(timed), ns))
sys.exit(1 if problems else 0)
