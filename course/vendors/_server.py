"""Serve a fixture to real SDK clients: the ASGI application and ``FixtureServer``.

``FixtureApp`` (what ``asgi_app`` returns) is a plain ASGI callable, standard library
only. It routes the four formats' endpoints, gives each request that qualifies the
adapter's next response, and writes that response in the provider's wire format
through the format's ``Renderer``: one send per chunk, as the adapter yields it.

Each such request is an *exchange* of two tasks. The *responder* pulls chunks and
sends them; the *watcher* waits for ``http.disconnect``. Whichever ends first ends the
other: a client that leaves cancels the responder, which closes its stream (so an
async source blocked mid-step is released too), and a response that ends stops the
watching. Stopping the server aborts every exchange in flight: the stream fails as
``PROVIDER_ABORTED``, which the client receives as the format's error, and a responder
that cannot even send that (a client that stopped reading) is cancelled soon after.
A request whose body is still arriving then is answered 503.

Every answer carries the provider's request-id header, and refusals (400, 404, 405,
413, 503: the requests that take no response; the recording proxy's 502) have the
error shape of the provider the path belongs to.

``FixtureServer`` runs the application with uvicorn (the optional extra
``course[serve]``) on its own event loop in a background thread: the documented
pattern of ``uvicorn.Server`` in a thread, on a socket bound here so that the port
is known, and a bind failure is the caller's ``OSError``, before any thread starts.
``_uvicorn.Server`` starts and stops it when told, without uvicorn's tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import json
import logging
import math
import re
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, Final, cast

from .._abort import AbortController
from .._adapter import FixtureProviderAdapter
from .._errors import FixtureProviderError, FixtureProviderErrorCode
from .._json import JsonValue, Memo, PlainJson, new_memo, refreeze
from .._json_text import JsonSyntaxError, loads
from .._model import CourseModelRequest, CourseModelResponse
from .._stream import CourseModelStream
from .._text import one_line, plural, shorten
from . import _gemini
from ._checks import check
from ._importing import FORMATS
from ._rendering import StreamRenderer
from ._requests import (
    ReadRequest,
    ReadRequestFunction,
    RequestReadError,
    SentLog,
    SentResponse,
    ServedCall,
    read_body,
)

if TYPE_CHECKING:
    from ._uvicorn import Server

__all__ = [
    "MODELS_PATH",
    "ROUTES",
    "FixtureApp",
    "FixtureServer",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "asgi_app",
    "serve",
]

Scope = Mapping[str, object]
"""An ASGI connection scope."""
Message = Mapping[str, object]
"""An ASGI event, received or sent."""
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

ROUTES: Final[Mapping[str, str]] = {
    "/v1/chat/completions": "openai-chat",
    "/v1/responses": "openai-responses",
    "/v1/messages": "anthropic",
}
"""Each path the server answers with a response, and the wire format it answers in."""

MODELS_PATH: Final = "/v1/models"
"""``GET`` lists one model, in OpenAI's shape or (with ``anthropic-version``) Anthropic's."""

MAX_BODY: Final = 32 * 1024 * 1024
"""The largest request body read (bytes); a larger one is answered 413."""

ABORT_GRACE: Final = 1.0
"""Seconds an aborted response has to send its error before its client is cut off."""

STOP_TIMEOUT: Final = 5.0
"""Leaving a ``FixtureServer`` returns within this many seconds."""

START_TIMEOUT: Final = 30.0
"""How long entering a ``FixtureServer`` waits for uvicorn to start serving."""

UVICORN_SETTINGS: Final[Mapping[str, Any]] = {
    "interface": "asgi3",
    "lifespan": "off",
    "ws": "none",
    "loop": "asyncio",
    # Quiet, and no change to the process's logging: no dictConfig, no access log.
    "log_config": None,
    "access_log": False,
    "proxy_headers": False,
    "server_header": False,
}
"""How ``FixtureServer`` configures uvicorn (``bench/serve.py`` runs its floor the same way)."""

DEFAULT_MODEL: Final = "course-fixture"
"""The model name reported when a request names none, and the one ``/v1/models`` lists."""

STOPPING: Final = "the fixture server is stopping"
"""The abort reason of responses in flight when the server stops."""

logger = logging.getLogger("course.vendors.serve")
"""One INFO record per request: route, response index, outcome. Silent unless enabled."""

_Code = FixtureProviderErrorCode
_SSE: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
]
_JSON: Final = (b"content-type", b"application/json")
_NO_RETRY: Final = (b"x-should-retry", b"false")

_ROUTES_HINT: Final = (
    f": this server answers POST {', '.join(ROUTES)}, {_gemini.ROUTES_SHOWN} and GET "
    f"{MODELS_PATH} (an OpenAI client's base_url ends in /v1, an Anthropic or Gemini "
    "client's does not)"
)

# -- whose path: the provider whose error shape and request-id header an answer has ------

_OPENAI: Final = "openai"
_ANTHROPIC: Final = "anthropic"
_GOOGLE: Final = "google"
_GOOGLE_PATH: Final = re.compile(r"/v1(?:beta|alpha)?/(?:tunedModels|models)/")

_REQUEST_ID_HEADER: Final = {
    _OPENAI: b"x-request-id",
    _ANTHROPIC: b"request-id",
    _GOOGLE: b"x-request-id",  # the SPEC names none for Google; the SDK reads none
}

_REFUSAL_TYPES: Final[Mapping[str, Mapping[int, str]]] = {
    _OPENAI: {
        400: "invalid_request_error",
        404: "invalid_request_error",
        405: "invalid_request_error",
        413: "invalid_request_error",
        502: "server_error",
        503: "server_error",
    },
    _ANTHROPIC: {
        400: "invalid_request_error",
        404: "not_found_error",
        405: "invalid_request_error",
        413: "request_too_large",
        502: "api_error",
        503: "api_error",
    },
    _GOOGLE: {
        400: "INVALID_ARGUMENT",
        404: "NOT_FOUND",
        405: "INVALID_ARGUMENT",
        413: "INVALID_ARGUMENT",
        502: "UNAVAILABLE",
        503: "UNAVAILABLE",
    },
}
"""Each provider's error type for each refusal status."""


