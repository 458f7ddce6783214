#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Awkward but common real-world builds through prof-wrap, one area per ctest:
#   lto        -flto compile and link (--instrument=functions and =plugin), ar and gcc-ar
#              static libraries, the link guard through LTO
#   link       link lines without the compile flags, a shared library, -pie and -no-pie
#   queries    --version, -dumpversion, -v, -print-*: byte-for-byte the plain compiler, no files left
#   depfiles   -MD, -MMD, -MF, -MT, -MP, -M, -MM: the plain compiler's dependencies
#   rspfiles   @file response files (nested, quoted, missing), -Wl,@file
#   pgo        -fprofile-generate, a run of the instrumented program, -fprofile-use
# Every executable runs with tracing on; the trace must pass otf2_check.py and hold the exact
# Enter counts (main 1, fib 177).
# Arguments: <bin dir with prof-wrap> <work dir> <source dir> <area>
. "$(dirname -- "$0")/common.sh"
area=${4:?"usage: $0 <bin dir> <work dir> <source dir> lto|link|queries|depfiles|rspfiles|pgo"}
test_name="realworld_$area"

rw="$src_dir/realworld"
plugin="$bin_dir/../lib/prof_gcc_plugin.so"
cd "$tmp"
cp "$rw/fib.c" "$rw/fib.h" "$rw/main.c" "$rw/main.cpp" .

# wrap <what> <prof-wrap arguments...>: runs prof-wrap, failing with <what> and its output.
wrap() {
  what=$1
  shift
  prof-wrap "$@" >"$tmp/step.log" 2>&1 || { cat "$tmp/step.log" >&2; fail "$what: prof-wrap $* failed"; }
}

# instrumented_object <object>: compiled by prof-wrap (hook calls and the link guard reference).
instrumented_object() {
  nm "$1" | grep -q 'prof_wrap_link_guard__link_this_object_with_prof_wrap' ||
    fail "$1 has no link guard reference: prof-wrap did not instrument this compile"
}

# lto_objects <tag> <prof-wrap options...>: main.o and fib.o compiled with -O2 -flto, LTO IR inside.
lto_objects() {
  tag=$1
  shift
  wrap "LTO compile ($tag)" "$@" gcc -O2 -flto -c main.c -o "main_$tag.o"
  wrap "LTO compile ($tag)" "$@" gcc -O2 -flto -c fib.c -o "fib_$tag.o"
  readelf -S "fib_$tag.o" | grep -q '\.gnu\.lto_' || fail "fib_$tag.o holds no LTO IR; -flto did not reach the compile"
}

area_lto() {
  command -v gcc-ar >/dev/null 2>&1 || skip "gcc-ar is not installed"
  # The link line repeats -flto but none of the other compile flags.
  lto_objects functions --instrument=functions
  wrap "LTO link" gcc -flto main_functions.o fib_functions.o -o app_lto
  check_instrumented app_lto
  check_enters ./app_lto exp_lto main 1 fib 177
  echo "$test_name: -flto compile (--instrument=functions) and -flto link: exact Enter counts"

  if [ -e "$plugin" ]; then
    lto_objects plugin --instrument=plugin
    wrap "LTO link (plugin objects)" gcc -flto main_plugin.o fib_plugin.o -o app_lto_plugin
    check_enters ./app_lto_plugin exp_lto_plugin main 1 fib 177
    echo "$test_name: -flto with --instrument=plugin: exact Enter counts"
  else
    echo "$test_name: $plugin was not built: -flto with the GCC plugin not checked"
  fi

  # The link guard survives LTO: the plain compiler cannot link these objects.
  if gcc -flto main_functions.o fib_functions.o -o plain_lto >plain_lto.log 2>&1; then
    fail "plain gcc -flto linked objects compiled by prof-wrap; the link guard is lost in LTO"
  fi
  grep -q 'link_this_object_with_prof_wrap' plain_lto.log ||
    { cat plain_lto.log >&2; fail "the plain LTO link failed without naming the link guard"; }
  echo "$test_name: the link guard fails a plain -flto link"

  # A static library made with ar, of ordinary objects.
  wrap "compile" gcc -O2 -c fib.c -o fib.o
  wrap "compile" gcc -O2 -c main.c -o main.o
  rm -f libfib.a
  ar rcs libfib.a fib.o || fail "ar rcs libfib.a fib.o failed"
  wrap "link with an ar library" gcc main.o -L. -lfib -o app_ar
  check_enters ./app_ar exp_ar main 1 fib 177
  echo "$test_name: ar static library linked into an instrumented executable: exact Enter counts"

  # A static library of LTO objects made with gcc-ar, linked with -flto.
  rm -f libfiblto.a
  gcc-ar rcs libfiblto.a fib_functions.o || fail "gcc-ar rcs libfiblto.a failed"
  wrap "LTO link with a gcc-ar library" gcc -O2 -flto main_functions.o libfiblto.a -o app_lto_ar
  check_enters ./app_lto_ar exp_lto_ar main 1 fib 177
  echo "$test_name: gcc-ar LTO static library: exact Enter counts"
}

