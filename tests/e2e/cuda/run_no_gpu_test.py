#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A CUDA program built with prof-wrap nvcc, run where there may be no GPU (CI has none).

  run_no_gpu_test.py --prof-wrap PATH --lib-dir DIR --src no_gpu.cu --workdir DIR
                     [--shared-tools DIR] [--nvcc PATH]

The program (no_gpu.cu) does its work in instrumented host functions, asks cudaGetDeviceCount,
prints its error and exits 0; it prints "PROF_EXPECT <function> <calls>". Run with
PROF_ENABLE_TRACING=true, checked:
  * exit status 0 (a signal is a crash of the CUDA adapter or of prof);
  * stderr: at most one line "prof: ..." that mentions CUDA (the adapter may say in one line that
    it found no GPU or driver); no other prof warning or error;
  * the trace passes otf2_check.py, otf2-print writes nothing to stderr, and the Enter events of
    every PROF_EXPECT function (by short name) equal its calls;
  * profile.cubex passes cubex_check.py, and the visits of every PROF_EXPECT function equal its calls.
Exit status 0 all pass, 1 a failure (one line each), 77 skipped: no nvcc, or prof was built without
the CUDA adapter (no libprof_cuda.so).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

NAME = "e2e_cuda_no_gpu"
RUN_TIMEOUT = 120


def say(msg):
    print("%s: %s" % (NAME, msg))


def skip(msg):
    say("SKIP: " + msg)
    sys.exit(77)


def find_nvcc(given):
    for c in (given, shutil.which("nvcc"), os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "bin", "nvcc"),
              "/usr/local/cuda/bin/nvcc"):
        if c and os.access(c, os.X_OK):
            return c
    return None


