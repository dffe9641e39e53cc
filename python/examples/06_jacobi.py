"""06 in Python: many Jacobi iterations on a target chosen at run time, through the
kernel locus ships. The grid moves to the target once, stays there for every iteration,
and only the result comes back.

    python python/examples/06_jacobi.py [LOCATION]     # default: the last available one
"""

import sys

import numpy as np

import locus


def main():
    target = sys.argv[1] if len(sys.argv) > 1 else locus.available()[-1]
    nx, ny, steps = 128, 128, 50
    jacobi = locus.Codelet(locus.kernels.jacobi(), [target, "host"])
    print(f"{steps} Jacobi steps on a {nx} x {ny} grid at {jacobi.target}")
    grid = np.zeros((ny, nx), dtype=np.float32)
    grid[:, 0] = 100.0  # hot left edge
    a = locus.Buffer.from_array(grid.ravel().copy())
    b = locus.Buffer("host", nx * ny, dtype="float32")
    moved = 0
    for _ in range(steps):
        moved += jacobi.call([a, b, nx, ny], launch=(nx, ny))["bytes_moved"]
        a, b = b, a
    result = a.to_numpy().reshape(ny, nx)
    # The host reference, in numpy.
    ref = grid.copy()
    for _ in range(steps):
        nxt = ref.copy()
        nxt[1:-1, 1:-1] = 0.25 * (ref[1:-1, :-2] + ref[1:-1, 2:] + ref[:-2, 1:-1] + ref[2:, 1:-1])
        ref = nxt
    worst = float(np.max(np.abs(result - ref)))
    print(f"bytes moved by the {steps} calls: {moved} (the grids went to {jacobi.target} once)")
    print(f"row 64, first columns: {np.round(result[64, :6], 3)}; worst difference from numpy {worst:.1e}")
    if worst > 1e-3:
        sys.exit(1)


if __name__ == "__main__":
    main()
