#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# PROF_FLUSH_SIGNAL with MPI (issue 15, "time-limit aware"): 3 ranks, tracing on; every rank calls
# leaf() N1 times and signals itself (USR1), then N2 more times and signals again, then the job
# ends normally. Each checkpoint writes the rank's profile (profile.rank<r>.cubex) and merges the
# rank's trace into checkpoint-<n>/traces.otf2 without collectives (partial_trace), so the second
# checkpoint's trace is one archive of all ranks that otf2-print, the otf2 module and
# otf2_check.py (--mpi: the messages of the run so far) accept, each rank with exactly N1 + N2
# Enters of leaf(); checkpoint-1 is gone once checkpoint 2 holds every rank; the job's own
# profile.cubex and traces.otf2 (otf2-print: the same Enters) are written at the end and the
# ranks' checkpoint profiles removed. At 8M the ranks flush: before, their spill files collided
# (prof-spill-<n> in the shared directory, each rank appending to the same file) and the job's
# trace held the events of both ranks twice over.
# Before: MPI checkpoints wrote the profile only (a rank's own trace named ranks it lacked).
# And a checkpoint taken while a rank waits in MPI_Barrier (checkpoint_barrier.c, 2 ranks): its
# trace closes the barrier with an MpiCollectiveEnd before the Leave of MPI_Barrier (issue 30,
# item 15; before: a Begin without End).
source "$ROBUSTNESS_SRC/common.sh"
command -v mpicc >/dev/null 2>&1 || skip "mpicc is not installed"
command -v mpirun >/dev/null 2>&1 || skip "mpirun is not installed"
"$prof_bin/prof-mpicc" -O1 "$ROBUSTNESS_SRC/progs/checkpoint_mpi.c" -o app || fail "prof-mpicc cannot build checkpoint_mpi.c"
visits() {  # visits of leaf in a profile (cubex_check.py), or "" without it
  have_cubex_check || return 0
  /usr/bin/python3 "$tools/cubex_check.py" "$1" --dump | awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }'
}
for case in "16M 20000 30000" "8M 120000 180000"; do  # 8M: the ranks flush, so checkpoints read their spill files
  read -r memory n1 n2 <<<"$case"
  total=$((n1 + n2))
  exp=exp_$memory
  timeout 120 mpirun --oversubscribe -np 3 -x PROF_FLUSH_SIGNAL=USR1 -x PROF_ENABLE_TRACING=true -x PROF_TOTAL_MEMORY=$memory \
    -x PROF_EXPERIMENT_DIRECTORY=$exp ./app $exp $n1 $n2 >out_$exp 2>err_$exp ||
    fail "$memory: the job failed: $(tail -5 err_$exp)"
  for r in 0 1 2; do
    grep -q "^rank $r: calls $n1 then $total\$" out_$exp || fail "$memory: rank $r says: $(cat out_$exp) $(tail -5 err_$exp)"
    [ "$(grep -c "^prof: rank $r: checkpoint [12] (signal 10, USR1): profile written: $exp/profile.rank$r.cubex, trace written: $exp/checkpoint-[12]/traces.otf2 (with ranks [-0-9,]* of 3 so far) in [0-9]* ms; the measurement goes on\$" err_$exp)" -eq 2 ] ||
      fail "$memory: expected two checkpoint lines of rank $r: $(cat err_$exp)"
    check_profile $exp/profile.rank$r.cubex.1 --expect-region leaf
    v=$(visits $exp/profile.rank$r.cubex.1)
    [ -z "$v" ] || [ "$v" -eq "$n1" ] || fail "$memory: rank $r's first checkpoint has $v visits of leaf, expected $n1"
    [ ! -e $exp/profile.rank$r.cubex ] || fail "$memory: rank $r's checkpoint profile is still there after the job's profile"
  done
  if [ $memory = 8M ]; then
    expect_line err_$exp "^prof: rank 0: warning: trace buffers were flushed"
    expect_no_line err_$exp 'stopped by signal|error'
  else
    expect_no_line err_$exp 'stopped by signal|warning|error'
  fi
  [ ! -e $exp/checkpoint-1 ] || fail "$memory: checkpoint-1 is still there after checkpoint 2 holds every rank"
  check_trace $exp/checkpoint-2/traces.otf2 --mpi --expect-locations 3
  otf2-print $exp/checkpoint-2/traces.otf2 >print 2>print.err || fail "$memory: otf2-print failed: $(head -3 print.err)"
  [ ! -s print.err ] || fail "$memory: otf2-print complains about checkpoint-2: $(head -3 print.err)"
  for r in 0 1 2; do
    n=$(awk -v loc=$r '$1 == "ENTER" && $2 == loc && /Region: "leaf"/ { n++ } END { print n + 0 }' print)
    [ "$n" -eq "$total" ] || fail "$memory: rank $r has $n Enters of leaf in checkpoint-2's trace, expected $total"
  done
  # The job's own outputs, written at the end as usual.
  check_profile $exp/profile.cubex --expect-region leaf
  otf2-print $exp/traces.otf2 >print 2>print.err || fail "$memory: otf2-print failed: $(head -3 print.err)"
  [ ! -s print.err ] || fail "$memory: otf2-print complains about the job's trace: $(head -3 print.err)"
  for r in 0 1 2; do
    n=$(awk -v loc=$r '$1 == "ENTER" && $2 == loc && /Region: "leaf"/ { n++ } END { print n + 0 }' print)
    [ "$n" -eq "$total" ] || fail "$memory: rank $r has $n Enters of leaf in the job's trace, expected $total"
  done
  echo "$memory: two checkpoints per rank, checkpoint-2/traces.otf2 holds 3 ranks x $total Enters of leaf; $(grep '^prof: rank 0: checkpoint 2' err_$exp)"
