"""Rendering fixtures as ``openai-chat``: what the official SDK makes of the bytes.

Each response is rendered as the server renders it (``open`` at the first chunk, then
``chunk`` per chunk, then ``complete`` or ``fail``; a failure before the first chunk,
or without streaming, is HTTP 500 with ``error_body``), and the bytes are handed to the
real ``openai`` client through ``tests/vendor_helpers.py``: the stream helper
(``chat.completions.stream``), the raw chunk iterator (``create(stream=True)``) and
the non-streaming ``create``. Importing what was rendered gives back the records
(the SPEC's round trip).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course import (
    FixtureProviderError,
    FixtureProviderErrorCode,
    thaw,
)
from course.vendors import import_recording, serve
from course.vendors._openai_chat import Renderer
from tests.vendor_helpers import Served, openai_client, render_stream, render_whole, replay_records

MODEL = "gpt-4o-2024-08-06"
BUNDLED = Path(__file__).parent.parent / "course" / "fixtures" / "provider-tool-roundtrip.json"
MESSAGES: Any = [{"role": "user", "content": "What is 20 + 22?"}]


USAGE: Any = {"stream_options": {"include_usage": True}}
"""A request that asks for the usage chunk (OpenAI streams it only then)."""


def serve_stream(records: list[dict[str, Any]], request: Any = USAGE) -> Served:
    """The streaming answer to ``request``, rendered as the server renders it."""
    return render_stream(Renderer(MODEL, request), records)


def serve_whole(records: list[dict[str, Any]]) -> Served:
    """The non-streaming answer."""
    return render_whole(Renderer(MODEL), records)


def client_for(served: Served) -> openai.OpenAI:
    return openai_client(served.body, content_type=served.content_type, status=served.status)


def sdk_stream(served: Served) -> Any:
    """The stream helper's final completion."""
    with client_for(served).chat.completions.stream(model=MODEL, messages=MESSAGES) as stream:
        for _event in stream:
            pass
        return stream.get_final_completion()


def sdk_chunks(served: Served) -> list[Any]:
    """The raw chunks of ``create(stream=True)``."""
    return list(
        client_for(served).chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
    )


def sdk_whole(served: Served) -> Any:
    return client_for(served).chat.completions.create(model=MODEL, messages=MESSAGES)


def bundled(index: int) -> list[dict[str, Any]]:
    return json.loads(BUNDLED.read_text())["responses"][index]["records"]  # type: ignore[no-any-return]


def events_of(body: bytes) -> list[Any]:
    """The data of each event: parsed JSON, or the literal ``[DONE]``."""
    out: list[Any] = []
    for block in body.decode().split("\n\n"):
        if block:
            assert block.startswith("data: ") and "\n" not in block
            data = block[6:]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


# -- the bundled fixture --------------------------------------------------------------------------


def test_the_tool_response_streams_in_the_specified_shapes() -> None:
    before = int(time.time())
    served = serve_stream(bundled(0))
    assert (served.status, served.content_type) == (200, "text/event-stream")
    events = events_of(served.body)
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    for event in chunks:
        assert event["id"] == "response-tool-001"
        assert event["object"] == "chat.completion.chunk"
        assert event["model"] == MODEL
        assert before <= event["created"] <= int(time.time())
    assert [event["choices"] for event in chunks] == [
        [
            {
                "index": 0,
                "delta": {"role": "assistant", "content": None},  # a tool call comes first
                "logprobs": None,
                "finish_reason": None,
            }
        ],
        [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call-add-001",
                            "type": "function",
                            "function": {"name": "add", "arguments": '{"left":20,"right":22}'},
                        }
                    ]
                },
                "logprobs": None,
                "finish_reason": None,
            }
        ],
        [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}],
        [],
    ]
    assert chunks[-1]["usage"] == {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}
    assert [chunk["usage"] for chunk in chunks[:-1]] == [None, None, None]


