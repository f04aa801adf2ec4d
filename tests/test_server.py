"""The serve machinery: routing, what takes a response, when and how bytes are sent,
disconnects, stopping, and ``FixtureServer``'s life, independent of any wire format.

The ASGI application is driven in-process (a plain callable: scope, receive, send), so
the order of source steps and sends is observed exactly; ``FixtureServer`` runs on
loopback. A recording renderer stands in for the formats, so these tests pin the
server alone; ``test_server_sdk.py`` drives the real formats with the real SDKs.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2
import pytest
import uvicorn
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    AbortSignal,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    thaw,
)
from course.vendors import FixtureServer, asgi_app, serve
from course.vendors._rendering import StreamRenderer, error_words
from course.vendors._server import ROUTES, FixtureApp, Message

from .helpers import end, fixture, is_slow_step_report, roundtrip, run, start, text, tool
from .serve_helpers import RawClient, open_descriptors, server_tasks, server_threads, until

Code = FixtureProviderErrorCode
Log = list[tuple[str, object]]

# -- a renderer that says what it was asked ------------------------------------------------


def recording_renderers(log: Log | None = None) -> dict[str, type[StreamRenderer]]:
    """A renderer per format name, writing ``data: {...}`` lines that name the format."""
    renderers: dict[str, type[StreamRenderer]] = {}
    for name in ROUTES.values():

        class Renderer(StreamRenderer):
            format = name

            def _event(self, **data: object) -> str:
                if log is not None:
                    log.append(("render", data))
                return (
                    f"data: {json.dumps({'format': self.format, 'model': self.model, **data})}\n\n"
                )

            def open(self, response_id: str) -> str:
                return self._event(open=response_id)

            def chunk(self, chunk: CourseModelChunk) -> str:
                return self._event(chunk=chunk.to_dict())

            def complete(self, response: CourseModelResponse) -> str:
                return self._event(complete=response.stop_reason)

            def fail(self, error: FixtureProviderError) -> str:
                return self._event(fail=error.code.value)

            def whole(self, response: CourseModelResponse) -> dict[str, object]:  # type: ignore[override]
                return {"format": self.format, "model": self.model, "whole": response.to_dict()}

            @staticmethod
            def error_body(error: FixtureProviderError) -> dict[str, object]:  # type: ignore[override]
                code, message = error_words(error)
                return {"error": {"code": code, "message": message}}

        renderers[name] = Renderer
    return renderers


def app_for(data: object, log: Log | None = None) -> FixtureApp:
    return FixtureApp(data, renderers=recording_renderers(log))


# -- driving the application in-process ----------------------------------------------------


class Client:
    """One request to an ASGI app, and everything the app sent back."""

    def __init__(
        self,
        body: bytes | object,
        *,
        path: str = "/v1/chat/completions",
        method: str = "POST",
        log: Log | None = None,
        chunked: bool = False,
    ) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        # A body in two parts when asked, as a client may send it.
        self.parts = [raw[: len(raw) // 2], raw[len(raw) // 2 :]] if chunked else [raw]
        self.scope: dict[str, object] = {
            "type": "http",
            "method": method,
            "path": path,
            "root_path": "",
            "headers": [],
        }
        self.sent: list[Message] = []
        self.log = log if log is not None else []
        self.leave = asyncio.Event()
        self.send_error: BaseException | None = None

    async def receive(self) -> Message:
        if self.parts:
            part = self.parts.pop(0)
            return {"type": "http.request", "body": part, "more_body": bool(self.parts)}
        await self.leave.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if self.send_error is not None:
            raise self.send_error
        self.sent.append(message)
        self.log.append(("send", message["type"]))

    async def call(self, app: FixtureApp) -> Client:
        await app(self.scope, self.receive, self.send)
        return self

    @property
    def status(self) -> object:
        return self.sent[0]["status"]

    @property
    def headers(self) -> dict[bytes, bytes]:
        headers: list[tuple[bytes, bytes]] = self.sent[0]["headers"]  # type: ignore[assignment]
        return dict(headers)

    @property
    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.sent[1:]]  # type: ignore[misc]

    @property
    def body(self) -> bytes:
        return b"".join(self.bodies)

    def events(self) -> list[dict[str, object]]:
        lines = self.body.decode().split("\n\n")
        return [json.loads(line.removeprefix("data: ")) for line in lines if line]


def request(
    app: FixtureApp,
    body: bytes | object,
    **options: object,
) -> Client:
    client = Client(body, **options)  # type: ignore[arg-type]
    return run(client.call(app))


STREAM = {"model": "gpt-test", "stream": True}


# -- routes and what takes a response ------------------------------------------------------


@pytest.mark.parametrize(("path", "format"), list(ROUTES.items()))
def test_each_route_answers_in_its_format(path: str, format: str) -> None:
    app = app_for(roundtrip())
    client = request(app, STREAM, path=path)
    assert client.status == 200
    assert {event["format"] for event in client.events()} == {format}
    assert app.adapter.call_count == 1


@pytest.mark.parametrize(
    "path",
    ["/", "/v1", "/v1/chat/completions/", "/chat/completions", "/v1/model", "/V1/messages"],
)
def test_any_other_path_is_404_and_takes_no_response(path: str) -> None:
    app = app_for(roundtrip())
    client = request(app, STREAM, path=path)
    assert client.status == 404
    error = json.loads(client.body)["error"]
    assert error["type"] == "invalid_request_error"
    assert "/v1/chat/completions" in error["message"]  # says which routes there are
    assert (app.adapter.call_count, app.adapter.pending, app.requests) == (0, 2, ())


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])
@pytest.mark.parametrize("path", list(ROUTES))
def test_another_method_on_a_route_is_405_and_takes_no_response(path: str, method: str) -> None:
    app = app_for(roundtrip())
    client = request(app, STREAM, path=path, method=method)
    assert client.status == 405
    assert client.headers[b"allow"] == b"POST"
    assert (app.adapter.call_count, app.adapter.pending, app.requests) == (0, 2, ())


OPENAI_REFUSAL = {"message": str, "type": "invalid_request_error", "param": None, "code": None}


def refusal_shape(body: bytes) -> object:
    """An error body with each message replaced by its type, to compare shapes."""
    value = json.loads(body)
    inner = value["error"]
    assert isinstance(inner["message"], str)
    assert inner["message"]
    return {**value, "error": {**inner, "message": str}}


@pytest.mark.parametrize(
    ("method", "path", "status", "shape"),
    [
        ("POST", "/v1/nowhere", 404, {"error": OPENAI_REFUSAL}),
        ("GET", "/v1/chat/completions", 405, {"error": OPENAI_REFUSAL}),
        ("POST", "/v1/models", 405, {"error": OPENAI_REFUSAL}),
        ("POST", "/v1/messages/batches", 404, {
            "type": "error",
            "error": {"type": "not_found_error", "message": str},
        }),
        ("PUT", "/v1/messages", 405, {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": str},
        }),
        ("POST", "/v1beta/models/gemini-2.5-flash:countTokens", 404, {
            "error": {"code": 404, "message": str, "status": "NOT_FOUND"},
        }),
        ("POST", "/v1/tunedModels/mine", 404, {
            "error": {"code": 404, "message": str, "status": "NOT_FOUND"},
        }),
        ("GET", "/v1alpha/models/m:streamGenerateContent", 405, {
            "error": {"code": 405, "message": str, "status": "INVALID_ARGUMENT"},
        }),
    ],
)  # fmt: skip
def test_refusals_have_the_error_shape_of_the_provider_the_path_belongs_to(
    method: str, path: str, status: int, shape: object
) -> None:
    app = app_for(roundtrip())
    client = request(app, STREAM, path=path, method=method)
    assert client.status == status
    assert refusal_shape(client.body) == shape
    assert (app.adapter.call_count, app.requests) == (0, ())


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", b"[]"),
        ("/v1/messages", b"{"),
        ("/v1beta/models/m:generateContent", b"[]"),
    ],
)
def test_a_bad_body_is_400_in_the_routes_error_shape(path: str, body: bytes) -> None:
    client = request(app_for(roundtrip()), body, path=path)
    assert client.status == 400
    error = json.loads(client.body)
    if path == "/v1/messages":
        assert error["type"] == "error"
        assert error["error"]["type"] == "invalid_request_error"
    elif path.startswith("/v1beta/"):
        assert (error["error"]["code"], error["error"]["status"]) == (400, "INVALID_ARGUMENT")
    else:
        assert (error["error"]["type"], error["error"]["code"]) == ("invalid_request_error", None)


@pytest.mark.parametrize("anthropic", [False, True])
def test_get_models_lists_one_model_and_takes_no_response(anthropic: bool) -> None:
    app = app_for(roundtrip())
    client = Client(b"", path="/v1/models", method="GET")
    if anthropic:
        client.scope["headers"] = [(b"anthropic-version", b"2023-06-01")]
    run(client.call(app))
    assert client.status == 200
    assert client.headers[b"content-type"] == b"application/json"
    listed = json.loads(client.body)
    if anthropic:
        assert b"request-id" in client.headers
        assert listed == {
            "data": [
                {
                    "type": "model",
                    "id": "course-fixture",
                    "display_name": "course-fixture",
                    "created_at": "1970-01-01T00:00:00Z",
                }
            ],
            "has_more": False,
            "first_id": "course-fixture",
            "last_id": "course-fixture",
        }
    else:
        assert b"x-request-id" in client.headers
        assert listed == {
            "object": "list",
            "data": [
                {"id": "course-fixture", "object": "model", "created": 0, "owned_by": "course"}
            ],
        }
    assert (app.adapter.call_count, app.adapter.pending, app.requests) == (0, 2, ())


class Recorded(FixtureProviderAdapter):
    """An adapter that notes the id of every request it is asked for."""

    ids: list[str]

    def stream(self, request: CourseModelRequest, signal: AbortSignal | None = None) -> Any:
        self.ids.append(request.id)
        return super().stream(request, signal)


def test_every_answer_carries_the_providers_request_id_unique_in_the_server() -> None:
    adapter = Recorded(fixture([start(), text("a"), end()], [start(), text("b"), end()]))
    adapter.ids = []
    app = app_for(adapter)
    answers = [
        request(app, STREAM),  # streamed
        request(app, {"model": "m"}, path="/v1/messages"),  # whole
        request(app, STREAM, path="/v1/responses"),  # exhausted: a 500
        request(app, STREAM, path="/nowhere"),
        request(app, STREAM, path="/v1/messages", method="GET"),
        request(app, b"[]", path="/v1/messages"),
        request(app, b"", path="/v1/models", method="GET"),
    ]
    assert [client.status for client in answers] == [200, 200, 500, 404, 405, 400, 200]
    names = [b"x-request-id", b"request-id", b"x-request-id", b"x-request-id"]
    names += [b"request-id", b"request-id", b"x-request-id"]
    ids = []
    for client, name in zip(answers, names, strict=True):
        other = b"request-id" if name == b"x-request-id" else b"x-request-id"
        assert other not in client.headers
        ids.append(client.headers[name].decode())
    assert len(set(ids)) == len(ids)
    assert adapter.ids == ids[:3]  # the id of the request passed to stream() is the header's


@pytest.mark.parametrize(
    "body",
    [b"", b"[]", b"null", b"1", b'"text"', b"{", b'{"a": 1, "a": 2}', b'{"n": NaN}', b"\xff{}"],
    ids=["empty", "array", "null", "number", "string", "cut", "duplicate", "nan", "not-utf8"],
)
def test_a_body_that_is_not_a_json_object_is_400_and_takes_no_response(body: bytes) -> None:
    app = app_for(roundtrip())
    client = request(app, body)
    assert client.status == 400
    assert json.loads(client.body)["error"]["message"]
    assert (app.adapter.call_count, app.adapter.pending, app.requests) == (0, 2, ())


def test_anthropic_refusals_have_anthropics_error_shape() -> None:
    app = app_for(roundtrip())
    client = request(app, b"[]", path="/v1/messages")
    assert client.status == 400
    error = json.loads(client.body)
    assert error["type"] == "error"
    assert error["error"]["type"] == "invalid_request_error"


@settings(max_examples=60)
@given(
    body=st.one_of(
        st.binary(max_size=40),
        st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=4).map(
            lambda d: json.dumps(d).encode()
        ),
    ),
    chunked=st.booleans(),
)
def test_whatever_the_body_only_json_objects_take_a_response(body: bytes, chunked: bool) -> None:
    app = app_for(fixture([start(), text("hi"), end()]))
    client = request(app, body, chunked=chunked)
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        assert client.status == 200
        assert app.requests == (parsed,)
    else:
        assert client.status == 400
        assert app.requests == ()
    assert app.adapter.call_count == len(app.requests)


def provider_of(path: str) -> str:
    """Whose path it is, as SPEC-VENDORS says (an oracle written apart from the server)."""
    if path == "/v1/messages" or path.startswith("/v1/messages/"):
        return "anthropic"
    version, _, rest = path.removeprefix("/").partition("/")
    if version in {"v1", "v1beta", "v1alpha"} and rest.startswith(("models/", "tunedModels/")):
        return "google"
    return "openai"


def is_gemini_route(path: str) -> bool:
    """Whether ``path`` is one of Gemini's routes (SPEC-GEMINI's "The wire")."""
    parts = path.removeprefix("/").split("/")
    if len(parts) != 3 or parts[0] not in {"v1", "v1beta", "v1alpha"}:
        return False
    model, _, method = parts[2].rpartition(":")
    return (
        parts[1] in {"models", "tunedModels"}
        and bool(model)
        and method in {"generateContent", "streamGenerateContent"}
    )


PATHS = [*ROUTES, "/v1/models", "/v1/messages/batches", "/v1beta/models/m:generateContent", "/"]
GOOGLE_REFUSALS = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 405: "INVALID_ARGUMENT"}


@settings(max_examples=60)
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "HEAD"]),
    path=st.one_of(
        st.sampled_from(PATHS),
        st.lists(
            st.sampled_from(
                ["v1", "v1beta", "messages", "models", "x", "m:streamGenerateContent", ""]
            ),
            max_size=4,
        ).map(lambda parts: "/" + "/".join(parts)),
    ),
    body=st.sampled_from([b"{}", b'{"stream": true}', b"[]", b"{"]),
)
def test_every_answer_has_one_request_id_and_its_providers_error_shape(
    method: str, path: str, body: bytes
) -> None:
    app = app_for(fixture([start(), text("a"), end()]))
    client = request(app, body, path=path, method=method)
    provider = provider_of(path)
    name = b"request-id" if provider == "anthropic" else b"x-request-id"
    other = b"x-request-id" if provider == "anthropic" else b"request-id"
    assert (client.headers[name], other in client.headers) == (b"request-1", False)
    route = path in ROUTES or is_gemini_route(path)
    took = method == "POST" and route and body.startswith(b"{") and body != b"{"
    assert app.adapter.call_count == len(app.requests) == int(took)
    if client.status == 200:
        assert took or (method, path) == ("GET", "/v1/models")
        return
    error = json.loads(client.body)
    if provider == "anthropic":
        assert error["type"] == "error"
        assert error["error"]["type"] in {"not_found_error", "invalid_request_error"}
    elif provider == "google":
        status = error["error"]["code"]
        assert (status, error["error"]["status"]) == (client.status, GOOGLE_REFUSALS[status])
    else:
        assert error["error"]["type"] == "invalid_request_error"


def test_requests_are_the_bodies_that_took_a_response_in_order_read_only() -> None:
    app = app_for(fixture([start(), text("a"), end()], [start(), text("b"), end()]))
    first = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    request(app, first)
    request(app, {"model": "m2"}, path="/v1/messages")
    exhausted = request(app, {"model": "m3"}, path="/v1/responses")  # took no response
    assert exhausted.status == 500
    assert [thaw(body) for body in app.requests] == [first, {"model": "m2"}]
    body = app.requests[0]
    assert isinstance(body, Mapping)
    assert not isinstance(body, dict)
    with pytest.raises(TypeError):
        body["model"] = "changed"  # type: ignore[index]
    assert isinstance(body["messages"], tuple)
    copy = thaw(body)
    copy["model"] = "changed"
    assert app.requests[0]["model"] == "m"
    assert app.adapter.call_count == 3  # the exhausted call counts as a call


def test_a_body_sent_in_parts_is_read_whole() -> None:
    app = app_for(roundtrip())
    client = request(app, {**STREAM, "padding": "x" * 1000}, chunked=True)
    assert client.status == 200
    assert app.requests[0]["padding"] == "x" * 1000


def test_the_model_named_by_the_request_reaches_the_renderer() -> None:
    app = app_for(fixture([start(), text("a"), end()], [start(), text("b"), end()]))
    named = request(app, {"model": "claude-test", "stream": True}, path="/v1/messages")
    unnamed = request(app, {"stream": True, "model": 3})
    assert {event["model"] for event in named.events()} == {"claude-test"}
    assert {event["model"] for event in unnamed.events()} == {"course-fixture"}


# -- streaming: when and how bytes go out --------------------------------------------------


def test_each_chunk_is_sent_as_the_adapter_yields_it() -> None:
    log: Log = []

    async def records() -> AsyncIterator[object]:
        for record in [start("r-9"), text("a"), tool("c-1", x=1), text("b")]:
            log.append(("source", record["type"]))
            yield record
        log.append(("source", "response_end"))
        yield end("r-9", "tool_call")

    app = app_for(fixture(records()), log)
    client = request(app, STREAM, log=log)
    steps = [(kind, what if kind == "source" else "") for kind, what in log]
    assert log[:2] == [("source", "response_start"), ("source", "text_delta")]
    # Nothing is sent before the first chunk; then each chunk goes out before the next
    # record is pulled, each in its own body message.
    sends = [i for i, (kind, _) in enumerate(steps) if kind == "send"]
    pulls = [i for i, (kind, _) in enumerate(steps) if kind == "source"]
    assert sends[0] > pulls[1]
    for pull, following in itertools.pairwise(pulls[1:]):
        assert any(pull < s < following for s in sends)
    assert client.status == 200
    assert client.headers[b"content-type"] == b"text/event-stream"
    more = [m.get("more_body", False) for m in client.sent[1:]]
    assert more == [True, True, True, False]
    assert client.events() == [
        {"format": "openai-chat", "model": "gpt-test", "open": "r-9"},
        {"format": "openai-chat", "model": "gpt-test", "chunk": text_chunk("a", 0)},
        {
            "format": "openai-chat",
            "model": "gpt-test",
            "chunk": {
                "type": "toolCall",
                "id": "c-1",
                "name": "add",
                "arguments": {"x": 1},
                "contentIndex": 1,
            },
        },
        {"format": "openai-chat", "model": "gpt-test", "chunk": text_chunk("b", 2)},
        {"format": "openai-chat", "model": "gpt-test", "complete": "toolCall"},
    ]


def text_chunk(value: str, index: int) -> dict[str, object]:
    return {"type": "textDelta", "text": value, "contentIndex": index}


def test_a_response_without_chunks_opens_and_completes_in_one_send() -> None:
    app = app_for(fixture([start("r-0"), end("r-0")]))
    client = request(app, STREAM)
    assert client.status == 200
    assert len(client.bodies) == 1
    assert [list(event)[-1] for event in client.events()] == ["open", "complete"]


def test_not_streaming_answers_the_whole_response_as_json() -> None:
    app = app_for(roundtrip())
    client = request(app, {"model": "m", "stream": "true"}, path="/v1/messages")
    assert client.status == 200
    assert client.headers[b"content-type"] == b"application/json"
    assert len(client.bodies) == 1
    whole = json.loads(client.body)
    assert whole["format"] == "anthropic"
    assert whole["whole"]["responseId"] == "response-tool-001"
    assert whole["whole"]["stopReason"] == "toolCall"


@pytest.mark.parametrize("streaming", [True, False])
def test_a_failure_before_streaming_is_http_500_not_retried(streaming: bool) -> None:
    app = app_for(fixture([start(), {"type": "bogus"}]))
    client = request(app, {"stream": streaming})
    assert client.status == 500
    assert client.headers[b"x-should-retry"] == b"false"
    assert client.headers[b"content-type"] == b"application/json"
    error = json.loads(client.body)["error"]
    assert error["code"] == "PROVIDER_UNKNOWN_EVENT"


@pytest.mark.parametrize("streaming", [True, False])
def test_a_transport_error_before_streaming_is_a_retryable_500(streaming: bool) -> None:
    transport_error = {"type": "transport_error", "message": "overloaded", "code": "busy"}
    app = app_for(fixture([start(), transport_error]))
    client = request(app, {"stream": streaming})
    assert client.status == 500
    assert b"x-should-retry" not in client.headers
    assert json.loads(client.body) == {"error": {"code": "busy", "message": "overloaded"}}


@pytest.mark.parametrize("streaming", [True, False])
def test_exhaustion_is_a_500_that_is_not_retried(streaming: bool) -> None:
    app = app_for(fixture())
    client = request(app, {"stream": streaming})
    assert client.status == 500
    assert client.headers[b"x-should-retry"] == b"false"
    assert json.loads(client.body)["error"]["code"] == "PROVIDER_EXHAUSTED"


def test_a_failure_after_streaming_began_is_the_in_stream_error() -> None:
    app = app_for(fixture([start(), text("a"), {"type": "transport_error", "message": "cut"}]))
    client = request(app, STREAM)
    assert client.status == 200
    assert [list(event)[-1] for event in client.events()] == ["open", "chunk", "fail"]
    assert client.events()[-1]["fail"] == "PROVIDER_TRANSPORT_ERROR"
    assert client.sent[-1]["more_body"] is False


# -- clients that leave, and stopping ------------------------------------------------------


class Blocked:
    """An async source that yields some records, then waits until it is closed."""

    def __init__(self, *records: object) -> None:
        self.records = list(records)
        self.waiting = asyncio.Event()
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[object]:
        try:
            for record in self.records:
                yield record
            self.waiting.set()
            await asyncio.Event().wait()  # never set: only closing ends this
        finally:
            self.closed = True


def tasks_left() -> set[str]:
    current = asyncio.current_task()
    return {t.get_coro().__qualname__ for t in asyncio.all_tasks() if t is not current}  # type: ignore[union-attr]


@pytest.mark.parametrize("streaming", [True, False])
def test_a_client_that_leaves_aborts_the_stream_and_its_source(streaming: bool) -> None:
    source = Blocked(start(), text("a"))

    async def scenario() -> tuple[Client, set[str]]:
        app = app_for(fixture(source))
        client = Client({"stream": streaming})
        call = asyncio.ensure_future(client.call(app))
        await source.waiting.wait()
        client.leave.set()
        await call
        return client, tasks_left()

    client, left = run(scenario())
    assert source.closed
    assert left == set()
    if streaming:  # it had begun: the chunk went out, the stream never completed
        assert [list(event)[-1] for event in client.events()] == ["open", "chunk"]
        assert client.sent[-1]["more_body"] is True
    else:
        assert client.sent == []


def test_a_send_that_fails_with_oserror_aborts_the_stream() -> None:
    source = Blocked(start(), text("a"), text("b"))

    async def scenario() -> set[str]:
        app = app_for(fixture(source))
        client = Client(STREAM)
        client.send_error = ConnectionResetError("gone")
        await client.call(app)
        return tasks_left()

    assert run(scenario()) == set()
    assert source.closed


def test_the_app_keeps_serving_after_a_client_left() -> None:
    source = Blocked(start(), text("a"))

    async def scenario() -> Client:
        app = app_for(fixture(source, [start(), text("next"), end()]))
        leaving = Client(STREAM)
        call = asyncio.ensure_future(leaving.call(app))
        await source.waiting.wait()
        leaving.leave.set()
        await call
        return await Client(STREAM).call(app)

    client = run(scenario())
    assert client.status == 200
    assert client.events()[1]["chunk"]["text"] == "next"  # type: ignore[index]


def test_closing_aborts_responses_in_flight_with_the_formats_error() -> None:
    source = Blocked(start(), text("a"))

    async def scenario() -> tuple[Client, Client, set[str]]:
        app = app_for(fixture(source, [start(), end()]))
        reading = Client(STREAM)
        call = asyncio.ensure_future(reading.call(app))
        await source.waiting.wait()
        app.close()
        await call
        late = await Client(STREAM).call(app)
        return reading, late, tasks_left()

    reading, late, left = run(scenario())
    assert source.closed
    assert left == set()
    assert reading.events()[-1]["fail"] == "PROVIDER_ABORTED"
    assert reading.sent[-1]["more_body"] is False
    assert late.status == 503
    assert late.headers[b"x-should-retry"] == b"false"


def test_closing_cancels_a_responder_that_cannot_send(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("course.vendors._server.ABORT_GRACE", 0.0)
    source = Blocked(start(), text("a"))

    async def scenario() -> set[str]:
        app = app_for(fixture(source))
        stuck = Client(STREAM)
        sent_first = asyncio.Event()
        forever = asyncio.Event()

        async def send(message: Message) -> None:
            stuck.sent.append(message)
            if message["type"] == "http.response.body":
                sent_first.set()
                await forever.wait()  # a client that stopped reading: the send never ends

        call = asyncio.ensure_future(app(stuck.scope, stuck.receive, send))
        await sent_first.wait()
        app.close()
        await call
        return tasks_left()

    assert run(scenario()) == set()
    assert source.closed


def test_lifespan_events_are_acknowledged() -> None:
    async def scenario() -> list[Message]:
        incoming = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
        sent: list[Message] = []

        async def receive() -> Message:
            return incoming.pop(0)

        async def send(message: Message) -> None:
            sent.append(message)

        await app_for(roundtrip())({"type": "lifespan"}, receive, send)
        return sent

    assert run(scenario()) == [
        {"type": "lifespan.startup.complete"},
        {"type": "lifespan.shutdown.complete"},
    ]


def test_mounted_under_a_prefix_it_routes_below_it() -> None:
    app = app_for(roundtrip())
    client = Client(STREAM, path="/llm/v1/chat/completions")
    client.scope["root_path"] = "/llm"
    run(client.call(app))
    assert client.status == 200


# -- construction --------------------------------------------------------------------------


def test_asgi_app_serves_an_adapter_you_built_and_checks_a_fixture_at_once() -> None:
    adapter = FixtureProviderAdapter(roundtrip())
    assert asgi_app(adapter).adapter is adapter
    with pytest.raises(FixtureProviderError) as caught:
        asgi_app({"schemaVersion": 3, "responses": []})
    assert caught.value.code is Code.PROVIDER_INVALID_FIXTURE


@pytest.mark.parametrize(
    ("host", "port", "error"),
    [
        (None, 0, TypeError),
        (b"127.0.0.1", 0, TypeError),
        ("", 0, ValueError),
        ("127.0.0.1", "80", TypeError),
        ("127.0.0.1", True, TypeError),
        ("127.0.0.1", 1.0, TypeError),
        ("127.0.0.1", -1, ValueError),
        ("127.0.0.1", 65536, ValueError),
        ("a..b", 0, ValueError),  # no host name: an empty label
        ("a" * 300, 0, ValueError),  # no host name: a label over 63 characters
    ],
)
def test_serve_refuses_a_bad_host_or_port_at_once(
    host: object, port: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        serve(roundtrip(), host=host, port=port)  # type: ignore[arg-type]


def test_serve_without_uvicorn_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now fails
    with pytest.raises(RuntimeError, match=r"course\[serve\]"):
        serve(roundtrip())
    assert asgi_app(roundtrip()).adapter.pending == 2  # the app itself needs nothing


# -- FixtureServer on loopback -------------------------------------------------------------


def server_for(data: object, **address: object) -> FixtureServer:
    return FixtureServer(app_for(data), **address)  # type: ignore[arg-type]


def test_the_server_serves_on_the_port_it_bound_and_stops() -> None:
    server = server_for(roundtrip())
    with pytest.raises(RuntimeError, match="not started"):
        server.url  # noqa: B018
    with server as entered:
        assert entered is server
        assert server.running
        host, port = server.url.removeprefix("http://").rsplit(":", 1)
        assert host == "127.0.0.1"
        assert int(port) > 0
        response = httpx2.post(server.url + "/v1/chat/completions", json=STREAM)
        assert response.status_code == 200
        assert server.requests == (STREAM,)
        assert server.adapter.pending == 1
    assert not server.running
    with pytest.raises(ConnectionError), socket.create_connection((host, int(port)), timeout=5):
        pass


def test_a_server_runs_once() -> None:
    server = server_for(roundtrip())
    with server:
        with pytest.raises(RuntimeError, match="runs once"), server:
            pass  # pragma: no cover
        assert server.running  # the refused entry stopped nothing
    with pytest.raises(RuntimeError, match="runs once"), server:
        pass  # pragma: no cover


def test_a_wildcard_host_is_written_as_loopback() -> None:
    with server_for(roundtrip(), host="0.0.0.0") as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert httpx2.post(server.url + "/v1/messages", json={}).status_code == 200


def has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not has_ipv6_loopback(), reason="no IPv6 loopback here")
@pytest.mark.parametrize("host", ["::", "::1"])
def test_ipv6_hosts_are_bracketed(host: str) -> None:
    with server_for(roundtrip(), host=host) as server:
        assert server.url.startswith("http://[::1]:")
        assert httpx2.post(server.url + "/v1/responses", json={}).status_code == 200


def test_a_port_in_use_is_an_oserror_at_entry() -> None:
    with server_for(roundtrip()) as running:
        port = int(running.url.rsplit(":", 1)[1])
        taken = server_for(roundtrip(), port=port)
        with pytest.raises(OSError), taken:
            pass
        assert not taken.running


def test_async_with_starts_and_stops_without_blocking_the_loop() -> None:
    async def scenario() -> tuple[int, bool]:
        server = server_for(roundtrip())
        async with server, httpx2.AsyncClient() as client:
            response = await client.post(server.url + "/v1/messages", json={})
        return response.status_code, server.running

    assert run(scenario()) == (200, False)


def test_async_sources_run_on_the_servers_loop() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def records() -> AsyncIterator[object]:
        loops.append(asyncio.get_running_loop())
        for record in [start(), text("from a source"), end()]:
            yield record

    with server_for(fixture(records())) as server:
        response = httpx2.post(server.url + "/v1/chat/completions", json=STREAM)
    assert "from a source" in response.text
    assert loops and loops[0] is server._loop
    assert threading.current_thread() is threading.main_thread()


def test_leaving_while_a_client_reads_aborts_and_stops() -> None:
    closed = threading.Event()
    waiting = threading.Event()

    async def records() -> AsyncIterator[object]:
        try:
            yield start()
            yield text("first")
            waiting.set()
            await asyncio.Event().wait()
        finally:
            closed.set()

    server = server_for(fixture(records()))
    with server, httpx2.stream("POST", server.url + "/v1/chat/completions", json=STREAM) as reply:
        lines = reply.iter_lines()
        assert "open" in next(line for line in lines if line)
        assert waiting.wait(10)
        server.__exit__(None, None, None)  # leave while the client reads
        assert not server.running
        rest = [line for line in lines if line]
    assert closed.is_set()
    assert "PROVIDER_ABORTED" in rest[-1]


def test_the_server_is_quiet(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO)
    with server_for(fixture([start(), text("a"), end()])) as server:
        httpx2.post(server.url + "/v1/chat/completions", json=STREAM)
        httpx2.post(server.url + "/v1/chat/completions", json=STREAM)  # exhausted
        httpx2.get(server.url + "/nowhere")
    assert capfd.readouterr() == ("", "")
    records = [r for r in caplog.records if r.name.startswith(("uvicorn", "course", "asyncio"))]
    assert not [r for r in records if r.levelno >= logging.WARNING and not is_slow_step_report(r)]
    # Each line is written once its request is done: sorted, as two may finish together.
    assert sorted(r.getMessage() for r in records if r.name == "course.vendors.serve") == [
        "GET /nowhere -> 404 not found",
        "POST /v1/chat/completions -> 200 stream, response 0: complete (stop, 1 chunk)",
        "POST /v1/chat/completions -> 500 PROVIDER_EXHAUSTED",
    ]


# -- stopping: every connection ends, at once and quietly -----------------------------------


def problems_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and not is_slow_step_report(r)
    ]


def writes_paused(server: FixtureServer) -> bool:
    """Whether uvicorn holds a response back because its client does not read."""
    uvicorn_server = server._server
    assert uvicorn_server is not None
    connections = list(uvicorn_server.server_state.connections)
    return any(connection.flow.write_paused for connection in connections)  # type: ignore[union-attr]


async def endless() -> AsyncIterator[object]:
    """A response that streams text for as long as anyone sends it."""
    yield start()
    while True:
        yield text("x" * 1000)


def test_leaving_resets_a_client_that_stopped_reading(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    descriptors = open_descriptors()
    server = server_for(fixture(endless()))
    with server, RawClient(server.url, receive_buffer=4096) as client:
        client.send_head("/v1/chat/completions", len(json.dumps(STREAM)))
        client.send(json.dumps(STREAM).encode())
        assert client.sock.recv(12) == b"HTTP/1.1 200"  # streaming began; it reads no more
        assert until(lambda: writes_paused(server))  # what was sent fills every buffer
        server.__exit__(None, None, None)
        assert not server.running  # leaving returned within STOP_TIMEOUT, the thread ended
        # The client is not left hanging until its own read timeout: its connection ends.
        _, ending = client.read_to_end()
        assert ending in {"eof", "reset"}
    assert server_threads() == []
    assert open_descriptors() == descriptors  # no socket left open in this process
    assert problems_logged(caplog) == []
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("/v1/chat/completions", {"message": str, "type": "server_error", "code": None}),
        ("/v1/messages", {"type": "api_error", "message": str}),
    ],
)
def test_leaving_while_a_body_arrives_answers_503_quietly(
    path: str,
    error: dict[str, object],
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    server = server_for(roundtrip())
    with server, RawClient(server.url) as client:
        client.send_head(path, 100)
        client.send(b'{"stream": tru')  # and the rest never comes
        assert until(lambda: "RequestResponseCycle.run_asgi" in server_tasks(server))
        server.__exit__(None, None, None)
        assert not server.running
        response = client.response()
    assert response.status == 503
    assert response.headers[b"content-type"] == b"application/json"
    assert response.headers[b"x-should-retry"] == b"false"  # the SDKs do not retry it
    body = json.loads(response.body)
    inner = {key: str if key == "message" else value for key, value in body["error"].items()}
    assert {key: value for key, value in inner.items() if key != "param"} == error
    assert "stopping" in body["error"]["message"]
    assert server.adapter.call_count == 0
    assert problems_logged(caplog) == []
    assert capfd.readouterr() == ("", "")


def test_a_cancelled_async_start_stops_what_it_started() -> None:
    server = server_for(roundtrip())

    async def scenario() -> None:
        entering = asyncio.ensure_future(server.__aenter__())
        await asyncio.sleep(0)  # it is starting
        entering.cancel()
        with pytest.raises(asyncio.CancelledError):
            await entering

    # asyncio.run returns once its executor's threads are done, so a start that went on
    # in one of them after the cancellation has finished too.
    run(scenario())
    assert not server.running
    assert server_threads() == []


def test_a_timeout_while_starting_stops_what_it_started() -> None:
    server = server_for(roundtrip())

    async def scenario() -> None:
        async with asyncio.timeout(0), server:
            pytest.fail("entered")  # pragma: no cover

    with pytest.raises(TimeoutError):
        run(scenario())
    assert not server.running
    assert server_threads() == []


def test_ctrl_c_while_starting_stops_what_it_started(monkeypatch: pytest.MonkeyPatch) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")  # pragma: no cover
    main = threading.main_thread().ident
    assert main is not None
    starting = uvicorn.Server.startup

    async def interrupted(self: uvicorn.Server, sockets: object = None) -> None:
        signal.pthread_kill(main, signal.SIGINT)  # Ctrl-C, while the server starts
        await starting(self, sockets)  # type: ignore[arg-type]

    monkeypatch.setattr(uvicorn.Server, "startup", interrupted)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    server = server_for(roundtrip())
    try:
        with pytest.raises(KeyboardInterrupt), server:
            pytest.fail("entered")  # pragma: no cover
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not server.running
    assert server_threads() == []


async def post_from_a_thread(server: FixtureServer, library: str) -> int:
    import trio  # noqa: PLC0415

    assert library == "trio"
    response = await trio.to_thread.run_sync(
        lambda: httpx2.post(server.url + "/v1/messages", json={})
    )
    return response.status_code


def test_async_with_works_under_trio() -> None:
    trio = pytest.importorskip("trio")

    async def scenario() -> tuple[int, bool]:
        server = server_for(roundtrip())
        async with server:
            status = await post_from_a_thread(server, "trio")
        return status, server.running

    assert trio.run(scenario) == (200, False)


def test_async_with_works_under_anyio_on_trio() -> None:
    anyio = pytest.importorskip("anyio")
    pytest.importorskip("trio")

    async def scenario() -> tuple[int, bool]:
        server = server_for(roundtrip())
        async with server:
            status = await post_from_a_thread(server, "trio")
        return status, server.running

    assert anyio.run(scenario, backend="trio") == (200, False)


def test_async_with_outside_an_event_loop_says_to_use_with() -> None:
    server = server_for(roundtrip())
    entering = server.__aenter__()
    with pytest.raises(TypeError, match=r"with serve\(\.\.\.\)"):
        entering.send(None)
    assert not server.running


# -- edges ---------------------------------------------------------------------------------


def test_a_websocket_is_refused() -> None:
    async def scenario() -> list[Message]:
        sent: list[Message] = []

        async def receive() -> Message:
            return {"type": "websocket.connect"}

        async def send(message: Message) -> None:
            sent.append(message)

        await app_for(roundtrip())({"type": "websocket", "path": "/v1/messages"}, receive, send)
        return sent

    assert run(scenario()) == [{"type": "websocket.close", "code": 1000}]


def test_a_client_that_leaves_before_its_body_arrives_takes_no_response() -> None:
    app = app_for(roundtrip())
    client = Client(STREAM)
    client.parts = []
    client.leave.set()
    run(client.call(app))
    assert client.sent == []
    assert (app.adapter.call_count, app.requests) == (0, ())


def test_a_body_past_the_limit_is_413_and_takes_no_response(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("course.vendors._server.MAX_BODY", 100)
    app = app_for(roundtrip())
    client = request(app, {"padding": "x" * 200}, chunked=True)
    assert client.status == 413
    assert (app.adapter.call_count, app.requests) == (0, ())


def test_a_lone_surrogate_a_renderer_writes_raw_goes_out_as_its_json_escape() -> None:
    class Raw(recording_renderers()["openai-chat"]):  # type: ignore[misc]
        def chunk(self, chunk: CourseModelChunk) -> str:
            return f'data: "{chunk.text}"\n\n'  # type: ignore[union-attr]

    app = FixtureApp(fixture([start(), text("a\udc80b"), end()]), renderers={"openai-chat": Raw})
    client = request(app, STREAM)
    assert b'data: "a\\udc80b"\n\n' in client.body
    assert json.loads(client.body.split(b"\n\n")[1].removeprefix(b"data: ")) == "a\udc80b"


def test_the_server_says_what_it_is() -> None:
    server = server_for(roundtrip(), host="localhost")
    assert repr(server) == "<FixtureServer localhost:0 stopped>"
    assert server.app.adapter is server.adapter
    with server:
        assert server.url.startswith("http://localhost:")
        assert repr(server) == f"<FixtureServer {server.url} running>"
    with pytest.raises(TypeError):
        FixtureServer(roundtrip())  # type: ignore[arg-type]


def test_a_server_that_fails_to_start_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    async def failing_startup(self: object, sockets: object = None) -> None:
        raise SystemExit(3)  # what uvicorn does when it cannot start

    monkeypatch.setattr(uvicorn.Server, "startup", failing_startup)
    server = server_for(roundtrip())
    with pytest.raises(RuntimeError, match="did not start: SystemExit"), server:
        pass
    assert not server.running


# -- schema version 2: when streaming begins, statuses, retry delays -----------------------


def fixture_v2(*responses: list[object] | object) -> dict[str, object]:
    return {**fixture(*responses), "schemaVersion": 2}


def test_a_version_2_stream_opens_once_its_start_is_read_before_any_chunk() -> None:
    log: Log = []

    async def records() -> AsyncIterator[object]:
        for record in [start("r-2"), text("a")]:
            log.append(("source", record["type"]))
            yield record
        yield end("r-2")

    client = request(app_for(fixture_v2(records()), log), STREAM, log=log)
    # The status line and the opening go out before the first chunk's record is pulled.
    assert log[:4] == [
        ("source", "response_start"),
        ("send", "http.response.start"),
        ("render", {"open": "r-2"}),
        ("send", "http.response.body"),
    ]
    assert [list(event)[-1] for event in client.events()] == ["open", "chunk", "complete"]


def test_a_version_1_stream_still_opens_at_its_first_chunk() -> None:
    log: Log = []

    async def records() -> AsyncIterator[object]:
        for record in [start("r-1"), text("a")]:
            log.append(("source", record["type"]))
            yield record
        yield end("r-1")

    request(app_for(fixture(records()), log), STREAM, log=log)
    assert log[:3] == [
        ("source", "response_start"),
        ("source", "text_delta"),
        ("send", "http.response.start"),
    ]


def test_a_version_2_transport_error_after_the_start_is_the_in_stream_error() -> None:
    failure = {"type": "transport_error", "message": "cut", "code": "busy", "status": 503}
    streamed = request(app_for(fixture_v2([start(), failure])), STREAM)
    assert streamed.status == 200
    assert [list(event)[-1] for event in streamed.events()] == ["open", "fail"]
    # Version 1: nothing was streamed before it (no chunk), so it is an HTTP answer.
    version_1 = {"type": "transport_error", "message": "cut", "code": "busy"}
    client = request(app_for(fixture([start(), version_1])), STREAM)
    assert client.status == 500
    assert json.loads(client.body) == {"error": {"code": "busy", "message": "cut"}}


def test_a_version_2_response_without_chunks_opens_then_completes() -> None:
    client = request(app_for(fixture_v2([start("r-0"), end("r-0")])), STREAM)
    assert client.status == 200
    assert [list(event)[-1] for event in client.events()] == ["open", "complete"]


@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.parametrize(
    ("retry_after", "headers"),
    [
        (None, {}),
        (0, {b"retry-after": b"0", b"retry-after-ms": b"0"}),
        (0.01, {b"retry-after": b"1", b"retry-after-ms": b"10"}),
        (2, {b"retry-after": b"2", b"retry-after-ms": b"2000"}),
        (1.0005, {b"retry-after": b"2", b"retry-after-ms": b"1001"}),
        (86400, {b"retry-after": b"86400", b"retry-after-ms": b"86400000"}),
    ],
)
def test_a_transport_error_before_streaming_answers_with_its_status_and_retry_delay(
    streaming: bool, retry_after: float | None, headers: dict[bytes, bytes]
) -> None:
    failure: dict[str, object] = {"type": "transport_error", "message": "slow down"}
    failure |= {"code": "rate_limit_exceeded", "status": 429}
    if retry_after is not None:
        failure["retryAfter"] = retry_after
    client = request(app_for(fixture_v2([failure])), {"stream": streaming})
    assert client.status == 429
    sent = client.headers
    assert {name: sent[name] for name in sent if name.startswith(b"retry-after")} == headers
    assert b"x-should-retry" not in sent  # the SDK decides by the status
    assert json.loads(client.body) == {
        "error": {"code": "rate_limit_exceeded", "message": "slow down"}
    }


@pytest.mark.parametrize("streaming", [True, False])
def test_a_version_2_transport_error_without_a_status_is_500_with_its_retry_delay(
    streaming: bool,
) -> None:
    failure = {"type": "transport_error", "message": "later", "retryAfter": 3}
    client = request(app_for(fixture_v2([failure])), {"stream": streaming})
    assert client.status == 500
    assert (client.headers[b"retry-after"], client.headers[b"retry-after-ms"]) == (b"3", b"3000")


@settings(max_examples=50)
@given(
    status=st.integers(400, 599),
    retry_after=st.one_of(
        st.integers(0, 86400), st.floats(0, 86400, allow_nan=False, allow_infinity=False)
    ),
)
def test_retry_headers_round_up_to_seconds_and_to_the_millisecond(
    status: int, retry_after: float
) -> None:
    failure = {"type": "transport_error", "message": "m", "status": status}
    client = request(app_for(fixture_v2([{**failure, "retryAfter": retry_after}])), STREAM)
    assert client.status == status
    seconds = int(client.headers[b"retry-after"])
    milliseconds = int(client.headers[b"retry-after-ms"])
    assert seconds - 1 < retry_after <= seconds
    assert abs(milliseconds - retry_after * 1000) <= 0.5


def test_the_fixtures_model_reaches_the_renderer_else_the_requests() -> None:
    named = {**start("r-m"), "model": "fixture-model"}
    app = app_for(fixture_v2([named, text("a"), end("r-m")], [named, end("r-m")], [start()]))
    streamed = request(app, STREAM)
    assert {event["model"] for event in streamed.events()} == {"fixture-model"}
    whole = json.loads(request(app, {"model": "gpt-test"}).body)
    assert whole["model"] == "fixture-model"
    assert whole["whole"]["model"] == "fixture-model"
    # No model in the fixture: the request's, as in version 1.
    assert {event["model"] for event in request(app, STREAM).events()} == {"gpt-test"}


def test_the_renderer_follows_its_stream_and_has_the_start_usage_when_it_opens() -> None:
    seen: list[object] = []
    base = recording_renderers()["anthropic"]

    class Renderer(base):  # type: ignore[misc, valid-type]
        def open(self, response_id: str) -> str:
            assert self.stream is not None
            assert self.start_usage is self.stream.start_usage
            seen.append(self.start_usage)
            opening: str = super().open(response_id)
            return opening

    usage = {"inputTokens": 9, "outputTokens": 1, "cacheReadTokens": 4}
    records = [{**start(), "usage": usage}, end()]
    app = FixtureApp(fixture_v2(records, [start(), end()]), renderers={"anthropic": Renderer})
    for _ in range(2):
        request(app, STREAM, path="/v1/messages")
    assert [None if u is None else u.to_dict() for u in seen] == [usage, None]  # type: ignore[attr-defined]