done
# A checkpoint during a collective.
"$prof_bin/prof-mpicc" -O1 -I"$ROBUSTNESS_SRC/progs" "$ROBUSTNESS_SRC/progs/checkpoint_barrier.c" -o barrier ||
  fail "prof-mpicc cannot build checkpoint_barrier.c"
timeout 120 mpirun --oversubscribe -np 2 -x PROF_FLUSH_SIGNAL=USR1 -x PROF_ENABLE_TRACING=true -x PROF_EXPERIMENT_DIRECTORY=exp_barrier \
  ./barrier exp_barrier >out_barrier 2>err_barrier || fail "barrier: the job failed: $(tail -5 err_barrier)"
expect_line err_barrier "^prof: rank 1: checkpoint 1 \(signal 10, USR1\): .*trace written: exp_barrier/checkpoint-1/traces.otf2"
check_trace exp_barrier/checkpoint-1/traces.otf2
otf2-print exp_barrier/checkpoint-1/traces.otf2 >print 2>print.err || fail "barrier: otf2-print failed: $(head -3 print.err)"
[ ! -s print.err ] || fail "barrier: otf2-print complains about checkpoint-1: $(head -3 print.err)"
order=$(awk '$2 == 1 && ($1 ~ /^MPI_COLLECTIVE/ || /Region: "MPI_Barrier"/) { printf "%s%s", sep, $1; sep = " " }' print)
[ "$order" = "ENTER MPI_COLLECTIVE_BEGIN MPI_COLLECTIVE_END LEAVE" ] ||
  fail "barrier: rank 1's MPI_Barrier in checkpoint-1's trace is '$order', expected its End before its Leave"
expect_line print '^MPI_COLLECTIVE_END +1 +[0-9]+ +Operation: BARRIER, Communicator: "MPI_COMM_WORLD" <[0-9]+>, Root: NONE, Sent: 0, Received: 0'
echo "barrier: checkpoint-1 closes rank 1's barrier: $order"
echo "ok: MPI checkpoints merge every rank's trace; the job's final outputs follow"
