#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# prof-report on real experiments: threads (the jacobi example), buffer flushes, sampling with a
# metric, MPI on 4 ranks, and GPU runs
# recorded on an H100 (tests/e2e/export/data: streams, MPI+CUDA). Each report.html is opened in
# headless Chromium: no console message, the page drew every section, its numbers (region rows,
# GPU activities) equal prof-score --json's (check_report.py); screenshots of the threaded and the
# MPI+CUDA run go into the work directory. Then --text, --json and the errors.
# Usage: report.sh <prof-wrap> <prof-report> <prof-score> <work-dir>
set -euo pipefail
wrap=$1 report=$2 score=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "skipped: no Chromium here (apt-get install chromium; .ci/setup installs it)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
rm -rf "$work" && mkdir -p "$work" && cd "$work"

# open <experiment> [check_report.py options]: the page in a real browser, checked, photographed.
open_report() {
  local exp=$1
  shift
  "$report" "$exp"
  "$score" --json "$exp" >"$exp.score.json"
  local page
  page="file://$(cd "$exp" && pwd)/report.html"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 --dump-dom "$page" \
    >"$exp.dom.html" 2>"$exp.chromium.err"
  /usr/bin/python3 "$here/check_report.py" "$exp.dom.html" "$exp.chromium.err" "$exp/report.json" "$exp.score.json" "$@"
  [ -n "${SCREENSHOT:-}" ] || return 0
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,2400 \
    --screenshot="$work/$exp.png" "$page" >/dev/null 2>&1
  [ -s "$work/$exp.png" ] || { echo "FAIL: no screenshot of $exp"; exit 1; }
}

echo "== threads: the jacobi example"
"$wrap" gcc -O2 -pthread "$src/../examples/jacobi.c" -o jacobi.x
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=threads ./jacobi.x one two three >/dev/null
SCREENSHOT=1 open_report threads --program "jacobi.x one two three" --no-cuda
"$report" --text threads | tee threads.txt
grep -q '^Top regions by exclusive time' threads.txt && grep -Eq ' barrier$| relax_row$| sweep$' threads.txt ||
  { echo "FAIL: --text lacks the region table"; exit 1; }
# The command line with its first argument (issue 31: "hello two three"), and the mean it promises.
grep -qx 'program: jacobi.x one two three' threads.txt || { echo "FAIL: --text's program line: $(grep '^program' threads.txt)"; exit 1; }
grep -Eq '^ +group +paradigm .* min +mean +max +region$' threads.txt || { echo "FAIL: --text's table has no mean column"; exit 1; }
# Without a trace the command line comes from prof.run (rank 0's command= line), arguments intact.
PROF_EXPERIMENT_DIRECTORY=profonly ./jacobi.x one "two words" >/dev/null
"$report" --text profonly | grep -qx 'program: jacobi.x one two words' || { echo "FAIL: profile-only program line: $("$report" --text profonly | grep program)"; exit 1; }
"$report" --json profonly | /usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin)["run"]; assert (r["program"], r["args"]) == ("jacobi.x", ["one", "two words"]), r'
"$report" --json threads | /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["format"] == "prof-report" and d["timeline"]["rows"], d.keys()'
"$report" --no-trace --json threads | /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["timeline"] is None and d["regions"]'

echo "== a run that fills its buffers: prof's own figures and warnings (prof.run) in the report"
"$wrap" gcc -O2 -pthread "$src/e2e/progs/fill_buffers.c" -o flush.x
PROF_THROTTLE=false PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=8M PROF_PAGE_SIZE=4K PROF_EXPERIMENT_DIRECTORY=flushed ./flush.x >/dev/null 2>flush.err
open_report flushed
/usr/bin/python3 - flushed/report.json flushed.dom.html <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["run"]
assert r["processes_reporting"] == 1 and r["buffer_flushes"] >= 1 and r["lost_events"] == 0 and r["exit_status"] == 0, r
assert any("trace buffers were flushed" in w for w in r["warnings"]), r["warnings"]
assert "trace buffers were flushed" in open(sys.argv[2]).read(), "the page shows no flush warning"
print("prof.run: %d flushes, the warning on the page" % r["buffer_flushes"])
PY

echo "== sampling (timer, 1 kHz) with an rusage metric: the icicle offers hits and the metric"
"$wrap" gcc -O1 -g "$src/e2e/sampling/hot.c" -o hot.x
PROF_ENABLE_TRACING=true PROF_SAMPLING_EVENTS=timer@1000 PROF_METRIC_RUSAGE=ru_utime PROF_EXPERIMENT_DIRECTORY=sampled ./hot.x >/dev/null
open_report sampled
/usr/bin/python3 - sampled/report.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [m["name"] for m in d["tree"]["metrics"]]
assert "hits" in names and "ru_utime" in names, names
assert d["run"]["samples"] > 0, d["run"]
print("sampled: metrics %s, %d samples" % (", ".join(names), d["run"]["samples"]))
PY
# One trace, one event count (issue 31: 3,552, 3,952 and 4,760 for one trace): prof-report,
# prof-export and otf2-print count every OTF2 event (Metric and sample records included).
printed=$(otf2-print sampled/traces.otf2 | awk '/^Event /{f=1; next} f && /^[A-Z_]+ /{n++} END{print n+0}')
reported=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run"]["trace_events"])' sampled/report.json)
exported=$("$(dirname "$wrap")/prof-export" sampled -o sampled.pftrace | sed -n 's/.*: \([0-9]*\) events -> .*/\1/p')
[ "$printed" -gt 0 ] && [ "$reported" = "$printed" ] && [ "$exported" = "$printed" ] ||
  { echo "FAIL: event counts differ: otf2-print $printed, prof-report $reported, prof-export $exported"; exit 1; }
