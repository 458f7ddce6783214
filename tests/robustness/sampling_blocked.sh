#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Sampling of a thread that blocks every signal (issue 30, item 16): prof samples through a
# signal, which such a thread never takes, so it got no samples without a word. Now the end of
# the run says so in one warning: blocked_signals (a worker blocking all signals burns 0.4 s of
# CPU) sampled with the timer at 1 ms gives the line, naming one thread and the blocked signal
# and that only the perf sources sample such threads; the same program with the worker blocking
# nothing gives no such line. With a perf software clock the kernel takes the blocked worker's
# samples into a ring buffer that prof's sampler thread reads: the profile has them in burn on
# the worker's location and no warning comes, whether the worker blocks the signals once running
# (found by the sampler thread) or starts with them blocked ("inherit"); the open worker, which
# takes the signal, is not read from a ring too (no line about one).
source "$ROBUSTNESS_SRC/common.sh"
skip_under_tsan "ThreadSanitizer delays asynchronous signals; the sample counts are not the program's"
build blocked_sig "$ROBUSTNESS_SRC/progs/blocked_signals.c" -pthread
PROF_SAMPLING_EVENTS=timer@1000 PROF_EXPERIMENT_DIRECTORY=blocked ./blocked_sig >out 2>err || fail "blocked: exit status $?: $(cat err)"
expect_line err '^prof: warning: sampling: 1 thread ran 0\.[0-9] s of CPU time without a single sample: they block prof.s sampling signal; their time is missing from the samples'
expect_line err 'only the perf sources \(e\.g\. PROF_SAMPLING_EVENTS=perf_cpu_clock\).* sample such threads, through the kernel.s ring buffer'
[ "$(grep -c '^prof: warning: sampling:' err)" -eq 1 ] || fail "blocked: more than one sampling line: $(cat err)"
PROF_SAMPLING_EVENTS=timer@1000 PROF_EXPERIMENT_DIRECTORY=open ./blocked_sig open >out 2>err || fail "open: exit status $?: $(cat err)"
expect_no_line err 'without a single sample'

# The worker's hits in call paths through burn (cubex_check.py --dump: metric, cnode, call path,
# location, value).
worker_burn_hits() {
  /usr/bin/python3 "$tools/cubex_check.py" "$1" --dump |
    awk '$1 == "hits" && $0 ~ /\/burn(\/| )/ && $0 ~ /Pthread thread/ { s += $NF } END { print s + 0 }'
}
ring=ok
PROF_SAMPLING_EVENTS=perf_cpu_clock@1000000 PROF_EXPERIMENT_DIRECTORY=probe ./blocked_sig open >out 2>err ||
  fail "probe: exit status $?: $(cat err)"
if grep -q 'the software clock perf_cpu_clock' err; then
  ring="skip: perf_event_open refuses a software clock on this machine, so there is no ring buffer: $(grep 'software clock' err)"
elif ! have_cubex_check; then
  ring="skip: no cubex_check.py in '$tools' to read the profile with"
fi
if [ "$ring" = ok ]; then
  for mode in block inherit open; do
    PROF_VERBOSE=1 PROF_SAMPLING_EVENTS=perf_cpu_clock@1000000 PROF_EXPERIMENT_DIRECTORY=perf_$mode ./blocked_sig $mode >out 2>err ||
      fail "perf $mode: exit status $?: $(cat err)"
    expect_no_line err 'without a single sample'
    check_profile perf_$mode/profile.cubex --expect-region burn
    hits=$(worker_burn_hits perf_$mode/profile.cubex)
    # 0.4 s at 1 ms, but the perf clocks count user time only, and burn() spends about half of its
    # time in the kernel (the thread's CPU clock is a system call): about 200 samples, the
    # handler's as well; the sampler thread finds a worker that blocks later within 2 ticks (40 ms).
    [ "$hits" -ge 100 ] || fail "perf $mode: $hits samples of the worker in burn, expected about 200 to 400: $(cat err)"
    if [ $mode = open ]; then
      expect_no_line err 'sampled through the kernel.s ring buffer'
    else
      expect_line err '^prof: sampling: 1 thread blocking the sampling signal was sampled through the kernel.s ring buffer \([0-9]+ samples'
    fi
    echo "perf $mode: $hits samples of the worker in burn"
  done
else
  echo "$ring"
fi
echo "ok: a thread that blocks all signals is named at the end (timer) or sampled all the same (perf); one that does not is not named"
