#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes damaged copies of an OTF2 archive: damage_trace.py <experiment> <out-dir> <count> [seed].

Each copy <out-dir>/case<N>/ holds the archive (traces.otf2, traces.def, traces/) with one of its
files damaged in one of these ways (seeded, so a failing case can be made again): bits flipped,
bytes overwritten with random values or with 0xff (large references), a run of bytes zeroed, the
file cut short. The global definitions and the event files are picked most often, as issue 30's
report found its crashes there. <out-dir>/case<N>.what says what was done to the case.
"""
import os
import random
import shutil
import sys


def archive_files(exp):
    files = ["traces.otf2", "traces.def"]
    for name in sorted(os.listdir(os.path.join(exp, "traces"))):
        files.append(os.path.join("traces", name))
    return files


def pick(rng, files):
    evt = [f for f in files if f.endswith(".evt")]
    local_def = [f for f in files if f.startswith("traces/") and f.endswith(".def")]
    r = rng.random()
    if r < 0.4 or not (evt or local_def):
        return "traces.def"
    if r < 0.8 and evt:
        return rng.choice(evt)
    if r < 0.9 and local_def:
        return rng.choice(local_def)
    return "traces.otf2"


def damage(rng, data):
    n = len(data)
    if n == 0:
        return data, "empty file left as it is"
    how = rng.randrange(5)
    if how == 0:
        k = rng.randint(1, 8)
        for _ in range(k):
            i = rng.randrange(n)
            data[i] ^= 1 << rng.randrange(8)
        return data, "%d bits flipped" % k
    if how == 1:
        k = rng.randint(1, 16)
        for _ in range(k):
            data[rng.randrange(n)] = rng.randrange(256)
        return data, "%d bytes overwritten" % k
    if how == 2:
        i = rng.randrange(n)
        k = rng.randint(1, 8)
        for j in range(i, min(n, i + k)):
            data[j] = 0xFF
        return data, "%d bytes at %d set to 0xff" % (k, i)
    if how == 3:
        i = rng.randrange(n)
        k = rng.randint(1, 64)
        for j in range(i, min(n, i + k)):
            data[j] = 0
        return data, "%d bytes at %d zeroed" % (k, i)
    cut = rng.randrange(n)
    return data[:cut], "cut at %d of %d bytes" % (cut, n)


def main():
    exp, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    rng = random.Random(seed)
    files = archive_files(exp)
    os.makedirs(out, exist_ok=True)
    for case in range(count):
        d = os.path.join(out, "case%d" % case)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        shutil.copy(os.path.join(exp, "traces.otf2"), d)
        shutil.copy(os.path.join(exp, "traces.def"), d)
        shutil.copytree(os.path.join(exp, "traces"), os.path.join(d, "traces"))
        victim = pick(rng, files)
        with open(os.path.join(d, victim), "rb") as f:
            data = bytearray(f.read())
        data, what = damage(rng, data)
        with open(os.path.join(d, victim), "wb") as f:
            f.write(data)
        with open(d + ".what", "w") as f:
            f.write("%s: %s\n" % (victim, what))


if __name__ == "__main__":
    main()
