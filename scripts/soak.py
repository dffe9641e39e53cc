#!/usr/bin/env python3
"""A soak of locus as a busy Python program uses it: random operations at every location
(allocations, copies between every pair, asynchronous copies with events, typed buffers
and their host views, pools and failure callbacks, shared memory opened and dropped,
DLPack to numpy) for MINUTES minutes, sampling the process's resident memory, open
descriptors, threads and the /dev/shm objects every 30 s. After a warm-up (the first
fifth), every sample must stay flat: resident memory within 10% + 32 MiB of the first
sample after warm-up, descriptors and threads within a few, no locus object left in
/dev/shm. Exit status 1 otherwise; the table is printed for the record.

    python3 scripts/soak.py [MINUTES] [LOCATION ...]    # default: 10, every location
"""

import glob
import os
import random
import sys
import time

import numpy as np

import locus
from locus import mr


# SOAK_OPS=0,3 runs only those operations (to find which one a growth comes from).
OPS = [int(o) for o in os.environ.get("SOAK_OPS", "0,1,2,3,4,5,6,7").split(",")]


def sample():
    rss = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return {
        "rss_mib": rss / (1 << 20),
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": len(os.listdir("/proc/self/task")),
        "shm": len(glob.glob("/dev/shm/locus-*")),
    }


def one_round(rng, locations, counts):
    at = rng.choice(locations)
    to = rng.choice(locations)
    n = rng.choice([64, 4096, 1 << 16, 1 << 20])
    op = rng.choice(OPS)
    if op == 0:
        a, b = locus.Memory(at, n), locus.Memory(to, n)
        a.set(7, n)
        a.copy_to(b, n)
        assert b.read(8) == b"\x07" * 8
    elif op == 1:
        a, b = locus.Memory(at, n), locus.Memory(to, n)
        gate, trigger = locus.Event.user()
        e = a.copy_to_async(b, n, after=[gate])
        trigger.complete()
        e.wait()
    elif op == 2:
        buf = locus.Buffer(at, n // 4, dtype="float32", fill=1.5)
        view = np.asarray(buf.access_mut("host"))
        view[:4] = 2.5
        del view
        assert buf.to_numpy()[0] == 2.5
    elif op == 3:
        pool = mr.PoolMemoryResource(mr.UpstreamMemoryResource(at), initial_pool_size=1 << 20)
        held = [pool.allocate(rng.choice([64, 1000, 4096])) for _ in range(16)]
        for p in held:
            pool.deallocate(p, 64)
    elif op == 4:
        limited = mr.LimitingResourceAdaptor(mr.UpstreamMemoryResource(at), 8192)
        cache = [limited.allocate(4096), limited.allocate(4096)]

        def drop(_):
            if cache:
                limited.deallocate(cache.pop(), 4096)
                return True
            return False

        retried = mr.FailureCallbackResourceAdaptor(limited, drop)
        retried.deallocate(retried.allocate(4096), 4096)
        for p in cache:
            limited.deallocate(p, 4096)
    elif op == 5:
        shared = locus.Memory.shared("host", n)
        shared.set(3, n)
        other = locus.Memory.open_ipc(shared.ipc_handle())
        assert other.read(4) == b"\x03" * 4
        del other, shared
    elif op == 6:
        buf = locus.Buffer("host", 256, dtype="float64", fill=4.0)
        arr = np.from_dlpack(buf)
        assert arr[0] == 4.0
        del arr
    else:
        m = locus.Memory(at, n)
        m.set(1, n)
        del m
    counts[op] = counts.get(op, 0) + 1


def main():
    minutes = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    locations = sys.argv[2:] or locus.available()
    rng = random.Random(62)
    counts = {}
    start = time.monotonic()
    end = start + minutes * 60
    samples = [(0.0, sample())]
    next_sample = start + 30
    while time.monotonic() < end:
        one_round(rng, locations, counts)
        now = time.monotonic()
        if now >= next_sample:
            samples.append((now - start, sample()))
            next_sample += 30
    samples.append((time.monotonic() - start, sample()))
    print(f"soak: {minutes:g} min at {', '.join(locations)}; {sum(counts.values())} operations")
    print("| s | RSS MiB | fds | threads | /dev/shm locus-* |")
    print("|---|---|---|---|---|")
    for t, s in samples:
        print(f"| {t:.0f} | {s['rss_mib']:.1f} | {s['fds']} | {s['threads']} | {s['shm']} |")
    warm = [s for t, s in samples if t >= minutes * 60 / 5]
    base = warm[0]
    bad = []
    for s in warm[1:]:
        if s["rss_mib"] > base["rss_mib"] * 1.10 + 32:
            bad.append(f"RSS grew: {base['rss_mib']:.1f} -> {s['rss_mib']:.1f} MiB")
        if s["fds"] > base["fds"] + 4:
            bad.append(f"descriptors grew: {base['fds']} -> {s['fds']}")
        if s["threads"] > base["threads"] + 4:
            bad.append(f"threads grew: {base['threads']} -> {s['threads']}")
        if s["shm"] > 0:
            bad.append(f"{s['shm']} locus objects in /dev/shm")
    if bad:
        print("NOT FLAT:", "; ".join(sorted(set(bad))))
        return 1
    print("flat: resident memory, descriptors, threads and /dev/shm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
