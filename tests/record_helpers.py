"""Shared helpers for the recorder's tests: a local upstream that answers like a provider.

``Upstream`` is a plain ASGI application (served by uvicorn on loopback, through
``FixtureServer``'s thread machinery) that answers each POST with the next ``Reply``:
a status, headers and a body sent in several network chunks, with a short pause
between them so that each reaches the proxy as a read of its own. A reply can hold
its chunks back until a test lets them go (``gate``), never by a clock, and can cut
its connection in the middle (``cut``). ``Upstream.seen`` is every request it got.

The replies' bodies are the repository's recordings (``tests/recordings``), split
into chunks by ``events`` (one chunk per SSE event) or ``pieces`` (at any byte,
inside UTF-8 characters too).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from course import FixtureProviderErrorCode
from course.vendors._server import FixtureApp, FixtureServer, Message, Receive, Scope, Send

from .helpers import replayed, run
from .vendor_helpers import RECORDINGS

__all__ = [
    "OPENAI_KEY",
    "PATHS",
    "SECRETS",
    "Reply",
    "Seen",
    "Upstream",
    "events",
    "pieces",
    "recording",
    "upstream",
]

PATHS: Final = {
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
}

OPENAI_KEY: Final = "sk-proj-PLANTEDopenaiKEY0123456789abcdefXYZ"
ANTHROPIC_KEY: Final = "sk-ant-api03-PLANTEDanthropicKEY0123456789abcdef-XYZ"
GOOGLE_KEY: Final = "AIzaSyPLANTEDgoogleKEY0123456789abcdefXYZ"
SECRETS: Final = (OPENAI_KEY, ANTHROPIC_KEY, GOOGLE_KEY)
"""Credentials planted in the recorder's tests, none of which may reach a written file."""

SSE: Final = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
JSON: Final = [(b"content-type", b"application/json")]


def recording(format: str, name: str) -> bytes:
    """The bytes of ``tests/recordings/<format>/<name>.sse``."""
    return (RECORDINGS / format / f"{name}.sse").read_bytes()


def events(body: bytes) -> list[bytes]:
    """``body`` in one chunk per SSE event (the blank line that ends it included)."""
    parts = body.split(b"\n\n")
    chunks = [part + b"\n\n" for part in parts[:-1]]
    if parts[-1]:
        chunks.append(parts[-1])
    return chunks


def pieces(body: bytes, size: int = 101) -> list[bytes]:
    """``body`` cut every ``size`` bytes, wherever that falls."""
    return [body[at : at + size] for at in range(0, len(body), size)]


@dataclass
class Reply:
    """One answer of the upstream."""

    chunks: Sequence[bytes]
    status: int = 200
    headers: Sequence[tuple[bytes, bytes]] = field(default_factory=lambda: list(SSE))
    gate: threading.Event | None = None
    """When set, the chunks from ``gate_at`` on wait until the test sets it."""
    gate_at: int = 1
    cut_after: int | None = None
    """Send this many chunks, then drop the connection without ending the body."""
    sent: int = 0
    """How many chunks have been sent so far."""


@dataclass(frozen=True)
class Seen:
    """One request as the upstream received it."""

    method: str
    path: str
    query: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes

    def header(self, name: str) -> list[str]:
        return [v.decode("latin-1") for k, v in self.headers if k.decode("latin-1") == name]


class Upstream(FixtureApp):
    """A provider stand-in answering each request with the next ``Reply`` (see the module)."""

    def __init__(self, *replies: Reply) -> None:
        super().__init__({"schemaVersion": 1, "responses": []})
        self.replies: deque[Reply] = deque(replies)
        self.seen: list[Seen] = []
        self.closed = threading.Event()
        """Set when the upstream saw a client leave, or finished a reply."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await super().__call__(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")  # type: ignore[operator]
            if not message.get("more_body"):
                break
        self.seen.append(
            Seen(
                str(scope.get("method")),
                str(scope.get("path")),
                scope.get("query_string", b""),  # type: ignore[arg-type]
                list(scope.get("headers", [])),  # type: ignore[call-overload]
                body,
            )
        )
        reply = self.replies.popleft()
        try:
            await self._answer(reply, send)
        finally:
            self.closed.set()

    async def _answer(self, reply: Reply, send: Send) -> None:
        start: Message = {
            "type": "http.response.start",
            "status": reply.status,
            "headers": list(reply.headers),
        }
        await send(start)
        for index, chunk in enumerate(reply.chunks):
            if reply.cut_after is not None and index >= reply.cut_after:
                return  # an incomplete response: uvicorn closes the connection
            if reply.gate is not None and index == reply.gate_at:
                await asyncio.to_thread(reply.gate.wait, 30)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            reply.sent = index + 1
            await asyncio.sleep(0.001)  # a network chunk of its own, never a coalesced one
        await send({"type": "http.response.body", "body": b"", "more_body": False})


@contextmanager
def upstream(*replies: Reply) -> Iterator[tuple[FixtureServer, Upstream]]:
    """An ``Upstream`` on loopback, running."""
    app = Upstream(*replies)
    with FixtureServer(app) as server:
        yield server, app


def read_fixture(path: Path) -> dict[str, object]:
    """A fixture the recorder wrote, proven a fixture: every response replays, to its
    end or to the provider's failure it recorded (a transport error, a cut)."""
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    for _, outcome in run(replayed(data)):
        assert not isinstance(outcome, FixtureProviderErrorCode) or outcome in RECORDED_FAILURES
    return data


RECORDED_FAILURES: Final = (
    FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR,
    FixtureProviderErrorCode.PROVIDER_MISSING_TERMINAL,
)