def short(name):
    s = re.sub(r"\(.*\)\s*(const)?$", "", name or "")
    return s.split()[-1].split("::")[-1] if s.split() else s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prof-wrap", required=True)
    ap.add_argument("--lib-dir", required=True, help="prof's library directory (libprof_cuda.so)")
    ap.add_argument("--src", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--shared-tools", default="")
    ap.add_argument("--nvcc", default="")
    a = ap.parse_args()

    nvcc = find_nvcc(a.nvcc)
    if nvcc is None:
        skip("nvcc not found (CUDA toolkit not installed)")
    if not os.path.exists(os.path.join(a.lib_dir, "libprof_cuda.so")):
        skip("%s/libprof_cuda.so does not exist: prof was built without the CUDA adapter" % a.lib_dir)
    work = os.path.join(a.workdir, NAME)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []

    def fail_now(msg, details=""):
        if details:
            print(details.rstrip())
        say("FAIL: " + msg)
        say("files kept in %s" % work)
        sys.exit(1)

    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    env["PATH"] = os.path.dirname(nvcc) + os.pathsep + env.get("PATH", "")

    # Build.
    exe = os.path.join(work, "no_gpu")
    cmd = [a.prof_wrap, "nvcc", "-O2", a.src, "-o", exe]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode != 0:
        fail_now("%s exited with status %d" % (" ".join(cmd), p.returncode), p.stdout)
    p = subprocess.run(["readelf", "-d", exe], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
    if "libprof_cuda" not in p.stdout:
        say("note: the program does not link libprof_cuda.so (prof-wrap nvcc did not add the CUDA adapter)")

    # Run.
    exp = os.path.join(work, "exp")
    env.update(PROF_ENABLE_TRACING="true", PROF_EXPERIMENT_DIRECTORY=exp)
    try:
        p = subprocess.run([exe], env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        fail_now("the program did not end within %d s under the measurement (a hang in the CUDA adapter?)" % RUN_TIMEOUT)
    log = "---- stdout ----\n%s---- stderr ----\n%s" % (p.stdout, p.stderr)
    print(log.rstrip())
    if p.returncode < 0:
        fail_now("the program was killed by signal %d under the measurement: a crash" % -p.returncode)
    if p.returncode != 0:
        fail_now("the program exited with status %d under the measurement, 0 without it" % p.returncode)
    prof_lines = [l for l in p.stderr.splitlines() if re.match(r"^prof(\[[^]]*\])?:", l)]
    cuda_lines = [l for l in prof_lines if re.search(r"CUDA|CUPTI|GPU|cuda", l)]
    if len(cuda_lines) > 1:
        failures.append("%d prof lines about CUDA on stderr, at most one expected: %s" % (len(cuda_lines), " | ".join(cuda_lines)))
    for l in prof_lines:
        if l not in cuda_lines and re.match(r"^prof(\[[^]]*\])?: (error|warning)", l):
            failures.append("prof reported: %s" % l)
    expect = collections.Counter()
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == "PROF_EXPECT":
            expect[f[1]] += int(f[2])
    if not expect:
        fail_now("the program printed no PROF_EXPECT lines")

    # The trace.
    anchor = os.path.join(exp, "traces.otf2")
    if not os.path.isfile(anchor):
        fail_now("no trace %s" % anchor)
    if a.shared_tools:
        p = subprocess.run(["/usr/bin/python3", os.path.join(a.shared_tools, "otf2_check.py"), anchor],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        last = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
        print("---- otf2_check.py ----\n" + last)
        if p.returncode != 0:
            failures.append("otf2_check.py rejects the trace: %s" % last)
    otf2_print = os.environ.get("OTF2_PRINT") or shutil.which("otf2-print")
    if otf2_print is None:
        failures.append("otf2-print is not installed (apt-get install otf2-tools)")
    else:
        p = subprocess.run([otf2_print, anchor], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0 or p.stderr.strip():
            failures.append("otf2-print exited with status %d, stderr: %s" % (p.returncode, p.stderr.strip()[:200]))
    try:
        import otf2
        enters = collections.Counter()
        with otf2.reader.open(anchor) as trace:
            for _, ev in trace.events:
                if isinstance(ev, otf2.events.Enter):
                    enters[short(ev.region.name)] += 1
        for fn, n in sorted(expect.items()):
            if enters[fn] != n:
                failures.append("the trace has %d Enter events of %s, the program made %d calls" % (enters[fn], fn, n))
    except ImportError as e:
        failures.append("the otf2 Python module cannot be imported (%s); run with /usr/bin/python3 (python3-otf2)" % e)
    except Exception as e:
        failures.append("the otf2 Python module cannot read the trace: %s: %s" % (type(e).__name__, e))

    # The profile.
    cube = os.path.join(exp, "profile.cubex")
    if not os.path.isfile(cube):
        failures.append("no profile %s" % cube)
    elif a.shared_tools:
        p = subprocess.run(["/usr/bin/python3", os.path.join(a.shared_tools, "cubex_check.py"), cube, "--dump"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        out = p.stdout.strip().splitlines()
        last = out[-1] if out else "(no output)"
        print("---- cubex_check.py ----\n" + last)
        if p.returncode != 0:
            failures.append("cubex_check.py rejects the profile: %s" % last)
        visits = collections.Counter()
        for line in out:
            m = re.match(r"^visits \(EXCLUSIVE\)\s+\d+\s+(.+?)\s+\d+ \(.*\)\s+(\d+)$", line)
            if m:
                visits[short(m.group(1).split("/")[-1])] += int(m.group(2))
        for fn, n in sorted(expect.items()):
            if visits[fn] != n:
                failures.append("the profile has %d visits of %s, the program made %d calls" % (visits[fn], fn, n))

    if failures:
        for f in failures:
            say("FAIL: " + f)
        say("files kept in %s" % work)
        sys.exit(1)
    say("PASS: exit 0, %d prof line(s) about CUDA, %s as the program counted in trace and profile"
        % (len(cuda_lines), ", ".join("%s x%d" % kv for kv in sorted(expect.items()))))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
