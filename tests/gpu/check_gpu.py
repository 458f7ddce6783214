#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks the experiments of the GPU test programs (run.sh --run) against what each program did.

  check_gpu.py OUTDIR [--prog NAME ...] [--shared-tools DIR] [--no-profile]

For every program NAME (default: every OUTDIR/NAME.status) it reads OUTDIR/NAME.status (the exit
status of the run), OUTDIR/NAME.out (its stdout: the PROF_* lines of gpu_test.h), OUTDIR/NAME.err
(its stderr) and the experiment OUTDIR/NAME/ (traces.otf2, profile.cubex), and checks:

  * the run exited 0 (77: skipped, with the program's one line why); no "prof: error/warning";
  * /work/shared/tools/otf2_check.py accepts the trace (--mpi for programs of several ranks),
    otf2-print writes nothing to stderr, cubex_check.py accepts profile.cubex (not --no-profile);
  * per process (location group "Process" or "MPI Rank <r>"):
    - host: on its "Master thread" the outermost Enter events of the CUDA runtime functions the
      program logged are exactly the program's calls, in order (__cudaLaunchKernel counts as
      cudaLaunchKernel: CUDA 13 launches <<<>>> through it); no other thread has any; their
      regions have paradigm CUDA;
    - GPU: one ACCELERATOR_STREAM location "CUDA[<device>:<stream>]" per stream the program used,
      in an ACCELERATOR location group "CUDA Context <id>" created by the process's group; on
      each, the kernels, copies ("cudaMemcpy HtoD/DtoH/DtoD") and memsets ("cudaMemset") are the
      program's work on that stream, in order, each exactly once (kernels matched by base name;
      region paradigm CUDA, canonical name the mangled one); every item starts at or after the
      Enter of the call that issued it (FIFO per stream) and ends by the Leave of the first call
      that synchronised its stream; kernels start before they end;
    - copies: inside the copy's Enter/Leave one RmaGet (HtoD, DtoD) or RmaPut (DtoH) with the
      copy's bytes on the RMA window "CUDA window", then an RmaOpCompleteBlocking with the same
      matching id; bytes per direction and completions equal the program's;
    - PROF_DURATION: the kernel's trace duration is the program's cudaEvent time within 5%;
    - NVTX push/pop: regions named by the messages on the Master thread, as often as the program
      pushed them, inside the logged parent range;
    - NVTX start/end: on locations "NVTX <domain> lane <k>" (CPU_THREAD, the process's group);
      on each lane ranges never overlap; every range appears once with its domain and name;
      overlapping ranges lie on different lanes.
One line per failure ("NAME: FAIL: ..."), one PASS or SKIP line per program, then a summary.
Exit status 0 when all checked programs pass, 1 when one fails, 77 when all were skipped.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TOOLS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "tools"))
MAX_PER_KIND = 5  # failure lines per kind of failure and program
DURATION_TOLERANCE = 0.05
LAUNCH_ALIASES = {"__cudaLaunchKernel": "cudaLaunchKernel", "__cudaLaunchKernel_ptsz": "cudaLaunchKernel"}
COPY_EVENT = {"HtoD": "RmaGet", "DtoD": "RmaGet", "DtoH": "RmaPut"}


class Failures:
    """Failures of one program, at most MAX_PER_KIND lines per kind, then a count."""

    def __init__(self):
        self.lines = []
        self.kinds = collections.Counter()

    def add(self, msg, kind=None):
        kind = kind or msg
        self.kinds[kind] += 1
        if self.kinds[kind] <= MAX_PER_KIND:
            self.lines.append(msg)

    def finish(self):
        for kind, n in self.kinds.items():
            if n > MAX_PER_KIND:
                self.lines.append("... and %d more like: %s" % (n - MAX_PER_KIND, kind))
        return self.lines

    def __bool__(self):
        return bool(self.kinds)


# --------------------------------------------------------------------------------------------
# The program's log
# --------------------------------------------------------------------------------------------
class Item:
    """One GPU work item the program issued: kind kernel/copy/memset, name (kernel base name or
    copy direction), bytes, stream, index of the issuing op, and after matching its activity."""

    def __init__(self, text, stream, op):
        kind, _, value = text.partition(":")
        self.stream, self.op = stream, op
        self.bytes = None
        if kind == "kernel":
            self.kind, self.name = "kernel", value
        elif kind in ("HtoD", "DtoH", "DtoD", "HtoH"):
            self.kind, self.name, self.bytes = "copy", kind, int(value)
        elif kind == "memset":
            self.kind, self.name, self.bytes = "memset", "memset", int(value)
        else:
            raise ValueError("unknown GPU item %r" % text)
        self.activity = None

    def describe(self):
        if self.kind == "kernel":
            return "kernel %s" % self.name
        if self.kind == "copy":
            return "%s copy of %d bytes" % (self.name, self.bytes)
        return "memset"


class Op:
    def __init__(self, api, stream, items, sync):
        self.api, self.stream, self.items, self.sync = api, stream, items, sync
        self.enter = self.leave = None


class Process:
    def __init__(self, rank):
        self.rank = rank
        self.device = None
        self.ops = []
        self.durations = []  # (kernel, index, ns)
        self.pushes = []  # (domain, name, parent, n)
        self.ranges = []  # (domain, name, overlaps)

    def items(self):
        return [it for op in self.ops for it in op.items]


