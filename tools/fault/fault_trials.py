#!/usr/bin/env python3
"""Fault trials: does every survivor name the lost or stalled rank? (issue 13, item 6)

Each trial starts `chorus-run -n N chorus-stress --pattern 5d` (5 collectives per step,
each on its own stream), waits until the job runs, then, at a random moment, sends a
random rank SIGKILL (a lost peer) or SIGSTOP (a stalled peer). It then requires:
  - chorus-run exits with a non-zero status within --bound seconds of the signal;
  - every other rank printed its error ("chorus-stress: ...") and that error names the
    victim as "rank V (host H pid P)" with the victim's pid (a lost rank: "... was lost";
    a stalled one: "(stalled: rank V (...) did not answer ...").
Modes cycle through signal x ranks x transport (kill/stop, 2/4 ranks, shm/tcp), so
every 8 consecutive trials cover each mode once. A summary table follows; the outputs of
failed trials are kept. Exit status 0 when every trial passed, 1 otherwise, 2 on usage.

  tools/fault/fault_trials.py --bin build/tools --trials 50
"""
import argparse
import datetime
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MODES = [(sig, n, tr) for sig, n, tr in [
    ("stop", 4, "tcp"), ("kill", 4, "shm"), ("stop", 2, "shm"), ("kill", 2, "tcp"),
    ("stop", 4, "shm"), ("kill", 4, "tcp"), ("stop", 2, "tcp"), ("kill", 2, "shm")]]


def find_tool(bin_dir, name):
    for cand in (os.path.join(bin_dir, name), os.path.join(bin_dir, name, name)):
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    path = shutil.which(name)
    if path:
        return path
    sys.exit(f"fault_trials: {name} not found under {bin_dir} or on PATH")


