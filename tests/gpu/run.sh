#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The GPU tests of the CUDA adapter: build the programs of tests/gpu with prof-wrap nvcc, run
# them with tracing on, check their traces and profiles against what they did (check_gpu.py).
#
# On a GPU machine with everything installed (nvcc, the prof build, otf2-tools, python3-otf2),
# the one command is:
#
#   tests/gpu/run.sh [OUTDIR]                 build, run and check all programs
#
# Phases, for a run on a GPU machine that lacks Debian's OTF2 Python module (see README.md):
#
#   tests/gpu/run.sh --build OUTDIR           build into OUTDIR/bin (needs nvcc and the prof build)
#   tests/gpu/pack.sh OUTDIR                  copy the shared libraries they need into OUTDIR/lib
#   tests/gpu/run.sh --run OUTDIR             run each program: OUTDIR/<prog>/ (the experiment),
#                                             OUTDIR/<prog>.out, .err, .status (exit status)
#   tests/gpu/run.sh --check OUTDIR           check_gpu.py over OUTDIR (needs /usr/bin/python3 with
#                                             the otf2 module, otf2-print, ../shared/tools)
#
# Options: --prog NAME (repeatable) restricts to those programs: streams many_kernels spin nvtx
# graph mpi_cuda conflict (streams.cu with cupti_holder.cpp preloaded: another tool holds CUPTI)
# dropped (many_kernels.cu, 200,000 kernels with PROF_CUDA_BUFFER=2M: CUPTI must drop records).
# Several phase options may be given; none means all three.
# Environment: PROF_BUILD (prof's build directory, default <repo>/build), NVCC (default: nvcc on
# PATH, else $CUDA_HOME/bin/nvcc, else /usr/local/cuda/bin/nvcc), PROF_GPU_ARCH (default 90:
# sm_90 code plus compute_90 PTX), PROF_SHARED_TOOLS (otf2_check.py, cubex_check.py; default
# <repo>/../shared/tools), PROF_GPU_TIMEOUT (seconds per run, default 300),
# PROF_GPU_NO_DEVICE_CHECK=1 (run the programs even without /dev/nvidia<N>; they skip themselves).
# OUTDIR defaults to $PROF_BUILD/gpu-tests.
#
# Exit status: 0 all passed, 1 something failed (one line each), 77 everything was skipped
# (no GPU, no nvcc, prof built without the CUDA adapter; one line why).
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${PROF_BUILD:-$repo/build}
arch=${PROF_GPU_ARCH:-90}
limit=${PROF_GPU_TIMEOUT:-300}
all_progs="streams many_kernels spin nvtx graph mpi_cuda conflict dropped"
clean_env="env -u PROF_BUILD -u PROF_GPU_ARCH -u PROF_GPU_TIMEOUT -u PROF_GPU_NO_DEVICE_CHECK -u PROF_SHARED_TOOLS"

usage() {
  sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

do_build=0 do_run=0 do_check=0 progs="" outdir=""
while [ $# -gt 0 ]; do
  case $1 in
    --build) do_build=1 ;;
    --run) do_run=1 ;;
    --check) do_check=1 ;;
    --prog) [ $# -ge 2 ] || usage; progs="$progs $2"; shift ;;
    --prog=*) progs="$progs ${1#--prog=}" ;;
    -h|--help) usage ;;
    -*) echo "run.sh: unknown option $1" >&2; usage ;;
    *) [ -z "$outdir" ] || usage; outdir=$1 ;;
  esac
  shift
done
all=0
if [ $do_build = 0 ] && [ $do_run = 0 ] && [ $do_check = 0 ]; then
  do_build=1 do_run=1 do_check=1 all=1
fi
[ -n "$progs" ] || progs=$all_progs
for p in $progs; do
  case " $all_progs " in *" $p "*) ;; *) echo "run.sh: unknown program '$p' (one of: $all_progs)" >&2; exit 2 ;; esac
done
outdir=${outdir:-$build/gpu-tests}
mkdir -p "$outdir" || exit 1
outdir=$(cd "$outdir" && pwd)

skip() {
  echo "SKIP: $*"
  exit 77
}

