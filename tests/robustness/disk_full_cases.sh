#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A full disk (issue 15, defect 4): a tracing run of disk_calls (1,000,000 calls of leaf, a trace
# of about 26 MB, a profile of 15 KB, exit status 3) with its experiment directory on a small
# tmpfs. Before the fix: 25-90 raw "[OTF2] ... No space left on device" lines, no profile,
# 0-byte traces.otf2 and traces.def left behind. Now every case keeps the program's exit status,
# prints no [OTF2] line, and leaves no trace that readers would reject (a traces.otf2 left must
# pass check_trace; the trace's files are removed, their space given back).
#   run          1 MB, PROF_TOTAL_MEMORY=8M: the disk fills during the run's flushes. One line
#                names the cause and the fix, the later events are dropped (counted), the
#                profile is complete (leaf's visits = 1,000,000).
#   end          1 MB, PROF_TOTAL_MEMORY=64M (no flush): the disk fills at the first write, at
#                the end of the run. Same checks, nothing dropped.
#   end_flushed  PROF_TOTAL_MEMORY=8M on a tmpfs that holds the flushes' whole OTF2 chunks (4 MiB
#                each) but not the last part written at the end. Same checks, nothing dropped.
#   profile      16 KB: not even the profile fits. One line for the profile (with the size it
#                needs and the fix), one for the trace; no .cubex (partial or temporary) left.
#                A run without tracing: the profile's line alone. Both warned at start that the
#                disk is (almost) full (issue 30, item 6: before, found only at the end).
#   fail_status  PROF_FAIL_EXIT_STATUS (issue 30, item 15): 16 KB, a program that exits 0: status 3
#                with PROF_FAIL_EXIT_STATUS=3 and one line saying why, 0 without it; a program that
#                exits 5 keeps its 5; with room on the disk, 0.
#   mpi          3 ranks on 1 MB, rank 1 makes the 1,000,000 calls (the others 1,000): rank 1's
#                line, rank 0's line naming rank 1, no trace of any rank left, the job's profile
#                complete (leaf's visits = 1,002,000).
# Usage: disk_full_cases.sh <prof-wrap> <work> <tools> <case>
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
case_name=${1:?usage: disk_full_cases.sh <prof-wrap> <work> <tools> run|end|end_flushed|profile|fail_status|mpi}
fs=$work-fs  # the mount point: outside $work (see small_fs)
calls=1000000
if [ "$case_name" = mpi ]; then
  command -v mpicc >/dev/null 2>&1 || skip "mpicc is not installed"
  command -v mpirun >/dev/null 2>&1 || skip "mpirun is not installed"
  "$prof_bin/prof-mpicc" -O1 "$here/progs/disk_calls_mpi.c" -o calls || fail "prof-mpicc cannot build disk_calls_mpi.c"
else
  build calls "$here/progs/disk_calls.c"
fi
launch=()         # mpirun and its options (mpi)
args=($calls 3)   # the program's arguments: calls, exit status (mpi: calls, the rank that makes them)
status=3          # the exit status expected

# run_on <size> [VAR=value...]: the program with its experiment directory $fs/exp on a fresh tmpfs
# of <size>; its exit status must be the program's (3), and no raw OTF2 message may show.
run_on() {
  local size=$1
  shift
  small_fs "$fs" "$size"
  set +e
  env PROF_ENABLE_TRACING=true PROF_VERBOSE=1 PROF_EXPERIMENT_DIRECTORY="$fs/exp" "$@" "${launch[@]}" ./calls "${args[@]}" >out 2>err
  local rc=$?
  set -e
  echo "$case_name, $size tmpfs, $*: exit status $rc; $(df -k "$fs" | awk 'NR == 2 { print $3 }') KiB in use;" \
       "left: $(cd "$fs/exp" && ls -A | tr '\n' ' ')"
  sed 's/^/  stderr: /' err
  [ "$rc" -eq "$status" ] || fail "exit status $rc, expected the program's $status"
  expect_no_line err '\[OTF2\]'
  expect_no_line err '^prof: (warning|error): OTF2'
  if [ -e "$fs/exp/traces.otf2" ]; then
    check_trace "$fs/exp/traces.otf2"
  else
    [ ! -e "$fs/exp/traces.def" ] && [ ! -e "$fs/exp/traces" ] ||
      fail "no traces.otf2, but the rest of the trace is left: $(ls -A "$fs/exp" "$fs/exp/traces" 2>&1 | tr '\n' ' ')"
    # The trace's space is given back: what is left is the experiment's small files.
    local used
    used=$(df -k "$fs" | awk 'NR == 2 { print $3 }')
    [ "$used" -le 64 ] || fail "$used KiB still in use on the tmpfs after the trace was removed"
  fi
  ! ls -A "$fs/exp" | grep -q '\.tmp\.' || fail "a temporary file is left: $(ls -A "$fs/exp" | tr '\n' ' ')"
}

