#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Python part of the benchmarks (bench/run.sh runs it; alone it refreshes only its section of
# docs/PERFORMANCE.md, between "python:begin" and "python:end"): bench/python_calls.py, a loop of
# calls of a one-line Python function, plain, under cProfile, under sys.setprofile with an empty
# Python callback, and under python3 -m prof (profile mode; trace mode), interleaved repetitions,
# for the Python prof's package is built for (PyEval_SetProfile up to 3.11) and the first further
# one (PROF_EXTRA_PYTHONS; sys.monitoring from 3.12). Per variant: ns per call above plain (min
# and median over the repetitions).
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
extra=$(sed -n 's/^PROF_EXTRA_PYTHONS_BUILT:INTERNAL=//p' "$build/CMakeCache.txt" | cut -d';' -f1)
pythons=("$py")
[[ -n $extra ]] && pythons+=("$extra")
bin=$build/bench/run
mkdir -p "$bin"
out=$bin/python.txt
: >"$out"
exp=$bin/python-exp
for ((r = 1; r <= reps; r++)); do
  for p in "${pythons[@]}"; do
    ver=$("$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    for v in plain cprofile setprofile prof_profile prof_trace; do
      rm -rf "$exp"
      case $v in
        plain | cprofile | setprofile) line=$("$p" "$here/python_calls.py" "$calls" "$v") ;;
        prof_profile) line=$(PYTHONPATH=$build/python PROF_EXPERIMENT_DIRECTORY=$exp "$p" -m prof "$here/python_calls.py" "$calls") ;;
        prof_trace) line=$(PYTHONPATH=$build/python PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=256M PROF_EXPERIMENT_DIRECTORY=$exp \
                           "$p" -m prof "$here/python_calls.py" "$calls") ;;
      esac
      echo "$ver $v $line" >>"$out"
    done
  done
done
rm -rf "$exp"
timer=$(PROF_VERBOSE=1 PROF_EXPERIMENT_DIRECTORY=$exp PYTHONPATH=$build/python "$py" -m prof "$here/python_calls.py" 10 2>&1 | sed -n 's/^prof: timer: //p' | head -1)
rm -rf "$exp"
"$py" - "$out" "$doc" "$(date -u +%Y-%m-%d)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" "$calls" "$timer" "$here" <<'PY'
import statistics, sys
data, doc, date, cores, cpu, calls, timer, bench = sys.argv[1:9]
calls = int(calls)
runs = {}
for line in open(data):
    ver, v, f = line.split()
    runs.setdefault(ver, {}).setdefault(v, []).append(int(f.split("=")[1]))
names = {"plain": "plain", "cprofile": "cProfile", "setprofile": "sys.setprofile, empty Python callback",
         "prof_profile": "python3 -m prof (profile)", "prof_trace": "python3 -m prof (trace, 256M: no flush)"}
tables, summary = [], []
for ver in sorted(runs, key=lambda s: tuple(int(x) for x in s.split("."))):
    r = runs[ver]
    plain = r["plain"]
    pmin, pmed = min(plain), statistics.median(plain)
    how = "sys.monitoring" if tuple(int(x) for x in ver.split(".")) >= (3, 12) else "PyEval_SetProfile"
    rows = ["| %s | %.1f | %.1f | %.1f | %.1f | %.2fx |" % (
        names[v], min(r[v]) / calls, statistics.median(r[v]) / calls, (min(r[v]) - pmin) / calls,
        (statistics.median(r[v]) - pmed) / calls, statistics.median(r[v]) / pmed)
        for v in ("plain", "cprofile", "setprofile", "prof_profile", "prof_trace")]
    tables.append("Python %s (prof through %s):\n\n| variant | ns/call min | ns/call median | added ns/call (min) | "
                  "added ns/call (median) | time vs plain (median) |\n|---|---|---|---|---|---|\n%s" % (ver, how, "\n".join(rows)))
    cp = (statistics.median(r["cprofile"]) - pmed) / calls
    pp = (statistics.median(r["prof_profile"]) - pmed) / calls
    summary.append("Python %s: prof's profile mode adds %.1f ns per call against cProfile's %.1f ns (median), %.2f of "
                   "cProfile's cost" % (ver, pp, cp, pp / cp if cp else 0))
text = """<!-- python:begin -->
## Python: cost per call of a Python function (issue 16)

%s, %s cores, %s; `bench/python.sh` (%d calls of a one-line function per run, %d
interleaved repetitions; the loop timed inside the script); prof's timer: %s.

%s

%s (the goal: at most half). Trace mode also writes an Enter and a Leave per call. Both tools read
the clock twice per call (prof: its timer above; cProfile: `time.perf_counter`).
<!-- python:end -->""" % (date, cores, cpu, calls, len(runs[sorted(runs)[0]]["plain"]), timer, "\n\n".join(tables), ";\n".join(summary))
print(text)
sys.path.insert(0, bench)
from doc_section import put_section
put_section(doc, "python", text)
PY
