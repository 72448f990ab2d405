"""DistributedDataParallel training on the torch.distributed backend "chorus".

Run from the repository root after building (Debian's python3-torch installed, so CMake
built chorus.torch):

    PYTHONPATH=build/python build/tools/chorus-run/chorus-run -n 2 /usr/bin/python3 examples/torch_ddp.py

or with env:// rendezvous: RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set by any launcher.
The only change to a gloo script is `import chorus.torch` and the backend name.
"""
import datetime
import os
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import chorus.torch  # noqa: F401 - registers backend "chorus"

timeout = datetime.timedelta(seconds=60)  # becomes Chorus's per-operation deadline
if "RANK" in os.environ:  # env://: MASTER_ADDR / MASTER_PORT / RANK / WORLD_SIZE
    dist.init_process_group("chorus", timeout=timeout)
else:  # chorus-run: a torch FileStore named after the job
    rank, size = int(os.environ["CHORUS_RANK"]), int(os.environ["CHORUS_WORLD_SIZE"])
    path = os.path.join(tempfile.gettempdir(), "chorus_example_" + os.environ["CHORUS_JOB_ID"])
    dist.init_process_group("chorus", store=dist.FileStore(path, size), rank=rank,
                            world_size=size, timeout=timeout)
rank = dist.get_rank()

torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)),
            bucket_cap_mb=1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
gen = torch.Generator().manual_seed(rank)  # each rank trains on its own data
for step in range(20):
    x = torch.randn(32, 10, generator=gen)
    y = x.sum(dim=1, keepdim=True)
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()  # gradients all-reduced through Chorus, bucket by bucket
    opt.step()
    if rank == 0 and step % 5 == 4:
        print(f"step {step + 1}: loss {loss.item():.4f}", flush=True)

work = dist.all_reduce(torch.ones(4), async_op=True)  # async: Work and a Future
print(f"rank {rank}: async all_reduce -> {work.get_future().wait()[0].tolist()}", flush=True)
dist.destroy_process_group()
