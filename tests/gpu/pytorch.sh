#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# python3 -m prof on a PyTorch training loop (issue 16): pytorch_train.py once under torch.profiler
# (its count of the GPU activities of 20 steps) and once under python3 -m prof with tracing;
# pytorch_check.py compares them name by name and checks the GPU times. Skips (77) without a
# GPU, PyTorch with CUDA, or prof's Python adapter for that python3.
# Usage: pytorch.sh <prof build dir> <work dir>     (PYTHON: the Python with torch, default python3)
set -u
build=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
ls /dev/nvidia[0-9]* >/dev/null 2>&1 || { echo "SKIP: no GPU (no /dev/nvidia<N>)"; exit 77; }
"$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "SKIP: $py has no PyTorch with CUDA"; exit 77; }
PYTHONPATH=$build/python "$py" -c 'import prof._prof' 2>/dev/null ||
  { echo "SKIP: prof's Python adapter is not built for $py (configure with -DPython3_EXECUTABLE=$(command -v "$py"))"; exit 77; }
tools=${PROF_SHARED_TOOLS:-$here/../../../shared/tools}
unset PROF_SHARED_TOOLS  # not one of prof's variables: the measured run would warn
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$py" "$here/pytorch_train.py" torchprof >torch.out 2>torch.err || { cat torch.err; echo "FAIL: torch.profiler run"; exit 1; }
PYTHONPATH=$build/python PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=512M PROF_EXPERIMENT_DIRECTORY=exp PROF_VERBOSE=1 \
  "$py" -m prof "$here/pytorch_train.py" prof >prof.out 2>prof.err || { tail -20 prof.err; echo "FAIL: python3 -m prof"; exit 1; }
grep -E "CUDA: [0-9]|python:|warning" prof.err
# Every GPU activity has its host call (kernels that cuBLAS launches through the driver API too).
grep -q "CUDA: .* 0 of unknown host call" prof.err || { echo "FAIL: GPU activities without their host call"; exit 1; }
otf2-print -A exp/traces.otf2 2>print.err | "$py" "$here/pytorch_check.py" torch.out || exit 1
[ ! -s print.err ] || { head -3 print.err; echo "FAIL: otf2-print complains"; exit 1; }
# The profile: GPU work under the Python call path that launched it (cubex_check.py of ../shared/tools,
# or PROF_SHARED_TOOLS; skipped, saying so, where it is not).
if [ -f "$tools/cubex_check.py" ]; then
  "$py" "$tools/cubex_check.py" exp/profile.cubex --dump >dump.txt 2>&1 || { tail -3 dump.txt; echo "FAIL: cubex_check.py rejects the profile"; exit 1; }
  "$py" "$here/pytorch_profile_check.py" <dump.txt || exit 1
else
  echo "pytorch profile: not checked (no cubex_check.py in $tools; set PROF_SHARED_TOOLS)"
fi
