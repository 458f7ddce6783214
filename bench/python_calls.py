# SPDX-License-Identifier: BSD-3-Clause
# bench/python.sh: a call-heavy pure-Python loop. Usage: python_calls.py <calls> [plain|cprofile|setprofile]
# (prof's modes run it plain under python3 -m prof). Prints ns=<ns of the loop>.
import sys
import time


def f(x):
    return x + 1


def loop(n):
    s = 0
    for i in range(n):
        s = f(s)
    return s


n = int(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "plain"
if mode == "cprofile":
    import cProfile
    p = cProfile.Profile()
    p.enable()
elif mode == "setprofile":
    sys.setprofile(lambda frame, event, arg: None)
t0 = time.perf_counter_ns()
loop(n)
t1 = time.perf_counter_ns()
sys.setprofile(None)
if mode == "cprofile":
    p.disable()
print("ns=%d" % (t1 - t0))
