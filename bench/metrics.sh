#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The metrics part of the benchmarks (bench/run.sh runs it; alone it refreshes only its section of
# docs/PERFORMANCE.md, between the "metrics:begin" and "metrics:end" markers): bench/calls.c
# (`calls loop N`, a tiny leaf function called N times) built with prof-wrap, run without metrics
# and with each metric set of PROF_METRIC_PAPI / PROF_METRIC_PERF / PROF_METRIC_RUSAGE, profile only and with a trace,
# interleaved repetitions. Reported: ns per enter+exit pair, and what the metrics add to it.
#   bench/metrics.sh [build-dir] [doc]     knobs: BENCH_REPS (5), BENCH_METRIC_CALLS (200000)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
doc=${2:-${BENCH_DOC:-$src/docs/PERFORMANCE.md}}
reps=${BENCH_REPS:-5}
calls=${BENCH_METRIC_CALLS:-200000}
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
bin=$build/bench/run
mkdir -p "$bin"
"$build/bin/prof-wrap" gcc -O2 -g "$here/calls.c" -o "$bin/calls_metrics"
if gcc -O2 -DHAVE_PAPI "$here/metric_reads.c" -o "$bin/metric_reads" -lpapi 2>/dev/null; then :; else
  gcc -O2 "$here/metric_reads.c" -o "$bin/metric_reads"
fi
papi=yes
PROF_METRIC_PAPI=perf::TASK-CLOCK "$bin/calls_metrics" loop 10 >/dev/null 2>&1 || papi=no
# name | PROF_METRIC_PAPI | PROF_METRIC_PERF | PROF_METRIC_RUSAGE
sets=("none|||" "rusage:1|||ru_minflt" "rusage:all|||all" "perf:1||task-clock|" "perf:2||page-faults,context-switches|"
      "perf:3||task-clock,page-faults,context-switches|")
if [[ $papi == yes ]]; then
  sets+=("papi:1|perf::TASK-CLOCK||" "papi:3|perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES:k=1||"
         "papi:1+rusage:1|perf::TASK-CLOCK||ru_minflt")
fi
out=$bin/metrics.txt
: >"$out"
exp=$bin/metrics-exp
for ((r = 1; r <= reps; r++)); do
  for trace in false true; do
    for s in "${sets[@]}"; do
      IFS='|' read -r name p pe ru <<<"$s"
      rm -rf "$exp"
      line=$(PROF_ENABLE_TRACING=$trace PROF_TOTAL_MEMORY=256M PROF_EXPERIMENT_DIRECTORY=$exp PROF_METRIC_PAPI=$p \
             PROF_METRIC_PERF=$pe PROF_METRIC_RUSAGE=$ru "$bin/calls_metrics" loop "$calls")
      echo "$name trace=$trace $line" >>"$out"
    done
  done
  echo "reads $("$bin/metric_reads")" >>"$out"
done
rm -rf "$exp"
python3 - "$out" "$doc" "$(date -u +%Y-%m-%d)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" "$papi" <<'PY'
import re, statistics, sys
data, doc, date, cores, cpu, papi = sys.argv[1:7]
runs, order = {}, []
reads = {}
for line in open(data):
    w = line.split()
    f = dict(x.split('=', 1) for x in w[1:] if '=' in x)
    if w[0] == 'reads':
        for k, v in f.items():
            reads.setdefault(k, []).append(float(v))
        continue
    key = (w[0], f['trace'])
    if key not in runs:
        order.append(key)
    runs.setdefault(key, []).append(int(f['loop_ns']) / int(f['calls']))
desc = {
    'none': 'no metrics',
    'rusage:1': '`PROF_METRIC_RUSAGE=ru_minflt` (one getrusage per event)',
    'rusage:all': '`PROF_METRIC_RUSAGE=all` (the same call, 9 values)',
    'papi:1': '`PROF_METRIC_PAPI=perf::TASK-CLOCK`',
    'papi:3': '`PROF_METRIC_PAPI=perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES:k=1`',
    'papi:1+rusage:1': '`perf::TASK-CLOCK` and `ru_minflt`',
    'perf:1': '`PROF_METRIC_PERF=task-clock` (one `read()`)',
    'perf:2': '`PROF_METRIC_PERF=page-faults,context-switches` (one group, one `read()`)',
    'perf:3': '`PROF_METRIC_PERF=task-clock,page-faults,context-switches` (two groups, two `read()`s)',
}
rows = []
for trace in ('false', 'true'):
    base = runs.get(('none', trace), [0])
    bmin, bmed = min(base), statistics.median(base)
    for name, t in order:
        if t != trace:
            continue
        v = runs[(name, t)]
        rows.append('| %s | %s | %.0f / %.0f | %+.0f / %+.0f | %.1fx |' % (
            desc.get(name, name), 'trace + profile' if trace == 'true' else 'profile', min(v), statistics.median(v),
            min(v) - bmin, statistics.median(v) - bmed, statistics.median(v) / bmed if bmed else 0))
note = '' if papi == 'yes' else ' PAPI rows are missing: libpapi or the perf software events are not usable here.'
section = '\n'.join([
    '<!-- metrics:begin (bench/metrics.sh) -->',
    '## Metrics: what PAPI, perf and rusage cost per enter+exit pair (issues #8, #14)',
    '',
    '%s, %s cores, %s. `bench/calls.c loop N` (a tiny leaf function; built with prof-wrap), %d interleaved '
    'repetitions per row; ns per call = one enter + one exit, each reading every metric once.%s'
    % (date, cores, cpu, len(runs[order[0]]), note),
    '',
    '| metrics | recording | ns per pair min / median | added ns min / median | ÷ no metrics (median) |',
    '|---|---|---|---|---|',
] + rows + [
    '',
    'The primitives, measured alone (`bench/metric_reads.c`, median ns per call): %s.' % ', '.join(
        '%s %.0f' % ({'perf_read_ns': '`read()` of a perf software event', 'getrusage_ns': '`getrusage(RUSAGE_THREAD)`',
                      'papi_read_ns': '`PAPI_read` of `perf::TASK-CLOCK`'}[k], statistics.median(v))
        for k, v in sorted(reads.items()) if min(v) >= 0),
    '',
    'Reading a software counter or getrusage is a system call, and every enter and every exit reads: '
    'a pair costs two reads per source (PAPI, rusage; perf: per group of one kernel PMU), which is what the '
    'added nanoseconds are. PAPI '
    'reads all its events of a thread with one call, so three events cost little more than one; its '
    '`PAPI_read` adds its own bookkeeping to the perf `read()`. Hardware counters read with `rdpmc` '
    '(PAPI on a machine with a PMU) cost far less than a system call; that was not measurable here (a VM '
    'without counters). Short, frequently called functions are where this shows: filter them '
    '(`prof-score -g`) before recording metrics.',
    '',
    '<!-- metrics:end -->'])
text = open(doc).read()
if '<!-- metrics:begin' in text:
    text = re.sub(r'<!-- metrics:begin.*?<!-- metrics:end -->', lambda m: section, text, flags=re.S)
else:
    text = text.rstrip('\n') + '\n\n' + section + '\n'
open(doc, 'w').write(text)
print(section)
PY
