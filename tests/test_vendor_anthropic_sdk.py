"""The ``anthropic`` format against the official SDK, both ways, in schema version 1
(version 2: ``test_vendor_anthropic_v2_sdk.py``).

- Each recording in ``tests/recordings/anthropic`` is fed to ``client.messages.stream``;
  the SDK's final message must agree with the imported fixture's replay.
- Fixtures (the bundled one, and generated ones) are rendered exactly as the server
  drives the renderer, fed to the SDK's stream helper and to its non-streaming
  ``create``, and must give back the fixture's response or error.
- Importing what the renderer streams gives back the response's records (round trip).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, cast

import anthropic
import pytest
from anthropic.types import Message, ParsedMessage
from hypothesis import given
from hypothesis import strategies as st

from course import (
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
    CourseTextDeltaChunk,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    thaw,
)
from course.vendors import Recording, import_recording
from course.vendors._anthropic import Renderer

from .helpers import roundtrip
from .strategies import arguments as any_arguments
from .strategies import sdk_arguments
from .vendor_helpers import RECORDINGS, anthropic_client, render_stream

MODEL: Final = "claude-opus-4-7"  # not one the SDK warns about as deprecated
JSON: Final = "application/json"

# What course's view of a message keeps: text (runs of deltas joined) and tool calls.
Item = tuple[str, ...]


# -- playing a fixture response as the server does ----------------------------------------


@dataclass
class Played:
    """Everything one fixture response produced through the adapter."""

    chunks: list[CourseModelChunk]
    response: CourseModelResponse | None
    error: FixtureProviderError | None


def play(records: Sequence[object]) -> Played:
    adapter = FixtureProviderAdapter({"schemaVersion": 1, "responses": [{"records": records}]})

    async def run() -> Played:
        stream = adapter.stream(CourseModelRequest(id="request-1"))
        chunks: list[CourseModelChunk] = []
        try:
            async for chunk in stream:
                chunks.append(chunk)
            return Played(chunks, await stream.result(), None)
        except FixtureProviderError as error:
            return Played(chunks, None, error)

    return asyncio.run(run())


def render(records: Sequence[object]) -> tuple[int, bytes]:
    """The status and body the server sends for a streaming request."""
    served = render_stream(Renderer(MODEL), records)
    return served.status, served.body


def sdk_stream(body: bytes, status: int = 200) -> ParsedMessage[None]:
    """The SDK's final message for a streamed body (raises what the SDK raises)."""
    content_type = "text/event-stream" if status == 200 else JSON
    client = anthropic_client(body, content_type=content_type, status=status)
    with client.messages.stream(
        model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": "Hi"}]
    ) as stream:
        return stream.get_final_message()


def sdk_create(body: object, status: int = 200) -> Message:
    client = anthropic_client(json.dumps(body).encode(), content_type=JSON, status=status)
    return client.messages.create(
        model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": "Hi"}]
    )


# -- the two views of a message -----------------------------------------------------------


def _merged(items: list[Item]) -> list[Item]:
    merged: list[Item] = []
    for item in items:
        if item[0] == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + item[1])
        else:
            merged.append(item)
    return [item for item in merged if item != ("text", "")]


