#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Path-like values are checked before the program's work starts, and prof renames only its own
# experiment directories (issue 15, defect 3). Each case is one test (the argument):
#   base_dotdot    PROF_PROFILING_BASE_NAME=../../escaped: before, the profile went outside the
#                  experiment (as root, ../../../../etc/passwd wrote /etc/passwd.cubex)
#   base_absolute  PROF_PROFILING_BASE_NAME=<work>/abs/escaped
#   base_empty     PROF_PROFILING_BASE_NAME='': before, a hidden .cubex
#   base_long      a 100 KB base name: before, the run's work was done and the profile lost at the end
#   dir_long       a 100 KB PROF_EXPERIMENT_DIRECTORY: the same
#   dir_file       the name of a user's regular file: before, the file was renamed aside
#   dir_parent_file  <file>/exp: before, "Permission denied" (as root); now "Not a directory"
#   dir_foreign    a directory with other files in it: before, renamed aside; now left alone
#   dir_cfg_only   a directory with a file named prof.cfg among the user's files (a program's own
#                  working directory): before, taken for an old experiment and renamed aside; now
#                  left alone: only prof.lock proves an experiment (issue 30, item 6)
#   dir_proc       PROF_EXPERIMENT_DIRECTORY=/proc/x: before, the run went on and lost its data with
#                  exit status 0; now stopped at start (issue 30, item 6)
#   dir_empty      an empty directory made beforehand is used as it is (before: renamed aside and
#                  made anew); the next run moves the finished experiment aside as before, and with
#                  PROF_OVERWRITE_EXPERIMENT_DIRECTORY=false stops at start
#   filter_zero    PROF_FILTERING_FILE=/dev/zero: before, read forever (issue 30, item 9)
#   filter_fifo    a FIFO nobody writes: before, waited forever
#   filter_large   a 20 MiB file: over the 16 MiB limit (before: any size, 7x its size in memory)
#   filter_binary  a file with a NUL byte: before, all of it was read and parsed
# The errors: exit status 1 within 60 s, one line on stderr, nothing on stdout (the program did not run), no
# profile or experiment directory anywhere, and the user's file or directory untouched.
# Usage: dirs_paths.sh <prof-wrap> <work> <tools> <case>
source "${ROBUSTNESS_SRC:?}/common.sh"
case_name=${1:?case}
progs=$here/progs
build calls "$progs/dir_calls.c"
mkdir run
cd run
long=$(head -c 102400 /dev/zero | tr '\0' a)

# stopped_at_start <regex of the one error line> <VAR=value...>: runs ./calls with the variables
stopped_at_start() {
  local line=$1
  shift
  set +e
  timeout 60 env "$@" ../calls 1000 >out 2>err </dev/null
  local rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "exit status $rc, expected 1; stderr: $(head -c 1000 err)"
  [ ! -s out ] || fail "the program ran: $(cat out)"
  [ "$(wc -l <err)" -eq 1 ] || fail "expected one line on stderr, got $(wc -l <err): $(head -c 2000 err)"
  expect_line err "$line"
  [ "$(wc -c <err)" -lt 1000 ] || fail "the line is $(wc -c <err) bytes long"
  local left
  left=$(find "$work" -name '*.cubex' -o -name 'prof-*' -o -name 'exp*' | head -5)
  [ -z "$left" ] || fail "files left behind: $left"
}

