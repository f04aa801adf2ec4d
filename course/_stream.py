"""``CourseModelStream``: one response's chunks, then its one terminal outcome.

The stream is a small settle-once state machine. Until it settles, each step feeds
records to the parser until one gives a chunk (array records), or pulls one record
(an async source, one step of it at a time). It
settles exactly once, with the response or with an error, and then only repeats
that outcome: it never resumes the source.

Chunks go straight to the consumer as their records are read. ``result()`` may drive
the response ahead of the consumer; the chunks it passes are kept, in order, until
the consumer takes them, so nothing proven is ever lost.

A source step runs in the task that asked for it (the *driver*). An abort, or
``aclose()``, while that step is pending settles the stream at once, so every other
waiter sees ``PROVIDER_ABORTED`` immediately, and interrupts the step the way
``asyncio.timeout()`` does: it cancels the driver from the event loop, and turns the
``CancelledError`` it caused back into the abort when it arrives.
"""

from __future__ import annotations

import asyncio
from collections import deque
from types import TracebackType

from ._abort import AbortSignal, describe_reason
from ._errors import FixtureProviderError, FixtureProviderErrorCode
from ._model import CourseModelChunk, CourseModelResponse
from ._parser import ResponseParser
from ._source import END, PASS_THROUGH, SourceFeed

__all__ = ["CourseModelStream"]

Code = FixtureProviderErrorCode


