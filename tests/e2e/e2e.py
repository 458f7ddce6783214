#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""One end-to-end case: build a program with prof-wrap, run it, check what it wrote.

Checks, each optional: the exit status; otf2_check.py (otf2-print + the otf2 Python module)
with its --expect-* options; Enter counts per region equal to the calls the program counted
itself (it prints lines "PROF_EXPECT <region> <calls>"); the number of shadow-stack repairs
prof reports; stderr patterns; that no experiment directory was left behind.
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def have_checker(a, name):
    """Whether ../shared/tools' checker `name` is here (a user's clone has none; CI requires them)."""
    return bool(a.shared_tools) and os.path.isfile(os.path.join(a.shared_tools, name))


def note_no_checker(what):
    print("note: %s not checked: cubex_check.py is not here (no ../shared/tools; CI has it)" % what)


def basic_trace_check(anchor):
    """Without otf2_check.py: Debian's readers only (otf2_basic_check.py)."""
    import otf2_basic_check
    why = otf2_basic_check.check(anchor)
    if why:
        fail(why)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--prof-wrap", required=True)
    ap.add_argument("--compiler", default="gcc")
    ap.add_argument("--src", action="append", default=[])
    ap.add_argument("--lib", action="append", default=[], help="SRC:libNAME.so built with prof-wrap -shared and linked")
    ap.add_argument("--dlopen-lib", action="append", default=[], help="SRC:libNAME.so built with prof-wrap -shared, not linked")
    ap.add_argument("--flags", default="")
    ap.add_argument("--object", action="append", default=[],
                    help="SRC:COMPILER compiled alone (prof-wrap COMPILER --flags -c) and linked, e.g. a C object into a Fortran program")
    ap.add_argument("--link-flags", default="", help="more arguments for the link step only, e.g. -lgfortran")
    ap.add_argument("--wrap-flags", default="")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--args", default="")
    ap.add_argument("--exit", type=int, default=0)
    ap.add_argument("--otf2-check", default=None, help="extra otf2_check.py options ('' = plain check)")
    ap.add_argument("--shared-tools", default="")
    ap.add_argument("--count-enters", action="store_true", help="compare Enter counts with PROF_EXPECT lines")
    ap.add_argument("--repairs", default=None, help="N, or >0")
    ap.add_argument("--stderr", action="append", default=[], help="regex that must match stderr")
    ap.add_argument("--no-stderr", action="append", default=[], help="regex that must not match stderr")
    ap.add_argument("--no-experiment-dir", action="store_true")
    ap.add_argument("--only-experiment-dir", action="store_true",
                    help="the run's directory is the only one in the work dir (no fork child wrote another)")
    ap.add_argument("--empty-stdout", action="store_true", help="the program's own work never started")
    ap.add_argument("--trace-line", action="append", default=[], help="regex that some otf2-print line must match")
    ap.add_argument("--cubex-check", default=None, help="extra cubex_check.py options ('' = plain check) on profile.cubex")
    ap.add_argument("--count-visits", action="store_true", help="profile visits per region == PROF_EXPECT lines")
    ap.add_argument("--time-between", action="append", default=[],
                    help="REGION:LOW:HIGH: inclusive time (s) of REGION summed over call paths and locations")
    ap.add_argument("--ignore-expect", action="append", default=[], help="a PROF_EXPECT region not to compare")
    ap.add_argument("--absent", action="append", default=[],
                    help="a region that must appear in neither the trace nor the profile")
    ap.add_argument("--no-file", action="append", default=[], help="glob (in the work dir) that must match nothing")
    ap.add_argument("--events", action="append", default=[], help="TYPE=N or TYPE>N: number of OTF2 events of a type")
    ap.add_argument("--static-binary", action="store_true",
                    help="the built program is statically linked: no NEEDED entries, no dynamic section (but static-pie's)")
    ap.add_argument("--path-visits", action="append", default=[],
                    help="CALLPATH[@LOCATION]=N: profile visits of one call path (as cubex_check.py --dump names it, "
                         "e.g. prog/main/nap), on one location index or summed over all")
    ap.add_argument("--thread-roots", action="store_true",
                    help="on every location but the first the root has 0 visits and the time of its children")
    ap.add_argument("--hooks-in", action="append", default=[],
                    help="a function (short name) whose machine code calls a prof enter hook (objdump -d)")
    ap.add_argument("--no-hooks-in", action="append", default=[],
                    help="a function (short name) whose machine code calls no prof hook at all (objdump -d)")
    ap.add_argument("--flush-suggestion", action="store_true",
                    help="the run flushed; a rerun with the PROF_TOTAL_MEMORY the warning suggests does not")
    ap.add_argument("--prof-score", default="", help="path of prof-score")
    ap.add_argument("--score", action="store_true",
                    help="prof-score --json: visits match the program and the profile; a traced rerun with the "
                         "PROF_TOTAL_MEMORY it suggests does not flush, and its trace has the estimated size")
    ap.add_argument("--score-generate", default=None,
                    help="prof-score -g SPEC: the filter it writes excludes the --score-excluded regions, prof-score -f "
                         "marks them, and a rerun with it has none of them in its profile")
    ap.add_argument("--score-excluded", action="append", default=[])
    ap.add_argument("--score-tolerance", type=float, default=0.01,
                    help="relative error allowed between prof-score's trace estimate and the written .evt files")
    ap.add_argument("--summary", action="store_true",
                    help="PROF_SUMMARY table on stderr: visits equal PROF_EXPECT and the profile's, shares add up to 100 %%")
    ap.add_argument("--memory-full", action="store_true",
                    help="the profile runs out of memory: a PROFILE MEMORY FULL node has visits, no region has more "
                         "visits than calls; a rerun with the PROF_TOTAL_MEMORY the warning suggests has exact visits")
    ap.add_argument("--rss-total-memory", type=int, default=0,
                    help="PROF_TOTAL_MEMORY in bytes: assert peak RSS <= RSS without tracing + 1.1 x this")
    a = ap.parse_args()
    IGNORED.update(a.ignore_expect)

    work = os.path.join(a.workdir, a.name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    wrap = [a.prof_wrap] + shlex.split(a.wrap_flags) + [a.compiler]
    flags = shlex.split(a.flags)
    link_libs = []
    for spec in a.lib + a.dlopen_lib:
        src, lib = spec.split(":")
        cmd = wrap + flags + ["-fPIC", "-shared", src, "-o", os.path.join(work, lib)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            fail("building %s failed:\n%s%s" % (lib, r.stdout, r.stderr))
        if spec in a.lib:
            link_libs += ["-L" + work, "-l" + lib[3:-3], "-Wl,-rpath," + work]
    objects = []
    for spec in a.object:
        src, compiler = spec.rsplit(":", 1)
        obj = os.path.join(work, os.path.basename(src) + ".o")
        cmd = [a.prof_wrap] + shlex.split(a.wrap_flags) + [compiler] + flags + ["-c", src, "-o", obj]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            fail("compiling %s failed: %s\n%s%s" % (src, " ".join(cmd), r.stdout, r.stderr))
        objects.append(obj)
    exe = os.path.join(work, "prog")
    cmd = wrap + flags + a.src + objects + ["-o", exe] + link_libs + ["-ldl"] + shlex.split(a.link_flags)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        fail("build failed: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    if a.static_binary:
        if r.stderr:
            print("--- link warnings\n" + r.stderr[-3000:])
        f = subprocess.run(["file", "-b", exe], capture_output=True, text=True).stdout.strip()
        d = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True)
        print("file: " + f)
        if "statically linked" not in f and "static-pie linked" not in f:
            fail("the program is not statically linked: " + f)
        no_dynamic = "There is no dynamic section" in d.stdout + d.stderr
        if "NEEDED" in d.stdout or ("statically linked" in f and not no_dynamic):  # static-pie keeps one, for itself
            fail("the program has a dynamic section:\n" + d.stdout[-2000:] + d.stderr[-500:])

    if a.hooks_in or a.no_hooks_in:
        check_hooks(a, exe)

    exp = os.path.join(work, "exp")
    env = dict(os.environ)
    env.update({"PROF_EXPERIMENT_DIRECTORY": exp, "PROF_VERBOSE": "1"})
    for e in a.env:
        k, v = e.split("=", 1)
        env[k] = v.replace("@WORK@", work)
    run = [exe] + shlex.split(a.args)
    bound_kb = 0
    if a.rss_total_memory:
        run = ["/usr/bin/time", "-f", "MAXRSS_KB %M"] + run
        base_env = dict(env, PROF_ENABLE_TRACING="false", PROF_ENABLE_PROFILING="false")
        b = subprocess.run(run, capture_output=True, text=True, env=base_env, cwd=work)
        m = re.search(r"MAXRSS_KB (\d+)", b.stderr)
        if b.returncode != a.exit or not m:
            fail("the baseline run without tracing failed:\n" + b.stderr[-2000:])
        base_kb = int(m.group(1))
        bound_kb = base_kb + int(1.1 * a.rss_total_memory / 1024)
        print("baseline peak RSS %d KiB; bound %d KiB" % (base_kb, bound_kb))
    r = subprocess.run(run, capture_output=True, text=True, env=env, cwd=work)
    print("--- stdout\n" + r.stdout[-3000:] + "--- stderr\n" + r.stderr[-3000:])
    if r.returncode != a.exit:
        fail("exit status %d, expected %d" % (r.returncode, a.exit))
    for pat in a.stderr:
        if not re.search(pat, r.stderr, re.M):
            fail("stderr does not match %r" % pat)
    for pat in a.no_stderr:
        if re.search(pat, r.stderr, re.M):
            fail("stderr matches %r" % pat)
    for pattern in a.no_file:
        left = glob.glob(os.path.join(work, pattern))
        if left:
            fail("files left behind: %s" % left)
    if a.empty_stdout and r.stdout:
        fail("the program ran although measurement should have stopped it first")
    if a.only_experiment_dir:
        dirs = sorted(d for d in os.listdir(work) if os.path.isdir(os.path.join(work, d)))
        if dirs != ["exp"]:
            fail("expected only the experiment directory 'exp', found %s" % dirs)
    if a.no_experiment_dir and os.path.exists(exp):
        fail("an experiment directory was left behind: " + exp)
    if bound_kb:
        m = re.search(r"MAXRSS_KB (\d+)", r.stderr)
        if not m:
            fail("no RSS figure")
        rss = int(m.group(1))
        print("peak RSS %d KiB, bound %d KiB" % (rss, bound_kb))
        if os.environ.get("PROFTESTS_SANITIZER"):
            # PROF_SANITIZE build (tests/sanitizers/ctest_env.cmake.in): shadow memory and ASan's
            # quarantine of freed blocks are in the RSS too; the bound says nothing there.
            print("peak RSS bound not checked: a PROF_SANITIZE=%s build" % os.environ["PROFTESTS_SANITIZER"])
        elif rss > bound_kb:
            fail("peak RSS %d KiB exceeds %d KiB" % (rss, bound_kb))
    if a.repairs is not None:
        m = re.search(r"shadow stack: (\d+) repairs", r.stderr)
        if not m:
            fail("prof reported no shadow-stack line")
        n = int(m.group(1))
        if a.repairs == ">0":
            if n == 0:
                fail("expected repairs > 0, got 0")
        elif n != int(a.repairs):
            fail("expected %s repairs, got %d" % (a.repairs, n))
        warned = re.search(r"^prof: warning: %d function exits were never reported.*$" % n, r.stderr, re.M)
        if n and not warned:
            fail("%d repairs were not reported in a warning" % n)
        # The warning names the first repair's regions (which exit closed which frame).
        if n and not re.search(r'; the first: "[^"?]+" (left by a longjmp or an exception|closed at the exit of "[^"?]+")', warned.group(0)):
            fail("the repair warning does not name the regions of the first repair: " + warned.group(0))

    anchor = os.path.join(exp, "traces.otf2")
    if a.otf2_check is not None and not have_checker(a, "otf2_check.py"):
        basic_trace_check(anchor)
    elif a.otf2_check is not None:
        checker = os.path.join(a.shared_tools, "otf2_check.py")
        c = subprocess.run(["/usr/bin/python3", checker, anchor] + shlex.split(a.otf2_check), capture_output=True, text=True)
        print(c.stdout[-3000:] + c.stderr[-2000:])
        if c.returncode:
            fail("otf2_check.py failed")
    if a.trace_line:
        lines = subprocess.run(["otf2-print", anchor], capture_output=True, text=True).stdout.splitlines()
        for pat in a.trace_line:
            if not any(re.search(pat, l) for l in lines):
                fail("no otf2-print line matches %r" % pat)
    if a.events:
        types = count_types(anchor)
        print("event types: " + ", ".join("%s=%d" % kv for kv in sorted(types.items())))
        for spec in a.events:
            m = re.match(r"(\w+)(=|>)(\d+)$", spec)
            name, op, n = m.group(1), m.group(2), int(m.group(3))
            got = types.get(name, 0)
            if (op == "=" and got != n) or (op == ">" and not got > n):
                fail("%s events: %d, expected %s%d" % (name, got, op, n))
    if (a.cubex_check is not None or a.count_visits or a.time_between) and not have_checker(a, "cubex_check.py"):
        note_no_checker("profile values")
    elif a.cubex_check is not None or a.count_visits or a.time_between:
        check_profile(a, work, exp, r.stdout)
    if (a.path_visits or a.thread_roots) and not have_checker(a, "cubex_check.py"):
        note_no_checker("profile call paths")
    elif a.path_visits or a.thread_roots:
        check_paths(a, exp)
    if a.summary:
        check_summary(a, exp, r)
    if a.score:
        check_score(a, work, exp, run, env, r)
    if a.score_generate is not None:
        check_score_generate(a, work, exp, run, env)
    if a.flush_suggestion:
        m = re.search(r"^prof: warning: trace buffers were flushed (?:once|\d+ times).* set PROF_TOTAL_MEMORY=(\S+) to avoid it$", r.stderr, re.M)
        if not m:
            fail("no flush warning with a PROF_TOTAL_MEMORY to set")
        shutil.rmtree(exp, ignore_errors=True)
        t = subprocess.run(run, capture_output=True, text=True, cwd=work, env=dict(env, PROF_TOTAL_MEMORY=m.group(1)))
        if t.returncode != a.exit or "trace buffers were flushed" in t.stderr:
            fail("the rerun with the suggested PROF_TOTAL_MEMORY=%s flushed (or failed):\n%s" % (m.group(1), t.stderr[-2000:]))
        print("rerun with PROF_TOTAL_MEMORY=%s: no flush" % m.group(1))
    if a.memory_full and not have_checker(a, "cubex_check.py"):
        note_no_checker("PROFILE MEMORY FULL")
    elif a.memory_full:
        check_memory_full(a, work, exp, run, env, r)
    if a.absent:
        defined = subprocess.run(["otf2-print", "-G", anchor], capture_output=True, text=True).stdout
        regions = set(re.findall(r'^REGION\s+\d+\s+Name: "(.*?)" <', defined, re.M))
        cubex = os.path.join(exp, "profile.cubex")
        dump = subprocess.run(["python3", os.path.join(a.shared_tools, "cubex_check.py"), cubex, "--dump"],
                              capture_output=True, text=True).stdout if os.path.exists(cubex) and have_checker(a, "cubex_check.py") else ""
        for name in a.absent:
            if any(x == name or short(x) == name for x in regions):
                fail("filtered region %s is defined in the trace" % name)
            if re.search(r"(^|/)%s(/|\s)" % re.escape(name), dump, re.M):
                fail("filtered region %s is in the profile" % name)
            print("absent from trace and profile: %s" % name)
    if a.count_enters:
        expected = expected_counts(r.stdout)
        if not expected:
            fail("the program printed no PROF_EXPECT lines")
        counts = count_enters(anchor)
        for region, n in sorted(expected.items()):
            got = sum(v for k, v in counts.items() if k == region or short(k) == region)
            print("Enter %-20s trace %-8d program %d" % (region, got, n))
            if got != n:
                fail("Enter count of %s is %d, the program made %d calls" % (region, got, n))
    print("ok")


def short(name):
    """Function name without return type, arguments, templates or scopes:
    'int ns::f<int>(int) const' -> 'f'; 'consume()::{lambda()#1}::operator()() const' -> 'operator()'."""
    n = re.sub(r"\s+const$", "", name.strip())
    if n.endswith(")"):  # drop the trailing argument list, matching parentheses
        depth = 0
        for i in range(len(n) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(n[i], 0)
            if depth == 0:
                n = n[:i]
                break
    prev = None
    while prev != n:  # template arguments, innermost first
        prev, n = n, re.sub(r"<[^<>]*>", "", n)
    depth, cut = 0, 0
    for i, ch in enumerate(n):  # last '::' outside parentheses/braces
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(ch, 0)
        if depth == 0 and n.startswith("::", i):
            cut = i + 2
    n = n[cut:]
    return n.split(" ")[-1]


IGNORED = set()


def expected_counts(stdout):
    expected = {}
    for line in stdout.splitlines():
        m = re.match(r"PROF_EXPECT (\S+) (\d+)$", line.strip())
        if m and m.group(1) not in IGNORED:
            expected[m.group(1)] = expected.get(m.group(1), 0) + int(m.group(2))
    return expected


def check_hooks(a, exe):
    """objdump -d: which functions call prof's hooks (the GCC plugin's or -finstrument-functions')."""
    d = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", exe], capture_output=True, text=True)
    if d.returncode:
        fail("objdump failed: " + d.stderr[-500:])
    calls = {}  # short name -> list of hooks called
    fn = None
    for line in d.stdout.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            fn = short(m.group(1))
            calls.setdefault(fn, [])
            continue
        h = re.search(r"call.*<(__prof_plugin_enter|__prof_plugin_exit|__cyg_profile_func_enter|__cyg_profile_func_exit)", line)
        if h and fn:
            calls[fn].append(h.group(1))
    for name in a.hooks_in:
        if name not in calls:
            fail("objdump shows no function %s" % name)
        if not any(h.endswith("enter") for h in calls[name]):
            fail("%s calls no enter hook: %s" % (name, calls[name]))
        print("hooks in %s: %s" % (name, ", ".join(sorted(set(calls[name])))))
    for name in a.no_hooks_in:
        if name not in calls:
            fail("objdump shows no function %s (was it inlined?)" % name)
        if calls[name]:
            fail("%s calls prof hooks although it is filtered at compile time: %s" % (name, calls[name]))
        print("no hooks in %s" % name)


def profile_cells(a, exp, options=""):
    """cubex_check.py on profile.cubex (which must pass), then every value of its --dump:
    {(metric, call path, location index): value}."""
    c = subprocess.run(["python3", os.path.join(a.shared_tools, "cubex_check.py"), os.path.join(exp, "profile.cubex"), "--dump"]
                       + shlex.split(options), capture_output=True, text=True)
    lines = c.stdout.splitlines()
    print("\n".join(l for l in lines if not l.startswith(("visits", "time", "min_time", "max_time", "metric ")))[-3000:])
    if c.returncode:
        print(c.stdout[-3000:] + c.stderr[-2000:])
        fail("cubex_check.py failed")
    # --dump: a header line, then one line per metric, cnode and location, columns aligned.
    header = next((l for l in lines if l.startswith("metric ")), None)
    if header is None:
        fail("cubex_check.py --dump printed no table")
    cols = [header.index(h) for h in ("cnode", "call path", "location", "value")]
    cells = {}
    for l in lines:
        m = re.match(r"(\w+) \(", l)
        if not m or l.startswith("metric "):
            continue
        path = l[cols[1]:cols[2]].strip()
        loc = int(l[cols[2]:cols[3]].split()[0])
        cells[(m.group(1), path, loc)] = float(l[cols[3]:].strip())
    return cells


def check_paths(a, exp):
    cells = profile_cells(a, exp)
    for spec in a.path_visits:
        target, n = spec.rsplit("=", 1)
        path, _, loc = target.partition("@")
        got = sum(v for (m, p, l), v in cells.items() if m == "visits" and p == path and (loc == "" or l == int(loc)))
        if not any(m == "visits" and p == path for (m, p, l) in cells):
            fail("the profile has no call path %s" % path)
        print("call path %-40s visits %d (expected %s)" % (target, got, n))
        if got != int(n):
            fail("call path %s has %d visits, expected %s" % (target, got, n))
    if a.thread_roots:
        roots = {p for (m, p, l) in cells if "/" not in p}
        if len(roots) != 1:
            fail("expected one root call path, found %s" % sorted(roots))
        root = roots.pop()
        locs = sorted({l for (m, p, l) in cells})
        for l in locs[1:]:
            kids = sum(v for (m, p, ll), v in cells.items() if m == "time" and ll == l and p.count("/") == 1)
            visits, time = cells[("visits", root, l)], cells[("time", root, l)]
            print("location %d: root visits %d, time %.9f, children's time %.9f" % (l, visits, time, kids))
            if visits != 0 or abs(time - kids) > 1e-9 * max(1.0, time):
                fail("location %d: the root has %d visits and time %.9f, expected 0 and its children's %.9f" % (l, visits, time, kids))


def prof_score(a, *args):
    c = subprocess.run([a.prof_score] + list(args), capture_output=True, text=True)
    if c.returncode:
        fail("prof-score %s failed:\n%s%s" % (" ".join(args), c.stdout[-2000:], c.stderr[-2000:]))
    return c


def check_score(a, work, exp, run, env, r):
    """prof-score on the run's profile: per-region visits equal the program's calls and the
    profile's (read by cubex_check.py); a traced rerun at the suggested PROF_TOTAL_MEMORY does not
    flush, one at 3/4 of it does, and the OTF2 event files have the estimated size."""
    score = json.loads(prof_score(a, "--json", exp).stdout)
    text = prof_score(a, "-r", exp).stdout
    print(text[-3000:])
    visits = profile_values(a, exp, "")[0] if have_checker(a, "cubex_check.py") else None
    if visits is None:
        note_no_checker("prof-score's visits against the profile's")
    regions = {}  # by display name: C++ constructors and destructors share one (C1/C2, D0/D1/D2)
    for x in score["regions"]:
        y = regions.setdefault(x["name"], dict(x, visits=0, max_buf=0))
        y["visits"] += x["visits"]
        y["max_buf"] += x["max_buf"]
    for region, n in sorted(expected_counts(r.stdout).items()):
        got = sum(x["visits"] for k, x in regions.items() if k == region or short(k) == region)
        print("prof-score visits %-12s %-8d program %d" % (region, got, n))
        if got != n:
            fail("prof-score: %s has %d visits, the program made %d calls" % (region, got, n))
    for name, x in regions.items():
        if visits is not None and x["visits"] != visits.get(name, 0):
            fail("prof-score: %s has %d visits, cubex_check.py reads %s" % (name, x["visits"], visits.get(name)))
    for x in score["regions"]:
        if not re.search(r"^ +\S+ +%s +%s +[\d.]+ +[\d.]+ +\S+  %s$" % (
                format(int(x["max_buf"]), ",").replace(",", "[,]"), format(int(x["visits"]), ",").replace(",", "[,]"),
                re.escape(x["name"])), text, re.M):
            fail("prof-score -r has no row for %s with max_buf %d and visits %d" % (x["name"], x["max_buf"], x["visits"]))
    groups = {g["name"]: g for g in score["groups"]}
    if groups["ALL"]["visits"] != sum(x["visits"] for x in regions.values()):
        fail("prof-score: ALL visits are not the sum of the regions'")
    if abs(sum(g["time_percent"] for k, g in groups.items() if k != "ALL") - 100) > 0.01:
        fail("prof-score: the groups' time shares do not add up to 100 %")
    suggested = score["estimate"]["total_memory_text"]
    estimated = score["estimate"]["trace_bytes"]
    exp2 = os.path.join(work, "exp-traced")
    traced = dict(env, PROF_ENABLE_TRACING="true", PROF_TOTAL_MEMORY=suggested, PROF_EXPERIMENT_DIRECTORY=exp2)
    t = subprocess.run(run, capture_output=True, text=True, env=traced, cwd=work)
    if t.returncode != a.exit:
        fail("the traced rerun failed:\n" + t.stderr[-2000:])
    if "trace buffers were flushed" in t.stderr:
        fail("the traced rerun with the suggested PROF_TOTAL_MEMORY=%s flushed:\n%s" % (suggested, t.stderr[-2000:]))
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(exp2, "traces", "*.evt")))
    print("estimated trace %d bytes, written %d bytes (%.3f); PROF_TOTAL_MEMORY=%s: no flush" % (estimated, size, size / estimated, suggested))
    # Besides the events of the regions, each location has a few records of its own (ProgramBegin/End, buffer headers).
    if abs(size - estimated) > a.score_tolerance * estimated + 128 * score["locations"]:
        fail("the trace has %d bytes, prof-score estimated %d (tolerance %.1f %%)" % (size, estimated, 100 * a.score_tolerance))
    mib = int(suggested[:-1]) * (1024 if suggested.endswith("G") else 1)
    if mib >= 12:
        less = "%dM" % (mib * 3 // 4)
        t = subprocess.run(run, capture_output=True, text=True, cwd=work,
                           env=dict(traced, PROF_TOTAL_MEMORY=less, PROF_EXPERIMENT_DIRECTORY=exp2 + "-less"))
        if "trace buffers were flushed" not in t.stderr:
            fail("a traced rerun with PROF_TOTAL_MEMORY=%s (3/4 of the suggestion) did not flush: the estimate is too generous" % less)
        print("PROF_TOTAL_MEMORY=%s: flushed, as expected" % less)


def check_score_generate(a, work, exp, run, env):
    """prof-score -g writes a filter that excludes exactly the expected regions; prof-score -f
    marks them; a run with the filter has none of them in its profile."""
    flt = os.path.join(work, "initial.filter")
    args = ["-g"] + ([a.score_generate] if a.score_generate else []) + ["-o", flt, exp]
    prof_score(a, *args)
    text = open(flt).read()
    print(text)
    excluded = set(re.findall(r"^\s*EXCLUDE MANGLED (\S+)", text, re.M))
    if excluded != set(a.score_excluded):
        fail("prof-score -g excluded %s, expected %s" % (sorted(excluded), sorted(a.score_excluded)))
    score = json.loads(prof_score(a, "--json", "-f", flt, exp).stdout)
    for x in score["regions"]:
        want = "+" if x["name"] in excluded else "-"
        if x["filtered"] != want:
            fail("prof-score -f marks %s %r, expected %r" % (x["name"], x["filtered"], want))
    if not score["estimate_after_filtering"]["trace_bytes"] < score["estimate"]["trace_bytes"]:
        fail("the filter does not reduce the estimated trace size")
    exp2 = os.path.join(work, "exp-filtered")
    f = subprocess.run(run, capture_output=True, text=True, cwd=work,
                       env=dict(env, PROF_FILTERING_FILE=flt, PROF_EXPERIMENT_DIRECTORY=exp2))
    if f.returncode != a.exit or "error" in f.stderr:
        fail("the run with the generated filter failed:\n" + f.stderr[-2000:])
    if not have_checker(a, "cubex_check.py"):
        note_no_checker("the filtered run's profile")
        return
    visits, _ = profile_values(a, exp2, "")
    for name in excluded:
        if name in visits:
            fail("%s is still in the profile of the run with the generated filter" % name)
    print("generated filter applied: %s absent" % ", ".join(sorted(excluded)))


def check_summary(a, exp, r):
    """The PROF_SUMMARY table: rows parse, visits match the program and the profile (read with
    cubex_check.py), exclusive shares add up to at most 100 %, times are consistent."""
    rows = re.findall(r"^prof: +([\d.]+)% +([\d.]+) +([\d.]+) +(\d+) +(\S+) +([\d.]+) +([\d.]+)  (.+)$", r.stderr, re.M)
    head = re.search(r"^prof: summary: ([\d.]+) s in (\d+) regions on (\d+) locations?.*; top (\d+):$", r.stderr, re.M)
    if not head or not rows:
        fail("no PROF_SUMMARY table on stderr")
    if len(rows) != int(head.group(4)):
        fail("the summary promises %s rows, has %d" % (head.group(4), len(rows)))
    expected = expected_counts(r.stdout)
    profile = profile_values(a, exp, "")[0] if os.path.exists(os.path.join(exp, "profile.cubex")) and have_checker(a, "cubex_check.py") else None
    share = 0.0
    for pct, excl, incl, visits, per, mn, mx, region in rows:
        share += float(pct)
        if float(excl) > float(incl) + 1e-6:
            fail("summary: %s has exclusive %s s > inclusive %s s" % (region, excl, incl))
        n = int(visits)
        if region in expected and n != expected[region]:
            fail("summary: %s has %d visits, the program made %d calls" % (region, n, expected[region]))
        if profile is not None and profile.get(region, 0) != n:
            fail("summary: %s has %d visits, the profile %s" % (region, n, profile.get(region)))
        if n and float(mn) > float(mx):
            fail("summary: %s min > max" % region)
        print("summary row ok: %s visits %d excl %s s" % (region, n, excl))
    if share > 100.05:
        fail("summary shares add up to %.2f %%" % share)
    for region in expected:
        if not any(row[7] == region for row in rows) and len(rows) < 10:
            fail("summary: %s is missing" % region)


def check_memory_full(a, work, exp, run, env, r):
    """The profile ran out of memory: its PROFILE MEMORY FULL nodes hold visits, no region has
    more visits than calls, and the PROF_TOTAL_MEMORY the warning asks for is enough."""
    m = re.search(r"^prof: warning: the profile ran out of memory: it holds (\d+) call paths .*, about (\d+) more are in "
                  r"'PROFILE MEMORY FULL' nodes.* set PROF_TOTAL_MEMORY=(\S+)$", r.stderr, re.M)
    if not m:
        fail("no warning that the profile ran out of memory, with the PROF_TOTAL_MEMORY to set")
    held, estimated = int(m.group(1)), int(m.group(2))
    visits, _ = profile_values(a, exp, "--expect-region='PROFILE MEMORY FULL'")
    full = visits.get("PROFILE MEMORY FULL", 0)
    print("PROFILE MEMORY FULL visits: %d" % full)
    if full <= 0:
        fail("the PROFILE MEMORY FULL nodes have no visits")
    for region, n in sorted(expected_counts(r.stdout).items()):
        got = sum(v for k, v in visits.items() if k == region or short(k) == region)
        print("visits %-20s profile %-8d program %d" % (region, got, n))
        if got > n:
            fail("profile visits of %s are %d, more than the %d calls" % (region, got, n))
    suggested = m.group(3)
    print("--- rerun with PROF_TOTAL_MEMORY=%s" % suggested)
    shutil.rmtree(exp, ignore_errors=True)
    r2 = subprocess.run(run, capture_output=True, text=True, env=dict(env, PROF_TOTAL_MEMORY=suggested), cwd=work)
    print(r2.stderr[-2000:])
    if r2.returncode != a.exit or "ran out of memory" in r2.stderr:
        fail("the rerun with the suggested PROF_TOTAL_MEMORY=%s still ran out of memory (or failed)" % suggested)
    visits, _ = profile_values(a, exp, "")
    if "PROFILE MEMORY FULL" in visits:
        fail("the rerun's profile still has a PROFILE MEMORY FULL node")
    for region, n in sorted(expected_counts(r2.stdout).items()):
        got = sum(v for k, v in visits.items() if k == region or short(k) == region)
        if got != n:
            fail("rerun: profile visits of %s are %d, the program made %d calls" % (region, got, n))
    print("rerun: exact visits for every region")
    c = subprocess.run(["python3", os.path.join(a.shared_tools, "cubex_check.py"), os.path.join(exp, "profile.cubex")],
                       capture_output=True, text=True)
    cn = re.search(r"(\d+) cnodes, (\d+) locations", c.stdout)
    if not cn or cn.group(2) != "1":
        fail("the missing-path estimate is checked on single-threaded programs only")
    missing = int(cn.group(1)) - 1 - held  # the root is no call path of its own
    print("missing call paths: estimated %d, the rerun shows %d (%.3f)" % (estimated, missing, estimated / missing))
    if abs(estimated - missing) > 0.06 * missing:  # HyperLogLog: 1.6 % standard error
        fail("the warning estimated %d missing call paths, the rerun has %d" % (estimated, missing))


def profile_values(a, exp, options):
    """cubex_check.py on profile.cubex (which must pass); visits and inclusive times summed per region."""
    visits, times = {}, {}
    for (metric, path, _), value in profile_cells(a, exp, options).items():
        target = visits if metric == "visits" else times if metric == "time" else None
        if target is not None:
            region = path.split("/")[-1]
            target[region] = target.get(region, 0) + value
    return visits, times


def check_profile(a, work, exp, stdout):
    """cubex_check.py on profile.cubex; then values read back with its --dump."""
    visits, times = profile_values(a, exp, a.cubex_check or "")
    if a.count_visits:
        expected = expected_counts(stdout)
        if not expected:
            fail("the program printed no PROF_EXPECT lines")
        for region, n in sorted(expected.items()):
            got = sum(v for k, v in visits.items() if k == region or short(k) == region)
            print("visits %-20s profile %-8d program %d" % (region, got, n))
            if got != n:
                fail("profile visits of %s are %d, the program made %d calls" % (region, got, n))
    for spec in a.time_between:
        region, low, high = spec.rsplit(":", 2)
        # Inclusive time of the outermost call paths of REGION: recursion would count twice.
        got = sum(v for k, v in times.items() if k == region or short(k) == region)
        print("time %s: %.6f s (expected between %s and %s)" % (region, got, low, high))
        if not float(low) <= got <= float(high):
            fail("time of %s is %.6f s, outside [%s, %s]" % (region, got, low, high))


def otf2_print_events(anchor):
    """(event type in CamelCase, region name or None) for every event, read by otf2-print
    (OTF2's own C reader; the Python reader is ten times slower on big traces)."""
    p = subprocess.Popen(["otf2-print", anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stdout:
        m = re.match(r"([A-Z][A-Z_]+)\s+\d+\s+\d+", line)
        if not m:
            continue
        kind = "".join(w.capitalize() for w in m.group(1).split("_"))
        r = re.search(r'Region: "(.*)" <\d+>', line)
        yield kind, r.group(1) if r else None
    err = p.stderr.read()
    if p.wait() != 0 or err:
        fail("otf2-print failed: " + err[-2000:])


def count_types(anchor):
    types = {}
    for kind, _ in otf2_print_events(anchor):
        types[kind] = types.get(kind, 0) + 1
    return types


def count_enters(anchor):
    counts = {}
    for kind, region in otf2_print_events(anchor):
        if kind == "Enter":
            counts[region] = counts.get(region, 0) + 1
    return counts


if __name__ == "__main__":
    main()
