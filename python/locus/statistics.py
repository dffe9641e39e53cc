"""Allocation and copy statistics in scopes, as RMM's ``rmm.statistics``.

The names and semantics are RMM's (``enable_statistics``, ``get_statistics``,
``push_statistics``, ``pop_statistics``, the ``statistics()`` context, ``profiler`` and
``ProfilerRecords``), with two differences a locus user gains from: the counts cover
every allocation locus makes, adopts or hands out from a resource at every location
(RMM's cover the current device resource), and each scope also counts its copies per
route kind (``copies``, ``copied_bytes``, ``copy_seconds``)::

    import locus, locus.statistics as stats

    with stats.statistics():
        b = locus.Buffer("opencl:0", 1024, dtype="float32", fill=1.0)
        b.to_numpy()
        print(stats.get_statistics())

    @stats.profiler()
    def step():
        ...
    step()
    print(stats.default_profiler_records.report())

``profiler`` used as a context without a ``name`` is named after the file and line that
opened it (RMM requires a name there).
"""

import contextlib as _contextlib
import inspect as _inspect
import threading as _threading
from collections import defaultdict as _defaultdict
from dataclasses import dataclass as _dataclass, field as _field
from functools import wraps as _wraps
from typing import Dict, Literal, Optional

from . import _locus


@_dataclass
class Statistics:
    """What one scope counted (``{get,push,pop}_statistics()``).

    ``current_*`` are allocations minus frees in the scope (negative when it freed
    memory allocated before it, as in RMM), ``peak_*`` the most they were, ``total_*``
    what was allocated; ``copies``, ``copied_bytes`` and ``copy_seconds`` map a route
    kind (``"direct"``, ``"mapped"``, ``"staged"``, ...) to the scope's copies on it.
    """

    current_bytes: int
    current_count: int
    peak_bytes: int
    peak_count: int
    total_bytes: int
    total_count: int
    copies: Dict[str, int] = _field(default_factory=dict)
    copied_bytes: Dict[str, int] = _field(default_factory=dict)
    copy_seconds: Dict[str, float] = _field(default_factory=dict)


def _wrap(counts):
    return None if counts is None else Statistics(**counts)


def enable_statistics() -> None:
    """Start counting (opens the first scope); a no-op when counting already."""
    if _locus._get_statistics() is None:
        _locus._push_statistics()


def get_statistics() -> Optional[Statistics]:
    """The top scope's counts so far, or None when statistics are not enabled."""
    return _wrap(_locus._get_statistics())


def push_statistics() -> Optional[Statistics]:
    """Push a new scope of zero counters; returns the counts of the scope under it
    (before the push), or None, pushing nothing, when statistics are not enabled."""
    if _locus._get_statistics() is None:
        return None
    return _wrap(_locus._push_statistics())


def pop_statistics() -> Optional[Statistics]:
    """Pop the top scope and return its counts (added to the scope under it), or None
    when statistics are not enabled."""
    return _wrap(_locus._pop_statistics())


@_contextlib.contextmanager
def statistics():
    """Counts what the block allocates and copies in a scope of its own (enabling
    statistics for the block when they were not)."""
    _locus._push_statistics()
    try:
        yield
    finally:
        _locus._pop_statistics()


class ProfilerRecords:
    """Records of the statistics a ``profiler`` took, by name (RMM's)."""

    @_dataclass
    class Data:
        """One code block's record: calls, bytes allocated in all, the most held."""

        num_calls: int = 0
        memory_total: int = 0
        memory_peak: int = 0

        def add(self, memory_total: int, memory_peak: int):
            self.num_calls += 1
            self.memory_total += memory_total
            self.memory_peak = max(self.memory_peak, memory_peak)

    def __init__(self) -> None:
        self._lock = _threading.Lock()
        self._records: Dict[str, "ProfilerRecords.Data"] = _defaultdict(ProfilerRecords.Data)

    def add(self, name: str, data: Statistics) -> None:
        """Adds one call's statistics to the record ``name`` (thread safe)."""
        with self._lock:
            self._records[name].add(memory_total=data.total_bytes, memory_peak=data.peak_bytes)

    @property
    def records(self) -> Dict[str, "ProfilerRecords.Data"]:
        """The records by name."""
        with self._lock:
            return dict(self._records)

    def report(
        self, ordered_by: Literal["num_calls", "memory_peak", "memory_total"] = "memory_peak"
    ) -> str:
        """The records as a table, largest first (RMM's ``pretty_print``)."""
        records = sorted(
            self.records.items(), key=lambda item: getattr(item[1], ordered_by), reverse=True
        )
        out = "Memory Profiling\n================\n\n"
        if not records:
            return out + "No data: was a profiler run?"
        out += f"Ordered by:   {ordered_by}\nMemory units: bytes\n\n"
        out += "ncalls     memory_peak    memory_total  filename:lineno(function)\n"
        for name, data in records:
            out += f"{data.num_calls:6,d} {data.memory_peak:15,d} {data.memory_total:15,d}  {name}\n"
        return out[:-1]

    pretty_print = report

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.records})"

    def __str__(self) -> str:
        return self.report()


def _name_of(func) -> str:
    func = _inspect.unwrap(func)
    try:
        _, line = _inspect.getsourcelines(func)
        path = _inspect.getfile(func)
    except (OSError, TypeError):
        return func.__qualname__
    return f"{path}:{line}({func.__qualname__})"


default_profiler_records = ProfilerRecords()


def profiler(*, records: ProfilerRecords = default_profiler_records, name: str = ""):
    """Decorator and context that record the statistics of a function or block under a
    name: the decorated function's file, line and name, the context's file and line,
    or ``name``. Works whether or not statistics are enabled (each call has a scope)."""

    class _Profiler:
        def __call__(self, func):
            label = name or _name_of(func)

            @_wraps(func)
            def wrapper(*args, **kwargs):
                _locus._push_statistics()
                try:
                    return func(*args, **kwargs)
                finally:
                    counts = _wrap(_locus._pop_statistics())
                    if counts is not None:
                        records.add(name=label, data=counts)

            return wrapper

        def __enter__(self):
            if name:
                self._label = name
            else:
                caller = _inspect.stack(context=0)[1]
                self._label = f"{caller.filename}:{caller.lineno}({caller.function})"
            _locus._push_statistics()
            return self

        def __exit__(self, *exc):
            counts = _wrap(_locus._pop_statistics())
            if counts is not None:
                records.add(name=self._label, data=counts)
            return False

    return _Profiler()


__all__ = [
    "ProfilerRecords",
    "Statistics",
    "default_profiler_records",
    "enable_statistics",
    "get_statistics",
    "pop_statistics",
    "profiler",
    "push_statistics",
    "statistics",
]
