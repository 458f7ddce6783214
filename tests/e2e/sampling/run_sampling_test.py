#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Sampling (PROF_SAMPLING_EVENTS) end to end: one case per run. Builds the case's program with
prof-wrap, runs it with PROF_ENABLE_TRACING=true and PROF_VERBOSE=1, and checks the trace.

  run_sampling_test.py --case NAME --prof-wrap PATH --src-dir DIR --workdir DIR [--shared-tools DIR]

Every trace: exit 0 and the program's output; otf2_check.py ok (where ../shared/tools is); otf2-print exits 0 with an empty
stderr; the calling contexts form a tree (defined regions, every parent defined, no cycles, no
two nodes with the same parent and region); every CallingContextSample names a defined context
and a defined interrupt generator; read from the root, a chain is the instrumented call path
followed by sampled (paradigm SAMPLING) regions only; no chain holds the frames prof says it cuts
(_start, __libc_start_*, start_thread, clone, libprof); the samples in the trace are the ones
'prof: sampling: N samples, ...' counted; prof warns about nothing else than the case expects.

Cases (what each adds):
  nocompiler       hot.c built with --nocompiler, perf_cpu_clock@1000000: >= 75 % of the samples
                   have the chain main > a > hot (all sampled), no Enter at all, samples >= 0.5 x
                   the program's CPU time (getrusage of the child) / period
  shlib            instrumented main calling burn() of a plain gcc shared library: >= 75 % of the
                   samples are main (COMPILER) > burn (SAMPLING), the same lower bound
  threads          3 std::threads running only uninstrumented code (workers.cpp, plain g++), each
                   burning 0.3 s of its CPU time: 4 locations, each worker >= 150 samples (0.5 x),
                   leaf spin() in >= 75 % of them, no Enter on a worker
  fallback_cycles  perf_cycles@2000000, nothing forced: either the hardware -> software line and
                   generator perf_cpu_clock (no counters, as in a VM), or no line and perf_cycles
  fallback_hardware, fallback_hardware_software, fallback_task_clock: PROF_SAMPLING_DEBUG_REFUSE
                   forces the refusals; the exact lines, the generator (perf_cpu_clock or timer)
                   and its period in ns
  task_clock       perf_task_clock@1000000: no line, generator perf_task_clock
  two_events       perf_cpu_clock@1000000,timer@4000: both generators sample the same thread
  bad_*            a bad item: exit != 0, exactly one line naming the value, the item and the
                   accepted forms, the program's output absent, no experiment directory
  stress           stress.cpp, 9 threads for 3 s at perf_cpu_clock@100000 (10 kHz): no deadlock
                   (subprocess timeout) or crash, samples on all 9 locations, >= 0.5 x CPU / period
  stress_flush     the same with PROF_TOTAL_MEMORY=8M: buffers flushed while sampled; dropped
                   samples counted and announced, the rest consistent

