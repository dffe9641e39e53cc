"""`locus.mr`: hipMM's / RMM's Python resource classes, composed, on every location."""

import csv
import gc
import threading

import numpy as np
import pytest

import locus
from locus import mr

MIB = 1 << 20


@pytest.fixture
def restore(location):
    """Puts the location's upstream back after the test."""
    yield
    mr.set_per_device_resource(location, mr.UpstreamMemoryResource(location))
    gc.collect()


def test_a_composed_resource_serves_buffers_and_counts_them(location, restore):
    pool = mr.PoolMemoryResource(
        mr.UpstreamMemoryResource(location), initial_pool_size="1MiB", maximum_pool_size="64MiB"
    )
    stats = mr.StatisticsResourceAdaptor(pool)
    assert stats.location == location and stats.upstream_mr is pool
    assert pool.pool_size() >= MIB
    previous = mr.set_per_device_resource(location, stats)
    assert previous.location == location
    assert mr.get_per_device_resource(location) is stats
    assert mr.get_current_device_resource(location) is stats
    a = locus.Buffer(location, 1000, dtype="float32", fill=2.0)
    b = locus.Buffer(location, 300, dtype="uint16", fill=7)
    counts = stats.allocation_counts
    assert counts["current_bytes"] == 1000 * 4 + 300 * 2 and counts["current_count"] == 2
    assert a.to_list() == [2.0] * 1000
    assert np.array_equal(b.to_numpy(), np.full(300, 7, dtype=np.uint16))
    del a, b
    counts = stats.allocation_counts
    assert counts["current_bytes"] == 0 and counts["peak_bytes"] == 4600
    assert counts["total_count"] == 2 and counts["peak_count"] == 2


def test_every_resource_class_allocates_and_takes_back(location, tmp_path):
    up = mr.UpstreamMemoryResource(location)
    made = [
        up,
        mr.PoolMemoryResource(up, initial_pool_size=MIB),
        mr.ArenaMemoryResource(up, arena_size="8MiB"),
        mr.ArenaMemoryResource(up),
        mr.FixedSizeMemoryResource(up, block_size=4096, blocks_to_preallocate=8),
        mr.BinningMemoryResource(up, 10, 16),
        mr.BinningMemoryResource(up),
        mr.StatisticsResourceAdaptor(up),
        mr.LimitingResourceAdaptor(up, "1MiB"),
        mr.TrackingResourceAdaptor(up),
        mr.LoggingResourceAdaptor(up, str(tmp_path / "log.csv")),
        mr.FailureCallbackResourceAdaptor(up, lambda n: False),
    ]
    for r in made:
        assert r.location == location, r
        blocks = [(r.allocate(n), n) for n in (1, 100, 4096)]
        assert len({p for p, _ in blocks}) == 3, (r, blocks)
        for p, n in blocks:
            r.deallocate(p, n)
        with pytest.raises(ValueError, match="not a block"):
            r.deallocate(blocks[0][0], 1)
        assert location in repr(r)


def test_a_block_given_back_to_the_wrong_resource_is_refused(location):
    """The code before numbered OpenCL and WebGPU blocks per resource, so one resource's
    block 1 given to another freed that one's own block 1, silently."""
    a = mr.UpstreamMemoryResource(location)
    b = mr.UpstreamMemoryResource(location)
    pa, pb = a.allocate(64), b.allocate(64)
    with pytest.raises(ValueError, match="another resource allocated it"):
        b.deallocate(pa, 64)
    b.deallocate(pb, 64)
    a.deallocate(pa, 64)
    with pytest.raises(ValueError, match="not a block"):
        a.deallocate(pa, 64)


def test_limiting_refuses_past_its_limit_as_out_of_memory(location):
    limited = mr.LimitingResourceAdaptor(mr.UpstreamMemoryResource(location), allocation_limit=8192)
    assert limited.get_allocation_limit() == 8192
    p = limited.allocate(6000)
    assert limited.get_allocated_bytes() >= 6000
    with pytest.raises(MemoryError, match=location):
        limited.allocate(6000)
    limited.deallocate(p, 6000)
    assert limited.get_allocated_bytes() == 0
    limited.deallocate(limited.allocate(6000), 6000)


def test_tracking_shows_what_is_outstanding(location):
    tracked = mr.TrackingResourceAdaptor(mr.UpstreamMemoryResource(location))
    p = tracked.allocate(1234)
    assert tracked.get_allocated_bytes() == 1234
    assert "1234 bytes" in tracked.get_outstanding_allocations_str()
    tracked.deallocate(p, 1234)
    assert tracked.get_allocated_bytes() == 0 and tracked.get_outstanding_allocations_str() == ""