def test_without_include_usage_no_chunk_carries_usage_as_openai_sends_it() -> None:
    for request in ({}, {"stream_options": {"include_usage": False}}, {"stream_options": None}):
        events = events_of(serve_stream(bundled(1), request).body)
        assert events[-1] == "[DONE]"
        chunks = events[:-1]
        assert [len(chunk["choices"]) for chunk in chunks] == [1, 1, 1]
        assert all("usage" not in chunk for chunk in chunks)
        # So the openai-python README's own loop reads every chunk.
        served = serve_stream(bundled(1), request)
        texts = [chunk.choices[0].delta.content or "" for chunk in sdk_chunks(served)]
        assert "".join(texts) == "The sum is 42."
        assert sdk_stream(served).usage is None


def test_the_opening_content_is_null_exactly_when_a_tool_call_comes_first() -> None:
    call = {"type": "tool_call", "id": "c", "name": "f", "arguments": {}}
    tool_end = {**END, "stopReason": "tool_call"}
    cases: list[tuple[list[dict[str, Any]], str | None]] = [
        ([START, call, tool_end], None),
        ([START, call, {"type": "text_delta", "text": "after"}, tool_end], None),
        ([START, {"type": "text_delta", "text": "first"}, call, tool_end], ""),
        ([START, END], ""),
    ]
    for records, content in cases:
        first = events_of(serve_stream(records).body)[0]
        assert first["choices"][0]["delta"] == {"role": "assistant", "content": content}
    # A tool call alone: the SDK's streamed message equals the non-streamed one.
    streamed = sdk_stream(serve_stream([START, call, tool_end])).choices[0].message
    whole = sdk_whole(serve_whole([START, call, tool_end])).choices[0].message
    assert streamed.content is whole.content is None
    assert streamed.tool_calls[0].id == whole.tool_calls[0].id == "c"


def test_the_bundled_fixture_through_the_stream_helper() -> None:
    tool = sdk_stream(serve_stream(bundled(0)))
    assert tool.id == "response-tool-001"
    assert tool.model == MODEL
    (choice,) = tool.choices
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert (call.id, call.type, call.function.name) == ("call-add-001", "function", "add")
    assert json.loads(call.function.arguments) == {"left": 20, "right": 22}
    assert (tool.usage.prompt_tokens, tool.usage.completion_tokens) == (12, 8)
    assert tool.usage.total_tokens == 20

    text = sdk_stream(serve_stream(bundled(1)))
    assert text.id == "response-text-001"
    assert text.choices[0].message.content == "The sum is 42."
    assert text.choices[0].message.tool_calls in (None, [])
    assert text.choices[0].finish_reason == "stop"
    assert (text.usage.prompt_tokens, text.usage.completion_tokens) == (30, 6)


def test_the_bundled_fixture_through_the_raw_chunk_iterator() -> None:
    chunks = sdk_chunks(serve_stream(bundled(1)))
    assert [chunk.id for chunk in chunks] == ["response-text-001"] * 4
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[1].choices[0].delta.content == "The sum is 42."
    assert chunks[2].choices[0].finish_reason == "stop"
    assert chunks[3].choices == []
    assert chunks[3].usage.completion_tokens == 6


def test_the_bundled_fixture_not_streamed() -> None:
    tool = sdk_whole(serve_whole(bundled(0)))
    assert (tool.id, tool.object, tool.model) == ("response-tool-001", "chat.completion", MODEL)
    (choice,) = tool.choices
    assert choice.finish_reason == "tool_calls"
    assert choice.message.role == "assistant"
    assert choice.message.content is None
    (call,) = choice.message.tool_calls
    assert (call.id, call.function.name) == ("call-add-001", "add")
    assert call.function.arguments == '{"left":20,"right":22}'
    assert (tool.usage.prompt_tokens, tool.usage.completion_tokens) == (12, 8)

    text = sdk_whole(serve_whole(bundled(1)))
    assert text.choices[0].message.content == "The sum is 42."
    assert text.choices[0].message.tool_calls is None
    assert text.choices[0].finish_reason == "stop"
    assert (text.usage.prompt_tokens, text.usage.total_tokens) == (30, 36)


