"""The real ``google-genai`` client against ``serve`` over loopback, as users run it: a
signed tool call then the answer, sync and async (over httpx, as without aiohttp, and
over aiohttp, which the SDK takes when it is installed), streaming and not, automatic
function calling off and on; every API version, thinking, MAX_TOKENS, SAFETY, a blocked
prompt, errors with their status; and through the recorder, then ``serve`` of what it
wrote."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from google import genai
from google.genai import _api_client, errors, types

from course import thaw
from course.vendors import load_recordings, record, serve

from .vendor_helpers import RECORDINGS

RECORDED: Final = RECORDINGS / "gemini"


def fixture(*names: str) -> dict[str, object]:
    return load_recordings(*(RECORDED / name for name in names), format="gemini")


_CLIENTS: list[genai.Client] = []


def client(url: str, version: str | None = None) -> genai.Client:
    """A client kept alive for the test (a dropped ``genai.Client`` closes its HTTP
    client, even under a call still made through its ``models``), closed after it."""
    made = genai.Client(
        api_key="test", http_options=types.HttpOptions(base_url=url, api_version=version)
    )
    _CLIENTS.append(made)
    return made


@pytest.fixture(autouse=True)
def close_clients() -> Iterator[None]:
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


@pytest.mark.parametrize("version", [None, "v1beta", "v1alpha"])
def test_generate_content_on_every_api_version(version: str | None) -> None:
    with serve(fixture("text.sse")) as server:
        response = client(server.url, version).models.generate_content(
            model="gemini-2.5-flash", contents="What is 19 + 23?"
        )
    assert response.text == "The sum of 19 and 23 is 42."
    assert response.response_id == "z4w2aciqLJ7Wz7IPnpSLyAM"
    assert response.candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
    assert response.usage_metadata.prompt_token_count == 12  # type: ignore[union-attr]


def test_streamed_thinking_text_and_signature() -> None:
    with serve(fixture("thinking.sse")) as server:
        chunks = list(client(server.url).models.generate_content_stream(model="m", contents="x"))
    parts = [part for chunk in chunks for part in chunk.candidates[0].content.parts]  # type: ignore[index, union-attr]
    thoughts = "".join(part.text or "" for part in parts if part.thought)
    assert thoughts.startswith("**Adding the numbers**")
    assert "".join(part.text or "" for part in parts if not part.thought) == "The sum is 42."
    assert [part.thought_signature for part in parts if part.thought_signature]
    assert chunks[-1].usage_metadata.thoughts_token_count == 96  # type: ignore[union-attr]
    assert chunks[-1].model_version == "gemini-2.5-pro"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


TRANSPORTS: Final = [
    "sync",
    "async-httpx",
    pytest.param(
        "async-aiohttp",
        # google-genai subclasses aiohttp.ClientSession, which aiohttp warns about.
        marks=pytest.mark.filterwarnings(
            "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
        ),
    ),
]


def recorded_signature() -> bytes:
    text = (RECORDED / "tool_call.sse").read_text()
    return base64.b64decode(text.split('"thoughtSignature": "')[1].split('"')[0])


async def ask_async(
    gemini: genai.Client, contents: Any, config: types.GenerateContentConfig, streaming: bool
) -> list[types.GenerateContentResponse]:
    models = gemini.aio.models
    try:
        if not streaming:
            return [await models.generate_content(model="m", contents=contents, config=config)]
        stream = await models.generate_content_stream(model="m", contents=contents, config=config)
        return [chunk async for chunk in stream]
    finally:
        await gemini.aio.aclose()  # else aiohttp warns of an unclosed session


def ask(
    gemini: genai.Client,
    transport: str,
    contents: Any,
    config: types.GenerateContentConfig,
    streaming: bool,
) -> list[types.GenerateContentResponse]:
    """The SDK's answer, as chunks (one, when not streaming)."""
    if transport != "sync":
        return asyncio.run(ask_async(gemini, contents, config, streaming))
    if not streaming:
        return [gemini.models.generate_content(model="m", contents=contents, config=config)]
    return list(gemini.models.generate_content_stream(model="m", contents=contents, config=config))