find_nvcc() {
  if [ -n "${NVCC:-}" ]; then
    command -v "$NVCC" 2>/dev/null
  elif command -v nvcc >/dev/null 2>&1; then
    command -v nvcc
  elif [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then
    echo "$CUDA_HOME/bin/nvcc"
  elif [ -x /usr/local/cuda/bin/nvcc ]; then
    echo /usr/local/cuda/bin/nvcc
  fi
}

have_gpu() {
  # The driver's device files: a quick answer before anything is built. The programs ask
  # cudaGetDeviceCount themselves and exit 77 when it fails. PROF_GPU_NO_DEVICE_CHECK=1 leaves
  # the answer to them alone.
  [ "${PROF_GPU_NO_DEVICE_CHECK:-0}" = 1 ] || ls /dev/nvidia[0-9]* >/dev/null 2>&1
}

# ---- build -------------------------------------------------------------------------------------
build_phase() {
  nvcc=$(find_nvcc)
  [ -n "$nvcc" ] || skip "nvcc not found (set NVCC or put the CUDA toolkit's bin on PATH)"
  wrap=$build/bin/prof-wrap
  [ -x "$wrap" ] || { echo "FAIL: $wrap does not exist; build prof first (cmake --build $build)"; exit 1; }
  [ -e "$build/lib/libprof_cuda.so" ] ||
    skip "$build/lib/libprof_cuda.so does not exist: prof was built without the CUDA adapter (CUPTI not found)"
  # prof-wrap runs "nvcc": the one found here.
  PATH=$(dirname "$nvcc"):$PATH
  export PATH
  gencode="-gencode=arch=compute_$arch,code=[sm_$arch,compute_$arch]"
  mkdir -p "$outdir/bin" "$outdir/build"
  failed=0
  for p in $progs; do
    log=$outdir/build/$p.log
    rm -f "$outdir/bin/$p" "$outdir/bin/$p.skip"
    if [ "$p" = mpi_cuda ]; then
      # nvcc compiles (its host compiler mpicxx finds mpi.h); prof-wrap mpicxx links, which brings
      # the MPI adapter and, for -lcudart, the CUDA adapter.
      if ! command -v mpicxx >/dev/null 2>&1; then
        echo "mpicxx not found" >"$outdir/bin/$p.skip"
        echo "build: $p: skipped (mpicxx not found)"
        continue
      fi
      cudalib=$(dirname "$(dirname "$nvcc")")/lib64
      "$wrap" nvcc -O2 -ccbin mpicxx "$gencode" -c "$here/$p.cu" -o "$outdir/build/$p.o" >"$log" 2>&1 &&
        "$wrap" mpicxx -O2 "$outdir/build/$p.o" -o "$outdir/bin/$p" -L"$cudalib" -Wl,-rpath,"$cudalib" -lcudart >>"$log" 2>&1
    elif [ "$p" = dropped ]; then
      "$wrap" nvcc -O2 "$gencode" "$here/many_kernels.cu" -o "$outdir/bin/$p" >"$log" 2>&1
    elif [ "$p" = conflict ]; then
      # streams.cu again, with a library that takes CUPTI's subscriber first (preloaded at run).
      cuda=$(dirname "$(dirname "$nvcc")")
      g++ -O2 -shared -fPIC "$here/cupti_holder.cpp" -I"$cuda/include" -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" -lcupti \
        -o "$outdir/bin/libcupti_holder.so" >"$log" 2>&1 &&
        "$wrap" nvcc -O2 "$gencode" "$here/streams.cu" -o "$outdir/bin/$p" >>"$log" 2>&1
    else
      "$wrap" nvcc -O2 "$gencode" "$here/$p.cu" -o "$outdir/bin/$p" >"$log" 2>&1
    fi
    rc=$?
    if [ $rc != 0 ]; then
      echo "build: $p: FAIL: prof-wrap exited with status $rc; last line of $log: $(tail -n 1 "$log")"
      failed=1
      continue
    fi
    if ! readelf -d "$outdir/bin/$p" 2>/dev/null | grep -q 'NEEDED.*libprof_cuda'; then
      echo "build: $p: note: the program does not link libprof_cuda.so (prof-wrap did not add the CUDA adapter)"
    fi
    echo "build: $p: ok"
  done
  return $failed
}

# ---- run ---------------------------------------------------------------------------------------
run_phase() {
  [ -d "$outdir/bin" ] || { echo "FAIL: $outdir/bin does not exist; run.sh --build $outdir first"; exit 1; }
  if [ -d "$outdir/lib" ]; then
    LD_LIBRARY_PATH=$outdir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
  fi
  no_gpu=""
  have_gpu || no_gpu="no GPU: no /dev/nvidia<N> device file"
  if [ -z "$no_gpu" ] && command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi >"$outdir/nvidia-smi.txt" 2>&1 || true
  fi
  failed=0 ran=0
  for p in $progs; do
    exp=$outdir/$p
    rm -rf "$exp" "$outdir/$p.out" "$outdir/$p.err" "$outdir/$p.status"
    why=""
    if [ -n "$no_gpu" ]; then
      why=$no_gpu
    elif [ -f "$outdir/bin/$p.skip" ]; then
      why="not built: $(cat "$outdir/bin/$p.skip")"
    elif [ ! -x "$outdir/bin/$p" ]; then
      echo "run: $p: FAIL: $outdir/bin/$p does not exist (its build failed?)"
      echo 127 >"$outdir/$p.status"
      failed=1
      continue
    elif [ "$p" = mpi_cuda ] && ! command -v mpirun >/dev/null 2>&1; then
      why="mpirun not found"
    fi
    if [ -n "$why" ]; then
      echo "SKIP: $why" >"$outdir/$p.out"
      : >"$outdir/$p.err"
      echo 77 >"$outdir/$p.status"
      echo "run: $p: skipped ($why)"
      continue
    fi
    start=$(date +%s)
    # run.sh's own PROF_ variables are not prof's: prof would warn about them.
    if [ "$p" = mpi_cuda ]; then
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 $clean_env \
        timeout "$limit" mpirun --allow-run-as-root --oversubscribe -np 2 \
        -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY="$exp" -x LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" \
        "$outdir/bin/$p" >"$outdir/$p.out" 2>"$outdir/$p.err"
    elif [ "$p" = dropped ]; then
      PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=$exp PROF_CUDA_BUFFER=2M PROF_TOTAL_MEMORY=64M $clean_env \
        timeout "$limit" "$outdir/bin/$p" 200000 >"$outdir/$p.out" 2>"$outdir/$p.err"
    elif [ "$p" = conflict ]; then
      PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=$exp LD_PRELOAD=$outdir/bin/libcupti_holder.so $clean_env \
        timeout "$limit" "$outdir/bin/$p" >"$outdir/$p.out" 2>"$outdir/$p.err"
    else
      PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=$exp $clean_env \
        timeout "$limit" "$outdir/bin/$p" >"$outdir/$p.out" 2>"$outdir/$p.err"
    fi
    rc=$?
    echo $rc >"$outdir/$p.status"
    secs=$(($(date +%s) - start))
    case $rc in
      0) echo "run: $p: ok (${secs} s)"; ran=1 ;;
      77) echo "run: $p: skipped ($(grep -m1 SKIP "$outdir/$p.out" "$outdir/$p.err" | sed 's/^[^:]*://'))" ;;
      124) echo "run: $p: FAIL: did not end within $limit s"; failed=1 ;;
      *) echo "run: $p: FAIL: exit status $rc; last stderr line: $(tail -n 1 "$outdir/$p.err")"; failed=1 ;;
    esac
  done
  [ $failed = 0 ] || return 1
  [ $ran = 1 ] || return 77
  return 0
}

