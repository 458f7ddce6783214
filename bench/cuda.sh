#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The CUDA part of the benchmarks: the cost of prof on a loop of small kernels
# (tests/gpu/many_kernels.cu: N launches of a 1-block kernel on one stream, then
# cudaDeviceSynchronize), built plain (nvcc) and with prof-wrap nvcc, run in interleaved
# repetitions in these variants:
#   plain            nvcc, no prof
#   prof, CUDA off   PROF_CUDA_ENABLE=none (prof's own cost: instrumented host code)
#   kernels only     PROF_CUDA_ENABLE=kernel (activity records; callbacks only on launches)
#   kernels, trace   PROF_CUDA_ENABLE=kernel, trace only (activity records, no callbacks at all)
#   runtime only     PROF_CUDA_ENABLE=runtime (API callbacks and regions, no activity records)
#   default          PROF_CUDA_ENABLE default (API regions, kernels, copies, memsets, NVTX)
#   default, trace   the same with PROF_ENABLE_TRACING=true
# The figure is the host time of the launch loop plus the synchronisation (the program's own
# PROF_INFO line), min and median per variant, and the ratio to plain.
#
#   bench/cuda.sh                 build, run and report here (needs a GPU)
#   bench/cuda.sh --build DIR     build into DIR and pack the libraries (tests/gpu/pack.sh)
#   bench/cuda.sh --run DIR       run on a GPU machine (DIR/lib on LD_LIBRARY_PATH); DIR/bench.txt
#   bench/cuda.sh --report DIR [doc]   the section of docs/PERFORMANCE.md between the
#                                 "cuda:begin" and "cuda:end" markers, from DIR/bench.txt
# Then the same for longer kernels (BENCH_LONG_KERNELS of BENCH_LONG_CYCLES GPU cycles each,
# about 50 us), plain, kernels only and default: where the per-kernel cost stops mattering.
# Knobs: BENCH_REPS (7), BENCH_KERNELS (10000), BENCH_LONG_KERNELS (2000), BENCH_LONG_CYCLES
# (100000), PROF_BUILD (the build directory).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${PROF_BUILD:-$src/build}
reps=${BENCH_REPS:-7}
kernels=${BENCH_KERNELS:-10000}
long_kernels=${BENCH_LONG_KERNELS:-2000}
long_cycles=${BENCH_LONG_CYCLES:-100000}
die() { echo "bench/cuda.sh: $*" >&2; exit 1; }

build_phase() {
  local out=$1 nvcc=nvcc
  command -v nvcc >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
  [[ -x $nvcc || $(command -v "$nvcc") ]] || die "nvcc not found"
  [[ -e $build/lib/libprof_cuda.so ]] || die "$build has no libprof_cuda.so (prof built without CUPTI)"
  mkdir -p "$out/bin"
  local flags=(-O2 -gencode arch=compute_90,code=[sm_90,compute_90] -I"$src/tests/gpu")
  "$nvcc" "${flags[@]}" "$src/tests/gpu/many_kernels.cu" -o "$out/bin/many_kernels_plain"
  "$build/bin/prof-wrap" nvcc "${flags[@]}" "$src/tests/gpu/many_kernels.cu" -o "$out/bin/many_kernels_prof"
  PROF_BUILD=$build "$src/tests/gpu/pack.sh" "$out" >&2
}

