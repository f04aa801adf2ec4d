"""Async record sources: untrusted code that yields records.

A source is judged by where an error comes from, never by its type: anything the
source's code raises (a forged ``FixtureProviderError`` included) becomes
``PROVIDER_INVALID_FIXTURE`` chained to the original, ``KeyboardInterrupt`` and
``SystemExit`` included (the SPEC: never passed through). Only ``CancelledError`` is
left for the stream to judge, since only the stream knows whether it asked for it. (The
stream also judges what an awaited step raises: a ``GeneratorExit`` thrown into its
consumer is not the source's doing.)

Each step is awaited in the consumer's own task, exactly as ``async for`` over the
source would be, so the source's ``asyncio.timeout()``, context variables and
``current_task()`` behave as its author expects, and a step that completes at once
costs no event-loop turn.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import AsyncIterator, Coroutine, Generator
from typing import Final

from ._errors import FixtureProviderError, FixtureProviderErrorCode, pointer
from ._parser import freeze_record
from ._text import shorten
from ._untrusted import MISSING, has_type_attribute, type_attribute, type_name

__all__ = ["END", "PendingStep", "SourceFeed", "is_async_source"]

# Cleanups scheduled by ``release_soon``: the loop keeps only weak references to tasks.
_cleanups: set[asyncio.Task[None]] = set()

END: Final = object()
"""What ``SourceFeed.pull`` gives once the source is done."""

_PASS_THROUGH: Final = (asyncio.CancelledError,)
"""What a source may raise and is not turned into ``PROVIDER_INVALID_FIXTURE``:
cancellation, which the stream judges."""


class PendingStep:
    """Awaits an async generator's step that did not finish at once.

    Like ``await step``, but when the awaiting coroutine is closed (``GeneratorExit``)
    it leaves the step pending and hands it to the feed instead of closing it: CPython
    3.11 closes a generator's step without clearing the generator's "running" flag, so
    that nothing could ever close the generator afterwards and its ``finally`` blocks
    would never run. The feed's cleanup ends the step, then closes the generator.
    """

    __slots__ = ("_feed", "_step", "_waiting")

    def __init__(
        self, feed: SourceFeed, step: Coroutine[object, object, object], waiting: object
    ) -> None:
        self._feed = feed
        self._step = step
        self._waiting = waiting  # what the step yielded: the future it waits on

    def __await__(self) -> Generator[object, object, object]:
        step, waiting = self._step, self._waiting
        while True:
            try:
                sent = yield waiting
            except GeneratorExit:
                self._feed._held = step
                raise
            except BaseException as exc:  # a cancellation, say: the step judges it
                try:
                    waiting = step.throw(exc)
                except StopIteration as done:
                    return done.value
                continue
            try:
                waiting = step.send(sent)
            except StopIteration as done:
                return done.value


def is_async_source(value: object) -> bool:
    """Whether ``value``'s type defines ``__aiter__`` (never asking the instance)."""
    return has_type_attribute(type(value), "__aiter__")


async def _generator() -> AsyncIterator[None]:
    yield None


def _step_type() -> type:
    step = _generator().__anext__()
    step.close()  # type: ignore[attr-defined]
    return type(step)


# What ``__anext__`` of async generators and coroutine methods returns: awaitable.
_COROUTINE: Final = types.CoroutineType
GENERATOR_STEP: Final = _step_type()
"""The type of an async generator's ``__anext__()`` step."""


def _thrown_in(exc: GeneratorExit) -> bool:
    """Whether ``exc`` was thrown into the consumer rather than raised by the source.

    Closing a coroutine first closes the awaitable it waits on, then raises a fresh
    ``GeneratorExit`` at its ``await``: no frame below ours is in the traceback. One
    the source's own code raised passed through the source's frames.
    """
    traceback = exc.__traceback__
    return traceback is None or traceback.tb_next is None


def _text(exc: BaseException) -> str:
    """``str(exc)``, which is the source's own code and may itself fail."""
    try:
        return str.__str__(str(exc))
    except BaseException:  # even KeyboardInterrupt: the source's code raised it
        return "<unprintable>"