def _provider(path: str, scope: Scope) -> str:
    """The provider a request's path belongs to (``/v1/models`` is both OpenAI's and
    Anthropic's: the Anthropic SDK says which by its ``anthropic-version`` header)."""
    if path == "/v1/messages" or path.startswith("/v1/messages/"):
        return _ANTHROPIC
    if _GOOGLE_PATH.match(path):
        return _GOOGLE
    if path == MODELS_PATH and _has_header(scope, b"anthropic-version"):
        return _ANTHROPIC
    return _OPENAI


def _has_header(scope: Scope, name: bytes) -> bool:
    headers = scope.get("headers")
    return isinstance(headers, list | tuple) and any(
        isinstance(header, list | tuple) and len(header) == 2 and header[0] == name
        for header in headers
    )


def _refusal(
    provider: str, status: int, message: str, *, code: str | None = None, param: str | None = None
) -> dict[str, PlainJson]:
    """The body of a refusal (a request that took no response), in the provider's shape
    (``code`` and ``param``: OpenAI's, which names them)."""
    kind = _REFUSAL_TYPES[provider][status]
    if provider == _ANTHROPIC:
        return {"type": "error", "error": {"type": kind, "message": message}}
    if provider == _GOOGLE:
        return {"error": {"code": status, "message": message, "status": kind}}
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _models(provider: str) -> dict[str, PlainJson]:
    """The one-model list of ``GET /v1/models``, as OpenAI or Anthropic lists models."""
    if provider == _ANTHROPIC:
        return {
            "data": [
                {
                    "type": "model",
                    "id": DEFAULT_MODEL,
                    "display_name": DEFAULT_MODEL,
                    "created_at": "1970-01-01T00:00:00Z",
                }
            ],
            "has_more": False,
            "first_id": DEFAULT_MODEL,
            "last_id": DEFAULT_MODEL,
        }
    return {
        "object": "list",
        "data": [{"id": DEFAULT_MODEL, "object": "model", "created": 0, "owned_by": "course"}],
    }


# -- the application ----------------------------------------------------------------------


