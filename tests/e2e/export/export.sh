#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# prof-export on real traces: threads (with buffer flushes), MPI (4 ranks: point-to-point and
# collectives), sampling with metrics, rusage metrics, a crashed program, and traces recorded on
# an H100 (tests/e2e/export/data: CUDA streams with copies, NVTX lanes, a CUDA graph, MPI+CUDA,
# PyTorch training; launches linked to their kernels by flows). Each .pftrace is
# decoded by protoc with the schema subset (check_pftrace.py, which also compares it with the
# OTF2 trace read by the otf2 Python module) and by ../shared/tools/pftrace_check.py where it is.
# Then the options (--split, --begin/--end by time and by region name, --ranks) and the errors
# (among them a --begin after the trace's end, issue 15).
# Usage: export.sh <prof-wrap> <prof-export> <work-dir> [<shared-tools-dir>]
set -euo pipefail
wrap=$1 export_tool=$2 work=$3 tools=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/../checkers.sh"
[ -n "$tools" ] && [ ! -f "$tools/pftrace_check.py" ] && tools=
command -v protoc >/dev/null || { echo "FAIL: protoc is missing (apt-get install protobuf-compiler; .ci/setup installs it)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
rm -rf "$work" && mkdir -p "$work" && cd "$work"

# check <pftrace> [check_pftrace.py options]: both decoders.
check() {
  local f=$1
  shift
  /usr/bin/python3 "$here/check_pftrace.py" "$f" "$@"
  if [ -n "$tools" ]; then
    local out
    out=$(/usr/bin/python3 "$tools/pftrace_check.py" "$f") || { echo "$out" | tail -n 12; echo "FAIL: pftrace_check.py on $f"; exit 1; }
    tail -n 1 <<<"$out"
  fi
}

# export_check <experiment> [check_pftrace.py options]: the whole trace, compared with the OTF2 trace.
export_check() {
  local exp=$1
  shift
  "$export_tool" -q "$exp" | tee "$exp.export.txt"
  check "$exp/trace.pftrace" --otf2 "$exp/traces.otf2" "$@"
  local otf2_bytes pf_bytes
  otf2_bytes=$(du -sb "$exp/traces" "$exp/traces.def" "$exp/traces.otf2" | awk '{s += $1} END {print s}')
  pf_bytes=$(stat -c %s "$exp/trace.pftrace")
  echo "$exp: OTF2 $otf2_bytes bytes, .pftrace $pf_bytes bytes"
}

echo "== threads that fill the buffers (buffer flushes); the jacobi example (threads)"
"$wrap" gcc -O2 -pthread "$src/e2e/progs/fill_buffers.c" -o flush.x
PROF_THROTTLE=false PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=8M PROF_PAGE_SIZE=4K PROF_EXPERIMENT_DIRECTORY=flushed ./flush.x >/dev/null 2>flush.err
grep -q 'trace buffers were flushed' flush.err || { echo "FAIL: no buffer flush (PROF_TOTAL_MEMORY=8M, 440000 events)"; cat flush.err; exit 1; }
flushes=$(otf2-print flushed/traces.otf2 | grep -c '^BUFFER_FLUSH' || true)
[ "$flushes" -ge 1 ] || { echo "FAIL: no BUFFER_FLUSH record in the trace"; exit 1; }
export_check flushed --expect-slices tiny=220000 --expect-slices "prof: buffer flush=$flushes"
"$wrap" gcc -O2 -pthread "$src/../examples/jacobi.c" -o jacobi.x
# every call measured: --split below needs the trace's full size, and jacobi's relax_row (about
# 300 ns a call) is throttled in some runs and not in others
PROF_THROTTLE=false PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=threads ./jacobi.x >/dev/null
export_check threads

echo "== MPI, 4 ranks: Isend/Irecv ring and ping-pong; collectives"
"$wrap" mpicc -O2 -I"$src/e2e/mpi" "$src/e2e/mpi/ring.c" -o ring.x
"$wrap" mpicc -O2 -I"$src/e2e/mpi" "$src/e2e/mpi/collectives.c" -o collectives.x
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=ring mpirun -np 4 ./ring.x >/dev/null
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=coll mpirun -np 4 ./collectives.x >/dev/null
export_check ring
grep -q ' 0 flows' ring.export.txt && { echo "FAIL: no message became a flow"; exit 1; }
export_check coll

echo "== sampling with an rusage metric; rusage metrics on every region"
"$wrap" gcc -O1 -g "$src/e2e/sampling/hot.c" -o hot.x
PROF_ENABLE_TRACING=true PROF_SAMPLING_EVENTS=timer@1000 PROF_METRIC_RUSAGE=ru_utime PROF_EXPERIMENT_DIRECTORY=sampled ./hot.x >/dev/null
export_check sampled
"$wrap" gcc -O2 "$src/e2e/metrics/regions.c" -o regions.x
PROF_ENABLE_TRACING=true PROF_METRIC_RUSAGE=ru_utime,ru_minflt PROF_EXPERIMENT_DIRECTORY=metrics ./regions.x >/dev/null
export_check metrics

echo "== a program that crashes (SIGSEGV) after its work"
"$wrap" gcc -O0 "$src/e2e/progs/crash.c" -o crash.x
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=crashed ./crash.x >/dev/null 2>&1 || true
export_check crashed --expect-slices work=50

echo "== GPU traces recorded on an H100 (test data)"
for d in cuda_streams cuda_nvtx cuda_graph cuda_mpi pytorch; do
  cp -r "$here/data/$d" "$d"
  export_check "$d"
done

echo "== --split: every part stands alone, together they hold every slice"
"$export_tool" -q --split 128K -o split.pftrace threads
parts=$(ls split*.pftrace | wc -l)
[ "$parts" -ge 3 ] || { echo "FAIL: --split 128K of a $(stat -c %s threads/trace.pftrace)-byte trace made $parts file(s)"; exit 1; }
whole=$(/usr/bin/python3 "$here/check_pftrace.py" threads/trace.pftrace | sed -E 's/.* ([0-9]+) slices.*/\1/')
total=0
for f in split*.pftrace; do
  # A part ends at the first packet past the size: at most one event's packets more.
  [ "$(stat -c %s "$f")" -le $((128 * 1024 + 4096)) ] || { echo "FAIL: $f is $(stat -c %s "$f") bytes, over --split 128K"; exit 1; }
  out=$(check "$f" --partial)
  echo "$out" | tail -n 1
  n=$(grep -o 'check_pftrace ok: .*' <<<"$out" | sed -E 's/.* ([0-9]+) slices.*/\1/')
  total=$((total + n))
done
# Slices open at a cut end there and begin again in the next part: at least every slice.
[ "$total" -ge "$whole" ] || { echo "FAIL: the parts hold $total slices, the whole trace $whole"; exit 1; }

echo "== --begin/--end by time, by region name (the 3rd MPI_Waitall), --ranks"
"$export_tool" -q --begin 2ms --end 5ms -o window.pftrace threads
check window.pftrace --window 2000000 5000000 --partial
"$export_tool" -q --begin MPI_Waitall:3 -o waitall3.pftrace ring
check waitall3.pftrace --otf2 ring/traces.otf2 --region-window MPI_Waitall 3
# From there to the end of the first MPI_Finalize: the messages before the window still count,
# so every message inside it is an arrow.
"$export_tool" -q --begin MPI_Waitall:3 --end MPI_Finalize -o waitall3_end.pftrace ring
check waitall3_end.pftrace --otf2 ring/traces.otf2 --region-window MPI_Waitall 3 --region-window-end MPI_Finalize 1
"$export_tool" -q --ranks 1-2 -o ranks12.pftrace ring
check ranks12.pftrace
n=$(/usr/bin/python3 "$here/check_pftrace.py" ranks12.pftrace | grep -o '[0-9]* tracks' | cut -d' ' -f1)
[ "$n" = 4 ] || { echo "FAIL: --ranks 1-2 gave $n tracks, expected 4 (2 processes, 2 threads)"; exit 1; }

echo "== errors: one line, the cause and the fix"
expect_error() {  # <exit code> <message regex> <args...>
  local code=$1 re=$2
  shift 2
  set +e
  "$export_tool" "$@" >err.out 2>err.txt
  local rc=$?
  set -e
  [ "$rc" = "$code" ] || { echo "FAIL: prof-export $* exited $rc, expected $code"; cat err.txt; exit 1; }
  [ "$(wc -l <err.txt)" = 1 ] && grep -Eq "$re" err.txt || { echo "FAIL: prof-export $*:"; cat err.txt; exit 1; }
}
expect_error 1 '^prof-export: error: nowhere does not exist; give an experiment directory' nowhere
expect_error 2 "^prof-export: error: --ranks 'x' is not a rank list; write e.g. 0-3,7$" --ranks x ring
expect_error 2 "^prof-export: error: --split '3Q' is not a size" --split 3Q ring
expect_error 1 '^prof-export: error: the trace has no occurrence nosuch \(no region has this name\); give a region' --begin nosuch ring
expect_error 1 '^prof-export: error: the trace has no occurrence MPI_Init:9 \(found 4 times\)' --begin MPI_Init:9 ring
# A window after the trace's end (before: an empty trace and exit status 0); the message names the range.
expect_error 1 '^prof-export: error: --begin 1000s is after the end of ring/traces.otf2, which covers 0 s to [0-9.e-]+ s from its start; give a --begin within that range$' --begin 1000s ring
mkdir -p ro && chmod 555 ro
if [ "$(id -u)" != 0 ]; then expect_error 1 '^prof-export: error: cannot write ro/x.pftrace' -o ro/x.pftrace ring; fi
expect_error 1 '^prof-export: error: cannot write /nonexistent/x.pftrace \(No such file or directory\); give a writable file with -o$' -o /nonexistent/x.pftrace ring
echo ok
