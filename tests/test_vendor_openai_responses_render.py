"""Rendering fixtures as ``openai-responses``: what the official SDK makes of the bytes.

Each response is rendered as the server renders it (``open`` at the first chunk, then
``chunk`` per chunk, then ``complete`` or ``fail``; a failure before the first chunk,
or without streaming, is HTTP 500 with ``error_body``), and the bytes are handed to the
real ``openai`` client through ``tests/vendor_helpers.py``: the stream helper
(``responses.stream``), the raw event iterator (``responses.create(stream=True)``) and
the non-streaming ``responses.create``. Every event is also validated strictly against
the SDK's own models. Importing what was rendered gives back the records (the SPEC's
round trip).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai._models import validate_type
from openai.types.responses import Response, ResponseStreamEvent

from course import (
    CourseModelResponse,
    CourseTextBlock,
    CourseToolCallBlock,
    thaw,
)
from course.vendors import import_recording, serve
from course.vendors._openai_responses import Renderer

from .helpers import ROUNDTRIP_PATH
from .vendor_helpers import Served, openai_client, render_stream, render_whole
from .vendor_helpers import replay_records as replayed

MODEL: Final = "gpt-4.1-2025-04-14"
SSE: Final = "text/event-stream"
JSON: Final = "application/json"
Records = list[dict[str, Any]]


def serve_stream(records: Records) -> Served:
    """The streaming answer, rendered as the server renders it."""
    return render_stream(Renderer(MODEL), records)


def serve_whole(records: Records) -> Served:
    """The non-streaming answer."""
    return render_whole(Renderer(MODEL), records)


def client_for(served: Served) -> openai.OpenAI:
    return openai_client(served.body, content_type=served.content_type, status=served.status)


def sdk_stream(served: Served) -> tuple[list[Any], Any]:
    """The stream helper's events, and its final response (or the ``RuntimeError`` that
    ``get_final_response()`` raised)."""
    with client_for(served).responses.stream(model=MODEL, input="What is 20 + 22?") as stream:
        events = list(stream)
        try:
            final: Any = stream.get_final_response()
        except RuntimeError as error:
            final = error
    return events, final


def sdk_raw(served: Served) -> list[Any]:
    """The raw events of ``create(stream=True)``."""
    return list(client_for(served).responses.create(model=MODEL, input="Hi", stream=True))


def sdk_whole(served: Served) -> Any:
    return client_for(served).responses.create(model=MODEL, input="Hi")


def events_of(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Each event's ``event:`` name and parsed data."""
    out: list[tuple[str, dict[str, Any]]] = []
    for block in body.decode().split("\n\n"):
        if not block:
            continue
        name, data = block.split("\n")
        assert name.startswith("event: ") and data.startswith("data: "), block
        out.append((name[7:], json.loads(data[6:])))
    return out


def bundled(index: int) -> Records:
    fixture = json.loads(ROUNDTRIP_PATH.read_text(encoding="utf-8"))
    records: Records = fixture["responses"][index]["records"]
    return records


def start(response_id: str = "resp_1") -> dict[str, Any]:
    return {"type": "response_start", "responseId": response_id, "role": "assistant"}


def text(value: str) -> dict[str, Any]:
    return {"type": "text_delta", "text": value}