Exit 0 pass, 1 fail (one line each), 77 skipped (no compiler, no cubex_check.py for a profile case, no software
clock or libunwind where the case needs them).
"""
import argparse
import collections
import os
import re
import resource
import shutil
import subprocess
import sys

SKIP = 77
failures = []
ACCEPTED = "give perf_cycles[@<cycles>], perf_cpu_clock[@<ns>], perf_task_clock[@<ns>] or timer[@<us>]"
CUT_NAMES = {"_start", "__libc_start_main", "__libc_start_call_main", "start_thread", "clone", "clone3"}
# Samples per CPU time / period, at least. In a PROF_SANITIZE build (PROFTESTS_SANITIZER, set by
# tests/sanitizers/ctest_env.cmake.in) prof's own start and write-out run several times slower:
# they count in the child's CPU time but are not sampled (0.2-0.5 of the rate seen under ASan).
RATE_FLOOR = 0.1 if os.environ.get("PROFTESTS_SANITIZER") else 0.5
# A PROF_SANITIZE=thread build: ThreadSanitizer runs a signal handler late, at its next
# interception point, so samples land at the wrong place; and libunwind's per-thread cache
# destructor crashes inside TSan when a sampled thread ends (docs/TESTING.md).
TSAN_SKIP = ("ThreadSanitizer defers asynchronous signals (samples land elsewhere) and crashes in libunwind's "
             "thread-exit destructor: sampling is not tested under PROF_SANITIZE=thread")


class Skip(Exception):
    pass


def fail(msg):
    failures.append(msg)


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, **kw)


class Ctx:
    def __init__(self, a):
        self.a = a
        self.work = os.path.join(a.workdir, "sampling_" + a.case)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)

    def src(self, name):
        return os.path.join(os.path.abspath(self.a.src_dir), name)

    def build(self, cmd):
        for tool in ("gcc", "g++"):
            if cmd[0] == tool and not shutil.which(tool):
                raise Skip("%s not found" % tool)
        b = sh(cmd, cwd=self.work)
        if b.returncode != 0:
            print(b.stdout)
            raise RuntimeError("the build failed: %s" % " ".join(cmd))

    def wrap(self, *args):
        compiler = [x for x in args if not x.startswith("--")][0]
        if not shutil.which(compiler):
            raise Skip("%s not found" % compiler)
        self.build([self.a.prof_wrap] + list(args))

    def run(self, exe, env_vars, args=(), timeout=120, trace=True):
        """Runs exe with env_vars (and no inherited PROF_*); returns a Run."""
        exp = os.path.join(self.work, "exp")
        shutil.rmtree(exp, ignore_errors=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
        env.update(PROF_EXPERIMENT_DIRECTORY=exp)
        if trace:
            env.update(PROF_ENABLE_TRACING="true", PROF_VERBOSE="1")
        env.update(env_vars)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            r = subprocess.run([exe] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError("the program did not end within %d s (a deadlock?)" % timeout)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return Run(r, exp, cpu)


class Run:
    def __init__(self, r, exp, cpu):
        self.rc, self.stdout, self.stderr, self.exp, self.cpu = r.returncode, r.stdout, r.stderr, exp, cpu
        self.counted = (0, 0, 0)  # samples, inside prof, dropped: from 'prof: sampling: ...'
        self.anchor = os.path.join(exp, "traces.otf2")

    def problems(self):
        return [l for l in self.stderr.splitlines() if l.startswith(("prof: warning:", "prof: error:"))]


def skip_without_prerequisites(run, forced=False, unwinding=True):
    """77 where this machine cannot do what the case checks: no software clock (when none was
    refused on purpose), or no libunwind for cases that look at call chains."""
    for line in run.problems():
        if not forced and "the software clock" in line:
            raise Skip("the software clocks are refused here: %s" % line)
        if unwinding and "libunwind" in line and "not installed" in line:
            raise Skip("no libunwind: %s" % line)


def read_trace(run, shared_tools):
    """Common checks of every trace; returns (samples, enters) where samples is a list of
    (location name, generator, chain of (region name, paradigm name)) and enters counts Enter
    events per location name."""
    if run.rc != 0:
        fail("the program exited with status %d; stderr: %s" % (run.rc, run.stderr.strip()[-600:]))
        return [], {}
    if not os.path.exists(run.anchor):
        fail("no trace at %s" % run.anchor)
        return [], {}
    if shared_tools and os.path.exists(os.path.join(shared_tools, "otf2_check.py")):  # where ../shared is
        c = sh(["/usr/bin/python3", os.path.join(shared_tools, "otf2_check.py"), run.anchor])
        if c.returncode != 0:
            fail("otf2_check.py: %s" % " | ".join(c.stdout.strip().splitlines()[-4:]))
    p = subprocess.run(["otf2-print", run.anchor], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0 or p.stderr.strip():
        fail("otf2-print: status %d, stderr %r" % (p.returncode, p.stderr.strip()[:300]))
    import otf2
    samples, enters = [], collections.Counter()
    with otf2.reader.open(run.anchor) as t:
        d = t.definitions
        regions = {r._ref: r for r in d.regions}
        contexts = {cc._ref: cc for cc in d.calling_contexts}
        generators = {g._ref: g for g in d.interrupt_generators}
        chains = {}  # context ref -> chain, root first
        seen_pairs = {}
        for ref, cc in contexts.items():
            if cc.region is None or cc.region._ref not in regions:
                fail("calling context %d has no defined region" % ref)
                continue
            parent = cc.parent
            if parent is not None and parent._ref not in contexts:
                fail("calling context %d: parent %d is not defined" % (ref, parent._ref))
                continue
            key = (None if parent is None else parent._ref, cc.region._ref)
            if key in seen_pairs:
                fail("calling contexts %d and %d have the same parent and region %r" %
                     (seen_pairs[key], ref, cc.region.name))
            seen_pairs[key] = ref
            chain, node, steps = [], cc, 0
            while node is not None and steps <= len(contexts):
                chain.append((node.region.name, enum_name(node.region.paradigm)))
                node = node.parent
                steps += 1
            if node is not None:
                fail("calling context %d: its parent chain has a cycle" % ref)
                continue
            chain.reverse()
            chains[ref] = tuple(chain)
            names = [n for n, _ in chain]
            sampled = [p == "SAMPLING" for _, p in chain]
            if any(sampled[i] and not sampled[i + 1] for i in range(len(chain) - 1)):
                fail("calling context %d: an instrumented region below a sampled one: %s" % (ref, " > ".join(names)))
            cut = [n for n in names if n in CUT_NAMES or n.startswith("[libprof") or n.startswith("__cyg_profile")]
            if cut:
                fail("calling context %d holds frames that are cut: %s (chain %s)" % (ref, cut, " > ".join(names)))
        for loc, ev in t.events:
            if isinstance(ev, otf2.events.Enter):
                enters[loc.name] += 1
            if not isinstance(ev, otf2.events.CallingContextSample):
                continue
            cc, g = ev.calling_context, ev.interrupt_generator
            if cc is None or cc._ref not in chains:
                fail("a sample on %s names an undefined (or broken) calling context %s" %
                     (loc.name, None if cc is None else cc._ref))
                continue
            if g is None or g._ref not in generators:
                fail("a sample on %s names an undefined interrupt generator" % loc.name)
                continue
            samples.append((loc.name, g, chains[cc._ref]))
    m = re.search(r"^prof: sampling: (\d+) samples, (\d+) inside prof itself, (\d+) dropped", run.stderr, re.M)
    if not m:
        fail("no line 'prof: sampling: N samples, K inside prof itself, D dropped' with PROF_VERBOSE=1")
    elif int(m.group(1)) != len(samples):
        fail("prof counted %s samples, the trace holds %d" % (m.group(1), len(samples)))
    else:
        run.counted = tuple(int(x) for x in m.groups())
    return samples, enters


def expect_problems(run, patterns):
    """prof's warnings and errors are exactly the given patterns, in this order."""
    got = run.problems()
    if len(got) != len(patterns) or not all(re.search(p, l) for p, l in zip(patterns, got)):
        fail("prof's warnings: %s; expected lines matching %s" % (got, patterns))