class SourceFeed:
    """Pulls records from one async source, one step at a time, as the stream asks."""

    __slots__ = (
        "_cleanup",
        "_done",
        "_held",
        "_index",
        "_iterator",
        "_loop",
        "_response_index",
        "_source",
    )

    def __init__(self, source: object, response_index: int) -> None:
        self._source = source
        self._response_index = response_index
        self._iterator: AsyncIterator[object] | None = None
        # The event loop that claimed the source, where its cleanup belongs.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._index = 0
        # Set once the source is exhausted or its cleanup began: it needs none (again).
        self._done = False
        # Resolved when cleanup has finished, for callers that come while it runs.
        self._cleanup: asyncio.Future[None] | None = None
        # A generator's step left pending by a consumer that was closed (``PendingStep``).
        self._held: Coroutine[object, object, object] | None = None

    def _invalid(self, message: str, cause: BaseException | None = None) -> FixtureProviderError:
        error = FixtureProviderError(
            FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE,
            message,
            response_index=self._response_index,
            record_index=self._index,
            path=pointer("responses", self._response_index, "records"),
        )
        error.__cause__ = cause
        return error

    def failed(self, what: str, exc: BaseException) -> FixtureProviderError:
        """The error for an exception the source's code raised ``what``."""
        return self._invalid(
            f"The async record source failed {what}: {type_name(exc)}: {shorten(_text(exc), 500)}",
            exc,
        )

    def reentered(self) -> FixtureProviderError:
        """The error for a step that awaits the stream it feeds (which waits for it)."""
        return self._invalid(
            "The async record source awaited its own stream from inside a step; the "
            "stream waits for that step, so neither could ever finish"
        )

    def pull(self) -> object:
        """Claim the source if need be and start its next step, in the caller's frame.

        Returns the frozen record when the step finished at once (most do), ``END``
        once the source is done, or a coroutine to await in the caller's task, which
        gives one of those two. Anything the source's code raises (and a bad record)
        is ``FixtureProviderError``; ``CancelledError`` passes, for the stream to judge.
        """
        if self._iterator is None:
            self._claim()
        try:
            # The type's slot, as ``async for`` uses it: no metaclass is asked.
            step = anext(self._iterator)  # type: ignore[arg-type]
        except StopAsyncIteration:
            self._done = True
            return END
        except _PASS_THROUGH:
            raise
        except BaseException as exc:
            raise self.failed("in __anext__", exc) from exc
        if type(step) is not GENERATOR_STEP:
            return self._finish(self._awaitable(step))
        try:
            # Started here: one that waits is awaited through ``PendingStep``, so that
            # closing the consumer cannot strand the generator.
            waiting = step.send(None)  # type: ignore[attr-defined]
        except StopIteration as done:
            # ``_accept`` inline: a call less per record.
            index = self._index
            self._index = index + 1
            return freeze_record(done.value, self._response_index, index)
        except StopAsyncIteration:
            self._done = True
            return END
        except _PASS_THROUGH:
            raise
        except BaseException as exc:  # even a GeneratorExit: nothing was thrown in yet
            raise self.failed("while producing a record", exc) from exc
        return self._finish(PendingStep(self, step, waiting))  # type: ignore[arg-type]

    def _claim(self) -> None:
        """Take the source's iterator, once, on the event loop that will clean it up."""
        try:
            iterator: AsyncIterator[object] = aiter(self._source)  # type: ignore[arg-type]
        except _PASS_THROUGH:
            raise
        except BaseException as exc:
            self._done = True
            raise self.failed("in __aiter__", exc) from exc
        self._iterator = iterator
        self._loop = asyncio.get_running_loop()

    def _awaitable(self, step: object) -> object:
        """``step``, a step that is not an async generator's, if it can be awaited."""
        kind = type(step)
        if kind is not _COROUTINE and not has_type_attribute(kind, "__await__"):
            raise self._invalid(
                f"The async record source's __anext__ returned {type_name(step)}, "
                "which is not awaitable"
            )
        return step

    async def _finish(self, step: object) -> object:
        """Await a step that did not finish at once: its frozen record, or ``END``."""
        try:
            record = await step  # type: ignore[misc]
        except StopAsyncIteration:
            self._done = True
            return END
        except GeneratorExit as exc:
            if _thrown_in(exc):
                raise
            raise self.failed("while producing a record", exc) from exc
        except _PASS_THROUGH:
            raise
        except BaseException as exc:
            raise self.failed("while producing a record", exc) from exc
        return self._accept(record)

    def _accept(self, record: object) -> object:
        """The frozen copy of the record a step gave."""
        index = self._index
        self._index = index + 1
        # Parsed at once, never queued: packing would only cost time.
        return freeze_record(record, self._response_index, index)

    async def release(self) -> None:
        """Ask an unfinished source to clean up (``aclose()``), once; never raise.

        A caller that comes while the cleanup runs waits for it to finish.
        """
        if self._cleanup is not None:
            if not self._cleanup.done():
                await asyncio.wait((self._cleanup,))
            return
        was_done, self._done = self._done, True
        if was_done or self._iterator is None:
            return
        self._cleanup = asyncio.get_running_loop().create_future()
        try:
            if self._held is not None:
                await self._finish_held()
            await self._aclose(self._iterator)
        finally:
            self._cleanup.set_result(None)

    async def _finish_held(self) -> None:
        """End a held step as cancelling its task would have: ``CancelledError`` in it."""
        step, self._held = self._held, None
        try:
            waiting = step.throw(asyncio.CancelledError())  # type: ignore[union-attr]
            await PendingStep(self, step, waiting)  # type: ignore[arg-type]
        except BaseException:  # its end, however it ends: only its cleanup matters now
            pass

    def release_soon(self) -> None:
        """Schedule ``release()`` on the source's event loop; for a caller that may not
        await (a coroutine being closed). Skipped once that loop is closed."""
        loop = self._loop
        if self._done or self._cleanup is not None or loop is None or loop.is_closed():
            return
        cleanup = loop.create_task(self.release())
        _cleanups.add(cleanup)
        cleanup.add_done_callback(_cleanups.discard)

    @staticmethod
    async def _aclose(iterator: object) -> None:
        aclose = type_attribute(type(iterator), "aclose")
        if aclose is MISSING:
            return
        try:
            closing = aclose.__get__(iterator)()  # type: ignore[attr-defined]
            if has_type_attribute(type(closing), "__await__"):
                await closing
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
        except BaseException:
            # A failing cleanup never replaces the error that caused it.
            pass