def parse_log(text):
    """{rank: Process} from the program's stdout."""
    procs = {}

    def proc(fields):
        r = int(fields["rank"])
        return procs.setdefault(r, Process(r))

    for line in text.splitlines():
        words = line.split()
        if not words or words[0] not in ("PROF_OP", "PROF_DEVICE", "PROF_DURATION", "PROF_NVTX"):
            continue
        f = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        p = proc(f)
        if words[0] == "PROF_DEVICE":
            p.device = int(f["device"])
        elif words[0] == "PROF_OP":
            for _ in range(int(f.get("n", "1"))):
                op = Op(f["api"], f.get("stream"), [], f.get("sync"))
                idx = len(p.ops)
                if f.get("gpu"):
                    op.items = [Item(t, f["stream"], idx) for t in f["gpu"].split(",")]
                p.ops.append(op)
        elif words[0] == "PROF_DURATION":
            p.durations.append((f["kernel"], int(f["index"]), int(f["ns"])))
        elif f["kind"] == "push":
            p.pushes.append((f["domain"], f["name"], f["parent"], int(f.get("n", "1"))))
        else:
            p.ranges.append((f["domain"], f["name"], f.get("overlaps")))
    return procs


# --------------------------------------------------------------------------------------------
# The trace
# --------------------------------------------------------------------------------------------
class Activity:
    """One region on a stream location: kind, region, start, end, the RMA events inside."""

    def __init__(self, region, start):
        self.region, self.start, self.end = region, start, None
        self.inner = []
        name = region.name or ""
        if name.startswith("cudaMemcpy "):
            self.kind, self.name = "copy", name[len("cudaMemcpy "):]
        elif name == "cudaMemset":
            self.kind, self.name = "memset", "memset"
        else:
            self.kind, self.name = "kernel", name

    def describe(self):
        return "%s (region %r)" % (self.kind, self.region.name)


def kernel_matches(base, name):
    return re.search(r"(^|[\s:*&])%s\s*[<(]" % re.escape(base), name or "") is not None or name == base


def item_matches(item, act):
    if item.kind != act.kind:
        return False
    if item.kind == "kernel":
        return kernel_matches(item.name, act.name)
    if item.kind == "copy":
        return item.name == act.name and copy_bytes(act) == item.bytes
    return True


def copy_bytes(act):
    return sum(ev.bytes for ev in act.inner if type(ev).__name__ in ("RmaGet", "RmaPut"))


class Trace:
    def __init__(self, otf2, anchor):
        self.otf2 = otf2
        E = otf2.events
        self.resolution = None
        self.locations = []
        self.events = collections.defaultdict(list)  # location -> [event]
        with otf2.reader.open(anchor) as trace:
            defs = trace.definitions
            self.resolution = defs.clock_properties.timer_resolution
            self.locations = list(defs.locations)
            self.groups = list(defs.location_groups)
            # prof's launch ids (issue 17): defined where the CUDA adapter wrote a trace
            self.launch_ids = any(a.name == "CUDA correlation id" for a in defs.attributes)
            keep = (E.Enter, E.Leave, E.RmaGet, E.RmaPut, E.RmaOpCompleteBlocking)
            for loc, ev in trace.events:
                if isinstance(ev, keep):
                    self.events[loc].append(ev)

    def ns(self, ticks):
        return ticks * 1e9 / self.resolution


def process_group_name(rank, mpi):
    return "MPI Rank %d" % rank if mpi else "Process"


# --------------------------------------------------------------------------------------------
# Checks of one process
# --------------------------------------------------------------------------------------------
def check_process(tr, p, mpi, fail):
    otf2 = tr.otf2
    LT, LGT = otf2.LocationType, otf2.LocationGroupType
    pname = process_group_name(p.rank, mpi)
    where = "" if not mpi else "rank %d: " % p.rank
    pgroups = [g for g in tr.groups if g.name == pname and g.location_group_type == LGT.PROCESS]
    if len(pgroups) != 1:
        fail.add("%sthe trace has %d PROCESS location groups named %r, expected 1" % (where, len(pgroups), pname))
        return {}
    pg = pgroups[0]
    cpu = [l for l in tr.locations if l.group is pg and l.type == LT.CPU_THREAD]
    lanes = [l for l in cpu if re.match(r"^NVTX (.+) lane (\d+)$", l.name or "")]
    threads = [l for l in cpu if l not in lanes]
    masters = [l for l in threads if l.name == "Master thread"]
    if len(masters) != 1:
        fail.add("%s%d CPU_THREAD locations named 'Master thread' in %r, expected 1 (threads: %s)"
                 % (where, len(masters), pname, ", ".join(repr(l.name) for l in threads)))
        return {}
    master = masters[0]

    # GPU stream locations of this process.
    streams = []
    for l in tr.locations:
        if l.type != LT.ACCELERATOR_STREAM:
            continue
        g = l.group
        creator = getattr(g, "creating_location_group", None)
        if creator is not pg:
            continue
        streams.append(l)
        if g.location_group_type != LGT.ACCELERATOR or not re.match(r"^CUDA Context \d+$", g.name or ""):
            fail.add("%sstream location %r is in location group %r of type %s; expected an ACCELERATOR group "
                     "'CUDA Context <id>'" % (where, l.name, g.name, g.location_group_type.name), kind="stream group")
        m = re.match(r"^CUDA\[(\d+):(\d+)\]$", l.name or "")
        if not m:
            fail.add("%sstream location %r is not named 'CUDA[<device>:<stream id>]'" % (where, l.name),
                     kind="stream location name")
        elif p.device is not None and int(m.group(1)) != p.device:
            fail.add("%sstream location %r names device %s; the program used device %d"
                     % (where, l.name, m.group(1), p.device), kind="stream device")

    check_host(tr, p, where, master, threads, fail)
    matched = check_streams(tr, p, where, streams, fail)
    check_launch_ids(tr, where, threads, streams, fail)
    if matched:
        check_times(tr, p, where, fail)
        check_durations(tr, p, where, fail)
    check_copies(tr, p, where, streams, fail)
    check_nvtx_push(tr, p, where, master, threads, fail)
    check_nvtx_ranges(tr, p, where, pg, lanes, fail)
    return {"streams": streams, "lanes": len(lanes)}


