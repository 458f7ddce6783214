#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The first event comes from another library's constructor, before libprof's own static
# initialisers ran (issue 14, item 3): a plain library whose constructor calls a function of the
# instrumented executable, linked after libprof as an MPI wrapper links libmpi_cxx, so that the
# dynamic linker initialises it first (checked with LD_DEBUG). With the GCC plugin and with
# -finstrument-functions, profile only and trace + profile + rusage metrics + sampling: the
# program runs and exits 0, and the trace and profile hold both calls. Then a C++ MPI program
# through mpicxx (Open MPI's libmpi_cxx constructor calls MPI::Intracomm::Intracomm, which the
# executable's instrumented copy serves) on 2 ranks, with both instrumentation kinds.
# Usage: ctor_order.sh <prof-wrap> <work-dir> [<shared-tools-dir>]
set -euo pipefail
wrap=$1 work=$2 tools=${3:-}
[ -n "$tools" ] && [ ! -f "$tools/otf2_check.py" ] && tools=
rm -rf "$work" && mkdir -p "$work/cc" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

# Statically: libprof's and its adapters' load-time initialisers may only register the empty
# destructors of Immortal<> storage (measurement/immortal.hpp); any other code there could undo
# what an early init did.
lib=$(cd "$(dirname "$wrap")/../lib" && pwd)
for so in "$lib"/libprof.so "$lib"/libprof_mpi.so "$lib"/libprof_cuda.so; do
  [ -e "$so" ] || continue
  # A PROF_SANITIZE build: the sanitizer adds its own load-time calls (__asan_init,
  # __asan_before_dynamic_init, __tsan_init) to every initialiser; the run below still checks.
  if nm -D --undefined-only "$so" | grep -E ' (__asan_init|__tsan_init)$' >/dev/null; then
    echo "$(basename "$so"): built with a sanitizer, load-time code not checked statically"
    continue
  fi
  # Calls and jumps may only go to __cxa_atexit, and the function it registers (in %rdi) must
  # be an Immortal<>'s destructor (_ZN4prof8ImmortalI...D1Ev).
  bad=$(objdump -d --no-show-raw-insn "$so" | awk '/^[0-9a-f]+ <_GLOBAL__sub_I_/ { on = 1; fn = $2; next } /^$/ { on = 0 }
        on && match($0, /<[^>]*>/) { t = substr($0, RSTART, RLENGTH)
          if ($0 ~ /(call|jmp) / && t !~ /^<(__cxa_atexit@plt|_GLOBAL__sub_I_[^>]*)>$/) print fn " calls " t
          if ($0 ~ /lea .*,%rdi$/ && t !~ /^<_ZN4prof8ImmortalI.*D[12]Ev>$/) print fn " registers " t }')
  [ -z "$bad" ] || fail "$(basename "$so") runs code at load time that an early init would not survive: $bad"
done

cat >libctor.c <<'C'
void exe_fn(void);
__attribute__((constructor)) static void ctor(void) { exe_fn(); }
C
cat >main.c <<'C'
#include <stdio.h>
int calls;
void exe_fn(void) { ++calls; }
int main(void) { exe_fn(); printf("calls %d\n", calls); return calls == 2 ? 0 : 1; }
C
gcc -shared -fPIC libctor.c -o libctor.so
# A compiler named gcc (so prof-wrap drives it as GCC) that appends the library after every other
# argument, prof-wrap's libraries included, as mpicc/mpicxx append theirs.
printf '#!/bin/sh\nexec gcc "$@" -Wl,--no-as-needed -L%s -lctor -Wl,-rpath,%s\n' "$work" "$work" >cc/gcc
chmod +x cc/gcc

for kind in plugin functions; do
  "$wrap" --instrument=$kind "$work/cc/gcc" -O0 -rdynamic main.c -o app_$kind
  LD_DEBUG=files ./app_$kind >/dev/null 2>ld.txt || true
  order=$(grep -o 'calling init: .*\(libctor\|libprof\)\.so[.0-9]*' ld.txt | sed 's|.*/||' | tr '\n' ' ')
  case "$order" in libctor.so\ libprof.so*) ;; *) fail "$kind: libctor.so is not initialised before libprof.so: $order";; esac
  for mode in profile full; do
    exp=exp_${kind}_$mode
    env=(PROF_EXPERIMENT_DIRECTORY=$exp)
    [ $mode = full ] && env+=(PROF_ENABLE_TRACING=true PROF_METRIC_RUSAGE=ru_minflt PROF_SAMPLING_EVENTS=timer@100)
    rc=0; env "${env[@]}" ./app_$kind >out.txt 2>err.txt || rc=$?
    [ $rc = 0 ] || { cat out.txt err.txt; fail "$kind/$mode: exit status $rc"; }
    grep -qx 'calls 2' out.txt || fail "$kind/$mode: the program printed $(cat out.txt)"
    if grep -q '^prof' err.txt; then cat err.txt; fail "$kind/$mode: prof reported a problem"; fi
    [ -f $exp/profile.cubex ] || fail "$kind/$mode: no profile"
    if [ $mode = full ]; then
      otf2-print $exp/traces.otf2 >trace.txt 2>trace.err
      [ ! -s trace.err ] || { cat trace.err; fail "$kind/$mode: otf2-print wrote to stderr"; }
      n=$(grep -c '^ENTER .*Region: "exe_fn' trace.txt || true)
      [ "$n" = 2 ] || fail "$kind/$mode: exe_fn entered $n times in the trace, expected 2"
      /usr/bin/python3 - $exp/traces.otf2 <<'PY'
