"""The call rules of ``adapter.stream`` and the life cycle of a ``CourseModelStream``.

Array records only: the stream's single consumer, ``result()``, settling once and for
good, aborts, ``aclose()``, ``async with``, and the ``AbortController`` / ``AbortSignal``
pair itself.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from course import (
    AbortController,
    AbortSignal,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelStream,
    CourseTextDeltaChunk,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)

from .helpers import collect, end, fixture, run, start, text, tool

Code = FixtureProviderErrorCode


def two_responses() -> dict[str, object]:
    """Response 0 streams three chunks (a, b, a tool call); response 1 one chunk."""
    return fixture(
        [start("r-1"), text("a"), text("b"), tool("call-1", "add", x=1), end("r-1", "tool_call")],
        [start("r-2"), text("second"), end("r-2")],
    )


def failing_after_two_chunks() -> dict[str, object]:
    """Chunks a and b, then a second start (record 3), then records that must never run."""
    return fixture([start("r-1"), text("a"), text("b"), start("r-1"), text("c"), end("r-1")])


def request(request_id: str = "req-1") -> CourseModelRequest:
    return CourseModelRequest(request_id)


def texts(chunks: list[CourseModelChunk]) -> list[str]:
    return [
        c.text
        if isinstance(c, CourseTextDeltaChunk)
        else (f"tool:{c.id}" if isinstance(c, CourseToolCallChunk) else c.type)
        for c in chunks
    ]


FIRST_CHUNKS = ["a", "b", "tool:call-1"]


async def drain(stream: CourseModelStream) -> list[CourseModelChunk]:
    """Take every remaining chunk with ``anext`` (never calling ``__aiter__``)."""
    chunks: list[CourseModelChunk] = []
    while True:
        try:
            chunks.append(await anext(stream))
        except StopAsyncIteration:
            return chunks


async def failure_of(awaitable: Any) -> FixtureProviderError:
    with pytest.raises(FixtureProviderError) as caught:
        await awaitable
    return caught.value


# -- stream(): argument checks -----------------------------------------------------------


class NoId:
    pass


class IntId:
    id = 7


@pytest.mark.parametrize(
    "bad_request",
    [None, "req-1", {"id": "req-1"}, NoId(), IntId(), CourseModelRequest(7)],  # type: ignore[arg-type]
    ids=lambda v: type(v).__name__,
)
def test_a_request_without_a_str_id_is_a_type_error_counting_no_call(bad_request: Any) -> None:
    adapter = FixtureProviderAdapter(two_responses())
    with pytest.raises(TypeError):
        adapter.stream(bad_request)
    assert (adapter.call_count, adapter.pending) == (0, 2)
    outcome = run(collect(adapter.stream(request())))
    assert outcome.response is not None and outcome.response.response_id == "r-1"


@pytest.mark.parametrize(
    "bad_signal",
    [AbortController(), True, "signal", object(), asyncio.Event],
    ids=lambda v: type(v).__name__,
)
def test_a_signal_that_is_not_an_abort_signal_is_a_type_error_counting_no_call(
    bad_signal: Any,
) -> None:
    adapter = FixtureProviderAdapter(two_responses())
    with pytest.raises(TypeError):
        adapter.stream(request(), bad_signal)
    assert (adapter.call_count, adapter.pending) == (0, 2)


def test_an_already_aborted_bad_signal_is_still_a_type_error() -> None:
    controller = AbortController()
    controller.abort()
    adapter = FixtureProviderAdapter(two_responses())
    with pytest.raises(TypeError):
        adapter.stream(request(), controller)  # type: ignore[arg-type]
    assert adapter.call_count == 0


def test_stream_takes_the_response_at_once_in_call_order() -> None:
    adapter = FixtureProviderAdapter(two_responses())
    first = adapter.stream(request("a"))
    assert (adapter.call_count, adapter.pending) == (1, 1)
    second = adapter.stream(request("b"))
    assert (adapter.call_count, adapter.pending) == (2, 0)
    # Consumed in the other order: each stream keeps the response it took.
    late = run(collect(second))
    early = run(collect(first))
    assert late.response is not None and late.response.response_id == "r-2"
    assert late.response.request_id == "b"
    assert early.response is not None and early.response.response_id == "r-1"


def test_call_count_includes_failed_calls() -> None:
    adapter = FixtureProviderAdapter(fixture([text("orphan")]))
    controller = AbortController()
    controller.abort()
    outcomes = [
        run(collect(adapter.stream(request(), controller.signal))),  # aborted
        run(collect(adapter.stream(request()))),  # a response that fails
        run(collect(adapter.stream(request()))),  # exhausted
        run(collect(adapter.stream(request()))),  # exhausted again
    ]
    assert [o.code for o in outcomes] == [
        "PROVIDER_ABORTED",
        "PROVIDER_MISSING_START",
        "PROVIDER_EXHAUSTED",
        "PROVIDER_EXHAUSTED",
    ]
    assert adapter.call_count == 4


# -- stream(): pre-aborted and exhausted calls -------------------------------------------


def test_a_pre_aborted_signal_fails_both_paths_and_leaves_the_queue_untouched() -> None:
    adapter = FixtureProviderAdapter(two_responses())
    controller = AbortController()
    controller.abort("user left")
    outcome = run(collect(adapter.stream(request(), controller.signal)))
    assert outcome.chunks == []
    assert outcome.error is not None and outcome.error.code is Code.PROVIDER_ABORTED
    assert outcome.result_error is outcome.error
    assert outcome.error.response_index is None
    assert (adapter.call_count, adapter.pending) == (1, 2)

    retry = run(collect(adapter.stream(request(), AbortController().signal)))
    assert retry.response is not None and retry.response.response_id == "r-1"
    assert texts(retry.chunks) == FIRST_CHUNKS
    assert (adapter.call_count, adapter.pending) == (2, 1)


def test_a_pre_aborted_call_fails_even_when_the_queue_is_empty() -> None:
    adapter = FixtureProviderAdapter(fixture())
    controller = AbortController()
    controller.abort()
    outcome = run(collect(adapter.stream(request(), controller.signal)))
    assert outcome.code == "PROVIDER_ABORTED"


def test_an_empty_queue_fails_both_paths_as_exhausted() -> None:
    adapter = FixtureProviderAdapter(two_responses())
    run(collect(adapter.stream(request("a"))))
    run(collect(adapter.stream(request("b"))))
    outcome = run(collect(adapter.stream(request("c"))))
    assert outcome.chunks == []
    assert outcome.error is not None and outcome.error.code is Code.PROVIDER_EXHAUSTED
    assert outcome.result_error is outcome.error
    assert outcome.error.response_index is None
    assert (adapter.call_count, adapter.pending) == (3, 0)


def test_result_alone_reports_exhaustion() -> None:
    adapter = FixtureProviderAdapter(fixture())
    error = run(failure_of(adapter.stream(request()).result()))
    assert error.code is Code.PROVIDER_EXHAUSTED


# -- one consumer; result() is not one -----------------------------------------------------


def test_a_second_aiter_raises_stream_consumed_and_the_first_consumer_carries_on() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(two_responses()).stream(request())
        assert aiter(stream) is stream
        first = await anext(stream)
        with pytest.raises(FixtureProviderError) as caught:
            aiter(stream)
        assert caught.value.code is Code.PROVIDER_STREAM_CONSUMED
        rest = await drain(stream)
        assert texts([first, *rest]) == FIRST_CHUNKS
        response = await stream.result()
        assert response.response_id == "r-1"

    run(scenario())


def test_a_second_async_for_raises_stream_consumed_even_after_completion() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(two_responses()).stream(request())
        chunks = [chunk async for chunk in stream]
        assert texts(chunks) == FIRST_CHUNKS
        with pytest.raises(FixtureProviderError) as caught:
            async for _ in stream:
                pass
        assert caught.value.code is Code.PROVIDER_STREAM_CONSUMED
        assert (await stream.result()).response_id == "r-1"

    run(scenario())


def test_result_works_without_iterating_and_iteration_afterwards_yields_every_chunk() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(two_responses()).stream(request())
        response = await stream.result()
        assert response.response_id == "r-1" and response.stop_reason == "toolCall"
        chunks = [chunk async for chunk in stream]
        assert texts(chunks) == FIRST_CHUNKS
        assert await stream.result() is response

    run(scenario())


def test_result_in_the_middle_of_iteration_keeps_the_remaining_chunks() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(two_responses()).stream(request())
        first = await anext(stream)
        response = await stream.result()
        rest = await drain(stream)
        assert texts([first, *rest]) == FIRST_CHUNKS
        assert len(response.message.content) == 3

    run(scenario())


def test_result_twice_returns_the_same_response() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(two_responses()).stream(request())
        assert await stream.result() is await stream.result()

    run(scenario())


# -- failures settle for good ------------------------------------------------------------


def test_a_failure_yields_earlier_chunks_then_raises_and_repeats_the_same_error() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(failing_after_two_chunks()).stream(request())
        delivered: list[CourseModelChunk] = []
        with pytest.raises(FixtureProviderError) as caught:
            async for chunk in stream:
                delivered.append(chunk)
        error = caught.value
        assert texts(delivered) == ["a", "b"]
        assert error.code is Code.PROVIDER_DUPLICATE_START
        assert (error.response_index, error.record_index) == (0, 3)
        for _ in range(3):
            assert await failure_of(anext(stream)) is error
            assert await failure_of(stream.result()) is error

    run(scenario())


def test_result_first_on_a_failing_stream_then_iteration_yields_the_chunks_then_the_error() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(failing_after_two_chunks()).stream(request())
        error = await failure_of(stream.result())
        assert error.code is Code.PROVIDER_DUPLICATE_START
        assert texts([await anext(stream), await anext(stream)]) == ["a", "b"]
        assert await failure_of(anext(stream)) is error

    run(scenario())


# -- aborting a stream -------------------------------------------------------------------


def test_abort_between_chunks_fails_with_aborted_and_keeps_the_delivered_chunks() -> None:
    async def scenario() -> None:
        controller = AbortController()
        adapter = FixtureProviderAdapter(two_responses())
        stream = adapter.stream(request(), controller.signal)
        delivered = [await anext(stream)]
        controller.abort("enough")
        error = await failure_of(anext(stream))
        assert error.code is Code.PROVIDER_ABORTED
        assert error.response_index == 0
        assert texts(delivered) == ["a"]
        assert await failure_of(anext(stream)) is error
        assert await failure_of(stream.result()) is error
        # The aborted response is spent; the next call gets the next one.
        assert adapter.pending == 1

    run(scenario())


def test_abort_before_the_first_step_fails_with_no_chunks() -> None:
    async def scenario() -> None:
        controller = AbortController()
        stream = FixtureProviderAdapter(two_responses()).stream(request(), controller.signal)
        controller.abort()
        outcome = await collect(stream)
        assert outcome.chunks == []
        assert outcome.error is not None and outcome.error.code is Code.PROVIDER_ABORTED
        assert outcome.result_error is outcome.error

    run(scenario())


def test_abort_after_the_last_chunk_but_before_the_end_is_read_still_aborts() -> None:
    # Complete means response_end read and the source ended; the last chunk is not that.
    async def scenario() -> None:
        controller = AbortController()
        stream = FixtureProviderAdapter(two_responses()).stream(request(), controller.signal)
        for _ in FIRST_CHUNKS:
            await anext(stream)
        controller.abort()
        assert (await failure_of(anext(stream))).code is Code.PROVIDER_ABORTED
        assert (await failure_of(stream.result())).code is Code.PROVIDER_ABORTED

    run(scenario())


def test_abort_after_completion_keeps_the_response() -> None:
    async def scenario() -> None:
        controller = AbortController()
        stream = FixtureProviderAdapter(two_responses()).stream(request(), controller.signal)
        chunks = [chunk async for chunk in stream]
        controller.abort()
        response = await stream.result()
        assert response.response_id == "r-1"
        assert texts(chunks) == FIRST_CHUNKS
        with pytest.raises(StopAsyncIteration):
            await anext(stream)

    run(scenario())


def test_abort_after_result_completed_still_delivers_every_chunk() -> None:
    async def scenario() -> None:
        controller = AbortController()
        stream = FixtureProviderAdapter(two_responses()).stream(request(), controller.signal)
        response = await stream.result()
        controller.abort()
        assert texts([chunk async for chunk in stream]) == FIRST_CHUNKS
        assert await stream.result() is response

    run(scenario())


# -- aclose() ----------------------------------------------------------------------------


def test_aclose_on_a_complete_stream_keeps_the_response() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(two_responses()).stream(request())
        chunks = [chunk async for chunk in stream]
        response = await stream.result()
        await stream.aclose()
        await stream.aclose()
        assert await stream.result() is response
        assert texts(chunks) == FIRST_CHUNKS
        with pytest.raises(StopAsyncIteration):
            await anext(stream)

    run(scenario())


def test_aclose_after_result_keeps_the_response_and_the_undelivered_chunks() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(two_responses()).stream(request())
        response = await stream.result()
        await stream.aclose()
        assert await stream.result() is response
        assert texts(await drain(stream)) == FIRST_CHUNKS

    run(scenario())


def test_aclose_on_a_failed_stream_keeps_the_error() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(failing_after_two_chunks()).stream(request())
        error = await failure_of(stream.result())
        await stream.aclose()
        await stream.aclose()
        assert await failure_of(stream.result()) is error
        assert texts(await drain_until_error(stream, error)) == ["a", "b"]

    run(scenario())


async def drain_until_error(
    stream: CourseModelStream, error: FixtureProviderError
) -> list[CourseModelChunk]:
    chunks: list[CourseModelChunk] = []
    while True:
        try:
            chunks.append(await anext(stream))
        except FixtureProviderError as raised:
            assert raised is error
            return chunks


@pytest.mark.parametrize("kind", ["aborted", "exhausted"])
def test_aclose_on_a_call_that_failed_keeps_its_error(kind: str) -> None:
    async def scenario() -> None:
        adapter = FixtureProviderAdapter(fixture())
        controller = AbortController()
        if kind == "aborted":
            controller.abort()
        stream = adapter.stream(request(), controller.signal)
        error = await failure_of(stream.result())
        await stream.aclose()
        assert await failure_of(stream.result()) is error
        assert error.code.value == f"PROVIDER_{kind.upper()}"

    run(scenario())


def test_aclose_before_any_step_settles_aborted_for_both_paths() -> None:
    async def scenario() -> None:
        adapter = FixtureProviderAdapter(two_responses())
        stream = adapter.stream(request())
        await stream.aclose()
        outcome = await collect(stream)
        assert outcome.chunks == []
        assert outcome.error is not None and outcome.error.code is Code.PROVIDER_ABORTED
        assert outcome.result_error is outcome.error
        assert outcome.error.response_index == 0
        await stream.aclose()
        assert await failure_of(stream.result()) is outcome.error
        assert adapter.pending == 1

    run(scenario())


def test_aclose_in_the_middle_of_iteration_settles_aborted_for_both_paths() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(two_responses()).stream(request())
        first = await anext(stream)
        await stream.aclose()
        error = await failure_of(anext(stream))
        assert error.code is Code.PROVIDER_ABORTED
        assert await failure_of(stream.result()) is error
        await stream.aclose()
        assert await failure_of(anext(stream)) is error
        assert texts([first]) == ["a"]

    run(scenario())


def test_aclose_inside_async_for_ends_the_loop_with_aborted() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(two_responses()).stream(request())
        delivered: list[CourseModelChunk] = []
        with pytest.raises(FixtureProviderError) as caught:
            async for chunk in stream:
                delivered.append(chunk)
                await stream.aclose()
        assert caught.value.code is Code.PROVIDER_ABORTED
        assert texts(delivered) == ["a"]

    run(scenario())


# -- async with --------------------------------------------------------------------------


def test_async_with_gives_the_stream_and_keeps_a_completed_response() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(two_responses()).stream(request())
        async with stream as entered:
            assert entered is stream
            chunks = [chunk async for chunk in entered]
            response = await entered.result()
        assert texts(chunks) == FIRST_CHUNKS
        assert await stream.result() is response

    run(scenario())


def test_leaving_async_with_early_closes_the_stream() -> None:
    async def scenario() -> None:
        adapter = FixtureProviderAdapter(two_responses())
        async with adapter.stream(request()) as stream:
            first = await anext(stream)
        assert texts([first]) == ["a"]
        error = await failure_of(anext(stream))
        assert error.code is Code.PROVIDER_ABORTED
        assert await failure_of(stream.result()) is error

    run(scenario())


def test_async_with_closes_the_stream_and_lets_the_bodys_exception_propagate() -> None:
    class BodyError(Exception):
        pass

    async def scenario() -> CourseModelStream:
        adapter = FixtureProviderAdapter(two_responses())
        with pytest.raises(BodyError):
            async with adapter.stream(request()) as stream:
                await anext(stream)
                raise BodyError
        return stream

    stream = run(scenario())
    error = run(failure_of(stream.result()))
    assert error.code is Code.PROVIDER_ABORTED


def test_async_with_keeps_the_error_of_a_failed_stream() -> None:
    async def scenario() -> None:
        stream = FixtureProviderAdapter(failing_after_two_chunks()).stream(request())
        async with stream:
            error = await failure_of(stream.result())
        assert await failure_of(stream.result()) is error
        assert error.code is Code.PROVIDER_DUPLICATE_START

    run(scenario())


# -- AbortController and AbortSignal -----------------------------------------------------


def test_a_new_signal_is_not_aborted_and_has_no_reason() -> None:
    controller = AbortController()
    assert isinstance(controller.signal, AbortSignal)
    assert controller.signal is controller.signal
    assert controller.signal.aborted is False
    assert controller.signal.reason is None


def test_abort_is_idempotent_and_the_first_reason_stays() -> None:
    controller = AbortController()
    first = ValueError("first")
    controller.abort(first)
    assert controller.signal.aborted is True
    assert controller.signal.reason is first
    controller.abort("second")
    assert controller.signal.reason is first
    assert controller.signal.aborted is True


def test_abort_without_a_reason_keeps_none_even_if_a_reason_comes_later() -> None:
    controller = AbortController()
    controller.abort()
    assert controller.signal.aborted is True
    assert controller.signal.reason is None
    controller.abort("late")
    assert controller.signal.reason is None


def test_aborting_one_controller_leaves_another_alone() -> None:
    one, two = AbortController(), AbortController()
    one.abort()
    assert two.signal.aborted is False


def test_wait_stays_pending_until_abort_and_returns_soon_after() -> None:
    async def scenario() -> None:
        controller = AbortController()
        waiter = asyncio.create_task(controller.signal.wait())
        for _ in range(10):
            await asyncio.sleep(0)
        assert not waiter.done()
        controller.abort("go")
        for _ in range(3):
            await asyncio.sleep(0)
        assert waiter.done() and waiter.result() is None

    run(scenario())


def test_wait_suspends_on_one_future_that_abort_resolves_without_polling() -> None:
    async def scenario() -> None:
        controller = AbortController()
        coroutine = controller.signal.wait()
        try:
            blocked_on = coroutine.send(None)
            # A poller would yield None (sleep(0)) or a timer's future, still pending
            # right after abort(); a callback-driven wait is resolved by abort() itself.
            assert isinstance(blocked_on, asyncio.Future)
            assert not blocked_on.done()
            controller.abort()
            assert blocked_on.done()
            with pytest.raises(StopIteration):
                coroutine.send(None)
        finally:
            coroutine.close()

    run(scenario())


def test_wait_on_an_aborted_signal_returns_without_suspending() -> None:
    async def scenario() -> None:
        controller = AbortController()
        controller.abort()
        coroutine = controller.signal.wait()
        try:
            with pytest.raises(StopIteration):
                coroutine.send(None)
        finally:
            coroutine.close()
        await controller.signal.wait()

    run(scenario())


def test_every_waiter_wakes_and_a_cancelled_waiter_does_not_disturb_the_others() -> None:
    async def scenario() -> None:
        controller = AbortController()
        waiters = [asyncio.create_task(controller.signal.wait()) for _ in range(3)]
        await asyncio.sleep(0)
        waiters[1].cancel()
        await asyncio.sleep(0)
        assert waiters[1].cancelled()
        controller.abort()
        await asyncio.wait([waiters[0], waiters[2]])
        assert waiters[0].result() is None and waiters[2].result() is None

    run(scenario())


# -- _settled: internal API for course.pytest_plugin ---------------------------------------


def test_settled_tells_whether_a_stream_has_its_outcome() -> None:
    async def scenario() -> None:
        adapter = FixtureProviderAdapter(two_responses())
        taken = adapter.stream(request())
        assert not taken._settled
        await anext(taken)
        assert not taken._settled  # read, but not to its end
        assert texts(await drain(taken)) == FIRST_CHUNKS[1:]
        assert taken._settled  # complete

        closed = adapter.stream(request())
        await closed.aclose()
        assert closed._settled  # closed before its terminal

        exhausted = adapter.stream(request())
        assert exhausted._settled  # failed at the call

        controller = AbortController()
        failing = FixtureProviderAdapter(failing_after_two_chunks()).stream(
            request(), controller.signal
        )
        await anext(failing)
        controller.abort()
        assert not failing._settled  # array records settle at their next step
        await failure_of(failing.result())
        assert failing._settled

    run(scenario())


def test_repr_names_the_state() -> None:
    async def scenario() -> None:
        adapter = FixtureProviderAdapter(fixture([start(), text("a"), end()], [text("x")]))
        stream = adapter.stream(request())
        assert repr(stream) == "<CourseModelStream response_index=0 streaming>"
        await stream.result()
        assert repr(stream) == "<CourseModelStream response_index=0 complete>"
        failed = adapter.stream(request())
        await failure_of(failed.result())
        assert repr(failed) == (
            "<CourseModelStream response_index=1 failed PROVIDER_MISSING_START>"
        )

    run(scenario())


def test_without_any_event_loop_array_records_complete_with_no_turn_to_give() -> None:
    # Driven by hand, as some synchronous tests do: nothing to yield to, nothing needed.
    stream = FixtureProviderAdapter(two_responses()).stream(request())
    driven = stream.result()
    with pytest.raises(StopIteration) as done:
        driven.send(None)
    assert done.value.value.response_id == "r-1"
