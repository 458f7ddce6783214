# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the robustness scripts. Sets: wrap, work, tools (from the arguments), prof_bin (the
# folder of prof-wrap, prof-score, prof-info). Gives: fail, build <out> <src> [flags...],
# check_trace <anchor> [otf2_check options] (otf2-print + otf2 module + otf2_check.py where
# present, from tests/e2e/checkers.sh), check_profile <cubex> [cubex_check options]
# (cubex_check.py where present, else prof-score reads it), expect_line <file> <regex>,
# small_fs <dir> <size> (a small tmpfs: a disk that fills).
set -euo pipefail
wrap=$1 work=$2 tools=${3:-}
shift 3 || true
prof_bin=$(cd "$(dirname "$wrap")" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../e2e/checkers.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset PROF_EXPERIMENT_DIRECTORY PROF_ENABLE_TRACING PROF_ENABLE_PROFILING PROF_TOTAL_MEMORY
# These cases stress the recording of every event (full buffers and disks, flushes, signals,
# thread churn, runs that overlap in time): every call measured. Throttling has its own tests
# (tests/e2e/throttle).
export PROF_THROTTLE=false

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
# skip_under_tsan <why>: a PROF_SANITIZE=thread build (tests/sanitizers/ctest_env.cmake.in) cannot
# run this case; the PROF_SANITIZE=address build and the normal build still do (docs/TESTING.md).
skip_under_tsan() { [ "${PROFTESTS_SANITIZER:-}" != thread ] || skip "PROF_SANITIZE=thread: $*"; }

# build <out> <src> [compiler flags...]: gcc (g++ for .cpp) through prof-wrap
build() {
  local out=$1 src=$2
  shift 2
  local cc=gcc
  case $src in *.cpp) cc=g++ ;; esac
  "$wrap" "$cc" -O1 "$@" "$src" -o "$out" || fail "cannot build $src"
}

# check_profile <cubex> [cubex_check.py options...]
check_profile() {
  local cubex=$1
  shift
  [ -s "$cubex" ] || fail "no profile: $cubex"
  if have_cubex_check; then
    /usr/bin/python3 "$tools/cubex_check.py" "$cubex" "$@" | tail -n 1 | grep -q '^cubex ok' ||
      fail "cubex_check.py rejects $cubex: $(/usr/bin/python3 "$tools/cubex_check.py" "$cubex" "$@" | tail -n 3)"
  else
    "$prof_bin/prof-score" "$cubex" >/dev/null || fail "prof-score cannot read $cubex"
  fi
}

# small_fs <dir> <size>: a fresh tmpfs of <size> (mount's size=: 1m, 16k) on <dir>, a full disk
# in small; unmounted when the script ends. Skips (77) where mount is not permitted (not root, a
# container without CAP_SYS_ADMIN). Put <dir> outside $work: a mount left by a killed run must
# not stop the next run's rm -rf of $work.
small_fs_dirs=()
small_fs() {
  local dir=$1 size=$2
  umount "$dir" 2>/dev/null || true
  rm -rf "$dir" && mkdir -p "$dir"
  mount -t tmpfs -o "size=$size" tmpfs "$dir" 2>/dev/null ||
    skip "cannot mount a $size tmpfs on $dir (needs root and CAP_SYS_ADMIN): no full disk to test with"
  small_fs_dirs+=("$dir")
  trap 'for d in "${small_fs_dirs[@]}"; do umount "$d" 2>/dev/null || true; done' EXIT
}

# expect_line <file> <extended regex>: some line of <file> matches
expect_line() { grep -Eq -- "$2" "$1" || fail "no line matching '$2' in $1: $(head -c 2000 "$1")"; }
# expect_no_line <file> <extended regex>
expect_no_line() { ! grep -Eq -- "$2" "$1" || fail "unexpected line matching '$2' in $1: $(grep -E -- "$2" "$1" | head -3)"; }
