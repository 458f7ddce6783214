#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# exec without fork, and programs that start programs (issue 30, items 6 and 15). exec_calls makes
# n calls of leaf(), then execs or starts <program>; every experiment must pass the readers
# (check_trace: otf2-print with nothing on stderr, otf2_check.py; check_profile) and hold exactly
# its run's calls of leaf.
#   family    each of execv, execve, execvp, execvpe, execl, execlp, execle, fexecve of /bin/true:
#             the experiment written before the exec (before the fix: an experiment directory with
#             nothing in it, or none: exit handlers do not run after an exec).
#   measured  an exec of an instrumented program (exec_calls none): two experiments, the default
#             names (the pid is the same: the second takes <name>-2, the first is not renamed)
#             and one PROF_EXPERIMENT_DIRECTORY (exp, then exp-2 with one warning).
#   failed    an exec that fails after the data were written (a file that is not a program):
#             one warning line, the program goes on; an exec of a missing file writes nothing
#             first, and the run stays measured (2n calls).
#   fork      fork + execv in the child: only the parent's experiment, with its 2n calls (the
#             child writes nothing); vfork + execv: the same, the parent still measured after it.
#   spawn     posix_spawn of an instrumented program, both with PROF_EXPERIMENT_DIRECTORY=exp:
#             the child's finished exp is kept and the parent takes exp-2 (before the fix the
#             parent renamed the child's exp aside to exp-old-...), and with
#             PROF_OVERWRITE_EXPERIMENT_DIRECTORY=false the parent still writes (exp-2).
# Usage: exec_cases.sh <prof-wrap> <work> <tools> <case>
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
case_name=${1:?usage: exec_cases.sh <prof-wrap> <work> <tools> family|measured|failed|fork|spawn}
build exec_calls "$here/progs/exec_calls.c"
export PROF_ENABLE_TRACING=true
n=1000

# leaf_count <dir>: leaf's Enters in the trace and visits in the profile, checked to be equal
leaf_count() {
  local dir=$1 enters visits
  check_trace "$dir/traces.otf2" --expect-region leaf >&2
  otf2-print "$dir/traces.otf2" >print.out 2>print.err || fail "$dir: otf2-print failed: $(head -3 print.err)"
  [ ! -s print.err ] || fail "$dir: otf2-print says: $(head -3 print.err)"
  enters=$(awk '$1 == "ENTER" && /"leaf"/' print.out | wc -l)
  check_profile "$dir/profile.cubex" --expect-region leaf >&2
  if have_cubex_check; then
    visits=$(/usr/bin/python3 "$tools/cubex_check.py" "$dir/profile.cubex" --dump |
             awk '$1 == "visits" && $4 ~ /\/leaf$/ { s += $NF } END { print s + 0 }')
    [ "$visits" -eq "$enters" ] || fail "$dir: $visits visits of leaf in the profile, $enters Enters in the trace"
  fi
  echo "$enters"
}

# expect_dirs <pattern> <count>
expect_dirs() {
  local found
  found=$( (ls -d $1 2>/dev/null || true) | wc -l)
  [ "$found" -eq "$2" ] || fail "expected $2 experiment(s) $1, found: $(ls -d prof-* exp* 2>/dev/null | tr '\n' ' ')"
}

# run <expected status> <command...>: stdout to out, stderr to err
run() {
  local want=$1 rc
  shift
  set +e
  "$@" >out 2>err
  rc=$?
  set -e
  sed 's/^/  stderr: /' err
  [ "$rc" -eq "$want" ] || fail "$*: exit status $rc, expected $want: $(head -c 2000 err)"
}

