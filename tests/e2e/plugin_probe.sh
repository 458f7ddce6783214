#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A GCC whose version string matches the plugin's but which cannot load it (another build of
# the same version, a cross compiler): prof-wrap finds out by one trial compile,
# falls back to -finstrument-functions under --instrument=auto and refuses --instrument=plugin.
# Successful trials are cached, failed ones not.
# Usage: plugin_probe.sh <prof-wrap> <work-dir> <calls.c> <gcc-version-the-plugin-is-for>
set -euo pipefail
wrap=$1 work=$2 src=$3 version=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work"
export XDG_CACHE_HOME=$work/cache
real_gcc=$(command -v gcc)
# "x86_64-linux-gnu-gcc" style name: prof-wrap takes it for GCC.
cat >x86_64-test-gcc <<SH
#!/bin/sh
for a in "\$@"; do
  case \$a in
    -dumpfullversion) echo "$version"; exit 0 ;;
    -fplugin=*) echo "cc1: error: fail to initialize plugin \${a#-fplugin=}" >&2; exit 1 ;;
  esac
done
exec "$real_gcc" "\$@"
SH
chmod +x x86_64-test-gcc
"$wrap" -v ./x86_64-test-gcc -O2 "$src" -o prog 2>err.txt
grep -q "^prof-wrap: instrumentation: -finstrument-functions (the GCC plugin does not fit: the compiler cannot load it (cc1: error: fail to initialize plugin .*prof_gcc_plugin.so))$" err.txt ||
  { cat err.txt; echo "FAIL: no fallback line"; exit 1; }
# A failure is not cached (it may pass); a success is.
if ls cache/prof/gcc-plugin-* >/dev/null 2>&1; then echo "FAIL: a failed trial was cached"; exit 1; fi
"$wrap" gcc -c "$src" -o ok.o
ls cache/prof/gcc-plugin-* >/dev/null || { echo "FAIL: the successful trial with gcc was not cached"; exit 1; }
PROF_ENABLE_TRACING=true PROF_EXPERIMENT_DIRECTORY=exp ./prog >out.txt
expected=$(sed -n 's/^PROF_EXPECT fib //p' out.txt)
got=$(otf2-print exp/traces.otf2 | grep -c '^ENTER .*Region: "fib"' || true)
[ "$got" = "$expected" ] || { echo "FAIL: fib entered $got times, expected $expected"; exit 1; }
if "$wrap" --instrument=plugin ./x86_64-test-gcc -c "$src" -o x.o 2>err2.txt; then echo "FAIL: --instrument=plugin accepted"; exit 1; fi
grep -q "^prof-wrap: error: --instrument=plugin: the GCC plugin cannot be used: the compiler cannot load it (cc1: error: fail to initialize plugin" err2.txt ||
  { cat err2.txt; echo "FAIL: no refusal line"; exit 1; }
echo "fallback with exact counts (fib $got), success cached, failure not, --instrument=plugin refused: ok"
