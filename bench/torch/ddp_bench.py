"""DDP on a real network, CPU: the same model trained with DistributedDataParallel over
backend "chorus" and over "gloo", side by side in one run (interleaved blocks of steps),
same seed and same data on both. Run under chorus-run:

    PYTHONPATH=build/python build/tools/chorus-run/chorus-run -n 4 /usr/bin/python3 \\
        bench/torch/ddp_bench.py --model resnet18 --steps 30

Models: resnet18 (torchvision's, 10 classes, 32x32 images; needs python3-torchvision),
transformer (a small encoder built here: 2 layers, d_model 128, 32 tokens), tiny (an MLP,
for the smoke test). Rank 0 prints, per backend, steps/s (the slowest rank's time of each
block), the loss curve, the largest difference between chorus's and gloo's losses (they
must agree within fp32 tolerance: --rtol; exit 1 otherwise), and the communication share:
the same steps under DDP's no_sync() (gradients not reduced) bound the compute, so
1 - t(no_sync) / t(backend) is the share of a step the backend's reduction adds.

Correctness (exit 1 on failure): --check-steps lockstep steps at the end, each starting
both models from the same parameters (chorus's, copied into gloo's) on the same batch:
the losses must be equal and the reduced gradients equal within fp32 tolerance (--rtol,
relative to the gradient's norm). The free-running curves are compared too but only
printed beyond 2 ranks: the backends add each gradient element's 3+ terms in different
orders, and training (BatchNorm, momentum) amplifies those last-bit differences step by
step (at 2 ranks a + b is the same either way and the curves are bit-identical)."""
import argparse
import copy
import gc
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import chorus.torch  # noqa: F401 - registers "chorus"

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--model", choices=["resnet18", "transformer", "tiny"], default="resnet18")
ap.add_argument("--steps", type=int, default=30, help="measured steps per backend")
ap.add_argument("--warmup", type=int, default=3, help="unmeasured steps per backend first")
ap.add_argument("--block", type=int, default=5, help="steps per interleaved block")
ap.add_argument("--batch", type=int, default=32, help="samples per rank per step")
ap.add_argument("--rtol", type=float, default=1e-5,
                help="allowed relative gradient difference in the lockstep check")
ap.add_argument("--check-steps", type=int, default=3, help="lockstep check steps")
ap.add_argument("--seed", type=int, default=1234)
ap.add_argument("--threads", type=int, default=0, help="torch threads per rank (0: cores / ranks)")
args = ap.parse_args()

rank, size = int(os.environ["CHORUS_RANK"]), int(os.environ["CHORUS_WORLD_SIZE"])
threads = args.threads or max(1, (os.cpu_count() or 1) // size)
torch.set_num_threads(threads)
path = os.path.join(tempfile.gettempdir(), "chorus_ddp_bench_" + os.environ["CHORUS_JOB_ID"])
store = dist.FileStore(path, size)
dist.init_process_group("chorus", store=store, rank=rank, world_size=size)
gloo = dist.new_group(backend="gloo")
chorus_pg = dist.new_group(backend="chorus")


class Encoder(nn.Module):
    """A small transformer classifier: token embedding, 2 encoder layers, mean pool."""

    def __init__(self, vocab=1000, d=128, layers=2, classes=10):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=4 * d, batch_first=True,
                                           dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)).mean(dim=1))


def build_model():
    torch.manual_seed(args.seed)
    if args.model == "resnet18":
        import torchvision
        return torchvision.models.resnet18(num_classes=10)
    if args.model == "transformer":
        return Encoder()
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))


def batch(step):
    """This rank's data of `step`: the same for both backends."""
    g = torch.Generator().manual_seed(args.seed * 1_000_003 + step * 101 + rank)
    if args.model == "resnet18":
        x = torch.randn(args.batch, 3, 32, 32, generator=g)
    elif args.model == "transformer":
        x = torch.randint(0, 1000, (args.batch, 32), generator=g)
    else:
        x = torch.randn(args.batch, 64, generator=g)
    return x, torch.randint(0, 10, (args.batch,), generator=g)


base = build_model()
nparams = sum(p.numel() for p in base.parameters())
runs = {}
for name, pg in (("chorus", chorus_pg), ("gloo", gloo)):
    model = DDP(copy.deepcopy(base), process_group=pg)
    runs[name] = {"model": model, "opt": torch.optim.SGD(model.parameters(), lr=0.01,
                                                         momentum=0.9),
                  "step": 0, "losses": [], "times": []}
# The compute bound: chorus's model with the gradient reduction skipped (no_sync), on
# its own copy so the two compared runs stay identical.
nosync = DDP(copy.deepcopy(base), process_group=chorus_pg)
runs["no_sync"] = {"model": nosync, "opt": torch.optim.SGD(nosync.parameters(), lr=0.01,
                                                           momentum=0.9),
                   "step": 0, "losses": [], "times": []}
loss_fn = nn.CrossEntropyLoss()


