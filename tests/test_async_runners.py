"""Streams under other async runners: trio, and anyio on either of its backends.

What works where:

- Array records stream under any runner. The stream's turns are trio checkpoints under
  trio, so a trio cancel scope (or anyio's, on either backend) interrupts a long stream,
  and an abort from another task stops it, as under asyncio.
- An async record source needs asyncio: its steps run in an asyncio task so that an
  abort or ``aclose()`` can interrupt them. Under trio the first step raises a
  ``TypeError`` naming asyncio, and the source is never touched.
- ``AbortSignal.wait()`` waits on an asyncio future: under trio it is a ``TypeError``
  naming asyncio. ``abort()``, ``aborted`` and ``reason`` work anywhere.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
import anyio.lowlevel
import pytest
import trio
import trio.lowlevel

from course import (
    AbortController,
    CourseModelRequest,
    CourseModelStream,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    load_fixture,
)

from .helpers import ROUNDTRIP_PATH, end, fixture, start, text

Code = FixtureProviderErrorCode
REQUEST = CourseModelRequest("req-1")
BACKENDS = ["asyncio", "trio"]


def long_stream(count: int, controller: AbortController | None = None) -> CourseModelStream:
    records = [start(), *([text("t")] * count), end()]
    adapter = FixtureProviderAdapter(fixture(records))
    return adapter.stream(REQUEST, None if controller is None else controller.signal)


async def roundtrip() -> list[tuple[list[str], str]]:
    """Both responses of the checked-in fixture: chunk types, then the stop reason."""
    adapter = FixtureProviderAdapter(load_fixture(ROUNDTRIP_PATH))
    seen: list[tuple[list[str], str]] = []
    for _ in range(2):
        stream = adapter.stream(REQUEST)
        chunks: list[str] = [chunk.type async for chunk in stream]
        seen.append((chunks, (await stream.result()).stop_reason))
    return seen


EXPECTED_ROUNDTRIP = [(["toolCall"], "toolCall"), (["textDelta"], "stop")]


class Probe:
    """A class source that counts what is asked of it."""

    def __init__(self) -> None:
        self.aiter_calls = 0
        self.pulls = 0
        self.closes = 0

    def __aiter__(self) -> Probe:
        self.aiter_calls += 1
        return self

    async def __anext__(self) -> object:
        self.pulls += 1
        records = [start(), text("a")]
        if self.pulls <= len(records):
            return records[self.pulls - 1]
        await asyncio.get_running_loop().create_future()  # blocks until cancelled
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        self.closes += 1


# -- array records run anywhere ------------------------------------------------------------


def test_array_records_iterate_and_complete_under_trio() -> None:
    assert trio.run(roundtrip) == EXPECTED_ROUNDTRIP


@pytest.mark.parametrize("backend", BACKENDS)
def test_array_records_iterate_and_complete_under_anyio(backend: str) -> None:
    assert anyio.run(roundtrip, backend=backend) == EXPECTED_ROUNDTRIP


def test_array_records_give_trio_a_turn_every_thousand_records() -> None:
    async def main() -> list[int]:
        stream = long_stream(5_500)
        delivered = 0
        progress: list[int] = []

        async def watch() -> None:
            while True:
                progress.append(delivered)
                await trio.lowlevel.checkpoint()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            await trio.lowlevel.checkpoint()
            async for _ in stream:
                delivered += 1
            nursery.cancel_scope.cancel()
        return [*progress, delivered]

    progress = trio.run(main)
    assert progress[-1] == 5_500
    assert len(progress) >= 6
    # Trio runs each batch of ready tasks in a random order, so the watcher may run
    # just before one turn and just after the next: two turns' worth of records.
    assert max(b - a for a, b in itertools.pairwise(progress)) <= 2 * 1_000


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_anyio_cancel_scope_interrupts_a_long_array_stream(backend: str) -> None:
    async def main() -> None:
        stream = long_stream(20_000)
        with anyio.move_on_after(0) as scope:  # expires at the stream's first turn
            await stream.result()
        assert scope.cancelled_caught
        with pytest.raises(FixtureProviderError) as caught:
            await stream.result()
        assert caught.value.code is Code.PROVIDER_ABORTED

    anyio.run(main, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_abort_from_another_task_stops_an_array_stream(backend: str) -> None:
    async def main() -> None:
        controller = AbortController()
        stream = long_stream(20_000, controller)
        delivered: list[object] = []

        async def abort_soon() -> None:
            controller.abort("from another task")

        async with anyio.create_task_group() as group:
            group.start_soon(abort_soon)
            with pytest.raises(FixtureProviderError) as caught:
                async for chunk in stream:
                    delivered.append(chunk)
        assert caught.value.code is Code.PROVIDER_ABORTED
        # Under trio the aborting task may run one turn late (random order in a batch).
        assert 0 < len(delivered) <= 2 * 1_000

    anyio.run(main, backend=backend)


def test_aclose_and_async_with_work_under_trio() -> None:
    async def main() -> None:
        async with long_stream(10) as stream:
            await anext(stream)
        with pytest.raises(FixtureProviderError) as caught:
            await stream.result()
        assert caught.value.code is Code.PROVIDER_ABORTED

    trio.run(main)


# -- what needs asyncio says so ----------------------------------------------------------


async def _refused(step: Callable[[CourseModelStream], Awaitable[object]]) -> Probe:
    probe = Probe()
    stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST)
    with pytest.raises(TypeError, match="asyncio"):
        await step(stream)
    assert not stream._settled  # nothing was consumed: the stream is as it was
    await stream.aclose()  # closing it needs nothing of asyncio either
    with pytest.raises(FixtureProviderError) as caught:
        await stream.result()
    assert caught.value.code is Code.PROVIDER_ABORTED
    return probe


@pytest.mark.parametrize("path", ["anext", "result"])
def test_an_async_source_under_trio_is_a_type_error_naming_asyncio(path: str) -> None:
    async def main() -> Probe:
        if path == "anext":
            return await _refused(anext)
        return await _refused(CourseModelStream.result)

    probe = trio.run(main)
    assert (probe.aiter_calls, probe.pulls, probe.closes) == (0, 0, 0)


def test_an_async_source_under_anyio_trio_is_a_type_error_naming_asyncio() -> None:
    probe = anyio.run(_refused, CourseModelStream.result, backend="trio")
    assert probe.aiter_calls == 0


def test_signal_wait_under_trio_is_a_type_error_naming_asyncio() -> None:
    async def main() -> None:
        controller = AbortController()
        with pytest.raises(TypeError, match="asyncio"):
            await controller.signal.wait()
        controller.abort("anywhere")
        assert controller.signal.aborted
        await controller.signal.wait()  # already aborted: returns at once, anywhere

    trio.run(main)


# -- async sources under anyio's asyncio backend ------------------------------------------


def test_an_anyio_cancel_scope_interrupts_a_blocked_source_step_and_cleans_up() -> None:
    async def main() -> None:
        probe = Probe()
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST)
        assert (await anext(stream)).to_dict()["text"] == "a"
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:

                async def cancel_soon() -> None:
                    await anyio.lowlevel.checkpoint()
                    scope.cancel()

                group.start_soon(cancel_soon)
                await anext(stream)  # blocks in the source until the scope is cancelled
        assert scope.cancelled_caught
        assert probe.closes == 1
        with pytest.raises(FixtureProviderError) as caught:
            await stream.result()
        assert caught.value.code is Code.PROVIDER_ABORTED
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0

    anyio.run(main, backend="asyncio")


def test_an_abort_interrupts_a_blocked_source_step_under_anyio_asyncio() -> None:
    async def main() -> None:
        probe = Probe()
        controller = AbortController()
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST, controller.signal)
        async with anyio.create_task_group() as group:
            group.start_soon(controller.signal.wait)

            async def abort_soon() -> None:
                await anyio.lowlevel.checkpoint()
                controller.abort("stop")

            group.start_soon(abort_soon)
            chunks = []
            with pytest.raises(FixtureProviderError) as caught:
                async for chunk in stream:
                    chunks.append(chunk)
        assert caught.value.code is Code.PROVIDER_ABORTED
        assert len(chunks) == 1 and probe.closes == 1

    anyio.run(main, backend="asyncio")


# -- pytest-asyncio ----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_sources_and_aborts_work_under_pytest_asyncio() -> None:
    async def records() -> AsyncIterator[object]:
        yield start()
        yield text("a")
        await asyncio.sleep(0)
        yield end()

    adapter = FixtureProviderAdapter(fixture(records(), [start(), text("b"), end()]))
    assert (await adapter.stream(REQUEST).result()).response_id == "r-1"
    controller = AbortController()
    stream = adapter.stream(REQUEST, controller.signal)
    await anext(stream)
    controller.abort()
    with pytest.raises(FixtureProviderError) as caught:
        await stream.result()
    assert caught.value.code is Code.PROVIDER_ABORTED
