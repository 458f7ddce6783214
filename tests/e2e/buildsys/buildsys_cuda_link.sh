#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# prof-wrap links the CUDA adapter (libprof_cuda.so) into CUDA programs and only into them: nvcc, a
# .cu input, -lcudart (or -lcudart_static, -lcuda); --cuda forces it, --nocuda wins; MPI+CUDA links
# get both adapters. nvcc gets its linker options through -Xlinker. A real nvcc build needs
# libprof_cuda.so, names prof_adapter_cuda in its adapter list and runs (without a GPU the program
# says so and exits 0) with a trace. A prof without the CUDA adapter (a copy of the layout without
# libprof_cuda*) links CUDA programs without it after one notice; with --cuda that is an error.
# Skipped (77) where nvcc is not installed (PATH, then /usr/local/cuda/bin) or libprof_cuda.so was
# not built. Arguments: <bin dir with prof-wrap> <work dir> <source dir>
. "$(dirname -- "$0")/common.sh"
set -euo pipefail

if ! command -v nvcc >/dev/null 2>&1; then
  [ -x /usr/local/cuda/bin/nvcc ] || skip "nvcc is not installed (neither in PATH nor in /usr/local/cuda/bin)"
  PATH="$PATH:/usr/local/cuda/bin"
fi
bin_dir=$(cd "$bin_dir" && pwd)  # the checks run in $tmp
lib_dir=$(cd "$bin_dir/../lib" && pwd)
PATH="$bin_dir:$PATH"
[ -e "$lib_dir/libprof_cuda.so" ] || skip "$lib_dir/libprof_cuda.so was not built (no CUPTI when prof was configured)"
cd "$tmp"

# dry <name> <prof-wrap arguments...>: prof-wrap --dry-run into <name>.log (it must succeed); the
# link command (the last line) into <name>.link.
dry() {
  name=$1
  shift
  prof-wrap --dry-run "$@" >"$name.log" 2>&1 || { cat "$name.log" >&2; fail "prof-wrap --dry-run $* failed"; }
  tail -n 1 "$name.log" >"$name.link"
}

# links <name> <library>, links_not <name> <library>: the link command of <name> has -l<library>, or has not.
links() {
  grep -q -- " -l$2 " "$1.link" || { cat "$1.log" >&2; fail "$1: the link command has no -l$2"; }
}
links_not() {
  ! grep -q -- " -l$2 " "$1.link" || { cat "$1.log" >&2; fail "$1: the link command has -l$2"; }
}

# says <name> <text>: --dry-run's adapter line (prof-wrap: adapters: ...) contains <text>.
says() {
  grep '^prof-wrap: adapters: ' "$1.log" >"$1.adapters" || { cat "$1.log" >&2; fail "$1: --dry-run did not say which adapters it links"; }
  grep -qF -- "$2" "$1.adapters" || { cat "$1.log" >&2; fail "$1: the adapter line does not say '$2'"; }
}

# nvcc: the CUDA adapter before the user's arguments, every linker option through -Xlinker.
dry nvcc nvcc x.cu -o x
links nvcc prof_cuda
links nvcc prof
grep -q -- " -Xlinker -rpath,$lib_dir " nvcc.link || { cat nvcc.log >&2; fail "nvcc: no -Xlinker -rpath,$lib_dir on the link command"; }
! grep -q -- ' -Wl,' nvcc.link || { cat nvcc.log >&2; fail "nvcc: the link command has -Wl, options (nvcc rejects them)"; }
says nvcc 'cuda (the compiler is nvcc)'

# g++: -lcudart makes a CUDA program, inside the --no-as-needed bracket; nothing else does.
dry gxx_cudart g++ x.o -o x -lcudart
links gxx_cudart prof_cuda
grep -q -- '-Wl,--push-state,--no-as-needed -lprof_cuda -Wl,--pop-state x.o' gxx_cudart.link ||
  { cat gxx_cudart.log >&2; fail "g++ -lcudart: -lprof_cuda is not in a --no-as-needed bracket before the user's objects"; }
says gxx_cudart 'cuda (the link has -lcudart)'
for lib in cudart_static cuda; do
  dry "gxx_$lib" g++ x.o -o x "-l$lib"
  links "gxx_$lib" prof_cuda