def enum_name(value):
    """Paradigm.SAMPLING -> 'SAMPLING' (the otf2 module's enums have no .name)."""
    return str(value).rsplit(".", 1)[-1]


def chain_names(chain):
    return tuple(n for n, _ in chain)


def share(samples, pred):
    return sum(1 for s in samples if pred(s)) / float(len(samples)) if samples else 0.0


def check_rate(samples, run, period_ns, what="samples"):
    expected = run.cpu / (period_ns * 1e-9)
    if len(samples) < RATE_FLOOR * expected:
        fail("%d %s, expected at least %g x CPU time %.3f s / period %d ns = %.0f" %
             (len(samples), what, RATE_FLOOR, run.cpu, period_ns, expected))
    if len(samples) > 2 * expected + 10:
        fail("%d %s, more than twice CPU time %.3f s / period %d ns = %.0f" % (len(samples), what, run.cpu, period_ns, expected))
    return expected


def check_hot_chain(samples, require):
    """hot.c (--nocompiler): the chain main > a > hot, every region sampled."""
    want = (("main", "SAMPLING"), ("a", "SAMPLING"), ("hot", "SAMPLING"))
    f = share(samples, lambda s: s[2] == want)
    if f < require:
        common = collections.Counter(" > ".join(chain_names(s[2])) for s in samples).most_common(3)
        fail("%.0f %% of the samples have the chain main > a > hot (all sampled), expected >= %.0f %%; most common: %s" %
             (100 * f, 100 * require, common))
    return f


def build_hot(ctx):
    exe = os.path.join(ctx.work, "hot")
    ctx.wrap("--nocompiler", "gcc", "-O1", "-fno-inline", ctx.src("hot.c"), "-o", exe)
    return exe


# ---- the cases ----

