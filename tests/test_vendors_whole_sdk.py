"""Non-streamed answers against the official SDKs: the same bytes, two readers.

Each JSON body in ``tests/recordings/<format>/*.json`` is given to the SDK's own
non-streaming call (``chat.completions.create``, ``responses.create``,
``messages.create``) through an in-memory transport, and imported; the SDK's parsed
object and the replayed fixture must agree on the id, the text, the tool calls, the end
and the usage, or the fixture must fail where the SDK reports no usable answer.

Then the renderers' own whole bodies (what ``serve`` answers without streaming) are
imported and must give what the stream of the same response gives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    CourseModelResponse,
    CourseTextBlock,
    FixtureProviderError,
    FixtureProviderErrorCode,
    thaw,
)
from course.vendors import Recording, import_recording
from course.vendors._anthropic import Renderer as AnthropicRenderer
from course.vendors._openai_chat import Renderer as ChatRenderer
from course.vendors._openai_responses import Renderer as ResponsesRenderer
from course.vendors._rendering import StreamRenderer

from .vendor_helpers import (
    RECORDINGS,
    anthropic_client,
    openai_client,
    render_stream,
    replay,
    replay_records,
)

JSON: Final = "application/json"
Code = FixtureProviderErrorCode


def bodies(folder: str) -> list[Path]:
    return sorted((RECORDINGS / folder).glob("*.json"))


def records_of(recording: Recording) -> list[Any]:
    return cast("list[Any]", thaw(recording.response)["records"])


def outcome(recording: Recording) -> CourseModelResponse | FixtureProviderError:
    try:
        return replay(recording)
    except FixtureProviderError as error:
        return error


def texts(response: CourseModelResponse) -> str:
    return "".join(b.text for b in response.message.content if isinstance(b, CourseTextBlock))


def calls(response: CourseModelResponse) -> list[tuple[str, str, object]]:
    return [
        (b.id, b.name, thaw(b.arguments))
        for b in response.message.content
        if not isinstance(b, CourseTextBlock)
    ]


def usage(response: CourseModelResponse) -> tuple[int, int]:
    return response.usage.input_tokens, response.usage.output_tokens


# -- openai-chat: chat.completions.create ---------------------------------------------------


@pytest.mark.parametrize("path", bodies("openai-chat"), ids=lambda path: path.stem)
def test_chat_completions_create_and_the_fixture_agree(path: Path) -> None:
    data = path.read_bytes()
    client = openai_client(data, content_type=JSON)
    completion = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Hi"}]
    )
    (choice,) = completion.choices
    result = outcome(import_recording(data))
    if isinstance(result, CourseModelResponse):
        assert result.response_id == completion.id
        assert texts(result) == (choice.message.content or "")
        assert calls(result) == [
            (call.id, call.function.name, json.loads(call.function.arguments))
            for call in choice.message.tool_calls or []
            if call.type == "function"
        ]
        assert choice.finish_reason == ("tool_calls" if calls(result) else "stop")
        assert completion.usage is not None
        sdk_usage = (completion.usage.prompt_tokens, completion.usage.completion_tokens)
        assert usage(result) == sdk_usage
        return
    # No usable answer: the SDK hands it over as a completion; the fixture fails with the
    # provider's reason, the refusal text as the message.
    assert result.code is Code.PROVIDER_TRANSPORT_ERROR
    if choice.message.refusal:
        assert (result.transport_code, result.transport_message) == (
            "refusal",
            choice.message.refusal,
        )
    else:
        assert result.transport_code == choice.finish_reason


# -- openai-responses: responses.create ----------------------------------------------------


@pytest.mark.parametrize("path", bodies("openai-responses"), ids=lambda path: path.stem)
def test_responses_create_and_the_fixture_agree(path: Path) -> None:
    data = path.read_bytes()
    client = openai_client(data, content_type=JSON)
    response = client.responses.create(model="gpt-4.1", input="Hi")
    result = outcome(import_recording(data))
    function_calls = [
        (item.call_id, item.name, json.loads(item.arguments))
        for item in response.output
        if item.type == "function_call"
    ]
    if isinstance(result, CourseModelResponse):
        assert response.status == "completed"
        assert result.response_id == response.id
        assert texts(result) == response.output_text
        assert calls(result) == function_calls
        assert response.usage is not None
        sdk_usage = (response.usage.input_tokens, response.usage.output_tokens)
        assert usage(result) == sdk_usage
        return
    assert result.code is Code.PROVIDER_TRANSPORT_ERROR
    if response.status == "incomplete":
        assert response.incomplete_details is not None
        assert result.transport_code == response.incomplete_details.reason
    elif response.status == "failed":
        assert response.error is not None
        assert (result.transport_code, result.transport_message) == (
            response.error.code,
            response.error.message,
        )
    else:  # completed with a refusal
        refusals = [
            part.refusal
            for item in response.output
            if item.type == "message"
            for part in item.content
            if part.type == "refusal"
        ]
        assert (result.transport_code, result.transport_message) == ("refusal", "".join(refusals))


# -- anthropic: messages.create ------------------------------------------------------------


@pytest.mark.parametrize("path", bodies("anthropic"), ids=lambda path: path.stem)
def test_messages_create_and_the_fixture_agree(path: Path) -> None:
    data = path.read_bytes()
    client = anthropic_client(data, content_type=JSON)
    message = client.messages.create(
        model="claude-opus-4-7", max_tokens=1024, messages=[{"role": "user", "content": "Hi"}]
    )
    result = outcome(import_recording(data))
    text = "".join(block.text for block in message.content if block.type == "text")
    tool_uses = [
        (block.id, block.name, block.input) for block in message.content if block.type == "tool_use"
    ]
    if isinstance(result, CourseModelResponse):
        assert result.response_id == message.id
        assert texts(result) == text
        assert calls(result) == tool_uses
        normal = ("tool_use",) if tool_uses else ("end_turn", "stop_sequence")
        assert message.stop_reason in normal
        assert usage(result) == (message.usage.input_tokens, message.usage.output_tokens)
        return
    assert result.code is Code.PROVIDER_TRANSPORT_ERROR
    assert result.transport_code == message.stop_reason


def test_a_message_cut_short_keeps_its_text_and_drops_its_last_tool_use() -> None:
    data = (RECORDINGS / "anthropic" / "message_max_tokens.json").read_bytes()
    recording = import_recording(data)
    kinds = [record["type"] for record in records_of(recording)]
    # The SDK would hand over the last tool_use, whose input may be partial: no call here.
    assert kinds == ["response_start", "text_delta", "transport_error"]
    assert recording.ignored == {"content:tool_use": 1}


# -- the renderers' whole bodies: what the stream of the same answer gives ------------------

_TEXT: Final = st.text(min_size=1, max_size=8)
_IDS: Final = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=8)
_ARGUMENTS: Final = st.dictionaries(
    st.text(max_size=4), st.none() | st.integers(-5, 5) | st.text(max_size=4), max_size=3
)


@st.composite
def completing(draw: st.DrawFn) -> list[object]:
    """A fixture response that completes: text deltas and tool calls, then its end."""
    records: list[object] = [{"type": "response_start", "responseId": "r1", "role": "assistant"}]
    kinds = draw(st.lists(st.sampled_from(["text", "tool"]), max_size=5))
    ids = iter(draw(st.lists(_IDS, min_size=len(kinds), max_size=len(kinds), unique=True)))
    for kind in kinds:
        if kind == "text":
            records.append({"type": "text_delta", "text": draw(_TEXT)})
        else:
            call = {"id": next(ids), "name": draw(_IDS), "arguments": draw(_ARGUMENTS)}
            records.append({"type": "tool_call", **call})
    usage = {"inputTokens": draw(st.integers(0, 99)), "outputTokens": draw(st.integers(0, 99))}
    stop = "tool_call" if "tool" in kinds else "stop"
    records.append({"type": "response_end", "responseId": "r1", "stopReason": stop, "usage": usage})
    return records


def view(records: list[Any]) -> list[object]:
    """Records with each run of text deltas joined (a whole body has one per block)."""
    merged: list[Any] = []
    for record in records:
        if record["type"] == "text_delta" and merged and merged[-1]["type"] == "text_delta":
            merged[-1] = {"type": "text_delta", "text": merged[-1]["text"] + record["text"]}
        else:
            merged.append(record)
    return merged


def in_chat_order(records: list[Any]) -> list[Any]:
    """Chat completes its tool calls at the finish: every text comes before them."""
    text = [r for r in records if r["type"] == "text_delta"]
    tools = [r for r in records if r["type"] == "tool_call"]
    return [records[0], *text, *tools, records[-1]]


RENDERERS: Final[dict[str, type[StreamRenderer]]] = {
    "openai-chat": ChatRenderer,
    "openai-responses": ResponsesRenderer,
    "anthropic": AnthropicRenderer,
}


@pytest.mark.parametrize("format", sorted(RENDERERS))
@settings(max_examples=25)
@given(records=completing())
def test_a_whole_body_imports_as_the_stream_of_the_same_answer(
    format: str, records: list[object]
) -> None:
    if format == "openai-chat":
        records = in_chat_order(cast("list[Any]", records))
    renderer = RENDERERS[format]
    # A Chat stream carries usage only when the request asks for it, as OpenAI's does.
    asks_usage: dict[str, Any] = {"stream_options": {"include_usage": True}}
    streamed = import_recording(
        render_stream(renderer("m", asks_usage), records).body, format=format
    )
    whole = renderer("m").whole(replay_records(records))
    body = import_recording(json.dumps(whole))
    assert body.format == format
    assert body.truncated is False
    got = view(records_of(body))
    assert got == view(records_of(streamed))
    assert got == view(cast("list[Any]", records))
