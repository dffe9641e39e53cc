#!/usr/bin/env python3
"""The CUDA driver's symbols and device attributes that locus's call layer relies on,
asked of libcuda directly (no locus code runs): run first on a lent GPU, in a process of
its own, so that an ABI surprise is seen before anything depends on it.

For each entry point whose form changed across CUDA versions (cuMemcpyBatchAsync and
cuMemAdvise / cuMemPrefetchAsync took new signatures in CUDA 13, whose header maps the
plain names to the new forms), it prints whether `dlsym` finds the plain and the
versioned names, and which of them `cuGetProcAddress` hands out for a CUDA 12.8 caller
and for a CUDA 13.0 caller: locus (through cudarc) calls the plain name with the 12.8
signature. Then each device's attributes that decide a path: registered host memory at
its host address in a batch, managed and pageable access, stream-ordered pools.

    python3 scripts/probe-cuda-symbols.py          # prints a Markdown report
"""
import ctypes
import sys

SYMBOLS = ["cuMemcpyBatchAsync", "cuMemAdvise", "cuMemPrefetchAsync", "cuMemHostRegister",
           "cuIpcOpenMemHandle", "cuMemPoolCreate", "cuMemAllocFromPoolAsync",
           "cuDevicePrimaryCtxRelease", "cuMemcpyPeerAsync"]
ATTRIBUTES = {
    "compute capability major": 75, "compute capability minor": 76,
    "unified addressing": 41, "pageable memory access": 88,
    "concurrent managed access": 89, "can use host pointer for registered mem": 91,
    "host register supported": 99, "pageable access uses host page tables": 100,
    "direct managed mem access from host": 101, "read-only host register supported": 113,
    "memory pools supported": 115, "GPU direct RDMA supported": 116,
}


def main():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        print(f"SKIPPED: libcuda.so.1 not found ({e}): no NVIDIA driver here")
        return 0
    rc = cuda.cuInit(0)
    version = ctypes.c_int(0)
    cuda.cuDriverGetVersion(ctypes.byref(version))
    v = version.value
    print(f"# CUDA driver probe\n\ncuInit: {rc}; driver version {v // 1000}.{v % 1000 // 10} ({v})\n")
    print("| name | dlsym | _v2 | _v3 | cuGetProcAddress(12080) | cuGetProcAddress(13000) |")
    print("|---|---|---|---|---|---|")
    get = getattr(cuda, "cuGetProcAddress_v2", None)

    def address(name):
        try:
            return ctypes.cast(getattr(cuda, name), ctypes.c_void_p).value
        except AttributeError:
            return None

    def proc(name, ver):
        if get is None:
            return "no cuGetProcAddress_v2"
        pfn, status = ctypes.c_void_p(0), ctypes.c_int(0)
        r = get(name.encode(), ctypes.byref(pfn), ver, 0, ctypes.byref(status))
        if r != 0 or not pfn.value:
            return f"none (rc {r}, status {status.value})"
        return hex(pfn.value)

    for name in SYMBOLS:
        plain, v2, v3 = address(name), address(name + "_v2"), address(name + "_v3")
        show = lambda a: hex(a) if a else "absent"
        print(f"| {name} | {show(plain)} | {show(v2)} | {show(v3)} | {proc(name, 12080)} | {proc(name, 13000)} |")
    count = ctypes.c_int(0)
    cuda.cuDeviceGetCount(ctypes.byref(count))
    print(f"\n{count.value} device(s)\n")
    print("| device | " + " | ".join(ATTRIBUTES) + " |")
    print("|---" * (len(ATTRIBUTES) + 1) + "|")
    for d in range(count.value):
        dev = ctypes.c_int(0)
        cuda.cuDeviceGet(ctypes.byref(dev), d)
        values = []
        for number in ATTRIBUTES.values():
            value = ctypes.c_int(-1)
            r = cuda.cuDeviceGetAttribute(ctypes.byref(value), number, dev)
            values.append(str(value.value) if r == 0 else f"rc {r}")
        print(f"| {d} | " + " | ".join(values) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
