#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# OpenMP programs built with prof-wrap: constructs.c (serial launch) or mpi_omp.c / mpi_omp.F90
# (2 ranks x 2 threads under mpirun), traced and profiled, then checked by independent readers:
#   otf2-print without a word on stderr and the otf2 Python module (otf2_basic_check.py), and
#   otf2_check.py where ../shared/tools is; check_openmp.py (the otf2 module): the program's own
#   counts of parallel regions per thread, loops, barriers, criticals, tasks, locks, fork/join
#   and team begin/end paired per location, team threads named; cubex_check.py: the profile is
#   consistent and the parallel region's call path has visits on every team thread.
# Usage: openmp.sh <bin dir with prof-wrap> <work dir> <shared tools dir or ""> <case>
#   case: <compiler>_<instrumentation>[_mpi|_metrics], e.g. gcc_plugin, gcc_functions, clang,
#   gcc_plugin_mpi, gfortran_mpi (mpi_omp.F90 with mpifort), clang_metrics (getrusage metrics
#   per team thread: PROF_METRIC_RUSAGE, and timer sampling beside them), gcc_plugin_o2
#   (two_parallel.c at -O2: each parallel construct's implicit barrier is its own region)
set -eu
bin=$1 work=$2 tools=$3 case=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../checkers.sh"
name=openmp_$case
dir=$work/$name
fail() { echo "$name: FAIL: $*"; echo "$name: files kept in $dir"; exit 1; }
skip() { echo "$name: SKIP: $*"; exit 77; }

cc=${case%%_*}
rest=${case#"$cc"}
mpi=no metrics=no o2=no
case $rest in *_mpi) mpi=yes; rest=${rest%_mpi} ;; esac
case $rest in *_o2) o2=yes; rest=${rest%_o2} ;; esac
case $rest in *_metrics) metrics=yes; rest=${rest%_metrics} ;; esac
wrap_flags=
case $rest in
  _plugin) wrap_flags=--instrument=plugin ;;
  _functions) wrap_flags=--instrument=functions ;;
esac
command -v "$cc" >/dev/null 2>&1 || skip "$cc is not installed"
runtime=gomp
[ "$cc" = clang ] && runtime=ompt
if [ "$cc" = clang ] && ! echo 'int main(void){return 0;}' | clang -fopenmp -x c - -o /dev/null 2>/dev/null; then
  skip "clang -fopenmp cannot link (LLVM's OpenMP runtime is missing: Debian libomp-dev)"
fi

rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export PROF_ENABLE_TRACING=true PROF_OPENMP_ENABLE=all PROF_EXPERIMENT_DIRECTORY=exp
# -finstrument-functions' case also with locations reused early: libgomp ends the nested teams'
# threads, later ones take their parked locations (a location's late team end must not carry over)
[ "$rest" = _functions ] && export PROF_PTHREAD_REUSE_AFTER=2
# with metrics also sampling (the timer: every machine has it), which must leave the checks true
[ $metrics = yes ] && export PROF_METRIC_RUSAGE=ru_nvcsw,ru_minflt PROF_SAMPLING_EVENTS=timer@500
ranks=1
if [ $mpi = yes ]; then
  command -v mpicc >/dev/null 2>&1 || skip "mpicc is not installed"
  command -v mpirun >/dev/null 2>&1 || skip "mpirun is not installed"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_CC=$cc
  if [ "$cc" = gfortran ]; then
    command -v mpifort >/dev/null 2>&1 || skip "mpifort is not installed"
    "$bin/prof-wrap" $wrap_flags mpifort -O0 -g -fopenmp "$here/mpi_omp.F90" -o app >build.txt 2>&1 || { cat build.txt; fail "prof-wrap mpifort -fopenmp could not build mpi_omp.F90"; }
  else
    "$bin/prof-wrap" $wrap_flags mpicc -O0 -g -fopenmp "$here/mpi_omp.c" -o app >build.txt 2>&1 || { cat build.txt; fail "prof-wrap mpicc -fopenmp could not build mpi_omp.c"; }
  fi
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 -x PROF_ENABLE_TRACING -x PROF_OPENMP_ENABLE \
    -x PROF_EXPERIMENT_DIRECTORY -x OMP_NUM_THREADS=2 ./app >out.txt 2>&1 || { cat out.txt; fail "the MPI run failed"; }
  ranks=2
elif [ $o2 = yes ]; then
  "$bin/prof-wrap" $wrap_flags "$cc" -O2 -g -fopenmp "$here/two_parallel.c" -o app >build.txt 2>&1 || { cat build.txt; fail "prof-wrap $cc -O2 -fopenmp could not build two_parallel.c"; }
  timeout 120 ./app >out.txt 2>&1 || { cat out.txt; fail "the program failed"; }
else
  "$bin/prof-wrap" $wrap_flags "$cc" -O0 -g -fopenmp "$here/constructs.c" -o app >build.txt 2>&1 || { cat build.txt; fail "prof-wrap $cc -fopenmp could not build constructs.c"; }
  timeout 120 ./app >out.txt 2>&1 || { cat out.txt; fail "the program failed"; }
fi
grep -q "adapter.*openmp\|openmp" build.txt 2>/dev/null || true
[ -d exp/traces ] || { cat out.txt; fail "no trace was written"; }
[ -f exp/profile.cubex ] || { cat out.txt; fail "no profile was written"; }
if [ $mpi = yes ]; then check_trace exp/traces.otf2 --mpi; else check_trace exp/traces.otf2; fi
/usr/bin/python3 "$here/check_openmp.py" exp/traces.otf2 out.txt --runtime $runtime --mpi-ranks $ranks >check.txt 2>&1 \
  || { cat check.txt; fail "check_openmp.py: the trace does not hold what the program did"; }
tail -n 1 check.txt
if have_cubex_check; then
  /usr/bin/python3 "$tools/cubex_check.py" exp/profile.cubex >cube.txt 2>&1 || { cat cube.txt; fail "cubex_check.py rejects the profile"; }
  tail -n 1 cube.txt
  # The first parallel region's call path (under main: the team threads continue the forking
  # thread's path) has visits on more than one thread of each rank.
  region=$(sed -n 's/^PROF_EXPECT \(enter\|exact\) \(!$omp parallel @[^ ]*\) .*/\2/p' out.txt | head -n 1)
  /usr/bin/python3 "$tools/cubex_check.py" exp/profile.cubex --dump >dump.txt 2>&1
  threads=$(awk -v r="/$region" 'index($0, "visits") == 1 && index($0, "/main/") && index($0, r " ") && $NF > 0' dump.txt | wc -l)
  [ "$threads" -ge $((2 * ranks)) ] || { grep -F "$region" dump.txt | head; fail "'main/.../$region' has visits on $threads thread columns, expected >= $((2 * ranks))"; }
  echo "profile: main/.../$region has visits on $threads thread columns"
  if [ $metrics = yes ]; then
    # every thread counted its own: the metric has values on the team threads' columns too
    cols=$(awk 'index($0, "ru_minflt") == 1 && $NF > 0' dump.txt | grep -o '([^()]* / [^()]*)' | sort -u | wc -l)
    [ "$cols" -ge 2 ] || { grep "^ru_minflt" dump.txt | head; fail "ru_minflt has values on $cols thread columns, expected >= 2"; }
    echo "profile: ru_minflt has values on $cols thread columns"
  fi
fi
echo "$name: PASS"
rm -rf "$dir"
