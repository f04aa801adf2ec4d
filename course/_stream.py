"""``CourseModelStream``: one response's chunks, then its one terminal outcome.

How a stream moves. Each step does one thing, checked in this order:

1. the signal is aborted: settle as ``PROVIDER_ABORTED``;
2. 1,000 records were read since the event loop last had a turn: give it one;
3. array records (``_step_records``): feed the parser until a chunk comes, the
   records end, or the next turn is due; a record with a ``delay`` (schema version 2)
   is fed only after a wait (``_wait``);
4. an async source (``_step_source``): pull one record, then wait for its ``delay``, if
   it has one. One task at a time does this (the *driver*), in its own frame, exactly
   as ``async for`` over the source would; other tasks wait for it and look again.

A ``delay``'s wait is a step of its own, shaped like a source's pending step: its task
is the driver, and whatever interrupts a source's step interrupts it (an abort, a
close, a cancellation, a timeout, a closed consumer). Array records' delays are known
at construction, so a response without any costs nothing: the fast path feeds records
up to ``_barrier``, the next turn or the next delayed record, whichever comes first.

Chunks go straight to the consumer. ``result()`` may drive the response ahead of the
consumer; the chunks it passes are kept, in order, until the consumer takes them.

How a stream ends. ``_settle`` is the one place an outcome is set, and it is set once:
the response, or an error. Settling wakes every task waiting for the driver, and if a
source step is pending it interrupts it the way ``asyncio.timeout()`` does: it cancels
the driver from the event loop, and the driver takes that cancellation back when it
arrives. Whichever task stops processing early (an error, an abort, ``aclose()``, its
own cancellation) then asks the source to clean up; a coroutine being closed may not
await, so it schedules that cleanup on the event loop instead.

Where a cancellation lands decides what it does: inside a stream step (a turn, or a
source's pending step) it stops processing and settles the stream as
``PROVIDER_ABORTED``; in the consumer's own code between steps it leaves the stream
alone, and ``result()`` can still complete it.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from collections.abc import Callable
from types import CoroutineType as _COROUTINE
from types import TracebackType
from typing import Final

from ._abort import AbortSignal, describe_reason
from ._errors import FixtureProviderError, FixtureProviderErrorCode
from ._model import CourseModelChunk, CourseModelResponse, CourseModelUsage
from ._parser import ResponseParser, delay_of
from ._source import END, SourceFeed

__all__ = ["TURN_EVERY", "CourseModelStream"]

Code = FixtureProviderErrorCode

TURN_EVERY: Final = 1_000
"""A stream gives the event loop a turn at least once every this many records."""

_get_running_loop = asyncio._get_running_loop
# The public lookup (3.11's is a little Python around a table; reading the table
# directly saved about 1% of a source's instructions, not worth a private import).
_task_of: Callable[[asyncio.AbstractEventLoop], asyncio.Task[object] | None] = asyncio.current_task


def _trio_is_running() -> bool:
    # Never imports trio: if trio runs us, the user imported it already.
    trio = sys.modules.get("trio")
    in_trio_run = getattr(getattr(trio, "lowlevel", None), "in_trio_run", None)
    return in_trio_run is not None and bool(in_trio_run())


async def _checkpoint() -> None:
    """Give the running event loop a turn: asyncio's, or trio's when trio runs us."""
    if _get_running_loop() is not None:
        await asyncio.sleep(0)
    elif _trio_is_running():
        await sys.modules["trio"].lowlevel.checkpoint()


_SOURCE_NEEDS_ASYNCIO: Final = (
    "An async record source needs asyncio: its steps run in an asyncio task so that an "
    "abort or aclose() can interrupt them. Under trio (or outside any task) stream array "
    "records instead."
)
_DELAY_NEEDS_ASYNCIO: Final = (
    "A record's non-zero `delay` needs asyncio: the stream waits in an asyncio task so "
    "that an abort or aclose() can interrupt the wait. Under trio (or outside any task) "
    "replay a fixture without delays."
)


def _asyncio_task(why: str = _SOURCE_NEEDS_ASYNCIO) -> asyncio.Task[object]:
    """The asyncio task running us; ``TypeError`` (saying ``why``) under another event
    loop (trio), or outside any task."""
    loop = _get_running_loop()
    task = None if loop is None else _task_of(loop)
    if task is None:
        raise TypeError(why)
    return task


class CourseModelStream:
    """Single-consumer async iterator of chunks; ``await result()`` gives the response.

    ``async for chunk in stream`` yields every chunk in record order, then ends, or
    raises the stream's ``FixtureProviderError`` after the chunks produced before
    it. ``await stream.result()`` drives the response to its end without consuming
    chunks, and returns the response or raises that same error. ``aclose()`` (or
    leaving ``async with``) stops the stream early and releases its source.
    """

    __slots__ = (
        "_barrier",
        "_consumer",
        "_delay_at",
        "_delays",
        "_driver",
        "_interrupting",
        "_next_delay",
        "_next_turn",
        "_outcome",
        "_parser",
        "_pending",
        "_position",
        "_records",
        "_response_index",
        "_signal",
        "_source",
        "_source_waits",
        "_waiters",
    )

    def __init__(
        self,
        *,
        request_id: str,
        response_index: int | None,
        records: tuple[object, ...] = (),
        delays: tuple[int | float, ...] | None = None,
        source: SourceFeed | None = None,
        signal: AbortSignal | None = None,
        outcome: FixtureProviderError | None = None,
        version: int = 1,
    ) -> None:
        self._response_index = response_index
        # A stream that failed at the call (aborted, exhausted) has no response to parse.
        self._parser = ResponseParser(
            request_id, -1 if response_index is None else response_index, version
        )
        self._records = records
        # How many records were read, from the tuple or the source.
        self._position = 0
        self._source = source
        self._signal = signal
        self._outcome: CourseModelResponse | FixtureProviderError | None = outcome
        # Chunks ``result()`` passed, for the consumer: made at the first one (few streams
        # have any), as ``_waiters`` is, so a stream leaves fewer objects to the collector.
        self._pending: deque[CourseModelChunk] | None = None
        self._consumer = False
        # The record count at which the event loop's next turn is due.
        self._next_turn = TURN_EVERY
        # Version 2: each array record's delay, the positions of those that wait, and
        # the index in ``_delay_at`` of the next one to wait for.
        self._delays = delays
        self._next_delay = 0
        # Where the fast path stops: the next turn, or the next record that waits.
        self._barrier = TURN_EVERY
        if delays is None:
            self._delay_at: tuple[int, ...] = ()
        else:
            self._delay_at = tuple([i for i, delay in enumerate(delays) if delay])
            self._update_barrier()
        # Whether a source's records are waited for (their delays are read as they come).
        self._source_waits = version >= 2 and source is not None
        self._driver: asyncio.Task[object] | None = None
        # Set once the pending step's driver was cancelled to interrupt it.
        self._interrupting = False
        self._waiters: list[asyncio.Future[None]] | None = None

    def __repr__(self) -> str:
        if self._outcome is None:
            state = "streaming"
        elif type(self._outcome) is FixtureProviderError:
            state = f"failed {self._outcome.code.value}"
        else:
            state = "complete"
        return f"<CourseModelStream response_index={self._response_index} {state}>"

    @property
    def response_id(self) -> str | None:
        """The response's id once its ``response_start`` was read (``None`` before).

        So a renderer can open its wire format before the first chunk.
        """
        return self._parser.response_id

    @property
    def model(self) -> str | None:
        """The model that answered, from ``response_start`` once it was read (schema
        version 2; ``None`` before, or when the fixture does not say)."""
        return self._parser.model

    @property
    def start_usage(self) -> CourseModelUsage | None:
        """The usage ``response_start`` reported, once it was read (schema version 2;
        ``None`` before, or when it has none)."""
        return self._parser.start_usage

    def _argument_fragments(self, call_id: str) -> tuple[str, ...] | None:
        """Internal API for ``course.vendors`` (serve, schema version 2): the
        ``argumentFragments`` of the tool call ``call_id`` (complete or cut) once its
        record was read, so that a renderer streams one argument delta per fragment;
        ``None`` when it had none."""
        return self._parser.argument_fragments(call_id)

    def _without_delays(self) -> CourseModelStream:
        """Internal API for checks that must never sleep (``course-fixture validate``,
        ``replay --no-delay``, ``course.faults``, ``course.script``, the pytest plugin):
        judge every record, its ``delay`` included, without waiting. Call it before the
        first step; returns the stream."""
        self._delay_at = ()
        self._source_waits = False
        self._update_barrier()
        return self

    async def _until_start(self) -> None:
        """Internal API for ``course.vendors`` (serve, schema version 2): drive the
        stream until its ``response_start`` was read (``response_id`` is set) or it
        settled, so that a renderer can open its wire format before a later ``delay``.
        Like ``result()``, not a consumer: chunks passed on the way stay queued."""
        source = self._source
        while self._outcome is None and self._parser.response_id is None:
            if source is None:
                chunk = await self._step_records()
            else:
                chunk = await self._step_source(source)
            if chunk is not None:
                self._keep(chunk)

    @property
    def _settled(self) -> bool:
        # Internal API for ``course.pytest_plugin``: whether the stream has its outcome
        # (complete, failed, aborted or closed), so the plugin can name the streams a
        # test took but neither read to their end nor closed.
        return self._outcome is not None

    # -- consuming ----------------------------------------------------------------------

    def __aiter__(self) -> CourseModelStream:
        if self._consumer:
            raise FixtureProviderError(
                Code.PROVIDER_STREAM_CONSUMED,
                "This stream already has a consumer; a stream's chunks can be iterated once",
                response_index=self._response_index,
            )
        self._consumer = True
        return self

    async def __anext__(self) -> CourseModelChunk:
        if (
            self._outcome is None
            and self._source is None
            and self._position < self._barrier
            and not self._pending
            and (self._signal is None or not self._signal._aborted)
        ):
            # The common case, array records with nothing queued, aborted or due: one
            # call less per chunk than the loop below.
            chunk = self._feed_records()
            if chunk is not None:
                return chunk
        while True:
            if self._pending:
                return self._pending.popleft()
            outcome = self._outcome
            if outcome is not None:
                if type(outcome) is FixtureProviderError:
                    # The same error each time; a fresh traceback keeps repeats from
                    # growing it.
                    raise outcome.with_traceback(None)
                raise StopAsyncIteration
            source = self._source
            chunk = await (self._step_records() if source is None else self._step_source(source))
            if chunk is not None:
                return chunk

    async def result(self) -> CourseModelResponse:
        """Drive the response to its end and return it, or raise its error.

        Chunks passed on the way stay queued for the consumer. Always gives the event
        loop a turn before it returns.
        """
        signal = self._signal
        source = self._source
        while self._outcome is None:
            if (
                source is None
                and self._position < self._barrier
                and (signal is None or not signal._aborted)
            ):
                chunk = self._feed_records()  # as in __anext__: no coroutine per chunk
            elif source is None:
                chunk = await self._step_records()
            else:
                chunk = await self._step_source(source)
            if chunk is not None:
                self._keep(chunk)
        await _checkpoint()
        outcome = self._outcome
        if type(outcome) is FixtureProviderError:
            raise outcome.with_traceback(None)
        return outcome  # type: ignore[return-value]

    def _keep(self, chunk: CourseModelChunk) -> None:
        """Queue a chunk passed on the way for the consumer (``result()``, ``_until_start``)."""
        if self._pending is None:
            self._pending = deque()
        self._pending.append(chunk)

    async def aclose(self) -> None:
        """Stop early: an unfinished stream settles as ``PROVIDER_ABORTED``.

        A complete stream keeps its response and a failed one its error. The source,
        if unfinished, is asked to clean up before this returns. Idempotent.
        """
        if self._outcome is None:
            self._settle(self._aborted("The stream was closed before its terminal"))
        while self._driver is not None:
            # A step is in flight in another task: it is interrupted, then cleans up.
            await self._wait_for_driver()
        if self._source is not None:
            await self._source.release()

    async def __aenter__(self) -> CourseModelStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- stepping: array records ---------------------------------------------------------

    async def _step_records(self) -> CourseModelChunk | None:
        """One step over array records: a chunk, or ``None`` to look at the stream again."""
        signal = self._signal
        if signal is not None and signal._aborted:
            self._settle(self._aborted_by_signal(signal))
        elif self._position >= self._next_turn:
            await self._turn()
        elif self._position >= self._barrier:  # the next record waits first
            delays = self._delays
            assert delays is not None  # a barrier before the turn is a delayed record
            if await self._wait(delays[self._position]):
                self._next_delay += 1
                self._update_barrier()
                return self._feed_records()
        else:
            return self._feed_records()
        return None

    def _feed_records(self) -> CourseModelChunk | None:
        """Feed array records until a chunk comes (returned), they end, or a turn is due."""
        records = self._records
        parser = self._parser
        position = self._position
        stop = self._barrier
        if stop > len(records):  # noqa: PLR1730  (a comparison costs less than min())
            stop = len(records)
        try:
            while position < stop:
                chunk = parser.feed(records[position], position)
                position += 1
                if chunk is not None:
                    return chunk
            if position == len(records):
                self._settle(parser.finish())
        except FixtureProviderError as error:
            self._settle(error)
        finally:
            self._position = position
        return None

    def _update_barrier(self) -> None:
        barrier = self._next_turn
        delay_at, next_delay = self._delay_at, self._next_delay
        if next_delay < len(delay_at) and delay_at[next_delay] < barrier:
            barrier = delay_at[next_delay]
        self._barrier = barrier

    async def _turn(self) -> None:
        self._next_turn = self._position + TURN_EVERY
        self._update_barrier()
        try:
            await _checkpoint()
        except BaseException as exc:
            # Interrupted inside the stream's own turn: processing stops here.
            await self._stop_for(exc)
            raise

    # -- stepping: an async source ----------------------------------------------------------

    async def _step_source(self, source: SourceFeed) -> CourseModelChunk | None:
        """One step over the source: pull one record, or wait for the task pulling one."""
        signal = self._signal
        if signal is not None and signal._aborted:
            self._settle(self._aborted_by_signal(signal))
            await source.release()
            return None
        # ``_asyncio_task()`` inline: a call less per record.
        loop = _get_running_loop()
        task = None if loop is None else _task_of(loop)
        if task is None:
            raise TypeError(_SOURCE_NEEDS_ASYNCIO)
        if self._driver is not None:
            await self._follow_driver(task, source)
            return None
        if self._position >= self._next_turn:
            await self._turn()
            return None
        cancelling = task.cancelling()
        self._driver = task
        self._interrupting = False
        if signal is not None:
            signal._subscribe(self._on_abort)
        record: object
        try:
            record = source.pull()
            if type(record) is _COROUTINE:  # the step waits: awaited in this frame
                record = await record
        except FixtureProviderError as error:  # the source failed, or gave a bad record
            record = error
        except BaseException as exc:  # judged once the step is over
            self._end_step(task, signal)
            await self._interrupted(exc, task, cancelling, source)
            return None
        self._end_step(task, signal)
        if type(record) is FixtureProviderError:
            self._settle(record)
        elif self._outcome is None:
            try:
                if record is END:
                    self._settle(self._parser.finish())
                    return None
                delay = delay_of(record) if self._source_waits else 0
                if delay and not await self._wait(delay):
                    await source.release()  # settled while it waited
                    return None
                index = self._position
                self._position = index + 1
                return self._parser.feed(record, index)
            except FixtureProviderError as error:
                self._settle(error)
        # Settled: by this step's error, or while the step was pending.
        await source.release()
        return None

    async def _follow_driver(self, task: asyncio.Task[object], source: SourceFeed) -> None:
        """Another step is in flight: wait for it, unless it is this task's own."""
        if self._driver is task:
            # The source's own step awaits the stream it feeds: waiting here for that
            # step would never end. It fails the stream instead.
            error = source.reentered()
            self._settle(error)
            raise error
        await self._wait_for_driver()

    def _end_step(self, task: asyncio.Task[object], signal: AbortSignal | None) -> None:
        """The step is over, however it ended."""
        self._driver = None
        if signal is not None:
            signal._unsubscribe(self._on_abort)
        if self._interrupting:
            # Take back the cancellation we requested, so the consumer's task is left
            # exactly as it was (its TaskGroups and timeouts).
            task.uncancel()
        if self._waiters:
            self._wake_waiters()

    async def _interrupted(
        self,
        interruption: BaseException,
        task: asyncio.Task[object],
        cancelling: int,
        source: SourceFeed,
    ) -> None:
        """Judge what interrupted a source's step: raise it, or settle the stream."""
        if not isinstance(interruption, asyncio.CancelledError) or (
            task.cancelling() > cancelling  # someone cancelled the consumer's task
        ):
            # The consumer's coroutine was closed, or its task cancelled.
            await self._stop_for(interruption)
            raise interruption
        if not self._interrupting:  # not ours: the source raised it on its own
            self._settle(source.failed("while producing a record", interruption))
        await source.release()

    # -- stepping: a delay -----------------------------------------------------------------

    async def _wait(self, delay: float) -> bool:
        """Wait ``delay`` seconds before the next record is judged, as a step: ``True``
        once waited, ``False`` to look at the stream again (it settled meanwhile, or
        another task's step was in flight). Never polls: one timer, raced with the
        stream's settling as a source's step is."""
        signal = self._signal
        if signal is not None and signal._aborted:
            self._settle(self._aborted_by_signal(signal))
            return False
        task = _asyncio_task(_DELAY_NEEDS_ASYNCIO)
        if self._driver is not None:
            await self._wait_for_driver()
            return False
        cancelling = task.cancelling()
        self._driver = task
        self._interrupting = False
        if signal is not None:
            signal._subscribe(self._on_abort)
        interruption: BaseException | None = None
        try:
            await asyncio.sleep(delay)
        except BaseException as exc:  # judged below, once the wait is over
            interruption = exc
        self._driver = None
        if signal is not None:
            signal._unsubscribe(self._on_abort)
        if self._interrupting:
            task.uncancel()  # ours: leave the consumer's task as it was
        if self._waiters:
            self._wake_waiters()
        if interruption is not None and (not self._interrupting or task.cancelling() > cancelling):
            # The consumer's coroutine was closed, or its task cancelled (a timeout
            # too): processing stops here.
            await self._stop_for(interruption)
            raise interruption
        return self._outcome is None

    async def _stop_for(self, interruption: BaseException) -> None:
        """The consumer was interrupted inside a step: settle, and let the source go.

        A closing coroutine (``GeneratorExit``) may not await: the source's cleanup
        is scheduled on its event loop instead.
        """
        if isinstance(interruption, GeneratorExit):
            who = "The coroutine consuming the stream was closed"
        else:
            who = "The task consuming the stream was cancelled"
        self._settle(self._aborted(f"{who} before the stream's terminal"))
        source = self._source
        if source is None or self._driver is not None:
            return
        if isinstance(interruption, GeneratorExit):
            source.release_soon()
        else:
            await source.release()

    # -- settling -----------------------------------------------------------------------

    def _settle(self, outcome: CourseModelResponse | FixtureProviderError) -> None:
        """Set the outcome, once; wake the waiters and interrupt a pending source step."""
        if self._outcome is not None:
            return
        self._outcome = outcome
        driver = self._driver
        if driver is not None:
            self._wake_waiters()
            loop = driver.get_loop()
            if not loop.is_closed():
                # From the loop, never from inside a running task: the cancellation
                # then always lands in the pending step (see asyncio.timeout).
                loop.call_soon(self._cancel_driver)

    def _on_abort(self) -> None:
        # Subscribed while a source step is pending.
        self._settle(self._aborted_by_signal(self._signal))  # type: ignore[arg-type]

    def _cancel_driver(self) -> None:
        if self._driver is not None and not self._interrupting:
            self._interrupting = True
            self._driver.cancel()

    async def _wait_for_driver(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        await waiter

    def _wake_waiters(self) -> None:
        waiters, self._waiters = self._waiters or (), None
        for waiter in waiters:
            # A waiter whose loop was closed is gone: resolving it would raise.
            if not waiter.done() and not waiter.get_loop().is_closed():
                waiter.set_result(None)

    def _aborted_by_signal(self, signal: AbortSignal) -> FixtureProviderError:
        why = describe_reason(signal)
        return self._aborted(f"The signal was aborted before the stream's terminal{why}")

    def _aborted(self, message: str) -> FixtureProviderError:
        return FixtureProviderError(
            Code.PROVIDER_ABORTED, message, response_index=self._response_index
        )
