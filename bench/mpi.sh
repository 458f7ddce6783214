#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The MPI part of the benchmarks (bench/run.sh runs it at its end; alone it refreshes only its
# section of docs/PERFORMANCE.md, between the "mpi:begin" and "mpi:end" markers):
#   - wrapper cost: bench/mpi_calls.c on 2 ranks, built plain (mpicc) and with prof-mpicc,
#     profiling and tracing, interleaved repetitions; ns per MPI_Comm_rank call and per
#     zero-byte ping-pong, min and median, and the difference to plain;
#   - unification and profile merge time at 2..32 ranks (oversubscribed): bench/mpi_unify.c, the
#     times prof reports with PROF_VERBOSE=1 (rank 0), min and median.
#   bench/mpi.sh [build-dir] [doc]    knobs: BENCH_REPS (7), BENCH_MPI_CALLS (200000),
#                                     BENCH_MPI_RANKS ("2 4 8 16 32")
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
doc=${2:-${BENCH_DOC:-$src/docs/PERFORMANCE.md}}
reps=${BENCH_REPS:-7}
calls=${BENCH_MPI_CALLS:-200000}
ranks=${BENCH_MPI_RANKS:-2 4 8 16 32}
die() { echo "bench/mpi.sh: $*" >&2; exit 1; }
command -v mpicc >/dev/null && command -v mpirun >/dev/null || die "mpicc/mpirun not found (Debian: libopenmpi-dev openmpi-bin)"
[[ -x $build/bin/prof-mpicc && -e $build/lib/libprof_mpi.so ]] || die "$build has no prof-mpicc/libprof_mpi.so; build prof with MPI"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
bin=$build/bench/run
mkdir -p "$bin"
mpicc -O2 "$here/mpi_calls.c" -o "$bin/mpi_calls_plain"
"$build/bin/prof-mpicc" -O2 "$here/mpi_calls.c" -o "$bin/mpi_calls_prof"
"$build/bin/prof-mpicc" -O2 "$here/mpi_unify.c" -o "$bin/mpi_unify"
run=(mpirun --allow-run-as-root --oversubscribe -q)
results=$bin/mpi_results.txt
: >"$results"
echo "== MPI wrapper cost: $reps interleaved repetitions, $calls calls" >&2
for ((i = 0; i < reps; i++)); do
  for variant in plain profiling tracing; do
    exe=$bin/mpi_calls_prof env=()
    [[ $variant == plain ]] && exe=$bin/mpi_calls_plain
    [[ $variant == tracing ]] && env=(-x PROF_ENABLE_TRACING=true)
    out=$("${run[@]}" -np 2 -x PROF_EXPERIMENT_DIRECTORY="$bin/mpi_exp" "${env[@]}" "$exe" "$calls")
    echo "$out" | awk -v v=$variant '{print "calls", v, $1, $2}' >>"$results"
    rm -rf "$bin/mpi_exp"*
  done
done
echo "== unification: $reps repetitions at ranks $ranks" >&2
for ((i = 0; i < reps; i++)); do
  for n in $ranks; do
    err=$("${run[@]}" -np "$n" -x PROF_EXPERIMENT_DIRECTORY="$bin/mpi_exp" -x PROF_ENABLE_TRACING=true -x PROF_VERBOSE=1 \
      -x PROF_TOTAL_MEMORY=8M "$bin/mpi_unify" 2>&1 >/dev/null)
    echo "$err" | sed -n 's/^prof: rank 0: unification: \([0-9]*\) processes, \([0-9]*\) regions, \([0-9]*\) communicators in \([0-9.]*\) ms; rank 0 received \([0-9]*\) bytes, the merged definitions are \([0-9]*\) bytes$/unify \1 \2 \3 \4 \5 \6/p' >>"$results"
    echo "$err" | sed -n 's/^prof: rank 0: profile merge: \([0-9]*\) call paths, \([0-9]*\) locations in \([0-9.]*\) ms$/merge '"$n"' \1 \2 \3/p' >>"$results"
    rm -rf "$bin/mpi_exp"*
  done
