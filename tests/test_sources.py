"""Async record sources: claiming, streaming, racing the abort, cleanup, hostile code.

A source is untrusted code: it can block, raise, lie or never end. Every source case
runs through both kinds of step: one that completes without ever suspending, and one
that really waits (on a Future or an Event resolved a loop turn later), since an
adapter may treat the two differently (an inline fast path, a raced pending step).
Where a case makes sense as array records, the same records also go through an array
fixture and both feeds must agree exactly: chunks, response, codes, indexes and paths.

No test sleeps for real or uses a timer: the loop is turned with ``asyncio.sleep(0)``.
Every coroutine ends by checking that no task is left but its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator
from dataclasses import dataclass
from typing import Literal, NoReturn, TypeVar

import pytest

from course import (
    AbortController,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelStream,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)

from .helpers import end, fixture, run, start, text, tool

Code = FixtureProviderErrorCode
T = TypeVar("T")

# How a source step behaves: completes without suspending, or really waits (a Future
# resolved on a later loop turn, or an Event set on a later loop turn).
Mode = Literal["inline", "future", "event"]
MODES: tuple[Mode, ...] = ("inline", "future", "event")
SUSPENDING: tuple[Mode, ...] = ("future", "event")

# "A handful" of loop turns: enough for a raced step to settle, far from a poll.
TURNS = 12

REQUEST = CourseModelRequest("req-1")
SOURCE_PATH = "/responses/0/records"


# -- running ----------------------------------------------------------------------------


def run_clean(coroutine: Coroutine[object, object, T]) -> T:
    """Run ``coroutine`` in debug mode; afterwards no task but the main one may remain."""

    async def main() -> T:
        value = await coroutine
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return value

    return run(main())


async def turns(count: int = TURNS) -> None:
    """Let the event loop run ``count`` times; never a real sleep."""
    for _ in range(count):
        await asyncio.sleep(0)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def pause(mode: Mode) -> None:
    """Suspend for real unless ``mode`` is inline: the wake-up comes a loop turn later."""
    loop = asyncio.get_running_loop()
    if mode == "future":
        future: asyncio.Future[None] = loop.create_future()
        loop.call_soon(_resolve, future)
        await future
    elif mode == "event":
        event = asyncio.Event()
        loop.call_soon(event.set)
        await event.wait()


async def next_chunk(stream: CourseModelStream) -> CourseModelChunk:
    return await stream.__anext__()


async def soon(coroutine: Coroutine[object, object, T]) -> T:
    """Await ``coroutine`` if it finishes within a handful of loop turns, else fail.

    For steps that must not wait on the source: a regression then fails the test
    instead of hanging the suite.
    """
    task = asyncio.create_task(coroutine)
    for _ in range(TURNS):
        if task.done():
            break
        await asyncio.sleep(0)
    if not task.done():
        task.cancel()
        await asyncio.wait((task,))
        raise AssertionError("still pending after a handful of event-loop turns")
    return task.result()


async def drain(stream: CourseModelStream, into: list[CourseModelChunk]) -> None:
    async for chunk in stream:
        into.append(chunk)


async def finished_within_turns(*tasks: asyncio.Task[object]) -> bool:
    """Whether every task finishes within a handful of loop turns; leftovers are cancelled.

    A regression then fails the test instead of hanging the suite.
    """
    for _ in range(TURNS):
        if all(task.done() for task in tasks):
            return True
        await asyncio.sleep(0)
    pending = [task for task in tasks if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending)
    return not pending


def error_of(task: asyncio.Task[T]) -> FixtureProviderError:
    """The ``FixtureProviderError`` a finished task raised."""
    assert task.done() and not task.cancelled()
    error = task.exception()
    assert isinstance(error, FixtureProviderError), repr(error)
    return error


async def result_error(stream: CourseModelStream) -> FixtureProviderError:
    with pytest.raises(FixtureProviderError) as info:
        await stream.result()
    return info.value


# -- sources ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Raise:
    """Script step: raise this exception instead of returning a record."""

    exception: BaseException


class Block:
    """Script step: wait on a Future nobody resolves."""


BLOCK = Block()


class Probe:
    """A class-based source following a script; it counts what the adapter asks of it.

    Each ``__anext__`` first pauses per ``mode``, then returns the next record, raises
    a scripted exception, blocks forever, or ends (``StopAsyncIteration``).
    """

    def __init__(
        self,
        script: list[object],
        mode: Mode = "inline",
        *,
        aclose_error: BaseException | None = None,
    ) -> None:
        self.script = script
        self.mode = mode
        self.aclose_error = aclose_error
        self.aiter_calls = 0
        self.pulls = 0
        self.closes = 0
        self.blocked = False
        self.step_cancelled = 0
        self.exhausted = False

    def __aiter__(self) -> Probe:
        self.aiter_calls += 1
        return self

    async def __anext__(self) -> object:
        index = self.pulls
        self.pulls += 1
        await pause(self.mode)
        if index >= len(self.script):
            self.exhausted = True
            raise StopAsyncIteration
        item = self.script[index]
        if isinstance(item, Raise):
            raise item.exception
        if isinstance(item, Block):
            self.blocked = True
            try:
                await asyncio.get_running_loop().create_future()
            except asyncio.CancelledError:
                self.step_cancelled += 1
                raise
            finally:
                self.blocked = False
        return item

    async def aclose(self) -> None:
        self.closes += 1
        if self.aclose_error is not None:
            raise self.aclose_error


async def generator_source(records: list[object], mode: Mode) -> AsyncIterator[object]:
    """An async generator source: each step pauses per ``mode`` before its record."""
    for record in records:
        await pause(mode)
        yield record


SourceKind = Literal["generator-inline", "generator-future", "class-event"]
SOURCE_KINDS: tuple[SourceKind, ...] = ("generator-inline", "generator-future", "class-event")


def make_source(kind: SourceKind, records: list[object]) -> object:
    if kind == "generator-inline":
        return generator_source(records, "inline")
    if kind == "generator-future":
        return generator_source(records, "future")
    return Probe(records, "event")


# -- the two feeds must agree -----------------------------------------------------------

ErrorSummary = tuple[str, int | None, int | None, str | None]


def summary_of(error: FixtureProviderError | None) -> ErrorSummary | None:
    if error is None:
        return None
    return (error.code.value, error.response_index, error.record_index, error.path)


@dataclass(frozen=True)
class Summary:
    """Everything observable about one streamed response, in comparable form."""

    chunks: tuple[object, ...]
    response: object
    error: ErrorSummary | None
    result_error: ErrorSummary | None

    @property
    def code(self) -> str | None:
        return None if self.error is None else self.error[0]


async def summarize(stream: CourseModelStream) -> Summary:
    """Iterate, then ask for the result: both paths, both must agree with each other."""
    chunks: list[CourseModelChunk] = []
    error: FixtureProviderError | None = None
    try:
        await drain(stream, chunks)
    except FixtureProviderError as exc:
        error = exc
    response: object = None
    failure: FixtureProviderError | None = None
    try:
        response = (await stream.result()).to_dict()
    except FixtureProviderError as exc:
        failure = exc
    assert failure is error, "iteration and result() must settle with the same error"
    return Summary(
        tuple(c.to_dict() for c in chunks), response, summary_of(error), summary_of(failure)
    )


def through_array(records: list[object]) -> Summary:
    adapter = FixtureProviderAdapter(fixture(records))
    return run_clean(summarize(adapter.stream(REQUEST)))


def through_source(source: object) -> Summary:
    adapter = FixtureProviderAdapter(fixture(source))
    return run_clean(summarize(adapter.stream(REQUEST)))


def seed_start() -> dict[str, object]:
    return start("response-tool-001")


def seed_tool() -> dict[str, object]:
    return tool("call-add-001", "add", left=20, right=22)


def seed_end() -> dict[str, object]:
    return end("response-tool-001", "tool_call", {"inputTokens": 12, "outputTokens": 8})


AGREEMENT_CASES: dict[str, tuple[Callable[[], list[object]], str | None]] = {
    "text response": (lambda: [start(), text("a"), text(""), text("b"), end()], None),
    "tool response": (
        lambda: [start(), tool("c-1", left=1), tool("c-2"), end(stop_reason="tool_call")],
        None,
    ),
    "seed failure experiment": (lambda: [seed_start(), seed_tool()], "PROVIDER_MISSING_TERMINAL"),
    "seed fixture restored": (lambda: [seed_start(), seed_tool(), seed_end()], None),
    "empty source": (lambda: [], "PROVIDER_MISSING_TERMINAL"),
    "extra response_end": (
        lambda: [start(), text("a"), end(), end()],
        "PROVIDER_DUPLICATE_TERMINAL",
    ),
    "extra record after response_end": (
        lambda: [start(), end(), text("late"), end()],
        "PROVIDER_INVALID_TERMINAL",
    ),
    "non-object record": (lambda: [start(), text("a"), 7], "PROVIDER_MALFORMED_EVENT"),
    "unknown record type": (lambda: [start(), {"type": "ping"}], "PROVIDER_UNKNOWN_EVENT"),
    "malformed usage": (
        lambda: [start(), end(usage={"inputTokens": 1, "input_tokens": 1, "outputTokens": 2})],
        "PROVIDER_MALFORMED_EVENT",
    ),
    "missing start": (lambda: [text("a"), start()], "PROVIDER_MISSING_START"),
    "duplicate start": (lambda: [start(), text("a"), start()], "PROVIDER_DUPLICATE_START"),
    "duplicate tool call": (
        lambda: [start(), tool("c-1"), tool("c-1"), end(stop_reason="tool_call")],
        "PROVIDER_DUPLICATE_TOOL_CALL",
    ),
    "response mismatch": (lambda: [start("r-1"), end("r-2")], "PROVIDER_RESPONSE_MISMATCH"),
    "stop reason mismatch": (
        lambda: [start(), tool("c-1"), end(stop_reason="stop")],
        "PROVIDER_STOP_REASON_MISMATCH",
    ),
    "transport error": (
        lambda: [
            start(),
            text("partial"),
            {"type": "transport_error", "message": "PROVIDER_ABORTED", "code": "E1"},
        ],
        "PROVIDER_TRANSPORT_ERROR",
    ),
}


@pytest.mark.parametrize("kind", SOURCE_KINDS)
@pytest.mark.parametrize("case", sorted(AGREEMENT_CASES))
def test_source_and_array_feeds_agree(case: str, kind: SourceKind) -> None:
    build, expected = AGREEMENT_CASES[case]
    from_array = through_array(build())
    from_source = through_source(make_source(kind, build()))
    assert from_array.code == expected
    assert (from_array.response is None) == (expected is not None)
    assert from_source == from_array


@pytest.mark.parametrize("mode", MODES)
def test_source_cleanup_follows_how_processing_stopped(mode: Mode) -> None:
    # Exhausted: nothing to clean up. Stopped early by an error record: aclose, once.
    finished = Probe([start(), text("a"), end()], mode)
    assert through_source(finished).code is None
    assert (finished.aiter_calls, finished.pulls, finished.closes) == (1, 4, 0)
    assert finished.exhausted

    stopped = Probe([start(), {"type": "ping"}, end(), end()], mode)
    assert through_source(stopped).code == "PROVIDER_UNKNOWN_EVENT"
    assert (stopped.aiter_calls, stopped.pulls, stopped.closes) == (1, 2, 1)

    late = Probe([start(), end(), text("late"), text("later")], mode)
    assert through_source(late).code == "PROVIDER_INVALID_TERMINAL"
    assert (late.pulls, late.closes) == (3, 1)


def test_seed_failure_experiment_shows_the_tool_chunk_before_the_source_ends() -> None:
    async def main() -> None:
        gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        state = {"ended": False}

        async def recorder() -> AsyncIterator[object]:
            yield seed_start()
            yield seed_tool()
            await gate  # the transport is still open
            state["ended"] = True

        adapter = FixtureProviderAdapter(fixture(recorder()))
        stream = adapter.stream(REQUEST)
        chunk = await soon(next_chunk(stream))
        assert isinstance(chunk, CourseToolCallChunk)
        assert (chunk.id, chunk.name, dict(chunk.arguments)) == (
            "call-add-001",
            "add",
            {"left": 20, "right": 22},
        )
        assert not state["ended"]
        pending = asyncio.create_task(next_chunk(stream))
        await turns()
        assert not pending.done()  # blocked on the open source, not buffered ahead
        gate.set_result(None)
        await asyncio.wait((pending,))
        assert state["ended"]
        error = error_of(pending)
        assert error.code is Code.PROVIDER_MISSING_TERMINAL
        assert await result_error(stream) is error

    run_clean(main())
    array = through_array([seed_start(), seed_tool()])
    assert array.code == "PROVIDER_MISSING_TERMINAL"
    # Restoring response_end settles the response as toolCall through both feeds.
    restored = through_source(generator_source([seed_start(), seed_tool(), seed_end()], "future"))
    assert isinstance(restored.response, dict) and restored.response["stopReason"] == "toolCall"
    assert restored == through_array([seed_start(), seed_tool(), seed_end()])
    assert array.chunks == (
        {
            "type": "toolCall",
            "id": "call-add-001",
            "name": "add",
            "arguments": {"left": 20, "right": 22},
            "contentIndex": 0,
        },
    )


# -- claiming ---------------------------------------------------------------------------


class ExplodingInstance:
    """Any attribute missing on the type is fatal to look up on the instance."""

    def __init__(self) -> None:
        object.__setattr__(self, "asked", [])

    def __getattr__(self, name: str) -> NoReturn:
        self.asked.append(name)
        raise RuntimeError(f"the adapter asked the instance for {name!r}")


class ExplodingSource(ExplodingInstance):
    """A real source (``__aiter__``/``__anext__`` on the type, no ``aclose``)."""

    asked: list[str]

    def __init__(self, script: list[object]) -> None:
        super().__init__()
        object.__setattr__(self, "script", iter(script))

    def __aiter__(self) -> ExplodingSource:
        return self

    async def __anext__(self) -> object:
        script: Iterator[object] = object.__getattribute__(self, "script")
        item = next(script, BLOCK)
        if isinstance(item, Block):
            await asyncio.get_running_loop().create_future()
        return item


def test_an_object_without_a_type_level_aiter_is_rejected_without_asking_it() -> None:
    hostile = ExplodingInstance()
    with_instance_aiter = ExplodingInstance()
    with_instance_aiter.__dict__["__aiter__"] = lambda: generator_source([], "inline")
    for records in (hostile, with_instance_aiter):
        with pytest.raises(FixtureProviderError) as info:
            FixtureProviderAdapter(fixture([start(), end()], records))
        assert info.value.code is Code.PROVIDER_INVALID_FIXTURE
        assert (info.value.response_index, info.value.path) == (1, "/responses/1/records")
    assert hostile.asked == [] and with_instance_aiter.asked == []


def test_a_source_whose_instance_getattr_explodes_is_never_asked() -> None:
    async def main() -> None:
        source = ExplodingSource([start(), text("a")])
        controller = AbortController()
        stream = FixtureProviderAdapter(fixture(source)).stream(REQUEST, controller.signal)
        assert (await soon(next_chunk(stream))).to_dict()["text"] == "a"
        pending = asyncio.create_task(next_chunk(stream))
        await turns()
        controller.abort("done")  # cleanup looks for aclose on the type only
        await turns()
        assert error_of(pending).code is Code.PROVIDER_ABORTED
        await stream.aclose()
        assert source.asked == []

    run_clean(main())


def test_sources_are_claimed_on_first_pull_never_at_construction() -> None:
    async def main() -> None:
        probe = Probe([start(), text("a"), end()])
        adapter = FixtureProviderAdapter(fixture(probe))
        stream = adapter.stream(REQUEST)
        assert (probe.aiter_calls, probe.pulls, adapter.pending) == (0, 0, 0)
        await next_chunk(stream)
        assert (probe.aiter_calls, probe.pulls) == (1, 2)
        await stream.result()
        assert (probe.aiter_calls, probe.pulls, probe.closes) == (1, 4, 0)

    run_clean(main())


def test_an_aborted_call_leaves_the_source_unclaimed_and_queued() -> None:
    async def main() -> None:
        probe = Probe([start(), text("a"), end()])
        adapter = FixtureProviderAdapter(fixture(probe))
        controller = AbortController()
        controller.abort()
        refused = adapter.stream(REQUEST, controller.signal)
        assert (await result_error(refused)).code is Code.PROVIDER_ABORTED
        assert (adapter.pending, probe.aiter_calls) == (1, 0)
        response = await adapter.stream(REQUEST).result()
        assert response.message.content[0].to_dict() == {"type": "text", "text": "a"}

        # Aborted after stream() but before the first pull: still never claimed.
        late = Probe([start(), end()])
        adapter = FixtureProviderAdapter(fixture(late))
        controller = AbortController()
        stream = adapter.stream(REQUEST, controller.signal)
        controller.abort()
        assert (await result_error(stream)).code is Code.PROVIDER_ABORTED
        assert (late.aiter_calls, late.pulls, late.closes) == (0, 0, 0)

    run_clean(main())


def test_one_source_object_cannot_back_two_responses() -> None:
    probe = Probe([start(), end()])
    generator = generator_source([start(), end()], "inline")
    for source in (probe, generator):
        with pytest.raises(FixtureProviderError) as info:
            FixtureProviderAdapter(fixture([start(), end()], source, source))
        error = info.value
        assert error.code is Code.PROVIDER_INVALID_FIXTURE
        assert (error.response_index, error.path) == (2, "/responses/2/records")
    assert probe.aiter_calls == 0
    # Never iterated, so closing it is silent.
    run(generator.aclose())  # type: ignore[attr-defined]


class AiterRaises:
    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.calls = 0

    def __aiter__(self) -> NoReturn:
        self.calls += 1
        raise self.error


@pytest.mark.parametrize(
    "error",
    [
        ValueError("boom"),
        FixtureProviderError(Code.PROVIDER_ABORTED, "forged", response_index=9),
        asyncio.CancelledError("from __aiter__"),
        StopAsyncIteration(),
    ],
    ids=["ValueError", "forged-FixtureProviderError", "CancelledError", "StopAsyncIteration"],
)
def test_aiter_that_raises_is_an_invalid_fixture(error: BaseException) -> None:
    async def main() -> None:
        source = AiterRaises(error)
        stream = FixtureProviderAdapter(fixture(source)).stream(REQUEST)
        with pytest.raises(FixtureProviderError) as info:
            await next_chunk(stream)
        failure = info.value
        assert failure.code is Code.PROVIDER_INVALID_FIXTURE
        assert failure.__cause__ is error
        assert (failure.response_index, failure.record_index, failure.path) == (0, 0, SOURCE_PATH)
        assert await result_error(stream) is failure
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
        assert source.calls == 1

    run_clean(main())


class NotAnIterator:
    async def __anext__(self) -> object:  # on the instance's type, but see below
        return start()


class AiterReturns:
    def __init__(self, value: object) -> None:
        self.value = value

    def __aiter__(self) -> object:
        return self.value


class OnlyInstanceAnext:
    def __init__(self) -> None:
        self.__anext__ = lambda: None


@pytest.mark.parametrize(
    "returned",
    [[start(), end()], generator_source, OnlyInstanceAnext(), None],
    ids=["list", "generator-function", "instance-level-anext", "None"],
)
def test_aiter_returning_a_non_iterator_is_an_invalid_fixture(returned: object) -> None:
    failure = through_source(AiterReturns(returned))
    assert failure.error == ("PROVIDER_INVALID_FIXTURE", 0, 0, SOURCE_PATH)
    assert failure.result_error == failure.error


def test_aiter_is_called_exactly_once_with_two_paths_and_two_tasks() -> None:
    async def main() -> None:
        probe = Probe([start(), text("a"), end()], "future")
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST)
        chunks: list[CourseModelChunk] = []
        await asyncio.gather(stream.result(), drain(stream, chunks), stream.result())
        assert probe.aiter_calls == 1
        assert [c.to_dict()["text"] for c in chunks] == ["a"]

    run_clean(main())


# -- hostile steps ----------------------------------------------------------------------


class AnextReturns:
    """``__anext__`` is a plain method returning whatever it is given."""

    def __init__(self, *values: object) -> None:
        self.values = iter(values)
        self.closes = 0

    def __aiter__(self) -> AnextReturns:
        return self

    def __anext__(self) -> object:
        return next(self.values)

    async def aclose(self) -> None:
        self.closes += 1


async def as_step(record: object) -> object:
    return record


@pytest.mark.parametrize(
    "lie",
    [text("a"), None, 42, "record", [start()]],
    ids=["a-record-itself", "None", "int", "str", "list"],
)
def test_anext_returning_a_non_awaitable_is_an_invalid_fixture(lie: object) -> None:
    source = AnextReturns(as_step(start()), lie)
    outcome = through_source(source)
    assert outcome.error == ("PROVIDER_INVALID_FIXTURE", 0, 1, SOURCE_PATH)
    assert source.closes == 1


class BadAwaitable:
    """An awaitable whose protocol is broken in one of several ways."""

    def __init__(self, how: str) -> None:
        self.how = how

    def __await__(self) -> Generator[object, None, object]:
        if self.how == "raises":
            raise RuntimeError("__await__ failed")
        if self.how == "non-iterator":
            return 42  # type: ignore[return-value]
        return self._bad_yield()

    def _bad_yield(self) -> Generator[object, None, object]:
        yield 42  # not a Future: the Task refuses it
        return start()


@pytest.mark.parametrize("how", ["raises", "non-iterator", "bad-yield"])
def test_a_broken_awaitable_from_anext_is_an_invalid_fixture(how: str) -> None:
    source = AnextReturns(as_step(start()), BadAwaitable(how))
    outcome = through_source(source)
    assert outcome.error == ("PROVIDER_INVALID_FIXTURE", 0, 1, SOURCE_PATH)
    assert source.closes == 1


class SyncRaises:
    """``__anext__`` is a plain method that raises before returning any awaitable."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.pulls = 0

    def __aiter__(self) -> SyncRaises:
        return self

    def __anext__(self) -> object:
        self.pulls += 1
        if self.pulls == 1:
            return as_step(start())
        raise self.error


