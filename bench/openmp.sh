#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The OpenMP part of the benchmarks (bench/run.sh runs it; alone it refreshes only its section of
# docs/PERFORMANCE.md, between "openmp:begin" and "openmp:end"): bench/openmp.c with a team of
# 2 threads, per runtime (gcc: libgomp through its GOMP_* entry points; clang: libomp through
# OMPT), built plain and with prof-wrap --nocompiler (OpenMP events only), run as
#   plain | prof, PROF_OPENMP_ENABLE=none | prof, profile (the default) | prof, trace
#   | prof, trace + lock (PROF_OPENMP_ENABLE=all)
# for every workload (parallel region, barrier, loop, loop chunk, lock pair), interleaved
# repetitions; per row the min and median ns per operation and the median's extra over plain.
#   bench/openmp.sh [build-dir] [doc]     knobs: BENCH_REPS (5), BENCH_OMP_N (20000)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
doc=${2:-${BENCH_DOC:-$src/docs/PERFORMANCE.md}}
reps=${BENCH_REPS:-5}
n=${BENCH_OMP_N:-20000}
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
bin=$build/bench/run
mkdir -p "$bin"
out=$bin/openmp.txt
: >"$out"
compilers=()
for cc in gcc clang; do
  command -v $cc >/dev/null || continue
  $cc -O2 -fopenmp "$here/openmp.c" -o "$bin/openmp_plain_$cc" 2>/dev/null || { echo "bench/openmp.sh: $cc -fopenmp cannot build; skipped" >&2; continue; }
  "$build/bin/prof-wrap" --nocompiler $cc -O2 -fopenmp "$here/openmp.c" -o "$bin/openmp_prof_$cc"
  compilers+=("$cc")
done
exp=$bin/openmp-exp
run() {  # run <cc> <variant> <workload> <count>
  local cc=$1 variant=$2 w=$3 count=$4 line
  rm -rf "$exp"
  case $variant in
    plain) line=$("$bin/openmp_plain_$cc" "$w" "$count") ;;
    none) line=$(PROF_OPENMP_ENABLE=none PROF_EXPERIMENT_DIRECTORY=$exp "$bin/openmp_prof_$cc" "$w" "$count") ;;
    profile) line=$(PROF_EXPERIMENT_DIRECTORY=$exp "$bin/openmp_prof_$cc" "$w" "$count") ;;
    trace) line=$(PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=$exp "$bin/openmp_prof_$cc" "$w" "$count") ;;
    all) line=$(PROF_ENABLE_TRACING=true PROF_OPENMP_ENABLE=all PROF_EXPERIMENT_DIRECTORY=$exp "$bin/openmp_prof_$cc" "$w" "$count") ;;
  esac
  echo "$cc $w $variant ${line#ns_per_op=}" >>"$out"
}
for ((r = 1; r <= reps; r++)); do
  for cc in "${compilers[@]}"; do
    for w in parallel barrier loop chunk lock; do
      count=$n
      [[ $w == chunk || $w == lock ]] && count=$((n * 20))
      for variant in plain none profile trace all; do run "$cc" "$variant" "$w" "$count"; done
    done
  done
done
rm -rf "$exp"
python3 - "$out" "$doc" "$(date -u +%Y-%m-%d)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" "$reps" "$n" <<'PY'
import re, statistics, sys
data, doc, date, cores, cpu, reps, n = sys.argv[1:8]
runs = {}
for line in open(data):
    cc, w, variant, ns = line.split()
    runs.setdefault((cc, w, variant), []).append(float(ns))
names = {'plain': 'plain', 'none': 'prof, `PROF_OPENMP_ENABLE=none`', 'profile': 'prof, profile (default)',
         'trace': 'prof, trace', 'all': 'prof, trace, `all` (+ lock)'}
what = {'parallel': 'parallel region (fork/join, 2 threads)', 'barrier': 'barrier', 'loop': 'dynamic loop, 2 iterations',
        'chunk': 'loop chunk (dynamic, 1)', 'lock': 'omp_set_lock + omp_unset_lock'}
rows = []
for cc in ('gcc', 'clang'):
    for w in what:
        base = runs.get((cc, w, 'plain'))
        if not base:
            continue
        bmed = statistics.median(base)
        cells = []
        for v in ('plain', 'none', 'profile', 'trace', 'all'):
            t = runs.get((cc, w, v), [])
            if not t:
                cells.append('')
                continue
            med = statistics.median(t)
            cells.append('%.0f / %.0f' % (min(t), med) + ('' if v == 'plain' else ' (%+.0f)' % (med - bmed)))
        rows.append('| %s | %s | %s |' % ('gcc (libgomp)' if cc == 'gcc' else 'clang (libomp, OMPT)', what[w], ' | '.join(cells)))
section = '\n'.join([
    '<!-- openmp:begin (bench/openmp.sh) -->',
    '## OpenMP (issue #18)',
    '',
    '%s, %s cores, %s. `bench/openmp.c` with a team of 2 threads, built with `-O2 -fopenmp`, plain and with '
    '`prof-wrap --nocompiler` (OpenMP events only), %s interleaved repetitions of %s operations (chunks and lock '
    'pairs: 20 times as many). ns per operation, min / median, and in brackets the median\'s extra over plain. '
    'The machine is a shared 2-core VM: a barrier between its two threads costs microseconds here, and the '
    'differences of a few percent are noise.' % (date, cores, cpu, reps, n),
    '',
    '| runtime | operation | plain | ' + ' | '.join(names[v] for v in ('none', 'profile', 'trace', 'all')) + ' |',
    '|---|---|---|---|---|---|---|',
] + rows + ['', '<!-- openmp:end -->'])
text = open(doc).read()
if '<!-- openmp:begin' in text:
    text = re.sub(r'<!-- openmp:begin.*?<!-- openmp:end -->', lambda m: section, text, flags=re.S)
else:
    text = text.rstrip('\n') + '\n\n' + section + '\n'
open(doc, 'w').write(text)
print(section)
PY
