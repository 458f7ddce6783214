# SPDX-License-Identifier: BSD-3-Clause
# Plain functions, recursion, a generator, a method, an exception through two frames, a thread,
# C functions (math.sqrt, a method of a built-in type: list.append) and prof's user API; prints "EXPECT <region> <calls>" for the checker.
import math
import threading

import prof

counts = {}


def count(name):
    counts[name] = counts.get(name, 0) + 1


def leaf(x):
    count("__main__:leaf")
    return x + 1


def fib(n):
    count("__main__:fib")
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def gen(n):
    for i in range(n):
        yield leaf(i)


class Shape:
    def area(self):
        count("__main__:Shape.area")
        return sum(gen(4))


def boom():
    count("__main__:boom")
    raise ValueError("boom")


def middle():
    count("__main__:middle")
    boom()


def catcher():
    count("__main__:catcher")
    try:
        middle()
    except ValueError:
        return leaf(0)


def worker():
    for i in range(50):
        leaf(i)
    roots = sum(math.sqrt(i) for i in range(30))
    squares = []
    for i in range(11):
        squares.append(i * i)  # 3.12: CALL of the method descriptor list.append, self first
    return roots


t = threading.Thread(target=worker)
t.start()
t.join()
fib(12)
Shape().area()
Shape().area()
for _ in range(3):
    catcher()
for _ in range(7):
    with prof.region("step"):
        leaf(1)
prof.recording(False)
leaf(-1)  # not recorded
prof.recording(True)
counts["__main__:leaf"] -= 1
for name, n in sorted(counts.items()):
    print("EXPECT", name, n)
print("EXPECT math:sqrt 30")
print("EXPECT builtins:list.append 11")
print("EXPECT step 7")
print("EXPECT __main__:gen", 2 * 5)  # 4 resumes that yield and the last one that ends, per area()
