"""What a numpy <-> locus exchange costs: zero-copy (independent of size) vs a replica.

    python python/benches/exchange.py

For each size: the time to hand a locus buffer to numpy (`np.asarray(b.access("host"))`,
and through DLPack), to hand a numpy array to locus (`Buffer.from_dlpack`), and, at a
location the host cannot address (WebGPU), the time of the host replica a host access
needs after the device wrote (`access_mut` at the device, then `access("host")`).
Median of repeated runs, same process.

Then, for 64 MiB, handing a locus buffer to the other clients in the same run: to
pyopencl at every OpenCL location (`access(location)`, the handle's `cl_mem`, context and
queue wrapped with `from_int_ptr`, no copy), to dpnp at every SYCL location
(`dpnp.asarray` and `dpnp.from_dlpack` of an access there, no copy; and the same two
calls on dpnp's own array, for what dpnp itself costs) and to JAX on the
CPU (`jnp.from_dlpack` of a host access, no copy), next to numpy's `np.asarray` on the
same buffer. Where locus has a CUDA device: to CuPy (`cupy.asarray` through
`__cuda_array_interface__`, `cupy.from_dlpack`) and to PyTorch (`torch.from_dlpack`) at
each CUDA location, next to the same calls on CuPy's own array.
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


def clients():
    size = 64 << 20
    n = size // 4
    try:
        import pyopencl as cl
    except ImportError:
        cl = None
        print("pyopencl: not installed, not measured")
    try:
        import dpnp
    except ImportError:
        dpnp = None
        print("dpnp: not installed, not measured")
    try:
        import jax.numpy as jnp
    except ImportError:
        jnp = None
        print("JAX: not installed, not measured")
    print(f"\nhanding a {size >> 20} MiB buffer to a client (median us): numpy asarray, pyopencl, dpnp, JAX")
    print(f"{'location':<10} {'numpy':>10} {'pyopencl':>10} {'dpnp asarray':>13} {'dpnp dlpack':>12} {'JAX':>10}")
    for location in locus.available():
        b = locus.Buffer(location, n, dtype="float32", fill=1.0)
        host = b.access("host")
        numpy_us = median_us(lambda: np.asarray(b.access("host")), 200) if host.in_place else float("nan")
        del host
        pyopencl_us = float("nan")
        if cl is not None and location.startswith("opencl:"):

            def to_pyopencl():
                with b.access(location) as h:
                    o = h.opencl
                    cl.Context.from_int_ptr(o["context"], retain=True)
                    cl.CommandQueue.from_int_ptr(o["queue"], retain=True)
                    cl.Buffer.from_int_ptr(o["mem"], retain=True)

            pyopencl_us = median_us(to_pyopencl, 200)
        dpnp_asarray_us = dpnp_dlpack_us = float("nan")
        if dpnp is not None and location.startswith("sycl:"):
            dpnp_asarray_us = median_us(lambda: dpnp.asarray(b.access(location)), 200)
            dpnp_dlpack_us = median_us(lambda: dpnp.from_dlpack(b.access(location)), 200)
        jax_us = float("nan")
        if jnp is not None and b.access("host").in_place:
            jax_us = median_us(lambda: jnp.from_dlpack(b.access("host")), 200)
        print(
            f"{location:<10} {numpy_us:>10.1f} {pyopencl_us:>10.1f} {dpnp_asarray_us:>13.1f} "
            f"{dpnp_dlpack_us:>12.1f} {jax_us:>10.1f}"
        )
    if dpnp is not None and any(l.startswith("sycl:") for l in locus.available()):
        # The same two calls on dpnp's own 64 MiB array: what dpnp itself costs.
        x = dpnp.ones(n, dtype=dpnp.float32)
        own_asarray = median_us(lambda: dpnp.asarray(x), 200)
        own_dlpack = median_us(lambda: dpnp.from_dlpack(x), 200)
        print(f"{'dpnp own':<10} {'':>10} {'':>10} {own_asarray:>13.1f} {own_dlpack:>12.1f} {'':>10}")


def gpu_clients():
    size = 64 << 20
    n = size // 4
    gpus = [l for l in locus.available() if l.startswith("cuda:")]
    if not gpus:
        print("\nCuPy, PyTorch: locus has no CUDA device here, not measured")
        return
    try:
        import cupy
    except ImportError:
        cupy = None
        print("CuPy: not installed, not measured")
    try:
        import torch
    except ImportError:
        torch = None
        print("PyTorch: not installed, not measured")
    nan = float("nan")
    print(f"\nhanding a {size >> 20} MiB CUDA buffer to a GPU client (median us)")
    print(f"{'location':<10} {'cupy asarray':>13} {'cupy dlpack':>12} {'torch dlpack':>13}")
    for location in gpus:
        b = locus.Buffer(location, n, dtype="float32", fill=1.0)
        cupy_cai = cupy_dl = torch_dl = nan
        if cupy is not None:
            cupy_cai = median_us(lambda: cupy.asarray(b.access(location)), 200)
            cupy_dl = median_us(lambda: cupy.from_dlpack(b.access(location)), 200)
        if torch is not None:
            torch_dl = median_us(lambda: torch.from_dlpack(b.access(location)), 200)
        print(f"{location:<10} {cupy_cai:>13.1f} {cupy_dl:>12.1f} {torch_dl:>13.1f}")
    if cupy is not None:
        # The same calls on CuPy's own 64 MiB array: what the client itself costs.
        x = cupy.ones(n, dtype=cupy.float32)
        own_cai = median_us(lambda: cupy.asarray(x), 200)
        own_dl = median_us(lambda: cupy.from_dlpack(x), 200)
        own_torch = median_us(lambda: torch.from_dlpack(x), 200) if torch is not None else nan
        print(f"{'cupy own':<10} {own_cai:>13.1f} {own_dl:>12.1f} {own_torch:>13.1f}")


if __name__ == "__main__":
    main()
    clients()
    gpu_clients()