echo "sampled: $printed events by otf2-print, prof-report and prof-export alike"

echo "== sampling only (prof-run's default on a program not rebuilt): the hot functions by time"
gcc -O1 -g "$src/e2e/sampling/hot.c" -o hotplain.x
PROF_EXPERIMENT_DIRECTORY=sonly "$(dirname "$wrap")/prof-run" ./hotplain.x 0.3 >/dev/null
open_report sonly
"$report" --text sonly >sonly.txt
/usr/bin/python3 - sonly/report.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
usr = [r for r in d["regions"] if r["group"] == "USR"]
top = usr[0]
# 0.3 s of CPU in hot(): at 1 kHz about 300 samples, each 1 ms of sampled time.
assert top["name"] == "hot" and top["paradigm"] == "sampling", usr[:3]
assert 0.15 < top["exclusive_s"] < 0.6 and top["locations"] == 1 and top["mean_s"] == top["exclusive_s"], top
root = d["regions"][0] if d["regions"][0]["group"] == "PROF" else next(r for r in d["regions"] if r["group"] == "PROF")
assert "no measured function" in root.get("note", ""), root
print("sampling only: hot %.3f s, root note: %s" % (top["exclusive_s"], root["note"]))
PY
grep -Eq ' hot$' sonly.txt && grep -q '(in no measured function: start-up and exit, time no sample saw)$' sonly.txt ||
  { echo "FAIL: --text of a sampling-only run: $(sed -n 6,9p sonly.txt)"; exit 1; }

echo "== 40 functions: the page lists the top 25 and says how many more there are"
{ for i in $(seq 1 40); do echo "__attribute__((noinline)) void f$i(void) { for (volatile int k = 0; k < $i * 1000; ++k) {} }"; done
  echo "int main(void) {"; for i in $(seq 1 40); do echo "  f$i();"; done; echo "  return 0; }"; } >many.c
"$wrap" gcc -O1 many.c -o many.x
PROF_EXPERIMENT_DIRECTORY=many ./many.x
open_report many

echo "== threads that record nothing: left out of the timeline"
cat >idle.c <<'EOF'
#include <pthread.h>
#include <unistd.h>
__attribute__((no_instrument_function)) static void* idle(void* arg) { usleep(20000); return arg; }
__attribute__((noinline)) void work(void) { for (volatile int k = 0; k < 3000000; ++k) {} }
int main(void) {
  pthread_t t[3];
  for (int i = 0; i < 3; ++i) pthread_create(&t[i], 0, idle, 0);
  work();
  for (int i = 0; i < 3; ++i) pthread_join(t[i], 0);
  return 0;
}
EOF
"$wrap" gcc -O1 -pthread idle.c -o idle.x
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=idle ./idle.x
open_report idle --idle-rows 3

echo "== MPI, 4 ranks"
"$wrap" mpicc -O2 -I"$src/e2e/mpi" "$src/e2e/mpi/ring.c" -o ring.x
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=ring mpirun -np 4 ./ring.x >/dev/null
open_report ring --mpi 4
/usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["run"]; assert r["processes_reporting"] == 4 and r["processes"] == 4, r' ring/report.json

echo "== GPU runs recorded on an H100 (test data)"
cp -r "$src/e2e/export/data/cuda_streams" "$src/e2e/export/data/cuda_mpi" .
open_report cuda_streams --gpu
SCREENSHOT=1 open_report cuda_mpi --gpu

echo "== errors"
set +e
"$report" nowhere >out.txt 2>err.txt
rc=$?
set -e
[ "$rc" = 1 ] && [ "$(wc -l <err.txt)" = 1 ] &&
  grep -q '^prof-report: error: nowhere is not a directory; give an experiment directory (prof-\*/)$' err.txt ||
  { echo "FAIL: prof-report nowhere: rc $rc"; cat err.txt; exit 1; }
mkdir -p empty
set +e
"$report" empty >out.txt 2>err.txt
rc=$?
set -e
[ "$rc" = 1 ] && grep -q '^prof-report: error: empty has neither profile.cubex nor traces.otf2' err.txt ||
  { echo "FAIL: prof-report on an empty directory: rc $rc"; cat err.txt; exit 1; }
echo "ok (screenshots: $work/*.png)"
