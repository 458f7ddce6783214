#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The MPI compiler wrappers through prof-wrap: prof-mpicc and prof-mpicxx (and prof-wrap mpicc)
# compile and link a small MPI program with the instrumentation, the way they drive GCC (the GCC
# plugin where it fits); the program runs as one MPI process (singleton MPI_Init, no mpirun) with
# exact Enter counts; a Makefile build with CC="prof-wrap mpicc" runs under mpirun with one trace
# and one profile for the job. Skipped (77) where no MPI compiler wrapper is installed.
# Arguments: <bin dir with prof-wrap> <work dir> <source dir>
. "$(dirname -- "$0")/common.sh"

command -v mpicc >/dev/null 2>&1 || skip "mpicc is not installed (Debian: libopenmpi-dev openmpi-bin)"
command -v mpicxx >/dev/null 2>&1 || skip "mpicxx is not installed (Debian: libopenmpi-dev openmpi-bin)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cp "$src_dir/mpi_hello.c" "$tmp/mpi_hello.c"
cp "$src_dir/mpi_hello.c" "$tmp/mpi_hello.cpp"
cd "$tmp"

PROF_WRAPPER_INSTRUMENTER_FLAGS=--verbose prof-mpicc -O2 -c mpi_hello.c -o c.o 2>c.log || { cat c.log >&2; fail "prof-mpicc -c failed"; }
grep -q 'instrumentation: \(GCC plugin\|-finstrument-functions\)' c.log ||
  { cat c.log >&2; fail "prof-mpicc (--verbose) did not say how the compile step is instrumented"; }
prof-mpicc c.o -o app_c || fail "prof-mpicc link failed"
check_instrumented app_c
check_enters ./app_c exp_c main 1 work 5

prof-mpicxx -O2 mpi_hello.cpp -o app_cxx || fail "prof-mpicxx compile and link failed"
check_instrumented app_cxx
check_enters ./app_cxx exp_cxx main 1 'work(int, int)' 5

prof-wrap --instrument=functions mpicc mpi_hello.c -o app_fn || fail "prof-wrap --instrument=functions mpicc failed"
check_instrumented app_fn
check_enters ./app_fn exp_fn main 1 work 5
# Plain gcc with the MPI flags spelled out (-lmpi on the link line): the MPI adapter must still come
# before libmpi, or MPI_Allreduce would bind to libmpi and go unrecorded.
# shellcheck disable=SC2046
prof-wrap gcc -O2 $(mpicc --showme:compile) mpi_hello.c $(mpicc --showme:link) -o app_gcc ||
  fail "prof-wrap gcc ... -lmpi failed"
readelf -d app_gcc | grep -q 'NEEDED.*libprof_mpi' || fail "app_gcc does not need libprof_mpi.so: -lmpi did not select the MPI adapter"
check_enters ./app_gcc exp_gcc main 1 work 5 MPI_Allreduce 1

# An existing MPI code's own Makefile with CC="prof-wrap mpicc", run with mpirun on 2 ranks: one
# trace of the job, messages matched (otf2_check.py --mpi).
if command -v mpirun >/dev/null 2>&1; then
  mkdir -p make_mpi
  cp "$src_dir/mpi_hello.c" make_mpi/hello.c
  printf 'CC = mpicc\nCFLAGS = -O2\nhello: hello.o\n\t$(CC) $(CFLAGS) -o $@ hello.o\n' >make_mpi/Makefile
  make -s -C make_mpi CC="prof-wrap mpicc" >make.log 2>&1 || { cat make.log >&2; fail "make CC=\"prof-wrap mpicc\" failed"; }
  check_instrumented make_mpi/hello
  if [ "${PROF_E2E_RUN:-1}" != "0" ]; then
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY="$tmp/exp_make" \
      make_mpi/hello >run.log 2>&1 || { cat run.log >&2; fail "mpirun -np 2 of the prof-wrap mpicc build failed"; }
    if [ -n "${PROF_SHARED_TOOLS:-}" ]; then
      /usr/bin/python3 "$PROF_SHARED_TOOLS/otf2_check.py" "$tmp/exp_make/traces.otf2" --mpi --expect-region work >check.log 2>&1 ||
        { cat check.log >&2; fail "otf2_check.py --mpi rejects the trace of the Makefile build"; }
      tail -n 1 check.log
      /usr/bin/python3 "$PROF_SHARED_TOOLS/cubex_check.py" "$tmp/exp_make/profile.cubex" --expect-region work | tail -n 1
    fi
  fi
fi

