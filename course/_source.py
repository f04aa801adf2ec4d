"""Async record sources: untrusted code that yields records.

A source is judged by where an error comes from, never by its type: anything the
source's code raises (a forged ``FixtureProviderError`` included) becomes
``PROVIDER_INVALID_FIXTURE`` chained to the original. Each step is raced with the
stream's signals, so an abort settles the stream even while the source is blocked,
and whenever processing stops early the source is asked to clean up, once.
"""

from __future__ import annotations

import asyncio
import inspect
import types
from collections.abc import AsyncIterator, Awaitable, Coroutine, Generator
from typing import Final

from ._abort import AbortSignal
from ._errors import FixtureProviderError, FixtureProviderErrorCode, pointer
from ._json import JsonValue, freeze, type_name

__all__ = ["END", "Interrupted", "SourceFeed", "is_async_source"]

END: Final = object()
"""What ``SourceFeed.next`` returns once the source is exhausted."""


class Interrupted(Exception):
    """A signal fired while a step of the source was pending."""


def is_async_source(value: object) -> bool:
    """Whether ``value``'s type defines ``__aiter__`` (never asking the instance)."""
    try:
        inspect.getattr_static(type(value), "__aiter__")
    except AttributeError:
        return False
    return True


def _is_awaitable_type(kind: type) -> bool:
    try:
        inspect.getattr_static(kind, "__await__")
    except AttributeError:
        return False
    return True


async def _generator() -> AsyncIterator[None]:
    yield None


def _step_type() -> type:
    step = _generator().__anext__()
    step.close()  # type: ignore[attr-defined]
    return type(step)


# Steps of async generators and coroutines: awaitable, and driven with ``send`` directly.
_SENDABLE_STEPS: Final = frozenset({types.CoroutineType, _step_type()})


def _text(exc: BaseException) -> str:
    """``str(exc)``, which is the source's own code and may itself fail."""
    try:
        return str(exc)
    except Exception:
        return "<unprintable>"


async def _await(step: Awaitable[object]) -> object:
    return await step


class _Resumed:
    """Hands a coroutine that already ran up to its first suspension over to a Task.

    Why: most sources produce a record without ever suspending. Running the first
    ``send`` inline gives those records at the cost of a function call; only a step
    that really waits pays for a Task to race it against the signals.
    """

    __slots__ = ("_coro", "_yielded")

    def __init__(self, coro: Coroutine[object, object, object], yielded: object) -> None:
        self._coro = coro
        self._yielded = yielded

    def __await__(self) -> Generator[object, object, object]:
        coro, yielded = self._coro, self._yielded
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # thrown in by the Task, e.g. CancelledError
                try:
                    yielded = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    yielded = coro.send(sent)
                except StopIteration as stop:
                    return stop.value


async def _resume(resumed: _Resumed) -> object:
    return await resumed


class SourceFeed:
    """Pulls records from one async source, one step at a time, as the stream asks."""

    __slots__ = ("_anext", "_done", "_index", "_iterator", "_response_index", "_source")

    def __init__(self, source: object, response_index: int) -> None:
        self._source = source
        self._response_index = response_index
        self._iterator: AsyncIterator[object] | None = None
        self._anext: object = None
        self._index = 0
        # Set once the source is exhausted or cleaned up: it is never touched again.
        self._done = False

    @property
    def records_read(self) -> int:
        """How many records the source has given so far."""
        return self._index

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

    def _failed(self, what: str, exc: BaseException) -> FixtureProviderError:
        return self._invalid(
            f"The async record source failed {what}: {type_name(exc)}: {_text(exc)}", exc
        )

    def _claim(self) -> None:
        try:
            iterator: AsyncIterator[object] = aiter(self._source)  # type: ignore[arg-type]
            anext_method = type(iterator).__anext__
        except (Exception, asyncio.CancelledError) as exc:
            self._done = True
            raise self._failed("in __aiter__", exc) from exc
        self._iterator = iterator
        self._anext = anext_method

    async def next(self, signals: tuple[AbortSignal, ...]) -> JsonValue | object:
        """The next record, frozen, or ``END``.

        Raises ``FixtureProviderError`` for a failing source or an unsafe record, and
        ``Interrupted`` if one of ``signals`` fires while the step is pending.
        """
        if self._iterator is None:
            self._claim()
        try:
            step = self._anext(self._iterator)  # type: ignore[operator]
        except StopAsyncIteration:
            self._done = True
            return END
        except (Exception, asyncio.CancelledError) as exc:
            raise self._failed("in __anext__", exc) from exc
        if type(step) in _SENDABLE_STEPS:
            coro = step
        elif _is_awaitable_type(type(step)):
            coro = _await(step)
        else:
            raise self._invalid(
                f"The async record source's __anext__ returned {type_name(step)}, "
                "which is not awaitable"
            )
        record = await self._step(coro, signals)
        if record is END:
            return END
        index = self._index
        self._index = index + 1
        return freeze(record, self._response_index, index, {})

    async def _step(
        self, coro: Coroutine[object, object, object], signals: tuple[AbortSignal, ...]
    ) -> object:
        try:
            yielded = coro.send(None)
        except StopIteration as stop:
            return stop.value
        except StopAsyncIteration:
            self._done = True
            return END
        except (Exception, asyncio.CancelledError) as exc:
            # Raised synchronously by the source's own code: our task was not
            # cancelled here, since nothing suspended.
            raise self._failed("while producing a record", exc) from exc
        return await self._race(coro, yielded, signals)

    async def _race(
        self,
        coro: Coroutine[object, object, object],
        yielded: object,
        signals: tuple[AbortSignal, ...],
    ) -> object:
        loop = asyncio.get_running_loop()
        task = loop.create_task(_resume(_Resumed(coro, yielded)))
        wake: asyncio.Future[None] = loop.create_future()

        def on_wake(*_: object) -> None:
            if not wake.done():
                wake.set_result(None)

        task.add_done_callback(on_wake)
        for signal in signals:
            signal._subscribe(on_wake)
            if signal.aborted:  # fired while the source ran inline, before we listened
                on_wake()
        try:
            await wake
        except asyncio.CancelledError:
            await _stop(task)
            raise
        finally:
            task.remove_done_callback(on_wake)
            for signal in signals:
                signal._unsubscribe(on_wake)
        if not task.done():
            await _stop(task)
            raise Interrupted
        if task.cancelled():
            # Nobody cancelled the step but the source itself.
            raise self._invalid("The async record source raised CancelledError on its own")
        error = task.exception()
        if error is None:
            return task.result()
        if type(error) is StopAsyncIteration:
            self._done = True
            return END
        raise self._failed("while producing a record", error) from error

    async def release(self) -> None:
        """Ask an unfinished source to clean up (``aclose()``), once; never raise."""
        if self._done or self._iterator is None:
            self._done = True
            return
        self._done = True
        try:
            aclose = inspect.getattr_static(type(self._iterator), "aclose")
        except AttributeError:
            return
        try:
            closing = aclose.__get__(self._iterator)()
            if _is_awaitable_type(type(closing)):
                await closing
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
        except Exception:
            # A failing cleanup never replaces the error that caused it.
            pass


async def _stop(task: asyncio.Task[object]) -> None:
    """Cancel a pending step and wait until it has really finished."""
    task.cancel()
    await asyncio.wait((task,))
    if not task.cancelled():
        task.exception()  # retrieved, so asyncio does not log it as never retrieved