def _arguments(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def sdk_view(message: Message) -> list[Item]:
    """Text and tool calls of an SDK message; other blocks (thinking, server tools)
    are skipped, as the importer skips them, and adjacent text joins."""
    items: list[Item] = []
    for block in message.content:
        if block.type == "text":
            items.append(("text", block.text))
        elif block.type == "tool_use":
            items.append(("tool", block.id, block.name, _arguments(block.input)))
    return _merged(items)


def course_view(chunks: Sequence[CourseModelChunk]) -> list[Item]:
    items: list[Item] = []
    for chunk in chunks:
        if isinstance(chunk, CourseTextDeltaChunk):
            items.append(("text", chunk.text))
        elif isinstance(chunk, CourseToolCallChunk):
            items.append(("tool", chunk.id, chunk.name, _arguments(thaw(chunk.arguments))))
    return _merged(items)


def records_of(recording: Recording) -> list[dict[str, object]]:
    """The imported response's records, as plain JSON."""
    return cast("list[dict[str, object]]", thaw(recording.response)["records"])


def usage_of(message: Message) -> tuple[int, int]:
    return message.usage.input_tokens, message.usage.output_tokens


STOP_REASONS: Final = {"stop": "end_turn", "toolCall": "tool_use"}
"""How the renderer spells course's stop reasons."""


# -- recordings: the SDK's accumulator and the importer agree -----------------------------

RECORDING_PATHS: Final = sorted((RECORDINGS / "anthropic").glob("*.sse"))


@pytest.mark.parametrize("path", RECORDING_PATHS, ids=lambda path: path.stem)
def test_the_sdk_and_the_imported_fixture_agree_on_every_recording(path: Path) -> None:
    data = path.read_bytes()
    recording = import_recording(data, format="anthropic", schema_version=1)
    played = play(cast("list[object]", records_of(recording)))
    if played.response is not None:  # a successful stream
        message = sdk_stream(data)
        assert message.id == played.response.response_id
        assert sdk_view(message) == course_view(played.chunks)
        # end_turn and stop_sequence are course's "stop"
        sdk_stop = "tool_use" if message.stop_reason == "tool_use" else "end_turn"
        assert sdk_stop == STOP_REASONS[played.response.stop_reason]
        usage = played.response.usage
        assert usage_of(message) == (usage.input_tokens, usage.output_tokens)
        return
    error = played.error
    assert error is not None
    if recording.truncated:
        # The SDK accepts a cut stream as a final message without a stop reason;
        # course refuses to call it a success.
        assert error.code is FixtureProviderErrorCode.PROVIDER_MISSING_TERMINAL
        message = sdk_stream(data)
        assert message.stop_reason is None
        assert sdk_view(message)[: len(played.chunks)] == course_view(played.chunks)
        return
    assert error.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
    try:
        message = sdk_stream(data)
    except anthropic.APIStatusError as sdk_error:  # an error event
        assert type(sdk_error) is anthropic.APIStatusError  # status 200: no subclass
        assert sdk_error.type == error.transport_code
        assert sdk_error.api_message == error.transport_message
        return
    # A stop reason that is neither a stop nor a tool call: the SDK reports it as the
    # message's stop reason; course makes it the transport error's code.
    assert message.stop_reason == error.transport_code
    course = course_view(played.chunks)
    assert [item for item in sdk_view(message) if item[0] == "text" or item in course] == course


def test_the_sdk_keeps_a_partial_tool_input_that_course_drops() -> None:
    data = (RECORDINGS / "anthropic" / "max_tokens.sse").read_bytes()
    message = sdk_stream(data)
    assert message.stop_reason == "max_tokens"
    partial = [block for block in message.content if block.type == "tool_use"]
    assert [block.input for block in partial] == [{"filename": "taxes.txt", "lines": ["# A GUIDE"]}]
    records = records_of(import_recording(data, schema_version=1))
    assert "tool_call" not in [record["type"] for record in records]


# -- the renderer: the bundled fixture ----------------------------------------------------


def bundled_responses() -> list[list[object]]:
    responses = cast("list[dict[str, list[object]]]", roundtrip()["responses"])
    return [response["records"] for response in responses]


@pytest.mark.parametrize("index", [0, 1], ids=["tool-call", "text"])
def test_the_bundled_fixture_streams_to_the_sdk(index: int) -> None:
    records = bundled_responses()[index]
    played = play(records)
    assert played.response is not None
    status, body = render(records)
    assert status == 200
    message = sdk_stream(body)
    assert message.id == played.response.response_id
    assert message.model == MODEL
    assert sdk_view(message) == course_view(played.chunks)
    assert message.stop_reason == STOP_REASONS[played.response.stop_reason]
    usage = played.response.usage
    assert usage_of(message) == (usage.input_tokens, usage.output_tokens)


def test_the_bundled_tool_call_streams_exactly_as_serve_lists() -> None:
    body = render(bundled_responses()[0])[1]
    events = [
        (block.split("\n")[0], json.loads(block.split("\n")[1][len("data: ") :]))
        for block in body.decode().split("\n\n")
        if block
    ]
    assert events == [
        (
            "event: message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "response-tool-001",
                    "type": "message",
                    "role": "assistant",
                    "model": MODEL,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                },
            },
        ),
        (
            "event: content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {
                    "type": "tool_use",
                    "id": "call-add-001",
                    "name": "add",
                    "input": {},
                },
            },
        ),
        (
            "event: content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"left":20,"right":22}'},
            },
        ),
        ("event: content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "event: message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"input_tokens": 12, "output_tokens": 8},
            },
        ),
        ("event: message_stop", {"type": "message_stop"}),
    ]


