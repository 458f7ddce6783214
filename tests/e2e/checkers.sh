# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the e2e shell tests: trace checks with Debian's readers always (otf2_basic_check.py:
# otf2-print, the otf2 Python module) and ../shared/tools' otf2_check.py where it is (CI); $tools
# is that folder or empty. A user's clone has no ../shared: nothing here needs it.
e2e_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -n "${tools:-}" ] && [ ! -f "$tools/otf2_check.py" ] && tools=

# check_trace <traces.otf2> [otf2_check.py options...]
check_trace() {
  local anchor=$1
  shift
  /usr/bin/python3 "$e2e_dir/otf2_basic_check.py" "$anchor" || exit 1
  if [ -n "${tools:-}" ]; then /usr/bin/python3 "$tools/otf2_check.py" "$anchor" "$@" | tail -n 1; fi
}

# have_cubex_check: whether profile values can be read back with cubex_check.py
have_cubex_check() { [ -n "${tools:-}" ] && [ -f "$tools/cubex_check.py" ]; }
