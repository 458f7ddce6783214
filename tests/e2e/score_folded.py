#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""prof-score counts the calls the profile folds below PROF_PROFILING_MAX_CALLPATH_DEPTH.

An interpreter-shaped program (progs/interp.c: eval and apply recursing into each other) is
built with prof-wrap and profiled with PROF_PROFILING_MAX_CALLPATH_DEPTH=10, so that most of
its calls are folded into the call paths at depth 10. Then, with the same depth:
  - the profile passes cubex_check.py and holds the folded calls in 'folded_visits';
  - prof-score says in one line how many visits were folded and that the estimates count them;
  - a traced rerun with the PROF_TOTAL_MEMORY prof-score suggests does not flush, one with 3/4
    of it does;
  - the trace's Enter and Leave events (otf2-print) equal prof-score's visits (all regions but
    prof's own, which are not traced) twice over, within 0.1 %, and its .evt files have the size
    prof-score estimated, within 1 %.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--prof-wrap", required=True)
    ap.add_argument("--prof-score", required=True)
    ap.add_argument("--shared-tools", default="")
    ap.add_argument("--src", required=True)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--args", default="30000 20")
    a = ap.parse_args()

    work = os.path.join(a.workdir, "score_folded")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    exe = os.path.join(work, "interp")
    b = subprocess.run([a.prof_wrap, "gcc", "-O2", a.src, "-o", exe], capture_output=True, text=True)
    if b.returncode:
        fail("build failed:\n" + b.stdout + b.stderr)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    env.update(PROF_PROFILING_MAX_CALLPATH_DEPTH=str(a.depth), PROF_VERBOSE="1")
    run = [exe] + a.args.split()

    exp = os.path.join(work, "exp")
    r = subprocess.run(run, capture_output=True, text=True, cwd=work, env=dict(env, PROF_EXPERIMENT_DIRECTORY=exp))
    print("--- profiled run\n" + r.stdout[-1000:] + r.stderr[-2000:])
    if r.returncode:
        fail("the profiled run failed")
    calls = {m.group(1): int(m.group(2)) for m in re.finditer(r"^PROF_EXPECT (\S+) (\d+)$", r.stdout, re.M)}
    m = re.search(r"^prof: warning: (\d+) visits deeper than PROF_PROFILING_MAX_CALLPATH_DEPTH=%d were folded" % a.depth,
                  r.stderr, re.M)
    if not m:
        fail("the run did not report folded visits")
    too_deep = int(m.group(1))
    if a.shared_tools and os.path.exists(os.path.join(a.shared_tools, "cubex_check.py")):
        c = subprocess.run(["/usr/bin/python3", os.path.join(a.shared_tools, "cubex_check.py"), os.path.join(exp, "profile.cubex")],
                           capture_output=True, text=True)
        print(c.stdout[-1500:] + c.stderr[-1000:])
        if c.returncode:
            fail("cubex_check.py rejects the profile")

    s = subprocess.run([a.prof_score, "-r", exp], capture_output=True, text=True)
    print("--- prof-score -r\n" + s.stdout[-3000:] + s.stderr[-1000:])
    j = subprocess.run([a.prof_score, "--json", exp], capture_output=True, text=True)
    if s.returncode or j.returncode:
        fail("prof-score failed")
    score = json.loads(j.stdout)
    failed = []
    line = r"^%s visits folded below PROF_PROFILING_MAX_CALLPATH_DEPTH=%d are counted in the estimates" % (
        format(too_deep, ","), a.depth)
    if not re.search(line, s.stdout, re.M):
        failed.append("prof-score does not say that it counts the %d folded visits (no line matching %r)" % (too_deep, line))
    if score.get("folded_visits") != too_deep:
        failed.append("prof-score --json: folded_visits %s, the run folded %d" % (score.get("folded_visits"), too_deep))
    visits = sum(g["visits"] for g in score["groups"] if g["name"] not in ("ALL", "PROF"))
    for region, n in sorted(calls.items()):
        got = sum(x["visits"] for x in score["regions"] if x["name"] == region)
        print("prof-score visits %-6s %9d, the program made %9d calls" % (region, got, n))
    suggested = score["estimate"]["total_memory_text"]
    estimated = score["estimate"]["trace_bytes"]

    exp2 = os.path.join(work, "exp-traced")
    traced = dict(env, PROF_ENABLE_TRACING="true", PROF_TOTAL_MEMORY=suggested, PROF_EXPERIMENT_DIRECTORY=exp2)
    t = subprocess.run(run, capture_output=True, text=True, cwd=work, env=traced)
    print("--- traced rerun with PROF_TOTAL_MEMORY=%s\n%s" % (suggested, t.stderr[-2000:]))
    if t.returncode:
        fail("the traced rerun failed")
    events = {"ENTER": 0, "LEAVE": 0}
    p = subprocess.Popen(["otf2-print", os.path.join(exp2, "traces.otf2")], stdout=subprocess.PIPE, text=True)
    for l in p.stdout:
        k = l.split(" ", 1)[0]
        if k in events:
            events[k] += 1
    if p.wait():
        fail("otf2-print failed")
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(exp2, "traces", "*.evt")))
    print("trace: %d Enter, %d Leave; prof-score: %d visits (%.4f)" % (events["ENTER"], events["LEAVE"], visits,
                                                                   visits / max(events["ENTER"], 1)))
    print("trace: %d bytes of events; prof-score estimated %d (%.4f)" % (size, estimated, estimated / max(size, 1)))
    if events["ENTER"] != events["LEAVE"]:
        failed.append("the trace has %d Enter and %d Leave events" % (events["ENTER"], events["LEAVE"]))
    if abs(2 * visits - events["ENTER"] - events["LEAVE"]) > 0.001 * (events["ENTER"] + events["LEAVE"]):
        failed.append("prof-score's visits (%d) x 2 are not the trace's %d Enter+Leave events (within 0.1 %%)" % (
            visits, events["ENTER"] + events["LEAVE"]))
    if abs(size - estimated) > 0.01 * size + 128:
        failed.append("prof-score estimated %d bytes of events, the trace has %d (not within 1 %%)" % (estimated, size))
    if "trace buffers were flushed" in t.stderr:
        failed.append("the traced rerun with the suggested PROF_TOTAL_MEMORY=%s flushed" % suggested)
    mib = int(suggested[:-1]) * (1024 if suggested.endswith("G") else 1)
    if mib >= 12:
        less = "%dM" % (mib * 3 // 4)
        t = subprocess.run(run, capture_output=True, text=True, cwd=work,
                           env=dict(traced, PROF_TOTAL_MEMORY=less, PROF_EXPERIMENT_DIRECTORY=exp2 + "-less"))
        if "trace buffers were flushed" not in t.stderr:
            failed.append("a traced rerun with PROF_TOTAL_MEMORY=%s (3/4 of the suggestion) did not flush" % less)
        else:
            print("PROF_TOTAL_MEMORY=%s (3/4): flushed, as expected" % less)
            # The runtime's own advice after a flush uses prof-score's model (budget.hpp): the same figure.
            m = re.search(r"^prof: warning: trace buffers were flushed (once|\d+ times) .*set PROF_TOTAL_MEMORY=(\S+) to avoid it$",
                          t.stderr, re.M)
            if not m:
                failed.append("the flushed run gave no one-line PROF_TOTAL_MEMORY advice")
            elif m.group(2) != suggested:
                failed.append("the runtime advises PROF_TOTAL_MEMORY=%s after the flush, prof-score %s" % (m.group(2), suggested))
            else:
                print("runtime advice after the flush: PROF_TOTAL_MEMORY=%s, as prof-score's" % m.group(2))
    else:
        failed.append("the suggested PROF_TOTAL_MEMORY=%s is too small for this test's 3/4 check" % suggested)
    for f in failed:
        print("FAIL: " + f)
    if failed:
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
