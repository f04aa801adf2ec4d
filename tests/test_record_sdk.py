"""Record mode end to end: the official SDKs through the recording proxy, and back.

Each test runs the same client code three times: against the upstream directly, through
``record`` (which must change nothing the client sees), and against ``serve`` over the
fixture the recorder wrote (which must give the same observable result: ids, text, tool
calls, stop reason, usage). The upstream is the repository's recordings in network
chunks (``tests/record_helpers.py``), or ``serve`` itself for whole (non-streamed)
bodies.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol, cast

import anthropic
import openai
import pytest

from course.vendors import FixtureRecorder, FixtureServer, record, serve

from .helpers import roundtrip
from .record_helpers import (
    ANTHROPIC_KEY,
    JSON,
    OPENAI_KEY,
    Reply,
    events,
    pieces,
    read_fixture,
    recording,
    upstream,
)

MODEL: Final = "model-under-test"
QUESTION: Final = "What is the weather in New York City?"


@dataclass(frozen=True)
class Seen:
    """One answer as the client code received it."""

    response_id: str
    text: str
    tool_calls: tuple[tuple[str, str, object], ...]  # id, name, arguments
    stop: str | None
    usage: tuple[int, int]


class Observe(Protocol):
    """Client code pointed at a base URL (the server's, with no path), and what it saw."""

    def __call__(self, url: str, retries: int = 0) -> Seen: ...


def _openai(url: str, retries: int) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key=OPENAI_KEY, max_retries=retries)


def _anthropic(url: str, retries: int) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=ANTHROPIC_KEY, max_retries=retries)


def chat_stream(url: str, retries: int = 0) -> Seen:
    """``create(stream=True)``: the chunks, accumulated as an agent loop would."""
    with _openai(url, retries) as client:
        stream = client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": QUESTION}],
            stream=True,
            stream_options={"include_usage": True},
        )
        response_id, text, stop, usage = "", "", None, (-1, -1)
        calls: dict[int, list[str]] = {}
        for chunk in stream:
            response_id = chunk.id
            if chunk.usage is not None:
                usage = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    entry = calls.setdefault(call.index, ["", "", ""])
                    if call.id:
                        entry[0] = call.id
                    if call.function and call.function.name:
                        entry[1] = call.function.name
                    if call.function and call.function.arguments:
                        entry[2] += call.function.arguments
                stop = choice.finish_reason or stop
    tool_calls = tuple((i, n, json.loads(a or "{}")) for i, n, a in calls.values())
    return Seen(response_id, text, tool_calls, stop, usage)


def chat_whole(url: str, retries: int = 0) -> Seen:
    """``create()``: the whole completion."""
    with _openai(url, retries) as client:
        completion = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": QUESTION}]
        )
    message = completion.choices[0].message
    calls = tuple(
        (c.id, c.function.name, json.loads(c.function.arguments))
        for c in message.tool_calls or []
        if c.type == "function"
    )
    usage = completion.usage
    assert usage is not None
    return Seen(
        completion.id,
        message.content or "",
        calls,
        completion.choices[0].finish_reason,
        (usage.prompt_tokens, usage.completion_tokens),
    )


def _response(response: openai.types.responses.Response) -> Seen:
    calls = tuple(
        (item.call_id, item.name, json.loads(item.arguments))
        for item in response.output
        if item.type == "function_call"
    )
    usage = response.usage
    assert usage is not None
    return Seen(
        response.id,
        response.output_text,
        calls,
        response.status,
        (usage.input_tokens, usage.output_tokens),
    )


def responses_stream(url: str, retries: int = 0) -> Seen:
    """``responses.stream()``: the SDK's own accumulation, its final response."""
    with (
        _openai(url, retries) as client,
        client.responses.stream(model=MODEL, input=QUESTION) as stream,
    ):
        return _response(stream.get_final_response())


def responses_whole(url: str, retries: int = 0) -> Seen:
    with _openai(url, retries) as client:
        return _response(client.responses.create(model=MODEL, input=QUESTION))


def _message(message: anthropic.types.Message) -> Seen:
    text = "".join(block.text for block in message.content if block.type == "text")
    calls = tuple(
        (block.id, block.name, block.input) for block in message.content if block.type == "tool_use"
    )
    usage = message.usage
    return Seen(
        message.id, text, calls, message.stop_reason, (usage.input_tokens, usage.output_tokens)
    )


