#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Checks a prof trace of pytorch_train.py against torch.profiler's count of the same 20 steps.
# stdin: `otf2-print -A` of the trace; argument: the output of `pytorch_train.py torchprof` (its
# RESULT line). The GPU activities (Enter/Leave on the CUDA stream locations) that start inside
# the NVTX range "steps" are counted by name and must equal torch.profiler's GPU events of the
# same names (its GPU user annotations, "Optimizer.step#SGD.step", are not GPU work and are left
# out); 20 NVTX "step" ranges; every activity with a positive duration, none ending after the
# range (it ends with a synchronize). One line per problem, exit 1; else one ok line.
import json
import re
import sys

torch_names = None
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        torch_names = json.loads(line[7:]).get("names")
if torch_names is None:
    sys.exit("pytorch_check: no RESULT line with names in %s" % sys.argv[1])
torch_names = {n: c for n, c in torch_names.items() if "#" not in n}
locs, events, ticks = {}, [], 1e9
loc_re = re.compile(r'^LOCATION\s+(\d+)\s+Name: "([^"]*)".*Group: "([^"]*)"')
ev_re = re.compile(r'^(ENTER|LEAVE)\s+(\d+)\s+(\d+)\s+Region: "([^"]*)"')
for line in sys.stdin:
    m = ev_re.match(line)
    if m:
        events.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)))
        continue
    m = loc_re.match(line)
    if m:
        locs[int(m.group(1))] = m.group(3)
        continue
    c = re.search(r"Ticks per Seconds: (\d+)", line)
    if c:
        ticks = float(c.group(1))
streams = {l for l, g in locs.items() if g.startswith("CUDA Context")}
window, steps, open_, acts = None, 0, {}, []
for kind, loc, t, name in events:
    if loc in streams:
        if kind == "ENTER":
            open_[loc] = (name, t)
        elif loc in open_:
            n, s = open_.pop(loc)
            acts.append((n, s, t))
    elif name == "steps":
        window = [t, None] if kind == "ENTER" else [window[0], t]
    elif name == "step" and kind == "ENTER":
        steps += 1
problems = []
if not window or window[1] is None:
    sys.exit("pytorch_check: FAIL: no NVTX range 'steps' in the trace")
inside = [a for a in acts if window[0] <= a[1] <= window[1]]
ours = {}
for n, s, e in inside:
    key = "Memset (Device)" if n == "cudaMemset" else n[:60]
    ours[key] = ours.get(key, 0) + 1
for n in sorted(set(ours) | set(torch_names)):
    if ours.get(n, 0) != torch_names.get(n, 0):
        problems.append("%s: %d in the trace, torch.profiler %d" % (n, ours.get(n, 0), torch_names.get(n, 0)))
if steps != 20:
    problems.append("%d NVTX step ranges, the script made 20" % steps)
bad = [a for a in acts if a[2] <= a[1]]
if bad:
    problems.append("%d GPU activities without a positive duration" % len(bad))
late = [a for a in inside if a[2] > window[1]]
if late:
    problems.append("%d GPU activities end after the steps range, which ends with a synchronize" % len(late))
for p in problems:
    print("pytorch: FAIL: " + p)
if not problems:
    print("pytorch: ok: %d GPU activities in the 20 steps, by name as torch.profiler counts them; %d in all, shortest %.1f us"
          % (len(inside), len(acts), min(a[2] - a[1] for a in acts) * 1e6 / ticks))
sys.exit(1 if problems else 0)
