#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks an OpenMP program's trace with the otf2 Python module against the program's own counts.

Usage: check_openmp.py <traces.otf2> <program output> --runtime gomp|ompt [--mpi-ranks N]

The output's lines `PROF_EXPECT [gomp:|ompt:]<what> <count>` (tests/e2e/openmp/constructs.c):
`enter <name>` counts Enters of the region <name>, or of every region starting with it when it
ends in "@" or " "; `enter <name>@<file>:<line>` also counts the same name at the line before and after (the
line the compiler gives the runtime call); `exact <name>` counts Enters of exactly that name (the line
too); `regions <prefix>` counts the distinct entered regions whose name starts with <prefix>;
`event <Class>` counts events of that otf2.events class. A gomp:/ompt: line
applies with that runtime only. Besides: on every location ThreadFork and ThreadJoin pair up
(no join without a fork before it, none left open), as do ThreadTeamBegin and ThreadTeamEnd;
Enter/Leave nest; every location with team events but no fork of its own outside teams is named
"OpenMP thread <n>" unless it is a rank's master thread; the OpenMP regions have paradigm
OPENMP; the thread team communicator's group has paradigm OPENMP; no instrumented region is
a compiler's outlined body (main._omp_fn.0, .omp_outlined.; sampled frames may be). Exit 1 with FAIL lines."""
import argparse
import collections
import re
import sys

import otf2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("output")
    ap.add_argument("--runtime", choices=["gomp", "ompt"], required=True)
    ap.add_argument("--mpi-ranks", type=int, default=1, help="expected counts are per rank: multiply")
    a = ap.parse_args()

    expects = []
    for line in open(a.output, errors="replace"):
        m = re.match(r"^PROF_EXPECT (?:(gomp|ompt):)?(enter|event|exact|regions) (.*) (\d+)$", line.rstrip("\n"))
        if m and (m.group(1) is None or m.group(1) == a.runtime):
            expects.append((m.group(2), m.group(3), int(m.group(4)) * a.mpi_ranks))
    if not expects:
        print("FAIL: no PROF_EXPECT lines in %s" % a.output)
        return 1

    enters = collections.Counter()
    events = collections.Counter()
    fails = []
    stacks = collections.defaultdict(list)
    forks = collections.Counter()
    teams = collections.Counter()
    team_locs = set()
    with otf2.reader.open(a.trace) as trace:
        defs = trace.definitions
        for r in defs.regions:
            if r.name.startswith("!$omp") and str(r.paradigm) != "Paradigm.OPENMP":
                fails.append("region %s has paradigm %s, not OPENMP" % (r.name, r.paradigm))
        for c in defs.comms:
            if c.name == "OpenMP thread team" and str(c.group.paradigm) != "Paradigm.OPENMP":
                fails.append("the thread team's group has paradigm %s" % c.group.paradigm)
        for loc, ev in trace.events:
            kind = type(ev).__name__
            events[kind] += 1
            if isinstance(ev, otf2.events.Enter):
                enters[ev.region.name] += 1
                stacks[loc].append(ev.region)
            elif isinstance(ev, otf2.events.Leave):
                if not stacks[loc] or stacks[loc][-1] != ev.region:
                    fails.append("%s: Leave of %s does not match the open Enter" % (loc.name, ev.region.name))
                else:
                    stacks[loc].pop()
            elif kind == "ThreadFork":
                forks[loc] += 1
            elif kind == "ThreadJoin":
                forks[loc] -= 1
                if forks[loc] < 0:
                    fails.append("%s: ThreadJoin at %d without a ThreadFork" % (loc.name, ev.time))
                    forks[loc] = 0
            elif kind == "ThreadTeamBegin":
                teams[loc] += 1
                team_locs.add(loc)
            elif kind == "ThreadTeamEnd":
                teams[loc] -= 1
                if teams[loc] < 0:
                    fails.append("%s: ThreadTeamEnd at %d without a ThreadTeamBegin" % (loc.name, ev.time))
                    teams[loc] = 0
        for r in defs.regions:
            if ("._omp_fn." in r.name or r.name.startswith(".omp_outlined")) and str(r.paradigm) != "Paradigm.SAMPLING":
                fails.append("region %s: the compiler's outlined body, not the construct" % r.name)
        for loc, n in forks.items():
            if n:
                fails.append("%s: %d ThreadFork without ThreadJoin" % (loc.name, n))
        for loc, n in teams.items():
            if n:
                fails.append("%s: %d ThreadTeamBegin without ThreadTeamEnd" % (loc.name, n))
        for loc, st in stacks.items():
            if st:
                fails.append("%s: %d regions never left (%s)" % (loc.name, len(st), st[-1].name))
        for loc in team_locs:
            if loc.name != "Master thread" and not re.match(r"^OpenMP thread \d+$", loc.name):
                fails.append("location %r has team events but is not named 'OpenMP thread <n>'" % loc.name)

    for what, name, n in expects:
        if what == "event":
            got = events[name]
        elif what == "exact":
            got = enters[name]
        elif what == "regions":
            got = sum(1 for r in enters if r.startswith(name))
        elif name.endswith("@") or name.endswith(" "):
            got = sum(c for r, c in enters.items() if r.startswith(name))
        elif re.search(r"@[^ ]+:\d+$", name):
            # "...@file:L": the runtime call's line is the pragma's or a neighbour (the loop's
            # `for`, the statement before), as the compiler's line table has it.
            base, line = name.rsplit(":", 1)
            got = sum(enters["%s:%d" % (base, int(line) + d)] for d in (-1, 0, 1))
        else:
            got = enters[name]
        status = "ok" if got == n else "FAIL"
        print("%-4s %s %s: expected %d, trace has %d" % (status, what, name, n, got))
        if got != n:
            fails.append("%s %s: expected %d, the trace has %d" % (what, name, n, got))
    print("%d OpenMP thread locations, %d ThreadFork, %d ThreadTeamBegin" %
          (len(team_locs), events["ThreadFork"], events["ThreadTeamBegin"]))
    for f in fails:
        print("FAIL: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