def test_the_bundled_fixture_through_a_real_server() -> None:
    fixture = json.loads(BUNDLED.read_text())
    with serve(fixture) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)
        with client.chat.completions.stream(model="m", messages=MESSAGES) as stream:
            tool = stream.get_final_completion()
        text = client.chat.completions.create(model="m", messages=MESSAGES)
    assert tool.choices[0].message.tool_calls is not None
    assert tool.choices[0].message.tool_calls[0].id == "call-add-001"
    assert tool.choices[0].finish_reason == "tool_calls"
    assert text.choices[0].message.content == "The sum is 42."
    assert text.usage is not None and text.usage.prompt_tokens == 30


def test_the_bundled_fixture_round_trips() -> None:
    for index in (0, 1):
        records = bundled(index)
        imported = thaw(import_recording(serve_stream(records).body).response)["records"]
        assert imported == _camel(records)
        # Without the usage chunk, the import is given the usage, as the SPEC says.
        usage: Any = _camel(records)[-1]["usage"]  # the second response is snake_case
        counts = (usage["inputTokens"], usage["outputTokens"])
        without = serve_stream(records, {}).body
        assert thaw(import_recording(without, usage=counts).response)["records"] == imported


# -- failures ------------------------------------------------------------------------------------

START = {"type": "response_start", "responseId": "chatcmpl-r1", "role": "assistant"}
END = {
    "type": "response_end",
    "responseId": "chatcmpl-r1",
    "stopReason": "stop",
    "usage": {"inputTokens": 3, "outputTokens": 4},
}


def test_a_transport_error_after_a_chunk_is_an_in_stream_error() -> None:
    records = [
        START,
        {"type": "text_delta", "text": "Partial"},
        {"type": "transport_error", "message": "Upstream reset", "code": "server_error"},
    ]
    served = serve_stream(records)
    events = events_of(served.body)
    assert events[-2:] == [
        {"error": {"message": "Upstream reset", "type": "server_error", "code": "server_error"}},
        "[DONE]",
    ]
    with pytest.raises(openai.APIError) as info:
        sdk_stream(served)
    error = info.value
    assert type(error) is openai.APIError  # not an HTTP status error: the status was 200
    assert (error.message, error.code, error.type) == (
        "Upstream reset",
        "server_error",
        "server_error",
    )
    assert error.body == {
        "message": "Upstream reset",
        "type": "server_error",
        "code": "server_error",
    }
    with pytest.raises(openai.APIError):
        sdk_chunks(served)


def test_an_in_stream_error_without_a_code() -> None:
    records = [
        START,
        {"type": "text_delta", "text": "a"},
        {"type": "transport_error", "message": "Gone"},
    ]
    served = serve_stream(records)
    assert events_of(served.body)[-2] == {"error": {"message": "Gone", "type": None, "code": None}}
    with pytest.raises(openai.APIError) as info:
        sdk_stream(served)
    assert (info.value.message, info.value.code, info.value.type) == ("Gone", None, None)


def test_an_in_stream_error_with_an_empty_message_keeps_its_code() -> None:
    records = [
        START,
        {"type": "text_delta", "text": "a"},
        {"type": "transport_error", "message": "", "code": "c"},
    ]
    with pytest.raises(openai.APIError) as info:
        sdk_stream(serve_stream(records))
    # The SDK replaces an empty message with its own words; the code still arrives.
    assert info.value.message == "An error occurred during streaming"
    assert info.value.code == "c"


def test_a_fixture_error_mid_stream_carries_the_fixture_code() -> None:
    records = [START, {"type": "text_delta", "text": "a"}, {"type": "bogus"}]
    with pytest.raises(openai.APIError) as info:
        sdk_stream(serve_stream(records))
    assert info.value.code == "PROVIDER_UNKNOWN_EVENT"
    assert "bogus" in info.value.message


