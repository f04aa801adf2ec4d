"""A consumer closed while it waits on a source is not a source failure.

When a coroutine suspended inside a stream step is closed (``coro.close()``, or the
garbage collector finalizing an abandoned coroutine), Python throws ``GeneratorExit``
into it. The stream then settles as ``PROVIDER_ABORTED``, the coroutine closes at once
without awaiting anything (a closing coroutine that awaits is a ``RuntimeError``), and
the source's cleanup runs on the event loop afterwards.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Coroutine

import pytest

from course import (
    CourseModelRequest,
    CourseModelStream,
    FixtureProviderAdapter,
    FixtureProviderErrorCode,
)

from .helpers import end, failure_of, fixture, run, start, text, turns

Code = FixtureProviderErrorCode
REQUEST = CourseModelRequest("req-1")


class Blocking:
    """A class source: start, text, then a step that waits until it is released."""

    def __init__(self) -> None:
        self.pulls = 0
        self.closes = 0
        self.step_closed = 0
        self.release: asyncio.Future[None] | None = None

    def __aiter__(self) -> Blocking:
        return self

    async def __anext__(self) -> object:
        self.pulls += 1
        if self.pulls == 1:
            return start()
        if self.pulls == 2:
            return text("a")
        if self.pulls == 3:
            self.release = asyncio.get_running_loop().create_future()
            try:
                await self.release
            except GeneratorExit:
                self.step_closed += 1
                raise
            return end()
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self.closes += 1


async def blocked_stream() -> tuple[CourseModelStream, Blocking]:
    source = Blocking()
    stream = FixtureProviderAdapter(fixture(source)).stream(REQUEST)
    assert (await anext(stream)).to_dict()["text"] == "a"
    return stream, source


def suspend(coroutine: Coroutine[object, object, object]) -> None:
    """Run ``coroutine`` by hand up to its first suspension, as a task would."""
    assert isinstance(coroutine.send(None), asyncio.Future)


@pytest.mark.parametrize("path", ["anext", "result"])
def test_closing_a_consumer_blocked_on_a_source_settles_aborted_and_closes_at_once(
    path: str,
) -> None:
    async def main() -> None:
        stream, source = await blocked_stream()
        consumer = anext(stream) if path == "anext" else stream.result()
        suspend(consumer)
        consumer.close()  # neither raises nor awaits
        assert source.step_closed == 1
        assert stream._settled
        error = await failure_of(stream)
        assert error.code is Code.PROVIDER_ABORTED
        # The source's cleanup was scheduled on the loop, not run inside close().
        await turns()
        assert source.closes == 1
        assert asyncio.all_tasks() == {asyncio.current_task()}

    run(main())


def test_a_consumer_collected_while_blocked_on_a_source_settles_aborted() -> None:
    async def main() -> None:
        stream, source = await blocked_stream()

        async def consume() -> None:
            async for _ in stream:
                pass

        consumer = consume()
        suspend(consumer)
        del consumer
        gc.collect()  # finalizing it throws GeneratorExit in, as for an abandoned task
        assert stream._settled
        assert (await failure_of(stream)).code is Code.PROVIDER_ABORTED
        await turns()
        assert source.closes == 1

    run(main())


def test_closing_a_consumer_blocked_on_a_generator_source_is_not_a_source_failure() -> None:
    cleaned: list[str] = []
    reported: list[str] = []

    async def generator() -> AsyncIterator[object]:
        try:
            yield start()
            yield text("a")
            await asyncio.get_running_loop().create_future()
            yield end()
        finally:
            cleaned.append("finally")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: reported.append(str(context)))
        stream = FixtureProviderAdapter(fixture(generator())).stream(REQUEST)
        await anext(stream)
        consumer = stream.result()
        suspend(consumer)
        consumer.close()  # neither raises nor awaits
        assert (await failure_of(stream)).code is Code.PROVIDER_ABORTED
        await turns()

    run(main())
    # The generator's own cleanup ran, on the loop, after the consumer was gone. (CPython
    # 3.11 would strand a generator whose pending step a closing coroutine closed, as a
    # plain ``async for`` does: the adapter keeps that step and ends it itself.)
    assert cleaned == ["finally"]
    assert reported == []


def test_a_generator_source_whose_cleanup_awaits_is_cleaned_up_after_a_closed_consumer() -> None:
    events: list[str] = []

    async def generator() -> AsyncIterator[object]:
        try:
            yield start()
            await asyncio.get_running_loop().create_future()
            yield end()
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        finally:
            await asyncio.sleep(0)  # an asynchronous cleanup
            events.append("finally")

    async def main() -> None:
        stream = FixtureProviderAdapter(fixture(generator())).stream(REQUEST)
        consumer = stream.result()
        suspend(consumer)
        consumer.close()
        assert (await failure_of(stream)).code is Code.PROVIDER_ABORTED
        await turns()

    run(main())
    assert events == ["cancelled", "finally"]


def test_a_waiter_closed_while_another_task_drives_leaves_the_stream_alone() -> None:
    # Only the task stepping the source speaks for the stream; closing a coroutine that
    # merely waits for that step is like cancelling it: the stream carries on.
    async def main() -> None:
        stream, source = await blocked_stream()
        driver = asyncio.create_task(stream.result())
        await turns()
        assert source.pulls == 3
        waiter = anext(stream)
        suspend(waiter)
        waiter.close()
        assert not stream._settled
        assert source.release is not None
        source.release.set_result(None)
        response = await driver
        assert response.response_id == "r-1"
        assert source.closes == 0

    run(main())


def test_generator_exit_raised_by_the_source_itself_is_a_source_failure() -> None:
    async def raising() -> AsyncIterator[object]:
        yield start()
        await asyncio.sleep(0)
        raise GeneratorExit("the source's own")

    async def main() -> None:
        stream = FixtureProviderAdapter(fixture(raising())).stream(REQUEST)
        error = await failure_of(stream)
        assert error.code is Code.PROVIDER_INVALID_FIXTURE
        assert isinstance(error.__cause__, GeneratorExit)

    run(main())