area_link() {
  # Compiled with flags the link line does not repeat.
  wrap "compile" gcc -O2 -fPIE -DRW_UNUSED=1 -fno-omit-frame-pointer -c main.c -o main.o
  wrap "compile" gcc -O2 -fPIE -DRW_UNUSED=1 -fno-omit-frame-pointer -c fib.c -o fib.o
  instrumented_object main.o
  wrap "bare link" gcc main.o fib.o -o app_bare
  check_instrumented app_bare
  check_enters ./app_bare exp_bare main 1 fib 177
  echo "$test_name: link line without the compile flags: exact Enter counts"

  # A shared library: libprof is needed, the adapter list is not there; the executable uses it.
  wrap "PIC compile" gcc -O2 -fPIC -c fib.c -o fib_pic.o
  wrap "shared library link" gcc -shared fib_pic.o -o libfib.so
  readelf -d libfib.so | grep -q 'NEEDED.*\[libprof\.so' || fail "libfib.so does not need libprof.so"
  if nm -D libfib.so | grep -q ' [TDRB] prof_linked_adapters'; then
    fail "libfib.so defines prof_linked_adapters; only executables may carry the adapter list"
  fi
  wrap "link with the shared library" gcc main.o -L. -lfib -Wl,-rpath,"$tmp" -o app_so
  check_instrumented app_so
  check_enters ./app_so exp_so main 1 fib 177
  echo "$test_name: shared library built and linked with prof-wrap: exact Enter counts"

  # -pie and -no-pie, explicitly.
  wrap "-pie link" gcc -pie main.o fib.o -o app_pie
  readelf -h app_pie | grep -q 'Type: *DYN' || fail "app_pie is not a position-independent executable"
  check_enters ./app_pie exp_pie main 1 fib 177
  wrap "-fno-pie compile" gcc -O2 -fno-pie -c main.c -o main_nopie.o
  wrap "-fno-pie compile" gcc -O2 -fno-pie -c fib.c -o fib_nopie.o
  wrap "-no-pie link" gcc -no-pie main_nopie.o fib_nopie.o -o app_nopie
  readelf -h app_nopie | grep -q 'Type: *EXEC' || fail "app_nopie is not a position-dependent executable"
  check_enters ./app_nopie exp_nopie main 1 fib 177
  wrap "-no-pie link of PIE objects" gcc -no-pie main.o fib.o -o app_nopie2
  check_enters ./app_nopie2 exp_nopie2 main 1 fib 177
  echo "$test_name: -pie and -no-pie executables: exact Enter counts"
}