@pytest.mark.parametrize("automatic", [False, True], ids=["afc-off", "afc-on"])
@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_signed_tool_call_then_the_answer(
    transport: str, streaming: bool, automatic: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if transport == "async-aiohttp":
        pytest.importorskip("aiohttp", reason="needs aiohttp (the dev extra installs it)")
    elif transport == "async-httpx":  # what the SDK does when aiohttp is not installed
        monkeypatch.setattr(_api_client, "has_aiohttp", False)
    config = types.GenerateContentConfig(
        tools=[add],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=not automatic),
    )
    question = types.Content(role="user", parts=[types.Part(text="What is 19 + 23?")])
    with serve(fixture("tool_call.sse", "text.sse")) as server:
        gemini = client(server.url)
        if transport != "sync":  # the transport is the one the test is named for
            assert gemini._api_client._use_aiohttp() is (transport == "async-aiohttp")
        chunks = ask(gemini, transport, [question], config, streaming)
        if not automatic:
            calls = [call for chunk in chunks for call in chunk.function_calls or []]
            assert [(call.name, call.args, call.id) for call in calls] == [
                ("add", {"a": 19, "b": 23}, None)  # Gemini gave the call no id
            ]
            # The model's turn goes back as it came (streamed: the last chunk's empty text too).
            parts = [p for chunk in chunks for p in chunk.candidates[0].content.parts]  # type: ignore[index, union-attr]
            assert [p.thought_signature for p in parts if p.function_call] == [recorded_signature()]
            answer = types.Part.from_function_response(name="add", response={"result": 42})
            turns = [question, types.Content(role="model", parts=parts)]
            turns.append(types.Content(role="user", parts=[answer]))
            gemini = client(server.url)  # the async path closed the first
            chunks = ask(gemini, transport, turns, config, streaming)
        second: Any = thaw(server.requests[1])
    assert "".join(chunk.text or "" for chunk in chunks) == "The sum of 19 and 23 is 42."
    assert chunks[-1].candidates[0].finish_reason is types.FinishReason.STOP  # type: ignore[index]
    assert chunks[-1].usage_metadata.candidates_token_count == 9  # type: ignore[union-attr]
    # The call went back with its signature: the same bytes (the SDK re-encodes them
    # URL-safe), and the tool's result. (Streaming with automatic calling, the SDK sends
    # each chunk's content as a model turn of its own: the last chunk's empty text too.)
    sent = [part for turn in second["contents"] for part in turn["parts"]]
    [call] = [part for part in sent if "functionCall" in part]
    assert base64.urlsafe_b64decode(call["thoughtSignature"]) == recorded_signature()
    assert call["functionCall"] == {"name": "add", "args": {"a": 19, "b": 23}}
    [result] = [part["functionResponse"] for part in sent if "functionResponse" in part]
    assert result["response"] == {"result": 42}


@pytest.mark.parametrize(
    ("name", "finish"),
    [("max_tokens.sse", types.FinishReason.MAX_TOKENS), ("safety.sse", types.FinishReason.SAFETY)],
)
def test_the_end_is_the_recorded_finish_reason(name: str, finish: types.FinishReason) -> None:
    with serve(fixture(name, name)) as server:
        gemini = client(server.url)
        chunks = list(gemini.models.generate_content_stream(model="m", contents="x"))
        whole = gemini.models.generate_content(model="m", contents="x")
    assert chunks[-1].candidates[0].finish_reason is finish  # type: ignore[index]
    assert whole.candidates[0].finish_reason is finish  # type: ignore[index]


def test_a_blocked_prompt_has_prompt_feedback_and_no_candidates() -> None:
    end = {
        "type": "response_end",
        "responseId": "r",
        "stopReason": "content_filter",
        "usage": {"inputTokens": 21, "outputTokens": 0},
        "providerStopReason": "JAILBREAK",
    }
    start = {"type": "response_start", "responseId": "r", "role": "assistant"}
    blocked = {"schemaVersion": 2, "responses": [{"records": [start, end]}] * 2}
    with serve(blocked) as server:
        gemini = client(server.url)
        response = gemini.models.generate_content(model="m", contents="x")
        chunks = list(gemini.models.generate_content_stream(model="m", contents="x"))
    for answer in (response, *chunks):
        assert answer.candidates is None
        assert answer.prompt_feedback.block_reason is types.BlockedReason.JAILBREAK  # type: ignore[union-attr]