def test_logging_writes_rmm_s_columns_for_every_block(location, tmp_path, restore):
    path = tmp_path / "alloc.csv"
    log = mr.LoggingResourceAdaptor(mr.UpstreamMemoryResource(location), log_file_name=str(path))
    assert log.get_file_name() == str(path)
    mr.set_per_device_resource(location, log)
    a = locus.Buffer(location, 256, dtype="uint8")
    b = locus.Buffer(location, 512, dtype="uint8")
    del a, b
    log.flush()
    rows = list(csv.reader(path.open()))
    assert rows[0][:6] == ["Thread", "Time", "Action", "Pointer", "Size", "Stream"]
    actions = [(r[2], r[4]) for r in rows[1:]]
    assert sorted(actions) == sorted(
        [("allocate", "256"), ("allocate", "512"), ("free", "256"), ("free", "512")]
    ), actions
    ids = {r[6] for r in rows[1:]}
    assert len(ids) == 2, rows  # one id per block, on every technology


def test_logging_without_a_file_name_takes_the_environment_s(location, tmp_path, monkeypatch):
    monkeypatch.delenv("LOCUS_LOG_FILE", raising=False)
    with pytest.raises(ValueError, match="LOCUS_LOG_FILE"):
        mr.LoggingResourceAdaptor(mr.UpstreamMemoryResource(location))
    monkeypatch.setenv("LOCUS_LOG_FILE", str(tmp_path / "env.csv"))
    log = mr.LoggingResourceAdaptor(mr.UpstreamMemoryResource(location))
    assert log.get_file_name() == str(tmp_path / "env.csv")
    log.deallocate(log.allocate(64), 64)
    assert len(list(csv.reader((tmp_path / "env.csv").open()))) == 3


def test_the_failure_callback_is_called_and_decides(location):
    limited = mr.LimitingResourceAdaptor(mr.UpstreamMemoryResource(location), 4096)
    held = [limited.allocate(4096)]
    calls = []

    def free_one(nbytes):
        calls.append(nbytes)
        if held:
            limited.deallocate(held.pop(), 4096)
            return True
        return False

    retried = mr.FailureCallbackResourceAdaptor(limited, free_one)
    p = retried.allocate(4096)  # fails once, the callback frees, the retry serves
    assert calls == [4096]
    with pytest.raises(MemoryError):
        retried.allocate(4096)  # nothing left to free: the callback says no
    assert calls == [4096, 4096]
    retried.deallocate(p, 4096)


def test_a_callback_that_always_says_retry_is_bounded(location):
    """The code before retried for as long as the callback answered True: forever."""
    limited = mr.LimitingResourceAdaptor(mr.UpstreamMemoryResource(location), 4096)
    calls = []
    stubborn = mr.FailureCallbackResourceAdaptor(limited, lambda n: calls.append(n) or True, max_retries=7)
    with pytest.raises(MemoryError, match="called 7 times"):
        stubborn.allocate(8192)
    assert len(calls) == 7
    default = mr.FailureCallbackResourceAdaptor(limited, lambda n: True)
    with pytest.raises(MemoryError, match="called 100 times"):
        default.allocate(8192)


def test_a_pool_serves_a_callback_that_frees_one_of_its_blocks(location):
    """The code before held the pool's lock while asking its upstream: the callback's
    free of one of the pool's blocks deadlocked."""
    limited = mr.LimitingResourceAdaptor(mr.UpstreamMemoryResource(location), 2 * MIB)
    cache = []

    def drop_one(nbytes):
        if cache:
            pool.deallocate(cache.pop(), MIB)
            return True
        return False

    pool = mr.PoolMemoryResource(
        mr.FailureCallbackResourceAdaptor(limited, drop_one),
        initial_pool_size=MIB,
        maximum_pool_size=64 * MIB,
    )
    cache += [pool.allocate(MIB), pool.allocate(MIB)]
    third = pool.allocate(MIB)
    pool.deallocate(third, MIB)
    for p in cache:
        pool.deallocate(p, MIB)