area_queries() {
  # Run in an empty directory with a private TMPDIR: nothing may be left in either.
  mkdir q qtmp
  cd q
  TMPDIR="$tmp/qtmp"
  export TMPDIR
  n=0
  for cc in gcc g++ cc c++ clang; do
    command -v "$cc" >/dev/null 2>&1 || { echo "$test_name: $cc is not installed, not checked"; continue; }
    for q in --version -dumpversion -dumpfullversion -dumpmachine -v -print-file-name=libc.so \
             -print-prog-name=ld -print-libgcc-file-name -print-search-dirs -print-multiarch; do
      case "$cc:$q" in clang:-dumpfullversion | clang:-print-multiarch) continue ;; esac
      same_output "$cc $q" "$cc" "$q"
      n=$((n + 1))
    done
  done
  # The per-compiler scripts, as configure and CMake call them.
  for q in --version -dumpversion -v; do
    set +e
    gcc "$q" >"$tmp/plain.out" 2>"$tmp/plain.err"
    plain_rc=$?
    prof-gcc "$q" >"$tmp/wrap.out" 2>"$tmp/wrap.err"
    wrap_rc=$?
    set -e
    [ "$plain_rc" = "$wrap_rc" ] && cmp -s "$tmp/plain.out" "$tmp/wrap.out" && cmp -s "$tmp/plain.err" "$tmp/wrap.err" ||
      fail "prof-gcc $q: output or exit status differs from gcc $q"
    n=$((n + 1))
  done
  # The linker's version through the driver (Meson and libtool look at it): GCC runs a link for
  # it, and so does prof-wrap. The echoed ld command line differs from run to run anyway (a
  # temporary file's name); everything else must be the same.
  for q in -Wl,--version "-Xlinker --version"; do
    # shellcheck disable=SC2086
    gcc $q >"$tmp/plain.out" 2>&1 || fail "gcc $q failed"
    # shellcheck disable=SC2086
    prof-wrap gcc $q >"$tmp/wrap.out" 2>&1 || fail "prof-wrap gcc $q failed"
    grep -v -- '-plugin-opt=-fresolution=' "$tmp/plain.out" >"$tmp/plain.lines"
    grep -v -- '-plugin-opt=-fresolution=' "$tmp/wrap.out" >"$tmp/wrap.lines"
    grep -q 'GNU' "$tmp/plain.lines" || fail "gcc $q did not print the linker's version"
    cmp -s "$tmp/plain.lines" "$tmp/wrap.lines" ||
      { diff "$tmp/plain.lines" "$tmp/wrap.lines" >&2 || true; fail "prof-wrap gcc $q: the linker's version output differs"; }
    n=$((n + 1))
  done
  [ -z "$(ls -A .)" ] || fail "the queries left files in the working directory: $(ls -A .)"
  [ -z "$(ls -A "$TMPDIR")" ] || fail "the queries left files in TMPDIR: $(ls -A "$TMPDIR")"
  cd "$tmp"
  echo "$test_name: $n compiler queries: stdout, stderr and exit status identical to the plain compiler's, no files left"
}

# dep_words <file>: the words of a dependency file, one a line, with prof's header left out.
dep_words() {
  tr -d '\\' <"$1" | tr -s ' \t\n' '\n\n\n' | grep -v 'prof/instrumented\.h' | grep -v '^$' || true
}

# same_deps <what> <plain file> <wrapped file>: identical but for prof's header.
same_deps() {
  dep_words "$2" >"$2.words"
  dep_words "$3" >"$3.words"
  cmp -s "$2.words" "$3.words" ||
    { diff "$2" "$3" >&2 || true; fail "$1: the dependencies through prof-wrap differ from the plain compiler's (beyond prof/instrumented.h)"; }
  if grep -q 'prof/instrumented\.h' "$3"; then extra=" (plus prof/instrumented.h)"; else extra=""; fi
  echo "$test_name: $1: same dependencies$extra"
}

