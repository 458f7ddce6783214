#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A new user's first, unfiltered run of call-heavy code (issue #19, one-pass throttling; bench/run.sh
# runs it at its end; alone it refreshes only its section of docs/PERFORMANCE.md, between
# "first_run:begin" and "first_run:end"). Two programs, each built with -O2 -g:
#   bench/interp.c    an interpreter: a dispatch loop calling one small handler per bytecode op
#   bench/engine.cpp  a template-heavy C++ engine: out-of-class template members, virtual calls
# plain, with prof-wrap's defaults (the GCC plugin where it fits), and once more with
# prof-wrap --instrument-filter=<the filter prof-score -g writes from a PROF_THROTTLE=off profile of
# the default build>; then, interleaved, BENCH_REPS times each:
#   plain | prof, default (profile; throttling on by default) | prof, PROF_THROTTLE=off (every call
#   measured, as before) | prof, the prof-score -g filter build with PROF_THROTTLE=off (the two-pass
#   workflow of today: measure all, filter, rebuild) | prof, default + PROF_ENABLE_TRACING=true
# Whole-process wall time (start to exit, prof's finalize included) per program and variant: min,
# median, their ratios to plain; also the programs' own clock (without start-up and finalize).
#   bench/first_run.sh [build-dir] [doc]
#   knobs: BENCH_REPS (5), BENCH_INTERP_ARGS ("": the program's default, 300000 iterations),
#          BENCH_ENGINE_ARGS ("": 600 frames of 2000 entities), BENCH_DOC (the doc when no 2nd argument;
#          default docs/PERFORMANCE.md; "-": nowhere)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
case $build in /*) ;; *) build=$PWD/$build ;; esac
doc=${2:-${BENCH_DOC:-$src/docs/PERFORMANCE.md}}
case $doc in /* | -) ;; *) doc=$PWD/$doc ;; esac
reps=${BENCH_REPS:-5}
read -r -a interp_args <<<"${BENCH_INTERP_ARGS:-}"
read -r -a engine_args <<<"${BENCH_ENGINE_ARGS:-}"
cflags=(-O2 -g)

die() { echo "bench/first_run.sh: $*" >&2; exit 1; }
note() { echo "== first_run: $*" >&2; }

# Every run sets the PROF_* variables it needs; none may come from the caller's environment.
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

wrap=$build/bin/prof-wrap
score=$build/bin/prof-score
[[ -x $wrap && -x $score && -e $build/lib/libprof.so ]] || die "no prof-wrap, prof-score or libprof in $build"
bin=$build/bench/run
mkdir -p "$bin"
work=$bin/first-run.d     # experiment directories, captured output, filters
rm -rf "$work"
mkdir -p "$work"
data=$bin/first_run.txt   # prog variant rep wall_ns program_s visits exp_bytes
: >"$data"

# ---------------------------------------------------------------- builds
# exe PROG KIND: the binary of a program's build (plain, prof, filtered).
exe() { echo "$bin/first_run_$1_$2"; }
compiler_of() { case $1 in interp) echo gcc ;; engine) echo g++ ;; esac; }
source_of() { case $1 in interp) echo "$here/interp.c" ;; engine) echo "$here/engine.cpp" ;; esac; }
args_of() {  # the program's arguments, one per line (none by default)
  if [[ $1 == interp ]]; then ((${#interp_args[@]})) && printf '%s\n' "${interp_args[@]}"; else ((${#engine_args[@]})) && printf '%s\n' "${engine_args[@]}"; fi
  return 0
}
progs=(interp engine)
method=$("$wrap" --dry-run gcc "${cflags[@]}" -c "$here/interp.c" -o "$work/probe.o" 2>&1 || true)
if grep -q -- '-fplugin' <<<"$method"; then method="the GCC plugin"; else method="-finstrument-functions (no GCC plugin)"; fi
for p in "${progs[@]}"; do
  cc=$(compiler_of "$p")
  note "building $p: plain, prof-wrap $cc"
  "$cc" "${cflags[@]}" "$(source_of "$p")" -o "$(exe "$p" plain)"
  "$wrap" "$cc" "${cflags[@]}" "$(source_of "$p")" -o "$(exe "$p" prof)"
done

now_ns() { local t=${EPOCHREALTIME/[.,]/}; echo $((10#$t * 1000)); }   # no fork, microseconds

# measure PROG VARIANT REP: one run, appended to $data; output kept in $work/PROG-VARIANT.{out,err}.
measure() {
  local p=$1 variant=$2 rep=$3 x envs=() exp="" t0 t1 s visits=- bytes=-
  local -a args
  mapfile -t args < <(args_of "$p")
  case $variant in
    plain) x=$(exe "$p" plain) ;;
    default) x=$(exe "$p" prof) ;;
    throttle-off) x=$(exe "$p" prof); envs=(PROF_THROTTLE=off) ;;
    filtered) x=$(exe "$p" filtered); envs=(PROF_THROTTLE=off) ;;   # the two-pass workflow as it is without throttling
    tracing) x=$(exe "$p" prof); envs=(PROF_ENABLE_TRACING=true) ;;
    # the thresholds' choice: other values of PROF_THROTTLE_NS (300) and PROF_THROTTLE_VISITS (1000)
    ns100) x=$(exe "$p" prof); envs=(PROF_THROTTLE_NS=100) ;;
    ns1000) x=$(exe "$p" prof); envs=(PROF_THROTTLE_NS=1000) ;;
    visits100k) x=$(exe "$p" prof); envs=(PROF_THROTTLE_VISITS=100000) ;;
    *) die "unknown variant $variant" ;;
  esac
  if [[ $variant != plain ]]; then
    exp=$work/exp-$p-$variant-$rep
    rm -rf "$exp"
    envs+=("PROF_EXPERIMENT_DIRECTORY=$exp")
  fi
  local out=$work/$p-$variant.out err=$work/$p-$variant.err
  t0=$(now_ns)
  if ! (cd "$work" && env "${envs[@]}" "$x" "${args[@]}") >"$out" 2>"$err"; then
    cat "$err" >&2
    die "$p/$variant failed"
  fi
  t1=$(now_ns)
  s=$(sed -n 's/^seconds=\([0-9.]*\).*/\1/p' "$out")
  [[ -n $s ]] || { cat "$out" "$err" >&2; die "$p/$variant printed no seconds="; }
  # The result must not depend on the measurement.
  if [[ $variant == plain ]]; then
    head -n 1 "$out" >"$work/$p.expected"
  elif ! cmp -s <(head -n 1 "$out") "$work/$p.expected"; then
    echo "$p/$variant rep $rep: result differs from plain's: $(head -n 1 "$out")" >>"$work/problems"
  fi
  grep -E '^prof: .*(warning|error)' "$err" | sed "s|^|$p/$variant: |" >>"$work/problems" || true
  if [[ -n $exp ]]; then
    bytes=$(du -sb "$exp" | cut -f1)
    # The first repetition: the visits the profile holds (what prof measured), and what it said.
    if ((rep == 1)); then
      "$score" --json "$exp" >"$work/$p-$variant.json" 2>/dev/null || true
      visits=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(next(g["visits"] for g in d["groups"] if g["type"] == "ALL"))' \
               "$work/$p-$variant.json" 2>/dev/null || echo -)
      cp "$err" "$work/$p-$variant.err.rep1"
    fi
    rm -rf "$exp"
  fi
  printf '%s %s %s %s %s %s %s\n' "$p" "$variant" "$rep" "$((t1 - t0))" "$s" "$visits" "$bytes" >>"$data"
  sync
}
: >"$work/problems"