def canonical_api(name):
    return LAUNCH_ALIASES.get(name, name)


def check_host(tr, p, where, master, threads, fail):
    wanted = [op.api for op in p.ops]
    names = set(wanted)
    bad_paradigm = set()
    for loc in threads:
        calls, stack, depth = [], [], 0
        for ev in tr.events.get(loc, []):
            tname = type(ev).__name__
            if tname not in ("Enter", "Leave"):
                continue
            api = canonical_api(ev.region.name)
            is_api = api in names
            if tname == "Enter":
                stack.append(is_api)
                if is_api:
                    if depth == 0:
                        calls.append([api, ev.time, None])
                        if ev.region.paradigm != tr.otf2.Paradigm.CUDA:
                            bad_paradigm.add(ev.region.name)
                    depth += 1
            else:
                if stack and stack.pop():
                    depth -= 1
                    if depth == 0 and calls:
                        calls[-1][2] = ev.time
        if loc is not master:
            if calls:
                c = collections.Counter(a for a, _, _ in calls)
                fail.add("%sthread %r has Enter events of the program's CUDA calls, which all happen on the main thread: %s"
                         % (where, loc.name, ", ".join("%s x%d" % kv for kv in sorted(c.items()))))
            continue
        got = [a for a, _, _ in calls]
        if got != wanted:
            i = next((k for k in range(min(len(got), len(wanted))) if got[k] != wanted[k]), min(len(got), len(wanted)))
            cg, cw = collections.Counter(got), collections.Counter(wanted)
            diff = ["%s: trace %d, program %d" % (n, cg[n], cw[n]) for n in sorted(names) if cg[n] != cw[n]]
            fail.add("%sthe Master thread's CUDA runtime calls differ from the program's at call #%d (trace: %s, "
                     "program: %s)%s" % (where, i + 1, got[i] if i < len(got) else "none",
                                         wanted[i] if i < len(wanted) else "none",
                                         "; counts " + ", ".join(diff) if diff else ""))
            continue
        for op, (_, t0, t1) in zip(p.ops, calls):
            op.enter, op.leave = t0, t1
    for name in sorted(bad_paradigm):
        fail.add("%sthe host region %r does not have paradigm CUDA" % (where, name), kind="API paradigm")
    # The runtime's query calls (cudaGetDevice, cudaGetLastError, cudaPeekAtLastError after every
    # launch of these programs...) are regions only with PROF_CUDA_ENABLE=...,query.
    queries = sorted({ev.region.name for loc in threads for ev in tr.events.get(loc, [])
                      if type(ev).__name__ == "Enter" and ev.region.paradigm == tr.otf2.Paradigm.CUDA
                      and re.match(r"cuda\w*(Get|Query|IsCapturing|PeekAtLastError)", ev.region.name)})
    if queries:
        fail.add("%sthe runtime's query calls are regions by default: %s" % (where, ", ".join(queries)), kind="query regions")


def stream_activities(tr, loc, where, fail):
    acts, open_act = [], None
    for ev in tr.events.get(loc, []):
        tname = type(ev).__name__
        if tname == "Enter":
            if open_act is not None:
                fail.add("%sstream location %r: %r entered inside %r; GPU work on one stream must not nest or overlap"
                         % (where, loc.name, ev.region.name, open_act.region.name), kind="nested on stream")
            open_act = Activity(ev.region, ev.time)
            acts.append(open_act)
        elif tname == "Leave":
            if open_act is not None:
                open_act.end = ev.time
            open_act = None
        elif open_act is not None:
            open_act.inner.append(ev)
        else:
            fail.add("%sstream location %r: %s at t=%d outside any copy region" % (where, loc.name, tname, ev.time),
                     kind="RMA outside a copy")
    return acts


def summary(seq):
    c = collections.Counter(x.describe() for x in seq)
    return ", ".join("%d x %s" % (n, d) for d, n in sorted(c.items(), key=lambda kv: -kv[1])[:6]) or "nothing"