import sys, otf2
with otf2.reader.open(sys.argv[1]) as r:
    enters = sum(1 for _, e in r.events if isinstance(e, otf2.events.Enter) and e.region.name == "exe_fn")
assert enters == 2, "otf2 module: exe_fn entered %d times" % enters
PY
      if [ -n "$tools" ]; then
        /usr/bin/python3 "$tools/otf2_check.py" $exp/traces.otf2 | tail -n 1
        /usr/bin/python3 "$tools/cubex_check.py" $exp/profile.cubex --expect-metric ru_minflt | tail -n 1
      fi
    fi
    if [ -n "$tools" ]; then
      visits=$(/usr/bin/python3 "$tools/cubex_check.py" $exp/profile.cubex --dump |
               awk '$1 == "visits" && $4 ~ /\/exe_fn$/ { s += $NF } END { print s + 0 }')
      [ "$visits" = 2 ] || fail "$kind/$mode: exe_fn has $visits visits in the profile, expected 2"
    fi
  done
done

if command -v mpicxx >/dev/null && command -v mpirun >/dev/null; then
  cat >hello.cpp <<'C'
#include <mpi.h>
#include <cstdio>
static int work(int r) { return r * 2; }
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, v, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  v = work(rank);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("sum %d\n", sum);
  MPI_Finalize();
  return 0;
}
C
  for kind in plugin functions; do
    "$wrap" --instrument=$kind mpicxx -O1 hello.cpp -o hello_$kind
    readelf -d hello_$kind | grep -q 'libmpi_cxx' || { echo "note: mpicxx links no libmpi_cxx here; the MPI part checks less"; }
    rc=0
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=mpi_$kind \
      timeout 120 mpirun -np 2 --oversubscribe ./hello_$kind >out.txt 2>err.txt || rc=$?
    [ $rc = 0 ] || { cat out.txt err.txt; fail "mpicxx/$kind: exit status $rc"; }
    grep -qx 'sum 2' out.txt || fail "mpicxx/$kind: the program printed $(cat out.txt)"
    otf2-print mpi_$kind/traces.otf2 >trace.txt 2>trace.err
    [ ! -s trace.err ] || { cat trace.err; fail "mpicxx/$kind: otf2-print wrote to stderr"; }
    n=$(grep -c '^ENTER .*Region: "MPI_Allreduce"' trace.txt || true)
    [ "$n" = 2 ] || fail "mpicxx/$kind: MPI_Allreduce entered $n times, expected 2 (one per rank)"
    [ -n "$tools" ] && /usr/bin/python3 "$tools/otf2_check.py" mpi_$kind/traces.otf2 --mpi | tail -n 1
  done
else
  echo "note: no mpicxx/mpirun: the MPI part is skipped"
fi
echo ok
