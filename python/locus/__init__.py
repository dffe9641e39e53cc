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
    Handle,
    LocusError,
    Memory,
    Mirror,
    __version__,
    available,
    dlpack_device,
    dtypes,
    info,
    memory_statistics,
    use_pool,
    use_upstream,
)


from . import mr  # noqa: E402


def from_dlpack(obj, *, copy=None):
    """Adopt a DLPack producer's memory (``Buffer.from_dlpack``)."""
    return Buffer.from_dlpack(obj, copy=copy)


__all__ = [
    "Buffer",
    "Handle",
    "LocusError",
    "Memory",
    "Mirror",
    "available",
    "dlpack_device",
    "dtypes",
    "from_dlpack",
    "info",
    "memory_statistics",
    "mr",
    "use_pool",
    "use_upstream",
]
