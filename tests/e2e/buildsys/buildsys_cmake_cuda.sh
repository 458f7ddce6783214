#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds a CUDA CMake project (tests/e2e/buildsys/cmake-cuda-project: a CUDA-only executable and a
# mixed C++/CUDA one sharing a static library of kernels) through prof-wrap, the two documented ways:
#   compilers: PROF_WRAPPER=off cmake -DCMAKE_CUDA_COMPILER=prof-nvcc -DCMAKE_CUDA_HOST_COMPILER=prof-g++ \
#                                     -DCMAKE_CXX_COMPILER=prof-g++
#   launchers: PROF_WRAPPER=off cmake -DCMAKE_CUDA_COMPILER_LAUNCHER=prof-wrap -DCMAKE_CUDA_HOST_COMPILER=prof-g++ \
#                                     -DCMAKE_CXX_COMPILER_LAUNCHER=prof-wrap -DCMAKE_CXX_LINKER_LAUNCHER=prof-wrap
# CMake links a CUDA executable with nvcc's host compiler, not with the CUDA compiler (and takes
# no CUDA linker launcher): hence prof-g++ as the host compiler; without it the link fails at the
# link guard, which is checked too. Then the programs run: without a GPU their kernels' work is
# done on the CPU, so the host call counts are the same on every machine; the trace must hold
# exactly those Enter events and no region of a kernel, its launch stub or nvcc's registration code.
# Skipped (77) where nvcc is not installed (PATH, then /usr/local/cuda/bin).
# Arguments: <bin dir with prof-wrap> <work dir> <source dir> [cmake]
. "$(dirname -- "$0")/common.sh"
cmake=${4:-cmake}

if ! command -v nvcc >/dev/null 2>&1; then
  [ -x /usr/local/cuda/bin/nvcc ] || skip "nvcc is not installed (neither in PATH nor in /usr/local/cuda/bin)"
  PATH="$PATH:/usr/local/cuda/bin"
fi

cp -R "$src_dir/cmake-cuda-project" "$tmp/src"

# build <dir> <cmake options...>: configure with PROF_WRAPPER=off, build --verbose into <dir>.log.
build() {
  d=$1
  shift
  PROF_WRAPPER=off "$cmake" -S "$tmp/src" -B "$tmp/$d" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=75 "$@" \
    >"$tmp/$d.configure.log" 2>&1 || { cat "$tmp/$d.configure.log" >&2; fail "$d: cmake configure $* failed"; }
  PROF_WRAPPER_INSTRUMENTER_FLAGS="--verbose ${PROF_TEST_WRAP_FLAGS:-}" "$cmake" --build "$tmp/$d" --verbose >"$tmp/$d.log" 2>&1
}

# check_build <dir>: the .cu compile went through nvcc with host instrumentation; both programs run
# with the exact host Enter counts and no kernel or nvcc-generated region.
check_build() {
  d=$1
  grep -q -- '^\([^ ]*/\)\?nvcc .*-Xcompiler \(-finstrument-functions\|-fplugin=.*prof_gcc_plugin\)' "$tmp/$d.log" ||
    { cat "$tmp/$d.log" >&2; fail "$d: no nvcc compile step had host instrumentation (-Xcompiler ...)"; }
  check_instrumented "$tmp/$d/cuda_only"
  check_instrumented "$tmp/$d/mixed"
  check_enters "$tmp/$d/cuda_only" "$tmp/$d.exp" main 1 'scale_on_device(int)' 4 'have_gpu()' 5 \
    'host_sum(int const*, int)' 4
  check_enters "$tmp/$d/mixed" "$tmp/$d.exp_mixed" main 1 'twice(long)' 3 'scale_on_device(int)' 3 'have_gpu()' 3
  [ "${PROF_E2E_RUN:-1}" = "0" ] && return 0
  # --instrument=functions cannot tell a kernel's host-side launch function from the user's (see
  # prof-wrap --help); nvcc's own generated functions are excluded in both modes.
  forbidden='__device_stub|__cuda|__nv_|__sti__|scale_kernel|fill_kernel'
  [ "$d" = functions ] && forbidden='__device_stub|__cuda|__nv_|__sti__'
  for exp in "$tmp/$d.exp" "$tmp/$d.exp_mixed"; do
    ! grep -E "Region: \"[^\"]*($forbidden)" "$exp.print" >&2 ||
      fail "$d: the trace has a region of nvcc's generated host code or of a kernel's host stub (above)"
  done
}

build compilers -DCMAKE_CUDA_COMPILER=prof-nvcc -DCMAKE_CUDA_HOST_COMPILER=prof-g++ -DCMAKE_CXX_COMPILER=prof-g++ ||
  { cat "$tmp/compilers.log" >&2; fail "compilers: cmake --build failed"; }
check_build compilers
echo "$test_name: CMAKE_CUDA_COMPILER=prof-nvcc, CMAKE_CUDA_HOST_COMPILER=prof-g++: instrumented, exact Enter counts, no stub regions"

build launchers -DCMAKE_CUDA_COMPILER=nvcc -DCMAKE_CXX_COMPILER=g++ -DCMAKE_CUDA_COMPILER_LAUNCHER=prof-wrap \
  -DCMAKE_CXX_COMPILER_LAUNCHER=prof-wrap -DCMAKE_CXX_LINKER_LAUNCHER=prof-wrap -DCMAKE_CUDA_HOST_COMPILER=prof-g++ ||
  { cat "$tmp/launchers.log" >&2; fail "launchers: cmake --build failed"; }
check_build launchers
echo "$test_name: CUDA and C++ COMPILER_LAUNCHER=prof-wrap, CMAKE_CUDA_HOST_COMPILER=prof-g++: instrumented, exact Enter counts"

PROF_TEST_WRAP_FLAGS=--instrument=functions build functions -DCMAKE_CUDA_COMPILER=prof-nvcc \
  -DCMAKE_CUDA_HOST_COMPILER=prof-g++ -DCMAKE_CXX_COMPILER=prof-g++ ||
  { cat "$tmp/functions.log" >&2; fail "functions: cmake --build with --instrument=functions failed"; }
check_build functions
echo "$test_name: prof-nvcc with --instrument=functions (-Xcompiler -finstrument-functions): exact Enter counts"

# Without the host compiler, CMake's host link of the CUDA executable bypasses prof: the link guard.
if build nohost -DCMAKE_CUDA_COMPILER=prof-nvcc -DCMAKE_CXX_COMPILER=prof-g++; then
  fail "nohost: the build succeeded without CMAKE_CUDA_HOST_COMPILER=prof-g++; the link guard did not fire"
fi
grep -q 'link_this_object_with_prof_wrap' "$tmp/nohost.log" ||
  { cat "$tmp/nohost.log" >&2; fail "nohost: the link failed without naming the link guard"; }
echo "$test_name: without CMAKE_CUDA_HOST_COMPILER=prof-g++ the CUDA executable's link fails naming the link guard"
done_ok
