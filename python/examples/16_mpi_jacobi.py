"""16 in Python: a 2-D Jacobi solve decomposed across MPI ranks by rows, with a halo
exchange every step, each rank at a location of its own; checked against numpy in one
process. The Python twin of examples/16_mpi_jacobi.rs, through mpi4py and locus.mpi.

    mpirun -np 2 python python/examples/16_mpi_jacobi.py opencl:0 webgpu:0
    mpirun -np 3 python python/examples/16_mpi_jacobi.py host openmp:0 sycl:0

Rank r runs at the (r+1)-th location given (the last one for ranks past the list; host
when none is given). Each rank's slab of rows lives at its location with one halo row
above and below (none at the grid's own edges); after each step the edge rows go to the
neighbours with non-blocking sends and receives, whatever their locations.
"""

import sys

import numpy as np

import locus
from locus.mpi import Comm


def main():
    world = Comm()  # over MPI.COMM_WORLD (mpi4py initializes MPI on import)
    me, ranks = world.rank, world.size
    names = sys.argv[1:]
    name = names[me] if me < len(names) else (names[-1] if names else "host")
    nx, ny, steps = 128, 96, 200
    # Rows [first, last) of the grid are this rank's; a halo row above and below unless at
    # the grid's edge (the kernel keeps a grid's first and last rows fixed, which is what a
    # halo, and the grid's own boundary, must be during a step).
    first, last = ny * me // ranks, ny * (me + 1) // ranks
    above, below = int(me > 0), int(me < ranks - 1)
    local_rows = above + (last - first) + below
    # One rank's failure (a location it lacks, a kernel that does not build there) stops
    # every rank, each saying which rank and why.
    error, jacobi = None, None
    try:
        locus.Buffer(name, 1)  # the location is here (a codelet would fall back to the host)
        jacobi = locus.Codelet(locus.kernels.jacobi(), [name, "host"])
    except locus.LocusError as e:
        error = e
    world.agree(error)
    print(f"rank {me}: rows {first}..{last} of {ny} at {jacobi.target} ({local_rows} rows with halos)")
    # Hot left edge, cold elsewhere (the global grid, this rank's rows and halos).
    grid = np.zeros((ny, nx), dtype=np.float32)
    grid[:, 0] = 100.0
    start = first - above
    mine = grid[start : start + local_rows].ravel()

    def at_target(values):
        b = locus.Buffer(jacobi.target, values.size, dtype="float32")
        b.copy_from(locus.Buffer.from_array(values.copy()))
        return b

    a, b = at_target(mine), at_target(mine)
    zeros = np.zeros(nx, np.float32)
    up_out, down_out, up_in, down_in = (at_target(zeros) for _ in range(4))
    for _ in range(steps):
        jacobi.call([a, b, nx, local_rows], launch=(nx, local_rows))
        # Halo exchange: my first own row goes up, my last own row goes down.
        requests = []
        if above:
            up_out.copy_from(b, nx, nx, 0)
            requests.append(world.irecv(up_in, me - 1, tag=1))
            requests.append(world.isend(up_out, me - 1, tag=2))
        if below:
            own_last = local_rows - 2
            down_out.copy_from(b, own_last * nx, nx, 0)
            requests.append(world.irecv(down_in, me + 1, tag=2))
            requests.append(world.isend(down_out, me + 1, tag=1))
        for r in requests:
            r.wait()
        if above:
            b.copy_from(up_in, 0, nx, 0)
        if below:
            b.copy_from(down_in, 0, nx, (local_rows - 1) * nx)
        a, b = b, a
    # Everyone's own rows, gathered on rank 0 in row order, against numpy in one process.
    own = locus.Buffer("host", (last - first) * nx, dtype="float32")
    own.copy_from(a, above * nx, (last - first) * nx, 0)
    result = world.gather(own, root=0, at="host")
    if result is not None:
        ref = grid.copy()
        for _ in range(steps):
            nxt = ref.copy()
            nxt[1:-1, 1:-1] = 0.25 * (ref[1:-1, :-2] + ref[1:-1, 2:] + ref[:-2, 1:-1] + ref[2:, 1:-1])
            ref = nxt
        worst = float(np.max(np.abs(result.to_numpy().reshape(ny, nx) - ref)))
        print(f"{ranks} ranks, {steps} steps on {nx} x {ny}: largest difference from one process: {worst:.2e}")
        if worst > 1e-3:
            sys.exit(f"the decomposed solve differs from one process by {worst}")


if __name__ == "__main__":
    main()