class FixtureApp:
    """The ASGI application serving one adapter's responses (see ``asgi_app``).

    ``adapter`` is the adapter it serves; ``requests`` the JSON bodies of the requests
    that took a response, in order, as read-only values; ``calls`` every model call,
    read in its format's vocabulary and checked (unless ``check_requests`` is false).
    ``renderers`` (a seam for tests) replaces the formats' own ``Renderer`` classes, by
    format name (but for Gemini's, which its path configures).
    """

    def __init__(
        self,
        fixture: object,
        *,
        check_requests: bool = True,
        renderers: Mapping[str, type[StreamRenderer]] | None = None,
    ) -> None:
        self.adapter: FixtureProviderAdapter = (
            fixture
            if isinstance(fixture, FixtureProviderAdapter)
            else FixtureProviderAdapter(fixture)
        )
        self._renderers: dict[str, type[StreamRenderer]] = (
            {name: _renderer(module) for name, module in FORMATS.items()}
            if renderers is None
            else dict(renderers)
        )
        self.check_requests = check_requests
        """Whether a request's history is checked (a failed check is the provider's
        400), or only read."""
        self._requests: list[Mapping[str, JsonValue]] = []
        self._calls: list[ServedCall] = []
        self._sent = SentLog()
        self._exchanges: set[_Exchange] = set()
        self._request_ids = itertools.count(1)
        self._closing = False
        # Resolved when closing: a request whose body is still arriving stops waiting.
        self._body_waits: set[asyncio.Future[None]] = set()

    @property
    def requests(self) -> tuple[Mapping[str, JsonValue], ...]:
        """The JSON bodies of the requests that took a response, in order, read-only."""
        return tuple(self._requests)

    @property
    def calls(self) -> tuple[ServedCall, ...]:
        """Every POST to a model route whose body was a JSON object, in arrival order,
        refused ones included: its body as its format reads it, and what the checks
        found."""
        return tuple(self._calls)

    def close(self) -> None:
        """Abort every response in flight, and answer 503 to the requests whose body is
        still arriving and to every later one.

        Call it on the event loop that runs the application. A response that cannot
        send its error within ``ABORT_GRACE`` seconds (its client stopped reading) is
        cancelled then.
        """
        self._abort()
        loop = asyncio.get_running_loop()
        for exchange in self._exchanges:
            loop.call_later(ABORT_GRACE, exchange.cancel)

    def _abort(self) -> None:
        """``close``, leaving responses that cannot send their error to the server:
        ``FixtureServer`` resets their connections after ``ABORT_GRACE``, which ends
        them as a client that left ends them."""
        self._closing = True
        for waiting in self._body_waits:
            if not waiting.done():
                waiting.set_result(None)
        for exchange in self._exchanges:
            exchange.controller.abort(STOPPING)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await _lifespan(receive, send)
        elif kind == "websocket" and (await receive()).get("type") == "websocket.connect":
            await send({"type": "websocket.close", "code": 1000})  # not a provider route

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = str(scope.get("method", ""))
        path = _route_path(scope)
        line = f"{_shown(method)} {_shown(path)}"
        provider = _provider(path, scope)
        answer = _Answer(send, provider, f"request-{next(self._request_ids)}")
        format = _format(path, scope)
        if path == MODELS_PATH:
            await self._models(method, answer, line)
            return
        if format is None:
            await answer.refuse(404, f"No route {_shown(method)} {_shown(path)}{_ROUTES_HINT}")
            logger.info("%s -> 404 not found", line)
            return
        if method != "POST":
            message = f"Method {method} is not allowed on {path}; use POST"
            await answer.refuse(405, message, (b"allow", b"POST"))
            logger.info("%s -> 405 method not allowed", line)
            return
        body = await self._read_body(receive)
        if body is None:
            logger.info("%s -> client went away before its request arrived", line)
            return
        if isinstance(body, _Stopped):
            await answer.refuse(503, "The fixture server is stopping", _NO_RETRY)
            logger.info("%s -> 503 stopping (its body was still arriving)", line)
            return
        if len(body) > MAX_BODY:
            message = f"The request body is larger than {MAX_BODY} bytes"
            await answer.refuse(413, message)
            logger.info("%s -> 413 request too large", line)
            return
        request = _parse_body(body)
        if isinstance(request, str):
            await answer.refuse(400, request)
            logger.info("%s -> 400 %s", line, _shown(request))  # may quote the body
            return
        if self._closing:
            await answer.refuse(503, "The fixture server is stopping", _NO_RETRY)
            logger.info("%s -> 503 stopping", line)
            return
        await self._respond(scope, format, answer, receive, body=body, request=request)

    async def _respond(
        self,
        scope: Scope,
        format: str,
        answer: _Answer,
        receive: Receive,
        *,
        body: bytes,
        request: dict[str, PlainJson],
    ) -> None:
        """Answer a model call that no refusal stopped (``request``: its ``body`` as JSON)
        with the adapter's next response. The recording proxy forwards it instead."""
        path = _route_path(scope)
        line = f"POST {_shown(path)}"
        copies = new_memo()  # the body's copy, which the reader then takes from
        frozen = cast("Mapping[str, JsonValue]", refreeze(request, copies))
        read, problems, refusal = self._read(format, request, answer.id, copies)
        if refusal is not None:
            self._calls.append(ServedCall(format, path, frozen, _request_of(read), None, problems))
            await answer.refuse(400, problems[0], code=refusal.code, param=refusal.param)
            logger.info("%s -> 400 %s", line, _shown(problems[0]))
            return
        renderer, streaming = self._renderer(scope, format, request)
        controller = AbortController()
        stream = self.adapter.stream(
            _request_of(read) or CourseModelRequest(answer.id), controller.signal
        )
        renderer.follow(stream)
        if stream._response_index is not None:  # an exhausted fixture took no response
            self._requests.append(frozen)
        call = ServedCall(format, path, frozen, _request_of(read), stream._response_index, problems)
        self._calls.append(call)
        exchange = _Exchange(
            stream,
            renderer,
            controller,
            answer.send,
            request_id=answer.header,
            streaming=streaming,
            # The fixture's schema version decides when streaming begins (an internal
            # field of the adapter, as the stream's are of the stream).
            version=self.adapter._version,
        )
        self._exchanges.add(exchange)
        try:
            await exchange.run(receive)
        finally:
            self._exchanges.discard(exchange)
            logger.info("%s -> %s", line, exchange.outcome())
            self._remember(format, read, stream, renderer)

    def _read(
        self,
        format: str,
        request: dict[str, PlainJson],
        request_id: str,
        copies: Memo | None = None,
    ) -> tuple[ReadRequest | None, tuple[str, ...], RequestReadError | None]:
        """``request`` read in ``format``'s vocabulary and checked against what this
        server sent: the reading (``None``: unreadable), its problems, and the error that
        refuses it (the read error, or the first failed check), if one does."""
        try:
            reader = cast("ReadRequestFunction", FORMATS[format].read_request)
            read = read_body(
                reader, request, request_id, self._sent, new_memo() if copies is None else copies
            )
        except RequestReadError as error:
            return None, (error.problem,), error if self.check_requests else None
        if not self.check_requests:
            return read, (), None
        checked = check(format, read, self._sent)
        refusal = RequestReadError(checked.problems[0]) if checked.refused else None
        return read, checked.problems, refusal

    def _remember(
        self,
        format: str,
        read: ReadRequest | None,
        stream: CourseModelStream,
        renderer: StreamRenderer,
    ) -> None:
        """Keep what a completed answer sent, for the checks of later requests."""
        response = stream._outcome
        if type(response) is not CourseModelResponse:
            return  # failed, or cut: the agent cannot bring it back as sent
        history = () if read is None else (*read.history, *read.messages)
        sent = SentResponse(
            format, response.response_id, response.message.content, history, renderer.sent_items()
        )
        self._sent.add(sent)

    def _renderer(
        self, scope: Scope, format: str, request: dict[str, PlainJson]
    ) -> tuple[StreamRenderer, bool]:
        """The renderer of a model call's answer, and whether the answer streams: the
        request's ``model`` and ``stream`` say, but Gemini's path says both."""
        if format == _gemini.FORMAT:
            route = _gemini.route(_route_path(scope), _query(scope))
            assert route is not None  # how the call was routed here
            return _gemini.Renderer(route.model, request, mode=route.mode), route.mode != "whole"
        model = request.get("model")
        renderer = self._renderers[format](
            model if type(model) is str and model else DEFAULT_MODEL, request
        )
        return renderer, request.get("stream") is True

    async def _aclose(self) -> None:
        """Release what the application holds, on its server's loop once serving has
        stopped: nothing here (the recording proxy closes its HTTP client)."""

    async def _models(self, method: str, answer: _Answer, line: str) -> None:
        if method != "GET":
            message = f"Method {method} is not allowed on {MODELS_PATH}; use GET"
            await answer.refuse(405, message, (b"allow", b"GET"))
            logger.info("%s -> 405 method not allowed", line)
            return
        await answer.reply(200, _models(answer.provider))
        logger.info("%s -> 200 models", line)

    async def _read_body(self, receive: Receive) -> bytes | _Stopped | None:
        """The whole request body; ``None`` if the client left, ``_STOPPED`` if the
        server began to stop while it was still arriving."""
        if self._closing:
            return _STOPPED
        stopping = asyncio.get_running_loop().create_future()
        self._body_waits.add(stopping)
        reading = asyncio.ensure_future(_read_body(receive))
        try:
            await asyncio.wait((reading, stopping), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._body_waits.discard(stopping)
            if not reading.done():
                reading.cancel()
                await asyncio.wait((reading,))
        return _STOPPED if reading.cancelled() else reading.result()


class _Stopped:
    """What ``FixtureApp._read_body`` gives when the server began to stop first."""


_STOPPED: Final = _Stopped()


class _Answer:
    """Who answers one request: its ``send``, its provider (for the error shape) and
    its request id (``id``), whose ``header`` every answer carries."""

    __slots__ = ("header", "id", "provider", "send")

    def __init__(self, send: Send, provider: str, request_id: str) -> None:
        self.send = send
        self.provider = provider
        self.id = request_id
        self.header = (_REQUEST_ID_HEADER[provider], request_id.encode())

    async def refuse(
        self,
        status: int,
        message: str,
        *headers: tuple[bytes, bytes],
        code: str | None = None,
        param: str | None = None,
    ) -> None:
        body = _refusal(self.provider, status, message, code=code, param=param)
        await self.reply(status, body, *headers)

    async def reply(
        self, status: int, body: Mapping[str, PlainJson], *headers: tuple[bytes, bytes]
    ) -> None:
        await self.send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [_JSON, self.header, *headers],
            }
        )
        await self.send({"type": "http.response.body", "body": _json_bytes(body)})