def test_a_failure_before_the_first_chunk_is_http_500() -> None:
    records = [START, {"type": "transport_error", "message": "Overloaded", "code": "overloaded"}]
    served = serve_stream(records)
    assert served.status == 500
    assert json.loads(served.body) == {
        "error": {"message": "Overloaded", "type": "overloaded", "code": "overloaded"}
    }
    for call in (sdk_stream, sdk_chunks, sdk_whole):
        with pytest.raises(openai.InternalServerError) as info:
            call(served)
        assert info.value.status_code == 500
        assert info.value.code == "overloaded"
        assert info.value.message == "Error code: 500 - Overloaded"


def test_a_failure_without_streaming_is_http_500() -> None:
    served = serve_whole(
        [START, {"type": "text_delta", "text": "x"}, {"type": "transport_error", "message": "m"}]
    )
    assert served.status == 500
    assert json.loads(served.body) == {"error": {"message": "m", "type": None, "code": None}}
    with pytest.raises(openai.InternalServerError) as info:
        sdk_whole(served)
    assert (info.value.code, info.value.type) == (None, None)


def test_the_error_body_of_a_fixture_error_names_its_code() -> None:
    error = FixtureProviderError(FixtureProviderErrorCode.PROVIDER_EXHAUSTED, "No response left")
    assert Renderer.error_body(error) == {
        "error": {
            "message": "No response left",
            "type": "PROVIDER_EXHAUSTED",
            "code": "PROVIDER_EXHAUSTED",
        }
    }
    text = Renderer(MODEL).fail(error)
    assert events_of(text.encode()) == [Renderer.error_body(error), "[DONE]"]


def test_a_response_without_chunks_still_opens_the_stream() -> None:
    served = serve_stream([START, END])
    final = sdk_stream(served)
    assert final.choices[0].message.content == ""
    assert final.choices[0].finish_reason == "stop"
    whole = sdk_whole(serve_whole([START, END]))
    assert whole.choices[0].message.content is None


# -- generated fixtures -----------------------------------------------------------------------

