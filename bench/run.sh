#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# THE benchmark script of prof (see docs/PERFORMANCE.md, which it rewrites; its MPI section comes
# from bench/mpi.sh, which it runs at the end, and so on: sampling.sh, metrics.sh, openmp.sh, export.sh,
# report.sh, stop.sh, python.sh, cuda.sh).
#
#   bench/run.sh [build-dir]          build-dir: default <repo>/build; a relative path is
#                                     taken from the current directory
#
# It builds libprof, libprof-nop and prof-wrap in build-dir (configuring it first if needed),
# builds the programs of bench/ in <build-dir>/bench/run, runs every variant side by side,
# interleaved (a,b,c,...,a,b,c,...) for BENCH_REPS repetitions, prints a table and writes
# docs/PERFORMANCE.md. The machine is shared and noisy: compare the rows of one run, and read
# differences and ratios, not absolute figures.
#
# Knobs (environment):
#   BENCH_REPS=7               repetitions of every variant (at least 5 for the document)
#   BENCH_CALLS=10000000       calls per run for plain, nop and prof
#   BENCH_UFTRACE_CALLS=1000000  calls per run under uftrace (it is slower)
#   BENCH_DEPTH=64             recursion depth of the "recurse" workload
#   BENCH_MUTEX_PAIRS=1000000  lock+unlock pairs per mutex run
#   BENCH_DOC=<repo>/docs/PERFORMANCE.md   where the report goes ("-": nowhere)
#   CC=gcc CXX=g++             the compilers of every variant (always -O2 -g)
#   BENCH_ACC="400 20"         particles and steps of the accessor-heavy C++ kernel
#   PROF_BENCH_SKIP_BUILD=1    do not run cmake --build (the "bench" CMake target sets it)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
case $build in /*) ;; *) build=$PWD/$build ;; esac

reps=${BENCH_REPS:-7}
calls=${BENCH_CALLS:-10000000}
ucalls=${BENCH_UFTRACE_CALLS:-1000000}
depth=${BENCH_DEPTH:-64}
pairs=${BENCH_MUTEX_PAIRS:-1000000}
doc=${BENCH_DOC:-$src/docs/PERFORMANCE.md}
cc=${CC:-gcc}
cxx=${CXX:-g++}
read -r acc_n acc_steps <<<"${BENCH_ACC:-400 20}"
cflags=(-O2 -g)   # prof-wrap adds -g to its builds; -g everywhere keeps the code identical

die() { echo "bench/run.sh: $*" >&2; exit 1; }
note() { echo "== $*" >&2; }

for tool in cmake "$cc" pkg-config python3 uftrace; do
  command -v "$tool" >/dev/null || die "'$tool' not found (uftrace: the Debian package 'uftrace')"
done
[[ $(uname -m) == x86_64 ]] || note "not x86_64: the rdtsc row stays empty"

# ---------------------------------------------------------------- build
if [[ ! -f $build/CMakeCache.txt ]]; then
  note "configuring $build (RelWithDebInfo)"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
if [[ -z ${PROF_BENCH_SKIP_BUILD:-} ]]; then
  note "building prof, prof-nop, prof-wrap in $build"
  cmake --build "$build" -j"$(nproc)" --target prof prof-nop prof-wrap >&2
  cmake --build "$build" -j"$(nproc)" --target prof_gcc_plugin prof-score >&2 || note "no GCC plugin target: the plugin rows stay empty"
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
case $build_type in
  Release | RelWithDebInfo) ;;
  *) note "warning: $build is a '${build_type:-no type}' build; figures of an unoptimised libprof mean little" ;;
esac
wrap=$build/bin/prof-wrap
[[ -x $wrap && -e $build/lib/libprof.so && -e $build/lib/libprof-nop.so ]] || die "no prof-wrap/libprof/libprof-nop in $build"

# The runs set every PROF_* variable they need; none may come from the caller's environment.
while read -r v; do unset "$v"; done < <(compgen -e | grep '^PROF_' || true)

bin=$build/bench/run
mkdir -p "$bin"
note "building the benchmark programs in $bin"
"$cc" "${cflags[@]}" "$here/calls.c" -o "$bin/calls_plain"
"$cc" "${cflags[@]}" -finstrument-functions "$here/calls.c" -o "$bin/calls_nop" \
  -L"$build/lib" -Wl,-rpath,"$build/lib" -lprof-nop
"$wrap" --instrument=functions "$cc" "${cflags[@]}" "$here/calls.c" -o "$bin/calls_prof"
# The GCC plugin's handle path, where the plugin exists and fits the compiler.
have_plugin=0
if "$wrap" --instrument=plugin "$cc" "${cflags[@]}" "$here/calls.c" -o "$bin/calls_plugin" 2>"$bin/plugin.err"; then
  have_plugin=1
else
  note "no GCC plugin: $(cat "$bin/plugin.err")"
fi
# The accessor-heavy C++ kernel: plain, -finstrument-functions + prof, plugin + prof.
"$cxx" "${cflags[@]}" "$here/accessors.cpp" -o "$bin/acc_plain"
"$wrap" --instrument=functions "$cxx" "${cflags[@]}" "$here/accessors.cpp" -o "$bin/acc_functions"
((have_plugin)) && "$wrap" --instrument=plugin "$cxx" "${cflags[@]}" "$here/accessors.cpp" -o "$bin/acc_plugin"
"$cc" "${cflags[@]}" -pg "$here/calls.c" -o "$bin/calls_pg"
# shellcheck disable=SC2046  # pkg-config output is a list of words
"$cc" "${cflags[@]}" "$here/otf2_raw.c" -o "$bin/otf2_raw" $(pkg-config --cflags --libs otf2)
"$cc" "${cflags[@]}" -pthread "$here/mutex.c" -o "$bin/mutex_plain"
"$wrap" --instrument=functions "$cc" "${cflags[@]}" -pthread "$here/mutex.c" -o "$bin/mutex_prof"

# ---------------------------------------------------------------- running
tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-bench.XXXXXX")
# The traces of the write-out comparison go to tmpfs where there is one: the disk's page cache
# would otherwise decide (its copy was more than half of the write-out, run to run 0.3 to 1.1 s).
otmp=$tmp
if [[ -d /dev/shm && -w /dev/shm ]]; then otmp=$(mktemp -d /dev/shm/prof-bench.XXXXXX); fi
trap 'rm -rf "$tmp" "$otmp"' EXIT
results=$tmp/results.tsv   # bench variant mode rep calls loop_ns wall_ns writeout_ns events inproc_ns
problems=$tmp/problems.txt
: >"$results"
: >"$problems"

# Enough for 2 records (32 bytes) per call plus slack, and never below 2G: no flush may happen.
mem_mib=$(((calls * 32 * 5 / 4) / 1048576 + 256))
((mem_mib < 2048)) && mem_mib=2048
prof_mem=${mem_mib}M
# Every call measured (PROF_THROTTLE=false): these rows are the cost of recording one call; the
# throttled rows set PROF_THROTTLE=true after them (env takes the last assignment).
prof_common=(PROF_ENABLE_PROFILING=false PROF_THROTTLE=false PROF_VERBOSE=1 "PROF_TOTAL_MEMORY=$prof_mem")

now_ns() { local t=${EPOCHREALTIME/[.,]/}; echo $((10#$t * 1000)); }   # no fork, microseconds

# run BENCH VARIANT REP TRACEDIR -- env/command...: runs it in $tmp, appends one line to $results.
# TRACEDIR (or "-") is removed afterwards, and the page cache is synced before the next run.
run() {
  local bench=$1 variant=$2 rep=$3 tracedir=$4
  shift 5
  local out=$tmp/out err=$tmp/err t0 t1
  t0=$(now_ns)
  if ! (cd "$tmp" && env "$@") >"$out" 2>"$err"; then
    cat "$err" >&2
    die "$bench/$variant failed: $*"
  fi
  t1=$(now_ns)
  local line mode n loop_ns end_rt events=0 writeout=0 inproc=0
  line=$(grep -E '^(mode|pairs|events)=' "$out" | tail -n 1 || true)
  [[ -n $line ]] || { cat "$out" "$err" >&2; die "$bench/$variant printed no result"; }
  mode=$(sed -n 's/.*mode=\([a-z]*\).*/\1/p' <<<"$line")
  n=$(sed -n 's/.*\(calls\|pairs\|events\)=\([0-9]*\).*/\2/p' <<<"$line")
  loop_ns=$(sed -n 's/.*\(loop_ns\|write_ns\)=\([0-9]*\).*/\2/p' <<<"$line")
  end_rt=$(sed -n 's/.*end_realtime_ns=\([0-9]*\).*/\1/p' <<<"$line")
  if grep -q 'trace written:' "$err"; then
    events=$(sed -n 's/.*trace written: .*(\([0-9]*\) events[^)]*).*/\1/p' "$err")
    [[ -n $end_rt ]] && writeout=$((t1 - end_rt))
    inproc=$(sed -n 's/.*trace written: .*took \([0-9]*\) ms).*/\1/p' "$err")
    inproc=$((${inproc:-0} * 1000000))
  fi
  # prof must not complain in any of these runs (flushes at 2G, lost events, errors).
  if grep -E '^prof: .*(warning|error)' "$err" >/dev/null; then
    grep -E '^prof: .*(warning|error)' "$err" | sed "s|^|$bench/$variant rep $rep: |" >>"$problems"
  fi
  if [[ $variant == prof-tracing* && $bench == calls ]]; then
    if [[ -z $events || $events -lt $((2 * n)) ]]; then
      echo "$bench/$variant rep $rep: trace has ${events:-no} events, expected at least $((2 * n))" >>"$problems"
    fi
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$bench" "$variant" "${mode:-$bench}" "$rep" "$n" "$loop_ns" \
    "$((t1 - t0))" "$writeout" "${events:-0}" "$inproc" >>"$results"
  [[ $tracedir != - ]] && rm -rf "$tracedir"
  sync
}