def rank_pids(parent):
    """Rank -> pid of chorus-run's children (their CHORUS_RANK)."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid != parent:
                continue
            with open(f"/proc/{d}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        for kv in env:
            if kv.startswith(b"CHORUS_RANK="):
                out[int(kv[len(b"CHORUS_RANK="):])] = int(d)
    return out


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def error_lines(text, rank):
    """The error lines chorus-stress printed on `rank` ("[r] chorus-stress: ...")."""
    prefix = f"[{rank}] chorus-stress: "
    return [l[len(prefix):] for l in text.splitlines()
            if l.startswith(prefix) and "injecting" not in l and "finished" not in l]


def trial(args, tools, index, mode, rng, work):
    sig, n, transport = mode
    out_path = os.path.join(work, f"trial{index:03d}.out")
    env = dict(os.environ, CHORUS_TRANSPORT=transport)
    env.pop("CHORUS_RANK", None)
    cmd = [tools["chorus-run"], "-n", str(n), "--timeout", str(args.job_timeout),
           tools["chorus-stress"], "--pattern", "5d", "--size", args.size,
           "--timeout", f"{int(round(args.timeout * 1000))}ms", "--duration", f"{args.job_timeout}s"]
    res = {"index": index, "mode": mode, "out": out_path, "cmd": " ".join(cmd)}
    with open(out_path, "w") as out:
        out.write(f"# {res['cmd']}  (CHORUS_TRANSPORT={transport})\n")
        out.flush()
        job = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                               start_new_session=True)
    victim_pid = None
    try:
        # Ready when rank 0 printed its header (every rank has built its communicators).
        start = time.monotonic()
        while "# chorus-stress: pattern" not in read(out_path):
            if job.poll() is not None or time.monotonic() - start > 60:
                res["problem"] = "the job did not start"
                return res
            time.sleep(0.05)
        pids = rank_pids(job.pid)
        if len(pids) != n:
            res["problem"] = f"found {len(pids)} of {n} rank processes"
            return res
        victim = rng.randrange(n)
        moment = rng.uniform(args.min_delay, args.max_delay)
        res.update(victim=victim, moment=moment)
        time.sleep(moment)
        text = read(out_path)
        if job.poll() is not None or any(error_lines(text, r) for r in range(n)):
            res["problem"] = "the job failed before the fault (spurious timeout under load?)"
            return res
        victim_pid = pids[victim]
        res["victim_pid"] = victim_pid
        sent = time.monotonic()
        os.kill(victim_pid, signal.SIGKILL if sig == "kill" else signal.SIGSTOP)
        try:
            rc = job.wait(timeout=args.bound)
        except subprocess.TimeoutExpired:
            res["problem"] = f"chorus-run still running {args.bound} s after the signal"
            return res
        res["rc"] = rc
        res["seconds"] = time.monotonic() - sent
        text = read(out_path)
        named = re.compile(rf"rank {victim} \(host \S+ pid {victim_pid}\)")
        missing = []
        for r in range(n):
            if r == victim:
                continue
            lines = error_lines(text, r)
            if not lines:
                missing.append(f"rank {r}: no error printed")
            elif not any(named.search(l) for l in lines):
                missing.append(f"rank {r}: {lines[-1]}")
        res["missing"] = missing
        if rc == 0:
            res["problem"] = "chorus-run exited 0"
        elif missing:
            res["problem"] = "survivors not naming the victim: " + " | ".join(missing)
        return res
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGTERM)
            try:
                job.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(job.pid, signal.SIGKILL)
                job.wait()
        if victim_pid is not None:
            for s in (signal.SIGKILL, signal.SIGCONT):
                try:
                    os.kill(victim_pid, s)
                except ProcessLookupError:
                    pass


def mode_name(mode):
    sig, n, transport = mode
    return f"{'kill -9' if sig == 'kill' else 'SIGSTOP'} {n} ranks {transport}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/tools",
                    help="folder with chorus-run and chorus-stress (also <bin>/<tool>/<tool>); "
                         "else PATH (default build/tools)")
    ap.add_argument("--chorus-run", default=None, help="path of chorus-run (overrides --bin)")
    ap.add_argument("--chorus-stress", default=None, help="path of chorus-stress (overrides --bin)")
    ap.add_argument("--trials", type=int, default=50, help="number of trials (default 50)")
    ap.add_argument("--modes", default="all",
                    help="comma list of kill|stop:ranks:shm|tcp, e.g. stop:4:tcp (default all 8)")
    ap.add_argument("--timeout", type=float, default=5.0,
                    help="chorus-stress --timeout in seconds (default 5: no spurious timeouts "
                         "on a loaded 2-vCPU host)")
    ap.add_argument("--size", default="4K", help="chorus-stress --size (default 4K)")
    ap.add_argument("--min-delay", type=float, default=0.2,
                    help="earliest fault, seconds after the job runs (default 0.2)")
    ap.add_argument("--max-delay", type=float, default=2.0,
                    help="latest fault (default 2.0)")
    ap.add_argument("--bound", type=float, default=None,
                    help="chorus-run must exit within this many seconds of the signal "
                         "(default --timeout + 10)")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    ap.add_argument("--keep", default=None,
                    help="folder for the outputs of failed trials (default a new /tmp folder)")
    args = ap.parse_args()
    if args.trials < 1:
        ap.error("--trials must be >= 1")
    args.bound = args.bound or args.timeout + 10
    args.job_timeout = int(args.timeout + args.bound + 120)
    modes = MODES
    if args.modes != "all":
        modes = []
        for m in args.modes.split(","):
            parts = m.split(":")
            if len(parts) != 3 or parts[0] not in ("kill", "stop") or parts[2] not in ("shm", "tcp") \
                    or not parts[1].isdigit() or int(parts[1]) < 2:
                ap.error(f"--modes: expected e.g. stop:4:tcp, got '{m}'")
            modes.append((parts[0], int(parts[1]), parts[2]))
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    tools = {t: getattr(args, t.replace("-", "_")) or find_tool(args.bin, t)
             for t in ("chorus-run", "chorus-stress")}
    work = tempfile.mkdtemp(prefix="chorus-fault-")
    keep = args.keep or work
    os.makedirs(keep, exist_ok=True)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    print(f"# fault trials: {args.trials} trials, seed {seed}, chorus-stress --pattern 5d "
          f"--size {args.size} --timeout {args.timeout:g}s, fault {args.min_delay:g}-"
          f"{args.max_delay:g} s in, bound {args.bound:g} s")
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M:%S} UTC, {cpu}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    sys.stdout.flush()
    results = []
    for i in range(args.trials):
        mode = modes[i % len(modes)]
        r = trial(args, tools, i, mode, rng, work)
        results.append(r)
        status = "ok" if "problem" not in r else "FAIL: " + r["problem"]
        took = f"{r['seconds']:.2f} s" if "seconds" in r else "-"
        victim = f"victim rank {r['victim']}" if "victim" in r else "no victim"
        at = f"at {r['moment']:.2f} s" if "moment" in r else ""
        print(f"trial {i:3d}  {mode_name(mode):22s} {victim} {at}  rc {r.get('rc', '-')}  "
              f"exit {took}  {status}")
        sys.stdout.flush()
        if "problem" in r and keep != work:
            shutil.copy(r["out"], keep)
    print()
    print(f"{'mode':24s} {'trials':>6s} {'all named':>9s} {'failed':>6s} {'max exit s':>10s}")
    total_fail = 0
    for mode in modes:
        rs = [r for r in results if r["mode"] == mode]
        if not rs:
            continue
        ok = sum(1 for r in rs if "problem" not in r)
        worst = max((r["seconds"] for r in rs if "seconds" in r), default=0.0)
        total_fail += len(rs) - ok
        print(f"{mode_name(mode):24s} {len(rs):6d} {ok:9d} {len(rs) - ok:6d} {worst:10.2f}")
    ok_all = len(results) - total_fail
    print(f"{'all':24s} {len(results):6d} {ok_all:9d} {total_fail:6d}")
    for r in results:
        if "problem" in r:
            print(f"failed trial {r['index']}: {mode_name(r['mode'])}: {r['problem']}\n"
                  f"  output kept: {os.path.join(keep, os.path.basename(r['out']))}")
    if total_fail == 0 or args.keep is not None:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"# outputs of every trial: {work}")
    return 0 if total_fail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
