#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""One MPI end-to-end case: build a program with prof-mpicc, run it on N ranks with tracing, check the trace.

  run_mpi_test.py --name NAME --src PROGRAM.c --np N --bin-dir DIR --workdir DIR [--shared-tools DIR] [--flags ...]
                  [--env NAME=VALUE ...]

A Fortran program (PROGRAM.f90, counting with expect_f.inc in the same format) is built with
`prof-wrap mpifort`; where that fails, with a note, it is compiled by mpifort and linked by
prof-mpicc with mpifort's libraries. --env passes a variable to every rank (e.g.
PROF_MPI_ENABLE_GROUPS=all, so that every call the program counts is recorded).

The program counts its own MPI calls and messages (expect.h) and prints on rank 0:
  PROF_EXPECT <rank> <MPI function> <calls> <calls on the main thread>
  PROF_MESSAGES <rank> <sent> <received>
  PROF_COLLECTIVES <rank> <blocking collectives>
Checks, all of them, every failure reported on one line:
  (a) otf2_check.py --mpi accepts the trace (when --shared-tools names its directory);
  (b) otf2-print exits 0 and writes nothing to stderr;
  (c) per rank (location group "MPI Rank r", master location id r) the Enter events of every MPI
      region equal the program's calls, in all locations of the rank and on its master location
      (the calls of the main thread), and no MPI region is entered that it did not call;
  (d) per rank MpiSend+MpiIsend and MpiRecv+MpiIrecv events equal the messages the program counted,
      MpiCollectiveBegin events its blocking collectives;
  (e) the job's one profile.cubex passes cubex_check.py, per rank the visits of every MPI function
      equal the program's calls, and bytes_sent/bytes_received exist when messages were sent;
  (f) prof-score --json on the experiment shows the MPI group with every MPI call;
  (g) with --metrics (PROF_METRIC_RUSAGE=ru_minflt,ru_nvcsw, and PROF_METRIC_PAPI=perf::TASK-CLOCK
      where libpapi is installed): on every CPU location of every rank each Enter and Leave comes
      right after a Metric event of the same time with one value per metric, the values never
      decrease, and the profile has the metrics (cubex_check.py --expect-metric).
Exit status 0 when all pass, 1 when one fails, 77 (skip) when mpicc or mpirun (or, for a Fortran
program, mpifort) is not installed.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

RUN_TIMEOUT = 120
MAX_REPORT = 20  # failure lines printed


def skip(name, msg):
    print("%s: SKIP: %s" % (name, msg))
    sys.exit(77)