printf 'PROF_REGION_NAMES_BEGIN\n  EXCLUDE tiny rec\nPROF_REGION_NAMES_END\n' >"$tmp/bench.filter"
trace_events=0
note "running $reps interleaved repetitions (calls=$calls, uftrace calls=$ucalls, depth=$depth, mutex pairs=$pairs)"
started=$(date +%s)
load0=$(cut -d" " -f1 /proc/loadavg)
for rep in $(seq 1 "$reps"); do
  note "repetition $rep/$reps"
  for mode in loop recurse; do
    run calls plain "$rep" - -- "$bin/calls_plain" "$mode" "$calls" "$depth"
    run calls nop "$rep" - -- "$bin/calls_nop" "$mode" "$calls" "$depth"
    run calls prof-tracing "$rep" "$otmp/trace" -- PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY="$otmp/trace" \
      "${prof_common[@]}" "$bin/calls_prof" "$mode" "$calls" "$depth"
    [[ $mode == loop ]] && trace_events=$(tail -n 1 "$results" | cut -f9)
    run calls prof-no-tracing "$rep" - -- PROF_ENABLE_TRACING=false "${prof_common[@]}" \
      "$bin/calls_prof" "$mode" "$calls" "$depth"
    # env takes the last assignment of a name: profiling on, after prof_common's off.
    run calls prof-profiling "$rep" "$tmp/profile" -- PROF_ENABLE_TRACING=false "${prof_common[@]}" \
      PROF_ENABLE_PROFILING=true PROF_EXPERIMENT_DIRECTORY="$tmp/profile" "$bin/calls_prof" "$mode" "$calls" "$depth"
    # The called function excluded by a run-time filter, tracing and profiling on.
    run calls prof-filtered "$rep" "$tmp/filtered" -- PROF_ENABLE_TRACING=true "${prof_common[@]}" PROF_ENABLE_PROFILING=true \
      PROF_FILTERING_FILE="$tmp/bench.filter" PROF_EXPERIMENT_DIRECTORY="$tmp/filtered" "$bin/calls_prof" "$mode" "$calls" "$depth"
    # The called function throttled after its first 1024 calls (the default with profiling).
    run calls prof-throttled "$rep" "$tmp/profile" -- PROF_ENABLE_TRACING=false "${prof_common[@]}" PROF_ENABLE_PROFILING=true \
      PROF_THROTTLE=true PROF_EXPERIMENT_DIRECTORY="$tmp/profile" "$bin/calls_prof" "$mode" "$calls" "$depth"
    if ((have_plugin)); then
      run calls prof-plugin-throttled "$rep" "$tmp/profile" -- PROF_ENABLE_TRACING=false "${prof_common[@]}" PROF_ENABLE_PROFILING=true \
        PROF_THROTTLE=true PROF_EXPERIMENT_DIRECTORY="$tmp/profile" "$bin/calls_plugin" "$mode" "$calls" "$depth"
      run calls prof-plugin-filtered "$rep" "$tmp/filtered" -- PROF_ENABLE_TRACING=true "${prof_common[@]}" PROF_ENABLE_PROFILING=true \
        PROF_FILTERING_FILE="$tmp/bench.filter" PROF_EXPERIMENT_DIRECTORY="$tmp/filtered" "$bin/calls_plugin" "$mode" "$calls" "$depth"
      run calls prof-plugin-tracing "$rep" "$tmp/trace" -- PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY="$tmp/trace" \
        "${prof_common[@]}" "$bin/calls_plugin" "$mode" "$calls" "$depth"
      run calls prof-plugin-profiling "$rep" "$tmp/profile" -- PROF_ENABLE_TRACING=false "${prof_common[@]}" \
        PROF_ENABLE_PROFILING=true PROF_EXPERIMENT_DIRECTORY="$tmp/profile" "$bin/calls_plugin" "$mode" "$calls" "$depth"
    fi
    run calls uftrace "$rep" "$tmp/uftrace" -- uftrace record -d "$tmp/uftrace" "$bin/calls_pg" "$mode" "$ucalls" "$depth"
  done
  # For scale: the pieces of one enter+exit pair, 32 bytes of records being one pair's share.
  run scale rdtsc "$rep" - -- "$bin/calls_plain" rdtsc 1000000
  run scale clock_gettime "$rep" - -- "$bin/calls_plain" clock 1000000
  run scale first-touch "$rep" - -- "$bin/calls_plain" touch "$calls"
  # OTF2 write-out: the same number of events as prof's loop trace of this repetition.
  ((trace_events > 0)) || trace_events=$((2 * calls))
  run otf2 raw-bounded "$rep" "$otmp/raw" -- "$bin/otf2_raw" "$trace_events" "$otmp/raw" bounded
  run otf2 raw-default "$rep" "$otmp/raw" -- "$bin/otf2_raw" "$trace_events" "$otmp/raw" default
  # The accessor-heavy kernel in profiling mode (the default), no filter.
  run accessors plain "$rep" - -- "$bin/acc_plain" "$acc_n" "$acc_steps"
  run accessors functions "$rep" "$tmp/acc" -- PROF_EXPERIMENT_DIRECTORY="$tmp/acc" PROF_VERBOSE=1 "$bin/acc_functions" "$acc_n" "$acc_steps"
  ((have_plugin)) && run accessors plugin "$rep" "$tmp/acc" -- PROF_EXPERIMENT_DIRECTORY="$tmp/acc" PROF_VERBOSE=1 "$bin/acc_plugin" "$acc_n" "$acc_steps"
  # pthread mutex wrappers.
  run mutex plain "$rep" - -- "$bin/mutex_plain" "$pairs"
  run mutex prof-create "$rep" "$tmp/trace" -- PROF_PTHREAD_ENABLE=create PROF_ENABLE_TRACING=true \
    PROF_EXPERIMENT_DIRECTORY="$tmp/trace" "${prof_common[@]}" "$bin/mutex_prof" "$pairs"
  run mutex prof-create,mutex-no-tracing "$rep" - -- PROF_PTHREAD_ENABLE=create,mutex PROF_ENABLE_TRACING=false \
    "${prof_common[@]}" "$bin/mutex_prof" "$pairs"
  run mutex prof-create,mutex-tracing "$rep" "$tmp/trace" -- PROF_PTHREAD_ENABLE=create,mutex PROF_ENABLE_TRACING=true \
    PROF_EXPERIMENT_DIRECTORY="$tmp/trace" "${prof_common[@]}" "$bin/mutex_prof" "$pairs"
