"""`locus.Event`, `locus.EventTrigger`, `locus.Queue` and stream-ordered memory from
Python, on every location: asynchronous copies return at once, any event orders any
later copy, a queue runs its work in order, and memory given back on a queue is reused
at once on that queue (CUDA's streams, events and `cudaMallocAsync` / `cudaFreeAsync`)."""

import numpy as np
import pytest

import locus


def pattern(n, seed=1):
    return bytes((i * 7 + seed) % 251 for i in range(n))


def test_an_async_copy_between_every_pair_arrives_whole(location):
    n = 1 << 16
    src = locus.Memory(location, n)
    src.write(pattern(n))
    for other in locus.available():
        dst = locus.Memory(other, n + 8)
        event = src.copy_to_async(dst, n, dst_offset=8)
        assert isinstance(event, locus.Event)
        event.wait()
        assert event.is_complete()
        assert dst.read(n, offset=8) == pattern(n), f"{location} -> {other}"


def test_a_copy_behind_a_closed_gate_returns_at_once_and_runs_when_it_opens(location):
    n = 1 << 20
    a, b = locus.Memory(location, n), locus.Memory(location, n)
    a.write(pattern(n, 3))
    b.set(0)
    gate, go = locus.Event.user()
    gated = a.copy_to_async(b, n, after=[gate])
    # It returned while the gate was closed: the call did not wait for it.
    assert not gate.is_complete() and not gated.is_complete()
    assert b.read(16) == bytes(16), "nothing copied before the gate opened"
    go.complete()
    gated.wait()
    assert gated.is_complete() and b.read() == pattern(n, 3)
    with pytest.raises(ValueError, match="already fired"):
        go.complete()


def test_a_failed_gate_fails_the_work_behind_it(location):
    a, b = locus.Memory(location, 64), locus.Memory(location, 64)
    gate, go = locus.Event.user()
    gated = a.copy_to_async(b, 64, after=[gate])
    go.fail("the producer gave up")
    with pytest.raises(locus.LocusError, match="the producer gave up"):
        gated.wait()
    # A trigger dropped unfired fails its event too: nothing waits forever.
    gate, go = locus.Event.user()
    del go
    with pytest.raises(locus.LocusError, match="dropped"):
        gate.wait()


def test_a_queue_runs_its_copies_in_order(location):
    n = 4 << 20
    host = locus.Memory("host", n)
    host.write(pattern(n, 5))
    a, b, back = locus.Memory(location, n), locus.Memory(location, n), locus.Memory("host", n)
    q = locus.Queue()
    assert q != locus.Queue() and q == q and q.id > 0
    # No explicit dependencies: the queue orders upload, device copy, download.
    up = host.copy_to_async(a, n, queue=q)
    within = a.copy_to_async(b, n, queue=q)
    down = b.copy_to_async(back, n, queue=q)
    assert all(isinstance(e, locus.Event) for e in (up, within, down))
    q.wait()
    assert q.last() is None, "everything on the queue is done"
    assert back.read() == pattern(n, 5)


def test_memory_given_back_on_a_queue_is_reused_there_at_once(location):
    n = 1 << 20
    pool = locus.mr.PoolMemoryResource(locus.mr.UpstreamMemoryResource(location), 8 << 20)
    q = locus.Queue()
    gate, go = locus.Event.user()
    scratch = locus.Memory.from_resource(pool, n, queue=q)
    other = locus.Memory(location, n)
    uses = scratch.copy_to_async(other, n, after=[gate], queue=q)
    first = scratch.address
    scratch.release_after(q, uses)  # while the copy still waits on the gate
    with pytest.raises(ValueError, match="given back"):
        scratch.read()
    # The same queue runs after the copy: it gets the memory at once, without waiting.
    again = locus.Memory.from_resource(pool, n, queue=q)
    assert again.address == first
    assert not uses.is_complete(), "nothing waited for the gated copy"
    go.complete()
    q.wait()
    assert "given back" in repr(scratch)


def test_release_is_refused_while_numpy_or_a_connection_reaches_the_memory():
    pool = locus.mr.PoolMemoryResource(locus.mr.UpstreamMemoryResource("host"), 1 << 20)
    q = locus.Queue()
    viewed = locus.Memory.from_resource(pool, 1024, queue=q)
    view = np.asarray(viewed)
    with pytest.raises(ValueError, match="reachable from elsewhere"):
        viewed.release_after(q, locus.Event.done())
    view[:4] = 9
    assert viewed.read(4) == bytes([9] * 4), "still usable: the release was refused"
    connected = locus.Memory.from_resource(pool, 1024, queue=q)
    connected.connect(1024)
    with pytest.raises(ValueError, match="reachable from elsewhere"):
        connected.release_after(q, locus.Event.done())


def test_bad_dependencies_are_type_errors():
    a, b = locus.Memory("host", 8), locus.Memory("host", 8)
    with pytest.raises(TypeError, match="locus.Event"):
        a.copy_to_async(b, 8, after=[42])
    with pytest.raises(ValueError, match="host"):
        a.copy_to_async(b, 16)
    assert locus.Event.done().is_complete()
