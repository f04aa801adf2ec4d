"""Serve a fixture to real SDK clients: the ASGI application and ``FixtureServer``.

``FixtureApp`` (what ``asgi_app`` returns) is a plain ASGI callable, standard library
only. It routes the three providers' endpoints, gives each request that qualifies the
adapter's next response, and writes that response in the provider's wire format
through the format's ``Renderer``: one send per chunk, as the adapter yields it.

Each such request is an *exchange* of two tasks. The *responder* pulls chunks and
sends them; the *watcher* waits for ``http.disconnect``. Whichever ends first ends the
other: a client that leaves cancels the responder, which closes its stream (so an
async source blocked mid-step is released too), and a response that ends stops the
watching. Stopping the server aborts every exchange in flight: the stream fails as
``PROVIDER_ABORTED``, which the client receives as the format's error, and a responder
that cannot even send that (a client that stopped reading) is cancelled soon after.

``FixtureServer`` runs the application with uvicorn (the optional extra
``course[serve]``) on its own event loop in a background thread: the documented
pattern of ``uvicorn.Server`` in a thread, on a socket bound here so that the port
is known, and a bind failure is the caller's ``OSError``, before any thread starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, Final, cast

from .._abort import AbortController
from .._adapter import FixtureProviderAdapter
from .._errors import FixtureProviderError, FixtureProviderErrorCode
from .._json import JsonValue, PlainJson, refreeze
from .._json_text import JsonSyntaxError, loads
from .._model import CourseModelRequest
from .._stream import CourseModelStream
from .._text import one_line, plural, shorten
from ._importing import FORMATS
from ._rendering import StreamRenderer

if TYPE_CHECKING:
    import uvicorn

__all__ = [
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
"""Each path the server answers, and the wire format it answers in."""

MAX_BODY: Final = 32 * 1024 * 1024
"""The largest request body read (bytes); a larger one is answered 413."""

ABORT_GRACE: Final = 1.0
"""Seconds an aborted response has to send its error before its responder is cancelled."""

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
    # A backstop only: stopping aborts responses in flight itself.
    "timeout_graceful_shutdown": int(STOP_TIMEOUT) - 2,
}
"""How ``FixtureServer`` configures uvicorn (``bench/serve.py`` runs its floor the same way)."""

DEFAULT_MODEL: Final = "course-fixture"
"""The model name reported when a request names none."""

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


# -- the application ----------------------------------------------------------------------


class FixtureApp:
    """The ASGI application serving one adapter's responses (see ``asgi_app``).

    ``adapter`` is the adapter it serves; ``requests`` the JSON bodies passed to it,
    in order, as read-only values. ``renderers`` (a seam for tests) replaces the
    formats' own ``Renderer`` classes, by format name.
    """

    def __init__(
        self,
        fixture: object,
        *,
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
        self._requests: list[Mapping[str, JsonValue]] = []
        self._exchanges: set[_Exchange] = set()
        self._closing = False

    @property
    def requests(self) -> tuple[Mapping[str, JsonValue], ...]:
        """The JSON bodies of the requests passed to the adapter, in order, read-only."""
        return tuple(self._requests)

    def close(self) -> None:
        """Abort every response in flight, and answer later requests 503.

        Call it on the event loop that runs the application.
        """
        self._closing = True
        loop = asyncio.get_running_loop()
        for exchange in self._exchanges:
            exchange.controller.abort(STOPPING)
            loop.call_later(ABORT_GRACE, exchange.cancel)

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
        format = ROUTES.get(path)
        if format is None:
            await _reply(send, 404, _client_error(None, "not_found", f"No route {path!r}"))
            logger.info("%s -> 404 not found", line)
            return
        if method != "POST":
            message = f"Method {method} is not allowed on {path}; use POST"
            headers = [(b"allow", b"POST")]
            await _reply(send, 405, _client_error(format, "method_not_allowed", message), headers)
            logger.info("%s -> 405 method not allowed", line)
            return
        body = await _read_body(receive)
        if body is None:
            logger.info("%s -> client went away before its request arrived", line)
            return
        if len(body) > MAX_BODY:
            message = f"The request body is larger than {MAX_BODY} bytes"
            await _reply(send, 413, _client_error(format, "request_too_large", message))
            logger.info("%s -> 413 request too large", line)
            return
        request = _parse_body(body)
        if isinstance(request, str):
            await _reply(send, 400, _client_error(format, "invalid_request_error", request))
            logger.info("%s -> 400 %s", line, _shown(request))  # may quote the body
            return
        if self._closing:
            message = "The fixture server is stopping"
            await _reply(send, 503, _client_error(format, "unavailable", message), [_NO_RETRY])
            logger.info("%s -> 503 stopping", line)
            return
        model = request.get("model")
        renderer = self._renderers[format](model if type(model) is str and model else DEFAULT_MODEL)
        controller = AbortController()
        call = CourseModelRequest(f"request-{self.adapter.call_count + 1}")
        stream = self.adapter.stream(call, controller.signal)
        self._requests.append(cast("Mapping[str, JsonValue]", refreeze(request)))
        exchange = _Exchange(stream, renderer, controller, send, request.get("stream") is True)
        self._exchanges.add(exchange)
        try:
            await exchange.run(receive)
        finally:
            self._exchanges.discard(exchange)
            logger.info("%s -> %s", line, exchange.outcome())


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


def _client_error(format: str | None, kind: str, message: str) -> dict[str, PlainJson]:
    """A refusal that took no response, in the route's error shape."""
    if format == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": kind}}