def check_streams(tr, p, where, streams, fail):
    """Maps the program's streams to stream locations by their work; True when all matched."""
    per_stream = collections.OrderedDict()
    for it in p.items():
        per_stream.setdefault(it.stream, []).append(it)
    acts = {loc: stream_activities(tr, loc, where, fail) for loc in streams}
    kernel_regions = {a.region for l in streams for a in acts[l] if a.kind == "kernel"}
    for r in sorted(kernel_regions, key=lambda r: r.name or ""):
        if r.paradigm != tr.otf2.Paradigm.CUDA:
            fail.add("%skernel region %r does not have paradigm CUDA" % (where, r.name), kind="kernel paradigm")
        if not (r.canonical_name or "").startswith("_Z"):
            fail.add("%skernel region %r has the canonical name %r, not the mangled name" % (where, r.name, r.canonical_name),
                     kind="kernel canonical name")
    # Every kernel exactly once, per base name, whatever the streams.
    want = collections.Counter(it.name for it in p.items() if it.kind == "kernel")
    for base, n in sorted(want.items()):
        got = sum(1 for l in streams for a in acts[l] if a.kind == "kernel" and kernel_matches(base, a.name))
        if got != n:
            fail.add("%skernel %s: %d executions on the stream locations, the program launched %d" % (where, base, got, n))
    if len(streams) != len(per_stream):
        fail.add("%s%d stream locations (%s), the program used %d streams (%s)"
                 % (where, len(streams), ", ".join(l.name for l in streams) or "none", len(per_stream),
                    ", ".join(per_stream)))

    def fits(items, seq):
        return len(items) == len(seq) and all(item_matches(i, a) for i, a in zip(items, seq))

    names = list(per_stream)
    assignment = {}

    def search(k, used):
        if k == len(names):
            return True
        for loc in streams:
            if loc not in used and fits(per_stream[names[k]], acts[loc]):
                assignment[names[k]] = loc
                if search(k + 1, used | {loc}):
                    return True
        return False

    if not search(0, frozenset()):
        for s in names:
            if not any(fits(per_stream[s], acts[l]) for l in streams):
                fail.add("%sno stream location has the program's work on stream %s in order (%s); locations: %s"
                         % (where, s, summary(per_stream[s]),
                            "; ".join("%s: %s" % (l.name, summary(acts[l])) for l in streams) or "none"))
                break
        else:
            fail.add("%sthe program's streams cannot be mapped one to one onto the stream locations" % where)
        return False
    for s, loc in assignment.items():
        for it, a in zip(per_stream[s], acts[loc]):
            it.activity = a
            it.location = loc
    return True


def launch_id(ev):
    for a, v in (ev.attributes or {}).items():
        if a.name == "CUDA correlation id":
            return v
    return None


def check_launch_ids(tr, where, threads, streams, fail):
    """Every kernel, copy and memset on a stream carries the "CUDA correlation id" of the host
    call that launched it, which that call's Enter carries too (prof-export's arrows)."""
    if not tr.launch_ids:
        return
    E = tr.otf2.events
    host = {launch_id(ev) for l in threads for ev in tr.events.get(l, []) if isinstance(ev, E.Enter)} - {None}
    for l in streams:
        for ev in tr.events.get(l, []):
            if not isinstance(ev, E.Enter):
                continue
            i = launch_id(ev)
            if i is None:
                fail.add("%s%r on %r has no CUDA correlation id" % (where, ev.region.name, l.name), kind="launch id missing")
            elif i not in host:
                fail.add("%s%r on %r has the launch id %d, which no host call's Enter carries" % (where, ev.region.name, l.name, i),
                         kind="launch id unmatched")


def check_times(tr, p, where, fail):
    ops = p.ops
    if any(op.enter is None for op in ops):
        return  # the host calls did not match: reported already
    # For every call, the first call from it on that waits for each stream: FIFO per stream.
    next_sync, pending_all, pending = [None] * len(ops), None, {}
    for i in range(len(ops) - 1, -1, -1):
        if ops[i].sync == "all":
            pending_all, pending = i, {}
        elif ops[i].sync:
            pending[ops[i].sync] = i
        next_sync[i] = (pending_all, dict(pending)) if ops[i].items else None
    for it in p.items():
        a, op = it.activity, ops[it.op]
        what = "%s of call #%d (%s) on %s" % (it.describe(), it.op + 1, op.api, it.location.name)
        if a.end is None:
            fail.add("%s%s never ends" % (where, what), kind="item never ends")
            continue
        if a.start < op.enter:
            fail.add("%s%s starts at t=%d, before the call's Enter (t=%d)"
                     % (where, what, a.start, op.enter), kind="starts before its call")
        if (a.kind == "kernel" and not a.start < a.end) or a.start > a.end:
            fail.add("%s%s: start t=%d, end t=%d" % (where, what, a.start, a.end), kind="start not before end")
        by_all, by_stream = next_sync[it.op]
        k = min((i for i in (by_all, by_stream.get(it.stream)) if i is not None), default=None)
        if k is not None and ops[k].leave is not None and a.end > ops[k].leave:
            fail.add("%s%s ends at t=%d, after the Leave of call #%d (%s) that waited for it (t=%d)"
                     % (where, what, a.end, k + 1, ops[k].api, ops[k].leave), kind="ends after its synchronisation")


