"""The recording proxy: ``serve``'s routes, forwarded to the real providers, kept.

``ProxyApp`` is ``serve``'s ``FixtureApp`` with one change: a model call that ``serve``
would answer from a fixture (a POST to a model route whose body is a JSON object, while
not stopping) is *forwarded* instead (``FixtureApp._respond``). Every other request is
refused by ``FixtureApp`` itself, exactly as ``serve`` refuses it, so that what takes a
response while recording is what takes one in the replay.

A forwarded request is an ``Answer``: the request goes upstream unchanged but for the
hop-by-hop headers, ``host``, ``content-length`` and ``accept-encoding`` (the proxy asks
for an identity body, so that what it keeps is what it can import), and the answer
comes back as it arrives: the status and headers, then each network chunk as httpx2
reads it (``aiter_raw``), never the whole body first. The chunks are kept with the time
each arrived. Like ``serve``'s exchanges, each is two tasks, the *relay* and a
*watcher* of ``http.disconnect``: a client that leaves stops the relay, which closes the
upstream response. An upstream that cuts its answer cuts the client's too (the response
is left incomplete, which uvicorn reports and ends by closing the connection), so the
client sees what the provider did. An upstream that cannot be reached is answered 502
in the route's error shape.

``FixtureServer`` runs it, and closes the proxy's HTTP client on the server's own event
loop once uvicorn has stopped (``FixtureApp._aclose``). This module needs httpx2 and
uvicorn (the extra ``course[record]``): ``course.vendors._record`` imports it only once
it has checked them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from typing import Final, cast

import httpx2

from .._json import JsonValue, PlainJson, refreeze
from .._model import CourseModelRequest
from ._answer import PROVIDERS, Answer, Ending
from ._redaction import credentials
from ._server import (
    FixtureApp,
    Message,
    Receive,
    Scope,
    _Answer,
    _ClientGone,
    _route_path,
    _until_disconnect,
)

__all__ = ["ProxyApp"]

HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
"""Headers of one connection, never passed on (RFC 9110, section 7.6.1)."""

_NOT_FORWARDED: Final = HOP_BY_HOP | {"host", "content-length", "accept-encoding", "expect"}
"""Request headers the proxy sets itself (or, for ``expect``, answers itself: uvicorn)."""

_NOT_RETURNED: Final = HOP_BY_HOP | {"content-length", "date"}
"""Response headers the proxy's server sets itself (uvicorn writes its own ``date``)."""

_IDENTITY: Final = (b"accept-encoding", b"identity")


