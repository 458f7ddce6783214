#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One function, two objects built in different directories, one with the GCC plugin and one with
# -finstrument-functions: the trace has ONE region for it (the same demangled name, mangled name
# and absolute, normalised file on both paths). Also: the user's -fno-instrument-functions wins
# over the plugin, and --instrument=plugin with -finstrument-functions is refused.
# Usage: mixed_instrumentation.sh <prof-wrap> <work-dir> <shared-tools-dir>
set -euo pipefail
wrap=$1 work=$2 tools=${3:-}
. "$(dirname "$0")/checkers.sh"
rm -rf "$work" && mkdir -p "$work"/{inc,a,b}
cat >"$work/inc/t.h" <<'H'
template <class T> T twice(T x) { return x + x; }
int from_a(int); int from_b(int);
H
printf '#include "../inc/t.h"\nint from_a(int x) { return twice(x); }\n' >"$work/a/a.cpp"
printf '#include "../inc/t.h"\n#include <cstdio>\nint from_b(int x) { return twice(x) + 1; }\nint main() { std::printf("%%d\\n", from_a(1) + from_b(2)); return 0; }\n' >"$work/b/b.cpp"
(cd "$work/a" && "$wrap" --instrument=plugin g++ -O0 -c a.cpp -o a.o)
(cd "$work/b" && "$wrap" --instrument=functions g++ -O0 -c b.cpp -o b.o)
cd "$work"
"$wrap" g++ a/a.o b/b.o -o prog
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp ./prog
check_trace exp/traces.otf2
defs=$(otf2-print -G exp/traces.otf2 | grep -E '^REGION .*Name: "int twice<int>\(int\)"' || true)
echo "$defs"
n=$(grep -c . <<<"$defs" || true)
[ "$n" = 1 ] || { echo "FAIL: twice<int> is $n regions, expected 1"; exit 1; }
enters=$(otf2-print exp/traces.otf2 | grep -c '^ENTER .*Region: "int twice<int>(int)"' || true)
[ "$enters" = 2 ] || { echo "FAIL: twice<int> entered $enters times, expected 2"; exit 1; }
# To a file first: under pipefail, grep -q's early exit could end otf2-print with SIGPIPE.
otf2-print -G exp/traces.otf2 >defs.txt
grep -q "File: \"$work/inc/t.h\"" <<<"$(grep -A3 'twice<int>' defs.txt || true)" ||
  grep -q "\"$work/inc/t.h\"" defs.txt || { echo "FAIL: the region's file is not $work/inc/t.h"; exit 1; }

"$wrap" gcc -c -fno-instrument-functions -x c - -o none.o <<<'int f(int x) { return x; }'
if nm none.o | grep -E '__prof_plugin|__cyg_profile|__prof_region'; then echo "FAIL: -fno-instrument-functions did not win"; exit 1; fi
if "$wrap" --instrument=plugin gcc -c -finstrument-functions -x c - -o twice.o <<<'int f(int x) { return x; }' 2>err.txt; then
  echo "FAIL: --instrument=plugin with -finstrument-functions was accepted"; exit 1
fi
grep -q "^prof-wrap: error: --instrument=plugin and -finstrument-functions would instrument every function twice; drop one of them$" err.txt
echo ok
