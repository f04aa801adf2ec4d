"""``delay`` (schema version 2): the stream waits before it judges a record, and every
interruption an async source's step has applies to the wait.

No test really waits long: a wait that must be interrupted is an hour long and the
interruption is driven (an abort, a close, a cancellation, a timeout moved to now, a
closed coroutine), so a wait that were not interrupted would leave its task unfinished
after a few event-loop turns instead of finishing; a wait that must end on its own is a
few milliseconds. Checks that never sleep are proven with an hour's delay finishing
at the first ``send`` of a coroutine run with no event loop at all.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Coroutine, Sequence

import pytest
import trio

from course import (
    AbortController,
    CourseModelRequest,
    CourseModelResponse,
    CourseModelStream,
    CourseTextDeltaChunk,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)

from .helpers import collect, end, failure_of, run, start, text, turns

Code = FixtureProviderErrorCode
REQUEST = CourseModelRequest("req-1")
HOUR = 3600  # the longest delay: never really waited for


def v2(*responses: object) -> dict[str, object]:
    return {"schemaVersion": 2, "responses": [{"records": r} for r in responses]}


def delayed(record: dict[str, object], seconds: object) -> dict[str, object]:
    return {**record, "delay": seconds}


def stream_of(records: object, signal: object = None) -> CourseModelStream:
    return FixtureProviderAdapter(v2(records)).stream(REQUEST, signal)  # type: ignore[arg-type]


async def source(records: Sequence[object]) -> AsyncIterator[object]:
    for record in records:
        yield record


MODES = pytest.mark.parametrize("mode", ["array", "source"])


def records_in(mode: str, records: Sequence[object]) -> object:
    return records if mode == "array" else source(records)


WAITING: list[object] = [start(), text("a"), delayed(text("b"), HOUR), end()]
"""A response whose third record waits an hour: the first chunk comes at once."""


async def waiting_stream(mode: str, signal: object = None) -> CourseModelStream:
    """A stream whose consumer has the first chunk and now waits an hour for the next."""
    stream = stream_of(records_in(mode, WAITING), signal)
    assert await anext(stream) == CourseTextDeltaChunk("a", 0)
    return stream


async def pending(coroutine: Coroutine[object, object, object]) -> asyncio.Task[object]:
    """``coroutine`` as a task, run until it waits (it must still be waiting)."""
    task = asyncio.ensure_future(coroutine)
    await turns()
    assert not task.done(), "the delay did not make the stream wait"
    return task


# -- waiting ------------------------------------------------------------------------------


@MODES
def test_short_delays_are_waited_then_every_record_is_judged(mode: str) -> None:
    records = [
        delayed(start(), 0.002),
        text("a"),
        delayed(text("b"), 0.001),
        delayed(end(), 0),
    ]
    outcome = run(collect(stream_of(records_in(mode, records))))
    assert outcome.chunks == [CourseTextDeltaChunk("a", 0), CourseTextDeltaChunk("b", 1)]
    assert outcome.response is not None
    assert outcome.response.stop_reason == "stop"


@MODES
def test_a_delay_holds_its_record_back_and_nothing_after_it(mode: str) -> None:
    async def main() -> None:
        stream = await waiting_stream(mode)
        task = await pending(anext(stream))
        assert not stream._settled
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())


@MODES
def test_a_delay_on_response_start_is_the_time_to_the_first_token(mode: str) -> None:
    async def main() -> None:
        stream = stream_of(records_in(mode, [delayed(start(), HOUR), text("a"), end()]))
        task = await pending(stream.result())
        assert stream.response_id is None  # the start itself waits
        await stream.aclose()
        assert (await failure_of(stream)).code is Code.PROVIDER_ABORTED
        with pytest.raises(FixtureProviderError):
            await task

    run(main())


@MODES
def test_a_valid_delay_is_waited_before_the_record_is_judged_whatever_it_is(mode: str) -> None:
    # An unknown type, a record before the start, a record after the end: each waits
    # first, so interrupting the wait settles the stream as aborted, not as its error.
    for records in (
        [start(), delayed({"type": "nonsense"}, HOUR)],
        [delayed(text("early"), HOUR), start(), end()],
        [start(), end(), delayed(text("late"), HOUR)],
    ):

        async def main(records: Sequence[object] = records) -> None:
            controller = AbortController()
            stream = stream_of(records_in(mode, records), controller.signal)
            task = await pending(stream.result())
            controller.abort()
            await turns()
            assert task.done()
            with pytest.raises(FixtureProviderError) as caught:
                task.result()
            assert caught.value.code is Code.PROVIDER_ABORTED

        run(main())


@MODES
def test_chunks_before_a_failure_after_a_delay_stay_delivered(mode: str) -> None:
    records = [start(), text("a"), delayed(text("b"), 0.001), delayed({"type": "nope"}, 0)]
    outcome = run(collect(stream_of(records_in(mode, records))))
    assert outcome.chunks == [CourseTextDeltaChunk("a", 0), CourseTextDeltaChunk("b", 1)]
    assert outcome.error is not None
    assert outcome.error.code is Code.PROVIDER_UNKNOWN_EVENT
    assert outcome.error.record_index == 3


def test_another_task_asking_for_the_result_waits_for_the_same_delay_once() -> None:
    async def main() -> None:
        stream = stream_of([start(), delayed(text("a"), 0.002), end()])
        consumer = asyncio.ensure_future(anext(stream))
        result = asyncio.ensure_future(stream.result())
        chunk = await consumer
        response = await result
        assert chunk == CourseTextDeltaChunk("a", 0)
        assert isinstance(response, CourseModelResponse)
        assert len(response.message.content) == 1  # the record was judged once
        assert [c async for c in stream] == []  # the consumer has it already

    run(main())


# -- interruptions: each settles at once ----------------------------------------------------


@MODES
def test_an_abort_interrupts_a_delay_at_once(mode: str) -> None:
    async def main() -> None:
        controller = AbortController()
        stream = await waiting_stream(mode, controller.signal)
        task = await pending(anext(stream))
        other = await pending(stream.result())  # a second waiter sees it too
        controller.abort("enough")
        await turns()
        assert task.done() and other.done()
        for settled in (task, other):
            with pytest.raises(FixtureProviderError) as caught:
                settled.result()
            assert caught.value.code is Code.PROVIDER_ABORTED
        # The cancellation that interrupted the wait was taken back.
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]

    run(main())


@MODES
def test_aclose_interrupts_a_delay_at_once(mode: str) -> None:
    async def main() -> None:
        stream = await waiting_stream(mode)
        task = await pending(anext(stream))
        await stream.aclose()
        assert task.done()
        with pytest.raises(FixtureProviderError) as caught:
            task.result()
        assert caught.value.code is Code.PROVIDER_ABORTED
        assert (await failure_of(stream)).code is Code.PROVIDER_ABORTED

    run(main())


@MODES
def test_asyncio_timeout_interrupts_a_delay_at_once(mode: str) -> None:
    async def main() -> None:
        stream = await waiting_stream(mode)
        timeouts: list[asyncio.Timeout] = []

        async def consume() -> None:
            async with asyncio.timeout(None) as timeout:
                timeouts.append(timeout)
                await anext(stream)

        task = await pending(consume())
        timeouts[0].reschedule(asyncio.get_running_loop().time())  # due now
        await turns()
        assert task.done()
        with pytest.raises(TimeoutError):
            task.result()
        assert (await failure_of(stream)).code is Code.PROVIDER_ABORTED

    run(main())


@MODES
def test_cancelling_the_consumer_interrupts_a_delay_and_it_gets_cancelled_error(
    mode: str,
) -> None:
    async def main() -> None:
        stream = await waiting_stream(mode)
        task = await pending(stream.result())
        task.cancel()
        await turns()
        assert task.cancelled()
        assert (await failure_of(stream)).code is Code.PROVIDER_ABORTED

    run(main())


@MODES
def test_closing_a_consumer_that_waits_settles_aborted_and_awaits_nothing(mode: str) -> None:
    async def main() -> None:
        stream = await waiting_stream(mode)
        consumer = anext(stream)
        assert isinstance(consumer.send(None), asyncio.Future)  # suspended in the wait
        consumer.close()  # neither raises nor awaits
        assert stream._settled
        assert (await failure_of(stream)).code is Code.PROVIDER_ABORTED
        await turns()
        assert asyncio.all_tasks() == {asyncio.current_task()}

    run(main())


def test_a_consumer_collected_while_it_waits_settles_aborted() -> None:
    async def main() -> None:
        stream = await waiting_stream("array")

        async def consume() -> None:
            async for _ in stream:
                pass

        consumer = consume()
        assert isinstance(consumer.send(None), asyncio.Future)
        del consumer
        gc.collect()  # finalizing it throws GeneratorExit in, as for an abandoned task
        assert (await failure_of(stream)).code is Code.PROVIDER_ABORTED

    run(main())


def test_a_source_is_released_when_its_record_s_delay_is_interrupted() -> None:
    closed: list[str] = []

    async def generator() -> AsyncIterator[object]:
        try:
            for record in WAITING:
                yield record
        finally:
            closed.append("closed")

    async def main() -> None:
        stream = stream_of(generator())
        await anext(stream)
        task = await pending(anext(stream))
        await stream.aclose()
        assert task.done()
        assert closed == ["closed"]

    run(main())


# -- where a delay cannot wait, and checks that never wait ----------------------------------


def test_under_trio_a_delay_is_the_type_error_naming_asyncio_and_zero_is_fine() -> None:
    async def main() -> None:
        stream = stream_of([start(), delayed(text("a"), 1), end()])
        with pytest.raises(TypeError, match="asyncio"):
            await stream.result()
        zero = await stream_of([start(), delayed(text("a"), 0), end()]).result()
        assert zero.stop_reason == "stop"

    trio.run(main)


def test_outside_any_task_a_delay_is_the_type_error_naming_asyncio() -> None:
    coroutine = stream_of([start(), delayed(text("a"), 0.5), end()]).result()
    with pytest.raises(TypeError, match="asyncio"):
        coroutine.send(None)  # no event loop at all: nothing waits
    coroutine.close()


@MODES
def test_without_delays_every_record_is_judged_without_waiting(mode: str) -> None:
    records = [delayed(start(), HOUR), delayed(text("a"), HOUR), delayed(end(), HOUR)]
    if mode == "source":

        async def main() -> CourseModelResponse:
            return await stream_of(source(records))._without_delays().result()

        assert run(main()).stop_reason == "stop"
        return
    coroutine = stream_of(records)._without_delays().result()
    with pytest.raises(StopIteration) as done:
        coroutine.send(None)  # finished without ever suspending: no loop, no wait
    assert done.value.value.stop_reason == "stop"


def test_without_delays_a_bad_delay_is_still_an_error() -> None:
    coroutine = stream_of([start(), delayed(text("a"), -1), end()])._without_delays().result()
    with pytest.raises(FixtureProviderError) as caught:
        coroutine.send(None)
    assert caught.value.code is Code.PROVIDER_MALFORMED_EVENT
    assert caught.value.path == "/responses/0/records/1/delay"


def test_an_invalid_delay_is_judged_at_once() -> None:
    # Run with no event loop: a wait would be a TypeError, so none is attempted.
    for bad in (True, -1, -0.5, 3600.5, 10**400, "1", None, [1], {"s": 1}):
        coroutine = stream_of([start(), delayed(text("a"), bad), end()]).result()
        with pytest.raises(FixtureProviderError) as caught:
            coroutine.send(None)
        assert caught.value.code is Code.PROVIDER_MALFORMED_EVENT, bad
        assert caught.value.path == "/responses/0/records/1/delay"


def test_a_version_one_record_never_waits_and_its_delay_is_an_unknown_key() -> None:
    data = {"schemaVersion": 1, "responses": [{"records": [delayed(start(), HOUR), end()]}]}
    coroutine = FixtureProviderAdapter(data).stream(REQUEST).result()
    with pytest.raises(FixtureProviderError) as caught:
        coroutine.send(None)
    assert caught.value.code is Code.PROVIDER_MALFORMED_EVENT
    assert caught.value.path == "/responses/0/records/0/delay"
    assert "schemaVersion` 2" in caught.value.message


# -- the start, for renderers -------------------------------------------------------------


@MODES
def test_until_start_returns_once_the_start_was_read_before_a_later_delay(mode: str) -> None:
    async def main() -> None:
        stream = stream_of(records_in(mode, [start("r-9"), delayed(text("a"), HOUR), end()]))
        await stream._until_start()
        assert stream.response_id == "r-9"
        task = await pending(anext(stream))  # the text still waits
        await stream.aclose()
        with pytest.raises(FixtureProviderError):
            await task

    run(main())


def test_until_start_ends_with_a_stream_that_failed_before_its_start() -> None:
    async def main() -> None:
        stream = stream_of([{"type": "transport_error", "message": "m", "status": 429}])
        await stream._until_start()
        assert stream.response_id is None
        error = await failure_of(stream)
        assert (error.code, error.transport_status) == (Code.PROVIDER_TRANSPORT_ERROR, 429)

    run(main())
