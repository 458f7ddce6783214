#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# prof-report's steps (issue 31):
#  1. tests/e2e/progs/steps_user.c (10 steps of the user API region "step", 200 ms of start-up):
#     found without a name; each step's duration within 2 % (or 1 ms) of what the program measured
#     itself; step 0 (300 ms) the warm-up; step 6 (250 ms) an outlier; start-up about 200 ms;
#     the same with PROF_STEP=step at run time (prof.cfg) and with --step step; --step of a
#     region with no call says so.
#  2. The H100 PyTorch trace of tests/e2e/export/data (3 warm-up + 8 steps of
#     __main__:train_step, no profile): 11 steps with --step; the GPU busy share, kernel time and
#     host-only time per step add up (busy x duration + host only = duration); the first finding
#     is the GPU idle inside the steps, launch-bound (24 kernels of about 33 us per step, longer
#     gaps), blamed on host call paths.
# Usage: steps.sh <prof-wrap> <prof-report> <work-dir> <export test data dir>
set -euo pipefail
wrap=$1 report=$2 work=$3 data=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$wrap" --user gcc -O1 "$here/../progs/steps_user.c" -o steps_user
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=found ./steps_user >found.out 2>found.err || fail "steps_user failed: $(cat found.err)"
PROF_STEP=step PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=named ./steps_user >named.out 2>named.err || fail "steps_user failed"
"$report" --json found >found.json
"$report" --json named >named.json
"$report" --json --step step found >flag.json
"$report" --json --step nosuch found >nosuch.json
"$report" --text found >found.txt
/usr/bin/python3 - <<'PY' || fail "the steps are not the program's (above)"
import json, statistics, sys
bad = []
def check(name, out, source_word):
    s = json.load(open(name + ".json"))["steps"]
    own = [float(l.split()[2]) / 1e3 for l in open(out) if l.startswith("STEP ")]
    got = [x["duration_s"] for x in s["list"]]
    print("%s: %s; %d steps, warm-up %d, outliers %s, median %.4f s, start-up %.3f s" % (
        name, s["source"], s["count"], s["warmup"], [i for i, x in enumerate(s["list"]) if x["outlier"]], s["median_s"], s["startup_s"]))
    if s["region"] != "step" or source_word not in s["source"]:
        bad.append("%s: region %r, source %r" % (name, s["region"], s["source"]))
    if len(got) != len(own):
        bad.append("%s: %d steps, the program made %d" % (name, len(got), len(own)))
        return
    for i, (g, o) in enumerate(zip(got, own)):
        if abs(g - o) > max(0.001, 0.02 * o):
            bad.append("%s: step %d lasts %.4f s, the program measured %.4f s" % (name, i, g, o))
    if s["warmup"] != 1 or not s["list"][0]["warmup"]:
        bad.append("%s: warm-up %d, step 0 (300 ms) planted" % (name, s["warmup"]))
    if not s["list"][6]["outlier"]:
        bad.append("%s: step 6 (250 ms) is not an outlier" % name)
    steady = own[1:]
    if abs(s["median_s"] - statistics.median(steady)) > max(0.001, 0.02 * statistics.median(steady)):
        bad.append("%s: median %.4f s, the program's %.4f s" % (name, s["median_s"], statistics.median(steady)))
    if not 0.19 <= s["startup_s"] <= 0.35:
        bad.append("%s: start-up %.3f s, 0.2 s planted" % (name, s["startup_s"]))
check("found", "found.out", "found")
check("named", "named.out", "named")
check("flag", "found.out", "named")
n = json.load(open("nosuch.json"))["steps"]
if n["region"] or "nosuch" not in n["note"]:
    bad.append("--step nosuch: %r" % n)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
grep -Eq '^Steps: 10 calls of step on rank 0 \(found: ' found.txt && grep -Eq '^ +0 .* warm-up$' found.txt ||
  fail "the text form's steps: $(sed -n '/^Steps/,/^Top/p' found.txt)"

# 2. A recorded GPU training run
[ -f "$data/pytorch/traces.otf2" ] || fail "no recorded PyTorch trace in $data"
"$report" --json --step __main__:train_step "$data/pytorch" >torch.json
/usr/bin/python3 - <<'PY' || fail "the GPU steps (above)"
import json, sys
d = json.load(open("torch.json"))
s = d["steps"]
print("pytorch: %d steps, warm-up %d, median %.4f s, GPU busy %.1f %%" % (s["count"], s["warmup"], s["median_s"], 100 * s["steady_gpu_busy"]))
assert s["count"] == 11 and s["gpu"] and s["warmup"] >= 1, s
for i, x in enumerate(s["list"]):
    busy = x["gpu_busy"] * x["duration_s"]
    assert abs(busy + x["host_only_s"] - x["duration_s"]) <= 1e-6 + 1e-3 * x["duration_s"], (i, x)
    assert 0 < x["kernel_s"] <= x["duration_s"] * 1.001, (i, x)  # one stream: its kernels lie inside the step
assert 0.2 < s["steady_gpu_busy"] < 0.8, s["steady_gpu_busy"]
f = d["findings"][0]
print("first finding:", f["title"], "|", f["blame"])
# A small MLP: 24 kernels of about 33 us per step with longer gaps between them: launch-bound.
assert f["kind"] == "launch_bound" and f["callpath"] and "forward" in f["blame"] + f["callpath"], f
assert s["steady_kernels"] >= 10 and s["steady_kernel_us"] < 50 and "CUDA graph" in f["suggestion"], (s["steady_kernels"], s["steady_kernel_us"])
PY
echo "ok: steps found and named, their durations the program's; the GPU run's steps and GPU idle finding"
