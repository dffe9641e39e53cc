#!/usr/bin/env python3
"""Whether locus leaves the device's default stream-ordered pool as it found it (issue
61, item 4), seen from CuPy, whose `cudaMallocAsync` allocator shares that pool: the
default pool's release threshold and current pool are read before and after locus makes,
uses and frees stream-ordered memory; a change is locus tuning a pool other libraries
own. Needs CuPy and the locus Python module; prints SKIPPED without them or a GPU.

    python3 scripts/probe-default-pool.py
"""
import sys

try:
    import cupy
    import locus
    import locus.mr
except ImportError as e:
    print(f"SKIPPED: {e}")
    sys.exit(0)

rt = cupy.cuda.runtime
try:
    devices = rt.getDeviceCount()
except cupy.cuda.runtime.CUDARuntimeError:
    devices = 0
if devices == 0 or "cuda:0" not in [str(a) for a in locus.available()]:
    print("SKIPPED: no CUDA device for both CuPy and locus")
    sys.exit(0)
THRESHOLD = rt.cudaMemPoolAttrReleaseThreshold


def state():
    pool = rt.deviceGetDefaultMemPool(0)
    return pool, rt.memPoolGetAttribute(pool, THRESHOLD), rt.deviceGetMemPool(0)


untouched = state()
cupy.cuda.set_allocator(cupy.cuda.MemoryAsyncPool().malloc)
theirs = cupy.arange(1 << 20, dtype=cupy.float32)
# What CuPy set up itself (its MemoryAsyncPool tunes the default pool) is the baseline.
before = state()
resource = locus.mr.CudaAsyncMemoryResource("cuda:0")
for _ in range(3):
    m = locus.Memory.from_resource(resource, 4 << 20)
    m.write(b"\x01" * 4096)
    del m
after = state()
print("| | default pool | release threshold | current pool |\n|---|---|---|---|")
print(f"| before CuPy | {untouched[0]:#x} | {untouched[1]} | {untouched[2]:#x} |")
print(f"| after CuPy, before locus | {before[0]:#x} | {before[1]} | {before[2]:#x} |")
print(f"| after locus | {after[0]:#x} | {after[1]} | {after[2]:#x} |")
print("default pool untouched" if before == after else "CHANGED: locus tuned the shared pool")
del theirs
sys.exit(0 if before == after else 1)