done
dry gxx_cu g++ main.o k.cu -o x
links gxx_cu prof_cuda
says gxx_cu 'cuda (k.cu is CUDA source)'
dry gxx g++ x.o -o x
links_not gxx prof_cuda
says gxx 'not linked: openmp (no -fopenmp), mpi (no MPI compiler wrapper or MPI library on the link line), cuda ('
dry nocuda --nocuda nvcc x.cu -o x
links_not nocuda prof_cuda
says nocuda 'cuda (--nocuda)'
dry force --cuda g++ x.o -o x
links force prof_cuda
says force 'cuda (--cuda)'
dry compile nvcc -c x.cu -o x.o
! grep -q -- 'prof_cuda' compile.link || fail "nvcc -c: a compile step got the CUDA adapter"
if prof-wrap --dry-run g++ -static x.o -o x -lcudart >static.log 2>&1; then
  fail "g++ -static ... -lcudart: prof-wrap accepted a -static link with the CUDA adapter"
fi
grep -qx 'prof-wrap: error: -static links with the cuda adapter are not supported; link dynamically, or use --nocuda' static.log ||
  { cat static.log >&2; fail "g++ -static ... -lcudart: not the expected refusal"; }
echo "$test_name: --dry-run: nvcc (-Xlinker), .cu, -lcudart/-lcudart_static/-lcuda, --cuda link prof_cuda; plain g++, --nocuda, -c do not; -static refused"

# MPI and CUDA: both adapters.
if command -v mpicxx >/dev/null 2>&1 && [ -e "$lib_dir/libprof_mpi.so" ]; then
  dry mpi mpicxx x.o -o x -lcudart
  links mpi prof_mpi
  links mpi prof_cuda
  says mpi 'mpi (mpicxx is an MPI compiler wrapper), cuda (the link has -lcudart)'
  # nvcc with an MPI compiler wrapper as its host compiler: an MPI program too.
  dry ccbin nvcc -ccbin mpicxx x.cu -o x
  links ccbin prof_mpi
  links ccbin prof_cuda
  says ccbin "mpi (nvcc's host compiler mpicxx is an MPI compiler wrapper), cuda (the compiler is nvcc)"
  echo "$test_name: mpicxx ... -lcudart and nvcc -ccbin mpicxx link prof_mpi and prof_cuda"
else
  echo "$test_name: mpicxx or libprof_mpi.so missing: MPI+CUDA case not checked"
fi

# A real build: linked with libprof_cuda, whose descriptor the adapter list names; the program runs.
cat >prog.cu <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>

__global__ void add_one(int* v) { v[threadIdx.x] += 1; }

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: nothing to launch\n");
    return 0;
  }
  int* v = nullptr;
  int host[32] = {0};
  if (cudaMalloc(&v, sizeof host) != cudaSuccess) return 1;
  cudaMemset(v, 0, sizeof host);
  add_one<<<1, 32>>>(v);
  cudaMemcpy(host, v, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(v);
  std::printf("kernel ran: v[31] = %d\n", host[31]);
  return host[31] == 1 ? 0 : 1;
}
EOF
TMPDIR=$tmp prof-wrap --keep-files nvcc -O2 prog.cu -o prog >build.log 2>&1 || { cat build.log >&2; fail "prof-wrap nvcc -O2 prog.cu -o prog failed"; }
readelf -d prog >prog.dynamic
grep -q 'NEEDED.*\[libprof_cuda\.so\.0\]' prog.dynamic || { cat prog.dynamic >&2; fail "prog does not need libprof_cuda.so.0"; }
grep -q 'NEEDED.*\[libprof\.so\.0\]' prog.dynamic || { cat prog.dynamic >&2; fail "prog does not need libprof.so.0"; }
kept=$(sed -n 's/^prof-wrap: kept the adapter list in //p' build.log)
{ [ -n "$kept" ] && [ -f "$kept/prof_adapters.c" ]; } || { cat build.log >&2; fail "--keep-files did not keep the adapter list"; }
grep -q '&prof_adapter_cuda' "$kept/prof_adapters.c" ||
  { cat "$kept/prof_adapters.c" >&2; fail "the adapter list does not name prof_adapter_cuda"; }