def _request_of(read: ReadRequest | None) -> CourseModelRequest | None:
    return None if read is None else read.request


def _renderer(module: ModuleType) -> type[StreamRenderer]:
    return cast("type[StreamRenderer]", module.Renderer)


async def _lifespan(receive: Receive, send: Send) -> None:
    """Nothing to set up or tear down: acknowledge both."""
    while True:
        kind = (await receive()).get("type")
        if kind == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif kind == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def _format(path: str, scope: Scope) -> str | None:
    """The format of the model route ``path`` names, or ``None`` when it names none."""
    format = ROUTES.get(path)
    if format is None and _gemini.route(path, _query(scope)) is not None:
        return _gemini.FORMAT
    return format


def _query(scope: Scope) -> str:
    """The request's query string (ASGI gives bytes; undecodable bytes stay as they are)."""
    query = scope.get("query_string", b"")
    return query.decode("latin-1") if isinstance(query, bytes) else ""


def _route_path(scope: Scope) -> str:
    """The request's path below where the application is mounted."""
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    if root and path.startswith(root):
        path = path[len(root) :]
    return path


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body (reading stops past ``MAX_BODY``); ``None`` if the client left."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return None
        part = message.get("body", b"")
        if isinstance(part, bytes) and part:
            parts.append(part)
            size += len(part)
            if size > MAX_BODY:
                break
        if not message.get("more_body", False):
            break
    return b"".join(parts)


