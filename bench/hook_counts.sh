#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions, loads, stores and conditional branches per compiler-hook call, counted by
# valgrind's cachegrind (a dynamic count on this machine's code path, not a timing): bench/calls.c
# built with the GCC plugin and with -finstrument-functions, `loop N`, profile and trace modes,
# every call measured (PROF_THROTTLE=false). Prints one line per hook and mode:
#   <program> <mode> <hook> Ir=<n> Dr=<n> Dw=<n> Bc=<n>     (per call of the hook)
#   bench/hook_counts.sh <bin dir with calls_plugin and calls_prof> [lib dir: another libprof] [N]
set -euo pipefail
bin=$1 lib=${2:-} n=${3:-200000}
command -v valgrind >/dev/null || { echo "bench/hook_counts.sh: valgrind not found (Debian: valgrind)" >&2; exit 77; }
for v in $(env | sed -n 's/^\(PROF_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-hooks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for prog in calls_plugin calls_prof; do
  [[ -x $bin/$prog ]] || continue
  for mode in profile trace; do
    envs=(PROF_THROTTLE=false PROF_EXPERIMENT_DIRECTORY="$tmp/exp" PROF_ENABLE_PROFILING=true PROF_ENABLE_TRACING=false)
    [[ $mode == trace ]] && envs=(PROF_THROTTLE=false PROF_EXPERIMENT_DIRECTORY="$tmp/exp" PROF_ENABLE_PROFILING=false PROF_ENABLE_TRACING=true)
    [[ -n $lib ]] && envs+=(LD_LIBRARY_PATH="$lib")
    rm -rf "$tmp/exp"
    env "${envs[@]}" valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes --cachegrind-out-file="$tmp/cg.out" \
      "$bin/$prog" loop "$n" 64 >/dev/null 2>"$tmp/vg.err" || { cat "$tmp/vg.err" >&2; exit 1; }
    python3 - "$tmp/cg.out" "$n" "$prog" "$mode" <<'PY'
import collections, sys
path, n, prog, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
events, fn, tot = None, None, collections.defaultdict(collections.Counter)
for line in open(path):
    if line.startswith("events:"):
        events = line.split()[1:]
    elif line.startswith("fn="):
        fn = line[3:].strip()
    elif line[:1].isdigit() and fn:
        for e, v in zip(events, line.split()[1:]):
            tot[fn][e] += int(v)
for hook in ("__prof_plugin_enter", "__prof_plugin_exit", "__cyg_profile_func_enter", "__cyg_profile_func_exit"):
    if tot[hook]["Ir"]:
        print("%s %s %s %s" % (prog, mode, hook, " ".join("%s=%.0f" % (e, tot[hook][e] / n) for e in ("Ir", "Dr", "Dw", "Bc"))))
PY
  done
done
