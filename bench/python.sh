#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Python part of the benchmarks (bench/run.sh runs it; alone it refreshes only its section of
# docs/PERFORMANCE.md, between "python:begin" and "python:end"): bench/python_calls.py, a loop of
# calls of a one-line Python function, plain, under cProfile, under sys.setprofile with an empty
# Python callback, and under python3 -m prof (profile mode; trace mode), interleaved repetitions.
# Per variant: ns per call above plain (min and median over the repetitions).
#   bench/python.sh [build-dir] [doc]     knobs: BENCH_REPS (5), BENCH_PY_CALLS (2000000)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
doc=${2:-${BENCH_DOC:-$src/docs/PERFORMANCE.md}}
reps=${BENCH_REPS:-5}
calls=${BENCH_PY_CALLS:-2000000}
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
py=$(sed -n 's/^PROF_PYTHON_EXECUTABLE:INTERNAL=//p' "$build/CMakeCache.txt")
[[ -n $py && -d $build/python/prof ]] || { echo "bench/python.sh: prof's Python adapter is not built in $build (python3-dev missing?)" >&2; exit 0; }
bin=$build/bench/run
mkdir -p "$bin"
out=$bin/python.txt
: >"$out"
exp=$bin/python-exp
for ((r = 1; r <= reps; r++)); do
  for v in plain cprofile setprofile prof_profile prof_trace; do
    rm -rf "$exp"
    case $v in
      plain | cprofile | setprofile) line=$("$py" "$here/python_calls.py" "$calls" "$v") ;;
      prof_profile) line=$(PYTHONPATH=$build/python PROF_EXPERIMENT_DIRECTORY=$exp "$py" -m prof "$here/python_calls.py" "$calls") ;;
      prof_trace) line=$(PYTHONPATH=$build/python PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=256M PROF_EXPERIMENT_DIRECTORY=$exp \
                         "$py" -m prof "$here/python_calls.py" "$calls") ;;
    esac
    echo "$v $line" >>"$out"
  done
done
rm -rf "$exp"
"$py" - "$out" "$doc" "$(date -u +%Y-%m-%d)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" "$calls" "$("$py" --version 2>&1)" <<'PY'
import statistics, sys
data, doc, date, cores, cpu, calls, pyver = sys.argv[1:8]
calls = int(calls)
runs = {}
for line in open(data):
    v, f = line.split()
    runs.setdefault(v, []).append(int(f.split("=")[1]))
plain = runs["plain"]
pmin, pmed = min(plain), statistics.median(plain)
names = {"plain": "plain", "cprofile": "cProfile", "setprofile": "sys.setprofile, empty Python callback",
         "prof_profile": "python3 -m prof (profile)", "prof_trace": "python3 -m prof (trace, 256M: no flush)"}
rows = []
for v in ("plain", "cprofile", "setprofile", "prof_profile", "prof_trace"):
    xs = runs[v]
    rows.append("| %s | %.1f | %.1f | %.1f | %.1f | %.2fx |" % (
        names[v], min(xs) / calls, statistics.median(xs) / calls, (min(xs) - pmin) / calls,
        (statistics.median(xs) - pmed) / calls, statistics.median(xs) / pmed))
cp = (statistics.median(runs["cprofile"]) - pmed) / calls
pp = (statistics.median(runs["prof_profile"]) - pmed) / calls
text = """<!-- python:begin -->
## Python: cost per call of a Python function (issue 16)

%s, %s cores, %s, %s; `bench/python.sh` (%d calls of a one-line function per run, %d
interleaved repetitions; the loop timed inside the script).

| variant | ns/call min | ns/call median | added ns/call (min) | added ns/call (median) | time vs plain (median) |
|---|---|---|---|---|---|
%s

prof's profile mode adds %.1f ns per call against cProfile's %.1f ns (median): %.2f of cProfile's
cost (the goal: at most half). Trace mode also writes an Enter and a Leave per call.
<!-- python:end -->""" % (date, cores, cpu, pyver, calls, len(plain), "\n".join(rows), pp, cp, pp / cp if cp else 0)
print(text)
if doc != "-":
    try:
        s = open(doc).read()
    except FileNotFoundError:
        s = ""
    b, e = s.find("<!-- python:begin -->"), s.find("<!-- python:end -->")
    s = s[:b] + text + s[e + len("<!-- python:end -->"):] if b >= 0 and e >= 0 else s.rstrip("\n") + "\n\n" + text + "\n"
    open(doc, "w").write(s)
PY
