"""DistributedDataParallel over backend "chorus": 20 training steps of a small model in
several modes (default, several small buckets, allreduce_hook, fp16_compress_hook), each
also run with gloo. Asserts bit-identical parameters on every rank and the same loss
curve as gloo within fp tolerance."""
import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

from torch_harness import check, init, main

STEPS = 20


def model(rank):
    torch.manual_seed(100 + rank)  # different on every rank: DDP must broadcast rank 0's
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                               torch.nn.Linear(32, 32), torch.nn.ReLU(),
                               torch.nn.Linear(32, 4))


def train(rank, group, mode):
    """Returns (loss curve averaged over ranks, flat parameters)."""
    kwargs = {}
    if mode == "buckets":
        kwargs["bucket_cap_mb"] = 0.0002  # ~200 B buckets: 3 per step here
    ddp = DDP(model(rank), process_group=group, **kwargs)
    calls = [0]

    def counting_hook(state, bucket):  # the allreduce of every bucket, counted
        calls[0] += 1
        return default_hooks.allreduce_hook(state, bucket)

    if mode == "buckets":
        ddp.register_comm_hook(group, counting_hook)
    elif mode == "allreduce_hook":
        ddp.register_comm_hook(group, default_hooks.allreduce_hook)
    elif mode == "fp16":
        ddp.register_comm_hook(group, default_hooks.fp16_compress_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.02)
    w_true = torch.randn(16, 4, generator=torch.Generator().manual_seed(1))  # the task
    gen = torch.Generator().manual_seed(7 + rank)  # each rank's own samples
    losses = []
    for _ in range(STEPS):
        x = torch.randn(8, 16, generator=gen)
        y = x @ w_true
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    if mode == "buckets":  # step 0 has one bucket, the rebuilt ones several
        check(calls[0] >= 1 + 3 * (STEPS - 1), f"only {calls[0]} bucket allreduces")
    curve = torch.stack(losses)
    dist.all_reduce(curve, group=group)
    params = torch.cat([p.detach().reshape(-1) for p in ddp.module.parameters()])
    return curve / dist.get_world_size(), params


def identical_across_ranks(params, gloo, what):
    size = dist.get_world_size()
    everyone = [torch.zeros_like(params) for _ in range(size)]
    dist.all_gather(everyone, params, group=gloo)
    for r, p in enumerate(everyone):
        check(torch.equal(p, everyone[0]), f"{what}: rank {r}'s parameters differ from rank 0's")


def run_mode(mode, rank, gloo):
    chorus_curve, chorus_params = train(rank, None, mode)
    gloo_curve, gloo_params = train(rank, gloo, mode)
    identical_across_ranks(chorus_params, gloo, f"chorus {mode}")
    identical_across_ranks(gloo_params, gloo, f"gloo {mode}")
    check(torch.allclose(chorus_curve, gloo_curve, rtol=1e-4, atol=1e-5),
          f"{mode}: loss curves differ:\n chorus {chorus_curve}\n gloo   {gloo_curve}")
    check(torch.allclose(chorus_params, gloo_params, rtol=1e-3, atol=1e-4),
          f"{mode}: parameters differ from gloo's")
    start = torch.cat([p.detach().reshape(-1) for p in model(0).parameters()])
    check(not torch.allclose(chorus_params, start), f"{mode}: training changed nothing")


def t_default(rank, gloo):
    run_mode("default", rank, gloo)


def t_buckets(rank, gloo):
    first = dist._DEFAULT_FIRST_BUCKET_BYTES
    dist._DEFAULT_FIRST_BUCKET_BYTES = 200  # the first bucket is small too
    try:
        run_mode("buckets", rank, gloo)
    finally:
        dist._DEFAULT_FIRST_BUCKET_BYTES = first


def t_allreduce_hook(rank, gloo):
    run_mode("allreduce_hook", rank, gloo)


def t_fp16_hook(rank, gloo):
    run_mode("fp16", rank, gloo)


if __name__ == "__main__":
    rank, size, gloo = init()
    main([t_default, t_buckets, t_allreduce_hook, t_fp16_hook], rank, gloo)
