"""Helpers for the server tests: a raw HTTP/1.1 client on a socket, and what runs in a server.

``RawClient`` speaks HTTP on a plain socket, so a test can do what no SDK does on
purpose: stop reading, or send half a body. Responses are parsed by ``h11`` (uvicorn's
own parser), never by hand.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import h11

from course.vendors import FixtureServer

__all__ = [
    "RawClient",
    "RawResponse",
    "open_descriptors",
    "server_tasks",
    "server_threads",
    "until",
]

HANG: float = 10.0
"""Seconds a raw client waits for bytes before it reports that it was left hanging."""


def until(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` comes true within a generous bound (a wait, not a timing)."""
    deadline = time.monotonic() + 10
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def server_tasks(server: FixtureServer) -> set[str]:
    """The tasks on the server's event loop, besides the one that runs uvicorn."""

    async def probe() -> set[str]:
        here = asyncio.current_task()
        return {t.get_coro().__qualname__ for t in asyncio.all_tasks() if t is not here}  # type: ignore[union-attr]

    loop = server._loop
    assert loop is not None
    return asyncio.run_coroutine_threadsafe(probe(), loop).result(10) - {"FixtureServer._serve"}


def server_threads() -> list[str]:
    """The fixture-server threads still alive in this process."""
    return [t.name for t in threading.enumerate() if t.name.startswith("course-fixture-server")]


def open_descriptors() -> int | None:
    """How many file descriptors this process has open (``None`` where /proc has no answer)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return None


@dataclass(frozen=True)
class RawResponse:
    status: int
    headers: dict[bytes, bytes]
    body: bytes


class RawClient:
    """One HTTP/1.1 request on a socket of its own, sent as the test says."""

    def __init__(self, url: str, *, receive_buffer: int | None = None) -> None:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        self.sock = socket.socket()
        if receive_buffer is not None:  # before connecting, so the window stays small
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.connect((host, int(port)))
        self.sock.settimeout(HANG)

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.sock.close()

    def send_head(self, path: str, length: int, *, method: str = "POST") -> None:
        head = (
            f"{method} {path} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n"
            f"content-length: {length}\r\n\r\n"
        )
        self.sock.sendall(head.encode())

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_to_end(self) -> tuple[bytes, str]:
        """Everything until the server closes: the bytes, and ``"eof"`` or ``"reset"``.

        A socket timeout (the server left this client hanging) is raised.
        """
        parts: list[bytes] = []
        try:
            while data := self.sock.recv(65536):
                parts.append(data)
        except ConnectionResetError:
            return b"".join(parts), "reset"
        return b"".join(parts), "eof"

    def response(self) -> RawResponse:
        """The whole response, read to the end of the connection."""
        data, ending = self.read_to_end()
        assert ending == "eof", "the server reset the connection"
        parser = h11.Connection(h11.CLIENT)
        parser.send(h11.Request(method="GET", target="/", headers=[("host", "test")]))
        parser.receive_data(data)
        parser.receive_data(b"")
        head = parser.next_event()
        assert isinstance(head, h11.Response)
        body = b""
        while isinstance(event := parser.next_event(), h11.Data):
            body += bytes(event.data)
        assert isinstance(event, h11.EndOfMessage | h11.ConnectionClosed)
        return RawResponse(head.status_code, dict(head.headers), body)
