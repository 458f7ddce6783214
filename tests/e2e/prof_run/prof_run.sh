#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# prof-run on programs built without prof-wrap (issue 16):
#  - threads_lib.c (plain gcc; main and 2 threads in a shared library's lib_work): a trace and a
#    profile with 3 locations, pthread regions, and samples (on by default) that land in lib_work
#    on every thread; the PROF_VERBOSE line names the adapters and the sampling source;
#  - --nosampling: no samples;
#  - a child process (system()) runs without prof: no prof library in its LD_PRELOAD, one experiment;
#  - a wrapper script that execs the program (env, bash): the program is measured, its helpers not;
#  - the same source built with prof-wrap and run under prof-run: measured once (exact visits);
#  - an MPI program built with plain mpicc under mpirun -np 4 prof-run: one unified trace with 4
#    locations and matched messages (otf2_check.py --mpi), one profile;
#  - bad input: no program, a missing one, a static one: one line each, status 2 or 127.
# Usage: prof_run.sh <bin dir> <work dir> <source dir> <shared tools dir or "">
set -euo pipefail
bin=$1 work=$2 src=$3 tools=${4:-}
source "$src/../checkers.sh"
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

gcc -O1 -g -shared -fPIC "$src/libwork.c" -o libwork.so
gcc -O1 -g "$src/threads_lib.c" -o app -L. -lwork -Wl,-rpath,"$PWD" -pthread
cat >child.sh <<'SH'
#!/bin/sh
echo "child LD_PRELOAD=[${LD_PRELOAD:-}] PROFRUN_PID=[${PROFRUN_PID:-}]"
SH
chmod +x child.sh

# 1. Threads and a shared library, tracing, the default sampling.
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp PROF_VERBOSE=1 "$bin/prof-run" ./app ./child.sh >out 2>err ||
  fail "prof-run ./app failed: $(cat err)"
cat out
grep -q '^prof: prof-run: adapters: pthread (always)\(, cuda and nvtx (when the program initialises CUDA or calls NVTX; --nocuda turns it off)\)\?; off: mpi (no libmpi at start; --mpi for programs that load it later)\(, cuda (prof was built without its CUDA adapter)\)\?; sampling: \(perf_cpu_clock@1000000\|timer@1000\) (1 kHz of each thread.s CPU time[;a-z ]*); --nosampling turns it off$' err ||
  fail "no prof-run line naming the adapters and the sampling: $(grep prof-run err)"
grep -q '^child LD_PRELOAD=\[\] PROFRUN_PID=\[\]$' out || fail "the child process inherited prof-run's preload: $(grep child out)"
# --nocuda: no CUDA injection variables for the program.
PROF_EXPERIMENT_DIRECTORY=nocuda_exp "$bin/prof-run" --nocuda -v /usr/bin/env >env_nocuda 2>err_nocuda || fail "prof-run --nocuda env failed"
! grep -q '^CUDA_INJECTION64_PATH=' env_nocuda || fail "--nocuda: CUDA_INJECTION64_PATH is set"
grep -q '; off: mpi (.*), cuda (--nocuda); sampling' err_nocuda || fail "--nocuda: not in the prof-run line: $(grep prof-run err_nocuda)"
[ "$(ls -d exp* | wc -l)" -eq 1 ] || fail "more than one experiment: $(ls -d exp*)"
check_trace exp/traces.otf2 --expect-locations 3
otf2-print exp/traces.otf2 >print 2>print.err || fail "otf2-print failed: $(head -3 print.err)"
[ ! -s print.err ] || fail "otf2-print complains: $(head -3 print.err)"
[ "$(awk '$1 == "ENTER" && /"pthread_create"/' print | wc -l)" -eq 2 ] || fail "not 2 Enters of pthread_create"
[ "$(awk '$1 == "THREAD_BEGIN"' print | wc -l)" -eq 2 ] || fail "not 2 ThreadBegin records"
[ "$(awk '$1 == "CALLING_CONTEXT_SAMPLE"' print | wc -l)" -gt 10 ] || fail "fewer than 10 samples in the trace"
if have_cubex_check; then
  /usr/bin/python3 "$tools/cubex_check.py" exp/profile.cubex --expect-locations 3 --dump >dump || { tail -3 dump; fail "cubex_check.py rejects the profile"; }
  tail -n 1 dump
  # Samples in lib_work on each of the 3 threads (its callers differ: main, thread_main).
  for loc in 0 1 2; do
    awk -v loc="$loc" '$1 == "sampled_time" && $2 == "(EXCLUSIVE)" && $4 ~ /lib_work$/ && $5 == loc && $NF > 0 { found = 1 } END { exit !found }' dump ||
      fail "no sampled time in lib_work on location $loc"
  done
