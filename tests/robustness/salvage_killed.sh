#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A tracing run killed by SIGKILL after flushes (issue 30, item 3): before, its flushed events sat
# in traces/*.evt with no definitions or anchor and no tool read them. prof-salvage turns them
# into a trace:
#  1. paced_calls, tracing at 8M (a flush about every second), SIGKILL after 3 s: prof-salvage
#     exits 0 and says what it wrote and what was lost; otf2-print reads the trace with nothing on
#     stderr, with over 10,000 Enters of leaf and each Location's event count equal to what the
#     otf2 module reads; prof-export converts it.
#  2. paced_calls with 2 threads at 32M (two OTF2 buffers: each thread's flushes go to its event
#     file, none to a raw spill file) killed after 4.5 s: both threads' locations have events.
#  3. A run that ended (SIGTERM): its experiment has no salvage part left, and prof-salvage says
#     there is a trace already (one line, status 1); a missing directory: one line, status 1.
#  4. SIGTERM, then SIGKILL during the trace's write-out: profile kept, the flushes' events salvaged.
#  5. An MPI job of 2 ranks killed by SIGKILL: both ranks in the one salvaged trace.
#  6. SIGTERM, then SIGKILL during the write-out, with a stop dump (PROF_STOP_DUMP_MIN=0; by
#     default from 64M of buffered trace): prof-salvage converts the dump after the flushed
#     events and says nothing was lost; the trace holds every event up to the stop: the main
#     thread's ProgramEnd, each thread's events up to then, properly nested, with no stretch
#     without events (a lost chunk of the writer, or the buffered events, would leave one).
source "$ROBUSTNESS_SRC/common.sh"
build paced "$ROBUSTNESS_SRC/progs/paced_calls.c" -pthread
ulimit -c 0
pid=
trap '[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true' EXIT

# kill_after <seconds> <exp> <program...>: runs it traced, SIGKILL after <seconds>
kill_after() {
  local secs=$1 exp=$2
  shift 2
  PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=${MEM:-8M} PROF_EXPERIMENT_DIRECTORY=$exp "$@" >/dev/null 2>err_$exp &
  pid=$!
  sleep "$secs"
  kill -9 $pid
  set +e
  wait $pid
  set -e
  pid=
  [ ! -e $exp/traces.otf2 ] || fail "$exp: the killed run has a trace already?"
}
# salvaged <exp>: prof-salvage, then the readers
salvaged() {
  local exp=$1
  "$prof_bin/prof-salvage" $exp >salvage_$exp.out 2>salvage_$exp.err || fail "$exp: prof-salvage failed: $(cat salvage_$exp.err)"
  [ ! -s salvage_$exp.err ] || fail "$exp: prof-salvage wrote on stderr: $(cat salvage_$exp.err)"
  expect_line salvage_$exp.out "^prof-salvage: trace written: $exp/traces.otf2, [0-9]+ events of [0-9]+ of [0-9]+ locations( \\(ranks [0-9,-]+ of [0-9]+\\))?\$"
  expect_line salvage_$exp.out '^prof-salvage: lost: (the events after each thread|nothing recorded up to the stop signal$)'
  otf2-print $exp/traces.otf2 >print_$exp 2>print_$exp.err || fail "$exp: otf2-print failed: $(head -3 print_$exp.err)"
  [ ! -s print_$exp.err ] || fail "$exp: otf2-print complains: $(head -3 print_$exp.err)"
  /usr/bin/python3 - $exp/traces.otf2 <<'PY' || fail "$exp: the otf2 module disagrees (above)"
import sys, collections, otf2
with otf2.reader.open(sys.argv[1]) as r:
    got = collections.Counter(loc for loc, _ in r.events)
    for loc in r.definitions.locations:
        if got[loc] != loc.number_of_events:
            sys.exit("%s: %d events read, numberOfEvents says %d" % (loc.name, got[loc], loc.number_of_events))
    print("otf2 module: %d locations, %d events, the counts agree" % (len(r.definitions.locations), sum(got.values())))
PY
}

