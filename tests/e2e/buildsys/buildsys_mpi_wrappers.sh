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

# Fortran code in an MPI link: one line says its MPI calls are not recorded.
prof-wrap --dry-run mpicc c.o -lgfortran -o app_f 2>f.log || fail "prof-wrap --dry-run mpicc ... -lgfortran failed"
grep -q "^prof-wrap: notice: this MPI link has Fortran code; its MPI calls are not recorded" f.log ||
  { cat f.log >&2; fail "no notice that Fortran MPI calls are not recorded"; }
echo "$test_name: prof-mpicc, prof-mpicxx, prof-wrap mpicc: instrumented, exact Enter counts as a singleton MPI process; Fortran notice"
done_ok
