#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Directories another user can write into (issue 30, item 9): OTF2 and the CUBE4 writer open their
# files by path, so whoever can create names in the experiment directory can plant symbolic links
# that prof follows (as root it appended to one root-only file and overwrote another with the
# profile). prof now uses only directories of its own user that nobody else may write into, and
# never follows a symbolic link as the directory itself. A second user, prof_test_other, is made
# for the test (useradd; skipped, 77, when not root or without useradd/runuser). Each case is one
# test (the argument):
#   other_empty    an empty directory of the other user's: before, adopted and written into; now
#                  refused at start with one line, nothing written into it
#   other_plant    the same directory, and the other user plants a link to a root-only file at the
#                  name of the profile's final write while the run goes on (after a checkpoint):
#                  before, the file was overwritten with the profile; now refused at start
#   world_writable an empty directory of root's, mode 1777 (sticky: others cannot remove names but
#                  can still create them): before, adopted; now refused with the fix (chmod go-w)
#   symlink        PROF_EXPERIMENT_DIRECTORY is a symbolic link the other user made, to an empty
#                  directory of root's: before, followed; now refused
#   new_private    a new directory made by prof under umask 000 is still writable by its owner
#                  only (before: mode 0777), so nobody can plant links in it
#   own_plant      in a directory prof made, a link planted (by root itself) at the name of the
#                  profile's final write during the run: before, followed (a root-only file
#                  overwritten with the profile); now the profile's file is created with
#                  O_EXCL|O_NOFOLLOW and the write fails loudly (one error line), the file intact
#   own_plant_files the same for prof's other files written at the end: links planted at
#                  prof.throttle.filter and prof.run (before: the file was overwritten with the
#                  throttled functions and appended to with the run's summary); now each is created
#                  afresh relative to the directory's descriptor with O_EXCL|O_NOFOLLOW: the list
#                  replaces the link (a rename), prof.run is refused with one error line
# The errors: exit status 1, one line on stderr, nothing on stdout (the program did not run).
# Usage: dirs_other_user.sh <prof-wrap> <work> <tools> <case>
source "${ROBUSTNESS_SRC:?}/common.sh"
case_name=${1:?case}
other=prof_test_other
if [ "${case_name#own_plant}" = "$case_name" ]; then
  [ "$(id -u)" -eq 0 ] || skip "not root: no second user can be made to own a directory"
  command -v useradd >/dev/null && command -v runuser >/dev/null || skip "useradd or runuser is missing"
  id -u "$other" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$other" 2>/dev/null ||
    id -u "$other" >/dev/null 2>&1 || skip "useradd $other failed"
fi
as_other() { runuser -u "$other" -- "$@"; }
chmod 755 "$work"
progs=$here/progs

# stopped_at_start <regex of the one error line> <program and arguments...>
stopped_at_start() {
  local line=$1
  shift
  set +e
  timeout 120 "$@" >out 2>err </dev/null
  local rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "exit status $rc, expected 1; stdout: $(head -c 300 out); stderr: $(head -c 1000 err)"
  [ ! -s out ] || fail "the program ran: $(cat out)"
  [ "$(wc -l <err)" -eq 1 ] || fail "expected one line on stderr, got $(wc -l <err): $(head -c 2000 err)"
  expect_line err "$line"
}