# ---------------------------------------------------------------- the prof-score -g filter build
# What a user does after a first run today: measure every call, ask prof-score for a filter, rebuild.
for p in "${progs[@]}"; do
  cc=$(compiler_of "$p")
  mapfile -t args < <(args_of "$p")
  exp=$work/score-$p
  note "$p: a PROF_THROTTLE=off profile for prof-score -g"
  rm -rf "$exp"
  (cd "$work" && env PROF_THROTTLE=off PROF_EXPERIMENT_DIRECTORY="$exp" "$(exe "$p" prof)" "${args[@]}") >"$work/score-$p.out" 2>"$work/score-$p.err" \
    || { cat "$work/score-$p.err" >&2; die "$p: the profiling run failed"; }
  "$score" -r "$exp" >"$work/score-$p.txt"
  "$score" --json "$exp" >"$work/score-$p.json"
  filter=$work/$p.filter
  rm -f "$filter" "$filter".old*
  (cd "$work" && "$score" -g -o "$filter" "$exp") >"$work/score-g-$p.txt" 2>&1 || { cat "$work/score-g-$p.txt" >&2; die "$p: prof-score -g failed"; }
  [[ -f $filter ]] || die "$p: prof-score -g wrote no $filter"
  grep -c '^ *EXCLUDE' "$filter" >"$work/$p.excluded" || true
  rm -rf "$exp"
  note "building $p with prof-wrap --instrument-filter=$filter ($(cat "$work/$p.excluded") functions excluded)"
  "$wrap" --instrument-filter="$filter" "$cc" "${cflags[@]}" "$(source_of "$p")" -o "$(exe "$p" filtered)"
