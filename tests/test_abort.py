"""An abort reason is data: whatever ``abort()`` is given, everything settles and nothing raises.

``abort()`` wakes every ``signal.wait()`` and interrupts every stream on the signal.
These tests give it hostile reasons (a ``repr`` that raises, that never ends, that
returns something odd) and stale subscribers (a waiter whose event loop is closed), and
check that every waiter and stream still settles as ``PROVIDER_ABORTED``, that
``abort()`` never raises, and that every rendering of the reason is safe and bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Callable, Iterator
from typing import NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    AbortController,
    AbortSignal,
    CourseModelRequest,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)
from course._abort import describe_reason

from .helpers import BlockingSource, end, failure_of, fixture, run, start, text, turns

Code = FixtureProviderErrorCode
REQUEST = CourseModelRequest("req-1")

# What a rendered reason may cost a message, at most (the surrounding words excluded).
MESSAGE_BOUND = 300


# -- hostile reasons ---------------------------------------------------------------------


class Escape(BaseException):
    """Not an ``Exception``: a ``repr`` raising it must still be contained."""


class ReprRaises:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __repr__(self) -> str:
        raise self.error


class ReprReturns:
    def __init__(self, value: object) -> None:
        self.value = value

    def __repr__(self) -> str:
        return self.value  # type: ignore[return-value]


class LyingStr(str):
    """A ``str`` whose own methods lie or raise: only its characters may be used."""

    __slots__ = ()

    def __len__(self) -> int:
        raise RuntimeError("len of a lying str")

    def __getitem__(self, index: object) -> NoReturn:
        raise RuntimeError("slicing a lying str")

    def __format__(self, spec: str) -> str:
        raise RuntimeError("formatting a lying str")

    def __str__(self) -> str:
        raise RuntimeError("str of a lying str")

    def __repr__(self) -> str:
        raise RuntimeError("repr of a lying str")


class Unhashable:
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("compared")


class HostileMeta(type):
    """Its classes' ``__name__`` raises, while armed (pytest's own failure report reads it)."""

    armed = False

    @property
    def __name__(cls) -> str:  # type: ignore[override]
        if HostileMeta.armed:
            raise RuntimeError("asked the metaclass for a name")
        return "HostileType"


@contextlib.contextmanager
def armed() -> Iterator[None]:
    HostileMeta.armed = True
    try:
        yield
    finally:
        HostileMeta.armed = False


class HostileType(metaclass=HostileMeta):
    def __repr__(self) -> str:
        raise RuntimeError("no repr either")


def self_containing() -> list[object]:
    loop: list[object] = []
    loop.append(loop)
    return loop


def deeply_nested() -> list[object]:
    nested: list[object] = []
    for _ in range(100_000):
        nested = [nested]
    return nested


HOSTILE_REASONS: dict[str, Callable[[], object]] = {
    "repr raises ValueError": lambda: ReprRaises(ValueError("no repr")),
    "repr raises RuntimeError": lambda: ReprRaises(RuntimeError("no repr")),
    "repr raises a BaseException": lambda: ReprRaises(Escape("no repr")),
    "repr raises KeyboardInterrupt": lambda: ReprRaises(KeyboardInterrupt()),
    "repr raises SystemExit": lambda: ReprRaises(SystemExit(3)),
    "repr raises CancelledError": lambda: ReprRaises(asyncio.CancelledError()),
    "repr raises GeneratorExit": lambda: ReprRaises(GeneratorExit()),
    "repr returns an int": lambda: ReprReturns(42),
    "repr returns a lying str": lambda: ReprReturns(LyingStr("forged")),
    "a lying str": lambda: LyingStr("reason"),
    "a huge str": lambda: "x" * 1_000_000,
    "a huge repr": lambda: ReprReturns("y" * 1_000_000),
    "an int past the conversion limit": lambda: 10**5000,
    "a huge list": lambda: list(range(1_000_000)),
    "a self-containing list": self_containing,
    "nesting past the recursion limit": deeply_nested,
    "an unhashable object": Unhashable,
    "a hostile metaclass": HostileType,
    "an exception": lambda: ValueError("user left"),
}


# -- the scene: waiters and streams of every kind on one signal --------------------------


async def abort_everything(reason: object) -> None:
    """Waiters, an array stream between steps, a source stream blocked in a step, and a
    stream not started yet, all on one signal; then ``abort(reason)``."""
    controller = AbortController()
    signal = controller.signal
    waiters = [asyncio.create_task(signal.wait()) for _ in range(2)]
    records: list[object] = [start(), text("a"), text("b"), end()]
    source = BlockingSource()
    adapter = FixtureProviderAdapter(fixture(records, source, records))
    array = adapter.stream(REQUEST, signal)
    blocked = adapter.stream(REQUEST, signal)
    untouched = adapter.stream(REQUEST, signal)
    await anext(array)
    await anext(blocked)
    step = asyncio.create_task(anext(blocked))
    await turns()
    assert not step.done() and source.pulls == 3

    controller.abort(reason)  # must not raise, whatever the reason

    await turns()
    assert all(waiter.done() and waiter.result() is None for waiter in waiters)
    assert step.done()
    stepped = step.exception()
    assert isinstance(stepped, FixtureProviderError), repr(stepped)
    errors = [stepped, await failure_of(array), await failure_of(blocked)]
    errors.append(await failure_of(untouched))
    with pytest.raises(FixtureProviderError) as iterated:
        await anext(array)
    errors.append(iterated.value)
    for error in errors:
        assert error.code is Code.PROVIDER_ABORTED
        assert type(error.message) is str and len(error.message) < MESSAGE_BOUND
        str(error)
        repr(error)
    assert source.closes == 1
    assert signal.reason is reason
    # A call made after the abort is refused with a message built the same safe way.
    refused = await failure_of(adapter.stream(REQUEST, signal))
    assert refused.code is Code.PROVIDER_ABORTED and len(refused.message) < MESSAGE_BOUND
    assert asyncio.all_tasks() == {asyncio.current_task()}


@pytest.mark.parametrize("name", sorted(HOSTILE_REASONS))
def test_whatever_the_reason_every_waiter_and_stream_settles_as_aborted(name: str) -> None:
    with armed():
        run(abort_everything(HOSTILE_REASONS[name]()))


@pytest.mark.parametrize("name", sorted(HOSTILE_REASONS))
def test_rendering_a_reason_never_raises_and_is_bounded(name: str) -> None:
    controller = AbortController()
    controller.abort(HOSTILE_REASONS[name]())
    with armed():
        description = describe_reason(controller.signal)
        rendered = [repr(controller.signal), repr(controller)]
    assert type(description) is str and 0 < len(description) < MESSAGE_BOUND
    for text_ in rendered:
        assert type(text_) is str and len(text_) < MESSAGE_BOUND + 100


def test_a_plain_reason_is_shown_in_the_message() -> None:
    controller = AbortController()
    controller.abort("user pressed stop")
    assert describe_reason(controller.signal) == " (reason: 'user pressed stop')"
    error = run(failure_of(FixtureProviderAdapter(fixture()).stream(REQUEST, controller.signal)))
    assert "'user pressed stop'" in error.message


def test_a_reason_described_before_the_abort_is_still_shown_after_it() -> None:
    controller = AbortController()
    assert describe_reason(controller.signal) == ""
    controller.abort("late")
    assert describe_reason(controller.signal) == " (reason: 'late')"


def test_no_reason_adds_nothing_to_the_message() -> None:
    controller = AbortController()
    controller.abort()
    assert describe_reason(controller.signal) == ""
    assert repr(controller.signal) == "<AbortSignal aborted>"
    assert repr(AbortController().signal) == "<AbortSignal not aborted>"


def test_a_reason_is_rendered_once_however_many_streams_report_it() -> None:
    renders: list[int] = []

    class Counted:
        def __repr__(self) -> str:
            renders.append(1)
            return "Counted()"

    async def main() -> None:
        controller = AbortController()
        adapter = FixtureProviderAdapter(fixture(*([[start(), text("a"), end()]] * 5)))
        streams = [adapter.stream(REQUEST, controller.signal) for _ in range(5)]
        controller.abort(Counted())
        for stream in streams:
            assert "Counted()" in (await failure_of(stream)).message

    run(main())
    assert len(renders) == 1


# -- random reasons at random points -----------------------------------------------------

_plain_reasons = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=50)),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=5), children)
    ),
    max_leaves=10,
)
# Hostile reasons are drawn by name: a falsifying example must still print.
_reasons = st.one_of(_plain_reasons, st.sampled_from(sorted(HOSTILE_REASONS)).map(lambda n: [n]))


@settings(max_examples=60)
@given(drawn=_reasons, abort_after=st.integers(0, 6), use_source=st.booleans())
def test_an_abort_at_any_point_with_any_reason_settles_as_aborted(
    drawn: object, abort_after: int, use_source: bool
) -> None:
    hostile = type(drawn) is list and len(drawn) == 1 and type(drawn[0]) is str
    hostile = hostile and drawn[0] in HOSTILE_REASONS  # type: ignore[index]
    reason = HOSTILE_REASONS[drawn[0]]() if hostile else drawn  # type: ignore[index]
    texts = [text(str(n)) for n in range(5)]

    async def generator() -> AsyncIterator[object]:
        yield start()
        for record in texts:
            await asyncio.sleep(0)
            yield record
        yield end()

    async def main() -> None:
        controller = AbortController()
        records: object = generator() if use_source else [start(), *texts, end()]
        stream = FixtureProviderAdapter(fixture(records)).stream(REQUEST, controller.signal)
        waiter = asyncio.create_task(controller.signal.wait())
        if abort_after == 0:
            controller.abort(reason)
        delivered = 0
        try:
            async for _ in stream:
                delivered += 1
                if delivered == abort_after:
                    controller.abort(reason)
        except FixtureProviderError as error:
            # The step after the abort fails, the chunks before it were delivered.
            assert error.code is Code.PROVIDER_ABORTED
            assert len(error.message) < MESSAGE_BOUND
            assert delivered == abort_after
            assert await failure_of(stream) is error
        else:
            assert abort_after > len(texts)
            controller.abort(reason)
            assert (await stream.result()).response_id == "r-1"  # complete: it stays
        await asyncio.wait((waiter,))
        assert waiter.result() is None
        assert asyncio.all_tasks() == {asyncio.current_task()}

    with armed():
        run(main())


# -- stale subscribers -------------------------------------------------------------------


def forget(*tasks: asyncio.Task[object]) -> None:
    """Close the coroutines of tasks left pending on a closed loop, quietly.

    Closing throws ``GeneratorExit`` into them, as the garbage collector would; the
    tasks themselves are told not to report that they were destroyed pending, which
    is the point of these tests.
    """
    for task in tasks:
        task._log_destroy_pending = False  # type: ignore[attr-defined]
        task.get_coro().close()
    gc.collect()


def test_a_waiter_left_on_a_closed_loop_neither_makes_abort_raise_nor_blocks_others() -> None:
    controller = AbortController()
    loop = asyncio.new_event_loop()
    try:
        stale = loop.create_task(controller.signal.wait())
        loop.run_until_complete(asyncio.sleep(0))
        assert not stale.done()
    finally:
        loop.close()

    async def main() -> None:
        waiter = asyncio.create_task(controller.signal.wait())
        await asyncio.sleep(0)
        controller.abort("after the first loop closed")
        await asyncio.wait((waiter,))
        assert waiter.result() is None

    run(main())
    forget(stale)


def test_a_stream_step_left_on_a_closed_loop_does_not_make_abort_raise() -> None:
    controller = AbortController()
    source = BlockingSource()
    stream = FixtureProviderAdapter(fixture(source)).stream(REQUEST, controller.signal)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(anext(stream))
        stale = loop.create_task(anext(stream))  # drives the source's step
        waiting = loop.create_task(stream.result())  # waits for that step
        loop.run_until_complete(asyncio.sleep(0))
        assert source.pulls == 3 and not stale.done() and not waiting.done()
    finally:
        loop.close()
    controller.abort("after the loop closed")
    assert stream._settled

    async def main() -> None:
        waiter = asyncio.create_task(controller.signal.wait())
        await asyncio.wait((waiter,))
        assert (await failure_of(stream)).code is Code.PROVIDER_ABORTED

    run(main())
    forget(stale, waiting)
    assert source.closes == 0  # its loop is closed: there is nowhere to clean it up


def test_a_failing_subscriber_neither_makes_abort_raise_nor_blocks_the_others() -> None:
    async def main() -> None:
        controller = AbortController()
        first = asyncio.create_task(controller.signal.wait())
        await asyncio.sleep(0)

        def fails() -> None:
            raise ZeroDivisionError("a subscriber that fails")

        controller.signal._subscribe(fails)
        last = asyncio.create_task(controller.signal.wait())
        await asyncio.sleep(0)
        controller.abort()
        await asyncio.wait((first, last))
        assert first.result() is None and last.result() is None

    run(main())


# -- the signal itself -------------------------------------------------------------------


def test_abort_signal_cannot_be_subclassed() -> None:
    # Streams read the signal's state on every step; a subclass could make those reads
    # run arbitrary code (or lie), so a signal is always the real thing.
    with pytest.raises(TypeError, match="AbortController"):

        class Forged(AbortSignal):  # type: ignore[misc]
            pass