@pytest.mark.parametrize("index", [0, 1], ids=["tool-call", "text"])
def test_the_bundled_fixture_as_a_whole_message_through_create(index: int) -> None:
    played = play(bundled_responses()[index])
    assert played.response is not None
    message = sdk_create(Renderer(MODEL).whole(played.response))
    assert type(message) is Message
    assert message.id == played.response.response_id
    assert sdk_view(message) == course_view(played.chunks)
    assert message.stop_reason == STOP_REASONS[played.response.stop_reason]
    usage = played.response.usage
    assert usage_of(message) == (usage.input_tokens, usage.output_tokens)


def test_a_run_of_text_deltas_is_one_text_block_streamed_and_whole() -> None:
    records: list[object] = [
        {"type": "response_start", "responseId": "msg_1", "role": "assistant"},
        {"type": "text_delta", "text": "The sum "},
        {"type": "text_delta", "text": "is "},
        {"type": "tool_call", "id": "toolu_1", "name": "add", "arguments": {"left": 1}},
        {"type": "text_delta", "text": "42."},
        {
            "type": "response_end",
            "responseId": "msg_1",
            "stopReason": "tool_call",
            "usage": {"inputTokens": 3, "outputTokens": 4},
        },
    ]
    expected = [("text", "The sum is "), ("tool", "toolu_1", "add", '{"left": 1}'), ("text", "42.")]
    streamed = sdk_stream(render(records)[1])
    assert [block.type for block in streamed.content] == ["text", "tool_use", "text"]
    assert sdk_view(streamed) == expected
    response = play(records).response
    assert response is not None
    whole = sdk_create(Renderer(MODEL).whole(response))
    assert [block.type for block in whole.content] == ["text", "tool_use", "text"]
    assert sdk_view(whole) == expected


def test_a_response_without_content_streams_an_empty_message() -> None:
    records: list[object] = [
        {"type": "response_start", "responseId": "msg_empty", "role": "assistant"},
        {
            "type": "response_end",
            "responseId": "msg_empty",
            "stopReason": "stop",
            "usage": {"inputTokens": 1, "outputTokens": 0},
        },
    ]
    message = sdk_stream(render(records)[1])
    assert (message.id, message.content, message.stop_reason) == ("msg_empty", [], "end_turn")


# -- the renderer: failures ---------------------------------------------------------------


def _start(response_id: str = "msg_1") -> dict[str, object]:
    return {"type": "response_start", "responseId": response_id, "role": "assistant"}


def _transport_error(message: str, code: str | None) -> dict[str, object]:
    record: dict[str, object] = {"type": "transport_error", "message": message}
    if code is not None:
        record["code"] = code
    return record


@pytest.mark.parametrize(
    ("code", "sdk_type"), [("overloaded_error", "overloaded_error"), (None, "api_error")]
)
def test_a_failure_after_the_first_chunk_is_an_in_stream_error_event(
    code: str | None, sdk_type: str
) -> None:
    records = [
        _start(),
        {"type": "text_delta", "text": "Once"},
        _transport_error("Overloaded", code),
    ]
    status, body = render(records)
    assert status == 200
    assert body.decode().endswith(
        'event: error\ndata: {"type":"error","error":{"type":"'
        + sdk_type
        + '","message":"Overloaded"}}\n\n'
    )
    with pytest.raises(anthropic.APIStatusError) as info:
        sdk_stream(body)
    assert type(info.value) is anthropic.APIStatusError
    assert (info.value.type, info.value.api_message) == (sdk_type, "Overloaded")


