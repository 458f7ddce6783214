#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Many threads flushing at once (issue 15, defect 5; issue 30, item 4): 64 threads run together, 50,000 calls of
# leaf() each, tracing at PROF_TOTAL_MEMORY=16M. Before the fix every location that flushed kept
# an OTF2 buffer of 4 MiB from outside the budget until the end (peak RSS 150-270 MB, "OTF2 write
# buffer ... from outside PROF_TOTAL_MEMORY"), a location closed by another thread's flush could be
# handed to a new thread whose events were then dropped, and the profile's advice crept up by 1M
# per run (16M said 17M, 17M said 18M). Now a flush that finds every OTF2 buffer taken writes the
# raw events to the location's spill file in the experiment directory, converted at the end one
# writer at a time: peak RSS stays near the budget, every Enter is in the trace or counted as lost,
# and the value the warnings name is enough: a second run with it warns about nothing.
source "$ROBUSTNESS_SRC/common.sh"
build tc "$ROBUSTNESS_SRC/progs/thread_churn.c" -pthread
calls=3200000  # 64 x 50,000
run() {  # run <memory> <dir>: peak RSS (KiB) in $dir.rss
  PROF_TOTAL_MEMORY=$1 PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=$2 \
    /usr/bin/time -f '%M' -o "$2.rss" ./tc 64 64 50000 >"$2.out" 2>"$2.err" || fail "$1: exit status $?: $(cat "$2.err")"
  grep -q "^threads 64 calls $calls\$" "$2.out" || fail "$1: the program says: $(cat "$2.out")"
  [ -z "$(ls "$2" | grep spill)" ] || fail "$1: spill files left in $2: $(ls "$2")"
  otf2-print "$2/traces.otf2" >"$2.print" 2>"$2.print.err" || fail "$1: otf2-print failed: $(head -3 "$2.print.err")"
  [ ! -s "$2.print.err" ] || fail "$1: otf2-print complains: $(head -3 "$2.print.err")"
  check_profile "$2/profile.cubex" --expect-region leaf
}
run 16M small
expect_no_line small.err 'outside PROF_TOTAL_MEMORY'
rss=$(tail -n 1 small.rss)
echo "16M: peak RSS $rss KiB"
if [ -z "${PROFTESTS_SANITIZER:-}" ]; then
  [ "$rss" -le 40960 ] || fail "16M: peak RSS $rss KiB, more than 40 MiB (budget 16 MiB, the program alone about 6 MiB)"
fi
enters=$(awk '$1 == "ENTER" && /"leaf"/' small.print | wc -l)
lost=$(sed -n 's/^prof: warning: \([0-9]*\) events were lost.*/\1/p' small.err)
echo "16M: $enters Enters of leaf, ${lost:-0} events lost"
[ $((calls - enters)) -le "${lost:-0}" ] || fail "16M: $enters Enters of leaf of $calls calls, but only ${lost:-0} events reported lost"
# The profile is never starved by trace buffers, nor are new threads (issue 30, item 4: threads
# that started in a burst each took two chunks, the profile ran into PROFILE MEMORY FULL nodes
# with 25-77 % of its visits and up to 52,196 events were lost): all calls in both.
expect_no_line small.err 'the profile ran out of memory|events were lost'
[ "$enters" -eq "$calls" ] || fail "16M: $enters Enters of leaf, the program made $calls calls"
if have_cubex_check; then
  v=$(/usr/bin/python3 "$tools/cubex_check.py" small/profile.cubex --dump | awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }')
  [ "$v" -eq "$calls" ] || fail "16M: the profile has $v visits of leaf, the program made $calls calls"
fi
expect_line small.err '^prof: warning: trace buffers were flushed [0-9]+ times during the run'
# The advice: the largest value any warning names; with it, no warning at all.
advice=$(grep -o 'PROF_TOTAL_MEMORY=[0-9]*[MG]' small.err | cut -d= -f2 | sort -h | tail -n 1)
[ -n "$advice" ] || fail "16M: no warning names a PROF_TOTAL_MEMORY: $(cat small.err)"
run "$advice" advised
expect_no_line advised.err '^prof: (warning|error)'
enters=$(awk '$1 == "ENTER" && /"leaf"/' advised.print | wc -l)
[ "$enters" -eq "$calls" ] || fail "$advice: $enters Enters of leaf, the program made $calls calls"
if have_cubex_check; then
  v=$(/usr/bin/python3 "$tools/cubex_check.py" advised/profile.cubex --dump | awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }')
  [ "$v" -eq "$calls" ] || fail "$advice: the profile has $v visits of leaf, the program made $calls calls"
fi
echo "ok: 16M peak RSS $rss KiB, advice $advice, which warns about nothing and keeps all $calls calls"