def case_nocompiler(ctx, tools):
    exe = build_hot(ctx)
    run = ctx.run(exe, {"PROF_SAMPLING_EVENTS": "perf_cpu_clock@1000000"})
    skip_without_prerequisites(run)
    samples, enters = read_trace(run, tools)
    expect_problems(run, [])
    if sum(enters.values()):
        fail("%d Enter events in a program built with --nocompiler" % sum(enters.values()))
    gens = {(s[1].name, s[1].period) for s in samples}
    if gens != {("perf_cpu_clock", 1000000)}:
        fail("interrupt generators %s, expected perf_cpu_clock with period 1000000" % gens)
    f = check_hot_chain(samples, 0.75)
    expected = check_rate(samples, run, 1000000)
    return "%d samples (CPU time %.3f s / 1 ms = %.0f), %.0f %% main > a > hot" % (len(samples), run.cpu, expected, 100 * f)


def case_shlib(ctx, tools):
    lib = os.path.join(ctx.work, "libsampling_burn.so")
    ctx.build(["gcc", "-O1", "-shared", "-fPIC", ctx.src("burn_lib.c"), "-o", lib])
    exe = os.path.join(ctx.work, "burn_main")
    ctx.wrap("gcc", "-O1", ctx.src("burn_main.c"), "-o", exe, "-L" + ctx.work, "-lsampling_burn",
             "-Wl,-rpath," + ctx.work)
    run = ctx.run(exe, {"PROF_SAMPLING_EVENTS": "perf_cpu_clock@1000000"})
    skip_without_prerequisites(run)
    samples, enters = read_trace(run, tools)
    expect_problems(run, [])
    if enters.get("Master thread", 0) < 1:
        fail("main was not entered (is it instrumented?)")
    want = (("main", "COMPILER"), ("burn", "SAMPLING"))
    f = share(samples, lambda s: s[2] == want)
    if f < 0.75:
        common = collections.Counter(" > ".join("%s/%s" % c for c in s[2]) for s in samples).most_common(3)
        fail("%.0f %% of the samples are main (instrumented) > burn (sampled), expected >= 75 %%; most common: %s" %
             (100 * f, common))
    expected = check_rate(samples, run, 1000000)
    return "%d samples (expected %.0f), %.0f %% main > burn" % (len(samples), expected, 100 * f)


def case_threads(ctx, tools):
    obj = os.path.join(ctx.work, "workers.o")
    ctx.build(["g++", "-O1", "-c", ctx.src("workers.cpp"), "-o", obj])
    exe = os.path.join(ctx.work, "workers")
    ctx.wrap("g++", "-O1", "-pthread", ctx.src("workers_main.cpp"), obj, "-o", exe)
    run = ctx.run(exe, {"PROF_SAMPLING_EVENTS": "perf_cpu_clock@1000000"})
    skip_without_prerequisites(run)
    samples, enters = read_trace(run, tools)
    if failures:
        return ""
    expect_problems(run, [])
    by_loc = collections.defaultdict(list)
    for s in samples:
        by_loc[s[0]].append(s)
    import otf2
    with otf2.reader.open(run.anchor) as t:
        locations = [l.name for l in t.definitions.locations]
    workers = [l for l in locations if l != "Master thread"]
    if len(locations) != 4:
        fail("locations %s, expected the master thread and 3 workers" % locations)
    counts = []
    for w in workers:
        got = by_loc.get(w, [])
        counts.append(len(got))
        if len(got) < 150:
            fail("%s: %d samples, expected >= 150 (0.3 s of its CPU time at 1 ms, halved)" % (w, len(got)))
        f = share(got, lambda s: s[2] and re.match(r"spin\b", s[2][-1][0]) and s[2][-1][1] == "SAMPLING")
        if got and f < 0.75:
            fail("%s: the leaf is spin() in %.0f %% of the samples, expected >= 75 %%; most common: %s" %
                 (w, 100 * f, collections.Counter(" > ".join(chain_names(s[2])) for s in got).most_common(2)))
        if enters.get(w):
            fail("%s: %d Enter events, but the workers run only uninstrumented code" % (w, enters[w]))
    roots = collections.Counter(s[2][0][0] for s in samples if s[0] != "Master thread" and s[2])
    return "samples per worker %s (>= 150 each); worker chains start at %s" % (counts, dict(roots))


