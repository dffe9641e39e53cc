"""What each rank runs for test_mpi.py: ``mpirun -np N python mpi_ranks.py SCENARIO``.

Every scenario asserts the data on every rank and ends by printing ``OK <scenario>``
from each rank; test_mpi.py counts those lines.
"""

import os
import sys
import traceback

import numpy as np

import locus
from locus.mpi import Comm, MpiError

SIZES = (1, 1000, 262147)


def at(location, values):
    """A buffer at `location` whose current data is there (not a host replica)."""
    values = np.ascontiguousarray(values)
    b = locus.Buffer(location, values.size, dtype=str(values.dtype))
    b.copy_from(locus.Buffer.from_array(values.copy()))
    return b


def refused(call, *phrases):
    """Runs `call`, which must raise MpiError saying each of `phrases`; the error."""
    try:
        call()
    except MpiError as e:
        assert all(p in str(e) for p in phrases), e
        return e
    raise AssertionError(f"no error; expected one saying {phrases}")


def pattern(n, seed, dtype="float32"):
    return ((np.arange(n) * 7 + seed) % 1000).astype(dtype)


def pairs(comm):
    """Every ordered pair of locations between ranks 0 and 1, three sizes, and element
    types beyond float32; each buffer's data current at its own location."""
    locations = locus.available()
    for src in locations:
        for dst in locations:
            for n in SIZES:
                for dtype in ("float32",) if n != 1000 else ("float32", "float64", "int8", "float16"):
                    expect = pattern(n, len(src) + 3 * len(dst), dtype)
                    if comm.rank == 0:
                        b = at(src, expect)
                        comm.send(b, 1, tag=5)
                        assert (b.to_numpy() == expect).all(), "the sender's data changed"
                    else:
                        b = at(dst, np.full(n, 99, dtype))
                        comm.recv(b, 0, tag=5)
                        got = b.to_numpy()
                        assert b.location == dst
                        assert (got == expect).all(), f"{src} -> {dst}, {n} {dtype}: {got[:5]} != {expect[:5]}"
    # A buffer's data goes from where it is current: after a host write, from the host.
    if comm.rank == 0:
        b = at(locations[-1], pattern(10, 1))
        with b.access_mut("host") as h:
            np.asarray(h)[:] += 1
        assert comm.route(b)["wire"] == ("staged" if comm.policy == "staged" else "mapped")
        comm.send(b, 1)
    else:
        b = locus.Buffer(locations[-1], 10, dtype="float32")
        comm.recv(b, 0)
        assert (b.to_numpy() == pattern(10, 1) + 1).all()


def routes(comm):
    """Routes explain themselves: mapped where the host reaches the data in place."""
    for location in locus.available():
        r = comm.route(at(location, pattern(4, 0)))
        assert r["wire"] in ("mapped", "staged", "device-aware"), r
        assert r["reason"], r
        assert r["location"] == location, r
        if comm.policy == "staged":
            assert r["wire"] == "staged", r
        elif locus.route(location, "host")["kind"] == "in-place":
            assert r["wire"] == "mapped", r
        print(f"rank {comm.rank}: {location}: {r['wire']} ({r['reason']})")


def mismatches(comm):
    """A type and a length mismatch: an error on both ranks naming both sides, the
    receiver's data untouched, and the next message goes through."""
    location = locus.available()[-1]
    for sent, held in (("float32", "int32"), (10, 11)):
        if comm.rank == 0:
            b = at(location, pattern(10, 2, sent if isinstance(sent, str) else "float32"))
            e = refused(lambda: comm.send(b, 1, tag=9), "rank 1 expects", "nothing was moved")
            assert e.rank == 0 and e.call == "send"
        else:
            n = held if isinstance(held, int) else 10
            dtype = held if isinstance(held, str) else "float32"
            b = at(location, np.full(n, 42, dtype))
            refused(lambda: comm.recv(b, 0, tag=9), "rank 0 sent", "this buffer holds")
            assert (b.to_numpy() == 42).all(), "a refused message wrote the buffer"
    # The next message goes through.
    if comm.rank == 0:
        comm.send(at(location, pattern(5, 3)), 1, tag=9)
    else:
        b = locus.Buffer(location, 5, dtype="float32")
        comm.recv(b, 0, tag=9)
        assert (b.to_numpy() == pattern(5, 3)).all()
    # Bad peers and tags are errors before anything is posted.
    for peer, tag in ((comm.rank, 0), (comm.size, 0), (1 - comm.rank, 40000), (1 - comm.rank, -1)):
        e = refused(lambda: comm.send(at("host", pattern(1, 0)), peer, tag), "send failed")
        assert "rank" in e.message or "tag" in e.message, e


