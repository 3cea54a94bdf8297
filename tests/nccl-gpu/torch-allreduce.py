#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""PyTorch's own NCCL path: torch.distributed all_reduce, 2 ranks on GPU 0.

torch-allreduce.py RANKS ITERS BYTES[,BYTES..]

Prints nccl-gpu-job's truth lines (see nccl-gpu-job.c) for check-gpu.py:
one per all_reduce with its cudaEvent time (events on the current stream,
which waits for ProcessGroupNCCL's stream) and its CLOCK_MONOTONIC window,
and one "done" line per rank.  Each rank gets its own NCCL_HOSTID, as in
nccl-gpu-job, so that two ranks may share one GPU.  Exit 77: no PyTorch
with CUDA here.
"""
import json
import os
import sys
import time

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError as e:
    print(f"no PyTorch: {e}", file=sys.stderr)
    sys.exit(77)


def rank_main(rank, n, port, iters, sizes):
    os.environ["NCCL_HOSTID"] = f"rdt-torch-host-{rank}"
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=n)
    want = n * (n + 1) / 2
    for b in sizes:
        cnt = b // 4
        for it in range(iters):
            x = torch.full((cnt,), float(rank + 1), device="cuda:0")
            a = torch.cuda.Event(enable_timing=True)
            z = torch.cuda.Event(enable_timing=True)
            a.record()
            t0 = time.monotonic_ns()
            dist.all_reduce(x)
            t1 = time.monotonic_ns()
            z.record()
            z.synchronize()
            if not bool((x == want).all()):
                raise SystemExit(f"rank {rank}: all_reduce result wrong")
            print(json.dumps({"rank": rank, "pid": os.getpid(), "func": "AllReduce",
                              "count": cnt, "bytes": cnt * 4, "iter": it,
                              "gpu_us": a.elapsed_time(z) * 1000,
                              "enq_start_ns": t0, "enq_end_ns": t1}), flush=True)
    dist.destroy_process_group()
    v = torch.cuda.nccl.version()
    print(json.dumps({"rank": rank, "pid": os.getpid(),
                      "nccl_version": v[0] * 10000 + v[1] * 100 + v[2],
                      "done": 1}), flush=True)


if __name__ == "__main__":
    n, iters = int(sys.argv[1]), int(sys.argv[2])
    sizes = [int(s, 0) for s in sys.argv[3].split(",")]
    if not torch.cuda.is_available():
        print("no CUDA device for PyTorch", file=sys.stderr)
        sys.exit(77)
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(rank_main, args=(n, port, iters, sizes), nprocs=n)