def _parse_body(body: bytes) -> dict[str, PlainJson] | str:
    """The body as a JSON object, or why it is not one (strict JSON, as fixtures are)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"The request body is not UTF-8 (invalid byte at {exc.start})"
    try:
        value = loads(text)
    except JsonSyntaxError as error:
        return f"The request body is not strict JSON: {error.message} (at character {error.offset})"
    if type(value) is not dict:
        return "The request body must be a JSON object"
    return value


def _json_bytes(value: Mapping[str, PlainJson] | list[PlainJson]) -> bytes:
    return _utf8(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8. A lone surrogate (fixture strings may hold one) cannot be UTF-8;
    outside JSON strings there are none, so its ``\\uXXXX`` escape says the same thing."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def _shown(text: str) -> str:
    """Client text made safe for one log line: escaped and bounded."""
    return shorten(one_line(text), 200)


# -- one exchange -------------------------------------------------------------------------


class _ClientGone(Exception):
    """A send failed because the client went away."""


class _Exchange:
    """One request that took a response: its stream, its renderer, and how it went."""

    __slots__ = (
        "_request_id",
        "_responder",
        "_send",
        "chunks",
        "controller",
        "detail",
        "renderer",
        "status",
        "stream",
        "streaming",
        "version",
    )

    def __init__(
        self,
        stream: CourseModelStream,
        renderer: StreamRenderer,
        controller: AbortController,
        send: Send,
        *,
        request_id: tuple[bytes, bytes],
        streaming: bool,
        version: int = 1,
    ) -> None:
        self.stream = stream
        self.renderer = renderer
        self.controller = controller
        self.streaming = streaming
        self.version = version
        self._send = send
        self._request_id = request_id
        self._responder: asyncio.Task[None] | None = None
        self.chunks = 0
        self.status: int | None = None
        self.detail = "not answered"

    async def run(self, receive: Receive) -> None:
        """Respond, while watching for the client to leave; whichever ends first wins."""
        responder = self._responder = asyncio.ensure_future(self._respond())
        watcher = asyncio.ensure_future(_until_disconnect(receive))
        try:
            done, _ = await asyncio.wait((responder, watcher), return_when=asyncio.FIRST_COMPLETED)
            if responder not in done:
                self._gone()
        finally:
            # The other one, or both when this task itself is cancelled: neither task
            # outlives the exchange.
            responder.cancel()
            watcher.cancel()
            await asyncio.wait((responder, watcher))
        if not responder.cancelled():
            responder.result()  # a bug in a renderer surfaces as uvicorn's 500 / log line

    def cancel(self) -> None:
        """Stop responding at once (an abort that the responder could not act on)."""
        if self._responder is not None:
            self._responder.cancel()

    def _gone(self) -> None:
        self.detail = (
            f"{self._taken()}: the client went away after "
            f"{plural(self.chunks, 'chunk')} (stream aborted)"
        )

    async def _respond(self) -> None:
        stream = self.stream
        try:
            if self.streaming:
                await self._stream()
            else:
                await self._whole()
        except _ClientGone:
            self._gone()
        finally:
            await stream.aclose()

    async def _whole(self) -> None:
        try:
            self._check_gemini()
            response = await self.stream.result()
            if response.model is not None:
                self.renderer.model = response.model
            body = _json_bytes(self.renderer.whole(response))  # Gemini's may refuse a signature
        except FixtureProviderError as error:
            await self._error_response(error)
            return
        self.status = 200
        await self._start(200, _JSON)
        await self._send_raw({"type": "http.response.body", "body": body})
        self.detail = f"{self._taken()}: complete ({response.stop_reason}, not streamed)"

    async def _stream(self) -> None:
        stream = self.stream
        renderer = self.renderer
        first = None
        try:
            self._check_gemini()
            if self.version >= 2:
                # Streaming begins once the response_start was read, so that a later
                # delay is a wait between events, not before the status line.
                await stream._until_start()
                if stream.response_id is None:  # it failed before its start
                    await stream.result()
            else:
                first = await anext(stream, None)
        except FixtureProviderError as error:
            await self._error_response(error)  # nothing was streamed yet: an HTTP error
            return
        headers = _SSE
        if isinstance(renderer, _gemini.Renderer) and renderer.mode == "array":
            headers = [_JSON]  # streamGenerateContent without alt=sse: one JSON array
        self.status = 200
        self.detail = f"stream, {self._taken()}: streaming"
        await self._start(200, *headers)
        if first is None and self.version < 2:  # complete without a chunk
            response = await stream.result()
            text = self._open(response.response_id) + renderer.complete(response)
            await self._send_body(text, more=False)
            self.detail = f"stream, {self._taken()}: complete ({response.stop_reason}, 0 chunks)"
            return
        try:  # a renderer may refuse a chunk (Gemini: a signature that is not base64)
            text = self._open(cast("str", stream.response_id))
            if first is not None:
                self.chunks = 1
                text += renderer.chunk(first)
            if text:
                await self._send_body(text)
            async for chunk in stream:
                self.chunks += 1
                await self._send_body(renderer.chunk(chunk))
            response = await stream.result()
        except FixtureProviderError as error:
            await self._send_body(renderer.fail(error), more=False)
            self.detail = (
                f"stream, {self._taken()}: failed after {plural(self.chunks, 'chunk')}: "
                f"{error.code.value}"
            )
            return
        await self._send_body(renderer.complete(response), more=False)
        self.detail = (
            f"stream, {self._taken()}: complete "
            f"({response.stop_reason}, {plural(self.chunks, 'chunk')})"
        )

    def _open(self, response_id: str) -> str:
        """The renderer's opening, once the fixture's model and start usage (version 2)
        are known: the renderer reports them, the request's model otherwise."""
        stream, renderer = self.stream, self.renderer
        if stream.model is not None:
            renderer.model = stream.model
        renderer.start_usage = stream.start_usage
        return renderer.open(response_id)

    def _check_gemini(self) -> None:
        """Gemini's signatures, before anything is sent: google-genai decodes every one, so
        one that is not base64 is the fixture's fault (``PROVIDER_INVALID_FIXTURE``)."""
        records = self.stream._records
        if isinstance(self.renderer, _gemini.Renderer) and records is not None:
            _gemini.check_signatures(records, self._index() or 0)

    async def _error_response(self, error: FixtureProviderError) -> None:
        """A failure before anything was streamed: an HTTP error with the format's error
        body, the transport error's own status (version 2; else 500) and retry delay."""
        retryable = error.code is _Code.PROVIDER_TRANSPORT_ERROR
        headers = [_JSON] if retryable else [_JSON, _NO_RETRY]
        status = error.transport_status or 500
        headers += _retry_after(error.transport_retry_after)
        renderer = self.renderer
        value: Mapping[str, PlainJson] | list[PlainJson]
        if isinstance(renderer, _gemini.Renderer):  # its JSON-array stream wraps the body
            status, value = renderer.error_answer(error)
        else:
            value = renderer.error_body(error)
        self.status = status
        body = _json_bytes(value)
        await self._start(status, *headers)
        await self._send_raw({"type": "http.response.body", "body": body})
        taken = "" if self._index() is None else f"{self._taken()}: "
        self.detail = f"{taken}{error.code.value}" + (" (retryable)" if retryable else "")

    async def _start(self, status: int, *headers: tuple[bytes, bytes]) -> None:
        headers = (*headers, self._request_id)
        await self._send_raw({"type": "http.response.start", "status": status, "headers": headers})

    async def _send_body(self, text: str, *, more: bool = True) -> None:
        await self._send_raw({"type": "http.response.body", "body": _utf8(text), "more_body": more})

    async def _send_raw(self, message: Message) -> None:
        try:
            await self._send(message)
        except OSError as exc:  # servers other than uvicorn report a lost client so
            raise _ClientGone from exc

    def _index(self) -> int | None:
        # Which fixture response the call took (None: it took none, e.g. exhausted).
        return self.stream._response_index

    def _taken(self) -> str:
        index = self._index()
        return "no response" if index is None else f"response {index}"

    def outcome(self) -> str:
        """One line for the request log."""
        status = "-" if self.status is None else str(self.status)
        return f"{status} {self.detail}"