done

# ---------------------------------------------------------------- interleaved runs
variants=(plain default throttle-off filtered tracing ns100 ns1000 visits100k)
note "running $reps interleaved repetitions of ${variants[*]}"
started=$(date +%s)
load0=$(cut -d" " -f1 /proc/loadavg)
for ((r = 1; r <= reps; r++)); do
  note "repetition $r/$reps"
  for p in "${progs[@]}"; do
    for v in "${variants[@]}"; do measure "$p" "$v" "$r"; done
  done
done
elapsed=$(($(date +%s) - started))
load1=$(cut -d" " -f1 /proc/loadavg)
cat "$data" >&2

# ---------------------------------------------------------------- report
python3 - "$data" "$doc" "$here" "$work" "$(date -u +%Y-%m-%d)" "$(nproc)" \
  "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" "$reps" "$method" "$elapsed" "$load0" "$load1" \
  "$(gcc --version | head -n 1)" "${BENCH_INTERP_ARGS:-}" "${BENCH_ENGINE_ARGS:-}" <<'PY'
import collections, json, os, statistics, sys
(data, doc, here, work, date, cores, cpu, reps, method, elapsed, load0, load1, gcc,
 interp_args, engine_args) = sys.argv[1:16]
sys.path.insert(0, here)
from doc_section import put_section

wall = collections.defaultdict(list)
own = collections.defaultdict(list)
visits, size = {}, {}
for line in open(data):
    p, v, rep, ns, s, vis, b = line.split()
    wall[(p, v)].append(int(ns) / 1e9)
    own[(p, v)].append(float(s))
    if rep == "1":
        visits[(p, v)], size[(p, v)] = vis, b

progs = ("interp", "engine")
variants = ("plain", "default", "throttle-off", "filtered", "tracing", "ns100", "ns1000", "visits100k")
names = {"plain": "plain", "default": "prof, default", "throttle-off": "prof, `PROF_THROTTLE=off`",
         "filtered": "prof, `prof-score -g` filter build, `PROF_THROTTLE=off`", "tracing": "prof, default + tracing",
         "ns100": "prof, `PROF_THROTTLE_NS=100`", "ns1000": "prof, `PROF_THROTTLE_NS=1000`",
         "visits100k": "prof, `PROF_THROTTLE_VISITS=100000`"}
med = statistics.median

def mb(b):
    return "" if b in ("-", None) else "%.1f MB" % (int(b) / 1e6) if int(b) >= 1e5 else "%.0f kB" % (int(b) / 1e3)

def num(x):
    return "" if x in ("-", None) else "{:,}".format(int(x))

def throttled(p, v):
    """How many functions the run of the first repetition throttled, from its end-of-run line."""
    import re
    try:
        for l in open(os.path.join(work, "%s-%s.err.rep1" % (p, v))):
            m = re.search(r"(\d+) functions? w[ae][sr]e? throttled", l)
            if m:
                return m.group(1)
    except OSError:
        return ""
    return "0"

