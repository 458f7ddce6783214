# SPDX-License-Identifier: BSD-3-Clause
# os.fork: the child calls work() and exits; only the parent writes (one experiment, the
# parent's 3 calls); then a thread calls sys.exit (it ends only that thread) and the script
# raises: exit status 1 with its traceback, the data written.
import os
import sys
import threading


def work(n):
    return sum(range(n))


pid = os.fork()
if pid == 0:
    for _ in range(5):
        work(10)
    os._exit(0)
os.waitpid(pid, 0)
for _ in range(3):
    work(10)
t = threading.Thread(target=lambda: sys.exit(4))
t.start()
t.join()
print("EXPECT __main__:work 3")
sys.stdout.flush()
raise RuntimeError("the script fails on purpose")