area_depfiles() {
  mkdir -p inc
  printf '#define RW_DEP 1\n' >inc/dep.h
  printf '#include "dep.h"\n#include "fib.h"\nint dep(void) { return RW_DEP + fib(1); }\n' >dep.c
  cp dep.c dep.cpp
  for cc in gcc g++; do
    src=dep.c
    [ "$cc" = g++ ] && src=dep.cpp
    mkdir p w
    # -MD/-MMD with -MF, -MT, -MQ, -MP: the dependency file of a compile.
    for flags in "-MD -MF dep.d" "-MMD -MF dep.d" "-MD -MP -MT custom.o -MF dep.d" "-MMD -MQ 'q\$.o' -MF dep.d"; do
      eval "set -- $flags"
      (cd p && "$cc" "$@" -c "../$src" -o dep.o -I../inc) || fail "$cc $flags -c failed"
      (cd w && prof-wrap "$cc" "$@" -c "../$src" -o dep.o -I../inc) || fail "prof-wrap $cc $flags -c failed"
      instrumented_object w/dep.o
      same_deps "$cc $flags -c" p/dep.d w/dep.d
    done
    # -MD and -MMD without -MF: the file next to the object, named after it.
    for flags in -MD -MMD; do
      (cd p && "$cc" "$flags" -c "../$src" -o obj.o -I../inc) || fail "$cc $flags -c failed"
      (cd w && prof-wrap "$cc" "$flags" -c "../$src" -o obj.o -I../inc) || fail "prof-wrap $cc $flags -c failed"
      [ -f w/obj.d ] || fail "prof-wrap $cc $flags -c ../$src -o obj.o wrote no obj.d"
      same_deps "$cc $flags -c (no -MF)" p/obj.d w/obj.d
    done
    # -M and -MM: dependencies only, on stdout or into -MF; exactly the plain compiler's.
    for flags in "-M" "-MM" "-MM -MT foo.o" "-M -MF dep.d" "-MM -MG -MP -MF dep.d"; do
      eval "set -- $flags"
      rm -f p/dep.d w/dep.d p/dep.o w/dep.o
      (cd p && "$cc" "$@" "../$src" -I../inc >out) || fail "$cc $flags failed"
      (cd w && prof-wrap "$cc" "$@" "../$src" -I../inc >out) || fail "prof-wrap $cc $flags failed"
      cmp -s p/out w/out || { diff p/out w/out >&2 || true; fail "prof-wrap $cc $flags: output differs from the plain compiler's"; }
      if [ -f p/dep.d ]; then
        cmp -s p/dep.d w/dep.d || { diff p/dep.d w/dep.d >&2 || true; fail "prof-wrap $cc $flags: dep.d differs from the plain compiler's"; }
      fi
      [ ! -e w/dep.o ] && [ ! -e w/a.out ] || fail "prof-wrap $cc $flags built something"
      echo "$test_name: $cc $flags: identical to the plain compiler's"
    done
    rm -rf p w
  done
}

