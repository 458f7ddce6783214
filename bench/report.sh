#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# prof-report on a large MPI trace (issue 31: findings and steps over 10^7 events, goal under 10 s
# and under 1 GB): bench/report_mpi.c on 2 ranks, traced without flushes, BENCH_REPORT_ROUNDS
# rounds (default 625,000: about 10^7 events: work(), a ping-pong, an MPI_Allreduce every 100);
# then BENCH_REPS (3) times prof-report --json (the whole report: the scan behind the timeline,
# the findings' wait states, the steps) and prof-report --json --no-trace (the profile alone), with
# their wall time and peak resident memory. Alone it refreshes only its section of
# docs/PERFORMANCE.md ("report:begin" .. "report:end").
#   bench/report.sh [build-dir] [doc]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
doc=${2:-${BENCH_DOC:-$src/docs/PERFORMANCE.md}}
reps=${BENCH_REPS:-3}
rounds=${BENCH_REPORT_ROUNDS:-625000}
bin=$build/bench/run
mkdir -p "$bin"
command -v mpirun >/dev/null || { echo "bench/report.sh: no mpirun here; nothing measured" >&2; exit 0; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
"$build/bin/prof-mpicc" -O2 "$here/report_mpi.c" -o "$bin/report_mpi"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-bench-report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mpirun -np 2 -x PROF_ENABLE_TRACING=true -x PROF_THROTTLE=false -x PROF_TOTAL_MEMORY=512M -x PROF_EXPERIMENT_DIRECTORY="$tmp/e" \
  "$bin/report_mpi" "$rounds" >/dev/null 2>"$tmp/run.err"
out=$bin/report.txt
: >"$out"
for ((r = 1; r <= reps; r++)); do
  for variant in full profile; do
    flags=--json
    [ $variant = profile ] && flags="--json --no-trace"
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$build/bin/prof-report" $flags "$tmp/e" >"$tmp/report.json"
    read -r secs kib <"$tmp/time"
    echo "variant=$variant rep=$r s=$secs rss_kib=$kib" | tee -a "$out"
  done
done
/usr/bin/python3 - "$out" "$doc" "$here" "$tmp/report.json" "$tmp/e" <<'PY'
import collections, datetime, json, os, statistics, subprocess, sys
out, doc, here, last, exp = sys.argv[1:6]
sys.path.insert(0, here)
from doc_section import put_section
rows = collections.defaultdict(lambda: {"s": [], "rss": []})
for line in open(out):
    kv = dict(f.split("=", 1) for f in line.split())
    rows[kv["variant"]]["s"].append(float(kv["s"]))
    rows[kv["variant"]]["rss"].append(int(kv["rss_kib"]) / 1024)
full = subprocess.run([os.path.join(os.path.dirname(here), "build", "bin", "prof-report"), "--json", exp], capture_output=True, text=True)
d = json.loads(full.stdout) if full.returncode == 0 else {"run": {}, "findings": []}
events = d["run"].get("trace_events", 0)
cpu = subprocess.run("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2", shell=True, capture_output=True, text=True).stdout.strip()
t = ["<!-- report:begin (bench/report.sh writes this section) -->",
     "## prof-report on a large MPI trace: findings and steps (issue 31)", "",
     "%s, %s, %d CPUs; bench/report_mpi.c on 2 ranks, %s trace events; %d repetitions; min / median." % (
         datetime.date.today().isoformat(), cpu, os.cpu_count(), "{:,}".format(int(events)), len(rows["full"]["s"])),
     "", "| prof-report | wall s | peak memory MB (max) |", "|---|---:|---:|"]
for v, label in (("full", "--json (trace: timeline, messages, wait states, steps; profile)"), ("profile", "--json --no-trace (profile only)")):
    r = rows[v]
    t.append("| %s | %.2f / %.2f | %.0f |" % (label, min(r["s"]), statistics.median(r["s"]), max(r["rss"])))
t += ["", "Findings in that report: " + "; ".join("%s %.2f s" % (f["kind"], f["seconds"]) for f in d["findings"]) + ".",
      "Goal (issue 31): under 10 s and under 1 GB for 10^7 events.", "<!-- report:end -->"]
put_section(doc, "report", "\n".join(t))
print("\n".join(t))
PY