def _retry_after(seconds: float | None) -> list[tuple[bytes, bytes]]:
    """A provider's retry headers for a transport error's ``retryAfter`` (none without
    one): ``retry-after`` in whole seconds, rounded up as HTTP needs, and the exact
    ``retry-after-ms``, which the official SDKs read first."""
    if seconds is None:
        return []
    milliseconds = math.floor(seconds * 1000 + 0.5)  # rounded half up
    return [
        (b"retry-after", str(math.ceil(seconds)).encode()),
        (b"retry-after-ms", str(milliseconds).encode()),
    ]


async def _until_disconnect(receive: Receive) -> None:
    while (await receive()).get("type") != "http.disconnect":
        pass


# -- the public constructors --------------------------------------------------------------


def asgi_app(fixture: object, *, check_requests: bool = True) -> FixtureApp:
    """The ASGI application that serves ``fixture`` (a fixture, or an adapter you built).

    Mount it in a server of your own; ``serve`` runs it with uvicorn. A fixture is
    checked at once (``FixtureProviderError`` with ``PROVIDER_INVALID_FIXTURE``).
    """
    return FixtureApp(fixture, check_requests=check_requests)


def serve(
    fixture: object, *, host: str = "127.0.0.1", port: int = 0, check_requests: bool = True
) -> FixtureServer:
    """A ``FixtureServer`` for ``fixture`` (a fixture, or an adapter you built).

    Use it as a context manager (``with`` or ``async with``): entering starts it on
    ``host`` and ``port`` (0: any free port), leaving stops it. Needs the optional
    extra ``course[serve]`` (uvicorn): without it, a ``RuntimeError`` naming the extra.
    """
    return FixtureServer(FixtureApp(fixture, check_requests=check_requests), host=host, port=port)


