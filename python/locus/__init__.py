"""locus: one memory model across Host, CUDA, HIP, OpenMP, OpenCL, SYCL and WebGPU.

Buffers live at a location named by a string (``"host"``, ``"opencl:0"``, ``"sycl:0"``,
``"webgpu:0"``, ``"cuda:0"``...); ``access(location)`` / ``access_mut(location)``
declare where the data will be used and return a handle that numpy and every DLPack
consumer use without copying::

    import numpy as np, locus
    b = locus.Buffer("opencl:0", 1000, dtype="float32", fill=3.1415)
    with b.access_mut("host") as h:       # in place where the host can reach it
        a = np.asarray(h)                 # zero-copy view
        a[:10] += 1
    print(b.to_numpy()[:12])
"""

import contextlib as _contextlib
import os as _os
import tempfile as _tempfile

# Mesa's Vulkan drivers (WebGPU's CPU device) print "XDG_RUNTIME_DIR is invalid or not
# set" when the variable is missing: give the process a private runtime directory
# instead, before the extension loads (as the `locus` command-line tool does).
if not _os.environ.get("XDG_RUNTIME_DIR"):
    try:
        _os.environ["XDG_RUNTIME_DIR"] = _tempfile.mkdtemp(prefix="locus-runtime-")
    except OSError:
        pass

from ._locus import (  # noqa: E402, F401
    Buffer,
    Codelet,
    Event,
    EventTrigger,
    Handle,
    Kernel,
    LocusError,
    Memory,
    Mirror,
    PendingCall,
    Queue,
    Region,
    RegionIndex,
    Trace,
    View,
    __version__,
    adopt_context,
    available,
    copy_batch,
    dlpack_device,
    dtypes,
    info,
    physical_devices,
    lookup,
    reachable_kind,
    memory_statistics,
    registered_paths,
    route,
    transfer_totals,
    transfer_totals_text,
    use_pool,
    use_upstream,
)


from . import _locus  # noqa: E402
from . import mr  # noqa: E402
from . import statistics  # noqa: E402
from .allocators import cupy_allocator  # noqa: E402


class kernels:
    """The kernels locus ships, each in every language (``Kernel.builtin(name)``)::

        saxpy = locus.Codelet(locus.kernels.saxpy(), ["opencl:0", "host"])
        saxpy.call([2.0, x, y, len(x)], launch=len(x))
    """

    @staticmethod
    def vec_add():
        """``c = a + b``: ``vec_add(a: in f32[], b: in f32[], c: out f32[], n: u32)``."""
        return Kernel.builtin("vec_add")

    @staticmethod
    def saxpy():
        """``y = a * x + y``: ``saxpy(a: f32, x: in f32[], y: inout f32[], n: u32)``."""
        return Kernel.builtin("saxpy")

    @staticmethod
    def jacobi():
        """One Jacobi step: ``jacobi(src: in f32[], dst: out f32[], nx: u32, ny: u32)``, launched ``(nx, ny)``."""
        return Kernel.builtin("jacobi")

    @staticmethod
    def sgemm():
        """``C = alpha A B + beta C``: ``sgemm(m, n, k: u32, alpha: f32, a: in, b: in, beta: f32, c: inout)``, launched ``(n, m)``."""
        return Kernel.builtin("sgemm")

    @staticmethod
    def vec_add_f64():
        """``c = a + b`` in float64 (not on WebGPU)."""
        return Kernel.builtin("vec_add_f64")

    @staticmethod
    def daxpy():
        """``y = a * x + y`` in float64 (not on WebGPU)."""
        return Kernel.builtin("daxpy")


@_contextlib.contextmanager
def numpy_allocator(resource=None, *, min_bytes=64 << 10):
    """numpy's arrays of at least ``min_bytes`` made inside the ``with`` block come from
    ``resource`` (NEP 49): by default a pool over the first CUDA or HIP device's pinned
    host memory, so that uploads of ordinary numpy arrays run by DMA at pinned speed
    (else a pool over host memory). Smaller arrays, and any the resource refuses, stay
    with the allocator that was current (numpy's own, with its cache of small blocks).
    Arrays keep their memory after the block ends and give it back when they die, on any
    thread. numpy keeps the allocator in a context variable: the block applies to the
    calling thread. The resource's memory must be host-addressable (a ``ValueError``
    otherwise)::

        with locus.numpy_allocator():
            a = np.ones(1 << 26, dtype=np.float32)   # pinned where a GPU is present
    """
    handler = _locus._numpy_handler(resource, min_bytes)
    previous = _locus._numpy_set_handler(handler)
    try:
        yield handler
    finally:
        _locus._numpy_set_handler(previous)


def set_numpy_allocator(resource=None, *, min_bytes=64 << 10):
    """As ``numpy_allocator``, for the rest of the calling thread's context (until set
    again); returns the handler it replaced, which ``restore_numpy_allocator`` puts back."""
    return _locus._numpy_set_handler(_locus._numpy_handler(resource, min_bytes))


def restore_numpy_allocator(handler=None):
    """Puts back a handler ``set_numpy_allocator`` returned (``None``: numpy's default)."""
    _locus._numpy_set_handler(handler)


def trace(path):
    """Writes every allocation, free, copy (pair, route, path, bytes), kernel launch
    and wait from now on to ``path`` in the Chrome trace format, until the ``with``
    block ends (or ``.finish()``): open the file in https://ui.perfetto.dev, or run
    ``locus trace summary path``. ``LOCUS_TRACE=path`` traces a whole run::

        with locus.trace("run.json"):
            b = locus.Buffer("opencl:0", 1 << 20, dtype="float32", fill=1.0)
            b.to_numpy()
    """
    return Trace(path)


def from_dlpack(obj, *, copy=None):
    """Adopt a DLPack producer's memory (``Buffer.from_dlpack``)."""
    return Buffer.from_dlpack(obj, copy=copy)


__all__ = [
    "Buffer",
    "Codelet",
    "Event",
    "EventTrigger",
    "Handle",
    "Kernel",
    "LocusError",
    "Memory",
    "Mirror",
    "PendingCall",
    "Queue",
    "Region",
    "RegionIndex",
    "View",
    "adopt_context",
    "available",
    "cupy_allocator",
    "dlpack_device",
    "dtypes",
    "from_dlpack",
    "info",
    "physical_devices",
    "kernels",
    "lookup",
    "memory_statistics",
    "mr",
    "reachable_kind",
    "numpy_allocator",
    "registered_paths",
    "restore_numpy_allocator",
    "route",
    "set_numpy_allocator",
    "statistics",
    "trace",
    "Trace",
    "transfer_totals",
    "transfer_totals_text",
    "use_pool",
    "use_upstream",
]
