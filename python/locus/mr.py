"""Memory resources as composable classes, as hipMM's / RMM's ``rmm.mr`` has them, for
every location.

Compose a resource from an upstream and adaptors, then make it the resource a location's
buffers allocate from::

    import locus
    from locus import mr

    pool = mr.PoolMemoryResource(mr.UpstreamMemoryResource("opencl:0"),
                                 initial_pool_size="64MiB", maximum_pool_size="1GiB")
    stats = mr.StatisticsResourceAdaptor(pool)
    mr.set_per_device_resource("opencl:0", stats)
    b = locus.Buffer("opencl:0", 1000, dtype="float32")
    print(stats.allocation_counts["current_bytes"])   # 4000

RMM's CUDA-named classes are here too (``CudaMemoryResource``,
``ManagedMemoryResource``, ``PinnedHostMemoryResource``, ``CudaAsyncMemoryResource``):
an upstream at a CUDA location with a memory kind. Where a location lacks the kind, the
constructor raises ``ValueError`` naming the location and the kinds it offers.
"""

from ._locus import (  # noqa: F401
    ArenaMemoryResource,
    BinningMemoryResource,
    FailureCallbackResourceAdaptor,
    FixedSizeMemoryResource,
    LimitingResourceAdaptor,
    LoggingResourceAdaptor,
    MemoryResource,
    PoolMemoryResource,
    SamHeadroomMemoryResource,
    StatisticsResourceAdaptor,
    TrackingResourceAdaptor,
    UpstreamMemoryResource,
    available_device_memory,
    get_per_device_resource,
    percent_of_free_device_memory,
    replay,
    set_current_device_resource,
    set_per_device_resource,
)


class CudaMemoryResource(UpstreamMemoryResource):
    """``cuMemAlloc`` on CUDA device ``device`` (RMM's ``CudaMemoryResource``)."""

    def __new__(cls, device=0):
        return super().__new__(cls, f"cuda:{device}")


class ManagedMemoryResource(UpstreamMemoryResource):
    """Managed memory (``cuMemAllocManaged`` / ``hipMallocManaged``) at ``location``
    (RMM's ``ManagedMemoryResource``)."""

    def __new__(cls, location="cuda:0"):
        return super().__new__(cls, location, "managed")


class PinnedHostMemoryResource(UpstreamMemoryResource):
    """Page-locked host memory of the GPU at ``location`` (RMM's
    ``PinnedHostMemoryResource``)."""

    def __new__(cls, location="cuda:0"):
        return super().__new__(cls, location, "pinned-host")


class CudaAsyncMemoryResource(UpstreamMemoryResource):
    """The driver's stream-ordered pool (``cuMemAllocAsync`` / ``hipMallocAsync``) at
    ``location`` (RMM's ``CudaAsyncMemoryResource``)."""

    def __new__(cls, location="cuda:0"):
        return super().__new__(cls, location, "stream-ordered")


def get_current_device_resource(location="host"):
    """The resource buffers at ``location`` allocate from (``get_per_device_resource``;
    locus has no current device, so the location is named)."""
    return get_per_device_resource(location)


__all__ = [
    "ArenaMemoryResource",
    "BinningMemoryResource",
    "CudaAsyncMemoryResource",
    "CudaMemoryResource",
    "FailureCallbackResourceAdaptor",
    "FixedSizeMemoryResource",
    "LimitingResourceAdaptor",
    "LoggingResourceAdaptor",
    "ManagedMemoryResource",
    "MemoryResource",
    "PinnedHostMemoryResource",
    "PoolMemoryResource",
    "SamHeadroomMemoryResource",
    "StatisticsResourceAdaptor",
    "TrackingResourceAdaptor",
    "UpstreamMemoryResource",
    "available_device_memory",
    "get_current_device_resource",
    "get_per_device_resource",
    "percent_of_free_device_memory",
    "replay",
    "set_current_device_resource",
    "set_per_device_resource",
]