async def _reply(
    send: Send,
    status: int,
    body: Mapping[str, PlainJson],
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    await send(
        {"type": "http.response.start", "status": status, "headers": [_JSON, *(headers or [])]}
    )
    await send({"type": "http.response.body", "body": _json_bytes(body)})


def _json_bytes(value: Mapping[str, PlainJson]) -> bytes:
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
        "_responder",
        "_send",
        "chunks",
        "controller",
        "detail",
        "renderer",
        "status",
        "stream",
        "streaming",
    )

    def __init__(
        self,
        stream: CourseModelStream,
        renderer: StreamRenderer,
        controller: AbortController,
        send: Send,
        streaming: bool,
    ) -> None:
        self.stream = stream
        self.renderer = renderer
        self.controller = controller
        self.streaming = streaming
        self._send = send
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
            response = await self.stream.result()
        except FixtureProviderError as error:
            await self._error_response(error)
            return
        self.status = 200
        body = _json_bytes(self.renderer.whole(response))
        await self._send_raw({"type": "http.response.start", "status": 200, "headers": [_JSON]})
        await self._send_raw({"type": "http.response.body", "body": body})
        self.detail = f"{self._taken()}: complete ({response.stop_reason}, not streamed)"

    async def _stream(self) -> None:
        stream = self.stream
        renderer = self.renderer
        try:
            first = await anext(stream, None)
        except FixtureProviderError as error:
            await self._error_response(error)  # nothing was streamed yet: HTTP 500
            return
        self.status = 200
        self.detail = f"stream, {self._taken()}: streaming"
        await self._send_raw({"type": "http.response.start", "status": 200, "headers": _SSE})
        if first is None:  # complete without a chunk
            response = await stream.result()
            text = renderer.open(response.response_id) + renderer.complete(response)
            await self._send_body(text, more=False)
            self.detail = f"stream, {self._taken()}: complete ({response.stop_reason}, 0 chunks)"
            return
        self.chunks = 1
        await self._send_body(
            renderer.open(cast("str", stream.response_id)) + renderer.chunk(first)
        )
        try:
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

    async def _error_response(self, error: FixtureProviderError) -> None:
        """A failure before anything was streamed: HTTP 500 with the format's error body."""
        retryable = error.code is _Code.PROVIDER_TRANSPORT_ERROR
        headers = [_JSON] if retryable else [_JSON, _NO_RETRY]
        self.status = 500
        body = _json_bytes(self.renderer.error_body(error))
        await self._send_raw({"type": "http.response.start", "status": 500, "headers": headers})
        await self._send_raw({"type": "http.response.body", "body": body})
        taken = "" if self._index() is None else f"{self._taken()}: "
        self.detail = f"{taken}{error.code.value}" + (" (retryable)" if retryable else "")

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


