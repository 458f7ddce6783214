#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two host threads launching spin kernels onto one stream (two_threads.cu), built with plain nvcc
# and run under prof-run: the trace must hold every kernel, each within 5 % of its 100 us
# (two_threads_check.py; before the fix the adapter clamped the records that CUPTI handed over
# out of order and wrote them with zero duration). Skips (77) without a GPU or nvcc.
# Usage: two_threads.sh <prof build dir> <work dir>
set -u
build=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ls /dev/nvidia[0-9]* >/dev/null 2>&1 || { echo "SKIP: no GPU (no /dev/nvidia<N>)"; exit 77; }
[ -x "$nvcc" ] || { echo "SKIP: no nvcc"; exit 77; }
[ -e "$build/lib/libprof_cuda.so" ] || { echo "SKIP: prof was built without the CUDA adapter"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$nvcc" -O2 -arch=sm_${PROF_GPU_ARCH:-90} "$here/two_threads.cu" -o two_threads || { echo "FAIL: nvcc"; exit 1; }
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp "$build/bin/prof-run" --nosampling ./two_threads 200 100000 >out 2>err
rc=$?
[ $rc = 77 ] && { cat out; exit 77; }
[ $rc = 0 ] || { cat err; echo "FAIL: two_threads exited with $rc"; exit 1; }
otf2-print -A exp/traces.otf2 | /usr/bin/python3 "$here/two_threads_check.py" out
