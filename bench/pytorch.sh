#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A PyTorch training loop's step time under prof (issue 16), on a GPU machine:
# tests/gpu/pytorch_train.py (an MLP, BENCH_STEPS steps per run, timed inside the script), in
# interleaved repetitions, each run pinned to one core (taskset; BENCH_CPU, default the last):
#   plain            python3 pytorch_train.py
#   torch.profiler   the same steps inside torch.profiler.profile (CPU and CUDA activities)
#   prof, Python     python3 -m prof with PROF_CUDA_ENABLE=none (Python functions only)
#   prof, no API     PROF_CUDA_ENABLE=kernel,memcpy,memset,nvtx: GPU activities and NVTX, no CUDA
#                    API regions (callbacks only on the calls that make GPU work)
#   prof             python3 -m prof, default settings (Python functions, CUDA API regions,
#                    kernels, copies, memsets, NVTX)
# Per variant the step time's min and median and the ratio to plain.
#
#   bench/pytorch.sh [doc]               run and report here (needs a GPU and PyTorch)
#   bench/pytorch.sh --run FILE          run only (FILE: the raw figures), e.g. on a GPU machine
#   bench/pytorch.sh --report FILE [doc] the section of docs/PERFORMANCE.md between the
#                                        "pytorch:begin" and "pytorch:end" markers, from FILE
# PROF_BUILD: prof's build (or a carried tree with bin/prof-run and python/prof); PYTHON: the
# Python with PyTorch (python3). Knobs: BENCH_REPS (7; a repetition of the five variants takes about a minute), BENCH_STEPS (200), BENCH_CPU.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${PROF_BUILD:-$src/build}
py=${PYTHON:-python3}
reps=${BENCH_REPS:-7}
steps=${BENCH_STEPS:-200}
cpu=${BENCH_CPU:-$(($(nproc) - 1))}

run_phase() {
  local out=$1 w
  "$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "bench/pytorch.sh: $py has no PyTorch with CUDA" >&2; exit 1; }
  for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
  w=$(mktemp -d)
  {
    echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $("$py" -c 'import sys, torch; print("Python", sys.version.split()[0], "PyTorch", torch.__version__)'); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); $(date -u +%Y-%m-%d); steps $steps; cpu $cpu"
    for ((r = 1; r <= reps; r++)); do
      echo "plain $(taskset -c "$cpu" "$py" "$src/tests/gpu/pytorch_train.py" plain "$steps" | sed -n 's/.*"step_ms": \([0-9.]*\).*/\1/p')"
      echo "torchprof $(taskset -c "$cpu" "$py" "$src/tests/gpu/pytorch_train.py" torchprof "$steps" 2>/dev/null | sed -n 's/.*"step_ms": \([0-9.]*\).*/\1/p')"
      echo "prof_python $(PYTHONPATH=$build/python PROF_CUDA_ENABLE=none PROF_EXPERIMENT_DIRECTORY=$w/e taskset -c "$cpu" "$py" -m prof "$src/tests/gpu/pytorch_train.py" prof "$steps" 2>/dev/null | sed -n 's/.*"step_ms": \([0-9.]*\).*/\1/p')"
      rm -rf "$w/e"
      echo "prof_gpu $(PYTHONPATH=$build/python PROF_CUDA_ENABLE=kernel,memcpy,memset,nvtx PROF_EXPERIMENT_DIRECTORY=$w/e taskset -c "$cpu" "$py" -m prof "$src/tests/gpu/pytorch_train.py" prof "$steps" 2>/dev/null | sed -n 's/.*"step_ms": \([0-9.]*\).*/\1/p')"
      rm -rf "$w/e"
      echo "prof $(PYTHONPATH=$build/python PROF_EXPERIMENT_DIRECTORY=$w/e taskset -c "$cpu" "$py" -m prof "$src/tests/gpu/pytorch_train.py" prof "$steps" 2>/dev/null | sed -n 's/.*"step_ms": \([0-9.]*\).*/\1/p')"
      rm -rf "$w/e"
    done
  } >"$out"
  rm -rf "$w"
}

report_phase() {
  local in=$1 doc=${2:-$src/docs/PERFORMANCE.md}
  python3 - "$in" "$doc" "$here" <<'PY'
import statistics, sys
data, doc, bench = sys.argv[1:4]
head, runs = "", {}
for line in open(data):
    if line.startswith("#"):
        head = line[1:].strip()
        continue
    v, *x = line.split()
    if x:
        runs.setdefault(v, []).append(float(x[0]))
names = [("plain", "plain"), ("torchprof", "torch.profiler (CPU and CUDA)"), ("prof_python", "python3 -m prof, PROF_CUDA_ENABLE=none (Python functions only)"),
         ("prof_gpu", "python3 -m prof, PROF_CUDA_ENABLE=kernel,memcpy,memset,nvtx (no API regions)"),
         ("prof", "python3 -m prof, default settings")]
pmin, pmed = min(runs["plain"]), statistics.median(runs["plain"])
rows = ["| %s | %.3f | %.3f | %.2fx | %.2fx |" % (label, min(runs[v]), statistics.median(runs[v]), min(runs[v]) / pmin, statistics.median(runs[v]) / pmed)
        for v, label in names if v in runs]
text = """<!-- pytorch:begin -->
## PyTorch: step time of a training loop (issue 16)

%s; `bench/pytorch.sh` (tests/gpu/pytorch_train.py, an MLP; %d runs of each variant,
interleaved, each pinned to one core; the steps timed inside the script).

| variant | step ms min | step ms median | min vs plain | median vs plain |
|---|---|---|---|---|
%s

The goal is within 5 %% of plain with default settings. The Python side (sys.monitoring) is what
`PROF_CUDA_ENABLE=none` shows; the rest is the CUDA adapter's (CUPTI's callbacks on the API calls
that are regions or launch work, and its activity records of every kernel, copy and memset).
Whole runs land on one of two levels on a shared GPU machine (plain here from %.2f to %.2f ms per
step), whatever runs: compare the minima; a median says how many runs of a variant landed high.
<!-- pytorch:end -->""" % (head, len(runs["plain"]), "\n".join(rows), min(runs["plain"]), max(runs["plain"]))
print(text)
sys.path.insert(0, bench)
from doc_section import put_section
put_section(doc, "pytorch", text)
PY
}

case ${1:-} in
  --run) run_phase "$2" ;;
  --report) report_phase "$2" "${3:-}" ;;
  *) t=$(mktemp); run_phase "$t"; report_phase "$t" "${1:-}"; rm -f "$t" ;;
esac