# -- the server ---------------------------------------------------------------------------


def _uvicorn() -> ModuleType:
    """``_uvicorn``, whose server runs the application (uvicorn: the extra ``course[serve]``)."""
    try:
        import uvicorn  # noqa: F401, PLC0415  (optional extra, only for serving)
    except ImportError as exc:
        raise RuntimeError(
            "Serving fixtures needs uvicorn: install the extra course[serve] "
            "(pip install 'course[serve]')"
        ) from exc
    from . import _uvicorn  # noqa: PLC0415  (imports uvicorn)

    return _uvicorn


class FixtureServer:
    """A fixture served over HTTP/1.1 by uvicorn in a background thread.

    A context manager, sync and async (asyncio or trio): entering starts the server
    and returns it once it accepts connections; leaving stops it, aborting responses in
    flight, within ``STOP_TIMEOUT`` seconds. An entry that is interrupted (cancelled,
    Ctrl-C) stops what it started. A server runs once.
    """

    def __init__(self, app: FixtureApp, *, host: str = "127.0.0.1", port: int = 0) -> None:
        if not isinstance(app, FixtureApp):
            raise TypeError(f"FixtureServer needs a FixtureApp, got {type(app).__qualname__}")
        _check_address(host, port)
        self._servers = _uvicorn()
        self._app = app
        self._host = host
        self._port = port
        self._url: str | None = None
        self._server: Server | None = None
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._on_ready: Callable[[], None] | None = None
        self._failure: BaseException | None = None
        self._used = False

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<FixtureServer {self._url or f'{self._host}:{self._port}'} {state}>"

    @property
    def url(self) -> str:
        """``http://HOST:PORT``: the port actually bound, a wildcard host as loopback."""
        if self._url is None:
            raise RuntimeError("The server has not started: enter it first (with serve(...) as s)")
        return self._url

    @property
    def adapter(self) -> FixtureProviderAdapter:
        """The adapter whose responses are served."""
        return self._app.adapter

    @property
    def requests(self) -> tuple[Mapping[str, JsonValue], ...]:
        """The JSON bodies of the requests that took a response, in order, read-only."""
        return self._app.requests

    @property
    def calls(self) -> tuple[ServedCall, ...]:
        """Every model call, read and checked, in arrival order (``FixtureApp.calls``)."""
        return self._app.calls

    @property
    def app(self) -> FixtureApp:
        """The ASGI application being served."""
        return self._app

    @property
    def running(self) -> bool:
        """Whether the server is serving."""
        return self._thread is not None and self._thread.is_alive()

    # -- context managers ---------------------------------------------------------------

    def __enter__(self) -> FixtureServer:
        self._claim()
        try:
            self._launch()
            self._ready.wait(START_TIMEOUT)
        except BaseException:  # Ctrl-C while starting: stop what started, then re-raise
            self._stop()
            raise
        self._check_started()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop()

    async def __aenter__(self) -> FixtureServer:
        loop = _running_asyncio_loop()
        if loop is None:
            await _trio("async with serve(...)").to_thread.run_sync(self.__enter__)
            return self
        self._claim()
        ready = loop.create_future()
        try:
            self._launch(lambda: _resolve_soon(loop, ready))
            await ready
        except BaseException:  # cancelled while starting: stop what started, then re-raise
            # Blocking the loop for a moment: nothing was served yet, so stopping takes
            # milliseconds, and no second cancellation can interrupt it.
            self._stop()
            raise
        self._check_started()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if _running_asyncio_loop() is None:
            await _trio("async with serve(...)").to_thread.run_sync(self._stop)
        else:
            await asyncio.to_thread(self._stop)

    # -- starting and stopping ----------------------------------------------------------

    def _claim(self) -> None:
        if self._used:
            raise RuntimeError("A FixtureServer runs once; call serve() again for another")
        self._used = True

    def _launch(self, on_ready: Callable[[], None] | None = None) -> None:
        """Bind, and start the thread that serves; ``_ready`` is set once it serves or failed."""
        self._on_ready = on_ready
        listener = self._listener = _bind(self._host, self._port)
        config = self._servers.uvicorn.Config(self._app, **UVICORN_SETTINGS)
        server = self._server = self._servers.Server(
            config, on_ready=self._signal_ready, on_stop=self._app._abort, grace=ABORT_GRACE
        )
        thread = threading.Thread(
            target=self._run,
            args=(server, listener),
            name=f"course-fixture-server-{listener.getsockname()[1]}",
            daemon=True,
        )
        self._thread = thread
        thread.start()

    def _signal_ready(self) -> None:
        if self._ready.is_set():
            return
        self._ready.set()
        if self._on_ready is not None:
            self._on_ready()

    def _check_started(self) -> None:
        server, listener = self._server, self._listener
        if server is None or listener is None or not server.started:
            self._stop()
            raise RuntimeError(f"The fixture server did not start: {self._failure!r}")
        self._url = f"http://{_url_host(self._host, listener)}:{listener.getsockname()[1]}"

    def _run(self, server: Server, listener: socket.socket) -> None:
        """The thread: uvicorn on a new event loop of its own, until it stops."""
        try:
            asyncio.run(self._serve(server, listener))
        except BaseException as exc:
            if server.started:
                raise  # a failure while serving: the thread's own report shows it
            self._failure = exc  # uvicorn exits on a failed start: _check_started says why
        finally:
            listener.close()
            self._signal_ready()  # a start that failed is over too

    async def _serve(self, server: Server, listener: socket.socket) -> None:
        self._loop = asyncio.get_running_loop()
        try:
            await server.serve(sockets=[listener])
        finally:
            await self._app._aclose()

    def _stop(self) -> None:
        """Stop serving and wait for the thread; safe at any point of a start, and twice."""
        server, thread, listener = self._server, self._thread, self._listener
        if server is not None:
            server.request_exit()
        if thread is not None and thread.is_alive():
            thread.join(STOP_TIMEOUT)
        elif listener is not None and (thread is None or thread.ident is None):
            listener.close()  # bound, but no thread ever served it


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _trio(what: str) -> Any:
    """The running trio module; else ``TypeError``: neither asyncio nor trio runs us."""
    trio = sys.modules.get("trio")
    in_trio_run = getattr(getattr(trio, "lowlevel", None), "in_trio_run", None)
    if in_trio_run is None or not in_trio_run():
        raise TypeError(
            f"{what} needs a running asyncio or trio event loop; "
            "outside one, use the sync form: with serve(...) as server"
        )
    return trio


