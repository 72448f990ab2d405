"""Collects the repeated runs of the comparison harness and renders one Markdown table:
median time and busbw per system and row, and Chorus's busbw over the best peer's."""
import math
import statistics

from systems import BUSBW_FACTOR


class Results:
    """times[(op, nranks, size)][system] = [time_us per repeat]; failures mark cells."""

    def __init__(self, systems):
        self.systems = systems  # column names, launch order
        self.times = {}
        self.failed = {}  # (op, nranks, size or None) -> set of systems
        self.stream_names = []  # loopback baselines, column order
        self.stream = {}  # variant, or (variant, nranks) for a ring -> GB/s per launch
        self.stream_failed = False

    def add_stream(self, name, gbps, nranks=None):
        """nranks: set for a baseline measured per rank count (the ring)."""
        if gbps:
            self.stream.setdefault(name if nranks is None else (name, nranks), []).append(gbps)
        else:
            self.stream_failed = True

    def stream_keys(self, name):
        return sorted((k for k in self.stream if k == name or (isinstance(k, tuple)
                                                              and k[0] == name)),
                      key=lambda k: k[1] if isinstance(k, tuple) else 0)

    def stream_runs(self, key):
        return list(self.stream.get(key, []))

    def stream_median(self, key):
        runs = self.stream.get(key)
        return statistics.median(runs) if runs else None

    def baseline_for(self, name, nranks):
        """The median a row of `nranks` is read against: its rank count's (a ring) or the
        one every row shares (a stream)."""
        return self.stream_median((name, nranks)) or self.stream_median(name)

    def add(self, system, cell, result):
        if result.error:
            self.failed.setdefault((cell.op, cell.nranks, None), set()).add(system)
        for size, (time_us, bad) in result.rows.items():
            key = (cell.op, cell.nranks, size)
            self.times.setdefault(key, {}).setdefault(system, []).append(time_us)
            if bad:
                self.failed.setdefault(key, set()).add(system)

    def is_failed(self, key, system):
        op, n, _ = key
        return system in self.failed.get(key, ()) or system in self.failed.get((op, n, None), ())

    def any_failed(self):
        return bool(self.failed) or self.stream_failed

    def busbw(self, key, system):
        """Median-time busbw in GB/s, or None when missing or failed."""
        runs = self.times.get(key, {}).get(system)
        if not runs or self.is_failed(key, system):
            return None
        op, n, size = key
        t = statistics.median(runs)
        return size / (t * 1e3) * BUSBW_FACTOR[op](n) if t > 0 else None

    def json_rows(self):
        """One dict per (op, nranks, size, system): median time (us) and busbw (GB/s)."""
        out = []
        for key in sorted(self.times):
            op, n, size = key
            for system, runs in self.times[key].items():
                out.append({"op": op, "nranks": n, "size": size, "system": system,
                            "time_us": statistics.median(runs),
                            "busbw_gbps": self.busbw(key, system),
                            "failed": self.is_failed(key, system)})
        return out

    def cell_text(self, key, system):
        if self.is_failed(key, system):
            return "**FAIL**"
        runs = self.times.get(key, {}).get(system)
        if not runs:
            return "n/a"
        return "%s / %.2f" % (fmt_time(statistics.median(runs)), self.busbw(key, system) or 0.0)

    def ratio(self, key):
        """Chorus busbw / best peer busbw (> 1: Chorus faster); None when undefined."""
        mine = self.busbw(key, "chorus")
        peers = [self.busbw(key, s) for s in self.systems if not s.startswith("chorus")]
        peers = [p for p in peers if p]
        return mine / max(peers) if mine and peers else None

    def tcp_ratios(self, key):
        """[chorus-tcp / gloo, chorus-tcp / each stream] as text, with a chorus-tcp column."""
        if "chorus-tcp" not in self.systems:
            return []
        tcp, gloo = self.busbw(key, "chorus-tcp"), self.busbw(key, "gloo")
        out = ["%.2f" % (tcp / gloo) if tcp and gloo else "n/a"]
        for name in self.stream_names:
            stream = self.baseline_for(name, key[1])
            out.append("%.0f%%" % (100 * tcp / stream) if tcp and stream else "n/a")
        return out

    def markdown(self, ops, ranks):
        extra = (["tcp/gloo"] + ["tcp/" + s for s in self.stream_names]
                 if "chorus-tcp" in self.systems else [])
        cols = ["op", "ranks", "size (B)"] + self.systems + ["chorus/best peer"] + extra
        lines = ["| " + " | ".join(cols) + " |",
                 "|" + "|".join(["---"] * 2 + ["---:"] * (len(cols) - 2)) + "|"]
        for op in ops:
            for n in ranks:
                sizes = sorted({k[2] for k in self.times if k[0] == op and k[1] == n})
                for size in sizes:
                    key = (op, n, size)
                    r = self.ratio(key)
                    row = [op, str(n), str(size)] + [self.cell_text(key, s) for s in self.systems]
                    row.append("%.2f" % r if r else ("**FAIL**" if self.is_failed(key, "chorus")
                                                     else "n/a"))
                    row += self.tcp_ratios(key)
                    if any(self.is_failed(key, s) for s in self.systems):
                        row[0] = "**!** " + row[0]
                    lines.append("| " + " | ".join(row) + " |")
        return "\n".join(lines)

    def summary(self, ops, ranks):
        """One line per (op, ranks): geometric mean of the ratio over the sizes."""
        out = []
        for op in ops:
            for n in ranks:
                rs = [self.ratio(k) for k in self.times if k[0] == op and k[1] == n]
                rs = [r for r in rs if r]
                if rs:
                    g = math.exp(sum(math.log(r) for r in rs) / len(rs))
                    out.append("%s, %d ranks: geometric mean of chorus/best peer = %.2f "
                               "over %d sizes" % (op, n, g, len(rs)))
        return "\n".join(out)


def fmt_time(us):
    return "%.1f" % us if us < 1e4 else "%.0f" % us
