#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Inline functions measured with prof's GCC plugin on request (issue 14, item 7): a proxy app
# whose physics routines are all static inline, built at -O2 with --instrument=plugin and an
# instrument filter (Score-P syntax) that INCLUDEs three of them by name. Those three appear in
# the trace and the profile with exactly the calls the program counted, on their call paths,
# also where GCC inlined them into main; the fourth (not named) stays without hooks. Built without
# the filter, none of them is measured and prof-score says why main holds the time.
# Usage: plugin_inline.sh <prof-wrap> <prof-score> <work-dir> <progs-dir> [<shared-tools-dir>]
set -euo pipefail
wrap=$1 score=$2 work=$3 progs=$4 tools=${5:-}
. "$(dirname "$0")/checkers.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "plugin_inline: FAIL: $*" >&2; exit 1; }

"$wrap" --instrument=plugin --instrument-filter="$progs/inline_physics.filter" gcc -O2 "$progs/inline_physics.c" -o with_filter
"$wrap" --instrument=plugin gcc -O2 "$progs/inline_physics.c" -o without_filter

# GCC inlines the instrumented bodies: no out-of-line copy is left, yet the hooks stay.
for f in compute_forces pair_force integrate energy; do
  nm with_filter >symbols.txt  # a file, not a pipe: grep -q's early exit under pipefail
  if grep -q " t $f\$" symbols.txt; then echo "note: GCC kept an out-of-line $f"; else echo "$f: inlined"; fi
done

PROF_ENABLE_TRACING=true PROF_ENABLE_PROFILING=true PROF_EXPERIMENT_DIRECTORY=exp ./with_filter >out.txt
otf2-print exp/traces.otf2 >print.txt
for r in main compute_forces pair_force integrate; do
  expected=$(sed -n "s/^PROF_EXPECT $r //p" out.txt)
  got=$(grep -c "^ENTER .*Region: \"$r\"" print.txt || true)
  [ "$got" = "$expected" ] || fail "$r: $got Enter events in the trace, the program made $expected calls"
  visits=$("$score" -r exp | awk -v r="$r" '$NF == r { print $(NF-4) }' | tr -d ,)
  [ "$visits" = "$expected" ] || fail "$r: prof-score shows $visits visits in the profile, the program made $expected calls"
  echo "$r: $got Enters, $visits visits, as the program counted"
done
! grep -q 'Region: "energy"' print.txt || fail "energy (declared inline, not in the filter) was recorded"
check_trace exp/traces.otf2 --expect-region pair_force
if have_cubex_check; then
  /usr/bin/python3 "$tools/cubex_check.py" exp/profile.cubex --dump >dump.txt || { cat dump.txt >&2; fail "cubex_check.py rejects the profile"; }
  tail -n 1 dump.txt
  # pair_force on its call path below compute_forces, with every call.
  expected=$(sed -n 's/^PROF_EXPECT pair_force //p' out.txt)
  got=$(awk '$1 == "visits" && $0 ~ /main\/compute_forces\/pair_force / { s += $NF } END { print s + 0 }' dump.txt)
  [ "$got" = "$expected" ] || { grep '^visits' dump.txt >&2; fail "main/compute_forces/pair_force: $got visits in the profile, $expected calls"; }
  echo "main/compute_forces/pair_force: $got visits"
fi

# Without the filter: only main, and prof-score's hint names the likely cause.
PROF_ENABLE_PROFILING=true PROF_EXPERIMENT_DIRECTORY=exp_plain ./without_filter >/dev/null
"$score" -r exp_plain >score.txt
for r in compute_forces pair_force integrate energy; do
  ! grep -q " $r\$" score.txt || fail "$r is in the profile of the build without the filter"
done
grep -q "^(hint: [0-9.]* % of the time is exclusive to main, entered once per location. If that time is spent in$" score.txt ||
  { cat score.txt >&2; fail "prof-score gave no hint that main's exclusive time may be its inline callees'"; }
grep -q "^ prof-wrap --instrument-filter=FILE, and rebuild)$" score.txt || { cat score.txt >&2; fail "the hint does not end naming the fix"; }
echo "plugin_inline: inline functions named by the filter are measured with exact counts; prof-score hints at them otherwise"
