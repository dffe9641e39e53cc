"""HAMR's transfer modes from Python: a buffer in "async" mode (the default) starts its
moves and returns, ordered after what its data waits for; "sync" completes them first.
Shown with a user event that gates the source: the call returned while the gate was
still closed (async), or only once it opened (sync); the data is right either way, and
nothing is handed to Python before it arrived."""

import threading

import numpy as np
import pytest

import locus

N = 1 << 16


def test_modes_by_name():
    b = locus.Buffer("host", 8)
    assert b.transfer == "async"  # HAMR's default
    for mode in ("sync", "sync_host", "async"):
        b.set_transfer(mode)
        assert b.transfer == mode
    assert locus.Buffer("host", 8, transfer="sync").transfer == "sync"
    with pytest.raises(ValueError, match='"async", "sync_host" or "sync"'):
        b.set_transfer("later")
    with pytest.raises(ValueError, match="transfer mode"):
        locus.Buffer("host", 8, transfer="eventually")


def gated_source():
    """A host buffer of 5s whose later uses wait for a user event, and its trigger,
    pulled 0.2 s from now by another thread."""
    src = locus.Buffer.from_array(np.full(N, 5.0, dtype=np.float32))
    gate, trigger = locus.Event.user()
    src.order_after(gate)
    timer = threading.Timer(0.2, trigger.complete)
    return src, gate, timer


def test_async_copy_returns_before_the_gate_opens(location):
    dst = locus.Buffer(location, N, dtype="float32", transfer="async")
    src, gate, timer = gated_source()
    timer.start()
    dst.copy_from(src)
    # Had the copy waited, the gate would be open by now.
    assert not gate.is_complete(), f"{location}: copy_from waited in async mode"
    assert dst.pending(), "the move is in flight"
    # Nothing is handed out before it arrived: this waits for the gate and the move.
    np.testing.assert_array_equal(dst.to_numpy(), np.full(N, 5.0, dtype=np.float32))
    assert gate.is_complete()
    dst.synchronize()
    assert dst.pending() == []
    timer.join()


def test_sync_copy_completes_before_it_returns(location):
    dst = locus.Buffer(location, N, dtype="float32", transfer="sync")
    src, gate, timer = gated_source()
    timer.start()
    dst.copy_from(src)
    assert gate.is_complete(), f"{location}: copy_from returned before its source was ready"
    assert dst.pending() == []
    np.testing.assert_array_equal(dst.to_numpy(), np.full(N, 5.0, dtype=np.float32))
    timer.join()


def test_prefetch_follows_the_mode(location):
    for mode in ("sync", "sync_host", "async"):
        b = locus.Buffer.from_array(np.arange(N, dtype=np.float32))
        b.set_transfer(mode)
        b.prefetch(location)
        if mode == "sync":
            assert b.pending() == []
        b.synchronize()
        assert b.pending() == []
        with b.access(location) as h:
            assert h.route is not None
        np.testing.assert_array_equal(b.to_numpy(), np.arange(N, dtype=np.float32))


def test_a_users_event_orders_later_reads():
    b = locus.Buffer("host", 4, dtype="int32", fill=1)
    gate, trigger = locus.Event.user()
    b.order_after(gate)
    threading.Timer(0.1, trigger.complete).start()
    assert b.to_list() == [1, 1, 1, 1]  # waited for the gate, the GIL released
    assert gate.is_complete()


def test_deleting_a_buffer_with_a_move_in_flight_returns_at_once():
    # On the code before, `del b` waited for the gated move (RMM's device_uvector and
    # HAMR's asynchronous buffers give memory back in stream order instead).
    import threading

    others = [l for l in locus.available() if l != "host"]
    assert others, "SKIPPED: the host only"
    for location in others:
        b = locus.Buffer("host", 1 << 18, dtype="float32", fill=1.5)
        gate, trigger = locus.Event.user()
        b.order_after(gate)
        b.prefetch(location)
        done = threading.Event()

        def drop():
            nonlocal b
            del b
            done.set()

        t = threading.Thread(target=drop)
        t.start()
        assert done.wait(5), f"{location}: deleting the buffer waited for the gated move"
        trigger.complete()
        t.join()
