"""A process forked after it used locus (Python's multiprocessing "fork" start method, the
default on Linux before Python 3.14): the child gets a clear error, never a hang.

On the code before, the child's asynchronous copies never finished (locus's worker
threads do not exist in a forked child: 4 of 6 locations hung), and a fork while another
thread was inside locus deadlocked the child's first allocation on a lock that thread
held (5 of 5). Children started with "spawn" use locus as usual."""

import multiprocessing as mp
import threading

import pytest

import locus


def _use_locus(location, results):
    try:
        src = locus.Memory(location, 4096)
        dst = locus.Memory(location, 4096)
        src.copy_to_async(dst, 4096).wait()
        results.put("worked")
    except Exception as e:  # noqa: BLE001 - the child reports whatever it got
        results.put(f"{type(e).__name__}: {e}")


def _run_child(context, location):
    results = context.Queue()
    child = context.Process(target=_use_locus, args=(location, results))
    child.start()
    child.join(60)
    hung = child.is_alive()
    if hung:
        child.kill()
        child.join()
    assert not hung, f"{location}: the forked child hung"
    assert child.exitcode == 0, f"{location}: the child exited with {child.exitcode}"
    return results.get(timeout=10)


def test_a_forked_child_is_told_to_use_spawn(location):
    locus.Memory(location, 64)  # the parent has set locus up
    said = _run_child(mp.get_context("fork"), location)
    assert "forked" in said and "spawn" in said, said


def test_a_fork_while_another_thread_works_inside_locus(location):
    stop = threading.Event()

    def busy():
        a, b = locus.Memory(location, 1 << 16), locus.Memory(location, 1 << 16)
        while not stop.is_set():
            a.copy_to(b, 1 << 16)
            locus.Memory(location, 4096)

    worker = threading.Thread(target=busy)
    worker.start()
    try:
        for _ in range(5):
            said = _run_child(mp.get_context("fork"), location)
            assert "forked" in said, said
    finally:
        stop.set()
        worker.join()


def test_a_spawned_child_uses_locus():
    locus.Memory("host", 64)
    assert _run_child(mp.get_context("spawn"), "host") == "worked"
