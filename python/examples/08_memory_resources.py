"""08 in Python: memory resources (RMM's model, at any location). The raw allocation
against a pool, adaptors that count, limit and log, the resource that buffers at a
location allocate through, and a replay of the log. The classes are ``locus.mr``'s,
named as ``rmm.mr`` names them.

    python python/examples/08_memory_resources.py [LOCATION]   # default: the last available

(Timings from Python include the interpreter's call, about a microsecond per call: the
pool's gain shows where the raw allocation is slow; ``cargo run --example
08_memory_resources`` times the resources themselves.)
"""

import os
import sys
import tempfile
import time

import locus
from locus import mr


def churn(r, rounds):
    """Allocates and frees ``rounds`` x 64 blocks of 1..64 KiB from ``r``; returns
    nanoseconds per allocation + free."""
    start = time.perf_counter()
    for round_ in range(rounds):
        blocks = [
            (r.allocate(size, 64), size)
            for size in (1024 * (1 + (i * 7 + round_) % 64) for i in range(64))
        ]
        for ptr, size in blocks:
            r.deallocate(ptr, size)
    return (time.perf_counter() - start) * 1e9 / (rounds * 64)


def main():
    at = sys.argv[1] if len(sys.argv) > 1 else locus.available()[-1]

    # 1. The upstream resource is the backend's own allocation call; a pool takes large
    #    blocks from it once and hands out ranges of them.
    #    (Each is run once untimed first: the pool's first chunk and the first touch of
    #    fresh memory are paid there, as a long-running program pays them once.)
    upstream = mr.UpstreamMemoryResource(at)
    pool = mr.PoolMemoryResource(upstream, initial_pool_size="8MiB", maximum_pool_size="1GiB")
    churn(upstream, 5)
    churn(pool, 5)
    raw_ns = churn(upstream, 50)
    pool_ns = churn(pool, 50)
    print(f"{upstream!r}: {raw_ns:.0f} ns per allocation + free")
    print(
        f"{pool!r}: {pool_ns:.0f} ns ({raw_ns / pool_ns:.1f}x faster), "
        f"holding {pool.pool_size() >> 20} MiB from upstream"
    )

    # 2. Adaptors wrap any resource. Make the counted pool the resource at `at`: every
    #    buffer made there now allocates through it.
    counted = mr.StatisticsResourceAdaptor(pool)
    previous = mr.set_per_device_resource(at, counted)
    a = locus.Buffer(at, 1 << 20, dtype="float32", fill=1.0)
    b = locus.Buffer(at, 1 << 18, dtype="uint32", fill=2)
    t = counted.allocation_counts
    print(
        f"two buffers at {at}: {t['current_count']} allocations, "
        f"{t['current_bytes']} bytes live"
    )
    assert t["current_bytes"] == a.nbytes + b.nbytes
    del a, b
    t = counted.allocation_counts
    print(
        f"after they are dropped: {t['current_bytes']} bytes live, peak "
        f"{t['peak_bytes']} bytes, {t['total_count']} allocations in all"
    )
    mr.set_per_device_resource(at, previous)

    # 3. A budget: over it, a clear error instead of an out-of-memory crash.
    limited = mr.LimitingResourceAdaptor(pool, allocation_limit=1 << 20)
    first = limited.allocate(768 << 10, 64)
    try:
        limited.allocate(512 << 10, 64)
        raise AssertionError("the budget holds 1 MiB")
    except MemoryError as e:
        print(f"over budget: {e}")
    limited.deallocate(first, 768 << 10)

    # 4. A log of every allocation and free (CSV), replayed against another resource.
    log = os.path.join(tempfile.gettempdir(), f"locus-08-{os.getpid()}.csv")
    logging = mr.LoggingResourceAdaptor(pool, log_file_name=log)
    churn(logging, 4)
    del logging
    report = mr.replay(log, upstream)
    print(
        f"replayed {report['operations']} operations from {log} on {upstream!r}: "
        f"{report['seconds'] * 1e3:.3f} ms, peak {report['peak_live_bytes'] >> 10} KiB live"
    )
    os.remove(log)
    print(
        f"(`locus replay LOG.csv --location {at} --resource pool` does the same from "
        "the command line)"
    )

    # 5. Wholly free chunks go back to upstream.
    print(f"release(): {pool.release() >> 20} MiB given back")


if __name__ == "__main__":
    main()