rows = []
ratio = {}
for p in progs:
    base = wall.get((p, "plain"))
    if not base:
        continue
    for v in variants:
        t = wall.get((p, v))
        if not t:
            continue
        ratio[(p, v)] = (min(t) / min(base), med(t) / med(base))
        rows.append("| %s | %s | %.3f | %.3f | %.2f× | %.2f× | %.3f | %s | %s | %s |" % (
            p, names[v], min(t), med(t), min(t) / min(base), med(t) / med(base), med(own[(p, v)]),
            num(visits.get((p, v))) if v != "plain" else "", throttled(p, v) if v != "plain" else "",
            mb(size.get((p, v))) if v != "plain" else ""))

def verdict():
    got = [ratio.get((p, "default")) for p in progs]
    if any(g is None for g in got):
        return "not measured"
    text = ", ".join("`%s` %.2f× (min) / %.2f× (median)" % (p, g[0], g[1]) for p, g in zip(progs, got))
    if all(g[1] <= 1.5 for g in got):
        return "**met**: " + text
    return ("**met by the fastest runs only**: " if all(g[0] <= 1.5 for g in got) else "**missed**: ") + text

def calls_text(p):
    try:
        d = json.load(open(os.path.join(work, "score-%s.json" % p)))
    except (OSError, ValueError):
        return "%s: no prof-score output." % p
    regions = [r for r in d.get("regions", []) if r.get("paradigm") == "compiler" and r.get("visits", 0) > 0]
    total = sum(r["visits"] for r in regions)
    plain_s = med(wall[(p, "plain")]) if wall.get((p, "plain")) else float("nan")
    off = wall.get((p, "throttle-off"))
    per_call = (med(off) - plain_s) / total * 1e9 if off and total else float("nan")
    try:
        excluded = int(open(os.path.join(work, "%s.excluded" % p)).read().strip() or 0)
    except (OSError, ValueError):
        excluded = 0
    hot = sorted(regions, key=lambda r: -r["visits"])[:3]
    return ("`%s`: %d instrumented functions called, %s calls (enter+exit pairs) per run, %.0f million calls per second "
            "of the plain run's wall time (median); measuring every one of them (`PROF_THROTTLE=off`) costs %.0f ns per call "
            "over plain (median wall time). Most called: %s. `prof-score -g` excluded %d functions." % (
                p, len(regions), "{:,}".format(total), total / plain_s / 1e6, per_call,
                ", ".join("`%s` (%s)" % (r["name"], "{:,}".format(r["visits"])) for r in hot), excluded))

def said(p):
    try:
        lines = [l.rstrip("\n").replace(os.path.join(work, "exp-%s-default-1" % p), "<experiment dir>")
                 for l in open(os.path.join(work, "%s-default.err.rep1" % p)) if "throttl" in l.lower()]
    except OSError:
        lines = []
    return "\n".join(lines) if lines else "none"

problems = sorted(set(l.rstrip("\n") for l in open(os.path.join(work, "problems")) if l.strip()))
args = {"interp": "(arguments: %s)" % interp_args if interp_args else "(its default: 300000 iterations)",
        "engine": "(arguments: %s)" % engine_args if engine_args else "(its default: 600 frames of 2000 entities)"}