done
elapsed=$(($(date +%s) - started))
# Hook calls of the kernel: the visits its profile records (prof-score --json, group ALL).
hooks=$tmp/hooks.txt
: >"$hooks"
for v in functions plugin; do
  [[ -x $bin/acc_$v ]] || continue
  (cd "$tmp" && PROF_EXPERIMENT_DIRECTORY="$tmp/acc-$v" "$bin/acc_$v" "$acc_n" "$acc_steps" >/dev/null 2>&1)
  visits=$("$build/bin/prof-score" --json "$tmp/acc-$v" | python3 -c 'import json,sys; print(int(next(g["visits"] for g in json.load(sys.stdin)["groups"] if g["name"] == "ALL")))')
  printf '%s\t%s\n' "$v" "$visits" >>"$hooks"
done
load1=$(cut -d" " -f1 /proc/loadavg)
# Instructions, loads and branches per hook call (valgrind's cachegrind; not a timing).
counts=$tmp/hook_counts.txt
: >"$counts"
if command -v valgrind >/dev/null; then
  note "counting instructions, loads and branches per hook call (cachegrind)"
  "$here/hook_counts.sh" "$bin" >"$counts" || note "bench/hook_counts.sh failed: no counts"
fi
export BENCH_COUNTS=$counts

# ---------------------------------------------------------------- report
machine_cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
machine_cores=$(nproc)
machine_kernel=$(uname -r)
machine_clock=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)
timer=$(PROF_VERBOSE=1 PROF_ENABLE_PROFILING=false "$bin/calls_prof" loop 1 2>&1 >/dev/null | sed -n 's/^prof: timer: //p' | head -n 1)
run_date=$(date -u '+%Y-%m-%d %H:%M UTC')
cc_version=$("$cc" --version | head -n 1)
otf2_version=$(pkg-config --modversion otf2)
uftrace_version=$(uftrace --version 2>/dev/null | head -n 1)
export BENCH_HOOKS=$hooks BENCH_ACC_N=$acc_n BENCH_ACC_STEPS=$acc_steps BENCH_CXX=$("$cxx" --version | head -n 1)
export BENCH_RESULTS=$results BENCH_PROBLEMS=$problems BENCH_DOC_OUT=$doc BENCH_CPU=$machine_cpu \
  BENCH_CORES=$machine_cores BENCH_KERNEL=$machine_kernel BENCH_CLOCKSOURCE=$machine_clock BENCH_TIMER=${timer:-unknown} \
  BENCH_LOAD0=$load0 BENCH_LOAD1=$load1 BENCH_DATE=$run_date BENCH_ELAPSED=$elapsed BENCH_BUILD_TYPE=${build_type:-unset} \
  BENCH_CC=$cc_version BENCH_OTF2=$otf2_version BENCH_UFTRACE=$uftrace_version BENCH_REPS=$reps BENCH_CALLS=$calls \
  BENCH_UCALLS=$ucalls BENCH_DEPTH=$depth BENCH_PAIRS=$pairs BENCH_PROF_MEM=$prof_mem