def messages_stream(url: str, retries: int = 0) -> Seen:
    """``messages.stream()``: the SDK's own accumulation, its final message."""
    ask = [{"role": "user", "content": QUESTION}]
    with (
        _anthropic(url, retries) as client,
        client.messages.stream(model=MODEL, max_tokens=64, messages=ask) as stream,  # type: ignore[arg-type]
    ):
        return _message(stream.get_final_message())


def messages_whole(url: str, retries: int = 0) -> Seen:
    ask = [{"role": "user", "content": QUESTION}]
    with _anthropic(url, retries) as client:
        return _message(client.messages.create(model=MODEL, max_tokens=64, messages=ask))  # type: ignore[arg-type]


STREAMED: Final[dict[str, Observe]] = {
    "openai-chat": chat_stream,
    "openai-responses": responses_stream,
    "anthropic": messages_stream,
}
WHOLE: Final[dict[str, Observe]] = {
    "openai-chat": chat_whole,
    "openai-responses": responses_whole,
    "anthropic": messages_whole,
}


def recorder_to(path: Path, server: FixtureServer) -> FixtureRecorder:
    return record(path, upstreams={"openai": server.url, "anthropic": server.url})


@contextmanager
def replayed(path: Path) -> Iterator[FixtureServer]:
    """``serve`` over the fixture the recorder wrote."""
    with serve(read_fixture(path)) as server:
        yield server


# -- streaming: every format, text and tool calls ------------------------------------------------


@pytest.mark.parametrize(
    ("format", "name"),
    [
        ("openai-chat", "tool_call"),
        ("openai-chat", "text_then_tool_call"),
        ("openai-responses", "function_call"),
        ("openai-responses", "text"),
        ("anthropic", "tool_use"),
        ("anthropic", "text"),
    ],
)
def test_a_streamed_answer_through_the_proxy_is_what_the_client_sees_and_replays_the_same(
    tmp_path: Path, format: str, name: str
) -> None:
    observe = STREAMED[format]
    body = recording(format, name)
    path = tmp_path / "fixture.json"
    with upstream(Reply(events(body)), Reply(pieces(body, 97))) as (server, app):
        direct = observe(server.url)
        with recorder_to(path, server) as proxy:
            assert observe(proxy.url) == direct
        assert len(app.seen) == 2
    assert direct.tool_calls or direct.text  # the recording says something
    with replayed(path) as server:
        assert observe(server.url) == direct


@pytest.mark.parametrize("format", list(STREAMED))
def test_several_calls_of_an_agent_are_recorded_in_order_and_replay_in_order(
    tmp_path: Path, format: str
) -> None:
    observe = STREAMED[format]
    names = {
        "openai-chat": ("tool_call", "text"),
        "openai-responses": ("function_call", "text"),
        "anthropic": ("tool_use", "text"),
    }[format]
    bodies = [recording(format, name) for name in names]
    path = tmp_path / "fixture.json"
    replies = [Reply(events(body)) for body in bodies]
    with upstream(*replies) as (server, _), recorder_to(path, server) as proxy:
        recorded = [observe(proxy.url) for _ in bodies]
    assert recorded[0].tool_calls and not recorded[1].tool_calls
    with replayed(path) as server:
        assert [observe(server.url) for _ in bodies] == recorded


# -- whole bodies: serve itself as the upstream ------------------------------------------------


def first_response_only() -> dict[str, object]:
    """The round-trip fixture's first response alone (a tool call)."""
    fixture = roundtrip()
    return {**fixture, "responses": fixture["responses"][:1]}  # type: ignore[index]


@pytest.mark.parametrize("format", list(WHOLE))
def test_a_whole_body_through_the_proxy_is_what_the_client_sees_and_replays_the_same(
    tmp_path: Path, format: str
) -> None:
    observe = WHOLE[format]
    path = tmp_path / "fixture.json"
    with serve(first_response_only()) as server:
        direct = observe(server.url)
    assert direct.tool_calls
    with serve(first_response_only()) as server, recorder_to(path, server) as proxy:
        assert observe(proxy.url) == direct
    with replayed(path) as server:
        assert observe(server.url) == direct


