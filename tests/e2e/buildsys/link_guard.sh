#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# An object compiled by prof-wrap must not link without it (the error names prof-wrap), and must
# link with it.
# Arguments: <bin dir with prof-wrap> <work dir> <source dir>
. "$(dirname -- "$0")/common.sh"

prof-wrap gcc -c "$src_dir/link_guard.c" -o "$tmp/guard.o" || fail "prof-wrap gcc -c failed"
if gcc "$tmp/guard.o" -o "$tmp/plain" >"$tmp/plain.log" 2>&1; then
  fail "plain gcc linked an object compiled by prof-wrap; the link guard does not work"
fi
grep -q 'link_this_object_with_prof_wrap' "$tmp/plain.log" ||
  { cat "$tmp/plain.log" >&2; fail "the plain link failed, but its message does not name link_this_object_with_prof_wrap"; }
prof-wrap gcc "$tmp/guard.o" -o "$tmp/wrapped" >"$tmp/wrapped.log" 2>&1 ||
  { cat "$tmp/wrapped.log" >&2; fail "linking with prof-wrap failed"; }
check_instrumented "$tmp/wrapped"
done_ok
