# SPDX-License-Identifier: BSD-3-Clause
# prof-score -g on Python: tiny() is short and called often (a filter candidate), slow() is not.
import time


def tiny(x):
    return x + 1


def slow():
    time.sleep(0.01)


s = 0
for _ in range(20000):
    s = tiny(s)
for _ in range(3):
    slow()
print("EXPECT __main__:slow 3")
