"""Is the GIL released? 8 Python threads each doing copies and kernels on their own
buffers, against 1 thread doing the same 8 units of work in turn (same process, median
of 5). A speed-up above 1 means the threads ran at once; with the GIL held through the
copies and kernels it would be 1 or below.

    python python/benches/threads.py
"""

import statistics
import threading
import time

import numpy as np

import locus

import os

N = int(os.environ.get("LOCUS_THREADS_N", 1 << 16))  # 256 KiB of float32 per buffer
UNITS = 8
REPS = 20  # units each thread (or the one thread, per buffer set) runs in a row


def unit(location, saxpy, x, y, z):
    """One unit: a range copy, a kernel, another copy, and a wait for all of it (one
    element read back to the host)."""
    z.copy_from(y)
    saxpy.call([1.5, x, z, N], launch=N)
    y.copy_from(z, src_start=0, count=N // 2)
    y.to_numpy()


def run(location, threads):
    saxpy = locus.Codelet(locus.kernels.saxpy(), [location])
    work = [
        (
            locus.Buffer(location, N, dtype="float32", fill=1.0),
            locus.Buffer(location, N, dtype="float32", fill=2.0),
            locus.Buffer(location, N, dtype="float32"),
        )
        for _ in range(UNITS)
    ]
    for x, y, z in work:  # warm-up: kernels built, replicas made
        unit(location, saxpy, x, y, z)

    def many(items):
        for x, y, z in items:
            for _ in range(REPS):
                unit(location, saxpy, x, y, z)

    times = []
    for _ in range(5):
        t = time.perf_counter()
        if threads == 1:
            many(work)
        else:
            ts = [threading.Thread(target=many, args=([w],)) for w in work]
            for th in ts:
                th.start()
            for th in ts:
                th.join()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    print(f"{UNITS} x {REPS} units (copy, saxpy, copy, read back; {N * 4 >> 10} KiB buffers): 1 thread vs {UNITS} threads")
    print(f"{'location':<10} {'1 thread ms':>12} {f'{UNITS} threads ms':>13} {'speed-up':>9}")
    for location in locus.available():
        one = run(location, 1)
        many = run(location, UNITS)
        print(f"{location:<10} {one * 1e3:>12.1f} {many * 1e3:>13.1f} {one / many:>9.2f}")


if __name__ == "__main__":
    main()
