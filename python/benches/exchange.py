"""What a numpy <-> locus exchange costs: zero-copy (independent of size) vs a replica.

    python python/benches/exchange.py

For each size: the time to hand a locus buffer to numpy (`np.asarray(b.access("host"))`,
and through DLPack), to hand a numpy array to locus (`Buffer.from_dlpack`), and, at a
location the host cannot address (WebGPU), the time of the host replica a host access
needs after the device wrote (`access_mut` at the device, then `access("host")`).
Median of repeated runs, same process.
"""

import statistics
import time

import numpy as np

import locus


def median_us(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main():
    print(f"{'location':<10} {'size':>9} {'asarray us':>11} {'from_dlpack(np) us':>19} "
          f"{'Buffer.from_dlpack us':>22} {'replica us':>11} {'replica GB/s':>13}")
    for location in locus.available():
        for size in [1 << 10, 1 << 20, 64 << 20]:
            n = size // 4
            b = locus.Buffer(location, n, dtype="float32", fill=1.0)
            host = b.access("host")
            if not host.in_place:
                # Device-resident data: every host access after a device write copies.
                def replica():
                    b.access_mut(location).close()
                    np.asarray(b.access("host"))

                r = median_us(replica, 5 if size > 1 << 20 else 50)
                print(f"{location:<10} {size:>9} {'':>11} {'':>19} {'':>22} {r:>11.1f} {size / r / 1e3:>13.2f}")
                continue
            a = median_us(lambda: np.asarray(b.access("host")), 200)
            d = median_us(lambda: np.from_dlpack(b.access("host")), 200)
            src = np.ones(n, dtype=np.float32)
            f = median_us(lambda: locus.Buffer.from_dlpack(src), 200)
            print(f"{location:<10} {size:>9} {a:>11.1f} {d:>19.1f} {f:>22.1f} {'':>11} {'':>13}")


if __name__ == "__main__":
    main()