# The CUDA section is measured on a GPU machine (bench/cuda.sh): kept as it is where there is none.
cuda_block=$( [[ -f $doc ]] && sed -n '/<!-- cuda:begin/,/<!-- cuda:end -->/p' "$doc" || true)
pytorch_block=$( [[ -f $doc ]] && sed -n '/<!-- pytorch:begin/,/<!-- pytorch:end -->/p' "$doc" || true)
python3 - <<'PYEOF'
import os, statistics, sys
from collections import defaultdict

E = os.environ
rows = [l.rstrip("\n").split("\t") for l in open(E["BENCH_RESULTS"]) if l.strip()]
problems = [l.rstrip("\n") for l in open(E["BENCH_PROBLEMS"]) if l.strip()]

# (bench, variant, mode) -> list of dicts
R = defaultdict(list)
for b, v, m, rep, n, loop_ns, wall_ns, wo_ns, ev, inproc_ns in rows:
    R[(b, v, m)].append(dict(n=int(n), loop=int(loop_ns), wall=int(wall_ns), writeout=int(wo_ns), events=int(ev),
                             inproc=int(inproc_ns)))

def per(key, f):
    return [f(x) for x in R[key]]

def mm(xs):
    return (min(xs), statistics.median(xs)) if xs else (float("nan"), float("nan"))

def ns_per(key):
    return mm(per(key, lambda x: x["loop"] / x["n"]))

def fmt(x, d=1):
    return "n/a" if x != x else f"{x:.{d}f}"

def fmt_diff(x, d=1):
    return "n/a" if x != x else f"{x:+.{d}f}"

def table(header, body):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(out)

reps = int(E["BENCH_REPS"])
calls, ucalls, depth, pairs = E["BENCH_CALLS"], E["BENCH_UCALLS"], E["BENCH_DEPTH"], E["BENCH_PAIRS"]

labels = {
    "plain": "(a) plain `gcc -O2`",
    "nop": "(b) `-finstrument-functions` + libprof-nop (empty hooks)",
    "prof-tracing": "(c) prof-wrap `--instrument=functions` (address path), `PROF_ENABLE_TRACING=true`",
    "prof-no-tracing": "(d) prof-wrap, tracing and profiling off (shadow stack only)",
    "prof-profiling": "(f) prof-wrap, `PROF_ENABLE_PROFILING=true`, tracing off (call-path profile)",
    "uftrace": "(e) `gcc -O2 -pg` under `uftrace record`",
    "prof-filtered": "(g) prof-wrap, tracing and profiling on, the called function filtered (`PROF_FILTERING_FILE`)",
    "prof-plugin-tracing": "(h) prof-wrap `--instrument=plugin` (GCC plugin, handle path), tracing",
    "prof-plugin-profiling": "(i) prof-wrap `--instrument=plugin`, profiling",
    "prof-throttled": "(j) prof-wrap `--instrument=functions`, profiling, the called function throttled (`PROF_THROTTLE`, the default)",
    "prof-plugin-throttled": "(k) prof-wrap `--instrument=plugin`, profiling, the called function throttled (the default)",
    "prof-plugin-filtered": "(l) prof-wrap `--instrument=plugin`, tracing and profiling, the called function filtered (`PROF_FILTERING_FILE`)",
}
calls_tables = {}
diff = {}
for mode in ("loop", "recurse"):
    base = ns_per(("calls", "plain", mode))
    body = []
    for v in ("plain", "nop", "prof-tracing", "prof-profiling", "prof-no-tracing", "prof-filtered", "prof-throttled",
              "prof-plugin-tracing", "prof-plugin-profiling", "prof-plugin-throttled", "prof-plugin-filtered", "uftrace"):
        k = ("calls", v, mode)
        if not R[k] and v.startswith("prof-plugin"):
            continue
        lo, med = ns_per(k)
        d = (lo - base[0], med - base[1])
        diff[(v, mode)] = d
        n = R[k][0]["n"] if R[k] else 0
        body.append([labels[v], f"{n:,}", fmt(lo), fmt(med), fmt_diff(d[0]), fmt_diff(d[1])])
    calls_tables[mode] = table(["variant", "calls/run", "ns/call min", "ns/call median",
                                "− plain, min", "− plain, median"], body)

scale = {}
sbody = []
for v, m, what in (("rdtsc", "rdtsc", "two `rdtsc`"),
                   ("clock_gettime", "clock", "two `clock_gettime(CLOCK_MONOTONIC)`"),
                   ("first-touch", "touch", "first write to fresh memory, 32 bytes (one pair's records)")):
    lo, med = ns_per(("scale", v, m))
    scale[v] = (lo, med)
    sbody.append([what, fmt(lo), fmt(med)])
scale_table = table(["per iteration", "ns min", "ns median"], sbody)

# Per hook call: instructions, loads, stores, conditional branches (cachegrind)
cbody = []
for l in open(E["BENCH_COUNTS"]):
    f = l.split()
    if len(f) != 7:
        continue
    prog, mode, hook = f[:3]
    kv = dict(x.split("=") for x in f[3:])
    how = "GCC plugin" if prog == "calls_plugin" else "`-finstrument-functions`"
    cbody.append([f"`{hook}`", how, mode, kv["Ir"], kv["Dr"], kv["Dw"], kv["Bc"]])
counts_table = (table(["hook", "instrumentation", "mode", "instructions", "loads", "stores", "conditional branches"], cbody)
                if cbody else "(not measured: no valgrind on this machine)")