STEP_ERRORS: dict[str, Callable[[], BaseException]] = {
    "ValueError": lambda: ValueError("boom"),
    "StopIteration": lambda: StopIteration(end()),
    "forged FixtureProviderError": lambda: FixtureProviderError(
        Code.PROVIDER_MISSING_TERMINAL, "forged", response_index=0, record_index=1
    ),
}


@pytest.mark.parametrize("name", sorted(STEP_ERRORS))
@pytest.mark.parametrize("mode", MODES)
def test_an_exception_from_a_step_is_an_invalid_fixture_chained_to_it(
    name: str, mode: Mode
) -> None:
    error = STEP_ERRORS[name]()
    probe = Probe([start(), text("a"), Raise(error), end()], mode)
    outcome = through_source(probe)
    assert outcome.chunks == ({"type": "textDelta", "text": "a", "contentIndex": 0},)
    assert outcome.error == ("PROVIDER_INVALID_FIXTURE", 0, 2, SOURCE_PATH)
    assert (probe.pulls, probe.closes) == (3, 1)

    # The original is the cause (a StopIteration inside a coroutine is Python's
    # RuntimeError, itself caused by the StopIteration).
    async def cause() -> BaseException | None:
        stream = FixtureProviderAdapter(fixture(Probe([start(), Raise(error)], mode))).stream(
            REQUEST
        )
        return (await result_error(stream)).__cause__

    found = run_clean(cause())
    if isinstance(error, StopIteration):
        assert isinstance(found, RuntimeError) and found.__cause__ is error
    else:
        assert found is error