# -- upstream errors: a 429 and a 500, retried by the SDK ---------------------------------------


def errors_then(body: bytes, format: str) -> list[Reply]:
    """A 429 and a 500 (each asking for a 1 ms wait), then ``body``."""
    if format == "anthropic":
        limited = (
            b'{"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}'
        )
        broken = b'{"type": "error", "error": {"type": "api_error", "message": "Internal error"}}'
    else:
        limited = (
            b'{"error": {"message": "Rate limit reached", "type": "requests", "param": null, '
            b'"code": "rate_limit_exceeded"}}'
        )
        broken = b'{"error": {"message": "The server had an error", "type": "server_error"}}'
    wait = (b"retry-after-ms", b"1")
    return [
        Reply([limited], status=429, headers=[*JSON, wait]),
        Reply([broken], status=500, headers=[*JSON, wait]),
        Reply(events(body)),
    ]


TOOL_CALLS: Final = {
    "openai-chat": "tool_call",
    "openai-responses": "function_call",
    "anthropic": "tool_use",
}


@pytest.mark.parametrize("format", list(STREAMED))
def test_an_upstream_429_and_500_reach_the_sdk_which_retries_and_each_is_recorded(
    tmp_path: Path, format: str
) -> None:
    body = recording(format, TOOL_CALLS[format])
    path = tmp_path / "fixture.json"
    with upstream(Reply(events(body))) as (server, _):
        expected = STREAMED[format](server.url)
    with upstream(*errors_then(body, format)) as (server, app):
        with recorder_to(path, server) as proxy:
            assert STREAMED[format](proxy.url, retries=2) == expected
        assert len(app.seen) == 3  # the SDK saw the 429 and the 500, and retried both
        assert [s.header("x-stainless-retry-count") for s in app.seen] == [["0"], ["1"], ["2"]]
    responses = cast("list[dict[str, list[dict[str, object]]]]", read_fixture(path)["responses"])
    limited, broken, answer = (response["records"] for response in responses)
    assert [record["type"] for record in limited] == ["transport_error"]
    assert (limited[0]["status"], limited[0]["retryAfter"]) == (429, 0.001)
    assert (broken[0]["status"], broken[0]["retryAfter"]) == (500, 0.001)
    assert answer[-1]["type"] == "response_end"


@pytest.mark.parametrize("format", list(STREAMED))
def test_without_retries_the_sdk_raises_the_upstreams_429_through_the_proxy(
    tmp_path: Path, format: str
) -> None:
    body = recording(format, TOOL_CALLS[format])
    error: type[openai.RateLimitError | anthropic.RateLimitError] = (
        openai.RateLimitError if format != "anthropic" else anthropic.RateLimitError
    )
    with (
        upstream(*errors_then(body, format)[:1]) as (server, _),
        recorder_to(tmp_path / "fixture.json", server) as proxy,
        pytest.raises(error) as caught,
    ):
        STREAMED[format](proxy.url)
    raised = caught.value
    assert isinstance(raised, openai.RateLimitError | anthropic.RateLimitError)
    assert raised.status_code == 429
    assert "Rate limit reached" in str(raised) or "Slow" in str(raised)


@pytest.mark.parametrize("format", list(STREAMED))
def test_a_recorded_429_and_500_replay_to_the_same_retries(tmp_path: Path, format: str) -> None:
    body = recording(format, TOOL_CALLS[format])
    path = tmp_path / "fixture.json"
    with (
        upstream(*errors_then(body, format)) as (server, _),
        recorder_to(path, server) as proxy,
    ):
        expected = STREAMED[format](proxy.url, retries=2)
    with replayed(path) as server:
        assert STREAMED[format](server.url, retries=2) == expected
        assert len(server.requests) == 3


# -- the README's example ----------------------------------------------------------------------


def test_the_readmes_record_example_runs_and_records_both_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Record mode: run the agent once") :]
    code = section[section.index("```python\n") + len("```python\n") : section.index("```\n\n")]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    fixture = read_fixture(tmp_path / "recorded.json")
    stops = [response["records"][-1]["stopReason"] for response in fixture["responses"]]  # type: ignore[attr-defined]
    assert stops == ["tool_call", "stop"]