def fallback(ctx, tools, events, refuse, lines, generator, period_ns):
    """hot.c with events (and refuse forced): prof's lines match `lines`, every sample is by
    `generator` with `period_ns`. lines=None: decided from what prof said (fallback_cycles)."""
    exe = build_hot(ctx)
    env = {"PROF_SAMPLING_EVENTS": events}
    if refuse:
        env["PROF_SAMPLING_DEBUG_REFUSE"] = refuse
    run = ctx.run(exe, env)
    skip_without_prerequisites(run, forced="software" in refuse)
    if lines is None:
        if any("hardware cycles" in l for l in run.problems()):  # no counters here (a VM)
            lines, generator = [HW_LINE % r".+"], "perf_cpu_clock"
        else:
            lines, generator = [], "perf_cycles"
    samples, _ = read_trace(run, tools)
    expect_problems(run, lines)
    if not samples:
        fail("no samples")
    gens = {(s[1].name, s[1].period, enum_name(s[1].interrupt_generator_mode)) for s in samples}
    mode = "COUNT" if generator == "perf_cycles" else "TIME"
    if gens != {(generator, period_ns, mode)}:
        fail("interrupt generators %s, expected %s" % (gens, {(generator, period_ns, mode)}))
    check_hot_chain(samples, 0.75)
    if generator not in ("timer", "perf_cycles"):
        check_rate(samples, run, period_ns)
    return "%d samples by %s@%d; prof said %s" % (len(samples), generator, period_ns, run.problems())


HW_LINE = r"^prof: warning: sampling: perf_cycles@2000000: hardware cycles %s; using perf_cpu_clock@2000000 \(ns\) instead$"
SW_LINE = (r"^prof: warning: sampling: %s: the software clock %s refused \(PROF_SAMPLING_DEBUG_REFUSE\); "
           r"using timer@2000 \(us\) instead$")


def case_fallback_cycles(ctx, tools):
    return fallback(ctx, tools, "perf_cycles@2000000", "", None, None, 2000000)


def case_fallback_hardware(ctx, tools):
    return fallback(ctx, tools, "perf_cycles@2000000", "hardware",
                    [HW_LINE % r"refused \(PROF_SAMPLING_DEBUG_REFUSE\)"], "perf_cpu_clock", 2000000)


def case_fallback_hardware_software(ctx, tools):
    return fallback(ctx, tools, "perf_cycles@2000000", "hardware,software",
                    [HW_LINE % r"refused \(PROF_SAMPLING_DEBUG_REFUSE\)", SW_LINE % ("perf_cycles@2000000", "perf_cpu_clock")],
                    "timer", 2000000)


def case_fallback_task_clock(ctx, tools):
    return fallback(ctx, tools, "perf_task_clock@2000000", "software",
                    [SW_LINE % ("perf_task_clock@2000000", "perf_task_clock")], "timer", 2000000)


def case_task_clock(ctx, tools):
    return fallback(ctx, tools, "perf_task_clock@1000000", "", [], "perf_task_clock", 1000000)


def case_two_events(ctx, tools):
    exe = build_hot(ctx)
    run = ctx.run(exe, {"PROF_SAMPLING_EVENTS": "perf_cpu_clock@1000000,timer@4000"})
    skip_without_prerequisites(run)
    samples, _ = read_trace(run, tools)
    expect_problems(run, [])
    by_gen = collections.Counter((s[1].name, s[1].period) for s in samples)
    if set(by_gen) != {("perf_cpu_clock", 1000000), ("timer", 4000000)}:
        fail("samples by generator %s, expected perf_cpu_clock@1000000 ns and timer@4000000 ns" % dict(by_gen))
    check_hot_chain(samples, 0.75)
    check_rate([s for s in samples if s[1].name == "perf_cpu_clock"], run, 1000000, "perf_cpu_clock samples")
    return "samples by generator %s" % dict(by_gen)


def bad(ctx, value, item):
    exe = build_hot(ctx)
    run = ctx.run(exe, {"PROF_SAMPLING_EVENTS": value, "PROF_ENABLE_TRACING": "true"}, trace=False, timeout=60)
    if run.rc == 0:
        fail("exit status 0 for PROF_SAMPLING_EVENTS=%r" % value)
    if "sampling_hot: done" in run.stdout:
        fail("the program ran: %r" % run.stdout.strip())
    want = r"^prof: error: PROF_SAMPLING_EVENTS='%s': '%s' is not an event\[@period\] item; %s" % (
        re.escape(value), re.escape(item), re.escape(ACCEPTED))
    lines = run.stderr.splitlines()
    if len(lines) != 1 or not re.match(want, lines[0]):
        fail("stderr %r, expected one line matching %r" % (lines, want))
    if os.path.exists(run.exp):
        fail("an experiment directory was left behind: %s" % run.exp)
    return "exit %d, %s" % (run.rc, lines[0] if lines else "")


