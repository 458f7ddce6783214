#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Reads `otf2-print` output on stdin; prints visits and inclusive time per region (all threads).
A stand-in until prof-score and profiles arrive: it is only the demo's summary."""
import re
import sys

resolution = 1e9
stacks, visits, incl = {}, {}, {}
for line in sys.stdin:
    c = re.search(r"Ticks per Seconds: (\d+)", line)
    if c:
        resolution = float(c.group(1))
    m = re.match(r"(ENTER|LEAVE)\s+(\d+)\s+(\d+)\s+Region: \"(.*)\" <\d+>", line)
    if not m:
        continue
    kind, loc, t, region = m.group(1), m.group(2), int(m.group(3)), m.group(4)
    st = stacks.setdefault(loc, [])
    if kind == "ENTER":
        st.append((region, t))
        visits[region] = visits.get(region, 0) + 1
    elif st:
        r, t0 = st.pop()
        if not any(r == x for x, _ in st):  # recursion: count the outermost frame only
            incl[r] = incl.get(r, 0) + (t - t0)
total = max(incl.values()) if incl else 1
print("%-28s %10s %14s %7s" % ("region", "visits", "seconds (incl.)", "share"))
for r, v in sorted(incl.items(), key=lambda kv: -kv[1])[:12]:
    print("%-28s %10d %14.6f %6.1f%%" % (r[:28], visits[r], v / resolution, 100.0 * v / total))
