"""Stores and Communicator.init without a launcher, in one process: a TcpStoreServer,
clients from connect_tcp_store and open_file_store; three ranks as threads (init and the
collectives release the GIL, so they run side by side)."""
import sys
import tempfile
import threading

import numpy as np

import chorus
from harness import check, check_equal, expect_error


def test_store_api(store):
    store.set("k", b"\x00\x01value")
    check(store.get("k") == b"\x00\x01value", "set/get bytes")
    store.set("s", "text")
    check(store.get("s", timeout=1) == b"text", "str values are stored as UTF-8")
    store.set("b", bytearray(b"ab") + memoryview(b"cd").tobytes())
    store.set("u", np.arange(3, dtype=np.uint8))
    check(store.get("b") == b"abcd" and store.get("u") == b"\x00\x01\x02", "buffers")
    check(store.add("n", 2) == 2 and store.add("n", 3) == 5, "add")
    check(store.check("k") and not store.check("missing"), "check")
    store.wait(["k", "s"], timeout=1)
    expect_error(chorus.TimeoutError, lambda: store.get("missing", timeout=0.2))
    expect_error(chorus.InvalidArgumentError, lambda: store.set("x", 12), "value")


def run_ranks(size, make_store, transport=None):
    results, errors = [None] * size, []

    def rank_main(rank):
        try:
            # Options fields as keywords: a timeout in seconds, the rest as their variable's
            # text, int or bool.
            comm = chorus.Communicator.init(rank, size, make_store(), timeout=30,
                                            transport=transport, chunk_bytes="256K",
                                            desync_check=True, flight_recorder_size=8)
            if transport is not None:
                check(comm.transport_name == transport, f"transport {comm.transport_name}")
            x = np.full(8, rank + 1, dtype=np.int64)
            comm.all_reduce(x)
            results[rank] = (comm.rank, comm.size, x.copy())
            comm.close()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(f"rank {rank}: {e!r}")

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    check(not errors and not any(t.is_alive() for t in threads), f"ranks failed: {errors}")
    for rank, (r, n, x) in enumerate(results):
        check(r == rank and n == size, "rank and size")
        check_equal(x, np.full(8, size * (size + 1) // 2), "all_reduce across threads")


def main():
    with chorus.TcpStoreServer(host="127.0.0.1") as server:
        check(server.port > 0, "the server bound a port")
        test_store_api(chorus.connect_tcp_store("127.0.0.1", server.port, timeout=10))
        run_ranks(3, lambda: chorus.connect_tcp_store("127.0.0.1", server.port))
    with tempfile.TemporaryDirectory() as d:
        test_store_api(chorus.open_file_store(d))
    with tempfile.TemporaryDirectory() as d:
        run_ranks(2, lambda: chorus.open_file_store(d))
    with tempfile.TemporaryDirectory() as d:
        run_ranks(2, lambda: chorus.open_file_store(d), transport="tcp")
    expect_error(chorus.InvalidArgumentError, lambda: chorus.Communicator.init(2, 2, None),
                 "store")
    with tempfile.TemporaryDirectory() as d:
        store = chorus.open_file_store(d)
        expect_error(chorus.InvalidArgumentError,
                     lambda: chorus.Communicator.init(0, 1, store, transport="pigeon"),
                     "Options::transport")
        expect_error(chorus.InvalidArgumentError,
                     lambda: chorus.Communicator.init(0, 1, store, no_such_option=1),
                     "no_such_option")
    print("store test passed")


if __name__ == "__main__":
    sys.exit(main())