def case_bad_period_zero(ctx, tools):
    return bad(ctx, "perf_cycles@0", "perf_cycles@0")


def case_bad_event(ctx, tools):
    return bad(ctx, "bogus@100", "bogus@100")


def case_default_period(ctx, tools):
    """An event without a period samples at about 1 kHz: perf_cpu_clock -> 1000000 ns."""
    return fallback(ctx, tools, "perf_cpu_clock", "", [], "perf_cpu_clock", 1000000)


def case_bad_second_item(ctx, tools):
    return bad(ctx, "perf_cpu_clock@1000000,timer@", "timer@")


def stress(ctx, tools, memory):
    exe = os.path.join(ctx.work, "stress")
    ctx.wrap("g++", "-O1", "-pthread", ctx.src("stress.cpp"), "-o", exe)
    env = {"PROF_SAMPLING_EVENTS": "perf_cpu_clock@100000"}
    if memory:
        env["PROF_TOTAL_MEMORY"] = memory
    run = ctx.run(exe, env, args=["3"], timeout=60)
    skip_without_prerequisites(run, unwinding=False)
    if run.rc == 0 and "sampling_stress: done" not in run.stdout:
        fail("the program's last line is missing: %r" % run.stdout[-200:])
    samples, enters = read_trace(run, tools)
    if failures:
        return ""
    allowed = [r"^prof: warning: sampling: \d+ samples were dropped", r"^prof: warning: trace buffers were flushed",
               r"^prof: warning: \d+ times an OTF2 write buffer"] if memory else []
    for line in run.problems():
        if not any(re.search(p, line) for p in allowed):
            fail("prof warned: %s" % line)
    dropped = run.counted[2]
    if dropped and not any("samples were dropped" in l for l in run.problems()):
        fail("%d samples dropped, but no warning says so" % dropped)
    per_loc = collections.Counter(s[0] for s in samples)
    import otf2
    with otf2.reader.open(run.anchor) as t:
        locations = [l.name for l in t.definitions.locations]
        flushes = sum(1 for _, ev in t.events if isinstance(ev, otf2.events.BufferFlush))
    if len(locations) != 9:
        fail("%d locations, expected 9" % len(locations))
    for l in locations:
        if per_loc.get(l, 0) == 0:
            fail("no samples on %s" % l)
    if not dropped:
        check_rate(samples, run, 100000)
    else:  # what was dropped had been taken
        if len(samples) + dropped < RATE_FLOOR * run.cpu / 1e-4:
            fail("%d samples + %d dropped, expected at least %g x CPU %.3f s / 100 us" % (len(samples), dropped, RATE_FLOOR, run.cpu))
    if memory and not flushes and not dropped:
        fail("PROF_TOTAL_MEMORY=%s: no buffer flush and nothing dropped, the case tests nothing" % memory)
    return "%d samples on %d locations (min %d), %d inside prof, %d dropped, %d buffer flushes, CPU %.2f s" % (
        len(samples), len(per_loc), min(per_loc.values()) if per_loc else 0, run.counted[1], dropped, flushes, run.cpu)


def case_stress(ctx, tools):
    return stress(ctx, tools, None)


def case_stress_flush(ctx, tools):
    return stress(ctx, tools, "8M")


def profile_hits(run, tools, metric="hits"):
    """{call path: value of `metric`} from the run's profile.cubex, read by cubex_check.py --dump
    (which also checks the file); fails when the file is not valid."""
    cube = os.path.join(run.exp, "profile.cubex")
    if not tools or not os.path.exists(os.path.join(tools, "cubex_check.py")):
        raise Skip("no cubex_check.py (PROF_SHARED_TOOLS) to read the profile back")
    d = sh(["/usr/bin/python3", os.path.join(tools, "cubex_check.py"), "--dump", cube])
    if d.returncode != 0:
        fail("cubex_check.py: %s" % d.stdout.strip().splitlines()[-1:])
        return {}
    hits = collections.Counter()
    for line in d.stdout.splitlines():
        w = line.split()
        if len(w) >= 5 and w[0] == metric:
            hits[w[3]] += int(float(w[-1]))
    if not hits:
        fail("the profile has no %s metric" % metric)
    return hits