out = [
    "<!-- first_run:begin (bench/first_run.sh) -->",
    "## A first, unfiltered run of call-heavy code (issue #19)",
    "",
    "%s, %s cores, %s; %s; 1-minute load %s before, %s after; the runs took %s s. `bench/first_run.sh`, "
    "%s interleaved repetitions. Two programs built with `-O2 -g`: `bench/interp.c` %s, an interpreter whose dispatch loop "
    "calls one small handler function per bytecode op (plus builtins, a `gc()` every 100000 ops, a `parse()` at start), and "
    "`bench/engine.cpp` %s, a template-heavy C++ engine (out-of-class members of `Vec3<T>`, `Mat3<T>`, `Aabb<T>`, "
    "`Transform<T>` for float and double, virtual calls of a shape hierarchy, `std::vector`, `std::sort`). prof builds "
    "use prof-wrap's default instrumentation, here %s." % (
        date, cores, cpu, gcc, load0, load1, elapsed, reps, args["interp"], args["engine"], method),
    "",
    "Variants: **plain**: built without prof. **prof, default**: `prof-wrap gcc` (or `g++`), run with no `PROF_*` "
    "variable: a call-path profile, throttling on (its default). **`PROF_THROTTLE=off`**: the same binary, every call "
    "measured (prof's behaviour before throttling). **`prof-score -g` filter build**: what a user does today after a "
    "first run: one `PROF_THROTTLE=off` run, `prof-score -g` on its profile, and a rebuild with "
    "`prof-wrap --instrument-filter=<that filter>`, run with `PROF_THROTTLE=off` (the two-pass workflow as it is without "
    "throttling; the functions the filter leaves in are all measured). **default + tracing**: the default build "
    "with `PROF_ENABLE_TRACING=true` (profile and OTF2 trace, default `PROF_TOTAL_MEMORY`).",
    "",
    "Wall time of the whole process (start to exit, prof's write-out included), seconds; the ratios are to plain's "
    "min and median; the program's own clock leaves out start-up and finalize. Visits (what the profile holds: "
    "`prof-score --json`, group ALL) and the experiment directory's size are those of the first repetition.",
    "",
    "| program | variant | wall min | wall median | min / plain | median / plain | program's own s (median) | visits measured | functions throttled | experiment dir |",
    "|---|---|---|---|---|---|---|---|---|---|",
] + rows + [""] + [calls_text(p) for p in progs] + [""] + [
    "Goal (issue #19: an unfiltered default run of both call-heavy programs at most 1.5× plain): " + verdict() + ".",
    "",
    "**The thresholds.** A function is throttled once a call path of it has `PROF_THROTTLE_VISITS` = 1000 visits "
    "(checked at 1024, 2048, ...) of a mean inclusive time under `PROF_THROTTLE_NS` = 300 ns. The time bound follows "
    "from prof's own cost per call: measuring a call costs about 50-80 ns on these VMs (the call-overhead tables above: "
    "two time stamps and the profile's bookkeeping), so a function of mean time T that stays measured costs at most "
    "about 70/T extra: 300 ns keeps that under about 25 % for every function left, while the functions it stops measuring "
    "are those a user would filter anyway (a few ns to a few hundred ns of work; `prof-score -g` suggests 1 µs). "
    "In these two programs the hot functions do a few ns to tens of ns of work, far below any of the bounds tried: "
    "100 ns and 1000 ns throttle the same functions within two and cost the same within this VM's noise (the rows "
    "above); the bound decides for functions of 100 ns to 1 µs, whose measurement costs 7-70 % of their time. The visit bound is what the decision costs: a throttled "
    "function's first 1024 calls are measured in full (about 70 µs per function at 70 ns a call, a few ms for all "
    "the functions of these programs), and 1024 visits make the mean stable against a single preemption of a few "
    "microseconds; 100000 (TAU's `TAU_THROTTLE_NUMCALLS` default) delays throttling by 100× the calls and costs "
    "visibly more in both programs.",
    ""]
for p in progs:
    out += ["What prof wrote at the end of a default run of `%s` (lines with \"throttl\"):" % p, "", "```", said(p), "```", ""]
if problems:
    out += ["Problems seen (prof's warnings and errors, results that differ from plain's):", ""]
    out += ["- `%s`" % l for l in problems[:30]]
    if len(problems) > 30:
        out.append("- … %d more" % (len(problems) - 30))
else:
    out.append("Problems seen: none (no prof warning or error, every result equal to plain's).")
out += ["", "<!-- first_run:end -->"]
text = "\n".join(out)
put_section(doc, "first_run", text)
print(text)
PY
rm -rf "$work"/exp-* "$work"/score-*/
