#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# python3 -m prof (issue 16): Python functions as regions, checked with otf2-print, the otf2
# module and otf2_check.py (traces) and cubex_check.py (profiles), with exact counts where the
# scripts count their own calls (EXPECT lines):
#   calls.py  plain functions, recursion, a generator, a method, an exception through two frames,
#             a thread, a C function, prof.region and prof.recording;
#   imp.py    a lazy import: a region "import slowmod" in its caller, holding the import's time;
#   coro.py   asyncio coroutines (suspended frames interleave; the trace must nest);
#   forks.py  os.fork (the child never writes), sys.exit in a thread, a script that raises;
#   a filter  EXCLUDE of a Python name; prof-score -g's filter for hot.py; sys.exit(3) gives status 3;
#   samples.py --sampling: samples of Python code on its function, of C code below it, no frame
#             of the interpreter itself;
#   prof-run  python3 script.py, -m module, -m prof, a job script, as under python3 -m prof; -c warns;
#   ranks.py  mpi4py on 4 ranks under mpirun python3 -m prof --mpi: one trace, matched messages.
# Usage: python_prof.sh <python> <PYTHONPATH of the package> <work dir> <source dir> <shared tools or "">
set -euo pipefail
py=$1 pypath=$2 work=$3 src=$4 tools=${5:-}
source "$src/../checkers.sh"
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export PYTHONPATH=$pypath OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# enters <print file> <region>: Enter records of that region, all locations
enters() { awk -v r="\"$2\"" '$1 == "ENTER" && index($0, r) { n++ } END { print n + 0 }' "$1"; }
# visits <dump file> <region>: the profile's visits of call paths ending in that region, all locations
visits() { awk -v r="$2" '$1 == "visits" && $2 == "(EXCLUSIVE)" { p = $4; if (p == r || substr(p, length(p) - length(r)) == "/" r) n += $NF } END { print n + 0 }' "$1"; }
# expect_counts <exp> <out>: each "EXPECT region n" line of the script against the trace and profile
expect_counts() {
  local exp=$1 out=$2
  otf2-print "$exp/traces.otf2" >"$exp.print" 2>"$exp.err" || fail "$exp: otf2-print failed: $(head -3 "$exp.err")"
  [ ! -s "$exp.err" ] || fail "$exp: otf2-print complains: $(head -3 "$exp.err")"
  have_cubex_check && { /usr/bin/python3 "$tools/cubex_check.py" "$exp/profile.cubex" --dump >"$exp.dump" || { tail -3 "$exp.dump"; fail "$exp: cubex_check.py rejects the profile"; }; }
  while read -r _ region n; do
    [ "$(enters "$exp.print" "$region")" -eq "$n" ] || fail "$exp: $(enters "$exp.print" "$region") Enters of $region in the trace, the script made $n calls"
    if have_cubex_check; then
      [ "$(visits "$exp.dump" "$region")" -eq "$n" ] || fail "$exp: $(visits "$exp.dump" "$region") visits of $region in the profile, the script made $n calls"
    fi
  done < <(grep '^EXPECT ' "$out")
  echo "$exp: $(grep -c '^EXPECT ' "$out") regions with exact counts in trace and profile"
}

# 1. calls.py
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_calls "$py" -m prof --c-calls "$src/calls.py" >out_calls 2>err_calls ||
  fail "python3 -m prof calls.py failed: $(cat err_calls)"
check_trace exp_calls/traces.otf2 --expect-locations 2
expect_counts exp_calls out_calls
[ "$(grep -c '^MEASUREMENT_ON_OFF' exp_calls.print)" -eq 2 ] || fail "prof.recording: not 2 MeasurementOnOff records"
grep -q '"__main__:fib" <[0-9]*>.*' exp_calls.print || fail "no __main__:fib region"
otf2-print -G exp_calls/traces.otf2 >calls.defs
grep -q 'REGION .*Name: "__main__:fib".*File: ".*calls.py".*Begin: 21,' calls.defs ||
  fail "__main__:fib's region does not carry calls.py and its first line: $(grep '__main__:fib' calls.defs | head -2)"