! grep -q '&prof_adapter_mpi' "$kept/prof_adapters.c" || fail "the adapter list of a CUDA-only program names prof_adapter_mpi"
if [ "${PROF_E2E_RUN:-1}" != "0" ]; then
  mkdir run
  rc=0
  (cd run && PROF_ENABLE_TRACING=true ../prog >../run.log 2>&1) || rc=$?
  [ "$rc" = 0 ] || { cat run.log >&2; fail "prog exited with status $rc under the measurement (PROF_ENABLE_TRACING=true)"; }
  grep -q -e '^no CUDA device: nothing to launch$' -e '^kernel ran: v\[31\] = 1$' run.log || { cat run.log >&2; fail "prog did not print its line"; }
  traces=$(find run -mindepth 2 -maxdepth 2 -name traces.otf2)
  [ -n "$traces" ] || { ls -lR run >&2; fail "prog wrote no experiment directory with traces.otf2 in its working directory"; }
  if [ -n "${PROF_SHARED_TOOLS:-}" ]; then
    /usr/bin/python3 "$PROF_SHARED_TOOLS/otf2_check.py" "$traces" >check.log 2>&1 ||
      { cat check.log >&2; fail "otf2_check.py rejects the trace of prog ($traces)"; }
  fi
fi
echo "$test_name: prof-wrap nvcc prog.cu: NEEDED libprof_cuda.so.0, adapter list names prof_adapter_cuda, runs with a trace"

# A prof without its CUDA adapter: prof-wrap copied, everything else of lib/ and include/ linked.
prefix=$tmp/prefix
mkdir -p "$prefix/bin" "$prefix/lib"
cp "$bin_dir/prof-wrap" "$prefix/bin/"
ln -s "$(cd "$bin_dir/../include" && pwd)" "$prefix/include"
for f in "$lib_dir"/*; do
  case $(basename -- "$f") in libprof_cuda*) ;; *) ln -s "$f" "$prefix/lib/" ;; esac
done
"$prefix/bin/prof-wrap" --dry-run nvcc x.cu -o x >missing.log 2>&1 || { cat missing.log >&2; fail "without libprof_cuda.so: prof-wrap --dry-run nvcc failed"; }
notice="prof-wrap: notice: $prefix/lib/libprof_cuda.so does not exist: prof was built without its CUDA adapter (no CUPTI under "
[ "$(grep -c '^prof-wrap: notice: ' missing.log)" = 1 ] || { cat missing.log >&2; fail "without libprof_cuda.so: not exactly one notice"; }
grep -qF -- "$notice" missing.log || { cat missing.log >&2; fail "without libprof_cuda.so: the notice does not say that prof was built without its CUDA adapter"; }
grep -q 'CUDA calls and kernels are not recorded' missing.log || { cat missing.log >&2; fail "without libprof_cuda.so: the notice does not say what is lost"; }
! grep -q -- 'prof_cuda' <(tail -n 1 missing.log) || { cat missing.log >&2; fail "without libprof_cuda.so: the link still has -lprof_cuda"; }
grep -qF 'cuda (the compiler is nvcc, but prof was built without the CUDA adapter)' missing.log ||
  { cat missing.log >&2; fail "without libprof_cuda.so: the adapter line does not say why cuda is left out"; }
"$prefix/bin/prof-wrap" --dry-run g++ x.o -o x >plain.log 2>&1 || fail "without libprof_cuda.so: prof-wrap --dry-run g++ failed"
! grep -q 'notice' plain.log || { cat plain.log >&2; fail "without libprof_cuda.so: a program without CUDA got a notice"; }
if "$prefix/bin/prof-wrap" --dry-run --cuda g++ x.o -o x >forced.log 2>&1; then
  fail "without libprof_cuda.so: --cuda did not fail"
fi
grep -qF -- "prof-wrap: error: $prefix/lib/libprof_cuda.so does not exist: prof was built without its CUDA adapter" forced.log ||
  { cat forced.log >&2; fail "without libprof_cuda.so: --cuda did not fail with the missing library's name"; }
grep -qF 'PROF_CUDA_ROOT' forced.log || { cat forced.log >&2; fail "without libprof_cuda.so: the --cuda error does not name the fix"; }
"$prefix/bin/prof-wrap" nvcc -O2 prog.cu -o prog_nocuda >nocuda_build.log 2>&1 ||
  { cat nocuda_build.log >&2; fail "without libprof_cuda.so: prof-wrap nvcc prog.cu failed"; }
readelf -d prog_nocuda >prog_nocuda.dynamic
! grep -q 'libprof_cuda' prog_nocuda.dynamic || fail "without libprof_cuda.so: prog_nocuda needs libprof_cuda"
grep -q 'NEEDED.*\[libprof\.so\.0\]' prog_nocuda.dynamic || fail "without libprof_cuda.so: prog_nocuda does not need libprof.so.0"
echo "$test_name: without libprof_cuda.so: one notice and a link without it; --cuda is an error naming the fix"
done_ok