def silent_peer(comm):
    """Rank 1 never answers: rank 0's receive is an error within the time limit."""
    if comm.rank == 0:
        b = locus.Buffer("host", 8, dtype="float32", fill=1.0)
        limit, comm.timeout = comm.timeout, 2.0
        try:
            refused(lambda: comm.recv(b, 1, tag=11), "rank 1 did not answer within 2 s", "LOCUS_MPI_TIMEOUT_S")
        finally:
            comm.timeout = limit
        assert (b.to_numpy() == 1.0).all()


def dead_rank(comm):
    """Rank 1 dies without a word (mpirun --enable-recovery keeps rank 0 running): rank
    0's receive is an error within the time limit, naming rank 1; its buffer keeps its data."""
    import os

    comm.barrier()  # both ranks past MPI's start-up, which nothing here bounds
    if comm.rank == 1:
        os._exit(0)
    comm.timeout = 2.0
    b = locus.Buffer("host", 8, dtype="float32", fill=1.5)
    refused(lambda: comm.recv(b, 1, tag=12), "rank 1 did not answer within 2 s")
    assert (b.to_numpy() == 1.5).all()
    return "alone"


def missing_location(comm):
    """A location missing on one rank: agree() stops every rank, naming it."""
    error = None
    if comm.rank == 1:
        try:
            locus.Buffer("cuda:7", 8)
        except locus.LocusError as e:
            error = e
    refused(lambda: comm.agree(error), "rank 1:", "cuda:7")
    comm.agree(None)  # nobody failed: nothing raised


def ring(comm):
    """Non-blocking ring over three ranks, each at its own location: isend to the right,
    irecv from the left, both posted before either is waited for."""
    locations = locus.available()
    mine = locations[(2 * comm.rank + 1) % len(locations)]
    right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
    for n in SIZES:
        out = at(mine, pattern(n, comm.rank))
        into = at(mine, np.zeros(n, "float32"))
        recv = comm.irecv(into, left, tag=2)
        send = comm.isend(out, right, tag=2)
        send.wait()
        recv.wait()
        assert recv.done and send.test()
        assert (into.to_numpy() == pattern(n, left)).all(), f"rank {comm.rank} at {mine}, {n}"


def collectives(comm):
    """Broadcast, gather, all-gather and sum all-reduce over three ranks, each rank at
    its own location; a float16 sum and a bad root are errors on every rank."""
    locations = locus.available()
    mine = locations[(3 * comm.rank + 2) % len(locations)]
    for n in SIZES:
        b = at(mine, pattern(n, 50) if comm.rank == 1 else np.zeros(n, "float32"))
        comm.broadcast(b, root=1)
        assert (b.to_numpy() == pattern(n, 50)).all(), f"broadcast at {mine}, {n}"

        s = at(mine, pattern(n, comm.rank))
        comm.all_reduce_sum(s)
        want = sum(pattern(n, r) for r in range(comm.size))
        assert (s.to_numpy() == want).all(), f"all_reduce_sum at {mine}, {n}"

        i = at(mine, np.arange(n, dtype="int64") * (comm.rank + 1))
        comm.all_reduce_sum(i)
        assert (i.to_numpy() == np.arange(n, dtype="int64") * 6).all()

    # Lengths differ per rank: rank r gives r + 2 elements.
    part = at(mine, np.full(comm.rank + 2, comm.rank, "float32"))
    want = np.concatenate([np.full(r + 2, r, "float32") for r in range(comm.size)])
    got = comm.gather(part, root=2, at=locations[-1])
    if comm.rank == 2:
        assert got.location == locations[-1] and (got.to_numpy() == want).all(), got
    else:
        assert got is None
    every = comm.all_gather(part, at=mine)
    assert every.location == mine and (every.to_numpy() == want).all()

    for bad in (lambda: comm.all_reduce_sum(locus.Buffer(mine, 4, dtype="float16")),
                lambda: comm.broadcast(locus.Buffer(mine, 4), root=comm.size)):
        refused(bad, "every rank stopped here")
    # One element type on every rank, or an error on every rank.
    mixed = locus.Buffer(mine, 4, dtype="int32" if comm.rank == 0 else "float32")
    refused(lambda: comm.broadcast(mixed, root=0), "nothing was moved")