def check_durations(tr, p, where, fail):
    for kernel, index, ns in p.durations:
        mine = [it for it in p.items() if it.kind == "kernel" and it.name == kernel]
        if index >= len(mine):
            fail.add("%sPROF_DURATION names execution %d of kernel %s, the program logged %d" % (where, index, kernel, len(mine)))
            continue
        a = mine[index].activity
        if a is None or a.end is None:
            continue
        got = tr.ns(a.end - a.start)
        if abs(got - ns) > DURATION_TOLERANCE * ns:
            fail.add("%skernel %s #%d lasts %.0f ns in the trace, the program's cudaEvent time is %d ns (more than %d%% apart)"
                     % (where, kernel, index, got, ns, DURATION_TOLERANCE * 100))


def check_copies(tr, p, where, streams, fail):
    E = tr.otf2.events
    want_bytes, want_n = collections.Counter(), 0
    for it in p.items():
        if it.kind == "copy":
            want_bytes[it.name] += it.bytes
            want_n += 1
    got_bytes, got_n, completes = collections.Counter(), 0, 0
    for loc in streams:
        for a in stream_activities(tr, loc, where, Failures()):
            for ev in a.inner:
                if isinstance(ev, E.RmaOpCompleteBlocking):
                    completes += 1
            if a.kind != "copy":
                if a.inner:
                    fail.add("%s%s on %r holds RMA events" % (where, a.describe(), loc.name), kind="RMA in non-copy")
                continue
            got_n += 1
            got_bytes[a.name] += copy_bytes(a)
            wanted = COPY_EVENT.get(a.name)
            kinds = [type(ev).__name__ for ev in a.inner]
            if wanted is None:
                fail.add("%scopy region %r on %r: unknown direction" % (where, a.region.name, loc.name), kind="copy name")
                continue
            if kinds != [wanted, "RmaOpCompleteBlocking"]:
                fail.add("%s%s on %r at t=%d holds %s; expected %s then RmaOpCompleteBlocking"
                         % (where, a.describe(), loc.name, a.start, kinds or "no events", wanted), kind="copy events")
                continue
            op, done = a.inner
            if (op.win.name or "") != "CUDA window" or done.win is not op.win:
                fail.add("%s%s on %r: RMA window %r / %r, expected both 'CUDA window'"
                         % (where, a.describe(), loc.name, op.win.name, done.win.name), kind="copy window")
            if done.matching_id != op.matching_id:
                fail.add("%s%s on %r: RmaOpCompleteBlocking matching id %d, the %s had %d"
                         % (where, a.describe(), loc.name, done.matching_id, wanted, op.matching_id), kind="matching id")
            if not a.start <= op.time <= done.time <= (a.end if a.end is not None else done.time):
                fail.add("%s%s on %r: Enter t=%d, %s t=%d, complete t=%d, Leave t=%s out of order"
                         % (where, a.describe(), loc.name, a.start, wanted, op.time, done.time, a.end), kind="copy order")
    for d in sorted(set(want_bytes) | set(got_bytes)):
        if want_bytes[d] != got_bytes[d]:
            fail.add("%s%s copies: %d bytes in the trace, the program copied %d" % (where, d, got_bytes[d], want_bytes[d]))
    if got_n != want_n or completes != want_n:
        fail.add("%s%d copy regions and %d RmaOpCompleteBlocking events, the program made %d copies"
                 % (where, got_n, completes, want_n))
    p.copy_summary = ", ".join("%s %d B" % kv for kv in sorted(got_bytes.items()))


def check_nvtx_push(tr, p, where, master, threads, fail):
    if not p.pushes:
        return
    names = {name for _, name, _, _ in p.pushes}
    seen = collections.Counter()
    parents = collections.defaultdict(collections.Counter)
    for loc in threads:
        stack = []
        for ev in tr.events.get(loc, []):
            tname = type(ev).__name__
            if tname == "Enter":
                name = ev.region.name
                if name in names:
                    seen[(loc is master, name)] += 1
                    parents[name][next((s for s in reversed(stack) if s in names), "-")] += 1
                stack.append(name)
            elif tname == "Leave" and stack:
                stack.pop()
    want, want_parents, domains = collections.Counter(), collections.defaultdict(collections.Counter), {}
    for domain, name, parent, n in p.pushes:
        want[name] += n
        want_parents[name][parent] += n
        domains[name] = domain
    for name in sorted(want):
        if seen[(True, name)] != want[name] or seen[(False, name)]:
            fail.add("%sNVTX push/pop range %r (domain %s): %d Enter events on the Master thread and %d on other threads, "
                     "the program pushed it %d times on the main thread"
                     % (where, name, domains[name], seen[(True, name)], seen[(False, name)], want[name]))
        elif parents[name] != want_parents[name]:
            fail.add("%sNVTX range %r: enclosing ranges in the trace %s, the program pushed it inside %s"
                     % (where, name, dict(parents[name]), dict(want_parents[name])))