# The accessor-heavy kernel
hooks = dict(l.rstrip("\n").split("\t") for l in open(E["BENCH_HOOKS"]) if l.strip())
acc_base = mm([x["loop"] / 1e6 for x in R[("accessors", "plain", "accessors")]])
alabels = {"plain": "plain `g++ -O2`", "functions": "prof-wrap `--instrument=functions` (`-finstrument-functions`), profiling",
           "plugin": "prof-wrap `--instrument=plugin` (GCC plugin), profiling"}
abody, acc_ratio = [], {}
for v, what in alabels.items():
    xs = R[("accessors", v, "accessors")]
    if not xs:
        continue
    lo, md = mm([x["loop"] / 1e6 for x in xs])
    acc_ratio[v] = (lo / acc_base[0], md / acc_base[1])
    real = xs[0]["n"]
    abody.append([what, f"{real:,}", f"{int(hooks[v]):,}" if v in hooks else "0", fmt(lo), fmt(md),
                  fmt(acc_ratio[v][0], 2) + "×", fmt(acc_ratio[v][1], 2) + "×"])
acc_table = table(["variant", "real calls", "hook pairs (profile visits)", "ms min", "ms median", "÷ plain, min", "÷ plain, median"], abody)
if "plugin" in acc_ratio:
    pr = acc_ratio["plugin"]
    acc_verdict = ("**met**" if pr[1] <= 1.3 else ("**met by the fastest run only**" if pr[0] <= 1.3 else "**missed**")) + \
        f": the plugin build runs at {fmt(pr[0], 2)}× (min) / {fmt(pr[1], 2)}× (median) the plain run"
else:
    acc_verdict = "not measured: no GCC plugin in this build"
if ("prof-plugin-tracing", "loop") in diff:
    hp = {m: (diff[("prof-plugin-tracing", m)], diff[("prof-tracing", m)], diff[("prof-plugin-profiling", m)], diff[("prof-profiling", m)])
          for m in ("loop", "recurse")}
    handle_text = "; ".join(
        f"{m}: tracing {fmt(hp[m][0][0])} / {fmt(hp[m][0][1])} ns with the plugin against {fmt(hp[m][1][0])} / {fmt(hp[m][1][1])} ns "
        f"with `-finstrument-functions`, profiling {fmt(hp[m][2][0])} / {fmt(hp[m][2][1])} against {fmt(hp[m][3][0])} / {fmt(hp[m][3][1])} ns"
        for m in ("loop", "recurse"))
else:
    handle_text = "not measured: no GCC plugin in this build"

# OTF2 write-out
def rates(key, t):
    return [x["events"] / (x[t] / 1e9) for x in R[key] if x[t] > 0 and x["events"] > 0]

pt = ("calls", "prof-tracing", "loop")
prof_wo = [x["writeout"] for x in R[pt]]
prof_ev = R[pt][0]["events"] if R[pt] else 0
prof_rate = [x["events"] / (x["writeout"] / 1e9) for x in R[pt] if x["writeout"] > 0]
prof_wall_per_event = [x["wall"] / x["events"] for x in R[pt] if x["events"]]
prof_in = [x["inproc"] for x in R[pt] if x["inproc"] > 0]
prof_in_rate = [x["events"] / (x["inproc"] / 1e9) for x in R[pt] if x["inproc"] > 0]
raw = {}
obody = []
obody.append(["prof: loop end → process exit (conversion, definitions, close, exit)", f"{prof_ev:,}",
              fmt(min(prof_wo) / 1e6 if prof_wo else float('nan')), fmt(statistics.median(prof_wo) / 1e6 if prof_wo else float('nan')),
              fmt(max(prof_rate) / 1e6 if prof_rate else float('nan'), 2), fmt(statistics.median(prof_rate) / 1e6 if prof_rate else float('nan'), 2)])
obody.append(["prof: final conversion and archive close, in the process (PROF_VERBOSE=1's figure)", f"{prof_ev:,}",
              fmt(min(prof_in) / 1e6 if prof_in else float('nan')), fmt(statistics.median(prof_in) / 1e6 if prof_in else float('nan')),
              fmt(max(prof_in_rate) / 1e6 if prof_in_rate else float('nan'), 2), fmt(statistics.median(prof_in_rate) / 1e6 if prof_in_rate else float('nan'), 2)])
for v, what in (("raw-bounded", "bench/otf2_raw, OTF2 set up as prof does (4 MiB chunks, one per writer)"),
                ("raw-default", "bench/otf2_raw, OTF2's own memory management (malloc, 1 MiB chunks)")):
    k = ("otf2", v, v.split("-")[1])
    xs = R[k]
    ts = [x["loop"] for x in xs]
    rs = [x["n"] / (x["loop"] / 1e9) for x in xs if x["loop"] > 0]
    raw[v] = rs
    obody.append([what, f"{xs[0]['n']:,}" if xs else "n/a",
                  fmt(min(ts) / 1e6 if ts else float('nan')), fmt(statistics.median(ts) / 1e6 if ts else float('nan')),
                  fmt(max(rs) / 1e6 if rs else float('nan'), 2), fmt(statistics.median(rs) / 1e6 if rs else float('nan'), 2)])
otf2_table = table(["writer", "events", "ms min", "ms median", "Mevents/s best", "Mevents/s median"], obody)
med = lambda xs: statistics.median(xs) if xs else float("nan")
ratio_bounded = med(prof_rate) / med(raw["raw-bounded"]) if raw.get("raw-bounded") and prof_rate else float("nan")
ratio_default = med(prof_rate) / med(raw["raw-default"]) if raw.get("raw-default") and prof_rate else float("nan")
ratio_in = med(prof_in_rate) / med(raw["raw-bounded"]) if raw.get("raw-bounded") and prof_in_rate else float("nan")
ratio_in_best = max(prof_in_rate) / max(raw["raw-bounded"]) if raw.get("raw-bounded") and prof_in_rate else float("nan")
wall_lo, wall_med = mm(prof_wall_per_event)

# mutex
mlabels = {
    "plain": "plain `gcc -O2 -pthread` (no prof)",
    "prof-create": "prof, `PROF_PTHREAD_ENABLE=create` (default), tracing on",
    "prof-create,mutex-no-tracing": "prof, `create,mutex`, tracing off",
    "prof-create,mutex-tracing": "prof, `create,mutex`, tracing on (regions + lock events)",
}
mbase = ns_per(("mutex", "plain", "mutex"))
mbody = []
mdiff = {}
for v in mlabels:
    lo, md = ns_per(("mutex", v, "mutex"))
    mdiff[v] = (lo - mbase[0], md - mbase[1])
    mbody.append([mlabels[v], fmt(lo), fmt(md), fmt_diff(lo - mbase[0]), fmt_diff(md - mbase[1])])