fi

# 2. --nosampling: the adapters' regions only.
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_nosampling "$bin/prof-run" --nosampling ./app >/dev/null 2>err ||
  fail "prof-run --nosampling failed: $(cat err)"
otf2-print exp_nosampling/traces.otf2 >print2 2>&1
[ "$(grep -c '^CALLING_CONTEXT_SAMPLE' print2)" -eq 0 ] || fail "--nosampling: the trace has samples"
[ "$(awk '$1 == "ENTER" && /"pthread_join"/' print2 | wc -l)" -eq 2 ] || fail "--nosampling: not 2 Enters of pthread_join"

# 2b. A wrapper script that runs helpers and then execs the program (a job script, a pyenv shim):
# the program is measured (same pid), the helpers are not (no experiment of theirs).
printf '#!/usr/bin/env bash\nuname >/dev/null\nexec ./app "$@"\n' >wrapper.sh
chmod +x wrapper.sh
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_wrapper "$bin/prof-run" --nosampling ./wrapper.sh >/dev/null 2>err ||
  fail "prof-run ./wrapper.sh failed: $(cat err)"
[ "$(ls -d exp_wrapper* | wc -l)" -eq 1 ] || fail "the wrapper's helpers wrote experiments: $(ls -d exp_wrapper*)"
otf2-print exp_wrapper/traces.otf2 >print_wrapper 2>&1 || fail "no trace of the program the wrapper execs"
[ "$(awk '$1 == "THREAD_BEGIN"' print_wrapper | wc -l)" -eq 2 ] || fail "the wrapper's program: not 2 ThreadBegin records"

# 2c. A job script that runs the program without exec, between system helpers: the program is
# measured (its own experiment), the helpers (uname, mkdir: the system's programs) are not.
mkdir -p job && cd job
printf '#!/bin/sh\nuname >/dev/null\nmkdir -p made\n../app "$@"\necho after\n' >job.sh
chmod +x job.sh
PROF_ENABLE_TRACING=true "$bin/prof-run" --nosampling ./job.sh >out 2>err || fail "prof-run ./job.sh failed: $(cat err)"
grep -q '^after$' out || fail "the job script did not go on after the program: $(cat out)"
[ "$(ls -d prof-* 2>/dev/null | wc -l)" -eq 1 ] || fail "a job script without exec: not one experiment (the program's): $(ls -d prof-* 2>/dev/null)"
otf2-print prof-*/traces.otf2 >print_job 2>&1 || fail "no trace of the program the job script runs"
[ "$(awk '$1 == "THREAD_BEGIN"' print_job | wc -l)" -eq 2 ] || fail "the job script's program: not 2 ThreadBegin records"
cd ..

# 3. A prof-wrap'd program under prof-run: one measurement, exact visits.
"$bin/prof-wrap" gcc -O1 "$src/threads_lib.c" "$src/libwork.c" -o app_wrapped -pthread
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp_wrapped "$bin/prof-run" ./app_wrapped >/dev/null 2>err ||
  fail "prof-run on a prof-wrap'd program failed: $(cat err)"
otf2-print exp_wrapped/traces.otf2 >print3 2>print3.err
[ ! -s print3.err ] || fail "prof-wrap'd under prof-run: otf2-print complains: $(head -3 print3.err)"
[ "$(awk '$1 == "ENTER" && /"lib_work"/' print3 | wc -l)" -eq 3 ] || fail "prof-wrap'd under prof-run: not 3 Enters of lib_work"
[ "$(awk '$1 == "ENTER" && /"pthread_create"/' print3 | wc -l)" -eq 2 ] || fail "prof-wrap'd under prof-run: pthread_create counted twice"

# 4. Bad input: one line each.
set +e
"$bin/prof-run" >/dev/null 2>err; rc=$?
[ $rc -eq 2 ] && grep -q '^prof-run: error: no program to run; e.g. prof-run ./app' err || fail "no program: status $rc, $(cat err)"
"$bin/prof-run" ./no-such-program 2>err; rc=$?
[ $rc -eq 127 ] && [ "$(wc -l <err)" -eq 1 ] && grep -q "^prof-run: error: cannot run './no-such-program': " err || fail "missing program: status $rc, $(cat err)"
if gcc -static -O1 "$src/libwork.c" -x c - -o app_static 2>/dev/null <<<'double lib_work(long); int main(void) { return lib_work(10) < 0; }'; then
  "$bin/prof-run" ./app_static 2>err; rc=$?
  [ $rc -eq 127 ] && grep -q "is not a dynamically linked program (or cannot run here): prof-run measures programs through the dynamic loader; build a static one with prof-wrap instead" err ||
    fail "static program: status $rc, $(cat err)"
