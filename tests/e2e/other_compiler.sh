#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A compiler prof does not know (here gcc under another name) is driven like GCC, with a
# one-line notice: the program is instrumented and its trace has the exact Enter counts.
# Usage: other_compiler.sh <prof-wrap> <work-dir> <calls.c> <shared-tools-dir>
set -euo pipefail
wrap=$1 work=$2 src=$3 tools=${4:-}
. "$(dirname "$0")/checkers.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work"
ln -s "$(command -v gcc)" mycc
"$wrap" ./mycc -O2 "$src" -o prog 2>err.txt
cat err.txt
grep -qx "prof-wrap: notice: './mycc' is not a compiler prof knows (gcc, g++, cc, c++, clang, clang++, mpicc, mpicxx, mpic++, mpiCC, nvcc, gfortran, mpifort, mpif90, mpif77); it is driven like GCC: -finstrument-functions, -Wl, link options" err.txt
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp ./prog >out.txt
check_trace exp/traces.otf2 --expect-region fib
expected=$(sed -n 's/^PROF_EXPECT fib //p' out.txt)
got=$(otf2-print exp/traces.otf2 | grep -c '^ENTER .*Region: "fib"' || true)
[ "$got" = "$expected" ] || { echo "FAIL: fib entered $got times, the program made $expected calls"; exit 1; }
echo "fib: $got Enters, as the program counted; ok"
