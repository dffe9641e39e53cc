"""09 in Python: asynchronous copies, one event type for every technology, queues, and
stream-ordered reuse of pooled memory (CUDA's streams and events, at any location).
Line by line `examples/09_queues_and_events.rs`.

    python python/examples/09_queues_and_events.py [LOCATION]   # default: the last available
"""

import sys

import locus


def main():
    at = sys.argv[1] if len(sys.argv) > 1 else locus.available()[-1]
    n = 16 << 20
    data = bytes(i % 251 for i in range(251)) * (n // 251) + bytes(i % 251 for i in range(n % 251))
    host = locus.Memory("host", n)
    host.write(data)
    a = locus.Memory(at, n)
    b = locus.Memory(at, n)
    back = locus.Memory("host", n)

    # 1. A queue runs what is submitted on it in order: upload, copy on the device,
    #    download. Each call returns an Event at once.
    queue = locus.Queue()
    up = host.copy_to_async(a, n, queue=queue)
    within = a.copy_to_async(b, n, queue=queue)
    down = b.copy_to_async(back, n, queue=queue)
    print(
        f"three copies submitted on one queue; native to {at}'s own queue: "
        f"upload {up.is_native()}, on the device {within.is_native()}, download {down.is_native()}"
    )
    queue.wait()  # the synchronous form: everything on the queue is done
    assert back.read() == data
    print(f"after Queue.wait: {n >> 20} MiB came back intact")

    # 2. Any event is a dependency of any later copy, whatever the technologies. A
    #    user event (OpenCL's idea) holds work back until something outside locus says go.
    gate, go = locus.Event.user()
    gated = a.copy_to_async(b, n, after=[gate])
    print(f"a copy behind a closed gate: started without blocking, complete: {gated.is_complete()}")
    go.complete()
    gated.wait()
    print(f"gate opened: complete: {gated.is_complete()}")

    # 3. Stream-ordered memory: memory given back on a queue while work there may still
    #    use it is handed out again at once to an allocation on the same queue (whose
    #    work runs after), and to other queues only after the work's event.
    pool = locus.mr.PoolMemoryResource(locus.mr.UpstreamMemoryResource(at), 64 << 20, 1 << 30)
    scratch = locus.Memory.from_resource(pool, n, queue=queue)
    uses = scratch.copy_to_async(b, n, queue=queue)
    first = scratch.address
    scratch.release_after(queue, uses)
    again = locus.Memory.from_resource(pool, n, queue=queue)
    reused = again.address == first
    print(f"freed on the queue while in use, reallocated on the same queue: same memory: {reused}")
    assert reused, "work on one queue runs in order: its memory is reused at once"
    other = locus.Memory.from_resource(pool, n, queue=locus.Queue())
    print(
        f"on another queue: same memory: {other.address == first} "
        "(it waits for the work, or takes other memory)"
    )
    queue.wait()


if __name__ == "__main__":
    main()
