"""Stale reads after another library writes a locus buffer in place, the way its users
write code (no wait of their own): dpnp through a write handle (`asarray`,
`from_dlpack`), dpnp on the user's own dpctl queue adopted by locus, a pyopencl kernel
on the user's own command queue adopted by locus, and (at CUDA locations, where CuPy or
PyTorch is installed) CuPy and PyTorch writing through a write handle on their default
stream or their own. 1 Mi float32 elements, 20 runs each; prints a Markdown table.

    . scripts/sycl-env.sh && POCL_DEVICES="pthread pthread" \\
      $LOCUS_SYCL_VENV/bin/python scripts/measure-stale-reads.py > docs/stale-reads-cpu-vm.md
"""

import datetime
import platform
import sys
import warnings

import numpy as np

import locus

N, RUNS = 1 << 20, 20
warnings.simplefilter("ignore")


def dpnp_handle(at, take_name):
    import dpnp

    take = getattr(dpnp, take_name)
    stale = 0
    for _ in range(RUNS):
        b = locus.Buffer(at, N, dtype="float32", fill=1.0)
        with b.access_mut(at) as h:
            x = take(h)
            x *= 3.0
            del x
        stale += not (b.to_numpy() == 3.0).all()
    return stale


def dpnp_adopted(at):
    import dpctl
    import dpnp

    ours = locus.Queue().to_external(at)
    q = dpctl.SyclQueue(ours.sycl_context, ours.sycl_device, property="in_order")
    lq = locus.Queue.from_external(q)
    stale = 0
    for _ in range(RUNS):
        b = locus.Buffer(at, N, dtype="float32", fill=1.0, queue=lq)
        with b.access_mut(at) as h:
            x = dpnp.asarray(h).to_device(q)
            x *= 3.0
            del x
        stale += not (b.to_numpy() == 3.0).all()
    return stale


def pyopencl_adopted(at):
    import pyopencl as cl

    ours = locus.Queue().to_external(at)
    q = cl.CommandQueue(ours.context)
    lq = locus.Queue.from_external(q)
    program = cl.Program(ours.context, """
        __kernel void triple(__global float *a) { size_t i = get_global_id(0); a[i] *= 3.0f; }
    """).build()
    stale = 0
    for _ in range(RUNS):
        b = locus.Buffer(at, N, dtype="float32", fill=1.0, queue=lq)
        with b.access_mut(at) as h:
            o = h.opencl
            mem = cl.Buffer.from_int_ptr(o["mem"], retain=True)
            if o["offset"]:
                mem = mem.get_sub_region(o["offset"], o["size"])
            program.triple(q, (N,), None, mem)
        stale += not (b.to_numpy() == 3.0).all()
    return stale


def cupy_handle(at, take_name, own_stream):
    import cupy

    stale = 0
    for _ in range(RUNS):
        b = locus.Buffer(at, N, dtype="float32", fill=1.0)
        stream = cupy.cuda.Stream(non_blocking=True) if own_stream else cupy.cuda.Stream.null
        with stream, b.access_mut(at) as h:
            x = getattr(cupy, take_name)(h)
            x *= 3.0
            del x
        stale += not (b.to_numpy() == 3.0).all()
    return stale


def torch_handle(at, own_stream):
    import torch

    stale = 0
    for _ in range(RUNS):
        b = locus.Buffer(at, N, dtype="float32", fill=1.0)
        stream = torch.cuda.Stream() if own_stream else torch.cuda.default_stream()
        with torch.cuda.stream(stream), b.access_mut(at) as h:
            x = torch.from_dlpack(h)
            x.mul_(3.0)
            del x
        stale += not (b.to_numpy() == 3.0).all()
    return stale


def installed(name):
    try:
        __import__(name)
        return True
    except Exception:
        return False


def main():
    rows = []
    for at in locus.available():
        if at.startswith("sycl:"):
            rows.append((at, "dpnp.asarray(handle), locus's queue", dpnp_handle(at, "asarray")))
            rows.append((at, "dpnp.from_dlpack(handle), dpctl's queue", dpnp_handle(at, "from_dlpack")))
            rows.append((at, "dpnp on the user's dpctl queue, adopted", dpnp_adopted(at)))
        elif at.startswith("opencl:"):
            rows.append((at, "pyopencl kernel on the user's queue, adopted", pyopencl_adopted(at)))
        elif at.startswith("cuda:"):
            if installed("cupy"):
                rows.append((at, "cupy.from_dlpack(handle), CuPy's default stream", cupy_handle(at, "from_dlpack", False)))
                rows.append((at, "cupy.from_dlpack(handle), a non-blocking stream of CuPy's", cupy_handle(at, "from_dlpack", True)))
                rows.append((at, "cupy.asarray(handle) (CUDA array interface), CuPy's default stream", cupy_handle(at, "asarray", False)))
            if installed("torch"):
                rows.append((at, "torch.from_dlpack(handle), PyTorch's default stream", torch_handle(at, False)))
                rows.append((at, "torch.from_dlpack(handle), a stream of PyTorch's", torch_handle(at, True)))
    print("# Stale reads after another library writes a locus buffer in place")
    print()
    print(f"{datetime.date.today()}, {platform.node()} ({platform.machine()}), "
          f"{N} float32 elements, {RUNS} runs each, no wait in user code.")
    print("Made by:")
    print()
    print("```sh")
    print('. scripts/sycl-env.sh && POCL_DEVICES="pthread pthread" \\')
    print("  $LOCUS_SYCL_VENV/bin/python scripts/measure-stale-reads.py > docs/stale-reads-cpu-vm.md")
    print("```")
    print()
    print("| Location | How the library wrote | Stale reads by locus |")
    print("|---|---|---|")
    for at, how, stale in rows:
        print(f"| `{at}` | {how} | {stale} of {RUNS} |")
    print()
    print("Before the fixes: 16-18 of 20 (`asarray`) and 7-13 of 20 (`from_dlpack`) through a")
    print("write handle; 20 of 20 for dpnp on an adopted queue, and a stale read at every OpenCL")
    print("location for pyopencl, without the marker a buffer on an adopted queue takes of the")
    print("user's work (`tests/adopted_queue_*.rs`, `python/tests/test_external_queues.py`).")
    return 0 if all(stale == 0 for _, _, stale in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