def _headers_of(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in raw:
        headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return headers


def _connection_tokens(headers: list[tuple[bytes, bytes]]) -> set[str]:
    """The header names a ``Connection`` header lists: hop-by-hop too."""
    tokens: set[str] = set()
    for name, value in headers:
        if name.lower() == b"connection":
            tokens.update(t.strip().lower() for t in value.decode("latin-1").split(","))
    return tokens


def _forwarded(
    headers: list[tuple[bytes, bytes]], dropped: frozenset[str]
) -> list[tuple[bytes, bytes]]:
    also = _connection_tokens(headers)
    return [
        (name, value)
        for name, value in headers
        if (key := name.decode("latin-1").lower()) not in dropped and key not in also
    ]


class ProxyApp(FixtureApp):
    """``serve``'s application, forwarding model calls to ``upstreams`` (see the module).

    ``upstreams`` maps ``openai``, ``anthropic`` and ``gemini`` to base URLs (checked by
    the caller); ``on_answer`` is called, on the server's loop, with each answer once
    it has ended. ``answers`` lists every forwarded call, in arrival order, and
    ``reads`` each one's body as ``serve(..., check_requests=False)`` reads it (by the
    answer's number).
    """

    def __init__(self, upstreams: Mapping[str, str], on_answer: Callable[[Answer], None]) -> None:
        super().__init__({"schemaVersion": 1, "responses": []}, check_requests=False)
        self._upstreams = {name: url.rstrip("/") for name, url in upstreams.items()}
        self._urls: dict[str, httpx2.URL] = {}
        self._on_answer = on_answer
        self.answers: list[Answer] = []
        self.reads: dict[int, tuple[CourseModelRequest | None, tuple[str, ...]]] = {}
        self._relays: set[_Relay] = set()
        # No timeouts of the proxy's own: the client's decide (a client that gives up
        # disconnects, which stops the relay). No connection limit either.
        self._client = httpx2.AsyncClient(
            timeout=None, limits=httpx2.Limits(max_connections=None, max_keepalive_connections=20)
        )

    def _url(self, format: str, path: str, query: bytes) -> httpx2.URL:
        """Where a call goes: the route's path appended to its upstream's, the query kept.
        Parsed once per route (a URL costs a tenth of a millisecond to parse)."""
        url = self._urls.get(path)
        if url is None:
            url = self._urls[path] = httpx2.URL(self._upstreams[PROVIDERS[format]] + path)
        return url.copy_with(query=query) if query else url

    @property
    def requests(self) -> tuple[Mapping[str, JsonValue], ...]:
        """The JSON bodies of the forwarded requests that took a response, in order."""
        return tuple(
            answer.body for answer in self.answers if answer.ending is None or answer.answered
        )

    def _abort(self) -> None:
        """Cut every answer in flight at once (the server is stopping), and answer later
        requests as ``serve`` does (503); ``close`` and ``FixtureServer`` both call it."""
        super()._abort()
        for relay in self._relays:
            relay.stop()

    async def _aclose(self) -> None:
        """Close the HTTP client (on the loop that used it, once serving has stopped)."""
        await self._client.aclose()

    async def _respond(
        self,
        scope: Scope,
        format: str,
        reply: _Answer,
        receive: Receive,
        *,
        body: bytes,
        request: dict[str, PlainJson],
    ) -> None:
        """Forward the model call, relay the answer, and hand it on once it has ended."""
        path = _route_path(scope)
        headers = list(cast("list[tuple[bytes, bytes]]", scope.get("headers", [])))
        query = cast("bytes", scope.get("query_string", b""))
        answer = Answer(
            len(self.answers) + 1,
            format,
            path,
            cast("Mapping[str, JsonValue]", refreeze(cast("PlainJson", request))),
            credentials(headers, query),
        )
        self.answers.append(answer)
        read, problems, _ = self._read(format, request, reply.id)
        self.reads[answer.number] = (None if read is None else read.request, problems)
        upstream = httpx2.Request(
            "POST",
            self._url(format, path, query),
            headers=[*_forwarded(headers, _NOT_FORWARDED), _IDENTITY],
            content=body,
        )
        relay = _Relay(answer, self._client, upstream, reply)
        self._relays.add(relay)
        try:
            await relay.run(receive)
        finally:
            self._relays.discard(relay)
        self._on_answer(answer)


class _Relay:
    """One forwarded request: the upstream's answer streamed back, and kept."""

    __slots__ = ("_client", "_reply", "_request", "_task", "answer")

    def __init__(
        self, answer: Answer, client: httpx2.AsyncClient, request: httpx2.Request, reply: _Answer
    ) -> None:
        self.answer = answer
        self._client = client
        self._request = request
        self._reply = reply
        """serve's way to answer this request: its ``send``, and itself (the 502)."""
        self._task: asyncio.Task[None] | None = None

    async def run(self, receive: Receive) -> None:
        """Relay, while watching for the client to leave; whichever ends first wins."""
        relay = self._task = asyncio.ensure_future(self._relay())
        watcher = asyncio.ensure_future(_until_disconnect(receive))
        try:
            done, _ = await asyncio.wait((relay, watcher), return_when=asyncio.FIRST_COMPLETED)
            if relay not in done:
                self.answer.end(Ending.CLIENT_LEFT)
        finally:
            relay.cancel()
            watcher.cancel()
            await asyncio.wait((relay, watcher))
        if not relay.cancelled():
            relay.result()

    def stop(self) -> None:
        """Cut the answer now: the recorder is stopping."""
        self.answer.end(Ending.STOPPED)
        if self._task is not None:
            self._task.cancel()

    async def _relay(self) -> None:
        answer = self.answer
        answer.forwarded_at = time.perf_counter()
        try:
            response = await self._client.send(self._request, stream=True)
        except httpx2.HTTPError as exc:
            answer.reason = type(exc).__name__
            answer.end(Ending.UNREACHABLE)
            await self._bad_gateway()
            return
        try:
            answer.status = response.status_code
            raw = response.headers.raw
            answer.headers = _headers_of(raw)
            start = {
                "type": "http.response.start",
                "status": response.status_code,
                "headers": _forwarded(raw, _NOT_RETURNED),
            }
            await self._pass(start)
            async for chunk in response.aiter_raw():
                answer.chunks.append(chunk)
                answer.arrivals.append(time.perf_counter())
                await self._pass({"type": "http.response.body", "body": chunk, "more_body": True})
            answer.end(Ending.COMPLETE)
            await self._pass({"type": "http.response.body", "body": b"", "more_body": False})
        except httpx2.HTTPError:
            # Returning without completing the response cuts the client's too.
            answer.end(Ending.UPSTREAM_CUT)
        except _ClientGone:
            answer.end(Ending.CLIENT_LEFT)
        finally:
            await response.aclose()

    async def _bad_gateway(self) -> None:
        """502, in the error shape of the provider the path belongs to."""
        message = (
            f"The recording proxy could not reach the {PROVIDERS[self.answer.format]} "
            f"upstream ({self.answer.reason})"
        )
        with contextlib.suppress(OSError):  # a client already gone
            await self._reply.refuse(502, message)

    async def _pass(self, message: Message) -> None:
        try:
            await self._reply.send(message)
        except OSError as exc:  # servers other than uvicorn report a lost client so
            raise _ClientGone from exc
