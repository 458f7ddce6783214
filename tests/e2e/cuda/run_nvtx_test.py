#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""NVTX without a GPU: nvtx_cpu.cpp built with prof-wrap --cuda g++, run with tracing, checked with
otf2_check.py, otf2-print and the otf2 Python module against what the program does (its header).

  run_nvtx_test.py --prof-wrap PATH --src nvtx_cpu.cpp --workdir DIR [--shared-tools DIR]

Exit 0 pass, 1 fail (one line each), 77 skipped (no NVTX headers, no libprof_cuda.so).
"""
import argparse
import os
import shutil
import subprocess
import sys

NAME = "e2e_cuda_nvtx_cpu"
failures = []


def fail(msg):
    failures.append(msg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prof-wrap", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--shared-tools", default="")
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include")
    a = ap.parse_args()
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(a.prof_wrap))), "lib", "libprof_cuda.so")
    if not os.path.exists(lib):
        print("%s: SKIP: %s does not exist (prof built without the CUDA adapter)" % (NAME, lib))
        return 77
    if not os.path.exists(os.path.join(a.cuda_include, "nvtx3", "nvToolsExt.h")):
        print("%s: SKIP: no NVTX v3 headers in %s" % (NAME, a.cuda_include))
        return 77
    work = os.path.join(a.workdir, NAME)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    exe = os.path.join(work, "nvtx_cpu")
    b = subprocess.run([a.prof_wrap, "--cuda", "g++", "-O2", "-pthread", "-I" + a.cuda_include, a.src, "-o", exe],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if b.returncode != 0:
        print(b.stdout)
        print("%s: FAIL: the build failed" % NAME)
        return 1
    exp = os.path.join(work, "exp")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_") and k != "NVTX_INJECTION64_PATH"}
    env.update(PROF_ENABLE_TRACING="true", PROF_EXPERIMENT_DIRECTORY=exp)
    r = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=120)
    if r.returncode != 0 or "nvtx_cpu: done" not in r.stdout:
        fail("the program exited with status %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    for line in r.stderr.splitlines():
        if line.startswith("prof") and "CUDA" not in line:
            fail("prof said: %s" % line)
    anchor = os.path.join(exp, "traces.otf2")
    if a.shared_tools:
        c = subprocess.run(["/usr/bin/python3", os.path.join(a.shared_tools, "otf2_check.py"), anchor],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if c.returncode != 0:
            fail("otf2_check.py: %s" % c.stdout.strip().splitlines()[-1:])
    p = subprocess.run(["otf2-print", anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0 or p.stderr.strip():
        fail("otf2-print: status %d, stderr %r" % (p.returncode, p.stderr.strip()[:200]))
    if failures:
        return report()
    import otf2
    ranges = {}       # lane location name -> [(kind, region name, time)]
    master = []       # (kind, region name) of the NVTX regions on the master thread
    nvtx_names = {"outer", "inner", "innermost", "domain_push", "registered_push"}
    with otf2.reader.open(anchor) as t:
        for loc, ev in t.events:
            if not isinstance(ev, (otf2.events.Enter, otf2.events.Leave)):
                continue
            kind = "E" if isinstance(ev, otf2.events.Enter) else "L"
            name = ev.region.name
            if loc.name.startswith("NVTX "):
                ranges.setdefault(loc.name, []).append((kind, name, ev.time))
            elif loc.name == "Master thread" and name in nvtx_names:
                master.append((kind, name))
    want_master = [("E", "outer")] + [("E", "inner"), ("E", "innermost"), ("L", "innermost"), ("L", "inner")] * 2 + [
        ("E", "domain_push"), ("L", "domain_push"), ("E", "registered_push"), ("L", "registered_push"), ("L", "outer")]
    if master != want_master:
        fail("push/pop on the master thread: %s, expected %s" % (master, want_master))
    seen = {}
    for lane, evs in sorted(ranges.items()):
        open_name = None
        for kind, name, time in evs:
            if kind == "E":
                if open_name is not None:
                    fail("lane %r: %s starts while %s is open (a lane must nest)" % (lane, name, open_name))
                open_name = name
                seen[name] = seen.get(name, 0) + 1
            else:
                if open_name != name:
                    fail("lane %r: %s ends, but %s is open" % (lane, name, open_name))
                open_name = None
        if open_name is not None:
            fail("lane %r: %s never ends" % (lane, open_name))
    want = {"range_A": 1, "range_B": 1, "range_C": 1, "range_open": 1, "domain_range": 1}
    if seen != want:
        fail("start/end ranges on the lanes: %s, expected %s" % (seen, want))
    default_lanes = [l for l in ranges if l.startswith("NVTX default lane ")]
    if len(default_lanes) < 2:
        fail("the overlapping range_A and range_B need two lanes of the default domain; lanes: %s" % sorted(ranges))
    if not any(l.startswith("NVTX prof-test lane ") for l in ranges):
        fail("no lane of the domain prof-test; lanes: %s" % sorted(ranges))
    if failures:
        return report()
    print("%s: PASS: push/pop nesting on the master thread, 5 start/end ranges on %d lanes (each nests), "
          "range_C ended on another thread, range_open ended at exit" % (NAME, len(ranges)))
    return 0


def report():
    for f in failures:
        print("%s: FAIL: %s" % (NAME, f))
    return 1


if __name__ == "__main__":
    sys.exit(main())
