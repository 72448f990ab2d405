"""Describes the machine and software versions of a comparison run, as Markdown lines."""
import os
import platform
import subprocess
import time


def _first(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
        return out.strip().splitlines()[0] if out.strip() else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def _cpu_and_memory():
    model, mem = "?", "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")),
                         "?")
        with open("/proc/meminfo") as f:
            kb = next(int(l.split()[1]) for l in f if l.startswith("MemTotal"))
            mem = "%.0f GiB" % (kb / 2**20)
    except (OSError, StopIteration, ValueError):
        pass
    return model, mem


def loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def describe(command, have_mpi, have_gloo):
    model, mem = _cpu_and_memory()
    debian = open("/etc/debian_version").read().strip() if os.path.exists(
        "/etc/debian_version") else "?"
    lines = [
        "Date: %s" % time.strftime("%Y-%m-%d %H:%M %Z"),
        "Command: `%s`" % command,
        "Machine: %d CPUs (%s), %s, Linux %s, Debian %s; load average at the start: %s" % (
            os.cpu_count() or 0, model, mem, platform.release(), debian, loadavg()),
        "Chorus: commit %s (%s); %s" % (
            _first(["git", "rev-parse", "--short", "HEAD"]),
            "CHORUS_TRANSPORT default" if "CHORUS_TRANSPORT" not in os.environ else
            "CHORUS_TRANSPORT unset for the chorus column", _first(["g++", "--version"])),
        "Open MPI: %s (pml ob1; mpi-shm: btl self,vader; mpi-tcp: btl self,tcp on lo; "
        "--bind-to none --oversubscribe)" % (
            _first(["mpirun", "--version"]) if have_mpi else "not available"),
        "Gloo: libgloo-dev %s (TCP transport on 127.0.0.1, FileStore rendezvous)" % (
            _first(["dpkg-query", "-W", "-f=${Version}", "libgloo-dev"]) if have_gloo
            else "not available"),
    ]
    return "\n".join("- " + l for l in lines)