@pytest.mark.parametrize("name", sorted(STEP_ERRORS))
def test_an_exception_raised_by_anext_itself_is_an_invalid_fixture(name: str) -> None:
    async def main() -> None:
        error = STEP_ERRORS[name]()
        source = SyncRaises(error)
        stream = FixtureProviderAdapter(fixture(source)).stream(REQUEST)
        failure = await result_error(stream)
        assert failure.code is Code.PROVIDER_INVALID_FIXTURE
        assert (failure.record_index, failure.path) == (1, SOURCE_PATH)
        assert failure.__cause__ is error

    run_clean(main())


@pytest.mark.parametrize("mode", MODES)
def test_an_async_generator_raising_is_an_invalid_fixture(mode: Mode) -> None:
    forged = FixtureProviderError(Code.PROVIDER_TRANSPORT_ERROR, "forged")

    async def lying() -> AsyncIterator[object]:
        yield start()
        yield text("a")
        await pause(mode)
        raise forged

    async def main() -> None:
        stream = FixtureProviderAdapter(fixture(lying())).stream(REQUEST)
        chunks: list[CourseModelChunk] = []
        with pytest.raises(FixtureProviderError) as info:
            await drain(stream, chunks)
        assert len(chunks) == 1
        assert info.value.code is Code.PROVIDER_INVALID_FIXTURE
        assert info.value.__cause__ is forged
        assert await result_error(stream) is info.value

    run_clean(main())