run_phase() {
  local out=$1 r v line
  [[ -d $out/lib ]] && export LD_LIBRARY_PATH=$out/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
  nvidia-smi -L >"$out/device.txt" 2>&1 || die "no GPU here (nvidia-smi failed)"
  : >"$out/bench.txt"
  local exp=$out/exp
  for ((r = 1; r <= reps; r++)); do
    for v in plain off kernel kernel_trace runtime default trace; do
      rm -rf "$exp"
      case $v in
        plain) line=$("$out/bin/many_kernels_plain" "$kernels" | grep '^PROF_INFO') ;;
        off) line=$(PROF_CUDA_ENABLE=none PROF_EXPERIMENT_DIRECTORY=$exp "$out/bin/many_kernels_prof" "$kernels" | grep '^PROF_INFO') ;;
        kernel) line=$(PROF_CUDA_ENABLE=kernel PROF_EXPERIMENT_DIRECTORY=$exp "$out/bin/many_kernels_prof" "$kernels" | grep '^PROF_INFO') ;;
        kernel_trace) line=$(PROF_CUDA_ENABLE=kernel PROF_ENABLE_PROFILING=false PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=$exp "$out/bin/many_kernels_prof" "$kernels" | grep '^PROF_INFO') ;;
        runtime) line=$(PROF_CUDA_ENABLE=runtime PROF_EXPERIMENT_DIRECTORY=$exp "$out/bin/many_kernels_prof" "$kernels" | grep '^PROF_INFO') ;;
        default) line=$(PROF_EXPERIMENT_DIRECTORY=$exp "$out/bin/many_kernels_prof" "$kernels" | grep '^PROF_INFO') ;;
        trace) line=$(PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=$exp "$out/bin/many_kernels_prof" "$kernels" | grep '^PROF_INFO') ;;
      esac
      echo "$v $line" >>"$out/bench.txt"
    done
    for v in plain kernel default; do
      rm -rf "$exp"
      case $v in
        plain) line=$("$out/bin/many_kernels_plain" "$long_kernels" "$long_cycles" | grep '^PROF_INFO') ;;
        kernel) line=$(PROF_CUDA_ENABLE=kernel PROF_EXPERIMENT_DIRECTORY=$exp "$out/bin/many_kernels_prof" "$long_kernels" "$long_cycles" | grep '^PROF_INFO') ;;
        default) line=$(PROF_EXPERIMENT_DIRECTORY=$exp "$out/bin/many_kernels_prof" "$long_kernels" "$long_cycles" | grep '^PROF_INFO') ;;
      esac
      echo "long_$v $line" >>"$out/bench.txt"
    done
  done
  rm -rf "$exp"
  echo "bench/cuda.sh: $(wc -l <"$out/bench.txt") runs in $out/bench.txt" >&2
}

