"""Cancellation: ``AbortController`` owns the switch, ``AbortSignal`` is what callers pass.

A signal notifies its waiters through callbacks the moment ``abort()`` is called, so
nothing ever polls it. Like asyncio itself, it is not thread-safe: abort from the
event loop's thread (``loop.call_soon_threadsafe(controller.abort)`` from another).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

__all__ = ["AbortController", "AbortSignal", "describe_reason"]


def describe_reason(signal: AbortSignal) -> str:
    """`` (reason: ...)`` for an error message, or ``""`` if the abort gave none."""
    reason = signal.reason
    return "" if reason is None else f" (reason: {reason!r})"


class AbortSignal:
    """Read-only view of an abort: ``aborted``, ``reason`` and ``await wait()``."""

    __slots__ = ("_aborted", "_callbacks", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._callbacks: list[Callable[[], None]] = []

    @property
    def aborted(self) -> bool:
        """Whether ``abort()`` was called on the controller."""
        return self._aborted

    @property
    def reason(self) -> object:
        """``None`` until aborted, then what the first ``abort()`` was given."""
        return self._reason

    async def wait(self) -> None:
        """Return once the signal is aborted (at once if it already is)."""
        if self._aborted:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not waiter.done():
                waiter.set_result(None)

        self._subscribe(wake)
        try:
            await waiter
        finally:
            self._unsubscribe(wake)

    def _subscribe(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once when aborted (never if already aborted)."""
        self._callbacks.append(callback)

    def _unsubscribe(self, callback: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self._callbacks.remove(callback)

    def _abort(self, reason: object) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def __repr__(self) -> str:
        state = f"aborted, reason={self._reason!r}" if self._aborted else "not aborted"
        return f"<AbortSignal {state}>"


class AbortController:
    """Creates a signal and aborts it: ``controller.abort(reason)``."""

    __slots__ = ("_signal",)

    def __init__(self) -> None:
        self._signal = AbortSignal()

    @property
    def signal(self) -> AbortSignal:
        """The signal to hand to ``adapter.stream(request, signal)``."""
        return self._signal

    def abort(self, reason: object = None) -> None:
        """Abort the signal. Idempotent: the first call's reason stays."""
        self._signal._abort(reason)

    def __repr__(self) -> str:
        return f"<AbortController signal={self._signal!r}>"