def train(run, steps, measured, sync=True):
    model, opt = run["model"], run["opt"]
    dist.barrier(group=gloo)
    start = time.perf_counter()
    for _ in range(steps):
        x, y = batch(run["step"])
        opt.zero_grad(set_to_none=True)
        if sync:
            loss = loss_fn(model(x), y)
            loss.backward()
        else:
            with model.no_sync():
                loss = loss_fn(model(x), y)
                loss.backward()
        opt.step()
        if measured:
            run["losses"].append(loss.item())
        run["step"] += 1
    took = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
    dist.all_reduce(took, op=dist.ReduceOp.MAX, group=gloo)  # the slowest rank's
    if measured:
        run["times"].append(took.item())


order = ["chorus", "gloo", "no_sync"]
for name in order:
    train(runs[name], args.warmup, False, sync=name != "no_sync")
done = 0
block_no = 0
while done < args.steps:
    n = min(args.block, args.steps - done)
    # Alternate which backend goes first, so neither always follows the other.
    for name in (order if block_no % 2 == 0 else ["gloo", "chorus", "no_sync"]):
        train(runs[name], n, True, sync=name != "no_sync")
    done += n
    block_no += 1

# Every rank's losses (the mean over ranks is the global loss of each step).
curves = {}
for name in ("chorus", "gloo"):
    t = torch.tensor(runs[name]["losses"], dtype=torch.float64)
    dist.all_reduce(t, group=gloo)
    curves[name] = (t / size).tolist()
abs_diff = max(abs(a - b) for a, b in zip(curves["chorus"], curves["gloo"]))


def flat_grad(model):
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()])


# Lockstep: same parameters, same batch; compare the losses and the reduced gradients.
worst = torch.zeros(2, dtype=torch.float64)  # relative gradient difference, loss difference
cm, gm = runs["chorus"]["model"], runs["gloo"]["model"]
for k in range(args.check_steps):
    gm.module.load_state_dict(cm.module.state_dict())
    x, y = batch(10_000_000 + k)
    losses = {}
    for name, m in (("chorus", cm), ("gloo", gm)):
        m.zero_grad(set_to_none=True)
        loss = loss_fn(m(x), y)
        loss.backward()
        losses[name] = loss.item()
    g_c, g_g = flat_grad(cm), flat_grad(gm)
    rel = ((g_c - g_g).norm() / g_g.norm().clamp_min(1e-30)).item()
    worst[0] = max(worst[0].item(), rel)
    worst[1] = max(worst[1].item(), abs(losses["chorus"] - losses["gloo"]))
    runs["chorus"]["opt"].step()  # move on: the next check starts elsewhere
dist.all_reduce(worst, op=dist.ReduceOp.MAX, group=gloo)
grad_rel, loss_gap = worst.tolist()

status = 0
if rank == 0:
    sps = {name: args.steps / sum(runs[name]["times"]) for name in order}
    print(f"DDP {args.model} ({nparams / 1e6:.2f} M parameters, {nparams * 4 / 2**20:.1f} MiB "
          f"of fp32 gradients), {size} ranks, batch {args.batch} per rank, {threads} torch "
          f"thread(s) per rank, {args.steps} steps per backend in blocks of {args.block}")
    for name in order:
        print(f"  {name:8s} {sps[name]:8.3f} steps/s  ({1000 / sps[name]:8.1f} ms/step)")
    for name in ("chorus", "gloo"):
        share = max(0.0, 1 - sps[name] / sps["no_sync"]) if sps["no_sync"] > 0 else 0.0
        print(f"  communication share of a {name} step: {100 * share:.1f} % "
              f"(1 - no_sync / {name} step time)")
    print(f"  chorus / gloo steps/s: {sps['chorus'] / sps['gloo']:.3f}")
    every = max(1, len(curves["chorus"]) // 10)
    print("  loss (mean over ranks), step: chorus / gloo")
    for i in range(0, len(curves["chorus"]), every):
        print(f"    {i:4d}: {curves['chorus'][i]:.6f} / {curves['gloo'][i]:.6f}")
    print(f"  free-running curves: max |loss difference| {abs_diff:.3g}")
    print(f"  lockstep check ({args.check_steps} steps): max |loss difference| {loss_gap:.3g}, "
          f"max relative difference of the reduced gradients {grad_rel:.3g} "
          f"(allowed {args.rtol:g})")
    if grad_rel > args.rtol or loss_gap > 0:
        print("FAIL: chorus's reduced gradients (or losses) differ from gloo's")
        status = 1
    if size == 2 and abs_diff > 0:
        print("FAIL: at 2 ranks the free-running curves must be identical")
        status = 1
dist.barrier(group=gloo)
dist.destroy_process_group()
# Every rank lets go of the store file (the groups and models hold it; its destructor
# rewrites it), then rank 0 removes it once the others have had time to do the same.
runs.clear()
del store, gloo, chorus_pg, nosync, cm, gm
gc.collect()
if rank == 0:
    time.sleep(1.0)
    try:
        os.unlink(path)
    except OSError:
        pass
sys.exit(status)