# The trace's one line: the cause, what is lost and kept, the fix.
trace_line="^prof: error: cannot write the trace in '[^']*/exp' \(No space left on device: [^)]*/exp/traces/[0-9]+\.evt\); tracing stopped and its files are removed"
trace_fix="; free space there, set PROF_EXPERIMENT_DIRECTORY to a file system with more room, or record fewer events \(PROF_FILTERING_FILE\)$"

# expect_trace_lost <what the line says of the profile>: the trace is lost, the profile kept: one
# error line, a complete profile.
expect_trace_lost() {
  [ "$(grep -c '^prof: error' err)" -eq 1 ] || fail "expected one error line: $(grep '^prof: error' err)"
  expect_line err "$trace_line, the profile is $1$trace_fix"
  check_profile "$fs/exp/profile.cubex" --expect-region leaf
  if have_cubex_check; then
    local visits
    visits=$(/usr/bin/python3 "$tools/cubex_check.py" "$fs/exp/profile.cubex" --dump |
             awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }')
    [ "$visits" -eq "$calls" ] || fail "the profile has $visits visits of leaf, not $calls"
  fi
}

case $case_name in
  run)
    run_on 1m PROF_TOTAL_MEMORY=8M
    expect_trace_lost 'still written at the end'
    expect_line err '^prof: [0-9]+ events recorded after the trace failed were dropped$'
    ;;
  end)
    run_on 1m PROF_TOTAL_MEMORY=64M
    expect_trace_lost kept
    expect_no_line err 'flushed'
    expect_no_line err 'dropped'
    ;;
  end_flushed)
    # The trace's size on a disk with room; the flushes write whole OTF2 chunks of 4 MiB, the end
    # the rest. The tmpfs holds the chunks, the small files (prof.cfg, prof.lock, the profile:
    # 32 KiB in pages) and half of the rest.
    PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=8M PROF_EXPERIMENT_DIRECTORY=sized ./calls $calls 3 >/dev/null 2>&1 || true
    evt=$(stat -c %s sized/traces/0.evt) || fail "no trace on the work disk"
    chunk=$((4 << 20))
    whole=$((evt / chunk * chunk))
    rest=$((evt - whole))
    [ "$whole" -gt 0 ] && [ "$rest" -ge $((256 << 10)) ] ||
      fail "the trace ($evt bytes) ends too close to a 4 MiB chunk for this case: change the number of calls"
    size=$(( (whole + (32 << 10) + rest / 2) / 4096 * 4 ))k
    echo "the trace: $evt bytes, $whole in whole chunks: a tmpfs of $size"
    run_on "$size" PROF_TOTAL_MEMORY=8M
    expect_trace_lost kept
    expect_line err 'flushed [0-9]+ times'
    expect_no_line err 'dropped'
    ;;
  profile)
    run_on 16k
    full_line="^prof: warning: only [0-9]+ KiB free on the file system of '$fs', where the experiment directory goes \(an experiment needs at least 256 KiB\); free space there or set PROF_EXPERIMENT_DIRECTORY to a file system with more room\$"
    expect_line err "$full_line"
    [ "$(grep -c '^prof: error' err)" -eq 2 ] || fail "expected two error lines (profile, trace): $(grep '^prof: error' err)"
    expect_line err '^prof: error: cannot write CUBE4 profile [^ ]*/exp/profile\.cubex: No space left on device \(it needs [0-9]+ KiB\); free space there or set PROF_EXPERIMENT_DIRECTORY to a file system with more room$'
    expect_line err "$trace_line(, the profile is still written at the end)?$trace_fix"
    ! ls -A "$fs/exp" | grep -q 'cubex' || fail "a profile file is left: $(ls -A "$fs/exp" | tr '\n' ' ')"
    # Without tracing: the profile's line alone.
    run_on 16k PROF_ENABLE_TRACING=false
    expect_line err "$full_line"
    [ "$(grep -c '^prof: error' err)" -eq 1 ] || fail "expected one error line: $(grep '^prof: error' err)"
    expect_line err '^prof: error: cannot write CUBE4 profile .*: No space left on device \(it needs [0-9]+ KiB\); free space there'
    ! ls -A "$fs/exp" | grep -q 'cubex' || fail "a profile file is left: $(ls -A "$fs/exp" | tr '\n' ' ')"
    ;;
  fail_status)
    # status_on <size> <program status> [VAR=value...]: the exit status of a tracing run of 1,000
    # calls (in $(...): its tmpfs is unmounted when the subshell ends)
    status_on() {
      local size=$1 program=$2
      shift 2
      small_fs "$fs" "$size"
      set +e
      env PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY="$fs/exp" "$@" ./calls 1000 "$program" >out 2>err
      local rc=$?
      set -e
      sed 's/^/  stderr: /' err >&2
      echo "$rc"
    }
    fail_line='^prof: the program exited with status 0, but its trace or profile could not be written \(see above\): exit status 3 \(PROF_FAIL_EXIT_STATUS\)$'
    rc=$(status_on 16k 0 PROF_FAIL_EXIT_STATUS=3)
    [ "$rc" -eq 3 ] || fail "PROF_FAIL_EXIT_STATUS=3, profile and trace not written: exit status $rc, expected 3"
    expect_line err "$fail_line"
    expect_line out '^disk_calls: 1000 calls of leaf$'  # the program's output is flushed before _exit
    rc=$(status_on 16k 0)
    [ "$rc" -eq 0 ] || fail "without PROF_FAIL_EXIT_STATUS: exit status $rc, expected the program's 0"
    expect_no_line err 'PROF_FAIL_EXIT_STATUS'
    rc=$(status_on 16k 5 PROF_FAIL_EXIT_STATUS=3)
    [ "$rc" -eq 5 ] || fail "PROF_FAIL_EXIT_STATUS=3, a program that exits 5: exit status $rc, expected 5"
    expect_no_line err 'PROF_FAIL_EXIT_STATUS'
    rc=$(status_on 1m 0 PROF_FAIL_EXIT_STATUS=3)
    [ "$rc" -eq 0 ] || fail "PROF_FAIL_EXIT_STATUS=3, everything written: exit status $rc, expected 0"
    expect_no_line err '^prof: error'  # (the tmpfs is gone with status_on's subshell)
    ;;
  mpi)
    launch=(timeout 120 mpirun --oversubscribe -np 3 -x PROF_ENABLE_TRACING -x PROF_VERBOSE -x PROF_EXPERIMENT_DIRECTORY)
    args=($calls 1)
    status=0
    run_on 1m
    [ "$(grep -c '^prof: rank [0-9]*: error' err)" -eq 2 ] || fail "expected two error lines: $(grep 'error' err)"
    expect_line err "^prof: rank 1: error: cannot write the trace in '[^']*/exp' \(No space left on device: [^)]*/exp/traces/1\.evt\); tracing stopped and its files are removed, the profile is still written at the end$trace_fix"
    expect_line err '^prof: rank 0: error: rank 1 could not write its trace \(see its message\); the trace is removed$'
    check_profile "$fs/exp/profile.cubex" --expect-region leaf --expect-locations 3
    if have_cubex_check; then
      visits=$(/usr/bin/python3 "$tools/cubex_check.py" "$fs/exp/profile.cubex" --dump |
               awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }')
      [ "$visits" -eq $((calls + 2000)) ] || fail "the profile has $visits visits of leaf, not $((calls + 2000))"
    fi
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
