"""uvicorn's ``Server``, started and stopped when told: no tick, no fixed sleep.

uvicorn's own ``Server`` looks at ``should_exit`` once every 0.1 s, sleeps another
0.1 s when it shuts down, and then only closes its connections, waiting for write
buffers that a client who stopped reading never drains. ``Server`` here keeps uvicorn's
protocols and startup, and replaces the two loops:

- ``main_loop`` waits on an event that ``request_exit`` sets (from any thread);
- ``shutdown`` stops listening, has the application abort what it is answering
  (``on_stop``), asks every connection to close, and waits, on the connections' own
  ``connection_lost``, until all are gone or ``grace`` seconds have passed. Every
  connection still open then is aborted (reset), so its socket is freed and its client
  sees the end at once.

Imported only when serving: importing it imports uvicorn (the extra ``course[serve]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable
from typing import Final

import uvicorn

__all__ = ["RESET_WAIT", "Server"]

DATE_EVERY: Final = 1.0
"""Seconds between refreshes of the ``date`` header, as uvicorn's tick refreshes it."""

RESET_WAIT: Final = 1.0
"""Seconds a stop waits for reset connections and their tasks to end, before cancelling."""


class Server(uvicorn.Server):
    """A ``uvicorn.Server`` that stops as soon as it is told (see the module docstring).

    ``on_ready`` is called on the server's thread once it accepts connections;
    ``on_stop`` on its event loop when it starts to stop.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        on_ready: Callable[[], None],
        on_stop: Callable[[], None],
        grace: float,
    ) -> None:
        super().__init__(config)
        if not config.loaded:
            config.load()
        config.http_protocol_class = _reporting_loss(config.http_protocol_class, self._lost)
        self._on_ready = on_ready
        self._on_stop = on_stop
        self._grace = grace
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._change: asyncio.Future[None] | None = None

    def request_exit(self) -> None:
        """Stop serving as soon as possible. Safe from any thread, before or after start."""
        self.should_exit = True
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(self._wake.set)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)
        if self.started:
            self._on_ready()

    async def main_loop(self) -> None:
        await self.on_tick(0)
        while not self.should_exit:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(DATE_EVERY):
                    await self._wake.wait()
            await self.on_tick(0)  # tick 0 refreshes the date header

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for listener in sockets or []:
            listener.close()
        self._on_stop()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        await self._settle(loop.time() + self._grace)
        if state.connections:  # clients that do not read what they were sent
            for connection in list(state.connections):
                connection.transport.abort()
            await self._settle(loop.time() + RESET_WAIT)
        if state.tasks:  # only an application that ignores its client's loss
            for task in state.tasks:
                task.cancel()
            await asyncio.wait(list(state.tasks), timeout=RESET_WAIT)
        for server in self.servers:
            await server.wait_closed()
        await self.lifespan.shutdown()

    async def _settle(self, deadline: float) -> None:
        """Until no connection and no request task is left, or ``deadline`` (loop time)."""
        loop = asyncio.get_running_loop()
        state = self.server_state
        while state.connections or state.tasks:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            change = self._change = loop.create_future()
            await asyncio.wait(
                [change, *state.tasks], timeout=remaining, return_when=asyncio.FIRST_COMPLETED
            )
            change.cancel()

    def _lost(self) -> None:
        change = self._change
        if change is not None and not change.done():
            change.set_result(None)


def _reporting_loss(
    base: type[asyncio.Protocol], lost: Callable[[], None]
) -> type[asyncio.Protocol]:
    """``base`` (uvicorn's HTTP protocol), calling ``lost`` after each ``connection_lost``."""

    def connection_lost(self: asyncio.Protocol, exc: Exception | None) -> None:
        base.connection_lost(self, exc)
        lost()

    return type(base.__name__, (base,), {"connection_lost": connection_lost})