def tool(call_id: str, name: str = "add", **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def end(stop: str = "stop", response_id: str = "resp_1", tokens: tuple[int, int] = (3, 5)) -> Any:
    usage = {"inputTokens": tokens[0], "outputTokens": tokens[1]}
    return {"type": "response_end", "responseId": response_id, "stopReason": stop, "usage": usage}


def failure(message: str, code: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "transport_error", "message": message}
    if code is not None:
        record["code"] = code
    return record


# -- what the SDK should see -----------------------------------------------------------------


def expected_items(response: CourseModelResponse) -> list[tuple[str, Any]]:
    """The output items a response becomes: a message per run of text, its text joined;
    a function call per tool call, as (call id, name, arguments)."""
    items: list[tuple[str, Any]] = []
    for block in response.message.content:
        if isinstance(block, CourseTextBlock):
            if items and items[-1][0] == "message":
                items[-1] = ("message", items[-1][1] + block.text)
            else:
                items.append(("message", block.text))
        else:
            assert isinstance(block, CourseToolCallBlock)
            items.append(("function_call", (block.id, block.name, thaw(block.arguments))))
    return items


def sdk_items(final: Any) -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for item in final.output:
        if item.type == "message":
            assert [part.type for part in item.content] == ["output_text"]
            items.append(("message", item.content[0].text))
        else:
            assert item.type == "function_call"
            items.append(("function_call", (item.call_id, item.name, json.loads(item.arguments))))
    return items


def assert_agrees(final: Any, response: CourseModelResponse) -> None:
    """The SDK's response object says what the course response says."""
    assert final.id == response.response_id
    assert final.object == "response"
    assert final.model == MODEL
    assert final.status == "completed"
    assert sdk_items(final) == expected_items(response)
    assert final.output_text == "".join(
        block.text for block in response.message.content if isinstance(block, CourseTextBlock)
    )
    has_calls = any(item.type == "function_call" for item in final.output)
    assert response.stop_reason == ("toolCall" if has_calls else "stop")
    usage = response.usage
    assert (final.usage.input_tokens, final.usage.output_tokens, final.usage.total_tokens) == (
        usage.input_tokens,
        usage.output_tokens,
        usage.input_tokens + usage.output_tokens,
    )


def assert_valid_for_the_sdk(served: Served) -> None:
    """Every event (or the whole body) validates strictly against the SDK's models."""
    if served.status == 500:
        assert set(json.loads(served.body)["error"]) == {"message", "type", "code"}
        return
    if served.content_type == JSON:
        validate_type(type_=Response, value=json.loads(served.body))
        return
    for name, data in events_of(served.body):
        event: Any = validate_type(type_=ResponseStreamEvent, value=data)  # type: ignore[arg-type]
        assert event.type == name


# -- the exact shapes --------------------------------------------------------------------------


MIXED: Final[Records] = [
    start(),
    text("Hel"),
    text("lo"),
    tool("call_1", left=20, right=22),
    tool("call_2", "neg", value=-1.5),
    text("Bye"),
    end("tool_call"),
]


def test_a_response_streams_in_the_specified_shapes() -> None:
    served = serve_stream(MIXED)
    assert (served.status, served.content_type) == (200, SSE)
    events = events_of(served.body)
    assert [name for name, _ in events] == [
        "response.created",
        # a message item for the first run of text
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        # a function call item per tool call
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        # a message item for the last run
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    data = [event for _, event in events]
    assert [event["type"] for event in data] == [name for name, _ in events]
    assert [event["sequence_number"] for event in data] == list(range(len(data)))
    created = data[0]["response"]
    assert (created["id"], created["status"], created["output"], created["model"]) == (
        "resp_1",
        "in_progress",
        [],
        MODEL,
    )
    first_item = data[1]["item"]
    assert first_item["type"] == "message" and first_item["content"] == []
    message_id = first_item["id"]
    for event in data[1:8]:
        assert event["output_index"] == 0
        if "item_id" in event:
            assert (event["item_id"], event["content_index"]) == (message_id, 0)
    assert data[2]["part"] == {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    assert [data[3]["delta"], data[4]["delta"]] == ["Hel", "lo"]
    assert data[5]["text"] == "Hello"
    assert data[6]["part"]["text"] == "Hello"
    assert data[7]["item"] == {**first_item, "status": "completed", "content": [data[6]["part"]]}
    call = data[8]["item"]
    assert (call["type"], call["call_id"], call["name"], call["arguments"]) == (
        "function_call",
        "call_1",
        "add",
        "",
    )
    assert data[9] == {
        "type": "response.function_call_arguments.delta",
        "sequence_number": 9,
        "item_id": call["id"],
        "output_index": 1,
        "delta": '{"left":20,"right":22}',
    }
    assert (data[10]["arguments"], data[10]["name"], data[10]["item_id"]) == (
        '{"left":20,"right":22}',
        "add",
        call["id"],
    )
    assert data[11]["item"] == {
        **call,
        "status": "completed",
        "arguments": '{"left":20,"right":22}',
    }
    assert [data[i]["output_index"] for i in (8, 9, 10, 11, 12, 16, 21)] == [1, 1, 1, 1, 2, 3, 3]
    ids = [data[i]["item"]["id"] for i in (1, 8, 12, 16)]
    assert len(set(ids)) == 4
    final = data[-1]["response"]
    assert final["status"] == "completed"
    assert final["output"] == [data[i]["item"] for i in (7, 11, 15, 21)]
    assert final["usage"]["input_tokens"] == 3
    assert final["usage"]["output_tokens"] == 5
    assert final["usage"]["total_tokens"] == 8


def test_every_rendered_event_and_body_validates_strictly_against_the_sdk() -> None:
    for records in (MIXED, bundled(0), bundled(1), [start(), end()]):
        assert_valid_for_the_sdk(serve_stream(records))
        assert_valid_for_the_sdk(serve_whole(records))
    assert_valid_for_the_sdk(serve_stream([start(), text("a"), failure("gone")]))


def test_the_stream_helper_accumulates_what_was_streamed() -> None:
    events, final = sdk_stream(serve_stream(MIXED))
    assert_agrees(final, replayed(MIXED))
    snapshots = [event.snapshot for event in events if event.type == "response.output_text.delta"]
    assert snapshots == ["Hel", "Hello", "Bye"]


def test_the_bundled_fixture_through_the_stream_helper() -> None:
    for index in (0, 1):
        _, final = sdk_stream(serve_stream(bundled(index)))
        assert_agrees(final, replayed(bundled(index)))
    _, tool_final = sdk_stream(serve_stream(bundled(0)))
    call = tool_final.output[0]
    assert (call.call_id, call.name, json.loads(call.arguments)) == (
        "call-add-001",
        "add",
        {"left": 20, "right": 22},
    )
    assert (tool_final.usage.input_tokens, tool_final.usage.output_tokens) == (12, 8)
    _, text_final = sdk_stream(serve_stream(bundled(1)))
    assert text_final.output_text == "The sum is 42."
    assert (text_final.usage.input_tokens, text_final.usage.output_tokens) == (30, 6)


def test_the_bundled_fixture_through_the_raw_event_iterator() -> None:
    events = sdk_raw(serve_stream(bundled(1)))
    assert [event.sequence_number for event in events] == list(range(len(events)))
    assert [event.delta for event in events if event.type == "response.output_text.delta"] == [
        "The sum is 42."
    ]
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "The sum is 42."


def test_the_bundled_fixture_not_streamed() -> None:
    for index in (0, 1):
        served = serve_whole(bundled(index))
        assert (served.status, served.content_type) == (200, JSON)
        assert_agrees(sdk_whole(served), replayed(bundled(index)))
    assert sdk_whole(serve_whole(bundled(1))).output_text == "The sum is 42."


def test_the_whole_body_has_a_message_per_run_of_text() -> None:
    body = json.loads(serve_whole(MIXED).body)
    assert [item["type"] for item in body["output"]] == [
        "message",
        "function_call",
        "function_call",
        "message",
    ]
    assert body["output"][0]["content"] == [
        {"type": "output_text", "annotations": [], "logprobs": [], "text": "Hello"}
    ]
    assert body["output"][1]["arguments"] == '{"left":20,"right":22}'
    assert len({item["id"] for item in body["output"]}) == 4
    assert (body["id"], body["object"], body["status"], body["model"]) == (
        "resp_1",
        "response",
        "completed",
        MODEL,
    )
    assert sdk_whole(serve_whole(MIXED)).output_text == "HelloBye"


def test_a_response_without_chunks_still_opens_the_stream() -> None:
    served = serve_stream([start("resp_empty"), end(response_id="resp_empty")])
    assert [name for name, _ in events_of(served.body)] == [
        "response.created",
        "response.completed",
    ]
    _, final = sdk_stream(served)
    assert (final.id, final.output, final.output_text) == ("resp_empty", [], "")
    whole = sdk_whole(serve_whole([start("resp_empty"), end(response_id="resp_empty")]))
    assert (whole.output, whole.output_text) == ([], "")


def test_an_empty_text_delta_still_opens_a_message() -> None:
    _, final = sdk_stream(serve_stream([start(), text(""), end()]))
    assert sdk_items(final) == [("message", "")]


def test_text_outside_ascii_and_lone_surrogates_survive_the_wire() -> None:
    records = [
        start(),
        text("Grüße, 世界 🌍"),
        text("\ud800!"),
        tool("c", k="\udfff"),
        end("tool_call"),
    ]
    served = serve_stream(records)
    served.body.decode("ascii")  # escaped: any text is encodable on the wire
    _, final = sdk_stream(served)
    assert_agrees(final, replayed(records))


# -- failures ------------------------------------------------------------------------------


def test_a_transport_error_after_a_chunk_is_an_error_event_and_the_stream_ends() -> None:
    records = [start(), text("Partial"), failure("Upstream reset", "server_error")]
    served = serve_stream(records)
    events = events_of(served.body)
    assert events[-1] == (
        "error",
        {
            "type": "error",
            "sequence_number": len(events) - 1,
            "code": "server_error",
            "message": "Upstream reset",
            "param": None,
        },
    )
    assert [name for name, _ in events[:-1]] == [
        "response.created",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
    ]
    seen, final = sdk_stream(served)
    assert isinstance(final, RuntimeError)  # the SDK raises nothing mid-stream
    assert (seen[-1].type, seen[-1].code, seen[-1].message) == (
        "error",
        "server_error",
        "Upstream reset",
    )
    raw = sdk_raw(served)
    assert (raw[-1].type, raw[-1].code, raw[-1].param) == ("error", "server_error", None)


def test_a_transport_error_without_a_code_has_a_null_code() -> None:
    served = serve_stream([start(), text("x"), failure("Gone")])
    assert events_of(served.body)[-1][1]["code"] is None
    seen, _ = sdk_stream(served)
    assert (seen[-1].code, seen[-1].message) == (None, "Gone")


def test_a_fixture_error_mid_stream_carries_the_fixture_code() -> None:
    served = serve_stream([start(), text("x"), {"type": "text_delta"}])
    name, data = events_of(served.body)[-1]
    assert (name, data["code"]) == ("error", "PROVIDER_MALFORMED_EVENT")
    assert "text" in data["message"]


def test_a_failure_before_the_first_chunk_is_http_500() -> None:
    served = serve_stream([start(), failure("Overloaded", "server_overloaded")])
    assert (served.status, served.content_type) == (500, JSON)
    assert json.loads(served.body) == {
        "error": {"message": "Overloaded", "type": "server_overloaded", "code": "server_overloaded"}
    }
    with pytest.raises(openai.InternalServerError) as caught:
        sdk_stream(served)
    assert (caught.value.code, caught.value.type, caught.value.status_code) == (
        "server_overloaded",
        "server_overloaded",
        500,
    )
    assert "Overloaded" in caught.value.message
    with pytest.raises(openai.InternalServerError):
        sdk_whole(served)


def test_a_failure_without_streaming_is_http_500() -> None:
    served = serve_whole([start(), text("lost"), failure("m")])
    assert served.status == 500
    assert json.loads(served.body) == {"error": {"message": "m", "type": None, "code": None}}
    with pytest.raises(openai.InternalServerError) as caught:
        sdk_whole(served)
    assert (caught.value.code, caught.value.type) == (None, None)


def test_the_error_body_of_a_fixture_error_names_its_code() -> None:
    served = serve_whole([text("before the start")])
    body = json.loads(served.body)["error"]
    assert (body["code"], body["type"]) == ("PROVIDER_MISSING_START", "PROVIDER_MISSING_START")
    assert body["message"]


# -- through the real server ------------------------------------------------------------------


def test_the_bundled_fixture_through_a_real_server() -> None:
    fixture = json.loads(ROUNDTRIP_PATH.read_text(encoding="utf-8"))
    with serve(fixture) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)
        with client.responses.stream(model=MODEL, input="What is 20 + 22?") as stream:
            tool_final = stream.get_final_response()
        whole = client.responses.create(model=MODEL, input="And the answer?")
    assert_agrees(tool_final, replayed(bundled(0)))
    assert_agrees(whole, replayed(bundled(1)))


def test_an_async_client_through_a_real_server() -> None:
    fixture = json.loads(ROUNDTRIP_PATH.read_text(encoding="utf-8"))

    async def run() -> list[Any]:
        async with serve(fixture) as server:
            client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="t", max_retries=0)
            finals = []
            for _ in range(2):
                async with client.responses.stream(model=MODEL, input="Hi") as stream:
                    finals.append(await stream.get_final_response())
            await client.close()
            return finals

    finals = asyncio.run(run())
    assert_agrees(finals[0], replayed(bundled(0)))
    assert_agrees(finals[1], replayed(bundled(1)))


# -- the round trip (version 1; version 2: test_vendor_openai_responses_v2.py) ----------


def test_the_bundled_fixture_round_trips() -> None:
    for index in (0, 1):
        records = bundled(index)
        recording = import_recording(serve_stream(records).body, schema_version=1)
        imported = thaw(recording.response)["records"]
        assert imported == _camel(records)


def test_a_failure_after_chunks_round_trips() -> None:
    for records in (
        [start(), text("a"), tool("c1", x=1), failure("reset", "server_error")],
        [start(), tool("c1"), failure("no code")],
    ):
        recording = import_recording(serve_stream(records).body, schema_version=1)
        assert thaw(recording.response)["records"] == records
        assert not recording.truncated


# -- generated fixtures --------------------------------------------------------------------

_characters = st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.characters(codec=None, categories=None, exclude_categories=()),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
)
_strings = st.text(_characters, max_size=8)
_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _strings,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_strings, inner, max_size=3),
    max_leaves=8,
)
_counts = st.integers(min_value=0, max_value=2**53 - 1)