# Any code point, lone surrogates included (fixture strings may hold them: JSON "\ud800").
_characters = st.one_of(
    st.characters(codec=None, categories=None, exclude_categories=()),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
)
_ids = st.text(_characters, min_size=1, max_size=10)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(_characters, max_size=6),
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(_characters, max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_arguments = st.dictionaries(st.text(_characters, max_size=6), _json, max_size=4)
_usage = st.fixed_dictionaries(
    {"inputTokens": st.integers(0, 2**53 - 1), "outputTokens": st.integers(0, 2**53 - 1)}
)


@st.composite
def responses(draw: st.DrawFn, *, round_trip: bool = False) -> list[dict[str, Any]]:
    """A fixture response: text deltas and tool calls, then an end or a transport error.

    With ``round_trip``, only what the SPEC's round trip covers: non-empty text deltas
    before every tool call, a coded transport error after at least one chunk and after
    no tool call.
    """
    response_id = draw(_ids)
    texts = draw(
        st.lists(st.text(_characters, min_size=1 if round_trip else 0, max_size=8), max_size=4)
    )
    call_ids = draw(st.lists(_ids, unique=True, max_size=3))
    calls = [
        {"type": "tool_call", "id": call_id, "name": draw(_ids), "arguments": draw(_arguments)}
        for call_id in call_ids
    ]
    body: list[dict[str, Any]] = [{"type": "text_delta", "text": text} for text in texts]
    if round_trip:
        body += calls
    else:
        for call in calls:
            body.insert(draw(st.integers(0, len(body))), call)
    fails = draw(st.booleans())
    if round_trip and (calls or not body):
        fails = False
    records: list[dict[str, Any]] = [
        {"type": "response_start", "responseId": response_id, "role": "assistant"},
        *body,
    ]
    if fails:
        message = draw(st.text(_characters, max_size=8))
        error: dict[str, Any] = {"type": "transport_error", "message": message}
        if round_trip or draw(st.booleans()):
            error["code"] = draw(st.text(_characters, max_size=8))
        records.append(error)
    else:
        records.append(
            {
                "type": "response_end",
                "responseId": response_id,
                "stopReason": "tool_call" if calls else "stop",
                "usage": draw(_usage),
            }
        )
    return records


def _camel(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for record in records:
        if record["type"] != "response_end":
            out.append(record)
            continue
        usage = record["usage"]
        camel = {
            "inputTokens": usage.get("inputTokens", usage.get("input_tokens")),
            "outputTokens": usage.get("outputTokens", usage.get("output_tokens")),
        }
        out.append({**record, "usage": camel})
    return out


def _chunk_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [record for record in records if record["type"] in ("text_delta", "tool_call")]


@given(responses())
def test_generated_responses_through_the_stream_helper(records: list[dict[str, Any]]) -> None:
    served = serve_stream(records)
    chunks = _chunk_records(records)
    last = records[-1]
    if last["type"] == "transport_error":
        expected_code = last.get("code")
        if not chunks:
            with pytest.raises(openai.InternalServerError) as status_info:
                sdk_stream(served)
            assert status_info.value.code == expected_code
            return
        with pytest.raises(openai.APIError) as info:
            sdk_stream(served)
        assert type(info.value) is openai.APIError
        assert info.value.code == expected_code
        assert info.value.message == (last["message"] or "An error occurred during streaming")
        return
    final = sdk_stream(served)
    assert final.id == records[0]["responseId"]
    (choice,) = final.choices
    texts = [record["text"] for record in chunks if record["type"] == "text_delta"]
    # Opened with content null when a tool call came first: then text appends to it.
    tool_first = bool(chunks) and chunks[0]["type"] == "tool_call"
    assert choice.message.content == ("".join(texts) if texts or not tool_first else None)
    calls = [record for record in chunks if record["type"] == "tool_call"]
    assert [
        (call.id, call.function.name, json.loads(call.function.arguments))
        for call in choice.message.tool_calls or []
    ] == [(call["id"], call["name"], call["arguments"]) for call in calls]
    assert choice.finish_reason == ("tool_calls" if calls else "stop")
    assert (final.usage.prompt_tokens, final.usage.completion_tokens) == (
        last["usage"]["inputTokens"],
        last["usage"]["outputTokens"],
    )


@given(responses())
def test_generated_responses_not_streamed(records: list[dict[str, Any]]) -> None:
    served = serve_whole(records)
    last = records[-1]
    if last["type"] == "transport_error":
        assert served.status == 500
        with pytest.raises(openai.InternalServerError) as info:
            sdk_whole(served)
        assert info.value.code == last.get("code")
        return
    completion = sdk_whole(served)
    response = replay_records(records)
    (choice,) = completion.choices
    texts = [block.text for block in response.message.content if block.type == "text"]
    assert choice.message.content == ("".join(texts) if texts else None)
    calls = [block for block in response.message.content if block.type == "toolCall"]
    assert [
        (call.id, call.function.name, json.loads(call.function.arguments))
        for call in choice.message.tool_calls or []
    ] == [(call.id, call.name, thaw(call.arguments)) for call in calls]
    assert choice.finish_reason == ("tool_calls" if calls else "stop")
    assert completion.usage.completion_tokens == response.usage.output_tokens


@given(responses())
def test_generated_responses_as_raw_chunks(records: list[dict[str, Any]]) -> None:
    served = serve_stream(records)
    if records[-1]["type"] == "transport_error":
        return  # covered above
    chunks = sdk_chunks(served)
    expected = _chunk_records(records)
    assert len(chunks) == len(expected) + 3  # the opening, finish and usage chunks
    assert {chunk.id for chunk in chunks} == {records[0]["responseId"]}
    assert all(len(chunk.choices) == 1 and chunk.choices[0].index == 0 for chunk in chunks[:-1])
    assert chunks[-1].choices == []
    calls = [chunk.choices[0].delta.tool_calls for chunk in chunks[1:-2]]
    positions = [fragments[0].index for fragments in calls if fragments]
    assert positions == list(range(len(positions)))


@given(responses(round_trip=True))
def test_importing_what_was_rendered_gives_back_the_records(records: list[dict[str, Any]]) -> None:
    served = serve_stream(records)
    assert served.status == 200
    imported = import_recording(served.body)
    assert imported.truncated is False
    assert thaw(imported.response)["records"] == _camel(records)
