# SPDX-License-Identifier: BSD-3-Clause
# Sampling under python3 -m prof --sampling: spin() runs Python bytecode only (its samples land on
# its own region: the interpreter's frames are folded away), crunch() spends its time in zlib's
# C code (its samples land below it, in libz's functions).
import time
import zlib


def spin(seconds):
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        for i in range(1000):
            n += i * i
    return n


def crunch(seconds):
    data = bytes(range(256)) * 4096 + b"prof" * 100000
    end = time.process_time() + seconds
    while time.process_time() < end:
        zlib.compress(data, 9)


spin(0.4)
crunch(0.4)
print("done")
