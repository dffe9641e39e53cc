"""18 in Python: a 2-D Jacobi solve cut across MPI ranks in both dimensions, each rank at
a location of its own, the halo rows and columns sent and received as regions of each
rank's one grid (``grid.region[:, -1]``): no face buffers, no copies the program makes.
The Python twin of examples/18_mpi_halo_2d.rs, through mpi4py and locus.mpi.

    mpirun -np 4 python python/examples/18_mpi_halo_2d.py host openmp:0 opencl:0 webgpu:0

The ranks form px x py tiles (px the larger factor: two ranks split the columns, so
column faces cross). Rank r runs at the (r+1)-th location given (the last one for ranks
past the list; host when none is given). Each tile has a halo on every side that has a
neighbour; every step the kernel updates the tile's inside, then each rank posts its
receives into the halos and its sends of its edges, all on the one grid, and waits.
"""

import sys

import numpy as np

import locus
from locus.mpi import Comm


def tiles(ranks):
    """(px, py): px * py = ranks, px the larger factor."""
    py = max(d for d in range(1, ranks + 1) if ranks % d == 0 and d * d <= ranks)
    return ranks // py, py


def tile_of(rank, px, py, nx, ny):
    """This rank's rows and columns of the global grid, its neighbours (up, down, left,
    right; None at the grid's edge) and its halo widths."""
    tx, ty = rank % px, rank // px
    rows = (ny * ty // py, ny * (ty + 1) // py)
    cols = (nx * tx // px, nx * (tx + 1) // px)
    nxt = [
        rank - px if ty > 0 else None,
        rank + px if ty + 1 < py else None,
        rank - 1 if tx > 0 else None,
        rank + 1 if tx + 1 < px else None,
    ]
    return rows, cols, nxt, [int(n is not None) for n in nxt]


def main():
    world = Comm()  # over MPI.COMM_WORLD (mpi4py initializes MPI on import)
    me, ranks = world.rank, world.size
    names = sys.argv[1:]
    name = names[me] if me < len(names) else (names[-1] if names else "host")
    nx, ny, steps = 96, 80, 150
    px, py = tiles(ranks)
    rows, cols, nxt, (up, down, left, right) = tile_of(me, px, py, nx, ny)
    error, jacobi = None, None
    try:
        locus.Buffer(name, 1)  # the location is here (a codelet would fall back to the host)
        jacobi = locus.Codelet(locus.kernels.jacobi(), [name, "host"])
    except locus.LocusError as e:
        error = e
    world.agree(error)  # one rank's failure stops every rank, each saying why
    h, w = up + rows[1] - rows[0] + down, left + cols[1] - cols[0] + right
    print(f"rank {me}: tile of {px} x {py}, rows {rows}, columns {cols} at {jacobi.target}")
    # A hot left edge and a rough start inside, so that every face carries heat at once.
    y, x = np.mgrid[0:ny, 0:nx]
    grid = ((x * 7 + y * 13) % 17).astype(np.float32)
    grid[:, 0] = 100.0
    mine = grid[rows[0] - up : rows[1] + down, cols[0] - left : cols[1] + right]
    a = locus.Buffer.from_array(np.ascontiguousarray(mine)).copy(jacobi.target)
    b = locus.Buffer.from_array(np.ascontiguousarray(mine)).copy(jacobi.target)
    for _ in range(steps):
        jacobi.call([a, b, w, h], launch=(w, h))
        # For each side: (the edge I send, the halo I receive into); a message is tagged
        # by the side it leaves from and received under the opposite side's tag.
        inner_rows, inner_cols = slice(up, h - down), slice(left, w - right)
        faces = [
            (b.region[up, inner_cols], b.region[0, inner_cols]),
            (b.region[h - 1 - down, inner_cols], b.region[h - 1, inner_cols]),
            (b.region[inner_rows, left], b.region[inner_rows, 0]),
            (b.region[inner_rows, w - 1 - right], b.region[inner_rows, w - 1]),
        ]
        receives = [world.irecv_region(b, halo, nxt[s], tag=s ^ 1) for s, (_, halo) in enumerate(faces) if nxt[s] is not None]
        sends = [world.isend_region(b, edge, nxt[s], tag=s) for s, (edge, _) in enumerate(faces) if nxt[s] is not None]
        for r in receives + sends:
            r.wait()
        a, b = b, a
    # Every tile's own cells go to their place in the global grid on rank 0, region to region.
    own = a.region[up : h - down, left : w - right]
    if me != 0:
        world.send_region(a, own, 0, tag=9)
        return
    result = locus.Buffer("host", (ny, nx), dtype="float32")
    result.copy_region_from(a, own, result.region[rows[0] : rows[1], cols[0] : cols[1]])
    for r in range(1, ranks):
        (r0, r1), (c0, c1), _, _ = tile_of(r, px, py, nx, ny)
        world.recv_region(result, result.region[r0:r1, c0:c1], r, tag=9)
    ref = grid.copy()
    for _ in range(steps):
        nxt_ref = ref.copy()
        nxt_ref[1:-1, 1:-1] = 0.25 * (ref[1:-1, :-2] + ref[1:-1, 2:] + ref[:-2, 1:-1] + ref[2:, 1:-1])
        ref = nxt_ref
    worst = float(np.max(np.abs(result.to_numpy() - ref)))
    print(f"{ranks} ranks as {px} x {py} tiles, {steps} steps on {nx} x {ny}: largest difference from one process: {worst:.2e}")
    if worst > 1e-3:
        sys.exit(f"the decomposed solve differs from one process by {worst}")


if __name__ == "__main__":
    main()