def check_nvtx_ranges(tr, p, where, pg, lanes, fail):
    got = []  # (domain, name, t0, t1, lane)
    for loc in lanes:
        domain = re.match(r"^NVTX (.+) lane (\d+)$", loc.name).group(1)
        open_ev = None
        for ev in tr.events.get(loc, []):
            tname = type(ev).__name__
            if tname == "Enter":
                if open_ev is not None:
                    fail.add("%sNVTX lane %r: %r starts while %r is open; ranges on one lane must not overlap"
                             % (where, loc.name, ev.region.name, open_ev.region.name), kind="lane overlap")
                open_ev = ev
            elif tname == "Leave":
                if open_ev is None or ev.region is not open_ev.region:
                    fail.add("%sNVTX lane %r: Leave of %r does not end the open range" % (where, loc.name, ev.region.name),
                             kind="lane leave")
                else:
                    got.append((domain, open_ev.region.name, open_ev.time, ev.time, loc))
                open_ev = None
            else:
                fail.add("%sNVTX lane %r holds a %s event" % (where, loc.name, tname), kind="lane event")
        if open_ev is not None:
            fail.add("%sNVTX lane %r: range %r never ends" % (where, loc.name, open_ev.region.name), kind="lane open")
    want = collections.Counter((d, n) for d, n, _ in p.ranges)
    have = collections.Counter((d, n) for d, n, _, _, _ in got)
    for key in sorted(set(want) | set(have)):
        if want[key] != have[key]:
            fail.add("%sNVTX start/end range %r of domain %s: %d on the NVTX lanes, the program made %d"
                     % (where, key[1], key[0], have[key], want[key]))
    for d, n, other in p.ranges:
        if not other:
            continue
        a = [g for g in got if g[0] == d and g[1] == n]
        b = [g for g in got if g[0] == d and g[1] == other]
        if len(a) == 1 and len(b) == 1:
            a, b = a[0], b[0]
            if a[4] is b[4]:
                fail.add("%sNVTX ranges %r and %r overlap in time but share the lane %r" % (where, n, other, a[4].name))
            elif not (a[2] <= b[2] <= a[3] <= b[3]):
                fail.add("%sNVTX ranges %r [%d, %d] and %r [%d, %d] do not overlap as the program made them "
                         "(A starts, B starts, A ends, B ends)" % (where, n, a[2], a[3], other, b[2], b[3]))