case $case_name in
  other_empty)
    build calls "$progs/dir_calls.c"
    mkdir theirs && chown "$other" theirs
    PROF_EXPERIMENT_DIRECTORY=theirs stopped_at_start \
      "^prof: error: PROF_EXPERIMENT_DIRECTORY='theirs' is owned by uid $(id -u "$other"), not by this user \(uid 0\); its owner could plant symbolic links in it that prof would follow: use a directory of your own\$" \
      ./calls 1000
    [ -z "$(ls -A theirs)" ] || fail "prof wrote into the other user's directory: $(ls -A theirs)" ;;
  other_plant)
    build plant "$progs/plant_calls.c" -I"$progs"
    mkdir theirs && chown "$other" theirs
    echo "root's secret" >secret && chmod 600 secret
    PROF_EXPERIMENT_DIRECTORY=theirs PROF_FLUSH_SIGNAL=USR1 stopped_at_start \
      "^prof: error: PROF_EXPERIMENT_DIRECTORY='theirs' is owned by uid [0-9]+, not by this user \(uid 0\); " \
      ./plant theirs/profile.cubex "runuser -u $other -- ln -s $work/secret"
    [ "$(cat secret)" = "root's secret" ] || fail "the root-only file was overwritten through the planted link: $(head -c 200 secret | tr -d '\0')"
    [ -z "$(ls -A theirs)" ] || fail "prof wrote into the other user's directory: $(ls -A theirs)" ;;
  world_writable)
    build calls "$progs/dir_calls.c"
    mkdir open && chmod 1777 open
    PROF_EXPERIMENT_DIRECTORY=open stopped_at_start \
      "^prof: error: PROF_EXPERIMENT_DIRECTORY='open' is writable by all users \(mode 1777\); they could plant symbolic links in it that prof would follow: chmod go-w it, or use a directory of your own\$" \
      ./calls 1000
    [ -z "$(ls -A open)" ] || fail "prof wrote into the world-writable directory: $(ls -A open)"
    # Group-writable: the same.
    chmod 0775 open
    PROF_EXPERIMENT_DIRECTORY=open stopped_at_start \
      "^prof: error: PROF_EXPERIMENT_DIRECTORY='open' is writable by its group \(mode 0775\); " ./calls 1000
    # Made private, it is used.
    chmod 0755 open
    PROF_EXPERIMENT_DIRECTORY=open ./calls 1000 >out 2>err || fail "the private directory was not used: $(cat err)"
    check_profile open/profile.cubex --expect-region leaf ;;
  symlink)
    build calls "$progs/dir_calls.c"
    mkdir -m 755 mine shared && chmod 1777 shared
    as_other ln -s "$work/mine" shared/exp
    PROF_EXPERIMENT_DIRECTORY=shared/exp stopped_at_start \
      "^prof: error: PROF_EXPERIMENT_DIRECTORY='shared/exp' is a symbolic link; prof does not follow it \(whoever can change the link could send the experiment elsewhere\): set PROF_EXPERIMENT_DIRECTORY to the directory itself\$" \
      ./calls 1000
    [ -z "$(ls -A mine)" ] || fail "prof followed the link: $(ls -A mine)"
    [ -L shared/exp ] || fail "the link was renamed or replaced: $(ls -la shared)" ;;
  new_private)
    build calls "$progs/dir_calls.c"
    (umask 000 && PROF_EXPERIMENT_DIRECTORY=fresh ./calls 1000 >out 2>err) || fail "the run failed: $(cat err)"
    [ "$(stat -c %a fresh)" = 755 ] || fail "the new experiment directory has mode $(stat -c %a fresh), expected 755"
    check_profile fresh/profile.cubex --expect-region leaf ;;
  own_plant)
    build plant "$progs/plant_calls.c" -I"$progs"
    echo "a private file" >secret && chmod 600 secret
    set +e
    PROF_EXPERIMENT_DIRECTORY=mine PROF_FLUSH_SIGNAL=USR1 timeout 120 ./plant mine/profile.cubex "ln -s $work/secret" >out 2>err
    rc=$?
    set -e
    [ "$rc" -eq 0 ] && grep -q '^planted 0$' out || fail "exit status $rc; stdout: $(cat out); stderr: $(cat err)"
    [ "$(cat secret)" = "a private file" ] || fail "the file was overwritten through the planted link: $(head -c 200 secret | tr -d '\0')"
    expect_line err "^prof: error: cannot write CUBE4 profile mine/profile\.cubex: File exists\$"
    [ -n "$(find mine -maxdepth 1 -type l)" ] || fail "the planted link is gone: $(ls -la mine)" ;;
  own_plant_files)
    build plant "$progs/plant_calls.c" -I"$progs"
    echo "a private file" >secret && chmod 600 secret
    # leaf() is throttled after the checkpoint (1,024 short visits), so the list is written at the end.
    set +e
    PROF_THROTTLE=true PROF_EXPERIMENT_DIRECTORY=mine PROF_FLUSH_SIGNAL=USR1 timeout 120 ./plant mine/profile.cubex \
      "sh -c 'ln -s $work/secret mine/prof.throttle.filter && ln -s $work/secret mine/prof.run' plant" >out 2>err
    rc=$?
    set -e
    [ "$rc" -eq 0 ] && grep -q '^planted 0$' out || fail "exit status $rc; stdout: $(cat out); stderr: $(cat err)"
    [ "$(cat secret)" = "a private file" ] || fail "the file was written through a planted link: $(head -c 300 secret | tr -d '\0')"
    [ -f mine/prof.throttle.filter ] && [ ! -L mine/prof.throttle.filter ] ||
      fail "prof.throttle.filter is not a file of its own: $(ls -la mine)"
    grep -q 'leaf' mine/prof.throttle.filter || fail "prof.throttle.filter does not name leaf: $(cat mine/prof.throttle.filter)"
    expect_line err "^prof: error: cannot create 'mine/prof.run': a symbolic link is in its place, and prof neither follows links nor writes into files it did not make: remove it"
    [ -L mine/prof.run ] || fail "the planted link prof.run is gone: $(ls -la mine)"
    check_profile mine/profile.cubex --expect-region leaf ;;
  *) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