mutex_table = table(["variant", "ns/pair min", "ns/pair median", "− plain, min", "− plain, median"], mbody)

# ------------------------------------------------------------ what this means
def both(pair, d=1, unit=" ns"):
    return f"{fmt(pair[0], d)}{unit} (min) / {fmt(pair[1], d)}{unit} (median)"

target = 40.0
tr2, trr2 = diff[("prof-tracing", "loop")], diff[("prof-tracing", "recurse")]
nt2, nop2 = diff[("prof-no-tracing", "loop")], diff[("nop", "loop")]
uf2, ufr2 = diff[("uftrace", "loop")], diff[("uftrace", "recurse")]
tr, nt, uf = tr2[1], nt2[1], uf2[1]
if tr <= target:
    verdict = f"**met**: {both(tr2)} per enter+exit pair in the loop, {both(trr2)} in the recursion"
elif tr2[0] <= target:
    verdict = (f"**met by the fastest run only**: {both(tr2)} per enter+exit pair in the loop, {both(trr2)} in the "
               f"recursion; the median is {fmt(tr - target)} ns over")
else:
    verdict = (f"**missed**: {both(tr2)} per enter+exit pair in the loop, {both(trr2)} in the recursion; even the "
               f"fastest run is {fmt(tr2[0] - target)} ns ({fmt(100 * (tr2[0] - target) / target, 0)} %) over, the median "
               f"{fmt(tr - target)} ns ({fmt(100 * (tr - target) / target, 0)} %)")
rd2, ft2 = scale["rdtsc"], scale["first-touch"]
rest = tr2[0] - nt2[0] - rd2[0] - ft2[0]
if rest < 0:
    rest_text = (f"Measured apart, these parts add up to {fmt(-rest)} ns more than the whole (min): in the hook they overlap "
                 "in the out-of-order pipeline, so the split is a rough one.")
else:
    rest_text = f"The remaining {fmt(rest)} ns (min) are writing the two 16-byte records and the bump-pointer checks."
if target - rd2[0] <= 0:
    budget = (f"Two back-to-back `rdtsc` alone ({fmt(rd2[0])} ns, min) already exceed the target on this machine: with "
              f"two time stamps per pair, ≤ {target:.0f} ns cannot be reached here whatever the rest costs.")
else:
    budget = (f"With two `rdtsc` at {fmt(rd2[0])} ns (min), the target leaves {fmt(target - rd2[0])} ns for everything "
              f"else; the shadow stack and first writes to fresh memory take {fmt(nt2[0] + ft2[0])} ns (min) today.")
uf_ratio = (uf2[0] / tr2[0] if tr2[0] > 0 else float("nan"), uf / tr if tr > 0 else float("nan"))
pf2, pfr2 = diff[("prof-profiling", "loop")], diff[("prof-profiling", "recurse")]
pverdict = "met" if pf2[1] <= target else ("met by the fastest run only" if pf2[0] <= target else "missed")
fl2, flr2 = diff[("prof-filtered", "loop")], diff[("prof-filtered", "recurse")]
fl_over_nop = (fl2[0] - nop2[0], fl2[1] - nop2[1])
nopr2 = diff[("nop", "recurse")]
flr_over_nop = (flr2[0] - nopr2[0], flr2[1] - nopr2[1])
fverdict = "met" if fl_over_nop[1] <= 5 else ("met by the fastest run only" if fl_over_nop[0] <= 5 else "missed")
th2 = diff[("prof-throttled", "loop")]
if ("prof-plugin-throttled", "loop") in diff:
    pth2, pfl2 = diff[("prof-plugin-throttled", "loop")], diff[("prof-plugin-filtered", "loop")]
    tverdict = "met" if max(pth2[1], pfl2[1]) <= 1 else ("met by the fastest runs only" if max(pth2[0], pfl2[0]) <= 1 else "missed")
    throttle_text = (f"with the GCC plugin the instrumented code tests the function's flag and calls no hook: throttled (k) "
                     f"{both(pth2)} more than plain per call, filtered at run time (l) {both(pfl2)}: **{tverdict}**")
else:
    throttle_text = "not measured with the plugin: no GCC plugin in this build"
if ("prof-plugin-profiling", "loop") in diff:
    pp, pt_ = diff[("prof-plugin-profiling", "loop")], diff[("prof-plugin-tracing", "loop")]
    own_p = (pp[0] - rd2[0], pp[1] - rd2[1])
    own_t = (pt_[0] - rd2[0] - ft2[0], pt_[1] - rd2[1] - ft2[1])
    own_p_hooks = (own_p[0] - nop2[0], own_p[1] - nop2[1])
    own_t_hooks = (own_t[0] - nop2[0], own_t[1] - nop2[1])
    over = max(own_p_hooks[0], own_t_hooks[0])
    oververdict = "met" if max(own_p_hooks[1], own_t_hooks[1]) <= 10 else ("met by the fastest runs only" if over <= 10 else "missed")
    own_text = (f"with the GCC plugin, profiling (i) costs {both(own_p)} per pair above two `rdtsc`, tracing (h) {both(own_t)} "
                f"above two `rdtsc` and the first write of its 32 bytes of fresh memory; of that, calling two hooks at all is "
                f"{both(nop2)} (b), so prof's own work is {both(own_p_hooks)} (profiling) and {both(own_t_hooks)} (tracing): "
                f"**{oververdict}**")
else:
    own_text = "not measured: no GCC plugin in this build"
