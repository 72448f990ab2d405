"""The loopback TCP stream baseline of the comparison harness: one tcp_stream launch (a
sender and a receiver process over 127.0.0.1) per all_reduce cell and repeat, so that the
chorus-tcp rows can be read against what one TCP stream on this machine moves."""
import json
import os
import subprocess
import tempfile

SOCKBUF = "4M"   # SO_SNDBUF/SO_RCVBUF of the stream (rmem_max/wmem_max cap it anyway)
# Bytes per send()/recv() call, one variant each: 256K keeps both user buffers in cache
# (the fastest this machine streams: TCP's own cost), 64M is an all_reduce buffer's size
# (each byte comes from and goes to memory, as in a 64 MiB collective).
VARIANTS = [("stream", "256K"), ("stream-64M", "64M")]


def make_streams(peer_dir, total_bytes):
    return [LoopbackStream(peer_dir, total_bytes, name, call) for name, call in VARIANTS]


class LoopbackStream:
    def __init__(self, peer_dir, total_bytes, name, call_bytes):
        self.exe = os.path.join(peer_dir, "tcp_stream")
        self.total_bytes = total_bytes
        self.name = name
        self.call_bytes = call_bytes

    def argv(self, json_path):
        return [self.exe, "--bytes", self.total_bytes, "--buffer", self.call_bytes,
                "--sockbuf", SOCKBUF, "--repeats", "1", "--json", json_path]

    def run(self, log):
        """One measurement in GB/s, or None when it failed (the log says why)."""
        with tempfile.TemporaryDirectory(prefix="chorus-stream-") as tmp:
            path = os.path.join(tmp, "stream.json")
            argv = self.argv(path)
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
        runs = results.stream_runs(self.name)
        argv = " ".join(os.path.basename(a) if i == 0 else a
                        for i, a in enumerate(self.argv("PATH")))
        if not runs:
            return "- %s: no successful measurement (`%s`)." % (self.name, argv)
        return "- %s (`%s`): median %.2f GB/s over %d runs (%s)" % (
            self.name, argv, results.stream_median(self.name), len(runs),
            ", ".join("%.2f" % r for r in runs))


def describe_all(streams, results):
    return "\n".join(["One loopback TCP stream, launched once per all_reduce cell and repeat, "
                      "interleaved with the systems:"] + [s.describe(results) for s in streams]
                     + ["", "Columns tcp/gloo and tcp/<stream>: chorus-tcp busbw over gloo's "
                        "busbw and over the stream's median GB/s."])