# --------------------------------------------------------------------------------------------
# One program
# --------------------------------------------------------------------------------------------
def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def run_tool(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


CONFLICT = "another tool already holds CUPTI's subscriber"
LAUNCHES = ("cudaLaunchKernel", "cudaGraphLaunch", "cudaLaunchCooperativeKernel", "cudaLaunchKernelExC")


def check_profile_gpu(cube, procs, fail):
    """The profile's GPU side, read from the .cubex's anchor.xml (tar) independently of prof: every
    kernel region sits in a call path whose parent is the host call that launched it
    (cudaLaunchKernel, cudaGraphLaunch), in the columns of accelerator streams only; and prof-score
    --json counts each kernel's executions as the program launched them."""
    import tarfile
    import xml.etree.ElementTree as ET
    with tarfile.open(cube) as t:
        root = ET.fromstring(t.extractfile("anchor.xml").read())
    regions = {r.get("id"): r.findtext("name") or "" for r in root.iter("region")}
    # GPU regions only: nvcc's host function named like a template kernel is a CPU region.
    cuda = {r.get("id") for r in root.iter("region") if (r.findtext("paradigm") or "") == "cuda"}
    stream_locs = [l for l in root.iter("location") if l.findtext("type") == "accelerator stream"]
    if not stream_locs:
        fail.add("profile %s: no 'accelerator stream' location" % cube, kind="profile")
    bases = sorted({it.name for p in procs.values() for it in p.items() if it.kind == "kernel"})

    def walk(node, parent_name):
        name = regions.get(node.get("calleeId"), "")
        for base in bases:
            if node.get("calleeId") in cuda and kernel_matches(base, name) and parent_name not in LAUNCHES:
                fail.add("profile: kernel %r sits under %r, not under the call that launched it" % (name, parent_name),
                         kind="profile kernel path")
        for child in node.findall("cnode"):
            walk(child, name)

    for top in root.find("program").findall("cnode"):
        walk(top, "")
    score = os.path.join(os.environ.get("PROF_BUILD", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build")),
                         "bin", "prof-score")
    if not os.path.exists(score):
        return
    rc, o, e = run_tool([score, "--json", cube])
    if rc != 0:
        fail.add("prof-score --json %s failed: %s" % (cube, (e.strip().splitlines() or [""])[-1]), kind="profile")
        return
    import json
    score = json.loads(o)
    # The streams' accelerator groups belong to their processes (Creating location group).
    if score.get("processes") != len(procs):
        fail.add("prof-score counts %r processes in the profile; the program ran %d" % (score.get("processes"), len(procs)),
                 kind="profile processes")
    calls = collections.Counter()
    for a in score.get("gpu_activities", []):
        if a.get("kind") == "kernel":
            for base in bases:
                if kernel_matches(base, a["name"]):
                    calls[base] += a["calls"]
    want = collections.Counter(it.name for p in procs.values() for it in p.items() if it.kind == "kernel")
    if calls != want:
        fail.add("profile: kernel executions per kernel %s, the program launched %s" % (dict(calls), dict(want)),
                 kind="profile kernel visits")


def check_conflict(name, outdir, tools, out, err, fail):
    """The program "conflict": another CUPTI subscriber came first. prof says so in exactly one
    line, the program's CPU side is measured (a valid trace and profile) and nothing of CUDA is."""
    held = re.search(r"PROF_HOLDER cuptiSubscribe=(\d+)", out)
    if not held or held.group(1) != "0":
        fail.add("the holder library did not take CUPTI's subscriber first (%s)"
                 % (held.group(0) if held else "no PROF_HOLDER line"))
    lines = [l for l in err.splitlines() if l.startswith("prof")]
    if len(lines) != 1 or CONFLICT not in lines[0]:
        fail.add("expected exactly one prof line naming the conflict (%r), got %r" % (CONFLICT, lines))
    anchor = os.path.join(outdir, name, "traces.otf2")
    rc, o, e = run_tool(["/usr/bin/python3", os.path.join(tools, "otf2_check.py"), anchor])
    if rc != 0:
        fail.add("otf2_check.py: %s" % ((o + e).strip().splitlines() or ["(no output)"])[-1])
    cube = os.path.join(outdir, name, "profile.cubex")
    rc, o, e = run_tool(["/usr/bin/python3", os.path.join(tools, "cubex_check.py"), cube])
    if rc != 0:
        fail.add("cubex_check.py: %s" % ((o + e).strip().splitlines() or ["(no output)"])[-1])
    import otf2
    with otf2.reader.open(anchor) as t:
        d = t.definitions
        streams = [l.name for l in d.locations if l.type == otf2.LocationType.ACCELERATOR_STREAM]
        cuda = [r.name for r in d.regions if r.paradigm == otf2.Paradigm.CUDA]
        main = [r.name for r in d.regions if r.name == "main"]
    if streams or cuda:
        fail.add("CUDA was recorded although CUPTI was taken: streams %r, CUDA regions %r" % (streams, cuda[:5]))
    if not main:
        fail.add("the CPU side was not recorded: no region main")
    if fail:
        return "FAIL", fail.finish()
    return "PASS", ["one line names the conflict; CPU side only (no stream, no CUDA region)"]


def check_dropped(name, outdir, tools, out, err, fail):
    """The program "dropped": 200,000 kernels with PROF_CUDA_BUFFER=2M, more than CUPTI can keep
    between flushes. prof reports the dropped records in one line, and the trace holds exactly the
    kernels that were not dropped (launched - dropped), none twice, on one stream."""
    launched = re.search(r"PROF_INFO rank=0 kernels=(\d+)", out)
    lines = [l for l in err.splitlines() if l.startswith("prof")]
    m = [re.search(r"CUPTI dropped (\d+) GPU activity records", l) for l in lines]
    m = [x for x in m if x]
    if not launched:
        fail.add("no PROF_INFO line: the program did not finish")
    if len(m) != 1 or len(lines) != 1:
        fail.add("expected exactly one prof line reporting dropped records, got %r" % lines)
    anchor = os.path.join(outdir, name, "traces.otf2")
    rc, o, e = run_tool(["/usr/bin/python3", os.path.join(tools, "otf2_check.py"), anchor])
    if rc != 0:
        fail.add("otf2_check.py: %s" % ((o + e).strip().splitlines() or ["(no output)"])[-1])
    if fail:
        return "FAIL", fail.finish()
    dropped, n = int(m[0].group(1)), int(launched.group(1))
    import otf2
    kernels = 0
    with otf2.reader.open(anchor) as t:
        for loc, ev in t.events:
            if (isinstance(ev, otf2.events.Enter) and loc.type == otf2.LocationType.ACCELERATOR_STREAM
                    and "tiny" in (ev.region.name or "")):
                kernels += 1
    if dropped <= 0:
        fail.add("the buffer limit made CUPTI drop nothing (the test needs drops: raise the kernel count)")
    # The drops may include the program's one memset and one copy besides its kernels.
    if not n <= kernels + dropped <= n + 2:
        fail.add("%d kernels in the trace + %d reported dropped does not account for the %d launched"
                 % (kernels, dropped, n))
    if fail:
        return "FAIL", fail.finish()
    return "PASS", ["%d launched, %d in the trace, %d dropped and reported in one line" % (n, kernels, dropped)]


def check_program(name, outdir, tools, profile=True):
    """Returns ('PASS'|'FAIL'|'SKIP', [lines])."""
    fail = Failures()
    status = read(os.path.join(outdir, name + ".status"))
    out = read(os.path.join(outdir, name + ".out")) or ""
    err = read(os.path.join(outdir, name + ".err")) or ""
    if status is None:
        return "FAIL", ["not run: %s is missing (run.sh --run first)" % os.path.join(outdir, name + ".status")]
    status = status.strip()
    if status == "77":
        why = next((l for l in (out + err).splitlines() if "SKIP" in l), "exit status 77")
        return "SKIP", [re.sub(r"^SKIP:\s*", "", why.strip())]
    if status != "0":
        last = (err.strip().splitlines() or ["(no stderr)"])[-1]
        return "FAIL", ["the run exited with status %s; last stderr line: %s" % (status, last)]
    if name == "conflict":
        return check_conflict(name, outdir, tools, out, err, fail)
    if name == "dropped":
        return check_dropped(name, outdir, tools, out, err, fail)
    for line in err.splitlines():
        if re.match(r"^prof(\[[^]]*\])?: (error|warning)", line):
            fail.add("prof reported: %s" % line.strip(), kind="prof message")
    procs = parse_log(out)
    if not procs or not any(p.ops for p in procs.values()):
        return "FAIL", ["%s.out has no PROF_OP lines: the program did not finish its work" % name]
    mpi = len(procs) > 1 or max(procs) > 0
    exp = os.path.join(outdir, name)
    anchor = os.path.join(exp, "traces.otf2")
    if not os.path.isfile(anchor):
        return "FAIL", ["no trace %s (PROF_ENABLE_TRACING=true was set)" % anchor]

    # The independent checkers.
    check = os.path.join(tools, "otf2_check.py")
    rc, o, e = run_tool(["/usr/bin/python3", check, anchor] + (["--mpi"] if mpi else []))
    if rc != 0:
        fail.add("otf2_check.py%s: %s" % (" --mpi" if mpi else "", ((o + e).strip().splitlines() or ["(no output)"])[-1]))
    otf2_print = os.environ.get("OTF2_PRINT") or shutil.which("otf2-print")
    if otf2_print is None:
        fail.add("otf2-print is not installed (apt-get install otf2-tools)")
    else:
        rc, _, e = run_tool([otf2_print, anchor])
        if rc != 0 or e.strip():
            fail.add("otf2-print exited with status %d, stderr: %s" % (rc, (e.strip().splitlines() or [""])[0]))
    if profile:
        cube = os.path.join(exp, "profile.cubex")
        if not os.path.isfile(cube):
            fail.add("no profile %s" % cube)
        else:
            rc, o, e = run_tool(["/usr/bin/python3", os.path.join(tools, "cubex_check.py"), cube])
            if rc != 0:
                fail.add("cubex_check.py: %s" % ((o + e).strip().splitlines() or ["(no output)"])[-1])
            else:
                check_profile_gpu(cube, procs, fail)

    # The CUDA model.
    try:
        import otf2
    except ImportError as e:
        fail.add("the otf2 Python module cannot be imported (%s); run this with Debian's /usr/bin/python3 "
                 "(python3-otf2)" % e)
        return "FAIL", fail.finish()
    try:
        tr = Trace(otf2, anchor)
    except Exception as e:  # the reader's own failure; otf2_check.py says more
        fail.add("the otf2 Python module cannot read %s: %s: %s" % (anchor, type(e).__name__, e))
        return "FAIL", fail.finish()
    facts, claimed = [], set()
    for rank in sorted(procs):
        p = procs[rank]
        info = check_process(tr, p, mpi, fail)
        claimed.update(info.get("streams", []))
        kernels = sum(1 for it in p.items() if it.kind == "kernel")
        facts.append("%s%d host calls, %d kernels, %d stream locations, copies: %s%s"
                     % ("rank %d: " % rank if mpi else "", len(p.ops), kernels, len(info.get("streams", [])),
                        getattr(p, "copy_summary", "") or "none",
                        ", %d NVTX ranges on %d lanes" % (len(p.ranges), info.get("lanes", 0)) if p.ranges else ""))
    for loc in tr.locations:
        if loc.type == otf2.LocationType.ACCELERATOR_STREAM and loc not in claimed:
            creator = getattr(loc.group, "creating_location_group", None)
            fail.add("stream location %r (group %r) belongs to no process of the program: its group's creating "
                     "location group is %r" % (loc.name, loc.group.name, creator.name if creator else None),
                     kind="stream of no process")
    if fail:
        return "FAIL", fail.finish()
    return "PASS", ["; ".join(facts)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--prog", action="append", default=[], help="check only this program (repeatable)")
    ap.add_argument("--shared-tools", default=os.environ.get("PROF_SHARED_TOOLS", DEFAULT_TOOLS),
                    help="directory of otf2_check.py and cubex_check.py")
    ap.add_argument("--no-profile", action="store_true", help="do not check profile.cubex")
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.shared_tools, "otf2_check.py")):
        print("check_gpu: FAIL: %s has no otf2_check.py; pass --shared-tools DIR" % a.shared_tools)
        return 1
    progs = a.prog or sorted(f[:-len(".status")] for f in os.listdir(a.outdir) if f.endswith(".status"))
    if not progs:
        print("check_gpu: FAIL: no OUTDIR/<program>.status in %s: run.sh --run has not run there" % a.outdir)
        return 1
    results = collections.Counter()
    for name in progs:
        verdict, lines = check_program(name, a.outdir, a.shared_tools, profile=not a.no_profile)
        results[verdict] += 1
        if verdict == "FAIL":
            for line in lines:
                print("%s: FAIL: %s" % (name, line))
        else:
            print("%s: %s: %s" % (name, verdict, lines[0]))
    print("check_gpu: %d passed, %d failed, %d skipped" % (results["PASS"], results["FAIL"], results["SKIP"]))
    if results["FAIL"]:
        return 1
    return 0 if results["PASS"] else 77


if __name__ == "__main__":
    sys.exit(main())