done
machine="$(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(mpirun --version | head -1)"
section=$(python3 - "$results" "$reps" "$calls" "$machine" <<'PYEOF'
import statistics, sys, datetime
rows = [l.split() for l in open(sys.argv[1])]
reps, calls, machine = sys.argv[2], sys.argv[3], sys.argv[4]
calls_t = {}
for r in rows:
    if r[0] == "calls": calls_t.setdefault((r[1], r[2]), []).append(float(r[3]))
def mm(v): return (min(v), statistics.median(v)) if v else (float("nan"), float("nan"))
out = ["<!-- mpi:begin (bench/mpi.sh) -->", "## MPI (issue #5)", "",
       f"{datetime.date.today().isoformat()}, {machine}. `bench/mpi_calls.c` on 2 ranks, {calls} `MPI_Comm_rank` calls and "
       f"{int(calls)//10} zero-byte ping-pongs per run, {reps} interleaved repetitions; built with `mpicc -O2` (plain) and "
       "`prof-mpicc -O2` (the GCC plugin, the MPI adapter).", "",
       "| variant | MPI_Comm_rank ns min | median | + over plain (min) | ping-pong ns min | median | + over plain (min) |",
       "|---|---:|---:|---:|---:|---:|---:|"]
base_r = mm(calls_t.get(("plain", "comm_rank_ns"), []))
base_p = mm(calls_t.get(("plain", "pingpong_ns"), []))
for v in ("plain", "profiling", "tracing"):
    r = mm(calls_t.get((v, "comm_rank_ns"), []))
    p = mm(calls_t.get((v, "pingpong_ns"), []))
    out.append(f"| {v} | {r[0]:.1f} | {r[1]:.1f} | {r[0]-base_r[0]:+.1f} | {p[0]:.0f} | {p[1]:.0f} | {p[0]-base_p[0]:+.0f} |")
out += ["", "A ping-pong is 4 wrapped calls (Send and Recv on both ranks) with their message events.", "",
        "Unification (`bench/mpi_unify.c`: 72 functions per rank, 64 shared, 8 by parity, one split communicator; "
        "tracing and profiling on; oversubscribed on this machine's cores), the times rank 0 reports with `PROF_VERBOSE=1`:", "",
        "| ranks | regions | communicators | definitions unified, ms min | median | rank 0 received, KiB | merged definitions, KiB | call paths | locations | profile merged, ms min | median |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
uni, mer = {}, {}
for r in rows:
    if r[0] == "unify": uni.setdefault(int(r[1]), []).append((int(r[2]), int(r[3]), float(r[4]), int(r[5]), int(r[6])))
    if r[0] == "merge": mer.setdefault(int(r[1]), []).append((int(r[2]), int(r[3]), float(r[4])))
for n in sorted(set(uni) | set(mer)):
    u = uni.get(n, []); m = mer.get(n, [])
    um = mm([x[2] for x in u]); me = mm([x[2] for x in m])
    out.append(f"| {n} | {u[0][0] if u else '-'} | {u[0][1] if u else '-'} | {um[0]:.1f} | {um[1]:.1f} | "
               f"{u[0][3] / 1024 if u else float('nan'):.1f} | {u[0][4] / 1024 if u else float('nan'):.1f} | "
               f"{m[0][0] if m else '-'} | {m[0][1] if m else '-'} | {me[0]:.1f} | {me[1]:.1f} |")
out += ["", "Unification is a tree reduction (log2 P steps); rank 0 holds the union of the definitions and, for the profile, "
        "every location's values (the file it writes holds them anyway). Memory: rank 0 receives one merged set per step "
        "(\"rank 0 received\": the sum, which grows with the locations of all ranks, since the global definitions list "
        "them, while the regions are shared), and holds the union (\"merged definitions\"); no process holds more. With more "
        "ranks than cores the times here are dominated by oversubscription (each step waits for descheduled processes), "
        "not by the merging itself.",
        "<!-- mpi:end -->"]
print("\n".join(out))
PYEOF
)
echo "$section"
if [[ $doc != "-" ]]; then
  python3 - "$doc" "$section" <<'PYEOF'
import sys, re
path, section = sys.argv[1], sys.argv[2]
try:
    text = open(path).read()
except FileNotFoundError:
    text = ""
if "<!-- mpi:begin" in text:
    text = re.sub(r"<!-- mpi:begin.*?<!-- mpi:end -->", lambda m: section, text, flags=re.S)
else:
    text = text.rstrip("\n") + "\n\n" + section + "\n"
open(path, "w").write(text)
PYEOF
  echo "bench/mpi.sh: wrote its section of $doc" >&2
fi
