#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Two runs with one PROF_EXPERIMENT_DIRECTORY at the same time, as in a job array with a fixed
# name (issue 15, defect 2). Before the fix the second run renamed the first's live directory
# aside while the first kept writing by path: a trace mixed from both (otf2_check: 8,000,014
# events read, 12,000,020 defined), the first run's data gone, both exit 0. Now the run that
# writes first claims `exp` and holds it to its end; the other says in one warning line that it
# writes to `exp-2`; both traces pass the checks with exactly n Enters of leaf(), both profiles
# have n visits, and each prof.lock names its own run. Then: a run killed (-9) while it writes
# holds nothing any more, so the next run moves its directory aside as any finished one.
# Usage: dirs_concurrent.sh <prof-wrap> <work> <tools>
source "${ROBUSTNESS_SRC:?}/common.sh"
progs=$here/progs
n=300000  # 0.6 M events: flushes at 8M, while the other run is alive
build calls "$progs/dir_calls.c"
export PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=8M PROF_EXPERIMENT_DIRECTORY=exp

# wait_for <file>: up to 30 s
wait_for() { for _ in $(seq 3000); do [ -e "$1" ] && return 0; sleep 0.01; done; fail "no $1 after 30 s"; }

# check_run <dir> <pid>: a complete experiment of the run <pid> with n calls of leaf()
check_run() {
  local dir=$1 pid=$2
  [ -f "$dir/traces.otf2" ] || fail "$dir: no trace ($(ls "$dir" | tr '\n' ' '))"
  expect_line "$dir/prof.lock" "^pid $pid host "
  check_trace "$dir/traces.otf2" --expect-locations 1 --expect-region leaf
  otf2-print "$dir/traces.otf2" >"$dir.print" 2>"$dir.print.err" || fail "$dir: otf2-print failed: $(head -3 "$dir.print.err")"
  local enters
  enters=$(awk '$1 == "ENTER" && /"leaf"/' "$dir.print" | wc -l)
  [ "$enters" -eq "$n" ] || fail "$dir: $enters Enters of leaf in the trace, the run made $n calls"
  check_profile "$dir/profile.cubex" --expect-region leaf
  if have_cubex_check; then
    local visits
    visits=$(/usr/bin/python3 "$tools/cubex_check.py" "$dir/profile.cubex" --dump | awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }')
    [ "$visits" -eq "$n" ] || fail "$dir: $visits visits of leaf in the profile, the run made $n calls"
  fi
  rm -f "$dir.print" "$dir.print.err"
}

# 1. a and b together: b starts when a has begun its work (a.ready), and a records until b has
# begun too, so both record and flush at the same time. The first to write (its first flush)
# claims exp, the other takes exp-2 and says so.
./calls $n a.ready b.ready >out.a 2>err.a &
pid_a=$!
wait_for a.ready
set +e
./calls $n b.ready a.ready >out.b 2>err.b &
pid_b=$!
wait $pid_b; rc_b=$?
wait $pid_a; rc_a=$?
set -e
echo "a (pid $pid_a): exit $rc_a; b (pid $pid_b): exit $rc_b; $(ls -d exp* | tr '\n' ' ')"
[ "$rc_a" -eq 0 ] && [ "$rc_b" -eq 0 ] || fail "exit status $rc_a and $rc_b; stderr: $(cat err.a err.b)"
expect_line out.a "^done $n\$"
expect_line out.b "^done $n\$"
expect_no_line err.a "^prof: error"
expect_no_line err.b "^prof: error"
[ "$(ls -d exp* | tr '\n' ' ')" = "exp exp-2 " ] || fail "expected exp and exp-2, found: $(ls -d exp*)"
first=a second=b pid_first=$pid_a pid_second=$pid_b
if grep -q "^pid $pid_b " exp/prof.lock; then first=b second=a pid_first=$pid_b pid_second=$pid_a; fi
expect_no_line err.$first "warning: PROF_EXPERIMENT_DIRECTORY"
expect_line err.$second "^prof: warning: PROF_EXPERIMENT_DIRECTORY='exp' is in use by another run \(pid $pid_first on [^)]*\); this run writes to 'exp-2'\$"
check_run exp $pid_first
check_run exp-2 $pid_second
sums=$(cd exp-2 && find . -type f | sort | xargs md5sum)

# 2. A run killed by SIGKILL while it writes (its lock names it): the lock went with it, so its
# directory is no longer live, and the next run moves it aside, without a warning. exp-2 stays as
# it is.
./calls 2000000000 >out.c 2>err.c &
pid_c=$!
for _ in $(seq 3000); do grep -qs "^pid $pid_c " exp/prof.lock && break; sleep 0.01; done
expect_line exp/prof.lock "^pid $pid_c host "
kill -9 $pid_c
wait $pid_c 2>/dev/null || true  # bash reports "Killed"
[ "$(ls -d exp-old-* 2>/dev/null | wc -l)" -eq 1 ] || fail "the finished exp was not moved aside when c claimed it: $(ls -d exp*)"
./calls $n >out.d 2>err.d &
pid_d=$!
wait $pid_d || fail "run d failed: $(cat err.d)"
expect_no_line err.d "in use by another run"
[ "$(ls -d exp-old-* | wc -l)" -eq 2 ] || fail "c's directory was not moved aside: $(ls -d exp*)"
check_run exp $pid_d
[ "$(cd exp-2 && find . -type f | sort | xargs md5sum)" = "$sums" ] || fail "exp-2 was changed"
echo "ok: two concurrent runs with one directory name kept both experiments (exp, exp-2), each with its $n calls; a killed run's directory was moved aside"