class EndsWith(Probe):
    """Ends by raising ``StopAsyncIteration`` (or a subclass) carrying a value."""

    def __init__(self, mode: Mode, stop: StopAsyncIteration, sync: bool = False) -> None:
        super().__init__([start(), text("a"), end()], mode)
        self.stop = stop
        self.sync = sync

    def __anext__(self) -> object:  # type: ignore[override]
        if self.pulls == len(self.script) and self.sync:
            self.pulls += 1
            raise self.stop
        return self._step()

    async def _step(self) -> object:
        if self.pulls == len(self.script):
            self.pulls += 1
            await pause(self.mode)
            raise self.stop
        return await Probe.__anext__(self)


@pytest.mark.parametrize("sync", [False, True], ids=["awaited", "raised-by-anext"])
@pytest.mark.parametrize("mode", MODES)
def test_stop_async_iteration_ends_the_source_and_its_value_is_ignored(
    mode: Mode, sync: bool
) -> None:
    source = EndsWith(mode, StopAsyncIteration(text("ignored"), "value"), sync)
    outcome = through_source(source)
    assert outcome.error is None
    assert outcome.chunks == ({"type": "textDelta", "text": "a", "contentIndex": 0},)
    assert source.closes == 0  # exhausted: nothing to clean up


class StopSubclass(StopAsyncIteration):
    pass


