#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Messages quote what the user wrote, and the separator and test-only variables take no junk
# (issue 15, defect 9, the configuration's part). Before: `PROF_TOTAL_MEMORY=1024 bytes` for 1K,
# '16mjunk' for 16Mjunk, and junk separators, PROF_SAMPLING_DEBUG_REFUSE (without sampling) and
# PROF_MPI_DEBUG_CLOCK_SKEW with a blank or a sign were taken. Each value must stop the run at
# start: exit status 1, exactly the one line, nothing on stdout, no experiment directory.
# Usage: dirs_values.sh <prof-wrap> <work> <tools>
source "${ROBUSTNESS_SRC:?}/common.sh"
progs=$here/progs
build calls "$progs/dir_calls.c"

n=0
# stops <the whole error line, a regex> <VAR=value...>
stops() {
  local line=$1
  shift
  n=$((n + 1))
  set +e
  env PROF_EXPERIMENT_DIRECTORY=exp$n "$@" ./calls 10 >out$n 2>err$n
  local rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "$*: exit status $rc, expected 1; stderr: $(cat err$n)"
  [ ! -s out$n ] || fail "$*: the program ran"
  [ "$(wc -l <err$n)" -eq 1 ] || fail "$*: expected one line on stderr: $(cat err$n)"
  expect_line err$n "$line"
  [ ! -e exp$n ] || fail "$*: an experiment directory was left behind"
}

stops "^prof: error: PROF_TOTAL_MEMORY='1K' is too small for tracing; use at least 8M, e.g. PROF_TOTAL_MEMORY=16M\$" \
  PROF_ENABLE_TRACING=true PROF_TOTAL_MEMORY=1K
stops "^prof: error: PROF_TOTAL_MEMORY='7m' is too small for tracing; " PROF_ENABLE_TRACING=yes PROF_TOTAL_MEMORY=7m
# A size without its unit (issue 30, item 15): the total is blamed, not the page size the user never set.
stops "^prof: error: PROF_TOTAL_MEMORY='100' \(100 bytes\) is too small: the events need at least four chunks of PROF_PAGE_SIZE=64K; sizes take a unit, K, M or G \(e.g. PROF_TOTAL_MEMORY=16M\)\$" \
  PROF_TOTAL_MEMORY=100
stops "^prof: error: PROF_PAGE_SIZE='8M' does not fit PROF_TOTAL_MEMORY='16MB'; use a power of two from 4K to a quarter of the event memory, e.g. 64K\$" \
  PROF_PAGE_SIZE=8M PROF_TOTAL_MEMORY=16MB
stops "^prof: error: PROF_CUDA_ENABLE='Kernel,16Mjunk' has the unknown value '16Mjunk'; use a comma list of " \
  PROF_CUDA_ENABLE=Kernel,16Mjunk
stops "^prof: error: PROF_PTHREAD_ENABLE='Mutex,Join' has the unknown value 'Join'; " PROF_PTHREAD_ENABLE=Mutex,Join
stops "^prof: error: PROF_METRIC_PAPI_SEP='junk' is not one character; give one such as , or ; \(the default is ,\)\$" \
  PROF_METRIC_PAPI_SEP=junk
stops "^prof: error: PROF_METRIC_RUSAGE_SEP='_' is a character that event names use; give one such as , or ;\$" \
  PROF_METRIC_RUSAGE=ru_minflt PROF_METRIC_RUSAGE_SEP=_
stops "^prof: error: PROF_METRIC_PERF_SEP='' is not one character; " PROF_METRIC_PERF_SEP=
stops "^prof: error: PROF_SAMPLING_DEBUG_REFUSE='junk' has the item 'junk', which is neither hardware nor software; give hardware, software or hardware,software \(tests only; leave it empty\)\$" \
  PROF_SAMPLING_DEBUG_REFUSE=junk
stops "^prof: error: PROF_MPI_DEBUG_CLOCK_SKEW=' 1:5' has the item ' 1:5', which is not rank:ticks; give e.g. 1:2000000000, or leave it empty\$" \
  "PROF_MPI_DEBUG_CLOCK_SKEW= 1:5"
stops "^prof: error: PROF_MPI_DEBUG_CLOCK_SKEW='1:-5' has the item '1:-5', which is not rank:ticks; " PROF_MPI_DEBUG_CLOCK_SKEW=1:-5
echo "ok: $n malformed values, each stopped the run at start with one line quoting the value as written"
