"""numpy's arrays from a locus resource (NEP 49, `locus.numpy_allocator`), against numpy's
own allocator in the same run: what one array's allocation and free cost at each size
(median of 7 runs of a tight loop), and, where a CUDA or HIP device is present, how fast
a 256 MiB array uploads (`Memory.write`) when numpy made it and when locus's pinned pool
did.

    python python/benches/numpy_allocator.py            # a markdown table on stdout
"""

import statistics
import time

import numpy as np

import locus

SIZES = [64, 1 << 10, 16 << 10, 64 << 10, 1 << 20, 16 << 20]


def per_array_ns(nbytes, loops):
    """Median ns of `np.empty(nbytes)` + its free, in the current handler."""
    runs = []
    for _ in range(7):
        t = time.perf_counter_ns()
        for _ in range(loops):
            a = np.empty(nbytes, dtype=np.uint8)
            del a
        runs.append((time.perf_counter_ns() - t) / loops)
    return statistics.median(runs)


def allocation_table(resource):
    print("| array | numpy's allocator (ns) | locus, arrays >= 64 KiB (ns) | locus, every array (ns) |")
    print("|---|---|---|---|")
    for n in SIZES:
        loops = 20000 if n <= 64 << 10 else 2000
        numpy_ns = per_array_ns(n, loops)
        with locus.numpy_allocator(resource):
            large_ns = per_array_ns(n, loops)
        with locus.numpy_allocator(resource, min_bytes=0):
            every_ns = per_array_ns(n, loops)
        label = f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB" if n >= 1024 else f"{n} B"
        print(f"| {label} | {numpy_ns:.0f} | {large_ns:.0f} | {every_ns:.0f} |")


def upload_gbs(gpu, a):
    m = locus.Memory(gpu, a.nbytes)
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        m.write(a)
        runs.append(time.perf_counter() - t)
    return a.nbytes / statistics.median(runs) / 1e9


def main():
    gpus = [l for l in locus.available() if l.split(":")[0] in ("cuda", "hip")]
    print(f"numpy {np.__version__}; locations {', '.join(locus.available())}\n")
    resource = None  # numpy_allocator's default: a pool over the first GPU's pinned memory, else host
    allocation_table(resource)
    if not gpus:
        print("\nNo CUDA or HIP device: no upload measured.")
        return
    n = 256 << 20
    plain = np.ones(n, dtype=np.uint8)
    with locus.numpy_allocator():
        pinned = np.ones(n, dtype=np.uint8)
    print(f"\n| 256 MiB upload to {gpus[0]} | GB/s |\n|---|---|")
    print(f"| numpy's array (pageable) | {upload_gbs(gpus[0], plain):.1f} |")
    print(f"| array made under locus.numpy_allocator() | {upload_gbs(gpus[0], pinned):.1f} |")


if __name__ == "__main__":
    main()
