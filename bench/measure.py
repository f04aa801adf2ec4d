"""Timing and memory primitives: one end-to-end run, one traced run, first-chunk latency.

Every timed run is its own ``asyncio.run`` (debug mode off) after a full
``gc.collect()``; the collector stays enabled while timing, as in real use, and the
workload's input stays tracked, as a user's fixture is (never ``gc.freeze``): the
collections an implementation's allocations trigger walk it too. Times are CPU time
of the process (``time.process_time``), which other work on a shared machine moves far
less than wall time; the collector's share of each phase is timed by ``gc.callbacks``.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from time import perf_counter, process_time

from impls import Implementation
from workloads import Records, Workload, make_source

__all__ = ["Sample", "first_chunk_times", "peak_memory", "timed_run"]


@dataclass(frozen=True, slots=True)
class Sample:
    """One end-to-end run: CPU seconds to construct and to stream everything, and of
    each, the seconds the cyclic collector ran."""

    construct: float
    stream: float
    construct_collector: float = 0.0
    stream_collector: float = 0.0

    @property
    def total(self) -> float:
        return self.construct + self.stream

    @property
    def collector(self) -> float:
        return self.construct_collector + self.stream_collector


class _Collector:
    """CPU seconds spent in the cyclic collector while ``timing()`` is active."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = process_time()
        else:
            self.seconds += process_time() - self._started

    @contextmanager
    def timing(self) -> Iterator[None]:
        gc.callbacks.append(self._callback)
        try:
            yield
        finally:
            gc.callbacks.remove(self._callback)


def _expected_items(impl: Implementation, workload: Workload) -> int:
    # The floor yields one object per record; the others one chunk per delta or call.
    return workload.record_count if impl.finish is None else workload.chunk_count


async def _consume(impl: Implementation, adapter: object, requests: list[object]) -> int:
    """Stream every response: iterate every chunk, then ``result()`` (if any)."""
    count = 0
    open_stream, finish = impl.open, impl.finish
    for request in requests:
        stream = open_stream(adapter, request)
        async for _ in stream:
            count += 1
        if finish is not None:
            await finish(stream)
    return count


async def _timed(impl: Implementation, workload: Workload) -> Sample:
    fixture = workload.fixture()
    requests = [impl.request(f"req-{index}") for index in range(workload.response_count)]
    building, streaming = _Collector(), _Collector()
    started = process_time()
    with building.timing():
        adapter = impl.construct(fixture)
    constructed = process_time()
    with streaming.timing():
        count = await _consume(impl, adapter, requests)
    ended = process_time()
    expected = _expected_items(impl, workload)
    if count != expected:
        raise AssertionError(f"{impl.name} on {workload.name}: {count} items, expected {expected}")
    return Sample(constructed - started, ended - constructed, building.seconds, streaming.seconds)


def timed_run(impl: Implementation, workload: Workload) -> Sample:
    """Construct and stream ``workload`` once; return the two durations (CPU time)."""
    gc.collect()
    return asyncio.run(_timed(impl, workload), debug=False)


async def _traced(impl: Implementation, workload: Workload) -> int:
    fixture = workload.fixture()
    requests = [impl.request(f"req-{index}") for index in range(workload.response_count)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        adapter = impl.construct(fixture)
        await _consume(impl, adapter, requests)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - before


def peak_memory(impl: Implementation, workload: Workload) -> int:
    """Peak bytes allocated (tracemalloc) by construction plus streaming, own run."""
    gc.collect()
    return asyncio.run(_traced(impl, workload), debug=False)


async def _first_chunks(
    impls: tuple[Implementation, ...], records: Records, trials: int
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {impl.name: [] for impl in impls}
    for trial in range(trials):
        # Rotate the order so no implementation always runs first.
        shift = trial % len(impls)
        for impl in impls[shift:] + impls[:shift]:
            fixture: dict[str, object] = {
                "schemaVersion": 1,
                "responses": [{"records": make_source(records)}],
            }
            adapter = impl.construct(fixture)
            request = impl.request("req-0")
            started = perf_counter()
            stream = impl.open(adapter, request)
            iterator = aiter(stream)
            await anext(iterator)
            if impl.yields_start:
                await anext(iterator)
            elapsed = perf_counter() - started
            await impl.close(stream)
            times[impl.name].append(elapsed)
    return times


def first_chunk_times(
    impls: tuple[Implementation, ...], records: Records, trials: int
) -> dict[str, list[float]]:
    """Seconds from ``stream()`` to the first chunk of a source of ``records``, per trial.

    The adapter is built (untimed) around a fresh source each trial; the clock runs
    from opening the stream to receiving the first text delta's chunk (the source's
    second record: the floor, which also yields an object for ``response_start``,
    is timed to that same record), and the stream is then closed (untimed), which
    asks the source to clean up.
    """
    gc.collect()
    return asyncio.run(_first_chunks(impls, records, trials), debug=False)
