#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Self-test of check_gpu.py, no GPU needed: writes OTF2 traces as the CUDA adapter is to write
them (tests/gpu/README.md, "The trace model") for scripted programs, with the program's log
beside them, and asserts that check_gpu.py accepts them and rejects each broken variant with the
expected message.

  selftest_check.py [--shared-tools DIR] [--keep DIR]

Last line "selftest_check: N passed, M failed"; exit 0 only when nothing failed.
"""
import argparse
import collections
import os
import re
import shutil
import sys
import tempfile

import otf2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_gpu  # noqa: E402

LT, LGT = otf2.LocationType, otf2.LocationGroupType


# A scripted program: host actions in order. From them come the log (what the program prints)
# and the trace (what a correct adapter writes), which a mutation may then break.
#   ("op", api, stream, [items], sync)     items: "kernel:<base>:<mangled>:<demangled>:<ns>", "HtoD:<bytes>", ...
#   ("push", domain, name) / ("pop",)
#   ("start", domain, name, key) / ("end", key)
#   ("fn", name) / ("ret",)                an instrumented host function
def streams_script():
    s = [("fn", "main")]
    for i in range(3):
        s.append(("op", "cudaStreamCreateWithFlags", None, [], None))
    for i in range(3):
        b = 1048576 * (i + 1)
        s.append(("op", "cudaMemcpyAsync", "s%d" % i, ["HtoD:%d" % b], None))
        s.append(("op", "cudaLaunchKernel", "s%d" % i,
                  ["kernel:scale:_Z5scaleIfEvPT_iS0_:void scale<float>(float*, int, float):5000"], None))
        s.append(("op", "cudaMemcpyAsync", "s%d" % i, ["DtoH:%d" % b], None))
    for i in range(3):
        s.append(("op", "cudaStreamSynchronize", None, [], "s%d" % i))
    s.append(("ret",))
    return s


def many_script(n=50):
    s = [("fn", "main"), ("op", "cudaMemsetAsync", "s0", ["memset:4"], None)]
    for _ in range(n):
        s.append(("op", "cudaLaunchKernel", "s0", ["kernel:tiny:_Z4tinyPj:tiny(unsigned int*):3000"], None))
    s += [("op", "cudaDeviceSynchronize", None, [], "all"),
          ("op", "cudaMemcpyAsync", "s0", ["DtoH:4"], None), ("op", "cudaStreamSynchronize", None, [], "s0"), ("ret",)]
    return s


def spin_script():
    k = "kernel:spin:_Z4spinxPy:spin(long long, unsigned long long*):%d"
    return [("fn", "main"), ("op", "cudaLaunchKernel", "s0", [k % 2000], None),
            ("op", "cudaStreamSynchronize", None, [], "s0"),
            ("op", "cudaEventRecord", "s0", [], None), ("op", "cudaLaunchKernel", "s0", [k % 50000000], None),
            ("op", "cudaEventRecord", "s0", [], None), ("op", "cudaEventSynchronize", None, [], "s0"),
            ("duration", "spin", 1, 50003000), ("ret",)]


def nvtx_script():
    k = "kernel:touch:_Z5touchPi:touch(int*):2000"
    s = [("fn", "main"), ("op", "cudaMemsetAsync", "s0", ["memset:4"], None), ("push", "default", "outer")]
    for _ in range(2):
        s += [("fn", "work_inner(int*, CUstream_st*)"), ("push", "default", "inner"),
              ("op", "cudaLaunchKernel", "s0", [k], None), ("op", "cudaStreamSynchronize", None, [], "s0"),
              ("push", "default", "innermost"), ("pop",), ("pop",), ("ret",)]
    s += [("pop",), ("push", "prof-test", "domain_push"), ("pop",),
          ("start", "prof-test", "domain_range", "d"), ("end", "d"),
          ("start", "default", "range_A", "a"), ("start", "default", "range_B", "b"), ("end", "a"), ("end", "b"),
          ("overlap", "default", "range_A", "range_B"),
          ("start", "default", "range_C", "c"), ("end", "c"),
          ("op", "cudaMemcpy", "default", ["DtoH:4"], "all"), ("ret",)]
    return s


def graph_script():
    stages = ["kernel:%s:_Z%d%sPfi:%s(float*, int):1500" % (n, len(n), n, n) for n in ("stage_add", "stage_double", "stage_sub")]
    s = [("fn", "main"), ("op", "cudaMemsetAsync", "s0", ["memset:262144"], None),
         ("op", "cudaStreamBeginCapture", "s0", [], None)]
    s += [("op", "cudaLaunchKernel", "s0", [], None)] * 3
    s += [("op", "cudaStreamEndCapture", "s0", [], None), ("op", "cudaGraphInstantiate", None, [], None)]
    s += [("op", "cudaGraphLaunch", "s0", stages, None)] * 5
    s += [("op", "cudaStreamSynchronize", None, [], "s0"), ("ret",)]
    return s


class Sim:
    """Runs a script: the log lines and, per location, the events of a correct trace."""

    def __init__(self, script, launch_name="cudaLaunchKernel"):
        self.log = ["PROF_DEVICE rank=0 device=0"]
        self.master = []  # (t, "E"/"L", region key)
        self.streams = collections.OrderedDict()  # program stream -> [(t, kind, args)]
        self.lanes = collections.OrderedDict()  # (domain, k) -> events
        self.regions = {}  # key -> dict(name, canonical, paradigm)
        t = 1000
        free = collections.defaultdict(int)
        pending = collections.defaultdict(list)  # stream -> end times of issued items
        stack, open_ranges, lane_busy = [], {}, collections.defaultdict(dict)
        match_id = 0

        def region(key, **kw):
            self.regions.setdefault(key, kw)
            return key

        for act in script:
            kind = act[0]
            if kind == "fn":
                self.master.append((t, "E", region(("fn", act[1]), name=act[1], paradigm="COMPILER")))
                stack.append(("fn", act[1]))
            elif kind == "ret":
                self.master.append((t, "L", ("fn", stack.pop()[1])))
            elif kind == "push":
                parent = next((n for k, n in reversed(stack) if k == "nvtx"), "-")
                self.log.append("PROF_NVTX rank=0 kind=push domain=%s name=%s parent=%s n=1" % (act[1], act[2], parent))
                self.master.append((t, "E", region(("nvtx", act[2]), name=act[2], paradigm="USER")))
                stack.append(("nvtx", act[2]))
            elif kind == "pop":
                self.master.append((t, "L", ("nvtx", stack.pop()[1])))
            elif kind == "start":
                k = 0
                while lane_busy[act[1]].get(k):
                    k += 1
                lane_busy[act[1]][k] = True
                open_ranges[act[3]] = (act[1], k, act[2])
                self.lanes.setdefault((act[1], k), []).append((t, "E", region(("nvtx", act[2]), name=act[2], paradigm="USER")))
                self.log.append("PROF_NVTX rank=0 kind=range domain=%s name=%s" % (act[1], act[2]))
            elif kind == "end":
                d, k, name = open_ranges.pop(act[1])
                lane_busy[d][k] = False
                self.lanes[(d, k)].append((t, "L", ("nvtx", name)))
            elif kind == "overlap":
                i = self.log.index("PROF_NVTX rank=0 kind=range domain=%s name=%s" % (act[1], act[2]))
                self.log[i] += " overlaps=%s" % act[3]
            elif kind == "duration":
                self.log.append("PROF_DURATION rank=0 kernel=%s index=%d ns=%d" % act[1:])
            elif kind == "op":
                _, api, stream, items, sync = act
                name = launch_name if api == "cudaLaunchKernel" else api
                enter = t
                self.master.append((t, "E", region(("api", name), name=name, paradigm="CUDA")))
                t += 10
                logged = []
                for it in items:
                    f = it.split(":")
                    start = max(enter + 5, free[stream]) + 3
                    if f[0] == "kernel":
                        end = start + int(f[4])
                        ev = [(start, "E", region(("kernel", f[3]), name=f[3], canonical=f[2], paradigm="CUDA")),
                              (end, "L", ("kernel", f[3]))]
                        logged.append("kernel:" + f[1])
                    elif f[0] == "memset":
                        end = start + 100
                        ev = [(start, "E", region(("gpu", "cudaMemset"), name="cudaMemset", paradigm="CUDA")),
                              (end, "L", ("gpu", "cudaMemset"))]
                        logged.append(it)
                    else:
                        end = start + 200
                        match_id += 1
                        r = region(("gpu", "cudaMemcpy " + f[0]), name="cudaMemcpy " + f[0], paradigm="CUDA")
                        ev = [(start, "E", r), (start, "RmaPut" if f[0] == "DtoH" else "RmaGet", (int(f[1]), match_id)),
                              (end, "Complete", match_id), (end, "L", r)]
                        logged.append(it)
                    self.streams.setdefault(stream, []).extend(ev)
                    free[stream] = end
                    pending[stream].append(end)
                if sync == "all":
                    t = max([t] + [e for v in pending.values() for e in v]) + 7
                    pending.clear()
                elif sync:
                    t = max([t] + pending.pop(sync, [])) + 7
                self.master.append((t, "L", ("api", name)))
                line = "PROF_OP rank=0 api=%s n=1" % api
                if stream:
                    line += " stream=%s" % stream
                if logged:
                    line += " gpu=%s" % ",".join(logged)
                if sync:
                    line += " sync=%s" % sync
                self.log.append(line)
            t += 20


def write_experiment(outdir, name, sim, mutate=None, status="0"):
    """OUTDIR/NAME.status/.out/.err and OUTDIR/NAME/traces.otf2; mutate(sim, parts) may change the
    parts before they are written."""
    exp = os.path.join(outdir, name)
    shutil.rmtree(exp, ignore_errors=True)
    os.makedirs(exp)
    parts = {"master": list(sim.master), "streams": collections.OrderedDict((k, list(v)) for k, v in sim.streams.items()),
             "lanes": collections.OrderedDict((k, list(v)) for k, v in sim.lanes.items()),
             "regions": {k: dict(v) for k, v in sim.regions.items()}, "log": list(sim.log),
             "stream_names": {s: "CUDA[0:%d]" % (13 + i) for i, s in enumerate(sim.streams)},
             "context_creator": True, "window": "CUDA window", "err": ""}
    if mutate:
        mutate(parts)
    with open(os.path.join(outdir, name + ".status"), "w") as f:
        f.write(status + "\n")
    with open(os.path.join(outdir, name + ".out"), "w") as f:
        f.write("\n".join(parts["log"]) + "\n")
    with open(os.path.join(outdir, name + ".err"), "w") as f:
        f.write(parts["err"])
    with otf2.writer.open(exp, timer_resolution=1000000000) as trace:
        d = trace.definitions
        node = d.system_tree_node("node")
        pg = d.location_group("Process", system_tree_parent=node)
        ctx = d.location_group("CUDA Context 1", location_group_type=LGT.ACCELERATOR, system_tree_parent=node,
                               creating_location_group=pg if parts["context_creator"] else None)
        master = d.location("Master thread", type=LT.CPU_THREAD, group=pg)
        lanes = {k: d.location("NVTX %s lane %d" % k, type=LT.CPU_THREAD, group=pg) for k in parts["lanes"]}
        streams = {s: d.location(parts["stream_names"][s], type=LT.ACCELERATOR_STREAM, group=ctx)
                   for s in parts["streams"]}
        regions = {}
        for key, r in parts["regions"].items():
            regions[key] = d.region(r["name"], canonical_name=r.get("canonical", r["name"]),
                                    paradigm=getattr(otf2.Paradigm, r["paradigm"]))
        members = [master] + list(streams.values())
        d.group("CUDA locations", group_type=otf2.GroupType.COMM_LOCATIONS, paradigm=otf2.Paradigm.CUDA, members=members)
        grp = d.group("CUDA", group_type=otf2.GroupType.COMM_GROUP, paradigm=otf2.Paradigm.CUDA, members=members)
        comm = d.comm("CUDA", group=grp)
        win = d.rma_win(parts["window"], comm=comm)

        def emit(loc, events):
            w = trace.event_writer_from_location(loc)
            for t, kind, arg in sorted(events, key=lambda e: e[0]):
                if kind == "E":
                    w.enter(t, regions[arg])
                elif kind == "L":
                    w.leave(t, regions[arg])
                elif kind == "RmaGet":
                    w.rma_get(t, win, 0, arg[0], arg[1])
                elif kind == "RmaPut":
                    w.rma_put(t, win, 0, arg[0], arg[1])
                elif kind == "Complete":
                    w.rma_op_complete_blocking(t, win, arg)

        emit(master, parts["master"])
        for k, loc in lanes.items():
            emit(loc, parts["lanes"][k])
        for s, loc in streams.items():
            emit(loc, parts["streams"][s])


# Mutations: each breaks one rule; the expected failure message (a regular expression).
def drop_kernel(parts):
    ev = parts["streams"]["s0"]
    i = next(k for k, e in enumerate(ev) if e[1] == "E" and e[2][0] == "kernel")
    del ev[i:i + 2]


def early_stream(parts):
    # all of s1's work 25 ticks earlier: its first copy then starts before its cudaMemcpyAsync
    parts["streams"]["s1"] = [(t - 25, k, a) for t, k, a in parts["streams"]["s1"]]


def late_copy(parts):
    ev = parts["streams"]["s2"]
    sync_leave = [e for e in parts["master"] if e[1] == "L" and e[2] == ("api", "cudaStreamSynchronize")][2][0]
    ev[-1] = (sync_leave + 50, ev[-1][1], ev[-1][2])
    ev[-2] = (sync_leave + 50, ev[-2][1], ev[-2][2])


def wrong_bytes(parts):
    ev = parts["streams"]["s0"]
    i = next(k for k, e in enumerate(ev) if e[1] == "RmaGet")
    ev[i] = (ev[i][0], "RmaGet", (ev[i][2][0] + 4, ev[i][2][1]))


def put_for_get(parts):
    ev = parts["streams"]["s0"]
    i = next(k for k, e in enumerate(ev) if e[1] == "RmaGet")
    ev[i] = (ev[i][0], "RmaPut", ev[i][2])


def no_complete(parts):
    ev = parts["streams"]["s1"]
    i = next(k for k, e in enumerate(ev) if e[1] == "Complete")
    del ev[i]


def merged_streams(parts):
    # all work of s1 on s0's location, after s0's (a fourth layout: two streams on one location)
    s1 = parts["streams"].pop("s1")
    last = parts["streams"]["s0"][-1][0]
    shift = last + 1 - s1[0][0]
    parts["streams"]["s0"] += [(t + max(shift, 0), k, a) for t, k, a in s1]


def extra_api(parts):
    parts["log"] = [l for l in parts["log"] if "cudaStreamSynchronize" not in l or "sync=s2" not in l]


def wrong_paradigm(parts):
    parts["regions"][("api", "cudaMemcpyAsync")]["paradigm"] = "COMPILER"


def bad_stream_name(parts):
    parts["stream_names"]["s0"] = "CUDA stream 13"


def unmangled(parts):
    for k, r in parts["regions"].items():
        if k[0] == "kernel":
            r["canonical"] = r["name"]


def orphan_context(parts):
    parts["context_creator"] = False


def short_spin(parts):
    ev = parts["streams"]["s0"]
    i = max(k for k, e in enumerate(ev) if e[1] == "L")
    ev[i] = (ev[i][0] - 10000000, ev[i][1], ev[i][2])


def same_lane(parts):
    # range_B onto range_A's lane: the lane then holds overlapping ranges
    b = parts["lanes"].pop(("default", 1))
    parts["lanes"][("default", 0)] += b


def missing_range(parts):
    for k in list(parts["lanes"]):
        parts["lanes"][k] = [e for e in parts["lanes"][k] if e[2] != ("nvtx", "range_C")]


def push_on_lane(parts):
    parts["master"] = [e for e in parts["master"] if e[2] != ("nvtx", "innermost")]


def prof_warning(parts):
    parts["err"] = "prof: warning: CUPTI dropped 12 activity records; set PROF_CUDA_BUFFER=16M\n"


def graph_lost_launch(parts):
    ev = parts["streams"]["s0"]
    del ev[-6:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared-tools", default=os.environ.get("PROF_SHARED_TOOLS", check_gpu.DEFAULT_TOOLS))
    ap.add_argument("--keep", default="", help="write the experiments here and keep them")
    a = ap.parse_args()
    out = a.keep or tempfile.mkdtemp(prefix="prof-gpu-selftest-")
    os.makedirs(out, exist_ok=True)
    cases = [
        # (name, script, launch region name, mutation, expected verdict, message regex)
        ("streams", streams_script, "cudaLaunchKernel", None, "PASS", r"3 stream locations"),
        ("streams_launch13", streams_script, "__cudaLaunchKernel", None, "PASS", r"15 host calls, 3 kernels"),
        ("many", many_script, "cudaLaunchKernel", None, "PASS", r"50 kernels"),
        ("spin", spin_script, "cudaLaunchKernel", None, "PASS", r"2 kernels"),
        ("nvtx", nvtx_script, "cudaLaunchKernel", None, "PASS", r"4 NVTX ranges on 3 lanes"),
        ("graph", graph_script, "cudaLaunchKernel", None, "PASS", r"15 kernels"),
        ("drop_kernel", streams_script, "cudaLaunchKernel", drop_kernel, "FAIL",
         r"kernel scale: 2 executions on the stream locations, the program launched 3"),
        ("early_stream", streams_script, "cudaLaunchKernel", early_stream, "FAIL",
         r"HtoD copy of 2097152 bytes of call #7 \(cudaMemcpyAsync\) on CUDA\[0:14\] starts at t=\d+, before the call's Enter"),
        ("late_copy", streams_script, "cudaLaunchKernel", late_copy, "FAIL",
         r"DtoH copy of 3145728 bytes of call #12 \(cudaMemcpyAsync\) on CUDA\[0:15\] ends at t=\d+, after the Leave of call #15 \(cudaStreamSynchronize\)"),
        ("wrong_bytes", streams_script, "cudaLaunchKernel", wrong_bytes, "FAIL",
         r"HtoD copies: 6291460 bytes in the trace, the program copied 6291456"),
        ("put_for_get", streams_script, "cudaLaunchKernel", put_for_get, "FAIL",
         r"holds \['RmaPut', 'RmaOpCompleteBlocking'\]; expected RmaGet"),
        ("no_complete", streams_script, "cudaLaunchKernel", no_complete, "FAIL",
         r"6 copy regions and 5 RmaOpCompleteBlocking events, the program made 6 copies"),
        ("merged_streams", streams_script, "cudaLaunchKernel", merged_streams, "FAIL",
         r"2 stream locations \(CUDA\[0:13\], CUDA\[0:15\]\), the program used 3 streams"),
        ("extra_api", streams_script, "cudaLaunchKernel", extra_api, "FAIL",
         r"CUDA runtime calls differ from the program's at call #15 \(trace: cudaStreamSynchronize, program: none\)"),
        ("wrong_paradigm", streams_script, "cudaLaunchKernel", wrong_paradigm, "FAIL",
         r"host region 'cudaMemcpyAsync' does not have paradigm CUDA"),
        ("bad_stream_name", streams_script, "cudaLaunchKernel", bad_stream_name, "FAIL",
         r"stream location 'CUDA stream 13' is not named"),
        ("unmangled", streams_script, "cudaLaunchKernel", unmangled, "FAIL", r"not the mangled name"),
        ("orphan_context", streams_script, "cudaLaunchKernel", orphan_context, "FAIL",
         r"stream location 'CUDA\[0:13\]' \(group 'CUDA Context 1'\) belongs to no process of the program"),
        ("short_spin", spin_script, "cudaLaunchKernel", short_spin, "FAIL",
         r"kernel spin #1 lasts 40000000 ns in the trace, the program's cudaEvent time is 50003000 ns"),
        ("same_lane", nvtx_script, "cudaLaunchKernel", same_lane, "FAIL",
         r"NVTX lane 'NVTX default lane 0': 'range_B' starts while 'range_A' is open"),
        ("missing_range", nvtx_script, "cudaLaunchKernel", missing_range, "FAIL",
         r"NVTX start/end range 'range_C' of domain default: 0 on the NVTX lanes, the program made 1"),
        ("missing_push", nvtx_script, "cudaLaunchKernel", push_on_lane, "FAIL",
         r"NVTX push/pop range 'innermost' \(domain default\): 0 Enter events on the Master thread"),
        ("prof_warning", streams_script, "cudaLaunchKernel", prof_warning, "FAIL", r"prof reported: prof: warning: CUPTI"),
        ("graph_lost_launch", graph_script, "cudaLaunchKernel", graph_lost_launch, "FAIL",
         r"kernel stage_add: 4 executions on the stream locations, the program launched 5"),
    ]
    passed = failed = 0
    for name, script, launch, mutate, verdict, regex in cases:
        write_experiment(out, name, Sim(script(), launch), mutate)
        got, lines = check_gpu.check_program(name, out, a.shared_tools, profile=False)
        text = "\n".join(lines)
        if got == verdict and re.search(regex, text):
            passed += 1
            print("ok: %s: %s: %s" % (name, got, lines[0][:160]))
        else:
            failed += 1
            print("FAILED: %s: expected %s matching %r, got %s:\n  %s" % (name, verdict, regex, got, "\n  ".join(lines)))
    # A skipped run and one that was not run.
    with open(os.path.join(out, "skipped.status"), "w") as f:
        f.write("77\n")
    with open(os.path.join(out, "skipped.out"), "w") as f:
        f.write("SKIP: no CUDA device (no CUDA-capable device is detected)\n")
    got, lines = check_gpu.check_program("skipped", out, a.shared_tools, profile=False)
    ok = got == "SKIP" and "no CUDA-capable device" in lines[0]
    got2, lines2 = check_gpu.check_program("never_run", out, a.shared_tools, profile=False)
    ok = ok and got2 == "FAIL" and "not run" in lines2[0]
    passed, failed = passed + ok, failed + (not ok)
    print("%s: skip and not-run verdicts" % ("ok" if ok else "FAILED"))
    if not a.keep:
        shutil.rmtree(out, ignore_errors=True)
    print("selftest_check: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