case $case_name in
  base_dotdot)
    stopped_at_start "^prof: error: PROF_PROFILING_BASE_NAME='../../escaped' contains '/'; give a file name without a directory" \
      PROF_EXPERIMENT_DIRECTORY=exp PROF_PROFILING_BASE_NAME=../../escaped
    [ ! -e "$work/escaped.cubex" ] || fail "the profile escaped: $work/escaped.cubex" ;;
  base_absolute)
    mkdir -p "$work/abs"
    stopped_at_start "^prof: error: PROF_PROFILING_BASE_NAME='$work/abs/escaped' contains '/'; " \
      PROF_PROFILING_BASE_NAME="$work/abs/escaped" ;;
  base_empty)
    stopped_at_start "^prof: error: PROF_PROFILING_BASE_NAME='' is empty; give a file name such as profile\$" \
      PROF_EXPERIMENT_DIRECTORY=exp PROF_PROFILING_BASE_NAME= ;;
  base_long)
    stopped_at_start "^prof: error: PROF_PROFILING_BASE_NAME='a{40}\.\.\.' \(102400 characters\) is too long; give a file name of at most 200 characters" \
      PROF_EXPERIMENT_DIRECTORY=exp PROF_PROFILING_BASE_NAME="$long" ;;
  dir_long)
    stopped_at_start "^prof: error: PROF_EXPERIMENT_DIRECTORY='a{40}\.\.\.' \(102400 characters\) is too long; give a name of at most 3800 characters\$" \
      PROF_EXPERIMENT_DIRECTORY="$long" ;;
  dir_file)
    echo "the user's data" >results
    before=$(stat -c %i:%s:%Y results)
    stopped_at_start "^prof: error: PROF_EXPERIMENT_DIRECTORY='results' exists and is not a directory; prof leaves it alone" \
      PROF_EXPERIMENT_DIRECTORY=results
    [ "$(stat -c %i:%s:%Y results)" = "$before" ] && [ "$(cat results)" = "the user's data" ] || fail "results was changed"
    [ -z "$(ls -d results?* 2>/dev/null)" ] || fail "results was renamed aside: $(ls)" ;;
  dir_parent_file)
    echo "the user's data" >results
    stopped_at_start "^prof: error: cannot create the experiment directory in 'results' \(Not a directory\); set PROF_EXPERIMENT_DIRECTORY to a writable place\$" \
      PROF_EXPERIMENT_DIRECTORY=results/exp
    [ "$(ls | tr '\n' ' ')" = "err out results " ] || fail "left: $(ls)" ;;
  dir_foreign)
    mkdir data && echo keep >data/notes.txt
    stopped_at_start "^prof: error: PROF_EXPERIMENT_DIRECTORY='data' is a directory that is not a prof experiment \(no prof.lock in it\); prof leaves it alone" \
      PROF_EXPERIMENT_DIRECTORY=data
    [ "$(ls | tr '\n' ' ')" = "data err out " ] && [ "$(ls data)" = notes.txt ] || fail "data was changed: $(ls; ls data)" ;;
  dir_cfg_only)
    mkdir data && echo "my program's settings" >data/prof.cfg && echo keep >data/notes.txt
    stopped_at_start "^prof: error: PROF_EXPERIMENT_DIRECTORY='data' is a directory that is not a prof experiment \(no prof.lock in it\); prof leaves it alone" \
      PROF_EXPERIMENT_DIRECTORY=data
    [ "$(ls | tr '\n' ' ')" = "data err out " ] && [ "$(ls data | tr '\n' ' ')" = "notes.txt prof.cfg " ] ||
      fail "data was changed: $(ls; ls data)" ;;
  dir_proc)
    stopped_at_start "^prof: error: cannot create the experiment directory in '/proc' \(it is proc, the kernel's own file system\); set PROF_EXPERIMENT_DIRECTORY to a writable place\$" \
      PROF_EXPERIMENT_DIRECTORY=/proc/x ;;
  dir_empty)
    mkdir out
    PROF_EXPERIMENT_DIRECTORY=out ../calls 1000 >stdout.txt 2>err || fail "the run in an empty directory failed: $(cat err)"
    [ ! -s err ] || fail "unexpected messages: $(cat err)"
    [ "$(ls -d out*)" = out ] || fail "expected out to be used as it is, found: $(ls -d out*)"
    check_profile out/profile.cubex --expect-region leaf
    # The finished experiment is moved aside by the next run, as before.
    PROF_EXPERIMENT_DIRECTORY=out PROF_VERBOSE=1 ../calls 1000 >stdout.txt 2>err || fail "the second run failed: $(cat err)"
    expect_line err "^prof: moved the existing experiment directory 'out' to 'out-old-[0-9]{8}_[0-9]{6}_[0-9]+'\$"
    check_profile out/profile.cubex --expect-region leaf
    check_profile out-old-*/profile.cubex --expect-region leaf
    # And with PROF_OVERWRITE_EXPERIMENT_DIRECTORY=false it is an error at start.
    set +e
    PROF_EXPERIMENT_DIRECTORY=out PROF_OVERWRITE_EXPERIMENT_DIRECTORY=false ../calls 1000 >stdout.txt 2>err
    rc=$?
    set -e
    [ "$rc" -eq 1 ] && [ ! -s stdout.txt ] || fail "overwrite=false: exit status $rc, stdout $(cat stdout.txt)"
    expect_line err "^prof: error: PROF_EXPERIMENT_DIRECTORY='out' exists and PROF_OVERWRITE_EXPERIMENT_DIRECTORY=false; remove it or choose another name\$" ;;
  filter_zero)
    stopped_at_start "^prof: error: PROF_FILTERING_FILE: /dev/zero: is a character device, not a regular file; give a text file of filter rules\$" \
      PROF_FILTERING_FILE=/dev/zero ;;
  filter_fifo)
    mkfifo rules.filter
    stopped_at_start "^prof: error: PROF_FILTERING_FILE: rules.filter: is a FIFO, not a regular file; give a text file of filter rules\$" \
      PROF_FILTERING_FILE=rules.filter ;;
  filter_large)
    head -c $((20 << 20)) /dev/zero | tr '\0' '#' >rules.filter
    stopped_at_start "^prof: error: PROF_FILTERING_FILE: rules.filter: is larger than 16 MiB, the most a filter file may have; " \
      PROF_FILTERING_FILE=rules.filter ;;
  filter_binary)
    printf 'PROF_REGION_NAMES_BEGIN\n  EXCLUDE leaf\n' >rules.filter
    head -c 300000 /dev/zero >>rules.filter
    stopped_at_start "^prof: error: PROF_FILTERING_FILE: rules.filter: holds a NUL byte at offset 39: a binary file, not a filter file; give a text file of filter rules\$" \
      PROF_FILTERING_FILE=rules.filter ;;
  *) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
