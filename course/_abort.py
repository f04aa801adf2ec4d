"""Cancellation: ``AbortController`` owns the switch, ``AbortSignal`` is what callers pass.

A signal notifies its subscribers through callbacks the moment ``abort()`` is called,
so nothing ever polls it. The reason is data: ``abort()`` never runs any of its code,
and every rendering of it (error messages, ``repr``) is safe and bounded, so no reason
can keep a waiter blocked or make ``abort()`` raise. Like asyncio itself, a signal is
not thread-safe: abort from the event loop's thread
(``loop.call_soon_threadsafe(controller.abort)`` from another).
"""

from __future__ import annotations

import asyncio
import reprlib
from collections.abc import Callable
from typing import Final, NoReturn, final

from ._untrusted import type_name

__all__ = ["AbortController", "AbortSignal", "describe_reason"]

REASON_LIMIT: Final = 120
"""The longest rendering of a reason that an error message or ``repr`` shows."""

# ``reprlib`` bounds the work as well as the text: it looks at a few items of a
# container, a few levels deep, and never walks a huge or self-containing one.
_reprs = reprlib.Repr()
_reprs.maxlevel = 3
_reprs.maxstring = _reprs.maxother = _reprs.maxlong = REASON_LIMIT


def render_reason(reason: object) -> str:
    """``repr(reason)``, shortened to ``REASON_LIMIT``; never raises.

    The reason is the caller's object: its ``repr`` may raise anything, return a
    ``str`` subclass with lying methods, or be huge. None of that gets out.
    """
    try:
        text = _reprs.repr(reason)
        text = str.__str__(text)  # an exact str, whatever its repr returned
    except BaseException:  # the reason's own code failing is still data
        return f"<{type_name(reason)} object (repr failed)>"[:REASON_LIMIT]
    if len(text) > REASON_LIMIT:
        text = text[: REASON_LIMIT - 3] + "..."
    return text


def describe_reason(signal: AbortSignal) -> str:
    """`` (reason: ...)`` for an error message, or ``""`` if the abort gave none.

    Rendered once per signal, safely and bounded (``render_reason``); never raises.
    """
    description = signal._description
    if description is None:
        reason = signal._reason
        description = "" if reason is None else f" (reason: {render_reason(reason)})"
        if signal._aborted:  # the reason is final only then
            signal._description = description
    return description


@final
class AbortSignal:
    """Read-only view of an abort: ``aborted``, ``reason`` and ``await wait()``.

    Get one from ``AbortController().signal``. It cannot be subclassed: streams read
    its state at every step, and a subclass could make those reads run code or lie.
    """

    __slots__ = ("_aborted", "_callbacks", "_description", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._description: str | None = None
        # A dict as an ordered set: unsubscribing stays O(1) with many waiters.
        self._callbacks: dict[Callable[[], None], None] = {}

    def __init_subclass__(cls, **kwargs: object) -> NoReturn:
        raise TypeError("AbortSignal cannot be subclassed; use AbortController().signal")

    @property
    def aborted(self) -> bool:
        """Whether ``abort()`` was called on the controller."""
        return self._aborted

    @property
    def reason(self) -> object:
        """``None`` until aborted, then what the first ``abort()`` was given."""
        return self._reason

    async def wait(self) -> None:
        """Return once the signal is aborted (at once if it already is).

        Needs a running asyncio event loop; under another one (trio) it raises
        ``TypeError``, since it waits on an asyncio future.
        """
        if self._aborted:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise TypeError(
                "AbortSignal.wait() needs a running asyncio event loop "
                "(under trio, read signal.aborted or use a trio.Event)"
            ) from None
        waiter: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            # A waiter whose loop was closed is gone: resolving it would raise.
            if not waiter.done() and not loop.is_closed():
                waiter.set_result(None)

        self._subscribe(wake)
        try:
            await waiter
        finally:
            self._unsubscribe(wake)

    def _subscribe(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once when aborted (never if already aborted)."""
        self._callbacks[callback] = None

    def _unsubscribe(self, callback: Callable[[], None]) -> None:
        self._callbacks.pop(callback, None)

    def _abort(self, reason: object) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        callbacks, self._callbacks = self._callbacks, {}
        for callback in callbacks:
            # Each subscriber on its own: one that fails must neither keep the others
            # blocked nor make abort() raise. The callbacks are the adapter's own and
            # guard their known failures (a closed loop); this is the backstop.
            try:
                callback()
            except Exception:
                continue

    def __repr__(self) -> str:
        if not self._aborted:
            return "<AbortSignal not aborted>"
        if self._reason is None:
            return "<AbortSignal aborted>"
        return f"<AbortSignal aborted, reason={render_reason(self._reason)}>"


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
        """Abort the signal. Idempotent: the first call's reason stays.

        Never raises: ``reason`` is kept as given and only ever rendered safely.
        """
        self._signal._abort(reason)

    def __repr__(self) -> str:
        return f"<AbortController signal={self._signal!r}>"
