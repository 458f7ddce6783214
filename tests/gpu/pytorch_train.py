# SPDX-License-Identifier: BSD-3-Clause
# A small PyTorch training loop for issue 16's GPU check (tests/gpu/pytorch.sh): an MLP, 3 warm-up steps, then 20 steps
# inside an NVTX range "steps" (each step in its own NVTX range "step"), synchronised at the end
# of the range. Modes: plain (times the steps), torchprof (torch.profiler counts the GPU
# activities of the 20 steps), prof (run under python3 -m prof).
import json
import sys
import time

import torch
import torch.nn as nn

mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20  # the check uses 20; timings more
dev = "cuda"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(1024, 512, device=dev)
y = torch.randint(0, 10, (1024,), device=dev)
loss_fn = nn.CrossEntropyLoss()


def train_step():
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss


def run_steps():
    torch.cuda.nvtx.range_push("steps")
    t0 = time.perf_counter()
    for i in range(steps):
        torch.cuda.nvtx.range_push("step")
        train_step()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    torch.cuda.nvtx.range_pop()
    return (t1 - t0) / steps * 1e3


for _ in range(3):
    train_step()
torch.cuda.synchronize()
result = {"mode": mode}
if mode == "torchprof":
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        result["step_ms"] = run_steps()
    kinds = {"kernel": 0, "memcpy": 0, "memset": 0}
    names = {}  # by the first 60 characters of the name (pytorch_check.py compares them)
    for e in p.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            names[e.name[:60]] = names.get(e.name[:60], 0) + 1
    result["names"] = names
    for e in p.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        n = e.name.lower()
        kinds["memcpy" if "memcpy" in n else "memset" if "memset" in n else "kernel"] += 1
    result["torch_profiler"] = kinds
else:
    result["step_ms"] = run_steps()
print("RESULT " + json.dumps(result))
