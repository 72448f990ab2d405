"""Sub-communicators from Python: split by parity (with keys reversing the order),
NO_COLOR -> None, new_group -> None for ranks not listed, collectives on the parts next
to the parent, bad arguments."""
import numpy as np

import chorus
from harness import check, check_equal, expect_error, main


def members(sub, parent_rank):
    """The parent ranks of sub's members, in sub's rank order (via all_gather)."""
    out = np.zeros(sub.size, dtype=np.int32)
    sub.all_gather(np.array([parent_rank], dtype=np.int32), out)
    return list(out)


def test_split_by_parity(comm):
    r, n = comm.rank, comm.size
    half = comm.split(r % 2, n - r)  # reversed keys: highest parent rank first
    check(isinstance(half, chorus.Communicator), "split returns a Communicator")
    expected = sorted((q for q in range(n) if q % 2 == r % 2), reverse=True)
    check(members(half, r) == expected, f"members {members(half, r)} != {expected}")
    x = np.full(5, r, dtype=np.float64)
    half.all_reduce(x)
    check_equal(x, np.full(5, float(sum(expected))), "all_reduce on the half")
    y = np.full(3, 1, dtype=np.int64)
    comm.all_reduce(y)  # the parent still works
    check_equal(y, np.full(3, n), "parent after split")
    half.close()


def test_no_color(comm):
    sub = comm.split(chorus.NO_COLOR if comm.rank == 0 else 1, 0)
    if comm.rank == 0:
        check(sub is None, "NO_COLOR gives None")
    else:
        check(sub.size == comm.size - 1 and sub.rank == comm.rank - 1, "the others")
        sub.barrier()


def test_new_group(comm):
    ranks = [q for q in range(comm.size) if q % 2 == 0][::-1]  # e.g. [2, 0]
    group = comm.new_group(ranks)
    if comm.rank not in ranks:
        check(group is None, "not listed gives None")
        return
    check(group.rank == ranks.index(comm.rank), "new rank = position in the list")
    check(members(group, comm.rank) == ranks, "members in list order")
    b = np.arange(4, dtype=np.uint8) if group.rank == 0 else np.zeros(4, dtype=np.uint8)
    group.broadcast(b, root=0)
    check_equal(b, np.arange(4, dtype=np.uint8), "broadcast on the group")


def test_bad_arguments(comm):
    Invalid = chorus.InvalidArgumentError
    expect_error(Invalid, lambda: comm.split(-2, 0), "color")
    expect_error(Invalid, lambda: comm.new_group([]), "empty")
    expect_error(Invalid, lambda: comm.new_group([0, comm.size]), str(comm.size))
    expect_error(Invalid, lambda: comm.new_group("01"), "ranks")
    comm.barrier()


if __name__ == "__main__":
    main([test_split_by_parity, test_no_color, test_new_group, test_bad_arguments])