area_rspfiles() {
  # A compile and a link given entirely in response files.
  printf -- '-O2 -c fib.c -o fib.o\n' >compile.rsp
  printf -- '-O2\n-c\nmain.c\n-o main.o\n' >compile_main.rsp
  wrap "compile from @compile.rsp" gcc @compile.rsp
  wrap "compile from @compile_main.rsp" gcc @compile_main.rsp
  instrumented_object fib.o
  instrumented_object main.o
  printf -- 'main.o fib.o -o app_rsp\n' >link.rsp
  wrap "link from @link.rsp" gcc @link.rsp
  check_instrumented app_rsp
  check_enters ./app_rsp exp_rsp main 1 fib 177
  echo "$test_name: compile and link from @file: instrumented, exact Enter counts"

  # Nested, with quotes and backslashes; nested names are relative to the working directory, as in GCC.
  mkdir -p 'src dir' 'out dir' rsp
  cp fib.c fib.h 'src dir/'
  cat >rsp/inner.rsp <<'RSP'
-O2 -DRW_NOTE="a b" -DRW_Q='\"x y\"'
RSP
  cat >rsp/outer.rsp <<'RSP'
@rsp/inner.rsp -c 'src dir/fib.c' "-o" out\ dir/fib\ q.o
RSP
  wrap "compile from nested, quoted @files" gcc @rsp/outer.rsp
  instrumented_object 'out dir/fib q.o'
  printf -- "'out dir/fib q.o' main.o -o app_nested\n" >link2.rsp
  wrap "link from a quoted @file" gcc @link2.rsp
  check_enters ./app_nested exp_nested main 1 fib 177
  echo "$test_name: nested and quoted @files: instrumented, exact Enter counts"

  # The objects in a linker response file (-Wl,@file): still a link, libprof linked.
  printf -- 'main.o fib.o\n' >objs.rsp
  wrap "link with -Wl,@objs.rsp" gcc -Wl,@objs.rsp -o app_wl
  check_instrumented app_wl
  check_enters ./app_wl exp_wl main 1 fib 177
  echo "$test_name: -Wl,@file link: libprof linked, exact Enter counts"

  # A missing @file stays a literal argument, and the compiler says so, as without prof-wrap.
  set +e
  gcc -c fib.c -o plain_missing.o @missing.rsp >plain_missing.log 2>&1
  plain_rc=$?
  prof-wrap gcc -c fib.c -o wrap_missing.o @missing.rsp >wrap_missing.log 2>&1
  wrap_rc=$?
  set -e
  [ "$plain_rc" = "$wrap_rc" ] || fail "@missing.rsp: exit status $wrap_rc through prof-wrap, $plain_rc without"
  if [ "$plain_rc" = 0 ]; then instrumented_object wrap_missing.o; fi
  echo "$test_name: a missing @file is passed on as a literal argument (exit status $plain_rc either way)"
}

area_pgo() {
  rm -f ./*.gcda
  wrap "-fprofile-generate compile" gcc -O2 -fprofile-generate -c main.c -o main.o
  wrap "-fprofile-generate compile" gcc -O2 -fprofile-generate -c fib.c -o fib.o
  wrap "-fprofile-generate link" gcc -fprofile-generate main.o fib.o -o app_gen
  check_enters ./app_gen exp_gen main 1 fib 177
  [ "${PROF_E2E_RUN:-1}" = "0" ] && { echo "$test_name: PROF_E2E_RUN=0: the -fprofile-use step needs the run"; done_ok; exit 0; }
  [ -f main.gcda ] && [ -f fib.gcda ] || fail "the -fprofile-generate run under prof wrote no main.gcda and fib.gcda"
  echo "$test_name: -fprofile-generate build runs under prof and writes .gcda: exact Enter counts"

  # The profile is used: -Werror=missing-profile fails the compile if it were not found.
  wrap "-fprofile-use compile" gcc -O2 -fprofile-use -Werror=missing-profile -Werror=coverage-mismatch -c main.c -o main.o
  wrap "-fprofile-use compile" gcc -O2 -fprofile-use -Werror=missing-profile -Werror=coverage-mismatch -c fib.c -o fib.o
  wrap "-fprofile-use link" gcc -fprofile-use main.o fib.o -o app_use
  check_enters ./app_use exp_use main 1 fib 177
  echo "$test_name: -fprofile-use rebuild uses the profile: exact Enter counts"

  # A build step that runs the fresh binary need not leave an experiment directory behind.
  mkdir run && (cd run && PROF_ENABLE_PROFILING=false ../app_use >/dev/null) || fail "app_use with PROF_ENABLE_PROFILING=false failed"
  [ -z "$(ls -A run)" ] || fail "a run with PROF_ENABLE_PROFILING=false left $(ls -A run)"
  echo "$test_name: a run with PROF_ENABLE_PROFILING=false writes no experiment directory"
}

case "$area" in
  lto | link | queries | depfiles | rspfiles | pgo) "area_$area" ;;
  *) fail "unknown area '$area'; use lto, link, queries, depfiles, rspfiles or pgo" ;;
esac
cd /
done_ok