@pytest.mark.parametrize("mode", MODES)
def test_a_stop_async_iteration_subclass_ends_the_source_on_both_step_paths(mode: Mode) -> None:
    # Python's own ``async for`` treats a subclass as the end, as the inline path does.
    outcome = through_source(EndsWith(mode, StopSubclass()))
    assert outcome.error is None


@pytest.mark.parametrize("mode", MODES)
def test_cancelled_error_raised_by_the_source_is_an_invalid_fixture(mode: Mode) -> None:
    async def main() -> None:
        probe = Probe([start(), text("a"), Raise(asyncio.CancelledError("mine"))], mode)
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST)
        consumer = asyncio.create_task(drain(stream, []))
        await asyncio.wait((consumer,))
        failure = error_of(consumer)  # the consumer was not cancelled: it got an error
        assert failure.code is Code.PROVIDER_INVALID_FIXTURE
        assert (failure.record_index, failure.path) == (2, SOURCE_PATH)
        assert await result_error(stream) is failure
        assert probe.closes == 1

    run_clean(main())


@pytest.mark.parametrize("mode", MODES)
def test_cancelled_error_raised_by_the_source_is_the_cause(mode: Mode) -> None:
    mine = asyncio.CancelledError("mine")

    async def main() -> None:
        stream = FixtureProviderAdapter(fixture(Probe([start(), Raise(mine)], mode))).stream(
            REQUEST
        )
        assert (await result_error(stream)).__cause__ is mine

    run_clean(main())


class Hostile(BaseException):
    """Not an ``Exception``, not ``CancelledError``: still the source's own code failing."""


@pytest.mark.parametrize("mode", MODES)
def test_a_base_exception_from_the_source_is_an_invalid_fixture(mode: Mode) -> None:
    async def main() -> None:
        hostile = Hostile("not an Exception")
        stream = FixtureProviderAdapter(
            fixture(Probe([start(), text("a"), Raise(hostile)], mode))
        ).stream(REQUEST)
        consumer = asyncio.create_task(drain(stream, []))
        await asyncio.wait((consumer,))
        assert not isinstance(consumer.exception(), Hostile), "escaped the adapter"
        failure = error_of(consumer)
        assert failure.code is Code.PROVIDER_INVALID_FIXTURE
        assert failure.__cause__ is hostile
        # Bounded: result() must settle without the source, never wait on a stale step.
        settled = asyncio.create_task(stream.result())
        await turns()
        assert settled.done()
        assert error_of(settled) is failure

    run_clean(main())


@pytest.mark.parametrize("exit_", [KeyboardInterrupt, SystemExit], ids=lambda e: e.__name__)
@pytest.mark.parametrize("mode", MODES)
def test_a_source_raising_the_process_exits_is_a_failing_source(
    exit_: type[BaseException], mode: Mode
) -> None:
    # The SPEC: an exception a source raises is never passed through, whatever it is.
    async def main() -> None:
        raised = exit_()
        probe = Probe([start(), text("a"), Raise(raised)], mode)
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST)
        error = await result_error(stream)
        assert error.code is Code.PROVIDER_INVALID_FIXTURE
        assert error.__cause__ is raised
        assert error.record_index == 2

    run_clean(main())


# -- unsafe values ----------------------------------------------------------------------


class DictSubclass(dict[str, object]):
    pass


def cyclic_arguments() -> dict[str, object]:
    arguments: dict[str, object] = {"left": 1}
    arguments["self"] = arguments
    return {"type": "tool_call", "id": "c-1", "name": "add", "arguments": arguments}


def deep_arguments() -> dict[str, object]:
    nested: dict[str, object] = {}
    for _ in range(300):
        nested = {"n": nested}
    return {"type": "tool_call", "id": "c-1", "name": "add", "arguments": nested}


UNSAFE: dict[str, Callable[[], object]] = {
    "set": lambda: {"type": "tool_call", "id": "c", "name": "n", "arguments": {"s": {1, 2}}},
    "cycle": cyclic_arguments,
    "dict subclass record": lambda: DictSubclass(type="text_delta", text="x"),
    "dict subclass inside": lambda: tool("c-1", nested=DictSubclass(a=1)),
    "non-str key": lambda: {"type": "tool_call", "id": "c", "name": "n", "arguments": {1: 2}},
    "nan": lambda: tool("c-1", x=float("nan")),
    "tuple": lambda: tool("c-1", x=(1, 2)),
    "too deep": deep_arguments,
    "huge int": lambda: tool("c-1", x=10**5000),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(UNSAFE))
def test_unsafe_values_from_a_source_fail_like_array_records(name: str, mode: Mode) -> None:
    with pytest.raises(FixtureProviderError) as info:
        FixtureProviderAdapter(fixture([start(), text("ok"), UNSAFE[name]()]))
    at_construction = info.value
    assert at_construction.code is Code.PROVIDER_INVALID_FIXTURE

    probe = Probe([start(), text("ok"), UNSAFE[name](), end()], mode)
    outcome = through_source(probe)
    assert outcome.chunks == ({"type": "textDelta", "text": "ok", "contentIndex": 0},)
    assert outcome.error == summary_of(at_construction)
    assert outcome.error is not None and outcome.error[2] == 2  # record_index
    assert (probe.pulls, probe.closes) == (3, 1)


@pytest.mark.parametrize("mode", MODES)
def test_a_record_is_snapshot_when_read_so_later_mutation_changes_nothing(mode: Mode) -> None:
    async def main() -> None:
        record = tool("c-1", left=20, right=22)

        async def mutating() -> AsyncIterator[object]:
            yield start()
            yield record
            await pause(mode)
            record["arguments"]["left"] = -1  # type: ignore[index]
            record["id"] = "forged"
            yield end(stop_reason="tool_call")

        stream = FixtureProviderAdapter(fixture(mutating())).stream(REQUEST)
        chunks: list[CourseModelChunk] = []
        await drain(stream, chunks)
        response = await stream.result()
        assert [c.to_dict() for c in chunks] == [
            {
                "type": "toolCall",
                "id": "c-1",
                "name": "add",
                "arguments": {"left": 20, "right": 22},
                "contentIndex": 0,
            }
        ]
        assert response.message.content[0].to_dict()["arguments"] == {"left": 20, "right": 22}

    run_clean(main())


# -- streaming, not buffering -----------------------------------------------------------


class Lazy:
    """A million records, generated as pulled: start, then text deltas, then end."""

    SIZE = 1_000_000

    def __init__(self) -> None:
        self.pulls = 0
        self.closes = 0

    def __aiter__(self) -> Lazy:
        return self

    async def __anext__(self) -> object:
        self.pulls += 1
        if self.pulls == 1:
            return start()
        if self.pulls < self.SIZE:
            return text(str(self.pulls))
        if self.pulls == self.SIZE:
            return end()
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self.closes += 1


