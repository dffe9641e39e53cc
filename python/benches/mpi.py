"""locus.mpi against mpi4py's own Send / Recv, in the same run, between two ranks.

    mpirun -np 2 python python/benches/mpi.py [LOCATION ...]    # default: host

For each location (the same on both ranks) and size: the bandwidth of `Comm.send` /
`Comm.recv` of a locus buffer there, next to mpi4py's `Send` / `Recv` of a numpy array of
the same size (the floor: what MPI does host to host), and the ratio; then the one-way
latency of a 4-byte ping-pong both ways. Best of three runs of `repeat` messages each
(an acknowledgement closes each run). On a machine with fewer cores than two ranks need,
both ranks share them: expect noise.
"""

import sys
import time

import numpy as np
from mpi4py import MPI

import locus
from locus.mpi import Comm

SIZES = (4 << 10, 1 << 20, 64 << 20)


def repeat_for(nbytes):
    return max(3, min(200, (256 << 20) // nbytes))


def bandwidth(world, send, recv, nbytes):
    """Best GB/s over three runs of `repeat` messages from rank 0 to rank 1."""
    ack = np.zeros(1, np.uint8)
    repeat = repeat_for(nbytes)
    best = 0.0
    for _ in range(3):
        world.Barrier()
        t = time.perf_counter()
        for _ in range(repeat):
            send() if world.rank == 0 else recv()
        if world.rank == 0:
            world.Recv(ack, source=1, tag=99)
        else:
            world.Send(ack, dest=0, tag=99)
        best = max(best, nbytes * repeat / (time.perf_counter() - t) / 1e9)
    return best


def latency(world, send, recv):
    """Half the best ping-pong round trip, microseconds."""
    best = float("inf")
    for _ in range(3):
        world.Barrier()
        t = time.perf_counter()
        for _ in range(100):
            if world.rank == 0:
                send()
                recv()
            else:
                recv()
                send()
        best = min(best, (time.perf_counter() - t) / 200 * 1e6)
    return best


def main():
    world = MPI.COMM_WORLD
    if world.size != 2:
        sys.exit("run with mpirun -np 2")
    comm = Comm(world)
    peer = 1 - world.rank
    locations = sys.argv[1:] or ["host"]
    if world.rank == 0:
        print(f"{comm.library}; locus.mpi against mpi4py Send/Recv, GB/s (best of 3)")
        print(f"{'location':10} {'size':>8} {'wire':>7} {'locus':>8} {'mpi4py':>8} {'ratio':>6}")
    for location in locations:
        for nbytes in SIZES:
            n = nbytes // 4
            b = locus.Buffer(location, n, dtype="float32")
            b.copy_from(locus.Buffer.from_array(np.ones(n, np.float32)))
            raw = np.ones(n, np.float32)
            ours = bandwidth(world, lambda: comm.send(b, 1, 1), lambda: comm.recv(b, 0, 1), nbytes)
            theirs = bandwidth(world, lambda: world.Send(raw, 1, 1), lambda: world.Recv(raw, 0, 1), nbytes)
            if world.rank == 0:
                size = f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"
                wire = comm.route(b)["wire"]
                print(f"{location:10} {size:>8} {wire:>7} {ours:8.2f} {theirs:8.2f} {ours / theirs:6.2f}")
        b = locus.Buffer(location, 1, dtype="float32")
        raw = np.ones(1, np.float32)
        ours = latency(world, lambda: comm.send(b, peer, 2), lambda: comm.recv(b, peer, 2))
        theirs = latency(world, lambda: world.Send(raw, peer, 2), lambda: world.Recv(raw, peer, 2))
        if world.rank == 0:
            print(f"{location:10} latency (4 B): locus {ours:.1f} us, mpi4py {theirs:.1f} us")
    comm.free()


if __name__ == "__main__":
    main()
