"""Every stream gives the event loop a turn: at least once every 1,000 records, and
before ``result()`` returns.

So an abort from another task, ``asyncio.timeout()`` or task cancellation can interrupt
any stream, even one over hundreds of thousands of array records or a source whose steps
never suspend. Where a cancellation lands decides what it does to the stream: inside a
stream step (one of these turns, or a source's pending step) it stops processing and
settles the stream as ``PROVIDER_ABORTED``; in the consumer's own code between steps it
leaves the stream alone, so ``result()`` can still complete it.

No test measures time: each watches what another task sees when it gets its turns.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import pytest

from course import (
    AbortController,
    CourseModelRequest,
    CourseModelStream,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)

from .helpers import end, fixture, run, start, text

Code = FixtureProviderErrorCode
REQUEST = CourseModelRequest("req-1")
EVERY = 1_000  # the SPEC's bound: at least one turn per this many records


def text_records(count: int) -> list[object]:
    """A start, ``count`` text deltas (each one chunk), an end.

    The deltas are one shared object, which the adapter copies once.
    """
    return [start(), *([text("t")] * count), end()]


def array_stream(count: int, controller: AbortController | None = None) -> CourseModelStream:
    adapter = FixtureProviderAdapter(fixture(text_records(count)))
    return adapter.stream(REQUEST, None if controller is None else controller.signal)


class Counting:
    """A source that never suspends: ``count`` text records between a start and an end."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.pulls = 0
        self.closes = 0

    def __aiter__(self) -> Counting:
        return self

    async def __anext__(self) -> object:
        self.pulls += 1
        if self.pulls == 1:
            return start()
        if self.pulls <= self.count + 1:
            return text("t")
        if self.pulls == self.count + 2:
            return end()
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self.closes += 1

    @staticmethod
    async def of(records: list[object]) -> AsyncIterator[object]:
        """A source that never suspends, giving ``records``."""
        for record in records:
            yield record


async def watch(progress: list[int], read: object) -> None:
    """Append ``read()`` each time this task gets a turn, until cancelled."""
    assert callable(read)
    while True:
        progress.append(read())
        await asyncio.sleep(0)


def gaps(progress: list[int]) -> list[int]:
    return [later - earlier for earlier, later in itertools.pairwise(progress)]


async def stop_watching(watcher: asyncio.Task[None]) -> None:
    watcher.cancel()
    await asyncio.wait((watcher,))


# -- a turn at least every 1,000 records -------------------------------------------------


def test_iterating_array_records_lets_other_tasks_run_every_thousand_records() -> None:
    async def main() -> list[int]:
        stream = array_stream(5_500)
        delivered = 0
        progress: list[int] = []
        watcher = asyncio.create_task(watch(progress, lambda: delivered))
        await asyncio.sleep(0)
        async for _ in stream:  # the body never awaits: only the stream can yield
            delivered += 1
        progress.append(delivered)
        await stop_watching(watcher)
        return progress

    progress = run(main())
    assert progress[-1] == 5_500
    assert len(progress) >= 7
    assert max(gaps(progress)) <= EVERY


def test_result_over_a_source_that_never_suspends_lets_other_tasks_run() -> None:
    async def main() -> list[int]:
        source = Counting(5_500)
        stream = FixtureProviderAdapter(fixture(source)).stream(REQUEST)
        progress: list[int] = []
        watcher = asyncio.create_task(watch(progress, lambda: source.pulls))
        await asyncio.sleep(0)
        response = await stream.result()
        progress.append(source.pulls)
        await stop_watching(watcher)
        assert len(response.message.content) == 5_500
        return progress

    progress = run(main())
    assert len(progress) >= 7
    assert max(gaps(progress)) <= EVERY


def test_an_abort_from_another_task_interrupts_result_over_300_000_array_records() -> None:
    controller = AbortController()
    stream = array_stream(300_000, controller)  # built outside the loop: it takes a while

    async def main() -> None:
        asyncio.get_running_loop().call_soon(controller.abort, "from another task")
        with pytest.raises(FixtureProviderError) as caught:
            await stream.result()
        assert caught.value.code is Code.PROVIDER_ABORTED
        # Interrupted early: the chunks it passed are kept, and they are few.
        delivered = [chunk async for chunk in _kept(stream)]
        assert 0 < len(delivered) <= EVERY

    run(main())


async def _kept(stream: CourseModelStream) -> AsyncIterator[object]:
    try:
        async for chunk in stream:
            yield chunk
    except FixtureProviderError as error:
        assert error.code is Code.PROVIDER_ABORTED


def test_asyncio_timeout_interrupts_result_over_array_records() -> None:
    stream = array_stream(20_000)

    async def main() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0):  # expires at the loop's next turn
                await stream.result()
        with pytest.raises(FixtureProviderError) as caught:
            await stream.result()
        assert caught.value.code is Code.PROVIDER_ABORTED
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]

    run(main())