case $case_name in
  family)
    for how in execv execve execvp execvpe execl execlp execle fexecve; do
      rm -rf prof-*
      prog=/bin/true
      case $how in execvp | execvpe | execlp) prog=true ;; esac
      run 0 ./exec_calls $how $n $prog
      expect_no_line err '^prof: (warning|error)'
      expect_dirs 'prof-*' 1
      dir=$(ls -d prof-*)
      [ "$(leaf_count "$dir")" -eq $n ] || fail "$how: the experiment does not hold the $n calls made before the exec"
      otf2-print "$dir/traces.otf2" | grep -q 'PROGRAM_END .*Exit status: UNDEFINED' ||
        fail "$how: no ProgramEnd with an undefined exit status: $(otf2-print "$dir/traces.otf2" | grep PROGRAM_END)"
      echo "$how: $dir holds the $n calls made before the exec"
    done
    ;;
  measured)
    run 0 ./exec_calls execv $n ./exec_calls none 300
    expect_no_line err '^prof: (warning|error)'
    expect_line out '^exec_calls none: 300 calls of leaf$'
    expect_dirs 'prof-*' 2
    first=$(ls -d prof-* | head -1) second=$(ls -d prof-* | tail -1)
    # Both names hold the same pid: in the same second, the second is <first>-2.
    [ "$(leaf_count "$first")" -eq $n ] || fail "$first does not hold the first program's $n calls"
    [ "$(leaf_count "$second")" -eq 300 ] || fail "$second does not hold the second program's 300 calls"
    expect_dirs 'prof-*-old-*' 0
    rm -rf prof-*
    run 0 env PROF_EXPERIMENT_DIRECTORY=exp ./exec_calls execl $n ./exec_calls none 300
    expect_line err "^prof: warning: PROF_EXPERIMENT_DIRECTORY='exp' holds the finished experiment of this process before it called exec; it is kept, and this run writes to 'exp-2' \(give each program its own PROF_EXPERIMENT_DIRECTORY to choose the names\)\$"
    [ "$(grep -c '^prof: ' err)" -eq 1 ] || fail "expected one line of prof's: $(cat err)"
    expect_dirs 'exp*' 2
    [ "$(leaf_count exp)" -eq $n ] || fail "exp does not hold the first program's $n calls"
    [ "$(leaf_count exp-2)" -eq 300 ] || fail "exp-2 does not hold the second program's 300 calls"
    ;;
  failed)
    printf '\001\002 not a program' >not_a_program
    chmod +x not_a_program
    run 0 ./exec_calls execv $n ./not_a_program
    expect_line out '^exec failed: Exec format error$'
    expect_line err '^prof: warning: execv\("\./not_a_program"\) failed \(Exec format error\) after prof had written the data measured so far \(exit handlers do not run after an exec\); the program goes on unmeasured$'
    [ "$(grep -c '^prof: ' err)" -eq 1 ] || fail "expected one line of prof's: $(cat err)"
    expect_dirs 'prof-*' 1
    [ "$(leaf_count prof-*)" -eq $n ] || fail "the experiment does not hold the $n calls made before the exec"
    rm -rf prof-*
    run 0 ./exec_calls execvp $n no-such-program-here
    expect_line out '^exec failed: No such file or directory$'
    expect_no_line err '^prof: (warning|error)'
    expect_dirs 'prof-*' 1
    [ "$(leaf_count prof-*)" -eq $((2 * n)) ] || fail "the run was not measured to its end after an exec that could not start"
    ;;
  fork)
    for how in fork_exec vfork_exec; do
      rm -rf prof-*
      run 0 ./exec_calls $how $n /bin/true
      expect_no_line err '^prof: (warning|error)'
      expect_dirs 'prof-*' 1
      [ "$(leaf_count prof-*)" -eq $((2 * n)) ] || fail "$how: the parent's experiment does not hold its $((2 * n)) calls"
      echo "$how: only the parent's experiment, with its $((2 * n)) calls"
    done
    ;;
  spawn)
    run 0 env PROF_EXPERIMENT_DIRECTORY=exp ./exec_calls spawn $n ./exec_calls none 300
    expect_line err "^prof: warning: PROF_EXPERIMENT_DIRECTORY='exp' holds the finished experiment of pid [0-9]+ on [^ ]+, a run that began after this one; it is kept, and this run writes to 'exp-2' \(give each program its own PROF_EXPERIMENT_DIRECTORY to choose the names\)\$"
    expect_dirs 'exp*' 2
    [ "$(leaf_count exp)" -eq 300 ] || fail "exp does not hold the child's 300 calls"
    [ "$(leaf_count exp-2)" -eq $n ] || fail "exp-2 does not hold the parent's $n calls"
    rm -rf exp*
    run 0 env PROF_EXPERIMENT_DIRECTORY=exp PROF_OVERWRITE_EXPERIMENT_DIRECTORY=false ./exec_calls spawn $n ./exec_calls none 300
    expect_no_line err '^prof: error'
    expect_dirs 'exp*' 2
    [ "$(leaf_count exp)" -eq 300 ] && [ "$(leaf_count exp-2)" -eq $n ] || fail "the experiments of child and parent are not exp and exp-2"
    # Default names: one each (distinct pids).
    rm -rf exp*
    run 0 ./exec_calls spawn $n ./exec_calls none 300
    expect_no_line err '^prof: (warning|error)'
    expect_dirs 'prof-*' 2
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
