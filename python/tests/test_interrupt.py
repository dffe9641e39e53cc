"""Ctrl-C during a wait: `KeyboardInterrupt` at once, as with any blocking Python call.

On the code before, `Event.wait`, `Queue.wait` and `PendingCall.synchronize` held the
interrupt until the work ended, and a user event nobody fires could not be stopped at all.
Each test sends the process SIGINT from a timer thread, as a terminal's Ctrl-C does."""

import os
import signal
import threading
import time

import pytest

import locus


def ctrl_c_in(seconds):
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_waiting_on_a_user_event_nobody_fires_is_interrupted():
    event, trigger = locus.Event.user()
    ctrl_c_in(0.3)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        event.wait()
    assert time.monotonic() - started < 5
    trigger.complete()
    event.wait()


def test_a_queue_held_back_by_a_user_event_is_interrupted(location):
    gate, trigger = locus.Event.user()
    queue = locus.Queue()
    src = locus.Memory(location, 4096)
    dst = locus.Memory(location, 4096)
    src.copy_to_async(dst, 4096, after=[gate], queue=queue)
    ctrl_c_in(0.3)
    with pytest.raises(KeyboardInterrupt):
        queue.wait()
    trigger.complete()
    queue.wait()
