#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Metrics (PROF_METRIC_PAPI, PROF_METRIC_PAPI_PER_PROCESS, PROF_METRIC_PERF, PROF_METRIC_RUSAGE) end to end: one case
per run. Builds regions.c with prof-wrap (main: touch_pages(2000), nap(), burn(); then a thread:
touch_pages(700)), runs it and checks the trace and the profile with independent readers.

  run_metrics_test.py --case NAME --prof-wrap PATH --src-dir DIR --workdir DIR [--shared-tools DIR]

Every run that records: exit 0 and the program's output; no prof warning or error; otf2_check.py
and cubex_check.py (--expect-metric for every metric) accept the files; otf2-print exits 0 with an
empty stderr. With a trace (the otf2 Python module): on every location each Enter and Leave comes
right after a Metric event of the same time whose members are the location's metrics (the master
thread's include the per-process events), and counter values never decrease; the profile's value
of every metric on every call path below the root is exactly what the trace gives (the sum over
the visits of Leave - Enter, minus the same sums of the call path's children).

Cases:
  papi          PROF_METRIC_PAPI=perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES:k=1 and
                PROF_METRIC_RUSAGE=ru_minflt,ru_nvcsw, traced. Per region, exclusive, from the profile:
                touch_pages: PAGE-FAULTS and ru_minflt in [2000, 2100] (main), [700, 800] (the thread);
                nap: TASK-CLOCK < 1/4 of its wall time, ru_nvcsw >= 1, CONTEXT-SWITCHES >= 1;
                burn (with its children): TASK-CLOCK >= 0.19 s and <= its wall time + 2 ms.
                prof-score -r --metric perf::PAGE-FAULTS shows the column, touch_pages' row with the
                sum of its two call paths. (CONTEXT-SWITCHES needs :k=1: PAPI counts the user
                domain by default, and a context switch happens in the kernel.) prof-score -c 5
                estimates the trace at 1 to 1.5 times the size of its .evt files.
  rusage        PROF_METRIC_RUSAGE=all, profile only: the nine fields are Cube metrics (those that
                stay 0 in this run, such as ru_majflt, defined without data files);
                touch_pages' ru_minflt, nap's ru_nvcsw, burn's ru_utime+ru_stime >= 100 ms.
  per_process   PROF_METRIC_PAPI=perf::TASK-CLOCK, PROF_METRIC_PAPI_PER_PROCESS=perf::PAGE-FAULTS:
                the master thread's Metric events have both, the worker's only TASK-CLOCK; the
                profile has PAGE-FAULTS of main's touch_pages and none on the worker.
  churn         tests/e2e/progs/churn.c: 320 threads, 8 at a time, PAPI and rusage: leaf() on all 321
                locations of the trace, every Enter/Leave with its values, profile = trace.
  sampling      PROF_METRIC_PAPI=perf::TASK-CLOCK with PROF_SAMPLING_EVENTS=perf_cpu_clock@1000000: at
                least 95 % of the samples come right after a Metric event of their time.
  not_permitted perf::CONTEXT-SWITCHES:k=1 as user nobody under perf_event_paranoid >= 2 (needs root
                and setpriv, else skipped): one line naming sysctl kernel.perf_event_paranoid=1.
  unknown_event, unavailable_preset, twice, empty_item, per_process_twice, rusage_all_bogus: one error line each
                (the event, PAPI's reason, what to do), exit 1, no program output, no experiment.
                unavailable_preset (PAPI_TOT_CYC) passes too where the machine has the counter:
                then the run must record it.
  perf          PROF_METRIC_PERF=task-clock,page-faults,context-switches (prof's own perf_event_open
                counters, no PAPI) with PROF_METRIC_RUSAGE=ru_minflt,ru_nvcsw, traced: the bounds of
                the papi case; the OTF2 members' units (ns for task-clock, # for counts) and type
                OTHER; page-faults equal to ru_minflt within 100 per touch_pages call path.
  perf_hardware cycles,instructions,task-clock where `prof-info metrics` lists cycles and instructions
                as countable: burn's instructions >= 10 million and cycles >= 10 million, profile =
                trace. Elsewhere skipped, with prof-info's reason (e.g. no PMU in a VM).
  perf_churn, perf_sampling: churn and sampling with PROF_METRIC_PERF=task-clock,page-faults.
  perf_not_permitted: as user nobody under perf_event_paranoid >= 2 (root and setpriv, else
                skipped): task-clock,page-faults record (user space needs no privilege), and
                context-switches (kernel domain) stops with one line naming
                sysctl kernel.perf_event_paranoid=1.
  perf_not_countable, perf_unknown, perf_twice, perf_empty_item, perf_too_many: one error line
                each, exit 1, no program output, no experiment (perf_not_countable: cycles where
                the machine cannot count it; skipped where it can).
  prof_info     `prof-info metrics` (the ctest e2e_prof_info_metrics): the perf software events
                task-clock, page-faults and the rusage fields always; where PAPI is installed,
                perf::TASK-CLOCK if PAPI's perf_event component is enabled (papi_component_avail
                says), else a line naming perf_event as disabled with PAPI's reason; hardware perf
                events either listed or under "not here" with a reason.

Exit 0 pass, 1 fail (one line each), 77 skipped (no gcc, no libpapi where the case needs it, no
otf2_check.py for the cases that read the files).
"""
import argparse
import collections
import ctypes.util
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
PAGES, WORKER_PAGES = 2000, 700
failures = []


class Skip(Exception):
    pass


def fail(msg):
    failures.append(msg)


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, **kw)


class Ctx:
    def __init__(self, a):
        self.a = a
        self.work = os.path.join(a.workdir, "metrics_" + a.case)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.exe = os.path.join(self.work, "regions")
        if not shutil.which("gcc"):
            raise Skip("gcc not found")
        b = sh([a.prof_wrap, "gcc", "-O1", "-pthread", os.path.join(a.src_dir, "regions.c"), "-o", self.exe], cwd=self.work)
        if b.returncode != 0:
            raise RuntimeError("prof-wrap gcc regions.c failed: %s" % (b.stdout + b.stderr)[-600:])
        self.exp = os.path.join(self.work, "exp")
        self.cleanup = []  # directories to remove at the end

    def build_churn(self):
        """tests/e2e/progs/churn.c instead of regions.c."""
        src = os.path.join(self.a.src_dir, "..", "progs", "churn.c")
        b = sh([self.a.prof_wrap, "gcc", "-O2", "-pthread", src, "-o", self.exe], cwd=self.work)
        if b.returncode != 0:
            raise RuntimeError("prof-wrap gcc churn.c failed: %s" % (b.stdout + b.stderr)[-600:])

    def run(self, env_vars):
        shutil.rmtree(self.exp, ignore_errors=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
        env.update(PROF_EXPERIMENT_DIRECTORY=self.exp)
        env.update(env_vars)
        # Through a shell that forks it: a process's ru_maxrss starts at the peak of the process
        # image that exec'd it, and Python's (spawning with vfork) often exceeds what regions.c
        # adds, so ru_maxrss never grew in a region (about 2 runs in 5); sh's peak is small.
        try:
            return subprocess.run(["/bin/sh", "-c", '"$0"; exit $?', self.exe], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=120)
        except subprocess.TimeoutExpired:
            raise RuntimeError("the program did not end within 120 s")


PROF_INFO = None  # set in main(): prof-info beside prof-wrap


def need_papi():
    """PAPI with its perf software events: libpapi installed and perf::TASK-CLOCK countable as
    prof-info metrics (its own probe, not prof's recording) sees it."""
    if not ctypes.util.find_library("papi"):
        raise Skip("libpapi is not installed (apt-get install libpapi-dev)")
    r = sh([PROF_INFO, "metrics"])
    if not re.search(r"^  perf::TASK-CLOCK: ", r.stdout, re.M):
        why = re.search(r"^  perf_event: (.*)$", r.stdout, re.M)
        raise Skip("PAPI cannot count perf::TASK-CLOCK here (%s); PROF_METRIC_PERF's cases cover these events"
                   % ("its perf_event component is disabled: " + why.group(1) if why else "prof-info metrics does not list it"))


def check_recorded(ctx, r, metrics, tools, data=None):
    """The common checks of a run that records; `data`: the metrics that must have values (default
    all), the others must be defined. Returns the profile as {(metric, call path, location name): value}."""
    data = metrics if data is None else data
    if r.returncode != 0 or not re.search(r"^(regions done|churn threads=)", r.stdout, re.M):
        fail("the program exited with status %d; stderr: %s" % (r.returncode, r.stderr.strip()[-600:]))
        return {}
    problems = [l for l in r.stderr.splitlines() if l.startswith(("prof: warning", "prof: error"))]
    if problems:
        fail("prof reported: %s" % problems)
    profile = os.path.join(ctx.exp, "profile.cubex")
    cmd = ["/usr/bin/python3", os.path.join(tools, "cubex_check.py"), profile, "--dump"]
    for m in data:
        cmd += ["--expect-metric", m.replace("-", "_")]
    c = sh(cmd)
    if c.returncode != 0:
        fail("cubex_check.py: %s" % " | ".join(c.stdout.strip().splitlines()[-3:]))
    values = {}
    for line in c.stdout.splitlines():
        m = re.match(r"^(\S+) \((?:EXCLUSIVE|INCLUSIVE)\)\s+\d+\s+(\S+)\s+\d+ \([^/]*/ ([^)]*)\)\s+(\S+)$", line)
        if m:
            # Summed: with sampling, a sample taken in an instrumented function's prologue (before
            # its enter hook) hangs a sampled node of the same name beside the region's node, so
            # two call paths print alike; sampled nodes carry no metric values.
            key = (m.group(1), m.group(2), m.group(3))
            values[key] = values.get(key, 0) + float(m.group(4))
    for metric in metrics:
        uniq = metric.replace("-", "_")
        if metric in data and not any(k[0] == uniq for k in values):
            fail("the profile has no values of %s" % metric)
        if metric not in data and not re.search(r"^%s \((EXCLUSIVE|INCLUSIVE)\)" % re.escape(uniq), c.stdout, re.M):
            fail("the profile does not define the metric %s" % metric)
    return values


def check_trace(ctx, tools, members_of):
    """Trace checks; members_of(location name) -> expected member names. Returns the per call
    path exclusive sums {(metric, path, location): value} computed from the trace, and per call
    path the wall time (ns) {(path, location): ns}."""
    anchor = os.path.join(ctx.exp, "traces.otf2")
    c = sh(["/usr/bin/python3", os.path.join(tools, "otf2_check.py"), anchor])
    if c.returncode != 0:
        fail("otf2_check.py: %s" % " | ".join(c.stdout.strip().splitlines()[-3:]))
    p = sh(["otf2-print", anchor])
    if p.returncode != 0 or p.stderr.strip():
        fail("otf2-print: status %d, stderr %r" % (p.returncode, p.stderr.strip()[:300]))
    import otf2
    E = otf2.events
    incl = collections.defaultdict(int)  # (metric, path, location) -> inclusive sum
    wall = collections.defaultdict(int)
    problems = collections.Counter()
    metric_events = 0
    first, final = {}, {}  # location -> (names, values) of its first and last Metric event
    with otf2.reader.open(anchor) as t:
        resolution = t.definitions.clock_properties.timer_resolution
        root = None
        state = {}  # location -> [last metric (time, names, values) or None, stack of (region, time, values)]
        for loc, ev in t.events:
            st = state.setdefault(loc.name, [None, []])
            if isinstance(ev, E.Metric):
                metric_events += 1
                names = [m.name for m in ev.metric.members]
                if names != members_of(loc.name):
                    problems["a Metric event on %s has members %s, not %s" % (loc.name, names, members_of(loc.name))] += 1
                values = list(ev.values)
                if st[0] is not None and any(v < p for v, p in zip(values, st[0][2])):
                    problems["metric values decrease on %s" % loc.name] += 1
                st[0] = (ev.time, names, values)
                first.setdefault(loc.name, (names, values))
                final[loc.name] = (names, values)
            elif isinstance(ev, (E.Enter, E.Leave)):
                last = st[0]
                if last is None or last[0] != ev.time:
                    problems["an Enter/Leave on %s without a Metric event of its time just before it" % loc.name] += 1
                    continue
                st[0] = (None, last[1], last[2])
                if isinstance(ev, E.Enter):
                    st[1].append((ev.region.name, ev.time, last[2]))
                else:
                    region, t0, v0 = st[1].pop()
                    path = "/".join([ctx.prog] + [f[0] for f in st[1]] + [region])
                    for name, a, b in zip(last[1], v0, last[2]):
                        incl[(name, path, loc.name)] += b - a
                    wall[(path, loc.name)] += (ev.time - t0) * 10**9 // resolution
    for what, n in sorted(problems.items()):
        fail("%s (%d times)" % (what, n))
    if metric_events == 0:
        fail("the trace has no Metric events")
    excl = dict(incl)
    for (name, path, loc), v in incl.items():
        parent = path.rsplit("/", 1)[0]
        if (name, parent, loc) in excl:
            excl[(name, parent, loc)] -= v
    ctx.spans = {}  # (metric, location) -> last - first Metric values of the location
    for loc, (names, values) in final.items():
        for name, a, b in zip(names, first[loc][1], values):
            ctx.spans[(name, loc)] = b - a
    return excl, wall


def check_totals(ctx, prof, metric, slack):
    """A thread's total in the profile (the sum of its exclusive values: its root's inclusive
    value, counted from the thread's start to its end) is at least what its trace's Metric
    events span, and at most `slack` more."""
    if not any(name == metric for name, _ in ctx.spans):
        fail("no location of the trace has Metric events of %s" % metric)
    for (name, loc), span in sorted(ctx.spans.items()):
        if name != metric:
            continue
        total = sum(v for (m, path, l), v in prof.items() if m == metric.replace("-", "_") and l == loc)
        between("%s of %s in the profile, all call paths (the trace spans %d)" % (metric, loc, span), total, span, span + slack)


def compare(profile, from_trace):
    """Every call path below the root: the profile's exclusive value is the trace's."""
    bad = []
    for (name, path, loc), v in sorted(from_trace.items()):
        got = profile.get((name.replace("-", "_"), path, loc))
        if got is None or int(got) != v:
            bad.append("%s %s on %s: profile %s, trace %d" % (name, path, loc, got, v))
    if bad:
        fail("%d values differ between the profile and the trace, e.g. %s" % (len(bad), "; ".join(bad[:3])))
    return len(from_trace)


def between(what, v, lo, hi):
    if not (lo <= v <= hi):
        fail("%s is %s, expected %s..%s" % (what, v, lo, hi))


def inclusive(prof, metric, top, loc):
    """The value of call path `top` with its children's (the profile's values are exclusive)."""
    return sum(v for (m, path, l), v in prof.items() if m == metric and l == loc and (path + "/").startswith(top + "/"))


def check_regions(ctx, prof, wall, clock, faults, switches):
    """regions.c's regions in the profile, for a source's CPU clock (ns), page-fault and
    context-switch metrics (their profile names) and ru_minflt, ru_nvcsw: touch_pages' faults,
    nap's clock and switches, burn's clock. Returns burn's clock (with its children) and wall time."""
    M, W, p = "Master thread", "Pthread thread 1", ctx.prog
    for m in (faults, "ru_minflt"):
        between("%s of main/touch_pages" % m, prof.get((m, p + "/main/touch_pages", M), -1), PAGES, PAGES + 100)
        between("%s of worker/touch_pages" % m, prof.get((m, p + "/worker/touch_pages", W), -1), WORKER_PAGES, WORKER_PAGES + 100)
    nap_wall = wall.get((p + "/main/nap", M), 0)
    between("%s of nap (ns; wall %d ns)" % (clock, nap_wall), prof.get((clock, p + "/main/nap", M), -1), 0, nap_wall / 4)
    between("ru_nvcsw of nap", prof.get(("ru_nvcsw", p + "/main/nap", M), -1), 1, 10**6)
    between("%s of nap" % switches, prof.get((switches, p + "/main/nap", M), -1), 1, 10**6)
    burn_wall = wall.get((p + "/main/burn", M), 0)
    burn = inclusive(prof, clock, p + "/main/burn", M)
    between("%s of burn with its children (ns; wall %d ns)" % (clock, burn_wall), burn, 0.19e9, burn_wall + 2e6)
    return burn, burn_wall


def case_papi(ctx, tools):
    need_papi()
    papi = ["perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES:k=1"]
    metrics = papi + ["ru_minflt", "ru_nvcsw"]
    r = ctx.run({"PROF_ENABLE_TRACING": "true", "PROF_METRIC_PAPI": ",".join(papi),
                 "PROF_METRIC_RUSAGE": "ru_minflt,ru_nvcsw"})
    prof = check_recorded(ctx, r, metrics, tools)
    trace, wall = check_trace(ctx, tools, lambda loc: metrics)
    n = compare(prof, trace)
    check_totals(ctx, prof, "perf::PAGE-FAULTS", 200)
    check_totals(ctx, prof, "ru_minflt", 200)
    M, W = "Master thread", "Pthread thread 1"
    p = ctx.prog
    check_regions(ctx, prof, wall, "perf::TASK_CLOCK", "perf::PAGE_FAULTS", "perf::CONTEXT_SWITCHES:k=1")
    # prof-score shows a chosen metric per region.
    score = os.path.join(os.path.dirname(ctx.a.prof_wrap), "prof-score")
    s = sh([score, "-r", "--metric", "perf::PAGE-FAULTS", ctx.exp])
    row = [l for l in s.stdout.splitlines() if l.split() and l.split()[-1] == "touch_pages"]
    if s.returncode != 0 or "perf::PAGE-FAULTS" not in s.stdout or not row:
        fail("prof-score --metric perf::PAGE-FAULTS: status %d, output %r" % (s.returncode, (s.stdout + s.stderr)[-400:]))
    else:
        total = int(prof.get(("perf::PAGE_FAULTS", p + "/main/touch_pages", M), 0) +
                    prof.get(("perf::PAGE_FAULTS", p + "/worker/touch_pages", W), 0))
        if ("{:,}".format(total)) not in row[0].split():
            fail("prof-score --metric perf::PAGE-FAULTS: the touch_pages row %r lacks %d" % (row[0], total))
    # prof-score -c 5 (five values per event) estimates the trace of this very run: at least its
    # real size (the model errs high for small counts), at most 1.5 times it.
    import json
    j = sh([score, "--json", "-c", "5", ctx.exp])
    evt = sum(os.path.getsize(os.path.join(ctx.exp, "traces", f)) for f in os.listdir(os.path.join(ctx.exp, "traces"))
              if f.endswith(".evt"))
    est = json.loads(j.stdout)["estimate"]["trace_bytes"] if j.returncode == 0 else -1
    between("prof-score -c 5's trace estimate (bytes; the .evt files have %d)" % evt, est, evt, 1.5 * evt)
    return ("%d (metric, call path, location) values as the trace gives them; page faults, task clock, switches in bounds; "
            "prof-score -c 5 estimates %d bytes for %d" % (n, est, evt))


def case_rusage(ctx, tools):
    fields = ["ru_utime", "ru_stime", "ru_maxrss", "ru_minflt", "ru_majflt", "ru_inblock", "ru_oublock", "ru_nvcsw", "ru_nivcsw"]
    r = ctx.run({"PROF_METRIC_RUSAGE": "all"})
    prof = check_recorded(ctx, r, fields, tools, data=["ru_utime", "ru_maxrss", "ru_minflt", "ru_nvcsw"])
    if os.path.exists(os.path.join(ctx.exp, "traces.otf2")):
        fail("a trace was written without PROF_ENABLE_TRACING")
    M, p = "Master thread", ctx.prog
    between("ru_minflt of main/touch_pages", prof.get(("ru_minflt", p + "/main/touch_pages", M), -1), PAGES, PAGES + 100)
    between("ru_nvcsw of main/nap", prof.get(("ru_nvcsw", p + "/main/nap", M), -1), 1, 10**6)
    cpu = sum(v for (m, path, loc), v in prof.items()
              if m in ("ru_utime", "ru_stime") and loc == M and (path + "/").startswith(p + "/main/burn/"))
    between("ru_utime + ru_stime of burn (us)", cpu, 100000, 10**7)
    return "9 rusage metrics; minflt %d, nvcsw %d, burn's CPU %d us" % (
        prof.get(("ru_minflt", p + "/main/touch_pages", M)), prof.get(("ru_nvcsw", p + "/main/nap", M)), cpu)


def case_per_process(ctx, tools):
    need_papi()
    r = ctx.run({"PROF_ENABLE_TRACING": "true", "PROF_METRIC_PAPI": "perf::TASK-CLOCK",
                 "PROF_METRIC_PAPI_PER_PROCESS": "perf::PAGE-FAULTS"})
    prof = check_recorded(ctx, r, ["perf::TASK-CLOCK", "perf::PAGE-FAULTS"], tools)
    both, one = ["perf::TASK-CLOCK", "perf::PAGE-FAULTS"], ["perf::TASK-CLOCK"]
    trace, _ = check_trace(ctx, tools, lambda loc: both if loc == "Master thread" else one)
    n = compare(prof, trace)
    p = ctx.prog
    between("PAGE-FAULTS of main/touch_pages", prof.get(("perf::PAGE_FAULTS", p + "/main/touch_pages", "Master thread"), -1),
            PAGES, PAGES + 100)
    worker = [k for k, v in prof.items() if k[0] == "perf::PAGE_FAULTS" and k[2] != "Master thread" and v]
    if worker:
        fail("the per-process event has values on other threads: %s" % worker[:3])
    return "%d values as the trace gives them; the per-process event on the master thread only" % n


def case_sampling(ctx, tools):
    need_papi()
    return sampling(ctx, tools, "PROF_METRIC_PAPI", "perf::TASK-CLOCK")


def case_perf_sampling(ctx, tools):
    return sampling(ctx, tools, "PROF_METRIC_PERF", "task-clock")


def sampling(ctx, tools, var, clock):
    """Metrics with sampling: each CallingContextSample comes right after a Metric event of its time
    on its location (the values at the sample), and the Enter/Leave checks still hold."""
    if os.environ.get("PROFTESTS_SANITIZER") == "thread":  # as in tests/e2e/sampling/run_sampling_test.py
        raise Skip("ThreadSanitizer defers asynchronous signals and crashes in libunwind's thread-exit destructor: "
                   "sampling is not tested under PROF_SANITIZE=thread")
    r = ctx.run({"PROF_ENABLE_TRACING": "true", var: clock, "PROF_SAMPLING_EVENTS": "perf_cpu_clock@1000000"})
    prof = check_recorded(ctx, r, [clock], tools)
    trace, _ = check_trace(ctx, tools, lambda loc: [clock])
    n = compare(prof, trace)
    import otf2
    samples = with_values = 0
    last = {}
    with otf2.reader.open(os.path.join(ctx.exp, "traces.otf2")) as t:
        for loc, ev in t.events:
            if isinstance(ev, otf2.events.Metric):
                last[loc.name] = (ev.time, [m.name for m in ev.metric.members], list(ev.values))
            elif isinstance(ev, otf2.events.CallingContextSample):
                samples += 1
                m = last.get(loc.name)
                if m and m[0] == ev.time and m[1] == [clock] and m[2][0] > 0:
                    with_values += 1
    if samples < 100:
        fail("only %d samples in 0.2 s of CPU at 1 kHz and more" % samples)
    if with_values < 0.95 * samples:
        fail("%d of %d samples come right after a Metric event of their time" % (with_values, samples))
    return "%d samples, %d with their metric values; %d profile values as the trace gives them" % (samples, with_values, n)


def case_churn(ctx, tools):
    need_papi()
    return churn(ctx, tools, "PROF_METRIC_PAPI", ["perf::TASK-CLOCK", "perf::PAGE-FAULTS"])


def case_perf_churn(ctx, tools):
    return churn(ctx, tools, "PROF_METRIC_PERF", ["task-clock", "page-faults"])


def churn(ctx, tools, var, events):
    """320 threads, 8 at a time, each with its own event sets: every thread's calls are in the
    trace with their metric values, the profile matches the trace."""
    ctx.build_churn()
    metrics = events + ["ru_nvcsw"]
    # 64M: four OTF2 write buffers, no flush (16M has one, and each ending thread's write-out would
    # take another from outside the budget, which prof reports).
    r = ctx.run({"PROF_ENABLE_TRACING": "true", var: ",".join(events),
                 "PROF_METRIC_RUSAGE": "ru_nvcsw", "PROF_TOTAL_MEMORY": "64M"})
    prof = check_recorded(ctx, r, metrics, tools, data=events)
    trace, _ = check_trace(ctx, tools, lambda loc: metrics)
    n = compare(prof, trace)
    m = re.search(r"churn threads=(\d+) leaf_calls=(\d+)", r.stdout)
    leaf_paths = len({loc for (name, path, loc) in trace if path.endswith("/leaf")})
    if not m or leaf_paths != int(m.group(1)) + 1:
        fail("leaf ran on %d locations of the trace; the program ran %s threads and main" % (leaf_paths, m and m.group(1)))
    return "%d threads with their own event sets; %d profile values as the trace gives them" % (leaf_paths, n)


def bad(ctx, env, pattern):
    r = ctx.run(env)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    if r.returncode != 1:
        fail("exit status %d, expected 1" % r.returncode)
    if len(lines) != 1 or not re.search(pattern, lines[0]):
        fail("stderr %r; expected one line matching %r" % (lines, pattern))
    if "regions done" in r.stdout:
        fail("the program ran although the configuration is bad")
    if os.path.exists(ctx.exp):
        fail("an experiment directory was made: %s" % ctx.exp)
    return lines[0] if lines else ""


def case_unknown_event(ctx, tools):
    need_papi()
    return bad(ctx, {"PROF_METRIC_PAPI": "perf::TASK-CLOCK,NO_SUCH_EVENT"},
               r"^prof: error: PROF_METRIC_PAPI: 'NO_SUCH_EVENT' is not an event PAPI knows \(PAPI: [^)]+\); "
               r"papi_avail and papi_native_avail")


def case_unavailable_preset(ctx, tools):
    need_papi()
    r = ctx.run({"PROF_METRIC_PAPI": "PAPI_TOT_CYC", "PROF_ENABLE_TRACING": "true"})
    if r.returncode == 0:  # a machine with hardware counters
        check_recorded(ctx, r, ["PAPI_TOT_CYC"], tools)
        check_trace(ctx, tools, lambda loc: ["PAPI_TOT_CYC"])
        return "this machine counts PAPI_TOT_CYC: recorded"
    return bad(ctx, {"PROF_METRIC_PAPI": "PAPI_TOT_CYC"},
               r"^prof: error: PROF_METRIC_PAPI: 'PAPI_TOT_CYC' cannot be counted on this machine \(PAPI: [^)]+\); "
               r".*perf::TASK-CLOCK.*papi_avail")


def case_twice(ctx, tools):
    need_papi()
    return bad(ctx, {"PROF_METRIC_PAPI": "perf::TASK-CLOCK,perf::TASK-CLOCK"},
               r"^prof: error: PROF_METRIC_PAPI='perf::TASK-CLOCK,perf::TASK-CLOCK': 'perf::TASK-CLOCK' is given twice")


def case_empty_item(ctx, tools):
    need_papi()
    return bad(ctx, {"PROF_METRIC_PAPI": "perf::TASK-CLOCK,"},
               r"^prof: error: PROF_METRIC_PAPI='perf::TASK-CLOCK,': an empty event name")


def case_rusage_all_bogus(ctx, tools):
    return bad(ctx, {"PROF_METRIC_RUSAGE": "all,bogus"},
               r"^prof: error: PROF_METRIC_RUSAGE='all,bogus': 'bogus' is not a getrusage field; give all or some of ru_utime, ")


def case_per_process_twice(ctx, tools):
    need_papi()
    return bad(ctx, {"PROF_METRIC_PAPI": "perf::TASK-CLOCK", "PROF_METRIC_PAPI_PER_PROCESS": "perf::TASK-CLOCK"},
               r"^prof: error: PROF_METRIC_PAPI_PER_PROCESS: 'perf::TASK-CLOCK' is in PROF_METRIC_PAPI too")


def case_not_permitted(ctx, tools):
    """A kernel-domain event for an unprivileged user under perf_event_paranoid >= 2: the message
    says how to allow it. Needs root (to drop to nobody with setpriv)."""
    need_papi()
    r, exp = as_nobody(ctx, {"PROF_METRIC_PAPI": "perf::CONTEXT-SWITCHES:k=1"})
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    pattern = (r"^prof: error: PROF_METRIC_PAPI: 'perf::CONTEXT-SWITCHES:k=1' is not permitted here \(PAPI: [^)]+\); "
               r"as root: sysctl kernel.perf_event_paranoid=1, or give the program CAP_PERFMON$")
    if r.returncode != 1 or len(lines) != 1 or not re.search(pattern, lines[0]) or "regions done" in r.stdout:
        fail("as nobody: exit %d, stderr %r; expected exit 1 and one line matching %r" % (r.returncode, lines, pattern))
    if os.path.exists(exp):
        fail("an experiment directory was made: %s" % exp)
    return lines[0] if lines else ""


def check_members(ctx, expected):
    """The trace's MetricMember definitions: {name: (unit, type name)}."""
    import otf2
    got = {}
    with otf2.reader.open(os.path.join(ctx.exp, "traces.otf2")) as t:
        for m in t.definitions.metric_members:
            got[m.name] = (m.unit, str(m.metric_type).split(".")[-1])
    for name, want in expected.items():
        if got.get(name) != want:
            fail("the trace's MetricMember %s is %s, expected unit and type %s" % (name, got.get(name), want))


def case_perf(ctx, tools):
    perf = ["task-clock", "page-faults", "context-switches"]
    rusage = ["ru_utime", "ru_stime", "ru_minflt", "ru_nvcsw", "ru_nivcsw"]
    metrics = perf + rusage
    r = ctx.run({"PROF_ENABLE_TRACING": "true", "PROF_METRIC_PERF": ",".join(perf),
                 "PROF_METRIC_RUSAGE": ",".join(rusage)})
    prof = check_recorded(ctx, r, metrics, tools)
    trace, wall = check_trace(ctx, tools, lambda loc: metrics)
    n = compare(prof, trace)
    check_members(ctx, {"task-clock": ("ns", "OTHER"), "page-faults": ("#", "OTHER"), "context-switches": ("#", "OTHER")})
    check_totals(ctx, prof, "page-faults", 200)
    check_totals(ctx, prof, "task-clock", 10**9)
    M, W = "Master thread", "Pthread thread 1"
    p = ctx.prog
    burn, burn_wall = check_regions(ctx, prof, wall, "task_clock", "page_faults", "context_switches")
    for path, loc in ((p + "/main/touch_pages", M), (p + "/worker/touch_pages", W)):
        pf, ru = prof.get(("page_faults", path, loc), -1), prof.get(("ru_minflt", path, loc), -1)
        if abs(pf - ru) > 100:
            fail("page-faults %s and ru_minflt %s of %s differ by more than 100" % (pf, ru, path))
    # The kernel's own accounting of the same thread, read at the same events (perf first, then
    # getrusage): the thread's CPU time (ru_utime + ru_stime, us) and its switches (voluntary +
    # involuntary). Inclusive per region: a switch between the two reads moves one from a call
    # path to its parent, so only a subtree's two ends can differ.
    ru_cpu = inclusive(prof, "ru_utime", p + "/main/burn", M) + inclusive(prof, "ru_stime", p + "/main/burn", M)
    between("task-clock of burn against ru_utime + ru_stime (%d us)" % ru_cpu, burn, 0.8e3 * ru_cpu, 1.2e3 * ru_cpu + 5e6)
    for top, loc in ((p + "/main/nap", M), (p + "/main/burn", M), (p + "/main/touch_pages", M), (p + "/worker", W)):
        cs = inclusive(prof, "context_switches", top, loc)
        ru = inclusive(prof, "ru_nvcsw", top, loc) + inclusive(prof, "ru_nivcsw", top, loc)
        if abs(cs - ru) > 2:
            fail("context-switches %d and ru_nvcsw + ru_nivcsw %d of %s on %s (inclusive) differ by more than 2" % (cs, ru, top, loc))
    return ("%d (metric, call path, location) values as the trace gives them; page faults %d, nap's switches %d, "
            "burn's task-clock %.0f ms of %.0f ms wall" % (n, prof.get(("page_faults", p + "/main/touch_pages", M), -1),
                                                            prof.get(("context_switches", p + "/main/nap", M), -1),
                                                            burn / 1e6, burn_wall / 1e6))


def perf_listing():
    """`prof-info metrics`' perf section: (countable names, {name: reason} of those it refuses)."""
    r = sh([PROF_INFO, "metrics"])
    ok, refused, inside = set(), {}, False
    for line in r.stdout.splitlines():
        if line.startswith("perf events countable here"):
            inside = True
            continue
        if inside and not line.startswith("  "):
            break
        if not inside:
            continue
        m = re.match(r"^  not here: (.*?): (.*)$", line)
        if m:
            for name in m.group(1).split(", "):
                refused[name] = m.group(2)
        elif re.match(r"^  (\S+): ", line):
            ok.add(re.match(r"^  (\S+): ", line).group(1))
    return ok, refused


def case_perf_hardware(ctx, tools):
    ok, refused = perf_listing()
    for e in ("cycles", "instructions"):
        if e not in ok:
            raise Skip("this machine cannot count %s: %s" % (e, refused.get(e, "prof-info metrics does not list it")))
    events = ["cycles", "instructions", "task-clock"]
    r = ctx.run({"PROF_ENABLE_TRACING": "true", "PROF_METRIC_PERF": ",".join(events)})
    prof = check_recorded(ctx, r, events, tools)
    trace, _ = check_trace(ctx, tools, lambda loc: events)
    n = compare(prof, trace)
    M, p = "Master thread", ctx.prog
    for m in ("cycles", "instructions"):
        v = sum(v for (name, path, loc), v in prof.items()
                if name == m and loc == M and (path + "/").startswith(p + "/main/burn/"))
        between("%s of burn" % m, v, 10**7, 10**13)
    return "%d values as the trace gives them; cycles and instructions of burn in bounds" % n


def case_perf_not_countable(ctx, tools):
    ok, refused = perf_listing()
    if "cycles" in ok:
        raise Skip("this machine counts cycles (perf_hardware records them)")
    return bad(ctx, {"PROF_METRIC_PERF": "task-clock,cycles"},
               r"^prof: error: PROF_METRIC_PERF: 'cycles' cannot be counted on this machine \(perf_event_open: [^)]+\): "
               r"no hardware PMU is visible \(e.g. in a VM\) or it has no such event; software events such as task-clock "
               r"work everywhere \(prof-info metrics\)$")


def case_perf_unknown(ctx, tools):
    return bad(ctx, {"PROF_METRIC_PERF": "task-clock,page-fault"},
               r"^prof: error: PROF_METRIC_PERF: 'page-fault' is not a perf event prof knows; give perf's names such as "
               r"task-clock, page-faults, context-switches, cycles, instructions, or r<hex> for a raw PMU event, "
               r"optionally with :u, :k or :uk \(prof-info metrics lists what this machine counts\)$")


def case_perf_twice(ctx, tools):
    return bad(ctx, {"PROF_METRIC_PERF": "task-clock,page-faults,task-clock"},
               r"^prof: error: PROF_METRIC_PERF='task-clock,page-faults,task-clock': 'task-clock' is given twice; "
               r"name each event once$")


def case_perf_empty_item(ctx, tools):
    return bad(ctx, {"PROF_METRIC_PERF": "task-clock,,page-faults"},
               r"^prof: error: PROF_METRIC_PERF='task-clock,,page-faults': an empty event name; give a comma list such "
               r"as task-clock,page-faults$")


def case_perf_too_many(ctx, tools):
    perf = ",".join(["task-clock", "cpu-clock", "page-faults", "minor-faults", "major-faults", "context-switches",
                     "cpu-migrations"] + ["r%x" % i for i in range(1, 10)])
    return bad(ctx, {"PROF_METRIC_PERF": perf, "PROF_METRIC_RUSAGE": "all"},
               r"^prof: error: PROF_METRIC_\*: 25 metrics are configured, prof records at most 24 per event; choose fewer$")


def as_nobody(ctx, env_vars):
    """Runs the program as user nobody in a directory nobody may write; (result, experiment)."""
    try:
        paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
    except (OSError, ValueError):
        raise Skip("no /proc/sys/kernel/perf_event_paranoid")
    if os.geteuid() != 0 or paranoid < 2 or not shutil.which("setpriv"):
        raise Skip("needs root, setpriv and perf_event_paranoid >= 2 (it is %d)" % paranoid)
    import tempfile
    d = tempfile.mkdtemp(prefix="prof_metrics_nobody_")
    ctx.cleanup.append(d)
    os.chmod(d, 0o777)
    exe = os.path.join(d, "regions")
    shutil.copy(ctx.exe, exe)
    os.chmod(exe, 0o755)
    exp = os.path.join(d, "exp")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    env.update(PROF_EXPERIMENT_DIRECTORY=exp, **env_vars)
    return sh(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe], env=env, cwd=d), exp


def case_perf_not_permitted(ctx, tools):
    """User-space software events need no privilege at perf_event_paranoid 2; a kernel-domain event
    does, and the message says how to allow it."""
    r, exp = as_nobody(ctx, {"PROF_METRIC_PERF": "task-clock,page-faults"})
    if r.returncode != 0 or "regions done" not in r.stdout or r.stderr.strip():
        fail("as nobody, task-clock,page-faults: exit %d, stderr %r" % (r.returncode, r.stderr.strip()[-400:]))
    elif not os.path.exists(os.path.join(exp, "profile.cubex")):
        fail("as nobody, task-clock,page-faults: no profile in %s" % exp)
    r, exp = as_nobody(ctx, {"PROF_METRIC_PERF": "task-clock,context-switches"})
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    pattern = (r"^prof: error: PROF_METRIC_PERF: 'context-switches' is not permitted here \(perf_event_open: [^)]+\), "
               r"perf_event_paranoid is [2-9]; as root: sysctl kernel.perf_event_paranoid=1, or give the program CAP_PERFMON "
               r"\(PROF_METRIC_RUSAGE=ru_nvcsw,ru_nivcsw needs no permission\)$")
    if r.returncode != 1 or len(lines) != 1 or not re.search(pattern, lines[0]) or "regions done" in r.stdout:
        fail("as nobody: exit %d, stderr %r; expected exit 1 and one line matching %r" % (r.returncode, lines, pattern))
    if os.path.exists(exp):
        fail("an experiment directory was made: %s" % exp)
    return "task-clock,page-faults recorded as nobody; " + (lines[0] if lines else "")


def case_prof_info(a):
    """prof-info metrics says what this machine counts: perf software events and rusage always,
    PAPI's perf events or why its perf_event component is disabled."""
    r = sh([PROF_INFO, "metrics"])
    if r.returncode != 0 or r.stderr.strip():
        fail("prof-info metrics: exit %d, stderr %r" % (r.returncode, r.stderr.strip()[-300:]))
    out = r.stdout
    for pattern in (r"^perf events countable here \(PROF_METRIC_PERF=", r"^  task-clock: CPU time of the thread \(ns\)$",
                    r"^  page-faults: page faults \(#\)$", r"^  ru_minflt: page faults"):
        if not re.search(pattern, out, re.M):
            fail("prof-info metrics has no line matching %r" % pattern)
    ok, refused = perf_listing()
    for e in ("cycles", "instructions"):
        if (e in ok) == (e in refused):
            fail("prof-info metrics lists %s %s" % (e, "twice" if e in ok else "neither as countable nor as refused"))
    said = "perf software events: %s" % ", ".join(sorted(x for x in ok if x in ("task-clock", "page-faults", "context-switches")))
    said += "; hardware: %s" % ("countable" if "cycles" in ok else "not here (%s)" % refused.get("cycles", "")[:60])
    if not ctypes.util.find_library("papi"):
        return said + "; no libpapi"
    listed = bool(re.search(r"^  perf::TASK-CLOCK: ", out, re.M))
    if not shutil.which("papi_component_avail") or not shutil.which("papi_native_avail"):
        return said + "; PAPI part not checked: no papi_component_avail or papi_native_avail (Debian: papi-tools)"
    c = sh(["papi_component_avail"])
    comp = re.search(r"^Name:\s+perf_event\s.*\n(\s+\\-> Disabled: (.*))?", c.stdout, re.M)
    if not comp:
        return said + "; PAPI part not checked: papi_component_avail lists no perf_event component"
    if comp.group(1) is None:
        # Enabled: PAPI's own list decides whether perf::TASK-CLOCK exists (a forced PMU, e.g.
        # LIBPFM_FORCE_PMU, enables the component without libpfm4's generic perf events).
        exists = bool(re.search(r"^\| perf::TASK-CLOCK\s", sh(["papi_native_avail"]).stdout, re.M))
        if listed != exists:
            fail("papi_native_avail %s perf::TASK-CLOCK but prof-info metrics %s" %
                 (("lists", "does not") if exists else ("does not list", "does")))
        if re.search(r"^  perf_event: ", out, re.M):
            fail("prof-info metrics names PAPI's perf_event component disabled; papi_component_avail says it is enabled")
        return said + "; PAPI perf_event enabled, perf::TASK-CLOCK %s" % ("listed" if listed else "absent in both")
    m = re.search(r"^PAPI components disabled here.*\n((?:  .*\n)*)", out, re.M)
    line = m and re.search(r"^  perf_event: (.+)$", m.group(1), re.M)
    if not line:
        fail("PAPI's perf_event component is disabled but prof-info metrics does not say so: %r" % out[-600:])
        return said
    if listed:
        fail("prof-info metrics lists perf::TASK-CLOCK although PAPI's perf_event component is disabled")
    if line.group(1) != comp.group(2).strip():
        fail("prof-info metrics gives perf_event's reason as %r, papi_component_avail as %r" % (line.group(1), comp.group(2)))
    return said + "; PAPI perf_event disabled: " + line.group(1)


# Cases that only run the program or prof-info and read no files: no otf2_check.py needed.
NO_TOOLS = {"unknown_event", "unavailable_preset", "twice", "empty_item", "per_process_twice", "rusage_all_bogus",
            "not_permitted", "perf_not_countable", "perf_unknown", "perf_twice", "perf_empty_item", "perf_too_many"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    ap.add_argument("--prof-wrap", required=True)
    ap.add_argument("--src-dir", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--shared-tools", default="")
    a = ap.parse_args()
    name = "e2e_prof_info_metrics" if a.case == "prof_info" else "e2e_metrics_" + a.case
    global PROF_INFO
    PROF_INFO = os.path.join(os.path.dirname(os.path.abspath(a.prof_wrap)), "prof-info")
    fn = globals().get("case_" + a.case)
    if fn is None:
        print("%s: FAIL: no such case" % name)
        return 1
    ctx = None
    try:
        if a.case == "prof_info":
            summary = case_prof_info(a)
        else:
            if a.case not in NO_TOOLS and (not a.shared_tools or
                                           not os.path.exists(os.path.join(a.shared_tools, "otf2_check.py"))):
                raise Skip("no otf2_check.py/cubex_check.py (PROF_SHARED_TOOLS)")
            ctx = Ctx(a)
            ctx.prog = "regions"
            summary = fn(ctx, a.shared_tools)
    except Skip as e:
        print("%s: SKIP: %s" % (name, e))
        return SKIP
    except RuntimeError as e:
        fail(str(e))
    finally:
        for d in ctx.cleanup if ctx else []:
            shutil.rmtree(d, ignore_errors=True)
    if failures:
        for f in failures:
            print("%s: FAIL: %s" % (name, f))
        return 1
    print("%s: PASS: %s" % (name, summary))
    shutil.rmtree(os.path.join(a.workdir, "metrics_" + a.case), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