def test_pools_sized_by_free_memory(location):
    try:
        free, total = mr.available_device_memory(location)
    except ValueError as e:
        # A discrete device whose runtime has no free-memory query (NVIDIA's OpenCL,
        # WebGPU on a GPU): the error names the location and says what to do instead,
        # and sizing by a percentage is refused the same way.
        assert location in str(e) and "does not report free memory" in str(e), e
        assert "size pools in bytes" in str(e), e
        with pytest.raises(ValueError, match="does not report free memory"):
            mr.percent_of_free_device_memory(10, location)
        return
    assert 0 < free <= total
    tenth = mr.percent_of_free_device_memory(10, location)
    assert tenth % 256 == 0 and abs(tenth - free // 10) < free // 20 + 256
    with pytest.raises(ValueError, match="101%"):
        mr.percent_of_free_device_memory(101, location)
    pool = mr.PoolMemoryResource(
        mr.UpstreamMemoryResource(location),
        initial_pool_size=min(mr.percent_of_free_device_memory(1, location), 16 * MIB),
    )
    pool.deallocate(pool.allocate(1000), 1000)


def test_sizes_and_kinds_are_checked(location):
    up = mr.UpstreamMemoryResource(location)
    with pytest.raises(ValueError, match="unit"):
        mr.PoolMemoryResource(up, initial_pool_size="1 parsec")
    with pytest.raises(ValueError, match="larger than maximum_pool_size"):
        mr.PoolMemoryResource(up, initial_pool_size="2MiB", maximum_pool_size="1MiB")
    with pytest.raises(ValueError, match="memory kind"):
        mr.UpstreamMemoryResource(location, "fast")
    with pytest.raises(ValueError, match="neither"):
        mr.BinningMemoryResource(up, 10)
    # RMM's CUDA kinds: where the location lacks them, an error naming what it offers.
    for cls in (mr.ManagedMemoryResource, mr.PinnedHostMemoryResource, mr.CudaAsyncMemoryResource):
        try:
            r = cls(location)
        except ValueError as e:
            assert location in str(e) and "offers" in str(e)
        else:
            r.deallocate(r.allocate(100), 100)


def test_rmm_s_cuda_names_say_why_without_a_gpu():
    if any(l.startswith("cuda:") for l in locus.available()):
        pytest.skip("a CUDA device is here")
    with pytest.raises(Exception, match="cuda"):
        mr.CudaMemoryResource()


def test_sycl_usm_kinds_as_resources():
    if "sycl:0" not in locus.available():
        pytest.skip("no SYCL device")
    for kind in ("usm-device", "usm-shared", "usm-host"):
        r = mr.UpstreamMemoryResource("sycl:0", kind)
        p = r.allocate(4096)
        assert p != 0 and p % 64 == 0
        r.deallocate(p, 4096)


def test_threads_allocate_through_one_composition(location, restore):
    stats = mr.StatisticsResourceAdaptor(
        mr.PoolMemoryResource(mr.UpstreamMemoryResource(location), initial_pool_size=MIB)
    )
    mr.set_per_device_resource(location, stats)
    errors = []

    def work(seed):
        try:
            for i in range(50):
                b = locus.Buffer(location, 64 + i, dtype="uint8", fill=seed)
                assert b.to_numpy().tolist() == [seed] * (64 + i)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    gc.collect()
    counts = stats.allocation_counts
    assert counts["current_bytes"] == 0 and counts["total_count"] == 200


def test_a_log_replays_against_another_resource(location, tmp_path):
    log = tmp_path / "log.csv"
    upstream = mr.UpstreamMemoryResource(location)
    logging = mr.LoggingResourceAdaptor(upstream, log_file_name=str(log))
    blocks = [(logging.allocate(1024 * (i + 1)), 1024 * (i + 1)) for i in range(8)]
    for ptr, size in blocks[:6]:
        logging.deallocate(ptr, size)
    report = mr.replay(log, mr.PoolMemoryResource(upstream, initial_pool_size="1MiB"))
    assert report["operations"] == 14
    assert report["peak_live_bytes"] == 1024 * sum(range(1, 9))
    assert report["peak_live_count"] == 8
    assert report["end_live_count"] == 2 and report["end_live_bytes"] == 1024 * (7 + 8)
    with pytest.raises(OSError, match="cannot read the log"):
        mr.replay(tmp_path / "missing.csv", upstream)
    for ptr, size in blocks[6:]:
        logging.deallocate(ptr, size)


def test_sam_headroom_takes_a_device_that_uses_host_memory_in_place():
    """RMM's SamHeadroomMemoryResource: refused, naming the device, where its kernels
    cannot use system-allocated memory (an OpenCL device here); where they can (a SYCL
    CPU device with system USM, or a GPU with HMM / ATS) it hands out host memory."""
    here = locus.available()
    if "opencl:0" not in here:
        pytest.skip("SKIPPED on this machine: no opencl:0 to be refused")
    with pytest.raises(ValueError, match="opencl:0 does not use system-allocated memory in place"):
        mr.SamHeadroomMemoryResource("1GiB", location="opencl:0")
    if "sycl:0" not in here:
        pytest.skip("SKIPPED on this machine: no sycl:0")
    r = mr.SamHeadroomMemoryResource("1GiB", location="sycl:0")
    assert r.location == "host" and "sam_headroom(sycl:0" in repr(r), repr(r)
    p = r.allocate(1 << 20)
    r.deallocate(p, 1 << 20)
