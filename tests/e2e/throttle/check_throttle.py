#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks a throttled run of hot_cold.c with independent readers.

Usage: check_throttle.py <experiment dir> <program output> --case default|off|include|rebuilt
                         [--ranks N] [--cube-dump FILE]

The trace (the otf2 Python module): Enter/Leave nest on every location; per region, Enters ==
Leaves; `cold` is never throttled: its Enters equal the program's calls; with --case off or
include `tiny` is not throttled either (Enters == calls, no description); with default, `tiny`
and `fib` carry a "throttled by prof" description naming N visits, N a power of two >= 1024
and below the calls, and tiny's Enters equal N (one call path, one thread; with MPI at
least N and fewer than the calls); rebuilt (the emitted filter applied): no tiny or fib region at
all. prof.throttle.filter exists exactly when something was throttled, and EXCLUDEs tiny and
fib but not cold or main. --cube-dump (cubex_check.py --dump of the profile): the visits of the
call path .../cold/tiny agree with the trace's Enters. Exit 1 with FAIL lines."""
import argparse
import collections
import os
import re
import sys

import otf2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exp")
    ap.add_argument("output")
    ap.add_argument("--case", choices=["default", "off", "include", "rebuilt"], required=True)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--cube-dump")
    a = ap.parse_args()

    calls = collections.Counter()
    for line in open(a.output, errors="replace"):
        m = re.match(r"^calls (\w+) (\d+)$", line.strip())
        if m:
            calls[m.group(1)] += int(m.group(2))
    fails = []
    if not calls["cold"]:
        fails.append("no 'calls' lines in %s" % a.output)

    enters, leaves = collections.Counter(), collections.Counter()
    descr = {}
    stacks = collections.defaultdict(list)
    with otf2.reader.open(os.path.join(a.exp, "traces.otf2")) as trace:
        for r in trace.definitions.regions:
            descr[r.name] = r.description or ""
        for loc, ev in trace.events:
            if isinstance(ev, otf2.events.Enter):
                enters[ev.region.name] += 1
                stacks[loc].append(ev.region.name)
            elif isinstance(ev, otf2.events.Leave):
                leaves[ev.region.name] += 1
                st = stacks[loc]
                if not st or st[-1] != ev.region.name:
                    fails.append("Leave of %s on %s does not close the innermost Enter (%s)" % (ev.region.name, loc.name, st[-1] if st else "none"))
                    break
                st.pop()
    for loc, st in stacks.items():
        if st:
            fails.append("location %s ends with open regions %s" % (loc.name, st))
    for name in enters:
        if enters[name] != leaves[name]:
            fails.append("%s: %d Enters, %d Leaves" % (name, enters[name], leaves[name]))

    def throttled_visits(name):
        m = re.match(r"throttled by prof \(PROF_THROTTLE\) after (\d+) visits", descr.get(name, ""))
        return int(m.group(1)) if m else None

    if enters["cold"] != calls["cold"]:
        fails.append("cold: %d Enters, the program made %d calls (never throttled)" % (enters["cold"], calls["cold"]))
    if throttled_visits("cold") or throttled_visits("main"):
        fails.append("cold or main is marked throttled")
    filt = os.path.join(a.exp, "prof.throttle.filter")
    if a.case in ("off", "include"):
        if enters["tiny"] != calls["tiny"] or throttled_visits("tiny"):
            fails.append("tiny: %d Enters of %d calls, description %r: it must not be throttled" % (enters["tiny"], calls["tiny"], descr.get("tiny")))
        if a.case == "off" and os.path.exists(filt):
            fails.append("PROF_THROTTLE=false wrote %s" % filt)
        if a.case == "include" and not throttled_visits("fib"):
            fails.append("with INCLUDE tiny, fib should still be throttled")
    elif a.case == "default":
        for name in ("tiny", "fib"):
            n = throttled_visits(name)
            if n is None:
                fails.append("%s is not marked throttled (description %r)" % (name, descr.get(name)))
                continue
            if n < 1024 or n & (n - 1):
                fails.append("%s: throttled after %d visits: not a power of two >= 1024" % (name, n))
        n = throttled_visits("tiny")
        if n is not None and not (n <= enters["tiny"] < calls["tiny"]):
            fails.append("tiny: %d Enters in the trace, throttled after %d visits, %d calls" % (enters["tiny"], n, calls["tiny"]))
        if a.ranks == 1 and n is not None and enters["tiny"] != n:
            fails.append("tiny: %d Enters, but its one call path was throttled after %d visits" % (enters["tiny"], n))
    elif a.case == "rebuilt":
        for name in ("tiny", "fib"):
            if name in descr:
                fails.append("%s is still a region after the throttle filter was applied" % name)

    if a.case in ("default", "include"):
        if not os.path.exists(filt):
            fails.append("no %s" % filt)
        else:
            text = open(filt).read()
            excluded = re.findall(r"^\s*EXCLUDE\s+(?:MANGLED\s+)?(\S+)", text, re.M)
            want = {"fib"} | ({"tiny"} if a.case == "default" else set())
            if set(excluded) != want:
                fails.append("%s excludes %s, expected %s" % (filt, sorted(excluded), sorted(want)))

    if a.cube_dump:
        visits = collections.Counter()
        for line in open(a.cube_dump, errors="replace"):
            # "visits (EXCLUSIVE) <cnode> <path> <location ...> <value>", a line per location
            parts = line.split()
            if parts and parts[0] == "visits" and any(p.endswith("/cold/tiny") for p in parts):
                visits["tiny"] += int(float(parts[-1]))
        if visits["tiny"] != enters["tiny"]:
            fails.append("profile: %d visits of .../cold/tiny, the trace has %d Enters" % (visits["tiny"], enters["tiny"]))

    for f in fails:
        print("FAIL:", f)
    if fails:
        return 1
    print("throttle ok (%s): tiny %d/%d calls recorded, cold %d/%d, fib %d/%d" % (a.case, enters["tiny"], calls["tiny"], enters["cold"], calls["cold"], enters["fib"], calls["fib"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
