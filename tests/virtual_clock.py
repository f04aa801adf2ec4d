"""An asyncio event loop on a virtual clock: delays are judged, never waited.

``VirtualClockLoop`` is a plain ``SelectorEventLoop`` built through its public
constructor with a selector of ours, and a ``time()`` of ours. When the loop would block
(nothing ready, a timer due later) the selector moves the clock to that timer instead of
sleeping, so a stream whose records carry ``delay: 3600`` settles at once, at virtual
time 3600. Code that never blocks on a timer sees a clock that never moves.

The selector counts each jump (``jumps``), so a test can tell a stream that waits once
per delay from one that polls. A loop that would block with no timer at all (a deadlock:
nothing can ever wake it) raises ``Deadlock`` instead of hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
from collections.abc import Coroutine, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

__all__ = ["Deadlock", "VirtualClockLoop", "clock", "run_virtual", "virtual_loops"]

T = TypeVar("T")


class Deadlock(RuntimeError):
    """The loop would wait forever: no callback ready, no timer, no I/O."""


class _Selector(selectors.BaseSelector):
    """The default selector, except that a wait with a timeout moves the clock."""

    def __init__(self) -> None:
        self._real = selectors.DefaultSelector()
        self.loop: VirtualClockLoop | None = None

    def register(
        self, fileobj: FileDescriptorLike, events: int, data: Any = None
    ) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: FileDescriptorLike) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(
        self, fileobj: FileDescriptorLike, events: int, data: Any = None
    ) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._real.select(0)
        if ready or timeout == 0:
            return ready
        assert self.loop is not None
        if timeout is None:
            # Only another thread could wake the loop (through its self-pipe): give it a
            # moment of real time, then call it what it is.
            ready = self._real.select(5.0)
            if not ready:
                raise Deadlock("the event loop would wait forever")
            return ready
        self.loop.advance(timeout)
        return []

    def close(self) -> None:
        self._real.close()

    def get_map(self) -> Mapping[FileDescriptorLike, selectors.SelectorKey]:
        return self._real.get_map()


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose ``time()`` moves only when it would sleep."""

    def __init__(self) -> None:
        self.now = 0.0
        self.jumps = 0
        selector = _Selector()
        super().__init__(selector)
        selector.loop = self

    def time(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.jumps += 1


def run_virtual(coroutine: Coroutine[object, object, T], *, debug: bool = True) -> T:
    """Run ``coroutine`` on a fresh ``VirtualClockLoop`` (debug mode, as ``helpers.run``)."""
    with asyncio.Runner(debug=debug, loop_factory=VirtualClockLoop) as runner:
        return runner.run(coroutine)


def clock() -> VirtualClockLoop:
    """The running virtual-clock loop (inside ``run_virtual``)."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualClockLoop), "not on a virtual clock"
    return loop


class _Policy(asyncio.DefaultEventLoopPolicy):
    def __init__(self, loops: list[VirtualClockLoop]) -> None:
        super().__init__()
        self._loops = loops

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        loop = VirtualClockLoop()
        self._loops.append(loop)
        return loop


@contextlib.contextmanager
def virtual_loops() -> Iterator[list[VirtualClockLoop]]:
    """Every event loop made inside (``asyncio.run`` included) is a ``VirtualClockLoop``;
    yields the list of them, so a test can ask how far each one's clock moved. The old
    policy is back on exit."""
    loops: list[VirtualClockLoop] = []
    old = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(_Policy(loops))
    try:
        yield loops
    finally:
        asyncio.set_event_loop_policy(old)
