"""The recording proxy: ``serve``'s routes, forwarded to the real providers, kept.

``ProxyApp`` is ``serve``'s ``FixtureApp`` with one change: a POST to a model route whose
body is a JSON object is *forwarded* instead of answered from a fixture. Every other
request (another path or method, a body that is not a JSON object or too large, a
request while stopping) is answered by ``FixtureApp`` itself, exactly as ``serve``
answers it, so that what takes a response while recording is what takes one in the
replay.

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

``ProxyServer`` is ``FixtureServer`` closing the proxy's HTTP client on the server's own
event loop once uvicorn has stopped. This module needs httpx2 and uvicorn (the extra
``course[record]``): ``course.vendors._record`` imports it only once it has checked them.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final, cast

import httpx2

from .._json import JsonValue, PlainJson, refreeze
from . import _gemini, _server
from ._answer import PROVIDERS, Answer, Ending
from ._redaction import credentials
from ._server import (
    _REQUEST_ID_HEADER,
    ROUTES,
    FixtureApp,
    FixtureServer,
    Message,
    Receive,
    Scope,
    Send,
    _Answer,
    _ClientGone,
    _parse_body,
    _provider,
    _refusal,
    _route_path,
    _Stopped,
    _until_disconnect,
)

if TYPE_CHECKING:
    from ._uvicorn import Server

__all__ = ["ProxyApp", "ProxyServer"]

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
    it has ended. ``answers`` lists every forwarded call, in arrival order.
    """

    def __init__(self, upstreams: Mapping[str, str], on_answer: Callable[[Answer], None]) -> None:
        super().__init__({"schemaVersion": 1, "responses": []})
        self._upstreams = {name: url.rstrip("/") for name, url in upstreams.items()}
        self._urls: dict[str, httpx2.URL] = {}
        self._on_answer = on_answer
        self.answers: list[Answer] = []
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

    async def aclose(self) -> None:
        """Close the HTTP client (on the loop that used it, once serving has stopped)."""
        await self._client.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http" and scope.get("method") == "POST":
            path = _route_path(scope)
            format = ROUTES.get(path)
            if format is None and _gemini.route(path, "") is not None:
                format = _gemini.FORMAT
            if format is not None:
                await self._post(format, path, scope, receive, send)
                return
        await super().__call__(scope, receive, send)

    async def _post(
        self, format: str, path: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        body = await self._read_body(receive)
        # serve's own limit, read where serve reads it.
        request = (
            None
            if not isinstance(body, bytes) or len(body) > _server.MAX_BODY
            else _parse_body(body)
        )
        if not isinstance(body, bytes) or not isinstance(request, dict) or self._closing:
            # Not a model call: what serve answers (400, 413, 503), from serve itself.
            await super().__call__(scope, _replaying(body, receive), send)
            return
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
        upstream = httpx2.Request(
            "POST",
            self._url(format, path, query),
            headers=[*_forwarded(headers, _NOT_FORWARDED), _IDENTITY],
            content=body,
        )
        provider = _provider(path, scope)
        request_id = (_REQUEST_ID_HEADER[provider], f"request-{next(self._request_ids)}".encode())
        reply = _Answer(send, provider, request_id)
        relay = _Relay(answer, self._client, upstream, send, reply)
        self._relays.add(relay)
        try:
            await relay.run(receive)
        finally:
            self._relays.discard(relay)
        self._on_answer(answer)


def _replaying(body: bytes | _Stopped | None, receive: Receive) -> Receive:
    """``receive`` with the body already read handed back first (or the disconnect).
    (A body that the stop interrupted is not asked for again: serve answers 503.)"""
    pending: list[Message] = [
        {"type": "http.request", "body": body, "more_body": False}
        if isinstance(body, bytes)
        else {"type": "http.disconnect"}
    ]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


class _Relay:
    """One forwarded request: the upstream's answer streamed back, and kept."""

    __slots__ = ("_client", "_reply", "_request", "_send", "_task", "answer")

    def __init__(
        self,
        answer: Answer,
        client: httpx2.AsyncClient,
        request: httpx2.Request,
        send: Send,
        reply: _Answer,
    ) -> None:
        self.answer = answer
        self._client = client
        self._request = request
        self._send = send
        self._reply = reply
        """serve's way to answer this request itself (the 502), with a request id."""
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
        reply = self._reply
        message = (
            f"The recording proxy could not reach the {PROVIDERS[self.answer.format]} "
            f"upstream ({self.answer.reason})"
        )
        # serve's shape and its word for a server-side failure (the one of its 503).
        body = _refusal(reply.provider, 503, message)
        error = body["error"]
        if isinstance(error, dict) and "status" in error:  # Google's names its code
            error["code"] = 502
        with contextlib.suppress(OSError):  # a client already gone
            await reply.reply(502, body)

    async def _pass(self, message: Message) -> None:
        try:
            await self._send(message)
        except OSError as exc:  # servers other than uvicorn report a lost client so
            raise _ClientGone from exc


class ProxyServer(FixtureServer):
    """``FixtureServer`` for a ``ProxyApp``: its HTTP client is closed on the server's
    loop after uvicorn has stopped, so no connection outlives the loop."""

    async def _serve(self, server: Server, listener: socket.socket) -> None:
        try:
            await super()._serve(server, listener)
        finally:
            await cast("ProxyApp", self.app).aclose()
