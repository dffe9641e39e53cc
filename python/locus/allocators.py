"""Other libraries' allocations from locus's resources, as RMM's ``rmm.allocators``
give them RMM's: ``cupy_allocator`` for ``cupy.cuda.set_allocator``. numpy's arrays come
from a locus resource through ``locus.numpy_allocator`` (NEP 49).

Each CuPy allocation is made on CuPy's current stream (adopted as a locus queue) and,
when CuPy lets go of it, given back ordered after the work CuPy queued on that stream so
far, without a host wait: the pool hands it out again at once to an allocation on the
same stream, to another stream only after that work is done (RMM's stream-ordered
semantics, and what CuPy's own pool guarantees)."""

from . import _locus

__all__ = ["cupy_allocator"]

# The streams CuPy never destroys (the legacy and per-thread default streams), adopted
# once per device; other streams are adopted per allocation, so that locus never keeps
# a stream of the application alive longer than the memory allocated on it.
_LASTING = {}


class _Returned:
    """Gives its memory back to the pool after the stream's work, when CuPy drops it."""

    __slots__ = ("memory", "queue")

    def __init__(self, memory, queue):
        self.memory, self.queue = memory, queue

    def __del__(self):
        try:
            self.memory.release_after(self.queue, self.queue.marker())
        except Exception:  # the process is ending, or the stream failed: wait, then free
            try:
                self.queue.wait()
            except Exception:
                pass


def cupy_allocator(resource=None):
    """An allocator for ``cupy.cuda.set_allocator``: CuPy's device arrays from
    ``resource`` (a ``locus.mr`` resource at CuPy's device), by default locus's own
    stream-ordered pool of the current device (``CudaAsyncMemoryResource``), else a pool
    over its device memory::

        cupy.cuda.set_allocator(locus.cupy_allocator())
        x = cupy.arange(1 << 20)          # from locus's pool; locus.lookup names it

    Frees are ordered after CuPy's work on the stream the array was made on, with no
    host wait (module docs)."""
    import cupy

    from . import Memory, Queue, mr

    technology = "hip" if cupy.cuda.runtime.is_hip else "cuda"
    resources = {}

    def resource_at(at):
        if resource is not None:
            return resource
        if at not in resources:
            try:
                resources[at] = mr.CudaAsyncMemoryResource(at)
            except (ValueError, _locus.LocusError):  # no stream-ordered pools here
                resources[at] = mr.PoolMemoryResource(mr.UpstreamMemoryResource(at))
        return resources[at]

    def queue_of(stream, device):
        if stream.ptr in (0, 1, 2):  # default streams: adopted once per device
            key = (device, stream.ptr)
            if key not in _LASTING:
                _LASTING[key] = Queue.from_external(stream)
            return _LASTING[key]
        return Queue.from_external(stream)

    def allocate(nbytes):
        device = cupy.cuda.runtime.getDevice()
        at = f"{technology}:{device}"
        queue = queue_of(cupy.cuda.get_current_stream(), device)
        memory = Memory.from_resource(resource_at(at), max(nbytes, 1), queue=queue)
        owner = _Returned(memory, queue)
        raw = cupy.cuda.UnownedMemory(memory.address, nbytes, owner, device)
        return cupy.cuda.MemoryPointer(raw, 0)

    return allocate
