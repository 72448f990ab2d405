#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/frame_fuzz.cc into tests/fuzz/corpus/ (or the
directory given as the only argument; the test fuzz_corpus_current compares the two).
Each file: one selector byte (0 frame, 1 hello, 2 store, 3 engine stream) + input.
Valid frames of every kind, plus truncated, oversized and wrong-version/token ones.
The wire version is read from src/transport/tcp/frame.h, so the seeds follow it."""
import os
import re
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "..", "src", "transport", "tcp", "frame.h")) as f:
    VERSION = int(re.search(r"kWireVersion = (\d+);", f.read()).group(1))
TOKEN = 0xC0FFEE1234
MAGIC = 0x53524843
HELLO, EAGER, RTS, CTS, DATA, NACK, CANCEL, ABORT, DESYNC, BYE, RTR, PUT = range(1, 13)
out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")


def frame(kind, length=0, arg=0, comm=1, seq=1, step=0, sig=0, peer_sig=0, token=TOKEN,
          version=VERSION, magic=MAGIC, progress=0):
    # Bytes 56-63: peer_sig for desync frames, the sender's progress for every other kind.
    last = peer_sig if kind == DESYNC else progress
    return struct.pack("<IHHQIIQQQQQ", magic, version, kind, token, comm, step, seq, length, arg,
                       sig, last)


def store(op, body, rid=7, version=1, body_len=None):
    n = len(body) if body_len is None else body_len
    return struct.pack("<IHHII", 0x54534843, version, op, rid, n) + body


def field(b):
    return struct.pack("<I", len(b)) + b


seeds = {}
# 0: frame headers of every kind, and broken ones.
for kind, length, arg in [(HELLO, 0, 1), (EAGER, 16, 0), (RTS, 256, 1), (CTS, 0, 1), (DATA, 256, 1),
                          (NACK, 16, 1), (CANCEL, 0, 1), (ABORT, 5, 3 | (2 << 32)), (DESYNC, 0, 0),
                          (BYE, 0, 0), (RTR, 256, 3), (PUT, 256, 3)]:
    seeds[f"frame_kind{kind}"] = b"\0" + frame(kind, length, arg, sig=11, peer_sig=12, progress=13)
seeds["frame_truncated"] = b"\0" + frame(EAGER, 16)[:30]
seeds["frame_huge_eager"] = b"\0" + frame(EAGER, 1 << 62)
seeds["frame_huge_data"] = b"\0" + frame(DATA, (1 << 40) + 1)
seeds["frame_bad_version"] = b"\0" + frame(EAGER, 16, version=2)
seeds["frame_bad_token"] = b"\0" + frame(EAGER, 16, token=TOKEN + 1)
seeds["frame_bad_kind"] = b"\0" + frame(99)
seeds["frame_abort_bad_code"] = b"\0" + frame(ABORT, 4, 99)
# 1: hellos for world size 3 (selector 2 -> 1 + 2 % 16 = 3), local rank 0.
seeds["hello_ok"] = b"\1\2\0" + frame(HELLO, 0, 2, seq=3, comm=0)
seeds["hello_wrong_size"] = b"\1\2\0" + frame(HELLO, 0, 2, seq=4, comm=0)
seeds["hello_lower_rank"] = b"\1\2\1" + frame(HELLO, 0, 0, seq=3, comm=0)
seeds["hello_huge"] = b"\1\2\0" + frame(HELLO, 1 << 60, 2, seq=3, comm=0)
seeds["hello_truncated"] = b"\1\2\0" + frame(HELLO, 0, 2, seq=3)[:20]
# 2: store requests (ops 1 set, 2 get, 3 add, 4 check, 5 wait).
seeds["store_set"] = b"\2" + store(1, field(b"key") + field(b"value"))
seeds["store_get"] = b"\2" + store(2, field(b"key"))
seeds["store_add"] = b"\2" + store(3, field(b"ctr") + struct.pack("<q", -5))
seeds["store_check"] = b"\2" + store(4, field(b"key"))
seeds["store_wait"] = b"\2" + store(5, struct.pack("<I", 2) + field(b"a") + field(b"bb"))
seeds["store_bad_field"] = b"\2" + store(1, struct.pack("<I", 0xFFFFFFF0) + b"x")
seeds["store_huge_body"] = b"\2" + store(1, b"", body_len=0xFFFFFFFF)
seeds["store_bad_version"] = b"\2" + store(2, field(b"key"), version=9)
# 3: engine streams. Posted: recv seq 1 (16 B eager), recv seq 2 (256 B rendezvous),
# send seq 3 (256 B rendezvous, rdv id 1), send seq 4 (16 B eager), recv seq 5 (0 B).
eager = frame(EAGER, 16, seq=1) + bytes(range(16))
rdv_in = frame(RTS, 256, 9, seq=2) + frame(DATA, 256, 9, seq=2) + bytes(256)
cts = frame(CTS, 0, 1, seq=3)
zero = frame(EAGER, 0, seq=5)
seeds["engine_all_ok"] = b"\3" + eager + rdv_in + cts + zero
seeds["engine_unexpected_first"] = b"\3" + frame(EAGER, 8, seq=7) + b"12345678" + eager
seeds["engine_abort"] = b"\3" + frame(ABORT, 12, 3 | (2 << 32), step=1) + b"rank 1 died\n"
seeds["engine_abort_unprintable"] = b"\3" + frame(ABORT, 6, 5, step=77) + b"\0\x01\xff%s%n"
seeds["engine_nack"] = b"\3" + frame(NACK, 128, 1, seq=3)
seeds["engine_cancel"] = b"\3" + frame(RTS, 256, 4, seq=2) + frame(CANCEL, 0, 4, seq=2)
seeds["engine_desync"] = b"\3" + frame(DESYNC, 0, 0, seq=4, sig=5, peer_sig=6)
seeds["engine_sig_mismatch"] = b"\3" + frame(EAGER, 16, seq=1, sig=42) + bytes(16)
seeds["engine_wrong_length"] = b"\3" + frame(EAGER, 8, seq=1) + bytes(8) + frame(DATA, 3, 9, seq=2)
seeds["engine_truncated_body"] = b"\3" + frame(EAGER, 16, seq=1) + b"abc"
seeds["engine_truncated_header"] = b"\3" + eager[:40]
seeds["engine_huge"] = b"\3" + frame(DATA, 1 << 50, 9, seq=2)
seeds["engine_hello_after_setup"] = b"\3" + frame(HELLO, 0, 1, seq=2)
seeds["engine_bye"] = b"\3" + frame(EAGER, 16, seq=1, progress=4) + bytes(16) + frame(BYE, progress=9)
seeds["engine_bye_with_length"] = b"\3" + frame(BYE, 8, progress=9) + bytes(8)
# A message far ahead of every posted receive (the peer skipped them): the receives fail
# as overtaken, the rendezvous send waits for a CTS until the EOF fails it.
seeds["engine_overtaken"] = b"\3" + frame(RTS, 0, 0, seq=0xFFFFFFFB)
seeds["engine_rtr_put"] = (b"\3" + frame(RTR, 16, 5, seq=4) + frame(PUT, 16, 5, seq=1) +
                           bytes(16))
seeds["engine_garbage"] = b"\3" + b"GET / HTTP/1.1\r\n\r\n" * 4

os.makedirs(out_dir, exist_ok=True)
for name, data in sorted(seeds.items()):
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)
print(f"wrote {len(seeds)} seeds to {out_dir}")