def _resolve_soon(loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]) -> None:
    """Resolve ``future`` on ``loop``, from any thread (a loop already closed is ignored)."""

    def resolve() -> None:
        if not future.done():
            future.set_result(None)

    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(resolve)


def _check_address(host: object, port: object) -> None:
    if not isinstance(host, str):
        raise TypeError(f"host must be a str, got {type(host).__qualname__}")
    if not host:
        raise ValueError("host must not be empty (use '0.0.0.0' or '::' for every address)")
    try:
        host.encode("idna")  # as the socket module names it to the resolver
    except UnicodeError:
        raise ValueError(f"host must be a host name or an address, got {host!r}") from None
    if type(port) is not int:
        raise TypeError(f"port must be an int, got {type(port).__qualname__}")
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be from 0 to 65535 (0: any free port), got {port}")


def _bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port``, not yet listening (uvicorn listens)."""
    family, kind, protocol, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    listener = socket.socket(family, kind, protocol)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
    except OSError:
        listener.close()
        raise
    return listener


def _url_host(host: str, listener: socket.socket) -> str:
    """How the URL names the host: a wildcard as loopback, IPv6 in brackets."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host  # a name, such as localhost
    if address.is_unspecified:
        return "[::1]" if listener.family == socket.AF_INET6 else "127.0.0.1"
    return f"[{address}]" if address.version == 6 else str(address)