def build_fortran(name, a, prof_mpicc, exe, env, work, fail_now):
    """`prof-wrap mpifort` (its modules go to the work directory); where prof-wrap cannot build
    Fortran yet, mpifort compiles and prof-mpicc links with mpifort's libraries."""
    src = os.path.abspath(a.src)  # built in the work directory, where the modules go
    flags = ["-O2", "-I" + os.path.dirname(src)] + a.flags.split()
    cmd = [os.path.abspath(os.path.join(a.bin_dir, "prof-wrap")), "mpifort"] + flags + [src, "-o", exe]
    p = subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode == 0:
        return
    print(p.stdout.rstrip())
    print("%s: note: '%s' failed (status %d); building with mpifort -c and linking with prof-mpicc instead"
          % (name, " ".join(cmd), p.returncode))
    obj = exe + ".o"
    link = subprocess.run(["mpifort", "--showme:link"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True).stdout.split()
    for cmd in (["mpifort"] + flags + ["-c", src, "-o", obj],
                [os.path.abspath(prof_mpicc), obj, "-o", exe] + link + ["-lgfortran", "-lm"]):
        p = subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if p.returncode != 0:
            fail_now("%s exited with status %d; the Fortran test program does not build" % (" ".join(cmd), p.returncode),
                     p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--bin-dir", required=True, help="directory of prof-wrap and prof-mpicc")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--shared-tools", default="", help="directory of otf2_check.py ('' = that check is not run)")
    ap.add_argument("--flags", default="", help="extra compiler flags, blank-separated")
    ap.add_argument("--metrics", action="store_true", help="record metrics and check them (g)")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for every rank (mpirun -x)")
    ap.add_argument("--locations-per-rank", type=int, default=0,
                    help="exactly this many CPU locations per rank (0 = not checked): threads that the MPI "
                         "library starts for itself (progress, PMIx) must not become locations")
    a = ap.parse_args()
    name = a.name
    failures = []

    def fail_now(msg, details=""):
        if details:
            print(details.rstrip())
        print("%s: FAIL: %s" % (name, msg))
        print("%s: files kept in %s" % (name, work))
        sys.exit(1)

    fortran = os.path.splitext(a.src)[1].lower() in (".f", ".f90", ".f95", ".f03", ".f08")
    for tool in ("mpicc", "mpirun") + (("mpifort",) if fortran else ()):
        if shutil.which(tool) is None:
            skip(name, "%s is not installed (Debian: apt-get install libopenmpi-dev openmpi-bin)" % tool)
    work = os.path.join(a.workdir, name)
    prof_mpicc = os.path.join(a.bin_dir, "prof-mpicc")
    if not os.access(prof_mpicc, os.X_OK):
        fail_now("%s does not exist; build the prof-wrap target first" % prof_mpicc)
    otf2_print = os.environ.get("OTF2_PRINT") or shutil.which("otf2-print")
    if not otf2_print:
        fail_now("otf2-print is not installed (apt-get install otf2-tools)")
    try:
        import otf2
    except ImportError as e:
        fail_now("the otf2 Python module cannot be imported (%s); install python3-otf2 and run this with /usr/bin/python3" % e)

    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    # Build.
    exe = os.path.join(work, os.path.splitext(os.path.basename(a.src))[0])
    if fortran:
        build_fortran(name, a, prof_mpicc, os.path.abspath(exe), env, work, fail_now)
    else:
        cmd = [prof_mpicc, "-O2"] + a.flags.split() + [a.src, "-o", exe]
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if p.returncode != 0:
            fail_now("%s exited with status %d; the test program does not build with prof-mpicc" % (" ".join(cmd), p.returncode),
                     p.stdout)

    # Run.
    exp = os.path.join(work, "exp")
    cmd = ["timeout", str(RUN_TIMEOUT), "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(a.np),
           "-x", "PROF_ENABLE_TRACING=true", "-x", "PROF_EXPERIMENT_DIRECTORY=" + exp, exe]
    for var in a.env:
        cmd[-1:-1] = ["-x", var]
    metric_names = []
    if a.metrics:
        import ctypes.util
        metric_names = ["ru_minflt", "ru_nvcsw"]
        cmd[-1:-1] = ["-x", "PROF_METRIC_RUSAGE=ru_minflt,ru_nvcsw"]
        info = subprocess.run([os.path.join(a.bin_dir, "prof-info"), "metrics"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, universal_newlines=True).stdout
        if ctypes.util.find_library("papi") and re.search(r"^  perf::TASK-CLOCK: ", info, re.M):
            metric_names.insert(0, "perf::TASK-CLOCK")
            cmd[-1:-1] = ["-x", "PROF_METRIC_PAPI=perf::TASK-CLOCK"]
    p = subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    with open(os.path.join(work, "run.out"), "w") as f:
        f.write(p.stdout)
    with open(os.path.join(work, "run.err"), "w") as f:
        f.write(p.stderr)
    run_log = "---- stdout ----\n%s---- stderr ----\n%s" % (p.stdout, p.stderr)
    if p.returncode == 124:
        fail_now("the run did not end within %d s (a hang, in the program or in prof's MPI adapter): %s"
                 % (RUN_TIMEOUT, " ".join(cmd)), run_log)
    if p.returncode != 0:
        fail_now("the run exited with status %d under the measurement: %s" % (p.returncode, " ".join(cmd)), run_log)
    print(p.stdout.rstrip())
    if p.stderr.strip():
        print("---- stderr of the run ----\n" + p.stderr.rstrip())
    for line in p.stderr.splitlines():
        if re.match(r"^prof(\[\d+\])?: (error|warning)", line):
            failures.append("prof reported a problem on stderr: %s" % line)

    # The program's expectations.
    calls = collections.defaultdict(collections.Counter)  # rank -> function -> calls
    main_calls = collections.defaultdict(collections.Counter)  # rank -> function -> calls of the main thread
    messages, collectives = {}, {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] == "PROF_EXPECT":
            calls[int(f[1])][f[2]] += int(f[3])
            main_calls[int(f[1])][f[2]] += int(f[4])
        elif len(f) == 4 and f[0] == "PROF_MESSAGES":
            messages[int(f[1])] = (int(f[2]), int(f[3]))
        elif len(f) == 3 and f[0] == "PROF_COLLECTIVES":
            collectives[int(f[1])] = int(f[2])
    if sorted(messages) != list(range(a.np)) or sorted(collectives) != list(range(a.np)):
        fail_now("the program printed PROF_MESSAGES/PROF_COLLECTIVES lines for ranks %s, not for 0..%d; the test program "
                 "is broken (expect_report before MPI_Finalize?)" % (sorted(messages), a.np - 1), run_log)
    if sum(s for s, _ in messages.values()) != sum(r for _, r in messages.values()):
        fail_now("the program's own counts disagree: %d messages sent, %d received; fix its EXPECT_MESSAGES"
                 % (sum(s for s, _ in messages.values()), sum(r for _, r in messages.values())))

    anchor = os.path.join(exp, "traces.otf2")
    if not os.path.isfile(anchor):
        fail_now("the run wrote no %s; the MPI adapter wrote no trace" % anchor, run_log)

    # (a) otf2_check.py --mpi.
    if a.shared_tools:
        check = os.path.join(a.shared_tools, "otf2_check.py")
        p = subprocess.run(["/usr/bin/python3", check, anchor, "--mpi"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        print("---- otf2_check.py --mpi ----\n" + p.stdout.rstrip())
        if p.returncode != 0:
            last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "(no output)"
            failures.append("otf2_check.py --mpi rejects the trace (exit status %d): %s" % (p.returncode, last))
    else:
        print("%s: note: no --shared-tools: otf2_check.py not run" % name)

    # (b) otf2-print: exit status 0, nothing on stderr.
    p = subprocess.run([otf2_print, anchor], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0 or p.stderr.strip():
        print("---- otf2-print stderr ----\n" + p.stderr.rstrip())
        first = p.stderr.strip().splitlines()[0] if p.stderr.strip() else "(nothing)"
        failures.append("otf2-print %s exited with status %d and wrote to stderr: %s" % (anchor, p.returncode, first))

    # (c), (d): the events, per rank, with the otf2 Python module.
    enters = collections.defaultdict(collections.Counter)  # rank -> MPI region -> Enter events
    master_enters = collections.defaultdict(collections.Counter)  # the same on the master location (id = rank)
    sent, received, begins = collections.Counter(), collections.Counter(), collections.Counter()
    group_rank = {}
    metric_problems = collections.Counter()
    metric_events = 0
    try:
        with otf2.reader.open(anchor) as trace:
            locs = list(trace.definitions.locations)
            for loc in locs:
                m = re.match(r"^MPI Rank (\d+)$", loc.group.name)
                if m is None:
                    failures.append("location %d (%s) is in the location group '%s', not 'MPI Rank <r>'"
                                    % (loc._ref, loc.name, loc.group.name))
                    continue
                group_rank[loc._ref] = int(m.group(1))
            ranks = set(group_rank.values())
            if ranks != set(range(a.np)):
                failures.append("the trace has location groups of ranks %s, the run had ranks 0..%d" % (sorted(ranks), a.np - 1))
            if a.locations_per_rank:
                per_rank = collections.Counter(group_rank.values())
                for r in range(a.np):
                    if per_rank[r] != a.locations_per_rank:
                        failures.append("rank %d has %d locations (%s), expected %d: the program starts no threads"
                                        % (r, per_rank[r], ", ".join(sorted(l.name for l in locs if group_rank.get(l._ref) == r)),
                                           a.locations_per_rank))
            if len(locs) < a.np:
                failures.append("the trace has %d locations, fewer than the %d ranks" % (len(locs), a.np))
            for r in range(a.np):
                if group_rank.get(r) != r:
                    failures.append("rank %d has no master location with id %d in location group 'MPI Rank %d'" % (r, r, r))
            E = otf2.events
            last_metric = {}  # location -> (time, values) of its last Metric event
            for loc, ev in trace.events:
                r = group_rank.get(loc._ref)
                if r is None:
                    continue
                if a.metrics and isinstance(ev, E.Metric):
                    metric_events += 1
                    values = list(ev.values)
                    members = [m.name for m in ev.metric.members]
                    if members != metric_names:
                        metric_problems["a Metric event has members %s, not %s" % (members, metric_names)] += 1
                    prev = last_metric.get(loc._ref)
                    if prev and any(v < p for v, p in zip(values, prev[1])):
                        metric_problems["metric values decrease on a location"] += 1
                    last_metric[loc._ref] = (ev.time, values)
                elif a.metrics and isinstance(ev, (E.Enter, E.Leave)) and loc.type == otf2.LocationType.CPU_THREAD:
                    prev = last_metric.pop(loc._ref, None)
                    if prev is None or prev[0] != ev.time:
                        metric_problems["an Enter/Leave without a Metric event of its time just before it"] += 1
                    if prev is not None:
                        last_metric[loc._ref] = (None, prev[1])
                if isinstance(ev, E.Enter):
                    if ev.region.paradigm == otf2.Paradigm.MPI or ev.region.name.startswith("MPI_"):
                        enters[r][ev.region.name] += 1
                        if loc._ref == r:
                            master_enters[r][ev.region.name] += 1
                elif isinstance(ev, (E.MpiSend, E.MpiIsend)):
                    sent[r] += 1
                elif isinstance(ev, (E.MpiRecv, E.MpiIrecv)):
                    received[r] += 1
                elif isinstance(ev, E.MpiCollectiveBegin):
                    begins[r] += 1
    except Exception as e:  # the reader's own failure: otf2_check.py says more
        failures.append("the otf2 Python module cannot read %s: %s: %s" % (anchor, type(e).__name__, e))

    # (e) the one profile of the job: cubex_check.py accepts it; per rank the visits of every MPI
    # function (summed over its call paths and the rank's threads) equal the program's calls;
    # bytes_sent/bytes_received exist when the program sent messages.
    profile = os.path.join(exp, "profile.cubex")
    visits = collections.defaultdict(collections.Counter)
    if not os.path.isfile(profile):
        failures.append("the run wrote no %s; the job's profile is missing" % profile)
    elif a.shared_tools:
        cmd = ["/usr/bin/python3", os.path.join(a.shared_tools, "cubex_check.py"), profile, "--dump"]
        if sum(s for s, _ in messages.values()) > 0:
            cmd += ["--expect-metric", "bytes_sent", "--expect-metric", "bytes_received"]
        for m in metric_names:
            cmd += ["--expect-metric", m.replace("-", "_")]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "(no output)"
        print("---- cubex_check.py ----\n" + last)
        if p.returncode != 0:
            failures.append("cubex_check.py rejects the profile (exit status %d): %s" % (p.returncode, last))
        for line in p.stdout.splitlines():
            m = re.match(r"^visits \(EXCLUSIVE\)\s+\d+\s+(\S+)\s+\d+ \(MPI Rank (\d+) / [^)]*\)\s+(\d+)$", line)
            if m and m.group(1).split("/")[-1].startswith("MPI_"):
                visits[int(m.group(2))][m.group(1).split("/")[-1]] += int(m.group(3))
        for r in range(a.np):
            for fn in sorted(set(calls[r]) | set(visits[r])):
                if visits[r][fn] != calls[r][fn]:
                    failures.append("rank %d: the profile has %d visits of %s, the program made %d calls"
                                    % (r, visits[r][fn], fn, calls[r][fn]))

    # (f) prof-score reads the job's profile: its MPI group holds every MPI call of every rank.
    prof_score = os.path.join(a.bin_dir, "prof-score")
    if os.path.isfile(profile):
        p = subprocess.run([prof_score, "--json", exp], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            failures.append("prof-score --json %s failed (status %d): %s" % (exp, p.returncode, p.stderr.strip()[:200]))
        else:
            import json
            groups = {g["name"]: g for g in json.loads(p.stdout).get("groups", [])}
            want = sum(sum(c.values()) for c in calls.values())
            got = groups.get("MPI", {}).get("visits")
            if got != want:
                failures.append("prof-score: the MPI group has %s visits, the program made %d MPI calls" % (got, want))

    if a.metrics:
        for what, n in sorted(metric_problems.items()):
            failures.append("(g) %s (%d times)" % (what, n))
        if metric_events == 0:
            failures.append("(g) the trace has no Metric events although %s were recorded" % ", ".join(metric_names))
    n_checked = 0
    for r in range(a.np):
        for fn in sorted(set(calls[r]) | set(enters[r])):
            n_checked += 1
            if enters[r][fn] != calls[r][fn]:
                failures.append("rank %d: the trace has %d Enter events of %s, the program made %d calls"
                                % (r, enters[r][fn], fn, calls[r][fn]))
            elif master_enters[r][fn] != main_calls[r][fn]:
                failures.append("rank %d: the master location %d has %d Enter events of %s, the program's main thread "
                                "made %d calls (the others are on the rank's other threads)"
                                % (r, r, master_enters[r][fn], fn, main_calls[r][fn]))
        want_sent, want_received = messages[r]
        if sent[r] != want_sent:
            failures.append("rank %d: the trace has %d MpiSend+MpiIsend events, the program sent %d messages"
                            % (r, sent[r], want_sent))
        if received[r] != want_received:
            failures.append("rank %d: the trace has %d MpiRecv+MpiIrecv events, the program received %d messages"
                            % (r, received[r], want_received))
        if begins[r] != collectives[r]:
            failures.append("rank %d: the trace has %d MpiCollectiveBegin events, the program made %d blocking collective calls"
                            % (r, begins[r], collectives[r]))

    if failures:
        for f in failures[:MAX_REPORT]:
            print("%s: FAIL: %s" % (name, f))
        if len(failures) > MAX_REPORT:
            print("%s: FAIL: ... and %d more failures" % (name, len(failures) - MAX_REPORT))
        print("%s: files kept in %s" % (name, work))
        sys.exit(1)
    print("%s: PASS: %d ranks, %d (rank, MPI function) Enter counts, %d messages, %d collectives as the program counted"
          % (name, a.np, n_checked, sum(sent.values()), sum(begins.values())))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
