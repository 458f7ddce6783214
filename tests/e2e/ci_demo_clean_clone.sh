#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# README's first command, `bash .ci/demo`, from a copy of the source tree with no ../shared beside
# it, as a user's clone is (issue 14, item 1): set-up, build (without the tests and without the
# Python adapter's builds for further Pythons, to keep this short), instrument examples/jacobi.c, run it, show the trace; it must succeed and say so.
# Usage: ci_demo_clean_clone.sh <source-dir> <work-dir>
set -euo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work/clone"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # the tracked files and the new ones not ignored, as the next commit would have them
  git -C "$src" ls-files -z --cached --others --exclude-standard | (cd "$src" && xargs -0 cp --parents -t "$work/clone" 2>/dev/null || true)
else
  (cd "$src" && tar --exclude='./build*' -cf - .) | tar -C "$work/clone" -xf -
fi
[ ! -e "$work/shared" ] || { echo "FAIL: $work/shared exists"; exit 1; }
rc=0
SETUP_CMAKE_ARGS="-DPROF_BUILD_TESTS=OFF -DPROF_EXTRA_PYTHONS=" bash "$work/clone/.ci/demo" "$work/build" >"$work/demo.log" 2>&1 || rc=$?
tail -n 30 "$work/demo.log"
[ $rc = 0 ] || { echo "FAIL: .ci/demo exited with $rc"; exit 1; }
grep -q '^+ otf2-print jacobi-trace/traces.otf2 | head$' "$work/demo.log" || { echo "FAIL: the demo showed no trace"; exit 1; }
grep -q 'jacobi-trace (traces.otf2 for Vampir, profile.cubex for Cube)' "$work/demo.log" || { echo "FAIL: the demo did not finish"; exit 1; }
[ -s "$work/build/demo/jacobi-trace/traces.otf2" ] && [ -s "$work/build/demo/jacobi-trace/profile.cubex" ] ||
  { echo "FAIL: no trace or profile in $work/build/demo/jacobi-trace"; exit 1; }
[ -s "$work/build/demo/jacobi-trace/report.html" ] && [ -s "$work/build/demo/jacobi-trace/trace.pftrace" ] ||
  { echo "FAIL: the demo wrote no report.html or trace.pftrace"; exit 1; }
grep -q '^Top regions by exclusive time' "$work/demo.log" || { echo "FAIL: the demo showed no prof-report --text"; exit 1; }
otf2-print "$work/build/demo/jacobi-trace/traces.otf2" >/dev/null 2>"$work/print.err"
[ ! -s "$work/print.err" ] || { cat "$work/print.err"; echo "FAIL: otf2-print wrote to stderr"; exit 1; }
echo ok