@pytest.mark.parametrize(
    ("code", "sdk_type"), [("rate_limit_error", "rate_limit_error"), (None, "api_error")]
)
@pytest.mark.parametrize("started", [True, False], ids=["after-start", "before-start"])
def test_a_failure_before_the_first_chunk_is_http_500_with_the_error_body(
    code: str | None, sdk_type: str, started: bool
) -> None:
    records = [*([_start()] if started else []), _transport_error("Try later", code)]
    status, body = render(records)
    assert status == 500
    assert json.loads(body) == {
        "type": "error",
        "error": {"type": sdk_type, "message": "Try later"},
    }
    with pytest.raises(anthropic.InternalServerError) as info:
        sdk_stream(body, status=500)
    assert (info.value.status_code, info.value.type, info.value.api_message) == (
        500,
        sdk_type,
        "Try later",
    )
    with pytest.raises(anthropic.InternalServerError) as info:
        sdk_create(json.loads(body), status=500)
    assert (info.value.type, info.value.api_message) == (sdk_type, "Try later")


def test_a_fixture_failure_carries_its_own_code() -> None:
    records = [_start(), {"type": "text_delta", "text": "Hi"}, {"type": "text_delta"}]
    status, body = render(records)
    assert status == 200
    with pytest.raises(anthropic.APIStatusError) as info:
        sdk_stream(body)
    assert cast("object", info.value.type) == "PROVIDER_MALFORMED_EVENT"  # not an SDK literal
    assert isinstance(info.value.api_message, str) and "text" in info.value.api_message


def test_an_exhausted_adapter_gives_an_error_body_with_its_code() -> None:
    adapter = FixtureProviderAdapter({"schemaVersion": 1, "responses": []})

    async def run() -> FixtureProviderError:
        with pytest.raises(FixtureProviderError) as info:
            await adapter.stream(CourseModelRequest(id="r")).result()
        return info.value

    error = asyncio.run(run())
    body = Renderer.error_body(error)
    assert body == {
        "type": "error",
        "error": {"type": "PROVIDER_EXHAUSTED", "message": error.message},
    }


# -- the renderer: generated fixtures -----------------------------------------------------

_TEXT: Final = st.text(max_size=12)  # lone surrogates included: json.loads reads them
_IDS: Final = st.text(min_size=1, max_size=12)
_COUNTS: Final = st.integers(0, 2**53 - 1)


@st.composite
def responses(
    draw: st.DrawFn,
    arguments: st.SearchStrategy[object] = sdk_arguments,
    *,
    non_empty_text: bool = False,
) -> list[object]:
    """One fixture response: text deltas and tool calls in any order, then an end with
    the matching stop reason, or a transport error (with or without a code) anywhere."""
    response_id = draw(_IDS)
    records: list[object] = [_start(response_id)]
    kinds = draw(st.lists(st.sampled_from(["text", "tool"]), max_size=6))
    call_ids = iter(draw(st.lists(_IDS, min_size=len(kinds), max_size=len(kinds), unique=True)))
    text = _TEXT.filter(bool) if non_empty_text else _TEXT
    for kind in kinds:
        if kind == "text":
            records.append({"type": "text_delta", "text": draw(text)})
        else:
            name = draw(_IDS)
            records.append(
                {
                    "type": "tool_call",
                    "id": next(call_ids),
                    "name": name,
                    "arguments": draw(arguments),
                }
            )
    if draw(st.integers(0, 3)) == 0:
        code = draw(st.none() | _IDS)
        records.append(_transport_error(draw(_TEXT), code))
        return records
    usage = {"inputTokens": draw(_COUNTS), "outputTokens": draw(_COUNTS)}
    stop = "tool_call" if "tool" in kinds else "stop"
    records.append(
        {"type": "response_end", "responseId": response_id, "stopReason": stop, "usage": usage}
    )
    return records