report_phase() {
  local out=$1 doc=${2:-$src/docs/PERFORMANCE.md}
  [[ -s $out/bench.txt ]] || die "$out/bench.txt is missing or empty; run bench/cuda.sh --run $out first"
  local device
  device=$(head -1 "$out/device.txt" 2>/dev/null | sed 's/ (UUID.*//')
  python3 - "$out/bench.txt" "$doc" "$device" "$(date -u +%Y-%m-%d)" <<'PY'
import re, statistics, sys
data, doc, device, date = sys.argv[1:5]
runs = {}
kernels = {}
for line in open(data):
    v, rest = line.split(' ', 1)
    f = dict(kv.split('=') for kv in rest.split()[1:] if '=' in kv)
    kernels[v] = (int(f['kernels']), int(f.get('cycles', 0)))
    runs.setdefault(v, []).append((int(f['launch_loop_ns']) + int(f['sync_ns'])) / 1e6)
names = [('plain', 'plain nvcc, no prof'), ('off', 'prof-wrap nvcc, PROF_CUDA_ENABLE=none'),
         ('kernel', 'kernels only (PROF_CUDA_ENABLE=kernel), profile'),
         ('kernel_trace', 'kernels only, trace only (no callbacks)'),
         ('runtime', 'API regions only (PROF_CUDA_ENABLE=runtime), profile'),
         ('default', 'default PROF_CUDA_ENABLE, profile'),
         ('trace', 'default, profile and trace')]
def table(prefix, labels):
    base = runs[prefix + 'plain']
    base_min, base_med = min(base), statistics.median(base)
    n = kernels[prefix + 'plain'][0]
    rows = []
    for key, label in labels:
        t = runs.get(prefix + key, [])
        if not t:
            continue
        mn, md = min(t), statistics.median(t)
        per = (md - base_med) * 1e6 / n
        rows.append('| %s | %.1f / %.1f | %.2fx / %.2fx | %+.0f |' % (label, mn, md, mn / base_min, md / base_med, per))
    return rows
rows = table('', names)
long_rows = table('long_', [n for n in names if n[0] in ('plain', 'kernel', 'default')])
nk = kernels['plain'][0]
def per_kernel(key, prefix=''):
    return (statistics.median(runs[prefix + key]) - statistics.median(runs[prefix + 'plain'])) * 1e6 / kernels[prefix + 'plain'][0]
def ratio(key, prefix=''):
    return statistics.median(runs[prefix + key]) / statistics.median(runs[prefix + 'plain'])
def explain():
    text = ('What it costs and why (medians): prof itself, with CUDA off, %+.0f ns per kernel; the API regions '
            '(CUPTI runtime callbacks and a region per call) %+.0f ns per call; CUPTI\'s kernel records alone, '
            'with no callback at all (kernels in a trace only), %+.0f ns per kernel: CUPTI instruments each launch '
            'for its GPU timestamps (on Hopper; its hardware event tracing, cuptiActivityEnableHWTrace, exists '
            'only on Blackwell). On kernels of a few microseconds this cannot hide: kernels only costs %.2fx there, '
            'so the goal of at most 5 %% for kernels only is **not met for such tiny kernels**.'
            % (per_kernel('off'), per_kernel('runtime'), per_kernel('kernel_trace'), ratio('kernel')))
    if 'long_plain' in runs:
        text += (' It is met once kernels run for tens of microseconds: %.2fx (kernels only) and %.2fx (default) '
                 'with the longer kernels.' % (ratio('kernel', 'long_'), ratio('default', 'long_')))
    return text + ' The medians on a shared machine scatter more than the minima.'
section = '\n'.join([
    '<!-- cuda:begin (bench/cuda.sh writes this section) -->',
    '## CUDA: a loop of small kernels',
    '',
    'Measured %s on %s: tests/gpu/many_kernels.cu, %d launches of a one-block kernel on one stream, '
    'then cudaDeviceSynchronize; host time of the loop and the synchronisation, %d interleaved '
    'repetitions per variant (min / median), ratio to the plain build.' % (date, device, nk, len(runs['plain'])),
    '',
    '| variant | ms min / median | ÷ plain (min / median) | ns per kernel vs plain (median) |',
    '|---|---|---|---|',
] + rows + ([
    '',
    'Longer kernels: %d launches of a kernel that busy-waits %d GPU cycles (about %.0f us at 1.98 GHz):'
    % (kernels['long_plain'][0], kernels['long_plain'][1], kernels['long_plain'][1] / 1980.0),
    '',
    '| variant | ms min / median | ÷ plain (min / median) | ns per kernel vs plain (median) |',
    '|---|---|---|---|',
] + long_rows if 'long_plain' in runs else []) + ['', explain(), '', '<!-- cuda:end -->'])
text = open(doc).read()
if '<!-- cuda:begin' in text:
    text = re.sub(r'<!-- cuda:begin.*?<!-- cuda:end -->', lambda m: section, text, flags=re.S)
else:
    text = text.rstrip('\n') + '\n\n' + section + '\n'
open(doc, 'w').write(text)
print(section)
PY
}

case ${1:-} in
  --build) [[ $# -ge 2 ]] || die "--build needs a directory"; build_phase "$2" ;;
  --run) [[ $# -ge 2 ]] || die "--run needs a directory"; run_phase "$2" ;;
  --report) [[ $# -ge 2 ]] || die "--report needs a directory"; report_phase "$2" "${3:-}" ;;
  "")
    out=$build/bench/cuda
    nvidia-smi -L >/dev/null 2>&1 || die "no GPU here (nvidia-smi failed); see the split flow at the top of this script"
    build_phase "$out" && run_phase "$out" && report_phase "$out" ;;
  *) die "unknown option $1 (see the top of bench/cuda.sh)" ;;
esac