[ "$(grep -c 'importlib._bootstrap' exp_calls.print)" -eq 0 ] || fail "the import machinery is in the trace"
# The program as the user ran it, not prof's re-run of the interpreter (-m prof --measured --c-calls --).
grep -Eq '^PROGRAM_BEGIN .*Name: "python3[.0-9]*" <[0-9]+>, 1 Arguments?: ".*/calls\.py" <[0-9]+>$' exp_calls.print ||
  fail "ProgramBegin is not the user's command line: $(grep '^PROGRAM_BEGIN' exp_calls.print)"
# prof.region's regions nest in the caller's frame: no exit of a frame while its region is open.
! grep -q 'exits were never reported\|had no matching entry' err_calls || fail "the nesting broke: $(grep 'exits' err_calls)"
[ "$(grep -c '"prof:region.__enter__"\|"prof._prof:' exp_calls.print)" -eq 0 ] || fail "prof's own API functions are regions"

# 1b. An import is a region "import <module>" in its caller (issue 31): a lazy import that runs
# 0.3 s of CPU at its top level takes its time out of the importing function's own.
printf 'import time\n_end = time.process_time() + 0.3\nwhile time.process_time() < _end:\n    pass\nX = 42\n' >slowmod.py
printf 'def lazy():\n    import slowmod\n    return slowmod.X\nprint(lazy())\n' >imp.py
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_imp "$py" -m prof imp.py >out_imp 2>err_imp || fail "imp.py failed: $(cat err_imp)"
check_trace exp_imp/traces.otf2
otf2-print exp_imp/traces.otf2 >imp.print 2>imp.err && [ ! -s imp.err ] || fail "otf2-print rejects the import trace: $(head -3 imp.err)"
[ "$(enters imp.print 'import slowmod')" -eq 1 ] || fail "imp.py: $(enters imp.print 'import slowmod') Enters of 'import slowmod', 1 import made"
if have_cubex_check; then
  /usr/bin/python3 "$tools/cubex_check.py" exp_imp/profile.cubex --dump >imp.dump || fail "cubex_check.py rejects the import profile"
  /usr/bin/python3 - imp.dump <<'PY' || fail "the import's time is not its own region's (above)"
import re, sys
t = {}
for line in open(sys.argv[1]):
    m = re.match(r"time \((INCLUSIVE|EXCLUSIVE)\)\s+\d+\s+(.*?)\s{2,}0 \(", line)
    if m:
        t[(m.group(1), m.group(2).strip())] = float(line.split()[-1])
imp = [k for k in t if k[0] == "INCLUSIVE" and k[1].endswith("__main__:lazy/import slowmod")]
if not imp:
    sys.exit("no call path .../__main__:lazy/import slowmod: %s" % sorted(p for _, p in t)[:20])
path = imp[0][1]
lazy = path[: -len("/import slowmod")]
# The profile's time is inclusive: lazy's own is its time less its children's.
own = t[("INCLUSIVE", lazy)] - sum(v for (k, p), v in t.items() if k == "INCLUSIVE" and p.startswith(lazy + "/") and "/" not in p[len(lazy) + 1:])
print("import slowmod %.3f s inclusive; __main__:lazy %.3f s of its own" % (t[imp[0]], own))
if t[imp[0]] < 0.25:
    sys.exit("the import region holds %.3f s, the import ran 0.3 s" % t[imp[0]])
if own > 0.1:
    sys.exit("__main__:lazy keeps %.3f s of its own: the import's time" % own)
PY
fi

# 1c. Steps and data loading (issue 31): `for batch in loader: train_step(batch)` with a loader
# whose __next__ sleeps 20 ms and a step that runs 30 ms; PROF_STEP names the step. prof-report
# finds 8 steps, data loading about 40 % of each iteration, and the data-loading finding; with a
# loader that does not wait (the twin), no such finding.
cat >loader.py <<'PYEOF'
import sys, time
class SlowDataLoader:
    def __init__(self, n, wait):
        self.n, self.wait = n, wait
    def __iter__(self):
        return self
    def __next__(self):
        if self.n == 0:
            raise StopIteration
        self.n -= 1
        time.sleep(self.wait)
        return self.n
def train_step(batch):
    end = time.perf_counter() + 0.03
    while time.perf_counter() < end:
        pass
for batch in SlowDataLoader(8, float(sys.argv[1])):
    train_step(batch)
PYEOF
report_bin=$(cd "$pypath/.." && pwd)/bin/prof-report
for wait in 0.02 0; do
  PROF_STEP=__main__:train_step PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_loader$wait "$py" -m prof loader.py $wait \
    >out_loader 2>err_loader || fail "loader.py failed: $(cat err_loader)"
  "$report_bin" --json exp_loader$wait >loader$wait.json || fail "prof-report on the loader run failed"
done
/usr/bin/python3 - <<'PY' || fail "the data loading of the steps (above)"
import json
for wait, want in (("0.02", True), ("0", False)):
    d = json.load(open("loader%s.json" % wait))
    s = d["steps"]
    kinds = [f["kind"] for f in d["findings"]]
    print("loader %s s: %d steps, data %.0f %% of an iteration, findings %s" % (wait, s["count"], 100 * s["steady_data_share"], kinds))
    assert s["region"] == "__main__:train_step" and s["count"] == 8, s
    if want:
        assert 0.25 <= s["steady_data_share"] <= 0.55, s["steady_data_share"]  # 20 ms of 50
        assert "data_loading" in kinds, kinds
    else:
        assert s["steady_data_share"] < 0.1 and "data_loading" not in kinds, (s["steady_data_share"], kinds)
PY

# 2. coro.py
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_coro "$py" -m prof "$src/coro.py" >out_coro 2>err_coro ||
  fail "python3 -m prof coro.py failed: $(cat err_coro)"
grep -q '^gathered 20$' out_coro || fail "coro.py: $(cat out_coro)"
check_trace exp_coro/traces.otf2
otf2-print exp_coro/traces.otf2 >coro.print 2>coro.err && [ ! -s coro.err ] || fail "otf2-print rejects the asyncio trace: $(head -3 coro.err)"
[ "$(enters coro.print __main__:tick)" -ge 24 ] || fail "asyncio: $(enters coro.print __main__:tick) Enters of tick, expected a call per resume (at least 24)"
# Code that only `import asyncio` ran defines no region (importing it runs hundreds of functions).
otf2-print -G exp_coro/traces.otf2 >coro.defs
defined=$(grep -c '^REGION .*Paradigm: "User"' coro.defs || true)
entered=$(awk '$1 == "ENTER" { print $NF }' coro.print | sort -u | wc -l)
echo "asyncio: $defined regions defined, $entered entered"
[ "$defined" -le $((entered + 20)) ] || fail "asyncio: $defined Python regions defined but only $entered entered: the import's code is defined"
have_cubex_check && /usr/bin/python3 "$tools/cubex_check.py" exp_coro/profile.cubex | tail -n 1

# 3. forks.py: status 1 and the traceback; one experiment, the parent's calls only.
set +e
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_fork "$py" -m prof "$src/forks.py" >out_fork 2>err_fork
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "forks.py: exit status $rc, expected 1 (the script raises): $(cat err_fork)"
grep -q '^RuntimeError: the script fails on purpose$' err_fork || fail "forks.py: no traceback: $(cat err_fork)"
[ "$(ls -d exp_fork* | wc -l)" -eq 1 ] || fail "the forked child wrote an experiment: $(ls -d exp_fork*)"
check_trace exp_fork/traces.otf2
expect_counts exp_fork out_fork
# Without --c-calls no C function is a region.
[ "$(awk '$1 == "ENTER" && /"(builtins|posix|_thread):/' exp_fork.print | wc -l)" -eq 0 ] || fail "C functions are regions without --c-calls"

# 4. A filter on a Python name; sys.exit(3).
printf 'SCOREP_REGION_NAMES_BEGIN\nEXCLUDE __main__:leaf builtins:*\nSCOREP_REGION_NAMES_END\n' >py.filter
PROF_ENABLE_TRACING=true PROF_FILTERING_FILE=py.filter PROF_EXPERIMENT_DIRECTORY=exp_filter "$py" -m prof --c-calls "$src/calls.py" >out_filter 2>&1 ||
  fail "calls.py with a filter failed: $(cat out_filter)"
otf2-print exp_filter/traces.otf2 >filter.print
[ "$(enters filter.print __main__:leaf)" -eq 0 ] || fail "the filter's EXCLUDE __main__:leaf did not apply"
[ "$(awk '$1 == "ENTER" && /"builtins:/' filter.print | wc -l)" -eq 0 ] || fail "the filter's EXCLUDE builtins:* did not apply"
[ "$(enters filter.print __main__:fib)" -eq "$(awk '$2 == "__main__:fib" { print $3 }' out_filter)" ] || fail "the filter removed __main__:fib too"
# prof-score -g proposes Python functions as it does C ones; its filter removes them.
score=$pypath/../bin/prof-score
[ -x "$score" ] || score=$(command -v prof-score)
PROF_EXPERIMENT_DIRECTORY=exp_hot "$py" -m prof "$src/hot.py" >/dev/null 2>err_hot || fail "hot.py failed: $(cat err_hot)"
"$score" -g -o hot.filter exp_hot/profile.cubex >/dev/null 2>&1 || fail "prof-score -g failed on a Python profile"
grep -q '^ *EXCLUDE .*__main__:tiny ' hot.filter || fail "prof-score -g did not propose __main__:tiny: $(cat hot.filter)"
! grep -q '__main__:slow' hot.filter || fail "prof-score -g proposes __main__:slow (3 visits of 10 ms)"
PROF_ENABLE_TRACING=true PROF_FILTERING_FILE=hot.filter PROF_EXPERIMENT_DIRECTORY=exp_hot2 "$py" -m prof "$src/hot.py" >out_hot 2>&1 ||
  fail "hot.py with prof-score's filter failed: $(cat out_hot)"
otf2-print exp_hot2/traces.otf2 >hot2.print
[ "$(enters hot2.print __main__:tiny)" -eq 0 ] && [ "$(enters hot2.print __main__:slow)" -eq 3 ] ||
  fail "prof-score's filter: $(enters hot2.print __main__:tiny) Enters of tiny (0 expected), $(enters hot2.print __main__:slow) of slow (3)"
printf 'import sys\ndef f():\n    sys.exit(3)\nf()\n' >exit3.py
set +e
PROF_EXPERIMENT_DIRECTORY=exp_exit3 "$py" -m prof exit3.py 2>err_exit3
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "sys.exit(3): exit status $rc: $(cat err_exit3)"
[ -s exp_exit3/profile.cubex ] || fail "sys.exit(3): no profile"

# 5. --sampling: samples land below the innermost Python function, the interpreter's frames folded.
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_samples "$py" -m prof --sampling "$src/samples.py" >out_samples 2>err_samples ||
  fail "python3 -m prof --sampling samples.py failed: $(cat err_samples)"
check_trace exp_samples/traces.otf2
otf2-print -G exp_samples/traces.otf2 >samples.defs
grep -E '^REGION .*Name: "(_PyEval_EvalFrameDefault|PyEval_EvalCode|Py_RunMain|Py_BytesMain|pymain_main|main)"' samples.defs >interp_regions || true
[ ! -s interp_regions ] || fail "the interpreter's own frames are regions: $(head -3 interp_regions)"
if have_cubex_check; then
  /usr/bin/python3 "$tools/cubex_check.py" exp_samples/profile.cubex --dump >samples.dump || fail "cubex_check.py rejects the sampled profile"
  # hits <path pattern>: the profile's sample hits at call paths matching it, all locations
  hits() { awk -v re="$1" '$1 == "hits" && $2 == "(EXCLUSIVE)" && $4 ~ re { n += $NF } END { print n + 0 }' samples.dump; }
  spin=$(hits '/__main__:spin$') crunch_c=$(hits '/__main__:crunch/.+') all=$(hits '.')
  echo "sampling: $all hits; $spin on __main__:spin itself (Python code), $crunch_c below __main__:crunch (zlib's C code)"
  [ "$spin" -ge 100 ] || fail "$spin sample hits on __main__:spin itself (0.4 s of Python code at 1 kHz): the interpreter's frames are not folded"
  [ "$crunch_c" -ge 100 ] || fail "$crunch_c sample hits below __main__:crunch (0.4 s in zlib's C code): native code is not below the Python function"
fi

# 6. prof-run python3 script.py and -m module (no PYTHONPATH: prof-run finds the package), -c.
prof_run=$pypath/../bin/prof-run
[ -x "$prof_run" ] || prof_run=$(command -v prof-run)
PYTHONPATH= PROF_VERBOSE=1 PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_run "$prof_run" --nosampling "$py" "$src/calls.py" >out_run 2>err_run ||
  fail "prof-run python3 calls.py failed: $(cat err_run)"
grep -q '^prof: prof-run: Python 3\.[0-9]*\.[0-9]*.*: Python functions are regions (as python3 -m prof)$' err_run ||
  fail "prof-run python3: no line saying Python functions are regions: $(grep prof-run err_run)"
check_trace exp_run/traces.otf2
grep -v 'math:sqrt\|list.append' out_run >out_run_py  # C calls: off by default
expect_counts exp_run out_run_py
(cd "$src" && PYTHONPATH= PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY="$work/exp_runm" "$prof_run" --nosampling "$py" -m forks >"$work/out_runm" 2>"$work/err_runm") || true
grep -q '^RuntimeError: the script fails on purpose$' err_runm || fail "prof-run python3 -m forks: $(cat err_runm)"
otf2-print exp_runm/traces.otf2 >exp_runm.print
[ "$(enters exp_runm.print __main__:work)" -eq 3 ] || fail "prof-run python3 -m forks: $(enters exp_runm.print __main__:work) Enters of work, expected 3"
[ "$(grep -c '"runpy:' exp_runm.print)" -eq 0 ] || fail "prof-run python3 -m: runpy's frames are regions"
PYTHONPATH= PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_runp "$prof_run" --nosampling "$py" -m prof "$src/forks.py" >/dev/null 2>err_runp || true
grep -q '^RuntimeError: the script fails on purpose$' err_runp || fail "prof-run python3 -m prof forks.py: $(cat err_runp)"
otf2-print exp_runp/traces.otf2 >exp_runp.print
[ "$(enters exp_runp.print __main__:work)" -eq 3 ] || fail "prof-run python3 -m prof: $(enters exp_runp.print __main__:work) Enters of work, expected 3"
PYTHONPATH= PROF_EXPERIMENT_DIRECTORY=exp_runc "$prof_run" --nosampling "$py" -c 'print("c ok")' >out_runc 2>err_runc || fail "prof-run python3 -c failed: $(cat err_runc)"
grep -q '^prof: warning: prof-run: Python functions are not regions, only samples: a command (-c) is not a script' err_runc ||
  fail "prof-run python3 -c: no warning: $(cat err_runc)"
# A job script that runs python3 without exec (as under srun/mpirun): the interpreter is measured.
printf '#!/bin/sh\nhostname >/dev/null\n"$1" "$2"\necho "job: python said $?"\n' >job.sh
chmod +x job.sh
PYTHONPATH= PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_job "$prof_run" --nosampling ./job.sh "$py" "$src/forks.py" >out_job 2>err_job ||
  fail "prof-run ./job.sh failed: $(cat err_job)"
grep -q '^job: python said 1$' out_job || fail "the job script: $(cat out_job)"
[ "$(ls -d exp_job* | wc -l)" -eq 1 ] || fail "the job script: not one experiment: $(ls -d exp_job*)"
otf2-print exp_job/traces.otf2 >exp_job.print
[ "$(enters exp_job.print __main__:work)" -eq 3 ] || fail "the job script's python: $(enters exp_job.print __main__:work) Enters of work, expected 3"
echo "prof-run $py: Python functions are regions (script, -m, a job script), -c says why not"

# 7. mpi4py on 4 ranks.
if command -v mpirun >/dev/null 2>&1 && "$py" -c 'import mpi4py' 2>/dev/null; then
  timeout 180 mpirun --oversubscribe -np 4 -x PYTHONPATH -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY=exp_mpi \
    "$py" -m prof --mpi "$src/ranks.py" >out_mpi 2>&1 || { tail -20 out_mpi; fail "mpirun -np 4 python3 -m prof --mpi failed"; }
  [ "$(grep -c '^rank [0-3] value 42 total 6$' out_mpi)" -eq 4 ] || fail "ranks.py did not finish on 4 ranks: $(cat out_mpi)"
  check_trace exp_mpi/traces.otf2 --mpi --expect-locations 4
  otf2-print exp_mpi/traces.otf2 >mpi.print 2>mpi.err && [ ! -s mpi.err ] || fail "otf2-print rejects the mpi4py trace: $(head -3 mpi.err)"
  [ "$(enters mpi.print __main__:exchange)" -eq 12 ] || fail "$(enters mpi.print __main__:exchange) Enters of exchange, expected 3 per rank"
  [ "$(grep -c '^MPI_SEND .*Communicator: "MPI_COMM_WORLD"' mpi.print)" -eq 12 ] &&
    [ "$(grep -c '^MPI_RECV .*Communicator: "MPI_COMM_WORLD"' mpi.print)" -eq 12 ] || fail "not 12 sends and receives of Sendrecv on MPI_COMM_WORLD"
  have_cubex_check && /usr/bin/python3 "$tools/cubex_check.py" exp_mpi/profile.cubex --expect-locations 4 | tail -n 1
  echo "mpi4py: 4 ranks, 12 Sendrecv messages matched, exchange 12 times"
  # The same through prof-run in front of the interpreter (no PYTHONPATH: prof-run finds the package).
  PYTHONPATH= timeout 180 mpirun --oversubscribe -np 4 -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY=exp_mpirun \
    "$prof_run" --mpi --nosampling "$py" "$src/ranks.py" >out_mpirun 2>&1 || { tail -20 out_mpirun; fail "mpirun -np 4 prof-run --mpi python3 failed"; }
  check_trace exp_mpirun/traces.otf2 --mpi --expect-locations 4
  otf2-print exp_mpirun/traces.otf2 >mpirun.print 2>mpirun.err && [ ! -s mpirun.err ] || fail "otf2-print rejects the prof-run mpi4py trace: $(head -3 mpirun.err)"
  [ "$(enters mpirun.print __main__:exchange)" -eq 12 ] || fail "prof-run mpi4py: $(enters mpirun.print __main__:exchange) Enters of exchange, expected 12"
  echo "mpi4py under mpirun -np 4 prof-run --mpi python3: one trace, exchange 12 times"
else
  echo "mpi4py part skipped: mpirun or mpi4py (python3-mpi4py) is not there"
fi
echo "ok: python3 -m prof: exact calls in trace and profile, asyncio, fork, exit statuses, filters, mpi4py"