def test_a_block_reason_that_is_also_a_finish_reason_is_served_as_the_finish() -> None:
    # PROHIBITED_CONTENT (like BLOCKLIST) is a finishReason word as well: SPEC-GEMINI.md
    # serves only the three words that are not as promptFeedback.
    with serve(fixture("blocked_prompt.sse")) as server:
        response = client(server.url).models.generate_content(model="m", contents="x")
    assert response.candidates[0].finish_reason is types.FinishReason.PROHIBITED_CONTENT  # type: ignore[index]


def test_errors_carry_their_status_before_and_during_the_stream() -> None:
    quota = {"type": "transport_error", "message": "Quota exceeded", "status": 429}
    fixture_ = {"schemaVersion": 2, "responses": [{"records": [quota]}]}
    with serve(fixture_) as server, pytest.raises(errors.ClientError) as info:
        client(server.url).models.generate_content(model="m", contents="x")
    assert (info.value.code, info.value.status) == (429, "RESOURCE_EXHAUSTED")
    with serve(fixture("mid_stream_error.sse")) as server:
        texts: list[str] = []
        with pytest.raises(errors.ServerError) as raised:
            for chunk in client(server.url).models.generate_content_stream(model="m", contents="x"):
                texts.append(chunk.text or "")
    assert texts == ["Here is the first", " part of the answer"]
    assert (raised.value.code, raised.value.status) == (503, "UNAVAILABLE")


# -- record, then replay --------------------------------------------------------------------


def seen(chunks: list[types.GenerateContentResponse]) -> list[dict[str, Any]]:
    """What the client code sees of each chunk, but the HTTP headers (ids, dates)."""
    return [chunk.model_dump(exclude={"sdk_http_response"}, exclude_none=True) for chunk in chunks]


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "stream"])
def test_what_the_recorder_writes_replays_as_the_upstream_answered(
    tmp_path: Path, streaming: bool
) -> None:
    names = ("thinking.sse", "tool_call.sse", "max_tokens.sse")
    config = types.GenerateContentConfig(
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
    )
    written = tmp_path / "gemini.json"
    with (
        serve(fixture(*names)) as upstream,
        record(written, upstreams={"gemini": upstream.url}) as proxy,
    ):
        gemini = client(proxy.url)
        answers = [ask(gemini, "sync", "x", config, streaming) for _ in names]
    replayed = json.loads(written.read_text())
    assert replayed["schemaVersion"] == 2
    with serve(replayed) as server:
        gemini = client(server.url)
        again = [ask(gemini, "sync", "x", config, streaming) for _ in names]
    assert [seen(chunks) for chunks in again] == [seen(chunks) for chunks in answers]
    assert answers[1][0].function_calls[0].name == "add"  # type: ignore[index]


def test_a_recorded_http_error_replays_with_its_status(tmp_path: Path) -> None:
    quota = {"type": "transport_error", "message": "Quota exceeded", "status": 429}
    written = tmp_path / "gemini.json"
    with (
        serve({"schemaVersion": 2, "responses": [{"records": [quota]}]}) as upstream,
        record(written, upstreams={"gemini": upstream.url}) as proxy,
        pytest.raises(errors.ClientError),
    ):
        client(proxy.url).models.generate_content(model="m", contents="x")
    replayed = json.loads(written.read_text())
    assert replayed["responses"] == [
        {"records": [{**quota, "code": "RESOURCE_EXHAUSTED"}]}  # Google's word, read back
    ]
    with serve(replayed) as server, pytest.raises(errors.ClientError) as raised:
        client(server.url).models.generate_content(model="m", contents="x")
    assert (raised.value.code, raised.value.status) == (429, "RESOURCE_EXHAUSTED")
