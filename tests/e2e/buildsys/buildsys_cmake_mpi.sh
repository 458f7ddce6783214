#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A CMake project with find_package(MPI) and target_link_libraries(app MPI::MPI_C), whose link
# names MPI by its full path (…/libmpi.so), built through prof-wrap two ways: as the C compiler
# and linker launcher (CMake >= 3.21) and as the C compiler (CMAKE_C_COMPILER=prof-gcc). Each
# build links the MPI adapter; run with mpirun on 2 ranks it writes ONE experiment whose trace
# has both ranks' MPI events (otf2-print, the otf2 Python module, otf2_check.py --mpi where
# PROF_SHARED_TOOLS is set), and no warning about a missing MPI adapter. (Issue 14, item 4: such
# builds got no MPI adapter and each rank wrote an experiment of its own.)
# Arguments: <bin dir with prof-wrap> <work dir> <source dir> [cmake]
. "$(dirname -- "$0")/common.sh"
cmake=${4:-cmake}

command -v mpicc >/dev/null 2>&1 || skip "mpicc is not installed (Debian: libopenmpi-dev openmpi-bin)"
command -v mpirun >/dev/null 2>&1 || skip "mpirun is not installed (Debian: openmpi-bin)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cp -R "$src_dir/cmake-mpi-project" "$tmp/src"
cp "$src_dir/mpi_hello.c" "$tmp/src/mpi_hello.c"

# build <dir> <cmake options...>: configure with the wrapper off (FindMPI's checks see the plain
# compiler), build with --verbose; the commands are in <dir>.log.
build() {
  d=$1
  shift
  PROF_WRAPPER=off "$cmake" -S "$tmp/src" -B "$tmp/$d" -DCMAKE_BUILD_TYPE=Release "$@" >"$tmp/$d.configure.log" 2>&1 ||
    { cat "$tmp/$d.configure.log" >&2; fail "$d: cmake configure $* failed"; }
  PROF_WRAPPER_INSTRUMENTER_FLAGS=--verbose "$cmake" --build "$tmp/$d" --verbose >"$tmp/$d.log" 2>&1 ||
    { cat "$tmp/$d.log" >&2; fail "$d: cmake --build failed"; }
}

# check <dir>: the link named libmpi by path and got the adapter; one experiment of 2 ranks.
check() {
  d=$1
  exe=$tmp/$d/app
  grep -q '/libmpi\.so' "$tmp/$d.log" ||
    { cat "$tmp/$d.log" >&2; fail "$d: the link line has no path to libmpi.so; the test does not test MPI named by path"; }
  grep -q 'prof-wrap: adapters: .*mpi (the link names .*/libmpi\.so)' "$tmp/$d.log" ||
    { cat "$tmp/$d.log" >&2; fail "$d: prof-wrap --verbose did not say that the link's libmpi.so selects the MPI adapter"; }
  check_instrumented "$exe"
  readelf -d "$exe" | grep -q 'NEEDED.*\[libprof_mpi\.so' || fail "$d: app does not need libprof_mpi.so: no MPI adapter"
  [ "${PROF_E2E_RUN:-1}" = "0" ] && return 0
  mkdir "$tmp/$d.run"
  (cd "$tmp/$d.run" && timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 -x PROF_ENABLE_TRACING=true "$exe") \
    >"$tmp/$d.run.log" 2>&1 || { cat "$tmp/$d.run.log" >&2; fail "$d: mpirun -np 2 failed"; }
  ! grep -q 'linked without prof.s MPI adapter' "$tmp/$d.run.log" ||
    { cat "$tmp/$d.run.log" >&2; fail "$d: the run warns of a missing MPI adapter"; }
  n=$(find "$tmp/$d.run" -maxdepth 1 -name 'prof-*' -type d | wc -l)
  [ "$n" = 1 ] || { ls -l "$tmp/$d.run" >&2; fail "$d: 2 ranks wrote $n experiment directories, not one for the job"; }
  exp=$(find "$tmp/$d.run" -maxdepth 1 -name 'prof-*' -type d)
  otf2-print "$exp/traces.otf2" >"$tmp/$d.print" 2>&1 || fail "$d: otf2-print $exp/traces.otf2 failed"
  n=$(grep -c '^ENTER .*Region: "MPI_Allreduce"' "$tmp/$d.print" || true)
  [ "$n" = 2 ] || fail "$d: the trace has $n Enter events of MPI_Allreduce, 2 ranks made one call each"
  n=$(grep -c '^MPI_COLLECTIVE_END ' "$tmp/$d.print" || true)
  [ "$n" -ge 2 ] || fail "$d: the trace has $n MPI collective events; expected the ranks' MPI_Allreduce at least"
  /usr/bin/python3 - "$exp/traces.otf2" <<'PY' || fail "$d: the otf2 Python module does not see 2 MPI ranks in one trace"
import sys, otf2
with otf2.reader.open(sys.argv[1]) as r:
    groups = [g for g in r.definitions.location_groups]
    comms = [c.name for c in r.definitions.comms]
    assert len(groups) == 2, f"{len(groups)} location groups"
    assert any("WORLD" in c for c in comms), f"no MPI_COMM_WORLD among {comms}"
PY
  if [ -n "${PROF_SHARED_TOOLS:-}" ]; then
    /usr/bin/python3 "$PROF_SHARED_TOOLS/otf2_check.py" "$exp/traces.otf2" --mpi --expect-region work >"$tmp/$d.check.log" 2>&1 ||
      { cat "$tmp/$d.check.log" >&2; fail "$d: otf2_check.py --mpi rejects the trace"; }
    tail -n 1 "$tmp/$d.check.log"
  fi
}

version=$("$cmake" --version | sed -n 's/^cmake version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p')
# shellcheck disable=SC2086
set -- $version
if [ $# -eq 2 ] && { [ "$1" -gt 3 ] || { [ "$1" -eq 3 ] && [ "$2" -ge 21 ]; }; }; then
  build launcher -DCMAKE_C_COMPILER=gcc -DCMAKE_C_COMPILER_LAUNCHER=prof-wrap -DCMAKE_C_LINKER_LAUNCHER=prof-wrap
  check launcher
  echo "$test_name: CMAKE_C_COMPILER_LAUNCHER and CMAKE_C_LINKER_LAUNCHER=prof-wrap: MPI adapter linked, one experiment of 2 ranks with MPI events"
else
  echo "$test_name: CMake older than 3.21 has no CMAKE_C_LINKER_LAUNCHER: the launcher build not checked"
fi
build compiler -DCMAKE_C_COMPILER="$bin_dir/prof-gcc"
check compiler
echo "$test_name: CMAKE_C_COMPILER=prof-gcc: MPI adapter linked, one experiment of 2 ranks with MPI events"
done_ok
