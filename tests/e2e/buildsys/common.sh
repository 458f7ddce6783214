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

# check_enters <executable> <experiment dir> [<region> <count>]...: unless PROF_E2E_RUN=0, run it
# with tracing on; the trace must pass otf2_check.py (when PROF_SHARED_TOOLS names its directory)
# and hold exactly <count> Enter events of each <region> (the full region name, as otf2-print shows it).
check_enters() {
  exe=$1
  exp=$2
  shift 2
  check_run "$exe" "$exp"
  [ "${PROF_E2E_RUN:-1}" = "0" ] && return 0
  if [ -n "${PROF_SHARED_TOOLS:-}" ]; then
    /usr/bin/python3 "$PROF_SHARED_TOOLS/otf2_check.py" "$exp/traces.otf2" >"$exp.check.log" 2>&1 ||
      { cat "$exp.check.log" >&2; fail "otf2_check.py rejects the trace of $exe ($exp/traces.otf2)"; }
  fi
  command -v otf2-print >/dev/null 2>&1 || fail "otf2-print is not installed (apt-get install otf2-tools)"
  otf2-print "$exp/traces.otf2" >"$exp.print" 2>&1 || fail "otf2-print $exp/traces.otf2 failed"
  while [ $# -ge 2 ]; do
    name=$(printf '%s' "$1" | sed 's/[][\.*^$]/\\&/g')  # a literal name: "f(int const*)"
    n=$(grep -c "^ENTER .*Region: \"$name\"" "$exp.print" || true)
    [ "$n" = "$2" ] || fail "$exe: the trace has $n Enter events of '$1', the program made $2 calls"
    shift 2
  done
}

# same_output <what> <command...>: the command's stdout, stderr and exit status through prof-wrap
# are byte-for-byte those of the plain command.
same_output() {
  what=$1
  shift
  set +e
  "$@" >"$tmp/plain.out" 2>"$tmp/plain.err"
  plain_rc=$?
  prof-wrap "$@" >"$tmp/wrap.out" 2>"$tmp/wrap.err"
  wrap_rc=$?
  set -e
  [ "$plain_rc" = "$wrap_rc" ] || fail "$what: exit status $wrap_rc through prof-wrap, $plain_rc without"
  cmp -s "$tmp/plain.out" "$tmp/wrap.out" ||
    { diff "$tmp/plain.out" "$tmp/wrap.out" >&2 || true; fail "$what: stdout through prof-wrap differs from the plain compiler's"; }
  cmp -s "$tmp/plain.err" "$tmp/wrap.err" ||
    { diff "$tmp/plain.err" "$tmp/wrap.err" >&2 || true; fail "$what: stderr through prof-wrap differs from the plain compiler's"; }
}