def test_first_chunk_of_a_million_record_source_arrives_after_two_pulls() -> None:
    async def main() -> None:
        source = Lazy()
        stream = FixtureProviderAdapter(fixture(source)).stream(REQUEST)
        async with stream:
            chunk = await next_chunk(stream)
            assert chunk.to_dict() == {"type": "textDelta", "text": "2", "contentIndex": 0}
            assert source.pulls == 2
            assert (await next_chunk(stream)).to_dict()["text"] == "3"
            assert source.pulls == 3
        assert (source.pulls, source.closes) == (3, 1)
        assert (await result_error(stream)).code is Code.PROVIDER_ABORTED

    run_clean(main())


@pytest.mark.parametrize("mode", MODES)
def test_each_chunk_arrives_before_the_next_record_is_pulled(mode: Mode) -> None:
    async def main() -> None:
        probe = Probe([start(), text("a"), tool("c-1"), text("b"), BLOCK], mode)
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST)
        seen: list[tuple[str, int]] = []
        for _ in range(3):
            chunk = await soon(next_chunk(stream))
            seen.append((chunk.type, probe.pulls))
        assert seen == [("textDelta", 2), ("toolCall", 3), ("textDelta", 4)]
        await stream.aclose()
        assert (probe.pulls, probe.closes) == (4, 1)

    run_clean(main())


# -- racing the abort -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["generator", "class"])
def test_a_source_that_waits_forever_after_a_tool_call_is_ended_by_abort(kind: str) -> None:
    async def main() -> None:
        cleaned: list[str] = []

        async def forever() -> AsyncIterator[object]:
            try:
                yield seed_start()
                yield seed_tool()
                await asyncio.get_running_loop().create_future()
            finally:
                cleaned.append("finally")

        probe = Probe([seed_start(), seed_tool(), BLOCK], "inline")
        source: object = forever() if kind == "generator" else probe
        controller = AbortController()
        stream = FixtureProviderAdapter(fixture(source)).stream(REQUEST, controller.signal)
        chunk = await soon(next_chunk(stream))
        assert isinstance(chunk, CourseToolCallChunk) and chunk.id == "call-add-001"
        pending = asyncio.create_task(next_chunk(stream))
        await turns()
        assert not pending.done()
        controller.abort("user pressed stop")
        await turns()
        assert pending.done()
        error = error_of(pending)
        assert error.code is Code.PROVIDER_ABORTED
        assert await result_error(stream) is error
        with pytest.raises(FixtureProviderError) as again:
            await next_chunk(stream)
        assert again.value is error
        if kind == "generator":
            assert cleaned == ["finally"]
        else:
            assert (probe.step_cancelled, probe.closes, probe.pulls) == (1, 1, 3)

    run_clean(main())


@pytest.mark.parametrize("mode", MODES)
def test_abort_while_anext_is_blocked_settles_both_paths_without_a_timer(
    mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_timer(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("the adapter scheduled a timer")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        probe = Probe([start(), text("a"), BLOCK], mode)
        controller = AbortController()
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST, controller.signal)
        with monkeypatch.context() as patch:
            patch.setattr(loop, "call_at", no_timer)
            patch.setattr(loop, "call_later", no_timer)
            chunks: list[CourseModelChunk] = []
            iteration = asyncio.create_task(drain(stream, chunks))
            result = asyncio.create_task(stream.result())
            for _ in range(TURNS):
                await asyncio.sleep(0)
            blocked = probe.blocked and not iteration.done() and not result.done()
            controller.abort()
            for _ in range(TURNS):
                await asyncio.sleep(0)
            settled = iteration.done() and result.done()
        if not settled:  # clean up before failing
            iteration.cancel()
            result.cancel()
            await asyncio.wait((iteration, result))
        assert blocked
        assert settled
        error = error_of(iteration)
        assert error.code is Code.PROVIDER_ABORTED
        assert error_of(result) is error
        assert [c.to_dict()["text"] for c in chunks] == ["a"]
        assert (probe.step_cancelled, probe.closes) == (1, 1)

    run_clean(main())


@pytest.mark.parametrize("mode", MODES)
def test_abort_between_steps_fails_the_next_step_without_pulling(mode: Mode) -> None:
    async def main() -> None:
        probe = Probe([start(), text("a"), text("b"), end()], mode)
        controller = AbortController()
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST, controller.signal)
        await next_chunk(stream)
        controller.abort()
        with pytest.raises(FixtureProviderError) as info:
            await next_chunk(stream)
        assert info.value.code is Code.PROVIDER_ABORTED
        assert (probe.pulls, probe.closes) == (2, 1)

    run_clean(main())
    # The same records as an array also abort at the next step.
    array_stream = FixtureProviderAdapter(fixture([start(), text("a"), text("b"), end()]))

    async def array() -> None:
        controller = AbortController()
        stream = array_stream.stream(REQUEST, controller.signal)
        await next_chunk(stream)
        controller.abort()
        assert (await result_error(stream)).code is Code.PROVIDER_ABORTED

    run_clean(array())


@pytest.mark.parametrize("mode", MODES)
def test_stream_aclose_from_another_task_stops_a_step(mode: Mode) -> None:
    async def main() -> None:
        script: list[object] = [start(), text("a"), BLOCK if mode != "inline" else text("b")]
        probe = Probe([*script, end()], mode)
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST)
        chunks: list[CourseModelChunk] = []
        if mode == "inline":
            chunks.append(await next_chunk(stream))
            # Between two inline steps: the next step must not pull the source.
            await asyncio.create_task(stream.aclose())
            with pytest.raises(FixtureProviderError) as info:
                await next_chunk(stream)
            assert info.value.code is Code.PROVIDER_ABORTED
            assert (probe.pulls, probe.closes) == (2, 1)
        else:
            consumer = asyncio.create_task(drain(stream, chunks))
            await turns()
            assert probe.blocked
            closer = asyncio.create_task(stream.aclose())
            await turns()
            assert consumer.done() and closer.done()
            assert closer.result() is None
            assert error_of(consumer).code is Code.PROVIDER_ABORTED
            assert (probe.step_cancelled, probe.closes) == (1, 1)
        assert len(chunks) == 1
        assert (await result_error(stream)).code is Code.PROVIDER_ABORTED
        await stream.aclose()  # idempotent
        assert probe.closes == 1

    run_clean(main())