def test_cancelling_a_task_iterating_array_records_interrupts_it() -> None:
    stream = array_stream(20_000)

    async def main() -> None:
        delivered: list[object] = []

        async def consume() -> None:
            async for chunk in stream:
                delivered.append(chunk)

        consumer = asyncio.create_task(consume())
        await asyncio.sleep(0)  # the consumer runs until the stream's first turn
        assert 0 < len(delivered) <= EVERY
        consumer.cancel()
        await asyncio.wait((consumer,))
        assert consumer.cancelled()
        with pytest.raises(FixtureProviderError) as caught:
            await stream.result()
        assert caught.value.code is Code.PROVIDER_ABORTED
        assert "cancelled" in caught.value.message

    run(main())


def test_cancelling_result_over_a_source_that_never_suspends_cleans_the_source_up() -> None:
    async def main() -> None:
        source = Counting(20_000)
        stream = FixtureProviderAdapter(fixture(source)).stream(REQUEST)
        task = asyncio.create_task(stream.result())
        await asyncio.sleep(0)
        assert 0 < source.pulls <= EVERY + 1
        task.cancel()
        await asyncio.wait((task,))
        assert task.cancelled()
        assert source.closes == 1
        with pytest.raises(FixtureProviderError) as caught:
            await stream.result()
        assert caught.value.code is Code.PROVIDER_ABORTED

    run(main())


@pytest.mark.parametrize("kind", ["array", "source"])
def test_a_turn_between_the_end_and_a_record_after_it_changes_nothing(kind: str) -> None:
    # response_end is the 1,000th record, so the turn falls right after it.
    records: list[object] = [start(), *([text("t")] * (EVERY - 2)), end(), text("late")]

    async def main() -> str:
        feed: object = records if kind == "array" else Counting.of(records)
        stream = FixtureProviderAdapter(fixture(feed)).stream(REQUEST)
        with pytest.raises(FixtureProviderError) as caught:
            await stream.result()
        assert caught.value.record_index == EVERY
        return caught.value.code.value

    assert run(main()) == "PROVIDER_INVALID_TERMINAL"


# -- a turn before result() returns ------------------------------------------------------


async def outcome_of(stream: CourseModelStream) -> object:
    try:
        return await stream.result()
    except FixtureProviderError as error:
        return error


@pytest.mark.parametrize("settled", [False, True], ids=["streaming", "already-settled"])
@pytest.mark.parametrize("outcome", ["response", "error"])
def test_result_gives_the_loop_a_turn_before_it_returns(settled: bool, outcome: str) -> None:
    records = text_records(2) if outcome == "response" else [text("orphan")]

    async def main() -> None:
        stream = FixtureProviderAdapter(fixture(records)).stream(REQUEST)
        if settled:
            await outcome_of(stream)
        ran: list[bool] = []
        asyncio.get_running_loop().call_soon(ran.append, True)
        await outcome_of(stream)
        assert ran == [True]

    run(main())


def test_a_loop_of_short_results_lets_other_tasks_run() -> None:
    async def main() -> int:
        adapter = FixtureProviderAdapter(fixture(*([text_records(1)] * 50)))
        turns = 0

        async def count() -> None:
            nonlocal turns
            while True:
                turns += 1
                await asyncio.sleep(0)

        counter = asyncio.create_task(count())
        for _ in range(50):
            await adapter.stream(REQUEST).result()
        counter.cancel()
        await asyncio.wait((counter,))
        return turns

    assert run(main()) >= 50


# -- where a cancellation lands ----------------------------------------------------------


@pytest.mark.parametrize("kind", ["array", "source"])
def test_a_cancel_in_the_consumers_own_body_leaves_the_stream_for_result(kind: str) -> None:
    # The README's nuance: the cancellation lands in the consumer's own await between
    # chunks, not inside a stream step, so the stream is left as it was.
    async def main() -> None:
        records = text_records(3)
        feed: object = records if kind == "array" else Counting.of(records)
        stream = FixtureProviderAdapter(fixture(feed)).stream(REQUEST)
        gate = asyncio.Event()
        delivered: list[object] = []

        async def consume() -> None:
            async for chunk in stream:
                delivered.append(chunk)
                await gate.wait()

        consumer = asyncio.create_task(consume())
        await asyncio.sleep(0)
        assert len(delivered) == 1
        consumer.cancel()
        await asyncio.wait((consumer,))
        assert consumer.cancelled()
        assert not stream._settled
        response = await stream.result()
        assert len(response.message.content) == 3

    run(main())


def test_a_cancel_inside_a_stream_turn_settles_the_stream_as_aborted() -> None:
    async def main() -> None:
        stream = array_stream(2_500)
        task = asyncio.create_task(stream.result())
        await asyncio.sleep(0)  # result() runs to its first turn
        task.cancel()
        await asyncio.wait((task,))
        assert task.cancelled()
        assert stream._settled
        with pytest.raises(FixtureProviderError) as caught:
            await stream.result()
        assert caught.value.code is Code.PROVIDER_ABORTED

    run(main())


def test_a_consumer_closed_at_a_turn_settles_the_stream_and_closes_at_once() -> None:
    async def main() -> None:
        stream = array_stream(2_500)
        consumer = stream.result()
        assert consumer.send(None) is None  # suspended in the stream's turn
        consumer.close()  # must neither raise nor await
        assert stream._settled
        with pytest.raises(FixtureProviderError) as caught:
            await stream.result()
        assert caught.value.code is Code.PROVIDER_ABORTED

    run(main())
