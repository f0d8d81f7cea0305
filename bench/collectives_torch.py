"""The reference for bench/collectives.sh: the same collectives through
PyTorch's own NCCL calls, one configuration (NCCL's default choices), so
that the bench can print what the bare calls cost next to bitprobe's map.
Run under torchrun (one process per GPU):

  torchrun --standalone --nproc_per_node W bench/collectives_torch.py \
      --sizes 1024,2048,... --dtypes fp32,bf16

For every dtype and message size (bytes, as bitprobe counts them):
all_reduce of the whole message, reduce_scatter_tensor of it, and
all_gather_into_tensor into it, each once after a warm-up of the smallest,
each followed by a synchronisation and a copy of the result to the host
(what bitprobe does with every result).  Rank 0 prints one line:
"torch: N calls, S bytes, T s".
"""
import argparse
import os
import time

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--dtypes", default="fp32,bf16")
    a = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    types = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    sizes = [int(s) for s in a.sizes.split(",")]
    dev = torch.device("cuda", local)
    calls = moved = 0
    t = None
    for warm in (True, False):
        if not warm:
            dist.barrier()
            torch.cuda.synchronize()
            t = time.time()
        for dn in a.dtypes.split(","):
            dt = types[dn]
            es = torch.tensor([], dtype=dt).element_size()
            for b in sizes[:1] if warm else sizes:
                n = b // es
                n -= n % world
                if not n:
                    continue
                x = torch.randn(n, dtype=dt, device=dev)
                dist.all_reduce(x)
                x.cpu()
                out = torch.empty(n // world, dtype=dt, device=dev)
                dist.reduce_scatter_tensor(out, x)
                out.cpu()
                full = torch.empty(n, dtype=dt, device=dev)
                dist.all_gather_into_tensor(full, out)
                full.cpu()
                if not warm:
                    calls += 3
                    moved += 3 * n * es
    torch.cuda.synchronize()
    dist.barrier()
    if rank == 0:
        print("torch: %d calls, %d bytes, %.2f s" % (calls, moved, time.time() - t))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