def case_profile_only(ctx, tools):
    """hot.c (--nocompiler) sampled without a trace: the profile has the call path
    <program>/main/a/hot with most of the hits, as many as the run's samples."""
    exe = build_hot(ctx)
    run = ctx.run(exe, {"PROF_SAMPLING_EVENTS": "perf_cpu_clock@1000000", "PROF_VERBOSE": "1"}, trace=False)
    skip_without_prerequisites(run)
    if run.rc != 0:
        fail("exit status %d: %s" % (run.rc, run.stderr.strip()[-300:]))
        return ""
    expect_problems(run, [])
    m = re.search(r"sampling: (\d+) samples", run.stderr)
    samples = int(m.group(1)) if m else 0
    hits = profile_hits(run, tools)
    total = sum(hits.values())
    chain = [p for p in hits if p.endswith("/main/a/hot")]
    on_chain = sum(hits[p] for p in chain)
    if total != samples:
        fail("the profile has %d hits, prof counted %d samples" % (total, samples))
    if total == 0 or on_chain < 0.75 * total:
        fail("%d of %d hits on .../main/a/hot (expected >= 75 %%): %s" % (on_chain, total, dict(hits.most_common(4))))
    if total < RATE_FLOOR * run.cpu / 1e-3:
        fail("%d hits for %.3f s of CPU time at 1 kHz (expected >= %g x)" % (total, run.cpu, RATE_FLOOR))
    # The estimated CPU time: hits x period (1 ms), per call path.
    est = profile_hits(run, tools, "sampled_time")
    for path, h in hits.items():
        if est.get(path, 0) != h * 1000000:
            fail("sampled_time of %s is %d ns, expected %d hits x 1 ms" % (path, est.get(path, 0), h))
    return "%d hits (%d samples, CPU %.3f s), %d on main/a/hot, sampled_time = hits x 1 ms" % (
        total, samples, run.cpu, on_chain)


def case_profile_shlib(ctx, tools):
    """The shared-library case with a trace: the profile's hits are on main/burn (burn sampled
    below the instrumented main), as many as the trace's samples."""
    lib = os.path.join(ctx.work, "libsampling_burn.so")
    ctx.build(["gcc", "-O1", "-shared", "-fPIC", ctx.src("burn_lib.c"), "-o", lib])
    exe = os.path.join(ctx.work, "burn_main")
    ctx.wrap("gcc", "-O1", ctx.src("burn_main.c"), "-o", exe, "-L" + ctx.work, "-lsampling_burn",
             "-Wl,-rpath," + ctx.work)
    run = ctx.run(exe, {"PROF_SAMPLING_EVENTS": "perf_cpu_clock@1000000"})
    skip_without_prerequisites(run)
    samples, _ = read_trace(run, tools)
    hits = profile_hits(run, tools)
    total = sum(hits.values())
    burn = sum(v for p, v in hits.items() if p.endswith("/main/burn"))
    if total != len(samples):
        fail("the profile has %d hits, the trace %d samples" % (total, len(samples)))
    if total == 0 or burn < 0.75 * total:
        fail("%d of %d hits on .../main/burn (expected >= 75 %%): %s" % (burn, total, dict(hits.most_common(4))))
    return "%d hits = %d samples in the trace, %d on main/burn" % (total, len(samples), burn)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    ap.add_argument("--prof-wrap", required=True)
    ap.add_argument("--src-dir", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--shared-tools", default="")
    a = ap.parse_args()
    name = "e2e_sampling_" + a.case
    fn = globals().get("case_" + a.case)
    if fn is None:
        print("%s: FAIL: no such case" % name)
        return 1
    tools = a.shared_tools
    try:
        if not a.case.startswith("bad_"):
            if not shutil.which("otf2-print"):
                raise Skip("no otf2-print")
            if os.environ.get("PROFTESTS_SANITIZER") == "thread":
                raise Skip(TSAN_SKIP)
        summary = fn(Ctx(a), tools)
    except Skip as e:
        if not failures:  # a skip after a failed check (no cubex_check.py for the profile part) still fails
            print("%s: SKIP: %s" % (name, e))
            return SKIP
        print("%s: note: %s" % (name, e))
    except RuntimeError as e:
        fail(str(e))
    if failures:
        for f in failures:
            print("%s: FAIL: %s" % (name, f))
        return 1
    print("%s: PASS: %s" % (name, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