@given(responses())
def test_a_generated_response_streams_to_the_sdk(records: list[object]) -> None:
    played = play(records)
    status, body = render(records)
    if played.response is not None:
        assert status == 200
        message = sdk_stream(body)
        assert message.id == played.response.response_id
        assert sdk_view(message) == course_view(played.chunks)
        assert message.stop_reason == STOP_REASONS[played.response.stop_reason]
        usage = played.response.usage
        assert usage_of(message) == (usage.input_tokens, usage.output_tokens)
        return
    error = played.error
    assert error is not None and error.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
    sdk_type = "api_error" if error.transport_code is None else error.transport_code
    expected: type[anthropic.APIStatusError] = anthropic.APIStatusError
    if played.chunks:
        assert status == 200
    else:
        assert status == 500
        expected = anthropic.InternalServerError
    with pytest.raises(anthropic.APIStatusError) as info:
        sdk_stream(body, status=status)
    assert type(info.value) is expected
    assert (info.value.type, info.value.api_message) == (sdk_type, error.transport_message)


def _completes(records: list[object]) -> bool:
    return cast("dict[str, object]", records[-1])["type"] == "response_end"


@given(responses().filter(_completes))
def test_a_generated_response_as_a_whole_message_through_create(records: list[object]) -> None:
    played = play(records)
    assert played.response is not None
    message = sdk_create(Renderer(MODEL).whole(played.response))
    assert message.id == played.response.response_id
    assert message.model == MODEL
    assert sdk_view(message) == course_view(played.chunks)
    assert message.stop_reason == STOP_REASONS[played.response.stop_reason]
    usage = played.response.usage
    assert usage_of(message) == (usage.input_tokens, usage.output_tokens)


# -- round trip ---------------------------------------------------------------------------


def _meets_the_round_trip_conditions(records: list[object]) -> bool:
    """Completes, or fails after a chunk with a transport error that has a code (the
    generated text deltas are never empty)."""
    last = cast("dict[str, object]", records[-1])
    if last["type"] == "response_end":
        return True
    return "code" in last and len(records) > 2


@given(responses(any_arguments, non_empty_text=True).filter(_meets_the_round_trip_conditions))
def test_importing_what_the_renderer_streams_gives_back_the_records(records: list[object]) -> None:
    status, body = render(records)
    assert status == 200
    recording = import_recording(body, format="anthropic", schema_version=1)
    assert not recording.truncated
    assert records_of(recording) == records
    assert dict(recording.ignored) == {}


def test_the_round_trip_condition_on_codes_is_needed() -> None:
    # A transport error without a code comes back with the code the wire needs.
    records = [_start(), {"type": "text_delta", "text": "x"}, _transport_error("boom", None)]
    imported = records_of(import_recording(render(records)[1], schema_version=1))
    assert imported[-1] == {"type": "transport_error", "message": "boom", "code": "api_error"}


def test_the_round_trip_condition_on_empty_text_is_needed() -> None:
    records = [
        _start(),
        {"type": "text_delta", "text": ""},
        {
            "type": "response_end",
            "responseId": "msg_1",
            "stopReason": "stop",
            "usage": {"inputTokens": 1, "outputTokens": 2},
        },
    ]
    imported = records_of(import_recording(render(records)[1], schema_version=1))
    assert [record["type"] for record in imported] == ["response_start", "response_end"]


def test_the_bundled_fixture_round_trips_with_usage_in_camel_case() -> None:
    for records in bundled_responses():
        recording = import_recording(render(records)[1], schema_version=1)
        assert recording.format == "anthropic"
        end = cast("dict[str, object]", records[-1])
        usage = cast("dict[str, int]", end["usage"])
        counts = {
            "inputTokens": usage.get("inputTokens", usage.get("input_tokens")),
            "outputTokens": usage.get("outputTokens", usage.get("output_tokens")),
        }
        assert records_of(recording) == [*records[:-1], {**end, "usage": counts}]
