"""The trace and statistics scopes from Python (issue 68): a pipeline at every location
written as a user writes it, traced with ``locus.trace``; RMM's ``rmm.statistics`` API
(scopes, the context, the profiler with file and line) over locus's counts."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import locus
import locus.statistics as stats

from conftest import LOCATIONS


def _events(path):
    with open(path) as f:
        events = json.load(f)
    for e in events:
        assert "ph" in e and "name" in e and "pid" in e
    return events


def test_a_pipeline_at_every_location_is_traced(tmp_path):
    path = tmp_path / "run.json"
    locations = LOCATIONS  # every location here; LOCUS_REQUIRE fails the session when one is missing
    with locus.trace(str(path)) as t:
        b = locus.Buffer("host", 4096, dtype="float32", fill=1.5)
        for at in locations:
            with b.access_mut(at):  # moves the data there, as a kernel's write would
                pass
        got = b.to_numpy()
        del b
    assert t.path == str(path)
    assert np.all(got == 1.5)
    events = _events(path)
    copies = [e for e in events if e.get("cat", "").startswith("copy,")]
    assert copies, "copies are traced"
    for e in copies:
        assert e["args"]["bytes"] > 0 and e["args"]["route"] in {"direct", "peer", "mapped", "staged"}
    moved_to = {e["args"]["dst"] for e in copies}
    for at in locations:
        if locus.route("host", at)["kind"] != "in-place":
            assert at in moved_to, f"the move to {at} is in the trace: {sorted(moved_to)}"
    allocated = {e["args"]["id"] for e in events if e["name"] == "allocate"}
    freed = {e["args"]["id"] for e in events if e["name"] == "free"}
    assert allocated and allocated <= freed, "every allocation is freed"


def test_an_unwritable_trace_path_names_the_path(tmp_path):
    with pytest.raises(ValueError, match="nonexistent-locus-dir.*a directory you can write"):
        locus.trace("/nonexistent-locus-dir/run.json")


def test_locus_trace_traces_a_whole_run(tmp_path):
    path = tmp_path / "whole.json"
    code = "import locus; b = locus.Buffer('host', 256, dtype='uint8', fill=1); b.to_numpy()"
    env = dict(os.environ, LOCUS_TRACE=str(path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=tmp_path)
    assert any(e["name"] == "allocate" for e in _events(path))


def test_statistics_scopes_are_rmm_s():
    assert stats.get_statistics() is None
    assert stats.push_statistics() is None, "a no-op while statistics are off, as in RMM"
    with stats.statistics():
        a = locus.Memory("host", 1000)
        before = stats.push_statistics()
        assert before.total_bytes == 1000 and before.total_count == 1
        b = locus.Memory("host", 500)
        c = locus.Memory("host", 500)
        b.copy_to(c, 500)
        del a
        inner = stats.pop_statistics()
        assert (inner.total_bytes, inner.total_count) == (1000, 2)
        # a (1000 B, allocated in the scope under it) freed here: as in RMM, this scope's
        # current count goes down by it.
        assert (inner.current_bytes, inner.current_count) == (500 + 500 - 1000, 2 - 1)
        assert sum(inner.copies.values()) == 1 and sum(inner.copied_bytes.values()) == 500
        outer = stats.get_statistics()
        assert (outer.total_bytes, outer.peak_bytes, outer.current_bytes) == (2000, 2000, 1000)
        del b, c
    assert stats.get_statistics() is None


def test_the_profiler_names_records_by_file_and_line():
    records = stats.ProfilerRecords()

    @stats.profiler(records=records)
    def make():
        return locus.Memory("host", 4096)

    make()
    make()
    with stats.profiler(records=records):
        locus.Memory("host", 64)
    names = list(records.records)
    assert any(n.endswith(".make)") and "test_trace.py:" in n for n in names), names
    decorated = next(d for n, d in records.records.items() if n.endswith(".make)"))
    assert (decorated.num_calls, decorated.memory_total, decorated.memory_peak) == (2, 8192, 4096)
    block = next(n for n in names if not n.endswith(".make)"))
    assert "test_trace.py:" in block and "test_the_profiler" in block, block
    assert "memory_peak" in records.report()