# ---- check -------------------------------------------------------------------------------------
check_phase() {
  set --
  for p in $progs; do set -- "$@" --prog "$p"; done
  tools=${PROF_SHARED_TOOLS:-$repo/../shared/tools}
  /usr/bin/python3 "$here/check_gpu.py" "$outdir" --shared-tools "$tools" "$@"
}

status=0
if [ $all = 1 ]; then
  # The quick reasons to skip come first, before anything is built.
  [ -n "$(find_nvcc)" ] || skip "nvcc not found (set NVCC or put the CUDA toolkit's bin on PATH)"
  [ -e "$build/lib/libprof_cuda.so" ] ||
    skip "$build/lib/libprof_cuda.so does not exist: prof was built without the CUDA adapter (CUPTI not found)"
  have_gpu || skip "no GPU: no /dev/nvidia<N> device file"
fi
if [ $do_build = 1 ]; then
  build_phase
  rc=$?
  [ $rc = 0 ] || status=1
fi
if [ $do_run = 1 ]; then
  run_phase
  rc=$?
  if [ $rc = 1 ]; then status=1; elif [ $rc = 77 ] && [ $do_check = 0 ] && [ $status = 0 ]; then status=77; fi
fi
if [ $do_check = 1 ]; then
  check_phase
  rc=$?
  if [ $rc = 1 ]; then status=1; elif [ $rc = 77 ] && [ $status = 0 ]; then status=77; fi
fi
exit $status