meaning = f"""- Own share per enter+exit pair (≤ 10 ns above the clock reads, issue #19): {own_text}. The per-call counts
  of instructions, loads and branches are in the table above.
- Throttled and filtered calls (≤ 1 ns per call with the plugin, issue #19): {throttle_text}. With
  `-finstrument-functions` the two hook calls stay; they return after the region lookup: throttled (j) {both(th2)}
  more than plain, against {both(nop2)} for two empty hooks (b). (The first 1024 calls are measured before the
  function is throttled: under 0.01 ns per call of these runs.)
- Tracing target (≤ {target:.0f} ns per enter+exit pair): {verdict}.
- Profiling target (≤ {target:.0f} ns per enter+exit pair, issue #3): **{pverdict}**: {both(pf2)} in the loop,
  {both(pfr2)} in the recursion (64 call paths deep); like tracing it needs two time stamps per pair.
- Filtered functions (≤ 5 ns per enter+exit pair, issue #3): (g) costs {both(fl2)} more than plain per call in the
  loop ({both(flr2)} in the recursion), that is {both(fl_over_nop)} more than calling two empty hooks (b) in the
  loop and {both(flr_over_nop)} in the recursion: **{fverdict}** (judged on the loop) for what prof adds (one region-cache probe and the filtered-id test per hook, nothing pushed);
  the call of the two hooks themselves is the price of `-finstrument-functions`, which only compile-time
  filtering (the GCC plugin, issue #4) removes.
- Where the tracing time goes: the hooks with the shadow stack alone (d) cost {both(nt2)} per pair, of which
  calling two empty hooks (b) is {both(nop2)}. The two time stamps: two back-to-back `rdtsc` cost {both(rd2)}
  on this VM (prof's timer here: {E['BENCH_TIMER']}). The first write to the 32 bytes of fresh trace memory that one
  pair fills costs {both(ft2)} when that memory is fresh 4 KiB pages (the measurement uses plain malloc'ed memory);
  libprof maps its pool lazily but asks for transparent huge pages, so where THP is available its buffers fault
  once per 2 MiB, yet the kernel still zeroes every fresh byte once. {rest_text} {budget}
- uftrace: {both(uf2)} per call in the loop and {both(ufr2)} in the recursion (the issue quotes 110–150 ns);
  per call, prof tracing is {fmt(uf_ratio[0], 2)}× (min) / {fmt(uf_ratio[1], 2)}× (median) cheaper than
  `uftrace record`. uftrace's figure includes its writer threads competing for the 2 cores during the run; prof
  writes its trace at the end instead (next point).
- Trace write-out: prof turns {prof_ev:,} events into OTF2 and exits at {fmt(max(prof_rate) / 1e6 if prof_rate else float('nan'))} Mevents/s
  (best) / {fmt(med(prof_rate) / 1e6)} Mevents/s (median): {fmt(ratio_bounded, 2)}× the rate of the OTF2 library alone set up
  the same way and {fmt(ratio_default, 2)}× its rate with OTF2's own memory management (medians); prof's time also
  includes reading its own records, region definitions, closing the archive and process exit. The final conversion
  and close alone, timed inside the process as otf2_raw times itself: {fmt(ratio_in, 2)}× the raw rate (medians),
  {fmt(ratio_in_best, 2)}× (best against best); the goal is 0.9×. The whole traced
  process costs {both((wall_lo, wall_med))} per event end to end (start to exit, loop included).
- With tracing off (d), the hooks cost {both(nt2)} per pair: the floor of prof's compiler instrumentation today,
  against {both(nop2)} for empty hooks."""

mutex_text = f"""A lock+unlock pair costs {both(mbase)} without prof. With the default `PROF_PTHREAD_ENABLE=create`
the wrappers are a pass-through (the call into libprof's interposed `pthread_mutex_lock`/`unlock`, one flag
test, a call through a pointer to glibc's): {both(mdiff['prof-create'])} more per pair. With
`create,mutex` every lock and unlock becomes a region plus an OTF2 lock event (six records and six time stamps
per pair): {both(mdiff['prof-create,mutex-tracing'])} more per pair with tracing on, and still
{both(mdiff['prof-create,mutex-no-tracing'])} more with tracing off (shadow stack and lock-id table).
The added cost is {fmt(mdiff['prof-create,mutex-tracing'][0] / mbase[0] if mbase[0] else float('nan'), 0)}× (min) the
cost of the pair itself and is paid by every lock in the program, those inside libraries included, so mutex (and
cond) wrapping is opt-in and the default is `create`."""

if problems:
    prob_text = "prof reported problems in this run:\n\n" + "\n".join(f"- `{p}`" for p in problems[:40])
    if len(problems) > 40:
        prob_text += f"\n- … {len(problems) - 40} more"
else:
    prob_text = ("None: no prof warning or error in any run (in particular no buffer flush at "
                 f"PROF_TOTAL_MEMORY={E['BENCH_PROF_MEM']}), and every traced loop run wrote at least 2 events per call.")