# --- 1 ---
kill_after 3 one ./paced
salvaged one
cat salvage_one.out
expect_line salvage_one.out '^prof-salvage: .*; there is no profile \(it is kept in memory until the end'
enters=$(awk '$1 == "ENTER" && /"leaf"/' print_one | wc -l)
[ "$enters" -gt 10000 ] || fail "one: only $enters Enters of leaf in the salvaged trace"
"$prof_bin/prof-export" one -o one.pftrace >export.out 2>export.err || fail "prof-export of the salvaged trace failed: $(cat export.err)"
echo "ok: a killed single-thread run: $enters Enters of leaf salvaged"

# --- 2 ---
MEM=32M kill_after 4.5 threads ./paced 2
salvaged threads
locs=$(/usr/bin/python3 -c 'import otf2,sys
with otf2.reader.open(sys.argv[1]) as r: print(sum(1 for l in r.definitions.locations if l.number_of_events > 0))' threads/traces.otf2)
[ "$locs" -eq 2 ] || fail "threads: $locs locations with events in the salvaged trace (2 threads ran)"
echo "ok: a killed run of 2 threads: $locs locations with events"

# --- 3 ---
set +e
PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=8M PROF_EXPERIMENT_DIRECTORY=ended timeout -s TERM 1.5 ./paced 2>/dev/null
set -e
[ -f ended/traces.otf2 ] || fail "ended: no trace"
[ ! -e ended/prof-parts ] || fail "ended: prof-parts/ is left after the trace was written: $(ls ended/prof-parts)"
set +e
"$prof_bin/prof-salvage" ended >out 2>err
rc=$?
set -e
[ $rc -eq 1 ] || fail "prof-salvage on a written trace: status $rc"
expect_line err "^prof-salvage: error: 'ended' has a trace already \(traces.otf2\); nothing to salvage\$"
set +e
"$prof_bin/prof-salvage" nowhere >out 2>err
rc=$?
set -e
[ $rc -eq 1 ] && [ "$(wc -l <err)" -eq 1 ] || fail "prof-salvage on a missing directory: status $rc, $(cat err)"
echo "ok: prof-salvage refuses written and missing experiments in one line"

# --- 4: SIGTERM, then SIGKILL 1 s later (Slurm's and srun's short kill wait) while the trace is
# still being written (PROF_DEBUG_WRITE_PAUSE holds the write-out between profile and trace): the
# profile is kept, and what the flushes wrote is readable after prof-salvage.
set +e
PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=8M PROF_DEBUG_WRITE_PAUSE=20000 PROF_EXPERIMENT_DIRECTORY=termkill \
  timeout -s TERM -k 1 3 ./paced 2 2>err_termkill
rc=$?
set -e
[ $rc -eq 137 ] || fail "termkill: status $rc, expected 137 (SIGKILL during the write-out): $(cat err_termkill)"
check_profile termkill/profile.cubex --expect-region leaf
[ ! -e termkill/traces.otf2 ] || fail "termkill: a trace was written within the pause?"
salvaged termkill
expect_line salvage_termkill.out '^prof-salvage: regions still open at the kill stay open in the trace; the profile was written before the kill$'
enters=$(awk '$1 == "ENTER" && /"leaf"/' print_termkill | wc -l)
[ "$enters" -gt 10000 ] || fail "termkill: only $enters Enters of leaf salvaged"
echo "ok: SIGTERM then SIGKILL 1 s later: profile kept, $enters Enters of leaf salvaged from the trace"

# --- 5: an MPI job of 2 ranks killed by SIGKILL: the ranks' parts merged into one trace ---
if command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; then
  "$prof_bin/prof-mpicc" -O1 "$ROBUSTNESS_SRC/progs/paced_mpi.c" -o paced_mpi || fail "prof-mpicc cannot build paced_mpi.c"
  mpirun --oversubscribe -np 2 -x PROF_ENABLE_TRACING=true -x PROF_TOTAL_MEMORY=8M -x PROF_EXPERIMENT_DIRECTORY=mpi \
    ./paced_mpi >/dev/null 2>err_mpi &
  pid=$!
  sleep 4
  pkill -9 -f "^./paced_mpi" || true  # both ranks at once, as a node's end or the OOM killer would
  set +e
  wait $pid
  set -e
  pid=
  [ ! -e mpi/traces.otf2 ] || fail "mpi: the killed job has a trace already?"
  salvaged mpi
  expect_line salvage_mpi.out '^prof-salvage: trace written: mpi/traces.otf2, [0-9]+ events of 2 of [0-9]+ locations \(ranks 0-1 of 2\)$'
  grep -q 'MPI_Allreduce' print_mpi || fail "mpi: no MPI_Allreduce in the salvaged trace"
  echo "ok: a killed MPI job of 2 ranks: $(head -1 salvage_mpi.out)"
else
  echo "mpicc or mpirun missing: the MPI case is not run"
fi

# --- 6: SIGTERM, then SIGKILL while the trace is converted, after the stop dump ---
set +e
PROF_ENABLE_TRACING=true PROF_THROTTLE=false PROF_TOTAL_MEMORY=16M PROF_STOP_DUMP_MIN=0 PROF_DEBUG_WRITE_PAUSE=20000 \
  PROF_VERBOSE=1 PROF_EXPERIMENT_DIRECTORY=dumped timeout -s TERM -k 2 5 ./paced 2 2>err_dumped
rc=$?
set -e
[ $rc -eq 137 ] || fail "dumped: status $rc, expected 137 (SIGKILL during the write-out): $(cat err_dumped)"
expect_line err_dumped '^prof: stop: .* of buffered events of 2 locations dumped raw in [0-9]+ ms'
[ -f dumped/prof-parts/stop.rank0 ] || fail "dumped: no stop dump: $(ls dumped/prof-parts)"
salvaged dumped
cat salvage_dumped.out
expect_line salvage_dumped.out '^prof-salvage: the events in memory at the stop signal: [1-9][0-9]* events of 2 locations converted from the stop dump$'
expect_line salvage_dumped.out '^prof-salvage: lost: nothing recorded up to the stop signal$'
expect_line salvage_dumped.out '^prof-salvage: the profile was written before the kill$'
[ ! -e dumped/prof-parts/stop.rank0 ] || fail "dumped: the stop dump is left after the salvage"
[ "$(grep -c '^BUFFER_FLUSH' print_dumped)" -ge 2 ] || fail "dumped: no flush before the stop: the case tests nothing"
/usr/bin/python3 - dumped/traces.otf2 <<'PY' || fail "dumped: events up to the stop are missing (above)"
import sys, otf2
from otf2.events import Enter, Leave, BufferFlush, ProgramEnd
stacks, last, longest, n, end = {}, {}, {}, 0, None
with otf2.reader.open(sys.argv[1]) as r:
    res = r.definitions.clock_properties.timer_resolution
    for loc, ev in r.events:
        n += 1
        st = stacks.setdefault(loc, [])
        if isinstance(ev, Enter):
            st.append(ev.region)
        elif isinstance(ev, Leave):
            if not st or st[-1] != ev.region:
                sys.exit("%s: a Leave of %s inside %s" % (loc.name, ev.region.name, st[-1].name if st else "nothing"))
            st.pop()
        prev = last.get(loc)
        if prev is not None and not isinstance(prev, BufferFlush):
            longest[loc] = max(longest.get(loc, 0), (ev.time - prev.time) / res)
        last[loc] = ev
        if isinstance(ev, ProgramEnd):
            end = ev.time
if end is None:
    sys.exit("no ProgramEnd: the events buffered at the stop are missing")
for loc, ev in last.items():
    if stacks[loc]:
        sys.exit("%s: %d regions never left" % (loc.name, len(stacks[loc])))
    if (end - ev.time) / res > 0.5:
        sys.exit("%s: its last event comes %.2f s before the stop" % (loc.name, (end - ev.time) / res))
    # paced_calls makes an event every ~20 us: a lost OTF2 chunk or buffer is seconds of them
    if longest[loc] > 0.5:
        sys.exit("%s: %.2f s without an event: events are missing" % (loc.name, longest[loc]))
    print("%s: last event %.3f s before the stop, at most %.3f s between two events" % (loc.name, (end - ev.time) / res, longest[loc]))
print("%d events up to the stop, nested, none missing" % n)
PY
echo "ok: SIGTERM then SIGKILL after the stop dump: nothing lost ($(head -1 salvage_dumped.out))"