@st.composite
def responses(draw: st.DrawFn) -> Records:
    """A fixture response: text deltas and tool calls in any order, then an end that fits
    (either usage spelling) or a transport error (with or without a code)."""
    response_id = draw(st.text(_characters, min_size=1, max_size=8))
    records: Records = [start(response_id)]
    call_ids = draw(st.lists(st.text(_characters, min_size=1, max_size=6), unique=True, max_size=3))
    body: Records = [
        tool(
            call_id,
            draw(st.text(_characters, min_size=1, max_size=6)),
            **draw(st.dictionaries(_strings, _json_values, max_size=3)),
        )
        for call_id in call_ids
    ]
    for value in draw(st.lists(_strings, max_size=5)):
        body.insert(draw(st.integers(0, len(body))), text(value))
    records += body
    if draw(st.booleans()):
        tokens = (draw(_counts), draw(_counts))
        keys = draw(
            st.sampled_from([("inputTokens", "outputTokens"), ("input_tokens", "output_tokens")])
        )
        records.append(
            {
                "type": "response_end",
                "responseId": response_id,
                "stopReason": "tool_call" if call_ids else "stop",
                "usage": dict(zip(keys, tokens, strict=True)),
            }
        )
    else:
        records.append(failure(draw(_strings), draw(st.none() | _strings)))
    return records