# MPI named where prof-wrap does not look for it (here -Wl,-lmpi): the objects' undefined MPI_
# symbols give one warning at the link, and the program one when it runs (rank 0 only, under
# mpirun); --mpp=none silences both (issue 14, item 4).
if link_flags=$(mpicc --showme:link 2>/dev/null); then
  hidden=""
  for w in $link_flags; do
    case $w in -l* | -L*) hidden="$hidden -Wl,$w" ;; *) hidden="$hidden $w" ;; esac
  done
  # shellcheck disable=SC2086
  prof-wrap gcc c.o $hidden -o app_hidden 2>hidden.log || { cat hidden.log >&2; fail "prof-wrap gcc c.o$hidden failed"; }
  grep -q "^prof-wrap: warning: app_hidden calls MPI (MPI_[A-Za-z_]* in c.o) but the link names no MPI library prof-wrap recognises, so it gets no MPI adapter: .*; link with prof-wrap mpicc/mpicxx, or add --mpp=mpi (--mpp=none drops this warning)$" hidden.log ||
    { cat hidden.log >&2; fail "no one-line warning at the link of an MPI program whose MPI library prof-wrap does not recognise"; }
  [ "$(wc -l <hidden.log)" = 1 ] || { cat hidden.log >&2; fail "the link of app_hidden printed more than one line"; }
  # shellcheck disable=SC2086
  prof-wrap --mpp=none gcc c.o $hidden -o app_none 2>none.log || { cat none.log >&2; fail "prof-wrap --mpp=none gcc failed"; }
  [ ! -s none.log ] || { cat none.log >&2; fail "prof-wrap --mpp=none warned at the link"; }
  if [ "${PROF_E2E_RUN:-1}" != "0" ] && command -v mpirun >/dev/null 2>&1; then
    mkdir run_hidden run_none
    (cd run_hidden && timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 ../app_hidden) >hidden.run 2>&1 ||
      { cat hidden.run >&2; fail "mpirun -np 2 app_hidden failed"; }
    n=$(grep -c "^prof: warning: this program has an MPI library loaded but was linked without prof's MPI adapter: MPI calls are not recorded and each rank writes its own experiment; link it with prof-wrap mpicc or mpicxx, or add --mpp=mpi to prof-wrap$" hidden.run || true)
    [ "$n" = 1 ] || { cat hidden.run >&2; fail "mpirun -np 2 app_hidden printed $n run-time warnings of the missing MPI adapter, not 1 (rank 0)"; }
    (cd run_none && ../app_none) >none.run 2>&1 || { cat none.run >&2; fail "app_none failed"; }
    ! grep -q "MPI adapter" none.run || { cat none.run >&2; fail "a program linked with --mpp=none warned at run time"; }
  fi
  echo "$test_name: MPI through -Wl,-lmpi: one warning at the link, one at run time; none with --mpp=none"
fi

# An MPI wrapper that runs clang (OMPI_CXX=clang++): prof-wrap asks the wrapper, drives clang
# (its hooks, no GCC options; clang 14 rejects -fno-instrument-functions) and still links the MPI
# adapter (issue 14, item 6).
if command -v clang++ >/dev/null 2>&1 && [ "$(OMPI_CXX=clang++ mpicxx --showme:command 2>/dev/null)" = clang++ ]; then
  OMPI_CXX=clang++ PROF_WRAPPER_INSTRUMENTER_FLAGS=--verbose prof-mpicxx -O0 -c mpi_hello.cpp -o clang.o 2>clang_c.log ||
    { cat clang_c.log >&2; fail "OMPI_CXX=clang++ prof-mpicxx -c failed"; }
  grep -q '^prof-wrap: mpicxx runs clang++ (mpicxx --showme:command)$' clang_c.log ||
    { cat clang_c.log >&2; fail "prof-wrap --verbose did not say that mpicxx runs clang++"; }
  grep -q '^prof-wrap: instrumentation: -finstrument-functions-after-inlining (the GCC plugin does not fit: mpicxx (clang++) is not GCC)$' clang_c.log ||
    { cat clang_c.log >&2; fail "OMPI_CXX=clang++ prof-mpicxx -c was not instrumented as clang"; }
  OMPI_CXX=clang++ prof-wrap mpicxx clang.o -o app_clang 2>clang_l.log || { cat clang_l.log >&2; fail "OMPI_CXX=clang++ prof-wrap mpicxx link failed"; }
  OMPI_CXX=clang++ prof-wrap mpicxx -O0 mpi_hello.cpp -o app_clang1 2>clang_1.log ||
    { cat clang_1.log >&2; fail "OMPI_CXX=clang++ prof-wrap mpicxx (compile and link) failed"; }
  for exe in app_clang app_clang1; do
    check_instrumented $exe
    readelf -d $exe | grep -q 'NEEDED.*libprof_mpi' || fail "$exe does not need libprof_mpi.so: mpicxx running clang++ got no MPI adapter"
    check_enters ./$exe exp_$exe main 1 'work(int, int)' 5 MPI_Allreduce 1
  done
  echo "$test_name: OMPI_CXX=clang++ prof-wrap mpicxx: clang's hooks, MPI adapter, exact Enter counts"
else
  echo "$test_name: clang++ or an Open MPI mpicxx that honours OMPI_CXX is missing: the clang-driving wrapper not checked"
fi

# Fortran code in an MPI link: its MPI calls are recorded (libprof_mpi wraps Open MPI's Fortran
# bindings: tests/e2e/mpi/fortran_*), so no notice says otherwise.
prof-wrap --dry-run mpicc c.o -lgfortran -o app_f 2>f.log || fail "prof-wrap --dry-run mpicc ... -lgfortran failed"
! grep -q "Fortran" f.log || { cat f.log >&2; fail "a notice about Fortran in an MPI link, whose MPI calls are recorded now"; }
echo "$test_name: prof-mpicc, prof-mpicxx, prof-wrap mpicc: instrumented, exact Enter counts as a singleton MPI process; no Fortran notice"
done_ok
