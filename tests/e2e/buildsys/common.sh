# SPDX-License-Identifier: BSD-3-Clause
# Shared helpers for the build-system e2e scripts (sourced, not run).
#   usage of a script: <script> <bin dir with prof-wrap> <work dir> <source dir>

set -eu

test_name=$(basename -- "$0" .sh)
bin_dir=${1:?"usage: $0 <bin dir> <work dir> <source dir>"}
work_root=${2:?"usage: $0 <bin dir> <work dir> <source dir>"}
src_dir=${3:?"usage: $0 <bin dir> <work dir> <source dir>"}

fail() {
  echo "$test_name: FAIL: $*" >&2
  echo "$test_name: files kept in $tmp" >&2
  exit 1
}

skip() {
  echo "$test_name: SKIP: $*" >&2
  exit 77
}

[ -x "$bin_dir/prof-wrap" ] || fail "$bin_dir/prof-wrap does not exist; build the prof-wrap target first"
[ -e "$bin_dir/../lib/libprof.so" ] || fail "$bin_dir/../lib/libprof.so does not exist; build the prof target first"

mkdir -p "$work_root"
tmp=$(mktemp -d "$work_root/$test_name.XXXXXX")
PATH="$bin_dir:$PATH"
export PATH
unset PROF_WRAPPER PROF_WRAPPER_INSTRUMENTER_FLAGS PROF_WRAPPER_COMPILER_FLAGS

# check_instrumented <executable>: linked against libprof, and carries the link guard reference.
check_instrumented() {
  exe=$1
  [ -x "$exe" ] || fail "$exe was not built"
  readelf -d "$exe" | grep -q 'NEEDED.*\[libprof\.so' ||
    fail "$exe does not need libprof.so (readelf -d shows no NEEDED entry); prof-wrap did not link it"
  nm -D "$exe" | grep -q 'prof_wrap_link_guard__link_this_object_with_prof_wrap' ||
    fail "$exe has no reference to the prof-wrap link guard; its objects were not compiled by prof-wrap"
  nm -D "$exe" | grep -q 'prof_linked_adapters' ||
    fail "$exe does not export prof_linked_adapters; the adapter list was not linked"
}

# check_run <executable> <experiment dir>: unless PROF_E2E_RUN=0, run it with tracing on and look for the trace.
check_run() {
  exe=$1
  exp=$2
  if [ "${PROF_E2E_RUN:-1}" = "0" ]; then
    echo "$test_name: PROF_E2E_RUN=0: not running $exe"
    return 0
  fi
  PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY="$exp" "$exe" ||
    fail "$exe exited with status $? under the measurement (PROF_ENABLE_TRACING=true); the build is fine, the runtime is not (set PROF_E2E_RUN=0 to check only the build)"
  [ -f "$exp/traces.otf2" ] ||
    fail "$exe ran but wrote no $exp/traces.otf2; the build is fine, the runtime does not trace yet (set PROF_E2E_RUN=0 to check only the build)"
}

# done_ok: remove the work directory and report success.
done_ok() {
  rm -rf "$tmp"
  echo "$test_name: PASS"
}
