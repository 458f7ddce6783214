#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# prof-export and prof-report on damaged traces (issue 30, item 10): a small trace of a
# prof-wrap'ed program (dir_calls: main and 20 calls of leaf), damaged 200 ways by damage_trace.py (bits
# flipped, bytes overwritten, 0xff runs as large references, zeroed runs, files cut short; in the
# global and local definitions, the event files and the anchor; seeded). On every case each tool
# must end by itself (no signal, no hang), print no raw `[OTF2] src/...` line of the OTF2
# library, and when it fails, say so in exactly one line starting with `prof-export: error:` /
# `prof-report: error:`. Before the fix prof-export died by SIGSEGV or SIGABRT on region
# references out of range, and both tools let OTF2 print its own lines.
# Usage: tools_damaged_trace.sh <prof-wrap> <work> <tools> [cases]
source "${ROBUSTNESS_SRC:?}/common.sh"
cases=${1:-200}
export_bin=$prof_bin/prof-export report_bin=$prof_bin/prof-report
[ -x "$export_bin" ] || fail "no prof-export beside prof-wrap ($prof_bin)"
[ -x "$report_bin" ] || fail "no prof-report beside prof-wrap ($prof_bin)"
build calls "$here/progs/dir_calls.c"
PROF_ENABLE_TRACING=true PROF_ENABLE_PROFILING=false PROF_EXPERIMENT_DIRECTORY=exp ./calls 20 >/dev/null
check_trace exp/traces.otf2
# The intact trace: both tools succeed without a word on stderr.
"$export_bin" -q -o good.pftrace exp >/dev/null 2>good.err || fail "prof-export fails on the intact trace: $(cat good.err)"
[ ! -s good.err ] || fail "prof-export complains about the intact trace: $(cat good.err)"
"$report_bin" --text exp >/dev/null 2>good.err || fail "prof-report fails on the intact trace: $(cat good.err)"
[ ! -s good.err ] || fail "prof-report complains about the intact trace: $(cat good.err)"

/usr/bin/python3 "$here/damage_trace.py" exp damaged "$cases" 30
problems=0 failed=0 signals=0 hangs=0 raw=0
problem() {
  problems=$((problems + 1))
  [ $problems -gt 12 ] || echo "PROBLEM: $1 ($(cat damaged/case$2.what))"
}
# run_tool <name> <case> <command...>: checks one run; counts the runs that failed cleanly.
run_tool() {
  local name=$1 c=$2
  shift 2
  set +e
  timeout -k 5 30 "$@" >/dev/null 2>err
  local rc=$?
  set -e
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    hangs=$((hangs + 1))
    problem "$name hangs on case $c" "$c"
  elif [ $rc -ge 128 ]; then
    signals=$((signals + 1))
    problem "$name dies by signal $((rc - 128)) on case $c: $(grep -v '^\[OTF2\]' err | head -c 300)" "$c"
  fi
  if grep -q '^\[OTF2\]' err; then
    raw=$((raw + 1))
    problem "$name prints OTF2's own lines on case $c: $(grep '^\[OTF2\]' err | head -1 | head -c 200)" "$c"
  fi
  if [ $rc -ne 0 ] && [ $rc -lt 124 ]; then
    failed=$((failed + 1))
    if [ "$(wc -l <err)" -ne 1 ] || ! grep -q "^$name: error: " err; then
      problem "$name exits with $rc on case $c without exactly one '$name: error:' line: $(head -c 400 err | tr '\n' '|')" "$c"
    fi
  elif [ $rc -eq 0 ] && grep -qv "^$name: warning: " err; then
    problem "$name succeeds on case $c with stderr lines that are no warnings: $(head -c 400 err | tr '\n' '|')" "$c"
  fi
}
for ((c = 0; c < cases; ++c)); do
  run_tool prof-export $c "$export_bin" -q -o damaged/case$c.pftrace damaged/case$c
  run_tool prof-report $c "$report_bin" --text damaged/case$c
  rm -f damaged/case$c.pftrace*
done
echo "$cases damaged traces, 2 tools: $failed runs failed; $problems problems: $signals deaths by a signal, $hangs hangs, $raw runs with OTF2's own lines"
[ $problems -eq 0 ] || fail "$problems problems on $cases damaged traces (the first 12 above); remake one with: damage_trace.py <exp> <out> $cases 30"
echo "ok: neither tool crashed, hung or let OTF2 print on $cases damaged traces"