@pytest.mark.parametrize("mode", MODES)
def test_leaving_async_with_early_closes_the_source_once(mode: Mode) -> None:
    async def main() -> None:
        probe = Probe([start(), text("a"), text("b"), end()], mode)
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST)
        async with stream as entered:
            assert entered is stream
            await next_chunk(stream)
        assert (probe.pulls, probe.closes) == (2, 1)
        assert (await result_error(stream)).code is Code.PROVIDER_ABORTED

        # A complete stream keeps its response; one failed keeps its error.
        done = Probe([start(), end()], mode)
        stream = FixtureProviderAdapter(fixture(done)).stream(REQUEST)
        async with stream:
            response = await stream.result()
        assert await stream.result() is response
        assert done.closes == 0

    run_clean(main())


@pytest.mark.parametrize("mode", MODES)
def test_result_and_iteration_in_two_tasks_see_one_outcome(mode: Mode) -> None:
    records: list[object] = [start(), text("a"), tool("c-1", x=1), text("b")]

    async def main(script: list[object]) -> tuple[Summary, int, int]:
        probe = Probe(script, mode)
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST)
        chunks: list[CourseModelChunk] = []
        iteration = asyncio.create_task(drain(stream, chunks))
        result = asyncio.create_task(stream.result())
        await asyncio.wait((iteration, result))
        error = None if iteration.exception() is None else error_of(iteration)
        if error is None:
            response: object = result.result().to_dict()
        else:
            assert error_of(result) is error
            response = None
        summary = Summary(
            tuple(c.to_dict() for c in chunks), response, summary_of(error), summary_of(error)
        )
        return summary, probe.aiter_calls, probe.pulls

    good = [*records, end(stop_reason="tool_call")]
    assert run_clean(main(good)) == (through_array(good), 1, len(good) + 1)
    bad = [*records, {"type": "ping"}, end()]
    assert run_clean(main(bad)) == (through_array(bad), 1, len(records) + 1)


# -- cleanup ----------------------------------------------------------------------------


ACLOSE_ERRORS: dict[str, Callable[[], BaseException]] = {
    "RuntimeError": lambda: RuntimeError("cleanup failed"),
    "forged FixtureProviderError": lambda: FixtureProviderError(Code.PROVIDER_EXHAUSTED, "x"),
    "CancelledError": lambda: asyncio.CancelledError("from aclose"),
}


@pytest.mark.parametrize("name", sorted(ACLOSE_ERRORS))
@pytest.mark.parametrize("mode", MODES)
def test_a_failing_aclose_never_replaces_the_error_that_caused_it(name: str, mode: Mode) -> None:
    probe = Probe([start(), {"type": "ping"}, end()], mode, aclose_error=ACLOSE_ERRORS[name]())
    outcome = through_source(probe)
    assert outcome.error == ("PROVIDER_UNKNOWN_EVENT", 0, 1, "/responses/0/records/1/type")
    assert probe.closes == 1

    async def closed_early() -> None:
        failing = Probe([start(), text("a"), end()], mode, aclose_error=ACLOSE_ERRORS[name]())
        stream = FixtureProviderAdapter(fixture(failing)).stream(REQUEST)
        await next_chunk(stream)
        await stream.aclose()  # the cleanup error is swallowed, not raised here
        assert (await result_error(stream)).code is Code.PROVIDER_ABORTED
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
        assert failing.closes == 1

    run_clean(closed_early())


class OddAclose(Probe):
    """``aclose`` that is not a coroutine function."""

    def __init__(self, aclose: object) -> None:
        super().__init__([start(), text("a"), end()])
        self.odd = aclose

    def __getattribute__(self, name: str) -> object:
        if name == "aclose":
            raise AssertionError("aclose must be looked up on the type")
        return object.__getattribute__(self, name)


def _sync_aclose_raises(self: object) -> None:
    raise RuntimeError("sync aclose failed")


@pytest.mark.parametrize(
    "aclose",
    [None, 42, lambda self: "not awaitable", _sync_aclose_raises],
    ids=["None", "int", "returns-non-awaitable", "sync-raises"],
)
def test_an_odd_aclose_never_breaks_closing(aclose: object) -> None:
    kind = type("Odd", (OddAclose,), {"aclose": aclose})

    async def main() -> None:
        source = kind(aclose)
        stream = FixtureProviderAdapter(fixture(source)).stream(REQUEST)
        await next_chunk(stream)
        await stream.aclose()
        assert (await result_error(stream)).code is Code.PROVIDER_ABORTED

    run_clean(main())


# -- task cancellation ------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_cancelling_the_consumer_propagates_and_cleans_up(mode: Mode) -> None:
    async def main() -> None:
        script: list[object] = [start(), text("a"), BLOCK if mode != "inline" else text("b")]
        probe = Probe([*script, end()], mode)
        stream = FixtureProviderAdapter(fixture(probe)).stream(REQUEST)
        gate = asyncio.Event()
        seen: list[tuple[object, ...]] = []
        chunks: list[CourseModelChunk] = []

        async def consume() -> None:
            try:
                if mode == "inline":
                    # Every step is inline: the cancellation lands in the consumer's
                    # own await, and ``async with`` hands it to the stream.
                    async with stream:
                        async for chunk in stream:
                            chunks.append(chunk)
                            await gate.wait()
                else:
                    await drain(stream, chunks)
            except asyncio.CancelledError as exc:
                seen.append(exc.args)
                raise

        consumer = asyncio.create_task(consume())
        await turns()
        assert len(chunks) == 1
        assert probe.blocked or mode == "inline"
        consumer.cancel("caller gave up")
        await asyncio.wait((consumer,))
        assert consumer.cancelled()
        assert seen == [("caller gave up",)]
        assert probe.closes == 1
        assert probe.step_cancelled == (0 if mode == "inline" else 1)
        assert (await result_error(stream)).code is Code.PROVIDER_ABORTED
        assert asyncio.all_tasks() == {asyncio.current_task()}

    run_clean(main())


def test_cancelling_the_consumer_of_a_generator_runs_its_finally() -> None:
    async def main() -> None:
        cleaned: list[str] = []

        async def source() -> AsyncIterator[object]:
            try:
                yield start()
                yield text("a")
                await asyncio.get_running_loop().create_future()
            finally:
                cleaned.append("finally")

        stream = FixtureProviderAdapter(fixture(source())).stream(REQUEST)
        consumer = asyncio.create_task(drain(stream, []))
        await turns()
        consumer.cancel()
        await asyncio.wait((consumer,))
        assert consumer.cancelled()
        assert cleaned == ["finally"]
        assert (await result_error(stream)).code is Code.PROVIDER_ABORTED

    run_clean(main())


# -- a step behaves as under ``async for`` ---------------------------------------------