def plain_mpi4py(comm):
    """A buffer through mpi4py's own calls, by a handle: in place where the host reaches
    the data, through a host replica otherwise."""
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    for location in locus.available():
        if world.rank == 0:
            b = at(location, pattern(1000, 4))
            with b.access("host") as h:
                world.Send(h, dest=1, tag=1)
        else:
            b = at(location, np.zeros(1000, "float32"))
            with b.access_mut("host") as h:
                world.Recv(h, source=0, tag=1)
            assert (b.to_numpy() == pattern(1000, 4)).all(), location


def regions(comm):
    """Region messages: rank 0's column 7 into rank 1's last column at every pair of
    locations (blocking and not; the sender writes its grid as soon as isend_region
    returns), a halo exchange with receives posted before sends on one grid, and
    refusals that write nothing."""
    rows, cols = 24, 16
    locations = locus.available()
    for i, src in enumerate(locations):
        for j, dst in enumerate(locations):
            sent = pattern(rows * cols, i * 31 + j).reshape(rows, cols)
            blocking = (i + j) % 2 == 0
            if comm.rank == 0:
                g = locus.Buffer.from_array(sent).copy(src)
                if blocking:
                    comm.send_region(g, g.region[:, 7], 1, tag=11)
                else:
                    request = comm.isend_region(g, g.region[:, 7], 1, tag=11)
                    g.fill(9.0)
                    request.wait()
            else:
                g = locus.Buffer(dst, (rows, cols), dtype="float32", fill=-1.0)
                if blocking:
                    comm.recv_region(g, g.region[:, -1], 0, tag=11)
                else:
                    comm.irecv_region(g, g.region[:, -1], 0, tag=11).wait()
                want = np.full((rows, cols), -1.0, "float32")
                want[:, -1] = sent[:, 7]
                assert (g.to_numpy() == want).all(), f"{src} -> {dst} (blocking: {blocking})"
    # Receives before sends on one grid, the ranks at two locations.
    me, peer = comm.rank, 1 - comm.rank
    mine = pattern(rows * cols, 40 + me).reshape(rows, cols)
    g = locus.Buffer.from_array(mine).copy(locations[(3 * me) % len(locations)])
    halo, edge = (g.region[:, -1], g.region[:, -2]) if me == 0 else (g.region[:, 0], g.region[:, 1])
    receiving = comm.irecv_region(g, halo, peer, tag=12)
    sending = comm.isend_region(g, edge, peer, tag=12)
    sending.wait()
    receiving.wait()
    theirs = pattern(rows * cols, 40 + peer).reshape(rows, cols)
    want = mine.copy()
    if me == 0:
        want[:, -1] = theirs[:, 1]
    else:
        want[:, 0] = theirs[:, -2]
    assert (g.to_numpy() == want).all()
    # Refusals: a region past the buffer raises ValueError before anything is sent; a
    # receiver's region one element short refuses the message on both ranks.
    g = locus.Buffer(locations[-1], (rows, cols), dtype="float32", fill=5.0)
    if comm.rank == 0:
        try:
            comm.send_region(g, locus.Region.rect((0, rows, 0), (4, 1, 1), cols * 4), 1, tag=13)
            raise AssertionError("a region past the buffer was sent")
        except ValueError as e:
            assert "Comm.send_region" in str(e) and "past the memory" in str(e), e
        refused(lambda: comm.send_region(g, g.region[:, 2], 1, tag=14), "expects")
    else:
        refused(lambda: comm.recv_region(g, g.region[1:, 3], 0, tag=14), "nothing was moved")
        assert (g.to_numpy() == 5.0).all(), "a refused message wrote the grid"


def main():
    scenario = sys.argv[1]
    comm = Comm()
    try:
        if globals()[scenario](comm) == "alone":  # the other ranks are gone
            print(f"OK {scenario} rank {comm.rank}", flush=True)
            # Without MPI_Finalize (mpi4py's, at exit): it waits on the dead rank.
            os._exit(0)
    except BaseException:
        # One rank's failure ends the job at once (not after the others' time limit).
        traceback.print_exc()
        sys.stderr.flush()
        from mpi4py import MPI

        MPI.COMM_WORLD.Abort(1)
    comm.barrier()
    print(f"OK {scenario} rank {comm.rank}", flush=True)
    comm.free()


if __name__ == "__main__":
    main()
