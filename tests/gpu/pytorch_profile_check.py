#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Checks where the profile of pytorch_train.py puts the GPU work (tests/gpu/pytorch.sh).
# stdin: `cubex_check.py profile.cubex --dump` (metric, cnode, call path, location, value per
# line). On the CUDA stream's location, the forward pass's kernels are under the Python call path
# of the training step (.../__main__:train_step/.../Linear.forward/<launch call>/<kernel>), at
# least one visit per step for each of the 3 Linear layers' GEMMs. (The backward pass's kernels
# come from PyTorch's autograd thread, which runs no Python: under its own launch calls, or at its
# root where cuBLAS launches through the driver API.) One line per problem, exit 1.
import re
import sys

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 23  # 3 warm-up steps and 20 timed ones
# The call path may hold blanks and parentheses (kernel names): parsed from the right.
line_re = re.compile(r"^visits \(EXCLUSIVE\)\s+\d+\s+(.*?)\s+\d+\s+\(([^()]*)\)\s+(\d+)\s*$")
under_step, total = 0, 0
for line in sys.stdin:
    m = line_re.match(line.rstrip("\n"))
    if not m or "CUDA[" not in m.group(2):
        continue
    path, visits = m.group(1), int(m.group(3))
    if not visits:
        continue
    total += visits
    if "__main__:train_step/" in path and "Linear.forward/" in path:
        under_step += visits
problems = []
if total == 0:
    problems.append("no GPU activity on a CUDA stream location in the profile")
if under_step < 3 * steps:
    problems.append("%d GPU activities under __main__:train_step/.../Linear.forward, expected at least %d (3 layers, %d steps)"
                    % (under_step, 3 * steps, steps))
for p in problems:
    print("pytorch profile: FAIL: " + p)
if problems:
    sys.exit(1)
print("pytorch profile: ok: %d GPU activities, %d of them under __main__:train_step/.../Linear.forward"
      % (total, under_step))
