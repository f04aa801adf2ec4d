"""``course.vendors.record``: the recording proxy, over real HTTP on loopback.

The upstream is a plain ASGI app (``tests/record_helpers.py``) answering with the
repository's recordings in several network chunks. Each test drives the proxy with a
plain HTTP client (``httpx2``) and reads what the client received, what the upstream
received, and the fixture file written on leaving. The official SDKs through the proxy
are ``tests/test_record_sdk.py``'s; the pure parts (redaction, timing) are tested
alone at the end.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import socket
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, cast

import httpx2
import pytest

import course.vendors
from course import thaw
from course._json import PlainJson
from course.vendors import FixtureRecorder, RecordingError, RecordingErrorCode, import_recording
from course.vendors import record as record_to
from course.vendors._answer import Answer, Ending
from course.vendors._record import _owners, _time
from course.vendors._server import FixtureServer, serve

from .helpers import roundtrip
from .record_helpers import (
    ANTHROPIC_KEY,
    GOOGLE_KEY,
    JSON,
    OPENAI_KEY,
    PATHS,
    SECRETS,
    SSE,
    Reply,
    events,
    pieces,
    read_fixture,
    recording,
    upstream,
)

STREAM: Final = {"model": "m", "stream": True, "messages": []}
BEARER: Final = {"authorization": f"Bearer {OPENAI_KEY}"}


def recorder(path: Path, server: FixtureServer, *, timing: bool = False) -> FixtureRecorder:
    """A recorder whose three providers all go to ``server``."""
    url = server.url
    return record_to(
        path, upstreams={"openai": url, "anthropic": url, "gemini": url}, timing=timing
    )


def records_of(path: Path) -> list[list[dict[str, object]]]:
    """Each written response's records."""
    fixture = read_fixture(path)
    assert fixture["schemaVersion"] == 2
    return [response["records"] for response in fixture["responses"]]  # type: ignore[attr-defined]


def imported(body: bytes, format: str = "openai-chat") -> list[dict[str, object]]:
    """The records of ``body`` imported alone, as the recorder must write them."""
    records = thaw(import_recording(body, format=format).response)["records"]
    assert isinstance(records, list)
    return cast("list[dict[str, object]]", records)