class CourseModelStream:
    """Single-consumer async iterator of chunks; ``await result()`` gives the response.

    ``async for chunk in stream`` yields every chunk in record order, then ends, or
    raises the stream's ``FixtureProviderError`` after the chunks produced before
    it. ``await stream.result()`` drives the response to its end without consuming
    chunks, and returns the response or raises that same error. ``aclose()`` (or
    leaving ``async with``) stops the stream early and releases its source.
    """

    __slots__ = (
        "_consumer",
        "_driver",
        "_interrupting",
        "_outcome",
        "_parser",
        "_pending",
        "_position",
        "_records",
        "_response_index",
        "_signal",
        "_source",
        "_waiters",
    )

    def __init__(
        self,
        *,
        request_id: str,
        response_index: int | None,
        records: tuple[object, ...] = (),
        source: SourceFeed | None = None,
        signal: AbortSignal | None = None,
        outcome: FixtureProviderError | None = None,
    ) -> None:
        self._response_index = response_index
        # A stream that failed at the call (aborted, exhausted) has no response to parse.
        self._parser = ResponseParser(request_id, -1 if response_index is None else response_index)
        self._records = records
        self._position = 0
        self._source = source
        self._signal = signal
        self._outcome: CourseModelResponse | FixtureProviderError | None = outcome
        self._pending: deque[CourseModelChunk] = deque()
        self._consumer = False
        # The task awaiting a source step, if any; other callers wait in ``_waiters``.
        self._driver: asyncio.Task[object] | None = None
        self._waiters: list[asyncio.Future[None]] = []
        # Set once the driver was cancelled to interrupt its step.
        self._interrupting = False

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
            self._source is None
            and self._outcome is None
            and not self._pending
            and (self._signal is None or not self._signal.aborted)
        ):
            # The common case, array records with nothing queued or aborted: one
            # call less per chunk than the general loop below.
            chunk = self._pull_records()
            if chunk is not None:
                return chunk
        while True:
            if self._outcome is None and self._signal is not None and self._signal.aborted:
                await self._stop(self._aborted_error())
            if self._pending:
                return self._pending.popleft()
            outcome = self._outcome
            if outcome is not None:
                if type(outcome) is FixtureProviderError:
                    # The same error each time; a fresh traceback keeps repeats from
                    # growing it.
                    raise outcome.with_traceback(None)
                raise StopAsyncIteration
            chunk = await self._pull() if self._source is not None else self._pull_records()
            if chunk is not None:
                return chunk

    async def result(self) -> CourseModelResponse:
        """Drive the response to its end and return it, or raise its error.

        Chunks passed on the way stay queued for the consumer.
        """
        while self._outcome is None:
            if self._signal is not None and self._signal.aborted:
                await self._stop(self._aborted_error())
                break
            chunk = await self._pull() if self._source is not None else self._pull_records()
            if chunk is not None:
                self._pending.append(chunk)
        outcome = self._outcome
        if type(outcome) is FixtureProviderError:
            raise outcome.with_traceback(None)
        return outcome  # type: ignore[return-value]

    async def aclose(self) -> None:
        """Stop early: an unfinished stream settles as ``PROVIDER_ABORTED``.

        A complete stream keeps its response and a failed one its error. The source,
        if unfinished, is asked to clean up before this returns. Idempotent.
        """
        if self._outcome is None:
            self._interrupt(
                FixtureProviderError(
                    Code.PROVIDER_ABORTED,
                    "The stream was closed before its terminal",
                    response_index=self._response_index,
                )
            )
        while self._driver is not None:
            # A step is in flight in another task: it is interrupted, then cleans up.
            await self._wait_for_driver()
        await self._release()

    async def __aenter__(self) -> CourseModelStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- driving ------------------------------------------------------------------------

    def _pull_records(self) -> CourseModelChunk | None:
        """Array records: advance until a chunk comes (returned) or the stream settles."""
        records = self._records
        parser = self._parser
        position = self._position
        try:
            while position < len(records):
                chunk = parser.feed(records[position], position)
                position += 1
                if chunk is not None:
                    return chunk
            self._settle(parser.finish())
        except FixtureProviderError as error:
            self._settle(error)
        finally:
            self._position = position
        return None

    async def _pull(self) -> CourseModelChunk | None:
        """Source records: one step; a chunk, or ``None`` to look at the stream again."""
        if self._driver is not None:
            await self._wait_for_driver()
            return None
        source: SourceFeed = self._source  # type: ignore[assignment]
        task: asyncio.Task[object] = asyncio.current_task()  # type: ignore[assignment]
        cancelling = task.cancelling()
        self._driver = task
        self._interrupting = False
        if self._signal is not None:
            self._signal._subscribe(self._on_abort)
        failure: BaseException | None = None
        try:
            # One step of the source, awaited in this frame: a coroutine less per record.
            record = source.start_step()
            if record is not END:
                try:
                    record = await record  # type: ignore[misc]
                except StopAsyncIteration:
                    record = source.exhausted()
                except PASS_THROUGH:
                    raise
                except BaseException as exc:
                    raise source.failed("while producing a record", exc) from exc
                else:
                    record = source.accept(record)
        except BaseException as exc:  # judged below, once our own request is undone
            record = None
            failure = exc
        if self._interrupting:
            # Undo the cancellation we requested, however the step ended, so the
            # consumer's task is left exactly as it was (its TaskGroups and timeouts).
            task.uncancel()
        if failure is not None:
            if type(failure) is FixtureProviderError:
                self._settle(failure)
            elif isinstance(failure, asyncio.CancelledError):
                if task.cancelling() > cancelling:  # someone cancelled the consumer
                    self._settle(self._cancelled_error())
                    await self._end_drive_and_release()
                    raise failure
                if not self._interrupting:  # the source raised it on its own
                    self._settle(source.failed("while producing a record", failure))
            else:  # KeyboardInterrupt, SystemExit: no more of the source's code now
                self._settle(self._cancelled_error())
                self._end_drive()
                raise failure
        if self._outcome is not None:
            await self._end_drive_and_release()
            return None
        self._end_drive()
        try:
            if record is END:
                self._settle(self._parser.finish())
                return None
            return self._parser.feed(record, source.records_read - 1)
        except FixtureProviderError as error:
            await self._stop(error)
        return None

    def _on_abort(self) -> None:
        if self._outcome is None:
            self._interrupt(self._aborted_error())

    def _interrupt(self, error: FixtureProviderError) -> None:
        """Settle at once; if a source step is pending, interrupt it."""
        self._settle(error)
        self._wake_waiters()
        if self._driver is not None:
            # From the loop, never from inside a running task: the cancellation then
            # always lands in the pending step (see asyncio.timeout).
            self._driver.get_loop().call_soon(self._cancel_driver)

    def _cancel_driver(self) -> None:
        if self._driver is not None and not self._interrupting:
            self._interrupting = True
            self._driver.cancel()

    async def _wait_for_driver(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

    def _wake_waiters(self) -> None:
        if not self._waiters:
            return
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _end_drive(self) -> None:
        if self._signal is not None:
            self._signal._unsubscribe(self._on_abort)
        self._driver = None
        self._wake_waiters()

    async def _end_drive_and_release(self) -> None:
        self._end_drive()
        await self._release()

    def _aborted_error(self) -> FixtureProviderError:
        why = "" if self._signal is None else describe_reason(self._signal)
        return FixtureProviderError(
            Code.PROVIDER_ABORTED,
            f"The signal was aborted before the stream's terminal{why}",
            response_index=self._response_index,
        )

    def _cancelled_error(self) -> FixtureProviderError:
        return FixtureProviderError(
            Code.PROVIDER_ABORTED,
            "The task consuming the stream was cancelled before the stream's terminal",
            response_index=self._response_index,
        )

    def _settle(self, outcome: CourseModelResponse | FixtureProviderError) -> None:
        if self._outcome is None:
            self._outcome = outcome

    async def _stop(self, error: FixtureProviderError) -> None:
        self._settle(error)
        await self._release()

    async def _release(self) -> None:
        # A step in flight belongs to its driver, which releases the source after it.
        if self._source is not None and self._driver is None:
            await self._source.release()