fi
set -e

# 5. MPI: plain mpicc, mpirun -np 4 prof-run.
if command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; then
  mpicc -O1 -I"$src/../mpi" "$src/../mpi/ring.c" -o ring
  timeout 120 mpirun --oversubscribe -np 4 -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY=exp_mpi -x PROF_VERBOSE=1 \
    "$bin/prof-run" ./ring >mpi_out 2>&1 || { tail -20 mpi_out; fail "mpirun -np 4 prof-run ./ring failed"; }
  grep -q '^prof: prof-run: adapters: pthread (always), mpi (the program loads libmpi.so[.0-9]*; --nompi turns it off)[,;] ' mpi_out ||
    fail "no prof-run line naming the MPI adapter: $(grep prof-run mpi_out)"
  [ "$(grep -c '^prof: prof-run:' mpi_out)" -eq 1 ] || fail "the prof-run line is not printed once (rank 0)"
  check_trace exp_mpi/traces.otf2 --mpi --expect-locations 4
  otf2-print exp_mpi/traces.otf2 >print_mpi 2>print_mpi.err || fail "otf2-print failed on the MPI trace"
  [ ! -s print_mpi.err ] || fail "otf2-print complains about the MPI trace: $(head -3 print_mpi.err)"
  # ring.c's own count of its messages (PROF_MESSAGES <rank> <sent> <received>) against the trace's.
  sent=$(awk '$1 == "PROF_MESSAGES" { s += $3 } END { print s + 0 }' mpi_out)
  [ "$sent" -gt 0 ] || fail "ring printed no message counts"
  [ "$(grep -cE '^MPI_(I)?SEND ' print_mpi)" -eq "$sent" ] || fail "the trace has $(grep -cE '^MPI_(I)?SEND ' print_mpi) sends, ring made $sent"
  [ "$(grep -cE '^MPI_(IRECV|RECV) ' print_mpi)" -eq "$sent" ] || fail "the trace has $(grep -cE '^MPI_(IRECV|RECV) ' print_mpi) receives, ring made $sent"
  if have_cubex_check; then
    /usr/bin/python3 "$tools/cubex_check.py" exp_mpi/profile.cubex --expect-locations 4 | tail -n 1
  fi
  echo "mpi: $sent messages sent and received on 4 ranks, as ring counted them"
  # 6. MPI from Python: mpi4py loads libmpi later, so --mpi.
  if /usr/bin/python3 -c 'import mpi4py' 2>/dev/null; then
    printf '%s\n' 'from mpi4py import MPI' 'c = MPI.COMM_WORLD' 'r = c.Get_rank()' \
      'for i in range(5):' '    if r == 0: c.send(i, dest=1, tag=i)' '    elif r == 1: c.recv(source=0, tag=i)' \
      'import sys' 'sys.stdout.write("sum %d" % c.allreduce(r) + chr(10)); sys.stdout.flush()' >m4.py
    timeout 120 mpirun --oversubscribe -np 2 -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY=exp_py \
      "$bin/prof-run" --mpi /usr/bin/python3 m4.py >py_out 2>&1 || { tail -20 py_out; fail "mpirun -np 2 prof-run --mpi python3 failed"; }
    [ "$(grep -c '^sum 1$' py_out)" -eq 2 ] || fail "the mpi4py script did not finish on both ranks: $(cat py_out)"
    check_trace exp_py/traces.otf2 --mpi --expect-locations 2
    otf2-print exp_py/traces.otf2 >print_py 2>print_py.err || fail "otf2-print failed on the mpi4py trace"
    [ ! -s print_py.err ] || fail "otf2-print complains about the mpi4py trace: $(head -3 print_py.err)"
    # The script's 5 messages on MPI_COMM_WORLD (mpi4py's allreduce of a Python object sends on a
    # communicator of its own).
    [ "$(grep -c '^MPI_SEND .*Communicator: "MPI_COMM_WORLD"' print_py)" -eq 5 ] &&
      [ "$(grep -c '^MPI_RECV .*Communicator: "MPI_COMM_WORLD"' print_py)" -eq 5 ] ||
      fail "the mpi4py trace's MPI_COMM_WORLD has $(grep -c '^MPI_SEND .*"MPI_COMM_WORLD"' print_py) sends, the script made 5"
    echo "mpi4py: 5 messages and an allreduce on 2 ranks in one trace"
  else
    echo "mpi4py part skipped: python3-mpi4py is not installed (.ci/setup installs it)"
  fi
else
  echo "mpi part skipped: mpicc or mpirun is not installed"
fi
echo "ok: prof-run measured threads, a shared library and samples, an MPI job of 4 ranks, a prof-wrap'd program once; children run without prof"