class Settled(logging.Handler):
    """Counts the recorder's log lines (one per call, once it is recorded)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []
        self.changed = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self.changed:
            self.lines.append(record.getMessage())
            self.changed.notify_all()

    def wait(self, count: int) -> list[str]:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.lines) >= count, 30), self.lines
            return list(self.lines)


@contextmanager
def settled() -> Iterator[Settled]:
    logger = logging.getLogger("course.vendors.record")
    handler = Settled()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def free_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


# -- the API --------------------------------------------------------------------------------


def test_record_and_its_recorder_are_public() -> None:
    assert {"record", "FixtureRecorder"} <= set(course.vendors.__all__)
    assert course.vendors.record is record_to


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"path": 3}, TypeError, "path must be a str or a path"),
        ({"path": b"f.json"}, TypeError, "path must be a str or a path"),
        ({"path": ""}, ValueError, "path must not be empty"),
        ({"upstreams": ["openai"]}, TypeError, "upstreams must be a mapping"),
        ({"upstreams": {"azure": "https://x"}}, ValueError, "'azure' is not a provider"),
        ({"upstreams": {"openai": 1}}, TypeError, "upstreams['openai'] must be a str"),
        ({"upstreams": {"openai": "ftp://x"}}, ValueError, "must be an http or https URL"),
        ({"upstreams": {"openai": "api.openai.com"}}, ValueError, "http or https URL"),
        ({"upstreams": {"openai": "http://[::1"}}, ValueError, "http or https URL"),
        ({"upstreams": {1: "http://x"}}, ValueError, "1 is not a provider"),
        ({"upstreams": {"openai": "https://x/?a=1"}}, ValueError, "no query or fragment"),
        ({"timing": 1}, TypeError, "timing must be True or False"),
        ({"host": 1}, TypeError, "host must be a str"),
        ({"port": 70000}, ValueError, "port must be from 0 to 65535"),
    ],
)
def test_bad_arguments_are_refused_at_the_call(
    tmp_path: Path, arguments: dict[str, object], error: type[Exception], message: str
) -> None:
    given: dict[str, object] = {"path": tmp_path / "f.json", **arguments}
    with pytest.raises(error, match=message.replace("[", r"\[").replace("?", r"\?")):
        record_to(**given)  # type: ignore[arg-type]


@pytest.mark.parametrize("module", ["httpx2", "uvicorn"])
def test_without_the_extra_record_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    monkeypatch.setitem(__import__("sys").modules, module, None)
    with pytest.raises(RuntimeError, match=r"course\[record\]"):
        record_to(tmp_path / "f.json")


def test_the_url_is_known_once_entered_and_a_recorder_runs_once(tmp_path: Path) -> None:
    recorder_ = record_to(tmp_path / "f.json")
    with pytest.raises(RuntimeError, match="enter it first"):
        _ = recorder_.url
    with recorder_:
        assert recorder_.url.startswith("http://127.0.0.1:")
        assert recorder_.running
        assert "recording" in repr(recorder_)
    assert not recorder_.running
    with pytest.raises(RuntimeError, match="runs once"), recorder_:
        pass


# -- what is forwarded, and what is answered as serve answers it ----------------------------


def test_the_request_goes_upstream_unchanged_but_for_its_hop_by_hop_headers(
    tmp_path: Path,
) -> None:
    body = '{"model":  "m", "stream": true, "messages": [], "note": "é ✓"}'.encode()
    with upstream(Reply(events(recording("openai-chat", "text")))) as (server, app):
        # The upstream's base URL has a path of its own: the route is appended to it.
        url = server.url + "/gateway/openai/"
        with record_to(tmp_path / "f.json", upstreams={"openai": url}) as proxy:
            headers = [
                ("authorization", f"Bearer {OPENAI_KEY}"),
                ("content-type", "application/json"),
                ("x-custom", "kept"),
                ("x-custom", "twice"),
                ("cookie", "session=abc"),
                ("accept-encoding", "gzip, br"),
                ("connection", "keep-alive, x-private"),
                ("x-private", "hop-by-hop, named by connection"),
                ("keep-alive", "timeout=5"),
                ("te", "trailers"),
                ("proxy-authorization", "Basic cHJveHk6c2VjcmV0"),
            ]
            reply = httpx2.post(
                proxy.url + "/v1/chat/completions?api-version=2024-10&x=%2F",
                content=body,
                headers=headers,
            )
            assert reply.status_code == 200
    (seen,) = app.seen
    assert (seen.method, seen.path) == ("POST", "/gateway/openai/v1/chat/completions")
    assert seen.query == b"api-version=2024-10&x=%2F"
    assert seen.body == body
    names = [name.decode() for name, _ in seen.headers]
    assert seen.header("authorization") == [f"Bearer {OPENAI_KEY}"]
    assert seen.header("x-custom") == ["kept", "twice"]
    assert seen.header("cookie") == ["session=abc"]
    assert seen.header("accept-encoding") == ["identity"]
    assert seen.header("host") == [server.url.removeprefix("http://")]
    assert seen.header("content-length") == [str(len(body))]
    for gone in ("connection", "x-private", "keep-alive", "te", "proxy-authorization"):
        assert gone not in names


def test_the_answer_comes_back_unchanged_but_for_its_hop_by_hop_headers(tmp_path: Path) -> None:
    body = recording("openai-chat", "tool_call")
    headers = [
        *SSE,
        (b"x-request-id", b"req_upstream_123"),
        (b"openai-processing-ms", b"412"),
        (b"set-cookie", b"__cf_bm=abc; path=/"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"x-hop"),
        (b"x-hop", b"dropped"),
    ]
    with (
        upstream(Reply(pieces(body), headers=headers)) as (server, _),
        recorder(tmp_path / "f.json", server) as proxy,
        httpx2.stream("POST", proxy.url + "/v1/chat/completions", json=STREAM) as reply,
    ):
        received = b"".join(reply.iter_raw())
        assert reply.status_code == 200
        assert reply.headers["content-type"] == "text/event-stream"
        assert reply.headers["x-request-id"] == "req_upstream_123"
        assert reply.headers["openai-processing-ms"] == "412"
        assert reply.headers["set-cookie"] == "__cf_bm=abc; path=/"
        assert "x-hop" not in reply.headers
        assert reply.headers.get("transfer-encoding") == "chunked"  # the proxy's own framing
        assert len(reply.headers.get_list("date")) == 1
    assert received == body


def every_recording() -> list[tuple[str, bytes]]:
    return [
        (format, path.read_bytes())
        for format in PATHS
        for path in sorted((Path(__file__).parent / "recordings" / format).glob("*.sse"))
    ]


def importable(format: str, body: bytes) -> bool:
    try:
        imported(body, format)
    except RecordingError:
        return False
    return True


def test_the_client_receives_the_upstreams_bytes_exactly(tmp_path: Path) -> None:
    # Every recording of the repository, cut anywhere (inside UTF-8 characters too).
    answers = [(format, body) for format, body in every_recording() if importable(format, body)]
    replies = [Reply(pieces(body, 401)) for _, body in answers]
    with upstream(*replies) as (server, _), recorder(tmp_path / "f.json", server) as proxy:
        for format, body in answers:
            assert httpx2.post(proxy.url + PATHS[format], json=STREAM).content == body
    assert records_of(tmp_path / "f.json") == [imported(body, format) for format, body in answers]


def test_an_answer_that_cannot_be_imported_reaches_the_client_exactly_all_the_same(
    tmp_path: Path,
) -> None:
    answers = [(f, body) for f, body in every_recording() if not importable(f, body)]
    assert answers
    replies = [Reply(pieces(body, 401)) for _, body in answers]
    with (
        upstream(*replies) as (server, _),
        pytest.raises(RecordingError),
        recorder(tmp_path / "f.json", server) as proxy,
    ):
        for format, body in answers:
            assert httpx2.post(proxy.url + PATHS[format], json=STREAM).content == body


@pytest.mark.parametrize("streamed", [True, False], ids=["stream", "whole-body"])
def test_the_first_chunk_reaches_the_client_before_the_upstream_sends_its_last(
    tmp_path: Path, streamed: bool
) -> None:
    body = recording("anthropic", "tool_use")
    gate = threading.Event()
    chunks = events(body) if streamed else pieces(body, 200)
    reply = Reply(chunks, headers=SSE if streamed else JSON, gate=gate, gate_at=1)
    with upstream(reply) as (server, _), recorder(tmp_path / "f.json", server) as proxy:
        try:
            with httpx2.stream("POST", proxy.url + "/v1/messages", json=STREAM) as answer:
                parts = answer.iter_raw()
                first = next(parts)
                # The upstream is held after its first chunk: nothing buffered it whole.
                assert reply.sent == 1 < len(chunks)
                assert body.startswith(first)
                gate.set()
                assert first + b"".join(parts) == body
        finally:
            gate.set()
        if not streamed:
            proxy._stop()  # a whole SSE-shaped body read as JSON: not this test's concern
            return


def test_responses_are_written_in_the_order_the_requests_arrived(tmp_path: Path) -> None:
    slow_body, fast_body = recording("openai-chat", "text"), recording("anthropic", "text")
    gate = threading.Event()
    slow = Reply(events(slow_body), gate=gate, gate_at=1)
    with (
        upstream(slow, Reply(events(fast_body))) as (server, app),
        recorder(tmp_path / "f.json", server) as proxy,
        httpx2.stream("POST", proxy.url + "/v1/chat/completions", json=STREAM) as first,
    ):
        parts = first.iter_raw()
        next(parts)  # the first request has reached the upstream, and is held there
        second = httpx2.post(proxy.url + "/v1/messages", json=STREAM)
        assert second.content == fast_body  # it ended first
        gate.set()
        assert b"".join(parts)
        assert len(app.seen) == 2
        assert [thaw(r) for r in proxy.requests] == [STREAM, STREAM]
    assert records_of(tmp_path / "f.json") == [
        imported(slow_body),
        imported(fast_body, "anthropic"),
    ]


def test_requests_are_the_forwarded_bodies_in_order_read_only(tmp_path: Path) -> None:
    bodies = [{"model": "a", "stream": True, "n": 1}, {"model": "b", "stream": True, "n": 2}]
    body = recording("openai-chat", "text")
    with (
        upstream(Reply(events(body)), Reply(events(body))) as (server, _),
        recorder(tmp_path / "f.json", server) as proxy,
    ):
        for sent in bodies:
            httpx2.post(proxy.url + "/v1/chat/completions", json=sent)
        httpx2.post(proxy.url + "/v1/chat/completions", content=b"[1]")  # 400: not forwarded
        requests = proxy.requests
        assert [thaw(r) for r in requests] == bodies
        with pytest.raises(TypeError):
            requests[0]["model"] = "c"  # type: ignore[index]


OTHER_REQUESTS: Final = [
    ("GET", "/nowhere", None),
    ("GET", "/v1/models", None),
    ("GET", "/v1/chat/completions", None),
    ("PUT", "/v1/messages", b"{}"),
    ("POST", "/v1/responses/extra", b"{}"),
    ("POST", "/v1/chat/completions", b"not json"),
    ("POST", "/v1/chat/completions", b"[1, 2]"),
    ("POST", "/v1/messages", b'{"a": 1, "a": 2}'),
    ("POST", "/v1/messages", b"\xff"),
]


def test_every_other_request_is_answered_as_serve_answers_it_and_recorded_as_nothing(
    tmp_path: Path,
) -> None:
    def answers(url: str) -> list[tuple[int, bytes, str | None]]:
        replies = [httpx2.request(m, url + path, content=body) for m, path, body in OTHER_REQUESTS]
        return [(r.status_code, r.content, r.headers.get("allow")) for r in replies]

    with serve({"schemaVersion": 1, "responses": []}) as served:
        expected = answers(served.url)
    with upstream() as (server, app), recorder(tmp_path / "f.json", server) as proxy:
        assert answers(proxy.url) == expected
        assert proxy.requests == ()
    assert app.seen == []
    assert records_of(tmp_path / "f.json") == []


def test_a_body_past_serves_limit_is_413_and_not_forwarded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("course.vendors._server.MAX_BODY", 100)
    with upstream() as (server, app), recorder(tmp_path / "f.json", server) as proxy:
        reply = httpx2.post(proxy.url + "/v1/messages", json={"pad": "x" * 200})
        assert reply.status_code == 413
        assert reply.json()["type"] == "error"  # Anthropic's shape, as serve answers it
    assert app.seen == []


# -- what an answer becomes -------------------------------------------------------------------


def test_a_stream_is_imported_as_its_recording_would_be(tmp_path: Path) -> None:
    names = {
        "openai-chat": "text_then_tool_call",
        "openai-responses": "function_call",
        "anthropic": "thinking_tool_use",
    }
    bodies = {format: recording(format, name) for format, name in names.items()}
    replies = [Reply(pieces(body, 401)) for body in bodies.values()]
    with upstream(*replies) as (server, _), recorder(tmp_path / "f.json", server) as proxy:
        for format in bodies:
            httpx2.post(proxy.url + PATHS[format], json=STREAM)
    expected = [imported(body, format) for format, body in bodies.items()]
    assert records_of(tmp_path / "f.json") == expected


def error_reply(status: int, body: bytes, *headers: tuple[bytes, bytes]) -> Reply:
    return Reply(pieces(body, 61), status=status, headers=[*JSON, *headers])


OPENAI_429: Final = (
    b'{"error": {"message": "Rate limit reached for gpt-4o in organization org-x", '
    b'"type": "requests", "param": null, "code": "rate_limit_exceeded"}}'
)
ANTHROPIC_529: Final = (
    b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
)


RETRY_AFTER: Final[list[tuple[list[tuple[bytes, bytes]], float | None]]] = [
    ([(b"retry-after-ms", b"1500"), (b"retry-after", b"2")], 1.5),
    ([(b"retry-after-ms", b"2000")], 2),
    ([(b"retry-after", b"20")], 20),
    ([(b"retry-after", b"0.25")], 0.25),
    ([(b"retry-after", b"86400")], 86400),
    ([(b"retry-after", b"86401")], None),
    ([(b"retry-after-ms", b"soon"), (b"retry-after", b"3")], 3),
    ([(b"retry-after", b"Wed, 21 Oct 2015 07:28:00 GMT")], None),
    ([(b"retry-after", b"-1")], None),
    ([(b"retry-after", b"1e3")], None),
    ([], None),
]


def test_an_http_error_is_a_transport_error_with_its_status_and_retry_after(
    tmp_path: Path,
) -> None:
    html = b"<html><body>" + b"Service Unavailable " * 40 + b"</body></html>"
    replies = [error_reply(503, html, *headers) for headers, _ in RETRY_AFTER]
    with upstream(*replies) as (server, _), recorder(tmp_path / "f.json", server) as proxy:
        for _ in RETRY_AFTER:
            reply = httpx2.post(proxy.url + "/v1/chat/completions", json=STREAM)
            assert (reply.status_code, reply.content) == (503, html)
    for (error,), (_, retry_after) in zip(
        records_of(tmp_path / "f.json"), RETRY_AFTER, strict=True
    ):
        expected: dict[str, object] = {
            "type": "transport_error",
            "message": html.decode()[:497] + "...",  # not the provider's shape: its text
            "status": 503,
        }
        if retry_after is not None:
            expected["retryAfter"] = retry_after
            assert type(error["retryAfter"]) is type(retry_after)
        assert error == expected


PROVIDER_ERRORS: Final = [
    ("openai-chat", 429, OPENAI_429, "rate_limit_exceeded", "Rate limit reached for gpt-4o"),
    ("openai-responses", 500, OPENAI_429, "rate_limit_exceeded", "Rate limit reached"),
    ("anthropic", 529, ANTHROPIC_529, "overloaded_error", "Overloaded"),
]


def test_a_providers_error_body_gives_its_code_and_message(tmp_path: Path) -> None:
    replies = [error_reply(s, body, (b"retry-after", b"7")) for _, s, body, _, _ in PROVIDER_ERRORS]
    with upstream(*replies) as (server, _), recorder(tmp_path / "f.json", server) as proxy:
        for format, _, body, _, _ in PROVIDER_ERRORS:
            assert httpx2.post(proxy.url + PATHS[format], json=STREAM).content == body
    for (error,), (_, status, _, code, message) in zip(
        records_of(tmp_path / "f.json"), PROVIDER_ERRORS, strict=True
    ):
        assert error["code"] == code
        assert str(error["message"]).startswith(message)
        assert (error["status"], error["retryAfter"]) == (status, 7)


def test_a_whole_body_is_imported_as_the_non_streamed_answer(tmp_path: Path) -> None:
    with serve(roundtrip()) as served:
        with (
            record_to(tmp_path / "f.json", upstreams={"openai": served.url}) as proxy,
        ):
            answer = httpx2.post(proxy.url + "/v1/chat/completions", json={"model": "m"})
            assert answer.headers["content-type"] == "application/json"
        expected = thaw(import_recording(answer.content, format="openai-chat").response)
    assert records_of(tmp_path / "f.json") == [expected["records"]]


def test_a_compressed_body_is_passed_on_compressed_and_recorded_decompressed(
    tmp_path: Path,
) -> None:
    body = recording("openai-chat", "tool_call")
    packed = gzip.compress(body)
    reply = Reply(pieces(packed, 50), headers=[*SSE, (b"content-encoding", b"gzip")])
    with (
        upstream(reply) as (server, _),
        recorder(tmp_path / "f.json", server) as proxy,
        httpx2.stream("POST", proxy.url + "/v1/chat/completions", json=STREAM) as answer,
    ):
        assert b"".join(answer.iter_raw()) == packed
        assert answer.headers["content-encoding"] == "gzip"
    assert records_of(tmp_path / "f.json") == [imported(body)]


def test_a_compressed_stream_cut_by_the_upstream_is_recorded_truncated(tmp_path: Path) -> None:
    body = recording("anthropic", "text")
    packer = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    chunks = [packer.compress(chunk) + packer.flush(zlib.Z_SYNC_FLUSH) for chunk in events(body)]
    reply = Reply(chunks, headers=[*SSE, (b"content-encoding", b"gzip")], cut_after=3)
    with (
        upstream(reply) as (server, _),
        recorder(tmp_path / "f.json", server) as proxy,
        httpx2.stream("POST", proxy.url + "/v1/messages", json=STREAM) as answer,
        pytest.raises(httpx2.RemoteProtocolError),
    ):
        for _ in answer.iter_raw():
            pass
    assert records_of(tmp_path / "f.json") == [imported(b"".join(events(body)[:3]), "anthropic")]


def test_an_unknown_content_encoding_cannot_be_imported(tmp_path: Path) -> None:
    reply = Reply([b"\x00\x01"], headers=[*SSE, (b"content-encoding", b"br")])
    with (
        upstream(reply) as (server, _),
        pytest.raises(RecordingError) as caught,
        recorder(tmp_path / "f.json", server) as p,
    ):
        httpx2.post(p.url + "/v1/chat/completions", json=STREAM)
    assert caught.value.code is RecordingErrorCode.RECORDING_UNREADABLE
    assert "'br'" in caught.value.message


# -- failures ---------------------------------------------------------------------------------


def test_an_unimportable_answer_passes_verbatim_then_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text("the old fixture")
    good, bad = recording("openai-chat", "text"), recording("openai-chat", "no_usage")
    worse = recording("openai-responses", "no_usage")
    with (
        upstream(Reply(events(good)), Reply(events(bad)), Reply(events(worse))) as (server, _),
        pytest.raises(RecordingError) as caught,
        recorder(path, server) as proxy,
    ):
        for body, route in ((good, PATHS["openai-chat"]), (bad, PATHS["openai-chat"])):
            assert httpx2.post(proxy.url + route, json=STREAM).content == body
        httpx2.post(proxy.url + PATHS["openai-responses"], json=STREAM)
    error = caught.value
    assert error.code is RecordingErrorCode.RECORDING_MISSING_USAGE
    assert error.source == "call 2 (POST /v1/chat/completions)"  # the first that failed
    assert error.message.startswith("call 2 (POST /v1/chat/completions) answered 200: ")
    assert error.message.endswith(  # how to get usage from OpenAI
        "The answer succeeded without usage, which a fixture response needs; OpenAI streams "
        "usage only when the request asks: stream_options={'include_usage': True}"
    )
    assert (error.line, error.column) == (19, 1)  # in the answer's body
    assert str(error).startswith("call 2 (POST /v1/chat/completions):19:1: ")
    assert path.read_text() == "the old fixture"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]


def test_when_the_body_raises_it_propagates_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    bad = recording("openai-chat", "no_usage")
    with (
        upstream(Reply(events(bad))) as (server, _),
        pytest.raises(KeyError) as caught,
        recorder(path, server) as proxy,
    ):
        httpx2.post(proxy.url + "/v1/chat/completions", json=STREAM)
        raise KeyError("the agent failed")
    (note,) = caught.value.__notes__
    assert note.startswith("course: the fixture was not written; a call could not be imported")
    assert "RECORDING_MISSING_USAGE" in note
    assert not path.exists()
    with (
        upstream(Reply(events(recording("openai-chat", "text")))) as (server, _),
        pytest.raises(KeyError) as caught,
        recorder(path, server) as proxy,
    ):
        httpx2.post(proxy.url + "/v1/chat/completions", json=STREAM)
        raise KeyError("the agent failed")
    assert not hasattr(caught.value, "__notes__")
    assert not path.exists()


@pytest.mark.parametrize(
    ("route", "shape"),
    [
        ("/v1/chat/completions", {"error": {"type": "server_error", "code": None}}),
        ("/v1/responses", {"error": {"type": "server_error", "param": None}}),
        ("/v1/messages", {"type": "error", "error": {"type": "api_error"}}),
    ],
)
def test_an_upstream_that_is_down_is_a_502_in_the_providers_shape_recorded_as_nothing(
    tmp_path: Path, route: str, shape: dict[str, object]
) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    upstreams = {"openai": down, "anthropic": down}
    with settled() as log, record_to(tmp_path / "f.json", upstreams=upstreams) as proxy:
        reply = httpx2.post(proxy.url + route, json=STREAM, headers=BEARER)
        assert reply.status_code == 502
        request_id = "request-id" if route == "/v1/messages" else "x-request-id"
        assert reply.headers[request_id].startswith("request-")  # as serve's answers
        body = reply.json()
        error = body["error"]
        assert "could not reach the" in error["message"]
        for key, value in shape.items():
            if isinstance(value, dict):
                assert {k: error[k] for k in value} == value
            else:
                assert body[key] == value
        assert proxy.requests == ()
        (line,) = log.wait(1)
    assert (
        line
        == f"call 1: POST {route} -> 502: recorded nothing (upstream unreachable: ConnectError)"
    )
    assert records_of(tmp_path / "f.json") == []


def test_a_client_that_disconnects_mid_stream_leaves_a_truncated_response(tmp_path: Path) -> None:
    body = recording("openai-chat", "text")
    chunks = events(body)
    gate = threading.Event()
    with upstream(Reply(chunks, gate=gate, gate_at=3)) as (server, app), settled() as log:
        try:
            with recorder(tmp_path / "f.json", server) as proxy:
                with httpx2.stream("POST", proxy.url + "/v1/chat/completions", json=STREAM) as r:
                    parts = r.iter_raw()
                    received = b""
                    while len(received) < len(b"".join(chunks[:3])):
                        received += next(parts)
                # The client has left: the proxy sees it, closes the upstream, records.
                (line,) = log.wait(1)
        finally:
            gate.set()
    assert line == (
        "call 1: POST /v1/chat/completions -> 200: 3 records, cut (the client went away)"
    )
    (records,) = records_of(tmp_path / "f.json")
    assert records == imported(b"".join(chunks[:3]))
    assert records[-1]["type"] == "text_delta"  # no response_end: replay says it was cut
    assert app.closed.wait(10)


@pytest.mark.parametrize("at", ["between-events", "inside-an-event"])
def test_an_upstream_that_cuts_the_stream_cuts_the_client_and_leaves_a_truncated_response(
    tmp_path: Path, at: str
) -> None:
    body = recording("anthropic", "tool_use")
    chunks = events(body) if at == "between-events" else pieces(body, 300)
    with (
        upstream(Reply(chunks, cut_after=4)) as (server, _),
        recorder(tmp_path / "f.json", server) as proxy,
        httpx2.stream("POST", proxy.url + "/v1/messages", json=STREAM) as reply,
    ):
        received = b""
        with pytest.raises(httpx2.RemoteProtocolError):
            for part in reply.iter_raw():
                received += part
    assert received == b"".join(chunks[:4])
    (records,) = records_of(tmp_path / "f.json")
    assert records == imported(received, "anthropic")
    assert records[-1]["type"] != "response_end"


def test_leaving_while_a_stream_is_in_flight_cuts_it_and_records_it_truncated(
    tmp_path: Path,
) -> None:
    body = recording("openai-responses", "text")
    gate = threading.Event()
    try:
        with upstream(Reply(events(body), gate=gate, gate_at=2)) as (server, _):
            proxy = recorder(tmp_path / "f.json", server)
            with (
                proxy,
                httpx2.stream("POST", proxy.url + "/v1/responses", json=STREAM) as reply,
            ):
                parts = reply.iter_raw()
                received = next(parts)
                while len(received) < len(b"".join(events(body)[:2])):
                    received += next(parts)
                proxy.__exit__(None, None, None)  # leave while the client reads
                with pytest.raises(httpx2.RemoteProtocolError):
                    for part in parts:
                        received += part
                gate.set()
    finally:
        gate.set()
    (records,) = records_of(tmp_path / "f.json")
    assert records == imported(b"".join(events(body)[:2]), "openai-responses")


def test_async_with_records_without_blocking_the_loop(tmp_path: Path) -> None:
    body = recording("anthropic", "text")

    async def scenario(proxy: FixtureRecorder) -> bytes:
        async with proxy, httpx2.AsyncClient() as client:
            answer = await client.post(proxy.url + "/v1/messages", json=STREAM)
            return answer.content

    with upstream(Reply(events(body))) as (server, _):
        assert asyncio.run(scenario(recorder(tmp_path / "f.json", server))) == body
    assert records_of(tmp_path / "f.json") == [imported(body, "anthropic")]


def test_async_with_records_under_trio_too(tmp_path: Path) -> None:
    trio = pytest.importorskip("trio")
    body = recording("openai-chat", "text")

    async def scenario(proxy: FixtureRecorder) -> bytes:
        async with proxy, httpx2.AsyncClient() as client:
            answer = await client.post(proxy.url + "/v1/chat/completions", json=STREAM)
            return answer.content

    with upstream(Reply(events(body))) as (server, _):
        assert trio.run(scenario, recorder(tmp_path / "f.json", server)) == body
    assert records_of(tmp_path / "f.json") == [imported(body)]


def test_the_fixture_is_written_atomically_with_the_files_usual_mode(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text("old")
    with (
        upstream(Reply(events(recording("openai-chat", "text")))) as (server, _),
        recorder(path, server) as proxy,
    ):
        httpx2.post(proxy.url + "/v1/chat/completions", json=STREAM)
        assert path.read_text() == "old"  # nothing is written before leaving
    fixture = read_fixture(path)
    assert fixture["schemaVersion"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]  # no temporary file left
    assert path.read_text().endswith("}\n")
    fresh = tmp_path / "fresh"
    fresh.write_text("")
    assert path.stat().st_mode == fresh.stat().st_mode


def test_a_folder_that_does_not_exist_is_an_oserror_on_leaving(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError), record_to(tmp_path / "missing" / "f.json"):
        pass


def test_each_call_is_logged_once_it_is_recorded(tmp_path: Path) -> None:
    text, tool = recording("openai-chat", "text"), recording("anthropic", "tool_use")
    bad = recording("openai-chat", "no_usage")
    replies = (Reply(events(text)), Reply(events(tool)), Reply(events(bad)))
    with (
        upstream(*replies) as (server, _),
        settled() as log,
        pytest.raises(RecordingError),
        recorder(tmp_path / "f.json", server) as proxy,
    ):
        httpx2.post(proxy.url + "/v1/chat/completions", json=STREAM, headers=BEARER)
        httpx2.post(proxy.url + "/v1/messages", json=STREAM)
        httpx2.post(proxy.url + "/v1/chat/completions", json=STREAM)
        lines = log.wait(3)
    assert lines == [
        "call 1: POST /v1/chat/completions -> 200: 13 records, stop",
        "call 2: POST /v1/messages -> 200: 5 records, toolCall",
        "call 3: POST /v1/chat/completions -> 200: not imported: RECORDING_MISSING_USAGE",
    ]


# -- secrets ----------------------------------------------------------------------------------


def quoting(format: str, text: str) -> bytes:
    """A stream in ``format`` whose text, tool call and ids all quote ``text``."""
    if format == "openai-chat":
        chunk = {"id": f"chatcmpl-{text}", "object": "chat.completion.chunk", "choices": []}

        def with_choice(delta: dict[str, object], finish: str | None = None) -> bytes:
            data = {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return b"data: " + json.dumps(data).encode() + b"\n\n"

        arguments = json.dumps({text: f"key={text}", "n": 1})
        half = len(arguments) // 2
        call = {"index": 0, "id": f"call_{text[4:20]}", "function": {"name": "f"}}
        return b"".join(
            [
                with_choice({"role": "assistant", "content": f"Your key is {text}."}),
                with_choice(
                    {
                        "tool_calls": [
                            {**call, "function": {"name": "f", "arguments": arguments[:half]}}
                        ]
                    }
                ),
                with_choice(
                    {"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]}
                ),
                with_choice({}, "tool_calls"),
                b"data: "
                + json.dumps(
                    {**chunk, "usage": {"prompt_tokens": 1, "completion_tokens": 2}}
                ).encode()
                + b"\n\n",
                b"data: [DONE]\n\n",
            ]
        )
    raise AssertionError(format)


def test_planted_credentials_never_reach_the_file_nor_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    error = json.dumps(
        {"error": {"message": f"Incorrect API key provided: {ANTHROPIC_KEY[:20]}***", "code": "x"}}
    ).encode()
    replies = (
        Reply(pieces(quoting("openai-chat", OPENAI_KEY), 97)),
        Reply(pieces(error, 41), status=401, headers=JSON),
        Reply(pieces(quoting("openai-chat", GOOGLE_KEY[3:30]), 97)),
    )
    path = tmp_path / "f.json"
    with upstream(*replies) as (server, _), recorder(path, server) as proxy:
        httpx2.post(proxy.url + "/v1/chat/completions", json=STREAM, headers=BEARER)
        httpx2.post(proxy.url + "/v1/messages", json=STREAM, headers={"x-api-key": ANTHROPIC_KEY})
        httpx2.post(
            proxy.url + "/v1/chat/completions",
            json=STREAM,
            headers={"x-goog-api-key": GOOGLE_KEY},
        )
    written = path.read_text()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for secret in SECRETS:
        for start in range(len(secret) - 7):
            assert secret[start : start + 8] not in written
            assert secret[start : start + 8] not in logged
    assert "[redacted]" in written
    (first, second, third) = records_of(path)
    assert first[1] == {"type": "text_delta", "text": "Your key is [redacted]."}
    assert first[2]["arguments"] == {"[redacted]": "key=[redacted]", "n": 1}
    assert first[0]["responseId"] == first[-1]["responseId"] == "chatcmpl-[redacted]"
    assert second[0]["type"] == "transport_error"
    assert second[0]["status"] == 401
    assert [record["type"] for record in third][-1] == "response_end"


def test_a_credential_in_the_query_string_is_redacted_too(tmp_path: Path) -> None:
    body = quoting("openai-chat", GOOGLE_KEY)
    path = tmp_path / "f.json"
    with upstream(Reply(events(body))) as (server, app), recorder(path, server) as proxy:
        httpx2.post(proxy.url + f"/v1/chat/completions?key={GOOGLE_KEY}", json=STREAM)
    assert app.seen[0].query == f"key={GOOGLE_KEY}".encode()
    assert GOOGLE_KEY[:8] not in path.read_text()


def test_redaction_that_would_merge_two_keys_refuses_to_write(tmp_path: Path) -> None:
    secret = "sk-" + "Q" * 30
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk"}
    # Two keys that differ only inside the parts redaction strikes out.
    arguments = json.dumps({f"a{secret}b": 1, f"a{secret[:-1]}b": 2})
    body = (
        b"".join(
            b"data: " + json.dumps({**chunk, **data}).encode() + b"\n\n"
            for data in (
                {"choices": [{"index": 0, "delta": {"role": "assistant"}}]},
                {
                    "choices": [
                        {
                            "index": 0,
                            "delta": {
                                "tool_calls": [
                                    {
                                        "index": 0,
                                        "id": "call_1",
                                        "function": {"name": "f", "arguments": arguments},
                                    }
                                ]
                            },
                            "finish_reason": "tool_calls",
                        }
                    ]
                },
                {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
            )
        )
        + b"data: [DONE]\n\n"
    )
    path = tmp_path / "f.json"
    with (
        upstream(Reply(events(body))) as (server, _),
        pytest.raises(RecordingError) as caught,
        recorder(path, server) as proxy,
    ):
        httpx2.post(proxy.url + "/v1/chat/completions", json=STREAM, headers={"x-api-key": secret})
    assert caught.value.code is RecordingErrorCode.RECORDING_UNSUPPORTED
    assert "two keys of one object equal" in caught.value.message
    assert secret[:8] not in str(caught.value)
    assert not path.exists()


# -- timing -----------------------------------------------------------------------------------


def plain(records: list[dict[str, object]] | list[object]) -> list[PlainJson]:
    """The same list, as the recorder types it (its records are plain JSON)."""
    return cast("list[PlainJson]", records)


def answer_with(chunks: list[bytes], arrivals: list[float], *, status: int = 200) -> Answer:
    answer = Answer(1, "openai-chat", "/v1/chat/completions", {}, ())
    answer.status, answer.chunks, answer.arrivals = status, chunks, arrivals
    answer.forwarded_at = 100.0
    answer.end(Ending.COMPLETE)
    return answer


def test_timing_gives_each_record_the_time_since_the_previous_records_data() -> None:
    body = recording("openai-chat", "text_then_tool_call")
    chunks = events(body)
    # Event k arrives 0.25 s after event k-1, the first 1.5 s after the request went.
    arrivals = [101.5 + 0.25 * k for k in range(len(chunks))]
    answer = answer_with(chunks, arrivals)
    records = imported(body)
    _time(plain(records), answer, body)
    delays = [record["delay"] for record in records]
    # The start is event 0 and the five text deltas events 1-5; the tool call is made at
    # the finish reason (event 11), the end at [DONE] (event 13).
    assert delays == [1.5, 0.25, 0.25, 0.25, 0.25, 0.25, 1.5, 0.5]


def test_records_made_from_one_event_after_the_first_get_zero() -> None:
    body = recording("anthropic", "parallel_tool_use")
    chunks = events(body)
    answer = answer_with(chunks, [100.0 + k for k in range(1, len(chunks) + 1)])
    answer.format = "anthropic"
    records = imported(body, "anthropic")
    owners = _owners(plain(records), answer, body)
    _time(plain(records), answer, body)
    for index in range(1, len(records)):
        delay = records[index]["delay"]
        if owners[index] == owners[index - 1]:
            assert delay == 0
        else:
            assert delay == owners[index] - owners[index - 1]


def test_timing_of_a_chunk_that_holds_several_events_and_an_event_split_in_chunks() -> None:
    body = recording("anthropic", "text")
    cut = [len(body) // 5, len(body) // 2, len(body) - 3]
    chunks = [body[: cut[0]], body[cut[0] : cut[1]], body[cut[1] : cut[2]], body[cut[2] :]]
    answer = answer_with(chunks, [101.0, 102.0, 103.5, 110.0])
    answer.format = "anthropic"
    records = imported(body, "anthropic")
    _time(plain(records), answer, body)
    for record in records:
        delay = record["delay"]
        assert isinstance(delay, int | float)
        assert delay == round(delay, 3)
    assert sum(cast("float", record["delay"]) for record in records) == pytest.approx(10.0)


def test_timing_rounds_to_milliseconds_and_caps_at_an_hour() -> None:
    body = recording("openai-chat", "tool_call")
    chunks = events(body)
    arrivals = [100.0004, 100.1236, *[5000.0] * (len(chunks) - 2)]
    answer = answer_with(chunks, arrivals)
    records = imported(body)
    _time(plain(records), answer, body)
    assert [record["delay"] for record in records] == [0, 3600, 0]


def test_an_error_answers_delay_is_the_time_to_its_whole_body() -> None:
    answer = answer_with([b'{"err', b'or": 1}'], [100.5, 102.25], status=500)
    records: list[object] = [{"type": "transport_error", "message": "m", "status": 500}]
    _time(plain(records), answer, b'{"error": 1}')
    assert records == [{"type": "transport_error", "message": "m", "status": 500, "delay": 2.25}]


def test_with_timing_every_written_record_has_a_delay_and_without_none(tmp_path: Path) -> None:
    body = recording("openai-responses", "function_call")
    for timing in (True, False):
        path = tmp_path / f"{timing}.json"
        with (
            upstream(Reply(events(body))) as (server, _),
            recorder(path, server, timing=timing) as proxy,
        ):
            httpx2.post(proxy.url + "/v1/responses", json=STREAM)
        (records,) = records_of(path)
        if not timing:
            assert records == imported(body, "openai-responses")
            continue
        for record in records:
            assert 0 <= record["delay"] <= 3600  # type: ignore[operator]
        assert [{k: v for k, v in r.items() if k != "delay"} for r in records] == imported(
            body, "openai-responses"
        )


def test_calls_are_read_unchecked_with_the_response_each_was_recorded_as(tmp_path: Path) -> None:
    broken = {
        "model": "m",
        "stream": True,
        "messages": [{"role": "tool", "tool_call_id": "call-9", "content": "42"}],
    }
    unreadable = {"model": "m", "stream": True, "messages": "not a list"}

    def text() -> Reply:
        return Reply(events(recording("openai-chat", "text")))

    failure = Reply([b'{"error": {"message": "no", "type": "server_error"}}'], 500, JSON)
    with (
        upstream(text(), text(), failure) as (server, _),
        recorder(tmp_path / "f.json", server) as proxy,
    ):
        for body in (broken, unreadable, STREAM):
            httpx2.post(proxy.url + "/v1/chat/completions", json=body, headers=BEARER).read()
    calls = proxy.calls  # every answer settled once the recorder stopped
    assert [call.format for call in calls] == ["openai-chat"] * 3
    assert [call.response_index for call in calls] == [0, 1, 2]  # the 500 is recorded too
    assert calls[0].problems == ()  # nothing is checked: a recording keeps what the agent did
    first = calls[0].request
    assert first is not None and first.id.startswith("request-")
    assert calls[1].request is None
    assert calls[1].problems[0].startswith("course read: messages")
    assert [thaw(call.body) for call in calls] == [broken, unreadable, STREAM]