def _succeeds(records: Records) -> bool:
    return bool(records[-1]["type"] == "response_end")


@settings(max_examples=60)
@given(responses())
def test_generated_responses_reach_the_sdk_intact(records: Records) -> None:
    served = serve_stream(records)
    chunks = len(records) - 2
    if _succeeds(records):
        response = replayed(records)
        _, final = sdk_stream(served)
        assert_agrees(final, response)
        assert_agrees(sdk_whole(serve_whole(records)), response)
        return
    error = records[-1]
    if chunks == 0:
        assert served.status == 500
        with pytest.raises(openai.InternalServerError) as caught:
            sdk_stream(served)
        assert caught.value.code == error.get("code")
        return
    seen, final = sdk_stream(served)
    assert isinstance(final, RuntimeError)
    assert (seen[-1].type, seen[-1].code, seen[-1].message) == (
        "error",
        error.get("code"),
        error["message"],
    )
    texts = [event.delta for event in seen if event.type == "response.output_text.delta"]
    assert texts == [record["text"] for record in records if record["type"] == "text_delta"]


@settings(max_examples=60)
@given(responses())
def test_generated_responses_validate_strictly(records: Records) -> None:
    assert_valid_for_the_sdk(serve_stream(records))
    assert_valid_for_the_sdk(serve_whole(records))


def _camel(records: Records) -> Records:
    """The records with usage in camelCase, as the importer writes it."""
    out = [dict(record) for record in records]
    last = out[-1]
    if last["type"] == "response_end":
        usage = last["usage"]
        last["usage"] = {
            "inputTokens": usage.get("inputTokens", usage.get("input_tokens")),
            "outputTokens": usage.get("outputTokens", usage.get("output_tokens")),
        }
    return out


@given(responses())
def test_importing_what_is_streamed_gives_back_the_records(records: Records) -> None:
    chunks = len(records) - 2
    if not _succeeds(records) and chunks == 0:
        return  # an HTTP 500: there is no stream to import
    kept = [record for record in records if record != text("")]
    recording = import_recording(serve_stream(records).body, schema_version=1)
    assert thaw(recording.response)["records"] == _camel(kept)
    assert not recording.truncated