doc = f"""<!-- SPDX-License-Identifier: BSD-3-Clause -->
<!-- Generated by bench/run.sh; do not edit by hand, run the script again. -->
# prof: performance

Generated by `bench/run.sh` on {E['BENCH_DATE']} (the runs took {E['BENCH_ELAPSED']} s).

| | |
|---|---|
| machine | {E['BENCH_CPU']}, {E['BENCH_CORES']} cores (shared VM, no hardware perf counters) |
| kernel | {E['BENCH_KERNEL']}, clocksource `{E['BENCH_CLOCKSOURCE']}` |
| load | 1-minute load average {E['BENCH_LOAD0']} before the runs, {E['BENCH_LOAD1']} after (other users of the machine) |
| prof | {E['BENCH_BUILD_TYPE']} build; timer {E['BENCH_TIMER']} |
| tools | {E['BENCH_CC']}; OTF2 {E['BENCH_OTF2']}; {E['BENCH_UFTRACE']} |
| command | `bench/run.sh <build-dir>` with BENCH_REPS={reps}, BENCH_CALLS={calls}, BENCH_UFTRACE_CALLS={ucalls}, BENCH_DEPTH={depth}, BENCH_MUTEX_PAIRS={pairs} |

How to read this: the machine is shared and noisy. Every variant ran {reps} times, interleaved
(a, b, c, d, e, a, b, …); the tables give the minimum and the median. Read the differences from
plain and the ratios between rows of this run, not the absolute figures, and compare runs only
with the machine and date above. All programs are built from the same source with `-O2 -g`.
Times are the programs' own `clock_gettime` around the calls (no process start, no trace write-out);
the write-out is measured separately below.

## Call overhead: ns per call (one enter+exit pair)

`bench/calls.c loop N`: a loop calling a tiny `noipa` function N times.

{calls_tables['loop']}

`bench/calls.c recurse N {depth}`: N calls in total, as descents of a recursion {depth} deep.

{calls_tables['recurse']}

(c) runs with `PROF_ENABLE_TRACING=true PROF_ENABLE_PROFILING=false PROF_TOTAL_MEMORY={E['BENCH_PROF_MEM']}` (no buffer
flush during the run), the trace going to a temporary directory removed afterwards. (d) is the same binary with
`PROF_ENABLE_TRACING=false PROF_ENABLE_PROFILING=false`. (e) is `uftrace record -d <tmp> ./calls_pg …` with
uftrace's defaults, {ucalls} calls per run.

For scale, measured in the same run with the plain build (the issue quotes about 23 ns for two `rdtsc` and about
30 ns for one `clock_gettime` on these machines; compare with the rows below, taken under this run's load):

{scale_table}

What one hook call executes, counted by valgrind's cachegrind (`bench/hook_counts.sh`: `calls loop 200000`,
every call measured; counts per call of the hook, the function's own instructions including what is inlined
into it; the same on any x86-64 machine for this build):

{counts_table}

## Accessor-heavy C++: the GCC plugin against `-finstrument-functions` (issue #4)

`bench/accessors.cpp {E['BENCH_ACC_N']} {E['BENCH_ACC_STEPS']}`: an n-body step over particles whose positions, velocities
and masses are read through small in-class accessors and `Vec3` operators, with three real functions (`step`, `force_on`,
`energy`). Built with {E['BENCH_CXX']}, `-O2 -g`, profiling on (the default), no filter file. The time is the kernel
loop's own clock; hook pairs are the visits of the run's profile (`prof-score --json`, group ALL).

{acc_table}

Goal (with the plugin, profiling costs ≤ 1.3× the plain run, no filter file): {acc_verdict}.
`-finstrument-functions` calls the hooks in every inlined accessor; the plugin only in functions not declared inline.

Handle path (plugin) against address path (`-finstrument-functions`), ns per enter+exit pair over plain, min / median,
from the call tables above: {handle_text}.

## Trace write-out (OTF2)

prof converts its buffers to OTF2 at the end of the run. Its time is taken from the end of the timed loop
(the program's `CLOCK_REALTIME`) to the exit of the process, for the traces of (c) above; `bench/otf2_raw.c`
writes the same number of Enter/Leave events with the OTF2 library alone, from `OTF2_Archive_Open` to
`OTF2_Archive_Close` (same file system: tmpfs where /dev/shm exists, else the temporary directory; page cache synced
before every run). prof's own figure of its final conversion and close (`PROF_VERBOSE=1`: "the final conversion
and the archive's close took N ms") is the one timed like otf2_raw's; the other also holds the definitions' write
and the process's exit.

{otf2_table}

prof's final conversion and close / raw OTF2 (median rates, the same OTF2 setup): {fmt(ratio_in, 2)} (goal 0.9).
prof from loop end to exit / raw OTF2 (median rates): {fmt(ratio_bounded, 2)} against the same OTF2 setup, {fmt(ratio_default, 2)} against
OTF2's defaults. Whole traced process (start to exit, loop included): {fmt(wall_lo)} ns per event min,
{fmt(wall_med)} ns median.

## pthread mutex wrappers: why `PROF_PTHREAD_ENABLE=create` is the default

`bench/mutex.c`: {pairs} uncontended `pthread_mutex_lock` + `pthread_mutex_unlock` pairs, ns per pair.

{mutex_table}

{mutex_text}

## What this means

{meaning}

## Problems seen

{prob_text}
"""

out = E["BENCH_DOC_OUT"]
if out != "-":
    with open(out, "w") as f:
        f.write(doc)
print(doc)
if out != "-":
    print(f"bench/run.sh: wrote {out}", file=sys.stderr)
PYEOF

# The MPI part: its own section of the same document (bench/mpi.sh).
if command -v mpirun >/dev/null && [[ -e $build/lib/libprof_mpi.so ]]; then
  "$here/mpi.sh" "$build" "$doc" >&2
else
  note "no MPI (mpirun or libprof_mpi.so missing): the MPI section of the report is not refreshed"
fi

# The sampling part: its own section (bench/sampling.sh).
"$here/sampling.sh" "$build" "$doc" >&2

# The metrics part: its own section (bench/metrics.sh).
"$here/metrics.sh" "$build" "$doc" >&2

# OpenMP: its own section (bench/openmp.sh).
"$here/openmp.sh" "$build" "$doc" >&2

# prof-export: its own section (bench/export.sh).
"$here/export.sh" "$build" "$doc" >&2

# prof-report on a large MPI trace (bench/report.sh), and a stop signal with a large trace
# buffered (bench/stop.sh): their own sections.
"$here/report.sh" "$build" "$doc" >&2
"$here/stop.sh" "$build" "$doc" >&2

# The Python part: its own section (bench/python.sh; nothing where the Python adapter is not built).
"$here/python.sh" "$build" "$doc" >&2

# The CUDA part: measured here when there is a GPU, else the last measurement is kept.
if nvidia-smi -L >/dev/null 2>&1 && [[ -e $build/lib/libprof_cuda.so ]]; then
  PROF_BUILD=$build "$here/cuda.sh" >&2
elif [[ -n $cuda_block && ${BENCH_DOC_OUT:-$doc} != "-" ]]; then
  printf '\n%s\n' "$cuda_block" >>"$doc"
  note "no GPU here: the CUDA section of the report is kept from its last run on a GPU (bench/cuda.sh --build/--run/--report)"
fi
# The PyTorch part, the same way (bench/pytorch.sh; a GPU and PyTorch with CUDA).
if nvidia-smi -L >/dev/null 2>&1 && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null && [[ -d $build/python/prof ]]; then
  PROF_BUILD=$build "$here/pytorch.sh" "$doc" >&2
elif [[ -n $pytorch_block && ${BENCH_DOC_OUT:-$doc} != "-" ]]; then
  printf '\n%s\n' "$pytorch_block" >>"$doc"
  note "no GPU or no PyTorch here: the PyTorch section of the report is kept from its last run (bench/pytorch.sh --run/--report)"
fi

# A first, unfiltered run of call-heavy code (issue #19): its own section (bench/first_run.sh).
"$here/first_run.sh" "$build" "$doc" >&2
