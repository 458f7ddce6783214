#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The trace check that needs only Debian's readers, for runs without ../shared/tools (a user's
clone): otf2-print reads the trace without a word on stderr, and the otf2 Python module reads
every event, with Enter/Leave well nested and time non-decreasing per location.
Usage: otf2_basic_check.py <traces.otf2>   (exit 1 with one FAIL line; also imported by e2e.py)"""
import subprocess
import sys


def check(anchor):
    """None when the trace passes, else what is wrong (one line)."""
    p = subprocess.run(["otf2-print", anchor], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode or p.stderr.strip():
        return "otf2-print: rc %d, stderr: %s" % (p.returncode, p.stderr.strip()[-2000:])
    import otf2
    stacks, last, n = {}, {}, 0
    with otf2.reader.open(anchor) as trace:
        for loc, ev in trace.events:
            n += 1
            if ev.time < last.get(loc, 0):
                return "otf2 module: time goes back on location %s" % loc.name
            last[loc] = ev.time
            if isinstance(ev, otf2.events.Enter):
                stacks.setdefault(loc, []).append(ev.region)
            elif isinstance(ev, otf2.events.Leave):
                st = stacks.get(loc)
                if not st or st[-1] != ev.region:
                    return "otf2 module: Leave of %s on %s does not match the open Enter" % (ev.region.name, loc.name)
                st.pop()
    left_open = sum(len(v) for v in stacks.values())
    if left_open:
        return "otf2 module: %d regions are never left" % left_open
    print("otf2-print and the otf2 module: %d events, well nested" % n)
    return None


if __name__ == "__main__":
    why = check(sys.argv[1])
    if why:
        print("FAIL: " + why)
        sys.exit(1)