@pytest.mark.parametrize(
    "pause_first",
    [True, False],
    ids=["timeout-entered-after-suspending", "timeout-entered-before-suspending"],
)
def test_a_source_may_use_asyncio_timeout_inside_a_step(pause_first: bool) -> None:
    # A recorder tapping a live transport times out its reads and reports it as data.
    # (An adapter that ran the start of a step in one task and the rest in another
    # bound the timeout to the consumer, whose task it then cancelled.)
    async def recorder() -> AsyncIterator[object]:
        yield start()
        if pause_first:
            await pause("future")
        try:
            async with asyncio.timeout(0):  # expires on the next loop turn: no real wait
                await asyncio.get_running_loop().create_future()
        except TimeoutError:
            yield {"type": "transport_error", "message": "read timed out"}

    async def main() -> None:
        stream = FixtureProviderAdapter(fixture(recorder())).stream(REQUEST)
        consumer = asyncio.create_task(drain(stream, []))
        await asyncio.wait((consumer,))
        assert not consumer.cancelled(), "nobody cancelled the consumer"
        assert error_of(consumer).code is Code.PROVIDER_TRANSPORT_ERROR

    run_clean(main())


def test_a_source_aborting_inside_its_own_step_is_still_cleaned_up() -> None:
    async def main() -> list[str]:
        controller = AbortController()
        cleaned: list[str] = []

        async def source() -> AsyncIterator[object]:
            try:
                yield start()
                controller.abort("from inside the source")
                await asyncio.get_running_loop().create_future()
                yield end()
            finally:
                cleaned.append("finally")

        stream = FixtureProviderAdapter(fixture(source())).stream(REQUEST, controller.signal)
        assert (await soon(result_error(stream))).code is Code.PROVIDER_ABORTED
        return list(cleaned)

    observed = run_clean(main())
    gc.collect()  # if a step was orphaned, finalize it here rather than in a later test
    assert observed == ["finally"]


class Unsafe(dict[str, object]):
    pass


INTERRUPTED_REACTIONS = [
    "re-raise",
    "swallow-and-yield",
    "swallow-and-end",
    "convert-to-error",
    "swallow-and-yield-unsafe",
]


@pytest.mark.parametrize("reaction", INTERRUPTED_REACTIONS)
def test_an_interrupted_step_leaves_no_cancel_request_on_the_consumer(reaction: str) -> None:
    async def source() -> AsyncIterator[object]:
        yield start()
        try:
            await asyncio.get_running_loop().create_future()
        except asyncio.CancelledError:
            if reaction == "re-raise":
                raise
            if reaction == "convert-to-error":
                raise ValueError("the read was interrupted") from None
            if reaction == "swallow-and-yield":
                yield text("late")
            if reaction == "swallow-and-yield-unsafe":
                yield Unsafe(type="text_delta", text="late")

    async def consume(stream: CourseModelStream) -> int:
        with pytest.raises(FixtureProviderError) as info:
            await drain(stream, [])
        assert info.value.code is Code.PROVIDER_ABORTED
        task = asyncio.current_task()
        assert task is not None
        return task.cancelling()

    async def main() -> None:
        controller = AbortController()
        stream = FixtureProviderAdapter(fixture(source())).stream(REQUEST, controller.signal)
        consumer = asyncio.create_task(consume(stream))
        await turns()
        controller.abort()
        assert await finished_within_turns(consumer)
        # A leftover request would make the consumer's next TaskGroup or timeout
        # believe the task is being cancelled.
        assert consumer.result() == 0
        assert (await result_error(stream)).code is Code.PROVIDER_ABORTED

    run_clean(main())


def stubborn_stream() -> tuple[CourseModelStream, AbortController, asyncio.Event]:
    """A stream whose source swallows every cancellation until ``released`` is set."""
    released = asyncio.Event()

    async def stubborn() -> AsyncIterator[object]:
        yield start()
        while not released.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await released.wait()

    controller = AbortController()
    stream = FixtureProviderAdapter(fixture(stubborn())).stream(REQUEST, controller.signal)
    return stream, controller, released


def test_abort_settles_other_waiters_at_once_when_the_source_swallows_cancellation() -> None:
    async def main() -> None:
        stream, controller, released = stubborn_stream()
        iteration = asyncio.create_task(drain(stream, []))  # drives the step
        result = asyncio.create_task(stream.result())  # waits for the driver
        await turns()
        controller.abort()
        await turns()
        settled = result.done()
        released.set()  # let the source go, so nothing is left pending
        await asyncio.wait((iteration, result))
        assert settled
        assert error_of(result).code is Code.PROVIDER_ABORTED
        assert error_of(iteration) is error_of(result)

    run_clean(main())


def test_a_source_that_swallows_cancellation_holds_only_its_own_driver() -> None:
    """A documented limit: steps run in the consumer's task, as with ``async for``.

    The abort settles the stream at once for everyone else, but the task driving the
    step cannot leave a step whose source refuses the cancellation; it raises
    ``PROVIDER_ABORTED`` as soon as the source lets go.
    """

    async def main() -> bool:
        stream, controller, released = stubborn_stream()
        iteration = asyncio.create_task(drain(stream, []))
        await turns()
        controller.abort()
        await turns()
        held = not iteration.done()
        released.set()  # the source lets go
        await asyncio.wait((iteration,))
        assert error_of(iteration).code is Code.PROVIDER_ABORTED
        return held

    assert run_clean(main())


class SelfAwaitingSource:
    """A source whose second step awaits the very stream it feeds."""

    def __init__(self) -> None:
        self.stream: CourseModelStream | None = None
        self.steps = 0
        self.seen: BaseException | None = None

    def __aiter__(self) -> SelfAwaitingSource:
        return self

    async def __anext__(self) -> object:
        self.steps += 1
        if self.steps == 1:
            return seed_start()
        assert self.stream is not None
        try:
            return await self.stream.result()
        except BaseException as exc:
            self.seen = exc
            raise


@pytest.mark.parametrize("via", ["result", "iteration"])
def test_a_source_that_awaits_its_own_stream_fails_it_instead_of_hanging(via: str) -> None:
    source = SelfAwaitingSource()

    async def scenario() -> FixtureProviderError:
        adapter = FixtureProviderAdapter({"schemaVersion": 1, "responses": [{"records": source}]})
        stream = source.stream = adapter.stream(REQUEST)
        # A bound, so that a regression fails here instead of hanging the suite.
        async with asyncio.timeout(10):
            if via == "result":
                return await result_error(stream)
            with pytest.raises(FixtureProviderError) as info:
                async for _ in stream:
                    pass
            return info.value

    error = run_clean(scenario())
    assert error.code is Code.PROVIDER_INVALID_FIXTURE
    assert "awaited its own stream" in error.message
    assert (error.response_index, error.record_index, error.path) == (0, 1, SOURCE_PATH)
    assert source.seen is error  # the source's own await got the error, not a hang
