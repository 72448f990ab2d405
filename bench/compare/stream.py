"""The loopback TCP baselines of the comparison harness, one tcp_stream launch each per
all_reduce cell and repeat: one stream (a sender and a receiver process over 127.0.0.1),
and a ring of as many processes as the cell has ranks, each sending to the next while it
receives from the previous one. The chorus-tcp rows are read against what one TCP stream
on this machine moves, and against what the ring moves per process: the busbw a ring
collective over TCP reaches with no arithmetic and no protocol of its own."""
import json
import os
import subprocess
import tempfile

SOCKBUF = "4M"   # SO_SNDBUF/SO_RCVBUF of the stream (rmem_max/wmem_max cap it anyway)
# Bytes per send()/recv() call, one variant each: 256K keeps both user buffers in cache
# (the fastest this machine streams: TCP's own cost), 64M is an all_reduce buffer's size
# (each byte comes from and goes to memory, as in a 64 MiB collective).
VARIANTS = [("stream", "256K"), ("stream-64M", "64M")]
# The ring sends and receives in calls of Chorus's default chunk (CHORUS_CHUNK_SIZE); each
# process moves --stream-bytes divided by the ranks, so a ring launch takes about as long
# as a stream's.
RING = ("ring", "1M")


def make_streams(peer_dir, total_bytes):
    return ([LoopbackStream(peer_dir, total_bytes, name, call) for name, call in VARIANTS]
            + [LoopbackStream(peer_dir, total_bytes, RING[0], RING[1], ring=True)])


def parse_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1:] in units else int(text)


class LoopbackStream:
    def __init__(self, peer_dir, total_bytes, name, call_bytes, ring=False):
        self.exe = os.path.join(peer_dir, "tcp_stream")
        self.total_bytes = total_bytes
        self.name = name
        self.call_bytes = call_bytes
        self.ring = ring  # one result per rank count (Results keys it by the ranks)

    def argv(self, json_path, nranks=None):
        total = self.total_bytes
        ring = []
        if self.ring:
            ring = ["--ring", str(nranks) if nranks else "N"]
            total = str(parse_bytes(total) // nranks) if nranks else total + "/N"
        return [self.exe, "--bytes", total, "--buffer", self.call_bytes,
                "--sockbuf", SOCKBUF, "--repeats", "1"] + ring + ["--json", json_path]

    def run(self, log, nranks):
        """One measurement in GB/s, or None when it failed (the log says why)."""
        with tempfile.TemporaryDirectory(prefix="chorus-stream-") as tmp:
            path = os.path.join(tmp, "stream.json")
            argv = self.argv(path, nranks)
            log.write("$ " + " ".join(argv) + "\n")
            log.flush()
            try:
                rc = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, timeout=120).returncode
                if rc != 0:
                    return None
                with open(path) as f:
                    return float(json.load(f)["median_gbps"])
            except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
                return None

    def describe(self, results):
        argv = " ".join(os.path.basename(a) if i == 0 else a
                        for i, a in enumerate(self.argv("PATH")))
        keys = results.stream_keys(self.name)
        if not keys:
            return "- %s: no successful measurement (`%s`)." % (self.name, argv)
        parts = []
        for key in keys:
            runs = results.stream_runs(key)
            label = "%d ranks: " % key[1] if isinstance(key, tuple) else ""
            parts.append("%smedian %.2f GB/s over %d runs (%s)" % (
                label, results.stream_median(key), len(runs),
                ", ".join("%.2f" % r for r in runs)))
        return "- %s (`%s`): %s" % (self.name, argv, "; ".join(parts))


def describe_all(streams, results):
    return "\n".join(["Loopback TCP baselines, launched once per all_reduce cell and repeat, "
                      "interleaved with the systems (ring: GB/s per process, a ring of the "
                      "row's ranks):"] + [s.describe(results) for s in streams]
                     + ["", "Columns tcp/gloo and tcp/<stream>: chorus-tcp busbw over gloo's "
                        "busbw and over the baseline's median GB/s (the ring's of the row's "
                        "ranks)."])
