"""The systems the comparison harness runs: how to launch each one for one (ranks, op,
sizes) cell, and how to read back its rows (chorus-bench's JSON fields) and their checks."""
import json
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field

BUSBW_FACTOR = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
}


@dataclass
class Cell:
    """One launch: a system, a rank count, an op and the sweep flags."""
    nranks: int
    op: str
    sizes: tuple  # (min, max, factor) as strings chorus-bench accepts
    iters: int
    warmup: int


@dataclass
class RunResult:
    """Rows keyed by size: {size: (time_us, wrong)}; `error` when the launch failed."""
    rows: dict = field(default_factory=dict)
    error: str = ""


@dataclass
class System:
    name: str
    argv: object        # function(cell, json_path, tmpdir) -> list of arguments
    env: dict           # variables set (value) or removed (None) for this system
    timeout_s: float = 300.0

    def run(self, cell, log):
        """Launches one cell; returns its RunResult. `log` receives the output."""
        with tempfile.TemporaryDirectory(prefix="chorus-compare-") as tmp:
            path = os.path.join(tmp, "rows.json")
            argv = self.argv(cell, path, tmp)
            env = dict(os.environ)
            for k, v in self.env.items():
                if v is None:
                    env.pop(k, None)
                else:
                    env[k] = v
            log.write("$ " + " ".join(argv) + "\n")
            log.flush()
            proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                rc = proc.wait(timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return RunResult(error="timed out after %ds" % self.timeout_s)
            return read_rows(path, cell, rc)


def read_rows(path, cell, rc):
    """Parses a JSON row file; every row must be checked and have no wrong value."""
    result = RunResult()
    try:
        with open(path) as f:
            rows = json.load(f)
    except (OSError, ValueError) as e:
        result.error = "exit %d, no rows (%s)" % (rc, e)
        return result
    for r in rows:
        if r["op"] != cell.op or r["nranks"] != cell.nranks:
            continue
        wrong = [r.get("oop_wrong")] + ([r["ip_wrong"]] if r.get("ip_wrong") is not None else [])
        bad = sum(w for w in wrong if w) + (1 if r.get("oop_wrong") is None else 0)
        # A peer's broadcast has one buffer per rank (MPI_Bcast, gloo::broadcast): that is
        # Chorus's in-place form; out of place Chorus's root also copies send to recv.
        key = "ip_time_us" if cell.op == "broadcast" and r.get("ip_time_us") is not None \
            else "oop_time_us"
        result.rows[r["size"]] = (float(r[key]), bad)
    if rc != 0:
        result.error = "exit status %d" % rc
    return result


def make_systems(build_dir, peer_dir, with_chorus_tcp, have_mpi, have_gloo, registered=False):
    """The columns, in launch order: chorus [chorus-tcp] mpi-shm mpi-tcp gloo. `registered`:
    chorus-bench's buffers come from chorus::mem_alloc (-R)."""
    tools = os.path.join(build_dir, "tools")
    run = os.path.join(tools, "chorus-run", "chorus-run")
    bench = os.path.join(tools, "chorus-bench", "chorus-bench")

    def sweep(cell):
        b, e, f = cell.sizes
        return ["--op", cell.op, "-b", b, "-e", e, "-f", f, "-n", str(cell.iters),
                "-w", str(cell.warmup), "-c", "1"]

    def chorus(cell, path, tmp):
        return [run, "-n", str(cell.nranks), "--no-tag-output", "--timeout", "280", "--",
                bench] + sweep(cell) + (["-R"] if registered else []) + ["--json", path]

    def mpi(btl):
        def argv(cell, path, tmp):
            root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
            # --oversubscribe also makes polling ranks yield the CPU (mpi_yield_when_idle),
            # which costs nothing on an idle machine and much less than spinning on a busy one.
            return (["mpirun"] + root + ["--oversubscribe", "--bind-to", "none",
                     "-np", str(cell.nranks), "--mca", "pml", "ob1", "--mca", "btl", btl,
                     "--mca", "btl_tcp_if_include", "lo"]
                    + [os.path.join(peer_dir, "mpi_bench")] + sweep(cell) + ["--json", path])
        return argv

    def gloo(cell, path, tmp):
        store = os.path.join(tmp, "store")
        os.mkdir(store)
        return [run, "-n", str(cell.nranks), "--no-tag-output", "--timeout", "280", "--",
                os.path.join(peer_dir, "gloo_bench"), "--store", store] + sweep(cell) + [
                "--json", path]

    mpi_env = {"OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
    systems = [System("chorus", chorus, {"CHORUS_TRANSPORT": None})]
    if with_chorus_tcp:
        systems.append(System("chorus-tcp", chorus, {"CHORUS_TRANSPORT": "tcp"}))
    if have_mpi:
        systems.append(System("mpi-shm", mpi("self,vader"), mpi_env))
        systems.append(System("mpi-tcp", mpi("self,tcp"), mpi_env))
    if have_gloo:
        systems.append(System("gloo", gloo, {}))
    return systems
