#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the libFuzzer targets of tests/fuzz with clang (its own build directory) and runs each
# for a bounded time, starting from its seed corpus in tests/fuzz/corpus/<target>/.
# Usage: tests/fuzz/run.sh [--merge] [--build-dir DIR] [--jobs N] [--only TARGET] [seconds]
#   seconds      per target (default 60), libFuzzer's -max_total_time
#   --merge      afterwards add the new inputs that reach new code to the corpus (libFuzzer
#                -merge=1); without it the corpus is only read, new inputs stay in DIR/work/
#   --build-dir  default: build-fuzz in the repository root (.gitignore's /build*/)
#   --jobs       parallel compile jobs (default: nproc)
#   --only       config, filter, cube4 or otf2 (default: all four, one after the other)
# A crash, leak, undefined behaviour, timeout (10 s per input) or out-of-memory input is saved
# as tests/fuzz/crashes/<target>-<kind>-<sha1>; the other targets still run, then the script
# exits 1. Exit 77 (ctest's skip): no clang, or clang without libFuzzer (Debian: libclang-rt-14-dev).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/fuzz
seconds=60 merge=0 build=$root/build-fuzz jobs=$(nproc) targets=(config filter cube4 otf2)
while (($#)); do
  case $1 in
    --merge) merge=1 ;;
    --build-dir) build=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --only) targets=("$2"); shift ;;
    -h|--help) sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) seconds=$1 ;;
  esac
  shift
done
case $seconds in ''|*[!0-9]*) echo "fuzz: '$seconds' is not a number of seconds" >&2; exit 2 ;; esac
for t in "${targets[@]}"; do
  [ -f "$here/fuzz_$t.cpp" ] || { echo "fuzz: unknown target '$t'; expected config, filter, cube4 or otf2" >&2; exit 2; }
done

# libFuzzer ships with clang's compiler-rt; without it there is nothing to run (a skip, not a failure).
if ! command -v clang++ >/dev/null || ! command -v clang >/dev/null; then
  echo "fuzz: skipped: clang is not installed (Debian: apt-get install clang libclang-rt-14-dev)"
  exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t* d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe/p.c"
if ! clang -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" 2>"$probe/err"; then
  echo "fuzz: skipped: clang cannot link libFuzzer (-fsanitize=fuzzer): $(head -n1 "$probe/err")"
  echo "fuzz: Debian 12: apt-get install libclang-rt-14-dev"
  exit 77
fi

echo "fuzz: building in $build"
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROF_BUILD_TESTS=OFF -DPROF_FUZZ=ON >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; echo "fuzz: configuring $build failed" >&2; exit 1; }
mv "$build.configure.log" "$build/configure.log"
cmake --build "$build" --target "${targets[@]/#/fuzz_}" -j"$jobs" >"$build/build.log" 2>&1 ||
  { tail -n 40 "$build/build.log" >&2; echo "fuzz: building the fuzz targets failed" >&2; exit 1; }

crashes=$here/crashes
mkdir -p "$crashes"
failed=()
for t in "${targets[@]}"; do
  bin=$build/bin/fuzz_$t corpus=$here/corpus/$t work=$build/work/$t log=$build/fuzz_$t.log
  rm -rf "$work"
  mkdir -p "$work" "$corpus"
  dict=()
  [ -f "$here/$t.dict" ] && dict=(-dict="$here/$t.dict")
  before=$(ls "$crashes")
  echo "fuzz: $t for ${seconds} s (corpus: $(ls "$corpus" | wc -l) inputs; log: $log)"
  rc=0
  # New inputs go to $work (the first directory); the corpus is only read.
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1 \
         -print_final_stats=1 -artifact_prefix="$crashes/$t-" "${dict[@]}" "$work" "$corpus" >"$log" 2>&1 || rc=$?
  # "#123 DONE cov: ... exec/s: ..." and "Done 123 runs in 60 second(s)"
  grep -aE '^#[0-9]+[[:space:]]+DONE|^Done [0-9]+ runs' "$log" | sed "s/^/fuzz: $t: /" || true
  new=$(comm -13 <(echo "$before") <(ls "$crashes") | grep -v '^$' || true)
  if ((rc != 0)) || [ -n "$new" ]; then
    failed+=("$t")
    grep -aE '^==[0-9]+==ERROR|^SUMMARY|runtime error|fuzz_[a-z0-9]+: ' "$log" | head -n 5 | sed "s/^/fuzz: $t: /" || true
    if [ -n "$new" ]; then
      for f in $new; do
        echo "fuzz: $t FAILED (exit $rc); input saved as tests/fuzz/crashes/$f"
        echo "fuzz:   reproduce: $bin $crashes/$f"
      done
      echo "fuzz:   once fixed: mv it to tests/fuzz/corpus/$t/<what-it-was> and git add it (every later run replays it)"
    else
      echo "fuzz: $t FAILED (exit $rc) without an input file; see $log"
      tail -n 20 "$log" | sed "s/^/fuzz: $t: /"
    fi
    continue
  fi
  if ((merge)); then
    n0=$(ls "$corpus" | wc -l)
    "$bin" -merge=1 "${dict[@]}" "$corpus" "$work" >"$build/merge_$t.log" 2>&1 ||
      { tail -n 20 "$build/merge_$t.log" >&2; echo "fuzz: merging into $corpus failed" >&2; exit 1; }
    echo "fuzz: $t: merged $(($(ls "$corpus" | wc -l) - n0)) new inputs into tests/fuzz/corpus/$t/"
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: passed: ${targets[*]} (${seconds} s each)"
