#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Sampling of a thread that blocks every signal (issue 30, item 16): prof samples through a
# signal, which such a thread never takes, so it got no samples without a word. Now the end of
# the run says so in one warning: blocked_signals (a worker blocking all signals burns 0.4 s of
# CPU) sampled with the timer at 1 ms gives the line, naming one thread and the blocked signal;
# the same program with the worker blocking nothing gives no such line.
source "$ROBUSTNESS_SRC/common.sh"
skip_under_tsan "ThreadSanitizer delays asynchronous signals; the sample counts are not the program's"
build blocked_sig "$ROBUSTNESS_SRC/progs/blocked_signals.c" -pthread
PROF_SAMPLING_EVENTS=timer@1000 PROF_EXPERIMENT_DIRECTORY=blocked ./blocked_sig >out 2>err || fail "blocked: exit status $?: $(cat err)"
expect_line err '^prof: warning: sampling: 1 thread ran 0\.[0-9] s of CPU time without a single sample: they block prof.s sampling signal; their time is missing from the samples'
[ "$(grep -c '^prof: warning: sampling:' err)" -eq 1 ] || fail "blocked: more than one sampling line: $(cat err)"
PROF_SAMPLING_EVENTS=timer@1000 PROF_EXPERIMENT_DIRECTORY=open ./blocked_sig open >out 2>err || fail "open: exit status $?: $(cat err)"
expect_no_line err 'without a single sample'
echo "ok: a thread that blocks all signals is named at the end; one that does not is not"