async def _until_disconnect(receive: Receive) -> None:
    while (await receive()).get("type") != "http.disconnect":
        pass


# -- the public constructors --------------------------------------------------------------


def asgi_app(fixture: object) -> FixtureApp:
    """The ASGI application that serves ``fixture`` (a fixture, or an adapter you built).

    Mount it in a server of your own; ``serve`` runs it with uvicorn. A fixture is
    checked at once (``FixtureProviderError`` with ``PROVIDER_INVALID_FIXTURE``).
    """
    return FixtureApp(fixture)


def serve(fixture: object, *, host: str = "127.0.0.1", port: int = 0) -> FixtureServer:
    """A ``FixtureServer`` for ``fixture`` (a fixture, or an adapter you built).

    Use it as a context manager (``with`` or ``async with``): entering starts it on
    ``host`` and ``port`` (0: any free port), leaving stops it. Needs the optional
    extra ``course[serve]`` (uvicorn): without it, a ``RuntimeError`` naming the extra.
    """
    return FixtureServer(FixtureApp(fixture), host=host, port=port)


# -- the server ---------------------------------------------------------------------------


def _uvicorn() -> ModuleType:
    try:
        import uvicorn  # noqa: PLC0415  (optional extra, only for serving)
    except ImportError as exc:
        raise RuntimeError(
            "Serving fixtures needs uvicorn: install the extra course[serve] "
            "(pip install 'course[serve]')"
        ) from exc
    return uvicorn


class FixtureServer:
    """A fixture served over HTTP/1.1 by uvicorn in a background thread.

    A context manager, sync and async: entering starts the server and returns it
    once it accepts connections; leaving stops it, aborting responses in flight,
    within ``STOP_TIMEOUT`` seconds. A server runs once.
    """

    def __init__(self, app: FixtureApp, *, host: str = "127.0.0.1", port: int = 0) -> None:
        if not isinstance(app, FixtureApp):
            raise TypeError(f"FixtureServer needs a FixtureApp, got {type(app).__qualname__}")
        _check_address(host, port)
        self._uvicorn = _uvicorn()
        self._app = app
        self._host = host
        self._port = port
        self._url: str | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
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
        """The JSON bodies of the requests passed to the adapter, in order, read-only."""
        return self._app.requests

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
        self._start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop()

    async def __aenter__(self) -> FixtureServer:
        await asyncio.to_thread(self._start)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self._stop)

    # -- starting and stopping ----------------------------------------------------------

    def _start(self) -> None:
        if self._used:
            raise RuntimeError("A FixtureServer runs once; call serve() again for another")
        self._used = True
        listener = _bind(self._host, self._port)
        uvicorn = self._uvicorn
        server = uvicorn.Server(uvicorn.Config(self._app, **UVICORN_SETTINGS))
        self._server = server
        thread = threading.Thread(
            target=self._run,
            args=(server, listener),
            name=f"course-fixture-server-{listener.getsockname()[1]}",
            daemon=True,
        )
        self._thread = thread
        thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        # uvicorn says it is serving by a flag: the documented pattern polls it.
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.001)
        if not server.started:
            self._stop()
            listener.close()
            raise RuntimeError(f"The fixture server did not start: {self._failure!r}")
        self._url = f"http://{_url_host(self._host, listener)}:{listener.getsockname()[1]}"

    def _run(self, server: uvicorn.Server, listener: socket.socket) -> None:
        """The thread: uvicorn on a new event loop of its own, until it stops."""
        try:
            asyncio.run(self._serve(server, listener))
        except BaseException as exc:
            if server.started:
                raise  # a failure while serving: the thread's own report shows it
            self._failure = exc  # uvicorn exits on a failed start: _start says why

    async def _serve(self, server: uvicorn.Server, listener: socket.socket) -> None:
        self._loop = asyncio.get_running_loop()
        await server.serve(sockets=[listener])

    def _stop(self) -> None:
        thread, server, loop = self._thread, self._server, self._loop
        if thread is None or server is None or not thread.is_alive():
            return
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(self._app.close)
        server.should_exit = True
        thread.join(STOP_TIMEOUT - 1)
        if thread.is_alive():
            server.force_exit = True
            thread.join(1)


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
