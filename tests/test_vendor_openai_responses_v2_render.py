"""Serving version-2 fixtures as ``openai-responses``: what the official SDK makes of it.

Each response is rendered as the server renders a version-2 fixture: the renderer
follows the stream, opens once ``response_start`` is read (with the fixture's model),
then renders each chunk and the end; a failure before the start, or without streaming,
is an HTTP error with ``error_body``. The bytes go to the real ``openai`` client
(``tests/vendor_helpers.py``), every event is validated strictly against the SDK's own
models, and importing what was streamed gives back the records (``SPEC-V2.md``, "Round
trip in version 2"). The last tests drive the real server.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Final

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai._models import validate_type
from openai.types.responses import Response, ResponseStreamEvent

from course import CourseModelRequest, FixtureProviderAdapter, FixtureProviderError, thaw
from course.vendors import import_recording, serve
from course.vendors._openai_responses import Renderer

from .vendor_helpers import Served, openai_client

MODEL: Final = "o4-mini-2025-04-16"
ASKED: Final = "gpt-4.1-mini"
SECRET: Final = "gAAAAABo-encrypted=="
SSE: Final = "text/event-stream"
JSON: Final = "application/json"
Records = list[dict[str, Any]]


def fixture(*responses: Records) -> dict[str, Any]:
    return {"schemaVersion": 2, "responses": [{"records": records} for records in responses]}


def render(records: Records) -> Served:
    """The streaming answer, as the server renders a version-2 response."""
    adapter = FixtureProviderAdapter(fixture(records))
    renderer = Renderer(ASKED)

    async def run() -> Served:
        stream = adapter.stream(CourseModelRequest(id="request-1"))
        renderer.follow(stream)
        try:
            await stream._until_start()
            if stream.response_id is None:
                await stream.result()  # it failed before its start: raises
        except FixtureProviderError as error:
            return Served(error.transport_status or 500, _error(renderer, error), JSON)
        if stream.model is not None:
            renderer.model = stream.model
        parts = [renderer.open(stream.response_id or "")]
        try:
            async for chunk in stream:
                parts.append(renderer.chunk(chunk))
            parts.append(renderer.complete(await stream.result()))
        except FixtureProviderError as error:
            parts.append(renderer.fail(error))
        return Served(200, "".join(parts).encode(), SSE)

    return asyncio.run(run())


def render_whole(records: Records) -> Served:
    """The non-streaming answer."""
    adapter = FixtureProviderAdapter(fixture(records))
    renderer = Renderer(ASKED)

    async def run() -> Served:
        stream = adapter.stream(CourseModelRequest(id="request-1"))
        renderer.follow(stream)
        try:
            response = await stream.result()
        except FixtureProviderError as error:
            return Served(error.transport_status or 500, _error(renderer, error), JSON)
        if response.model is not None:
            renderer.model = response.model
        return Served(200, json.dumps(renderer.whole(response)).encode(), JSON)

    return asyncio.run(run())


def _error(renderer: Renderer, error: FixtureProviderError) -> bytes:
    return json.dumps(renderer.error_body(error)).encode()


def events_of(body: bytes) -> list[dict[str, Any]]:
    """Each event's data, checked to be named by its ``type``."""
    out: list[dict[str, Any]] = []
    for block in body.decode().split("\n\n"):
        if block:
            name, data = block.split("\n")
            event = json.loads(data.removeprefix("data: "))
            assert name == f"event: {event['type']}"
            out.append(event)
    return out


def assert_valid_for_the_sdk(served: Served) -> None:
    """Every event (or the whole body) validates strictly against the SDK's models."""
    if served.content_type == JSON:
        if served.status == 200:
            validate_type(type_=Response, value=json.loads(served.body))
        return
    events = events_of(served.body)
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    for event in events:
        validate_type(type_=ResponseStreamEvent, value=event)  # type: ignore[arg-type]


def raw_events(served: Served) -> list[Any]:
    client = openai_client(served.body, content_type=served.content_type, status=served.status)
    return list(client.responses.create(model=ASKED, input="Hi", stream=True))


def final_response(served: Served) -> Any:
    """The stream helper's final response (a completed stream)."""
    client = openai_client(served.body, content_type=served.content_type, status=served.status)
    with client.responses.stream(model=ASKED, input="Hi") as stream:
        return stream.get_final_response()


def whole_response(served: Served) -> Any:
    client = openai_client(served.body, content_type=served.content_type, status=served.status)
    return client.responses.create(model=ASKED, input="Hi")


# -- records ----------------------------------------------------------------------------------


def start(model: str | None = MODEL) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "response_start", "responseId": "resp_1", "role": "assistant"}
    if model is not None:
        record["model"] = model
    return record


def text(value: str) -> dict[str, Any]:
    return {"type": "text_delta", "text": value}


def refusal(value: str) -> dict[str, Any]:
    return {"type": "refusal_delta", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking_delta", "text": value}


def signature(value: str = SECRET) -> dict[str, Any]:
    return {"type": "thinking_signature", "signature": value}


def call(call_id: str, fragments: list[str] | None = None, **arguments: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "tool_call", "id": call_id, "name": "add"}
    record["arguments"] = arguments
    if fragments is not None:
        record["argumentFragments"] = fragments
    return record


def cut(call_id: str, *fragments: str) -> dict[str, Any]:
    return {
        "type": "tool_call_incomplete",
        "id": call_id,
        "name": "add",
        "argumentFragments": list(fragments),
    }


def end(stop: str = "stop", word: str | None = None, /, **usage: int) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "response_end",
        "responseId": "resp_1",
        "stopReason": stop,
        "usage": {"inputTokens": 30, "outputTokens": 12, **usage},
    }
    if word is not None:
        record["providerStopReason"] = word
    return record


REASONED: Final[Records] = [
    start(),
    thinking("Let me "),
    thinking("add."),
    signature(),
    text("It is "),
    text("42."),
    end(cacheReadTokens=16, cacheWriteTokens=4, reasoningTokens=7),
]

CUT: Final[Records] = [
    start(),
    thinking("Two calls."),
    call("call_1", ['{"left":', "20,", '"right":22}'], left=20, right=22),
    cut("call_2", '{"le', "ft"),
    end("length", reasoningTokens=3),
]


# -- the exact shapes ---------------------------------------------------------------------------


def test_a_thinking_block_is_a_reasoning_item_with_its_summary_and_encrypted_content() -> None:
    events = events_of(render(REASONED).body)
    assert [event["type"] for event in events] == [
        "response.created",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    item_id = events[1]["item"]["id"]
    assert events[1]["item"] == {"id": item_id, "type": "reasoning", "summary": []}
    for event in events[2:7]:
        assert (event["item_id"], event["output_index"], event["summary_index"]) == (item_id, 0, 0)
    assert events[2]["part"] == {"type": "summary_text", "text": ""}
    assert [events[3]["delta"], events[4]["delta"]] == ["Let me ", "add."]
    assert events[5]["text"] == "Let me add."
    assert events[6]["part"] == {"type": "summary_text", "text": "Let me add."}
    reasoning = {
        "id": item_id,
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Let me add."}],
        "encrypted_content": SECRET,
    }
    assert events[7]["item"] == reasoning
    assert events[8]["output_index"] == 1
    final = events[-1]["response"]
    assert (final["status"], final["model"], final["incomplete_details"]) == (
        "completed",
        MODEL,
        None,
    )
    assert final["output"][0] == reasoning
    assert final["usage"] == {
        "input_tokens": 30,
        "input_tokens_details": {"cached_tokens": 16, "cache_write_tokens": 4},
        "output_tokens": 12,
        "output_tokens_details": {"reasoning_tokens": 7},
        "total_tokens": 42,
    }
    assert events[0]["response"]["model"] == MODEL


def test_a_cut_call_is_added_with_its_deltas_and_never_done() -> None:
    events = events_of(render(CUT).body)
    assert [event["type"] for event in events][-10:] == [
        "response.output_item.added",  # the complete call: one delta per fragment
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.output_item.added",  # the cut one: its deltas, then the end
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.incomplete",
    ]
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert deltas == ['{"left":', "20,", '"right":22}', '{"le', "ft"]
    done = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    assert [e["arguments"] for e in done] == ['{"left":20,"right":22}']
    final = events[-1]["response"]
    assert (final["status"], final["incomplete_details"]) == (
        "incomplete",
        {"reason": "max_output_tokens"},
    )
    [_, complete, incomplete] = final["output"]
    assert (complete["status"], complete["arguments"]) == ("completed", '{"left":20,"right":22}')
    assert (incomplete["call_id"], incomplete["status"], incomplete["arguments"]) == (
        "call_2",
        "incomplete",
        '{"left',
    )


def test_text_and_refusal_deltas_are_parts_of_one_message_item() -> None:
    records = [
        start(),
        text("I see. "),
        refusal("But "),
        refusal("no."),
        text(" Sorry."),
        end("refusal"),
    ]
    events = events_of(render(records).body)
    message = [
        e for e in events if e.get("item_id", e.get("item", {}).get("id", "")).startswith("msg")
    ]
    assert [(e["type"], e.get("content_index")) for e in message] == [
        ("response.output_item.added", None),
        ("response.content_part.added", 0),
        ("response.output_text.delta", 0),
        ("response.output_text.done", 0),
        ("response.content_part.done", 0),
        ("response.content_part.added", 1),
        ("response.refusal.delta", 1),
        ("response.refusal.delta", 1),
        ("response.refusal.done", 1),
        ("response.content_part.done", 1),
        ("response.content_part.added", 2),
        ("response.output_text.delta", 2),
        ("response.output_text.done", 2),
        ("response.content_part.done", 2),
        ("response.output_item.done", None),
    ]
    assert message[5]["part"] == {"type": "refusal", "refusal": ""}
    assert message[8]["refusal"] == "But no."
    assert message[-1]["item"]["content"] == [
        {"type": "output_text", "annotations": [], "logprobs": [], "text": "I see. "},
        {"type": "refusal", "refusal": "But no."},
        {"type": "output_text", "annotations": [], "logprobs": [], "text": " Sorry."},
    ]
    assert events[-1]["type"] == "response.completed"  # a refusal completes, as OpenAI's does


@pytest.mark.parametrize(
    ("stop", "word", "terminal", "reason"),
    [
        ("stop", None, "response.completed", None),
        ("length", None, "response.incomplete", "max_output_tokens"),
        ("length", "max_output_tokens", "response.incomplete", "max_output_tokens"),
        ("length", "max_tokens", "response.incomplete", "max_output_tokens"),  # not its word
        ("content_filter", None, "response.incomplete", "content_filter"),
        ("content_filter", "SAFETY", "response.incomplete", "content_filter"),
        ("pause_turn", "pause_turn", "response.completed", None),
    ],
)
def test_each_end_is_sent_in_the_format_s_words(
    stop: str, word: str | None, terminal: str, reason: str | None
) -> None:
    records = [start(), text("Once"), end(stop, word)]
    final = events_of(render(records).body)[-1]
    assert final["type"] == terminal
    details = None if reason is None else {"reason": reason}
    assert (final["response"]["status"], final["response"]["incomplete_details"]) == (
        terminal.removeprefix("response."),
        details,
    )
    body = json.loads(render_whole(records).body)
    assert (body["status"], body["incomplete_details"]) == (
        terminal.removeprefix("response."),
        details,
    )
    message = final["response"]["output"][0]
    assert message["status"] == ("completed" if reason is None else "incomplete")


def test_thinking_blocks_each_get_their_item_and_redacted_thinking_is_left_out() -> None:
    records = [
        start(),
        thinking("a"),
        {"type": "redacted_thinking", "data": "opaque"},
        thinking("b"),
        signature(),
        thinking("c"),
        {"type": "tool_call", "id": "c1", "name": "add", "arguments": {}, "signature": "sig"},
        end("tool_call"),
    ]
    body = render(records).body
    assert b"opaque" not in body and b'"sig"' not in body
    output = events_of(body)[-1]["response"]["output"]
    assert [
        (item["type"], item.get("summary"), item.get("encrypted_content")) for item in output
    ] == [
        ("reasoning", [{"type": "summary_text", "text": "a"}], None),
        ("reasoning", [{"type": "summary_text", "text": "b"}], SECRET),
        ("reasoning", [{"type": "summary_text", "text": "c"}], None),
        ("function_call", None, None),
    ]
    whole = json.loads(render_whole(records).body)
    assert whole["output"] == output


def test_the_model_is_the_fixture_s_else_the_request_s() -> None:
    for model, expected in ((MODEL, MODEL), (None, ASKED)):
        records = [start(model), text("Hi"), end()]
        events = events_of(render(records).body)
        assert events[0]["response"]["model"] == events[-1]["response"]["model"] == expected
        assert json.loads(render_whole(records).body)["model"] == expected


def test_usage_details_the_fixture_lacks_are_sent_as_zero() -> None:
    usage = events_of(render([start(), end()]).body)[-1]["response"]["usage"]
    assert usage["input_tokens_details"] == {"cached_tokens": 0, "cache_write_tokens": 0}
    assert usage["output_tokens_details"] == {"reasoning_tokens": 0}


# -- what the SDK builds -------------------------------------------------------------------------


def test_the_stream_helper_builds_the_reasoning_item_the_text_and_the_usage() -> None:
    final = final_response(render(REASONED))
    reasoning, message = final.output
    assert (reasoning.type, reasoning.encrypted_content) == ("reasoning", SECRET)
    assert [part.text for part in reasoning.summary] == ["Let me add."]
    assert final.output_text == message.content[0].text == "It is 42."
    assert (final.model, final.status) == (MODEL, "completed")
    details = final.usage.input_tokens_details
    assert (details.cached_tokens, details.cache_write_tokens) == (16, 4)
    assert final.usage.output_tokens_details.reasoning_tokens == 7


def test_the_sdk_sees_an_incomplete_response_with_its_reason_and_its_cut_call() -> None:
    served = render(CUT)
    events = raw_events(served)
    assert events[-1].type == "response.incomplete"
    response = events[-1].response
    assert (response.status, response.incomplete_details.reason) == (
        "incomplete",
        "max_output_tokens",
    )
    calls = [item for item in response.output if item.type == "function_call"]
    assert [(c.call_id, c.status, c.arguments) for c in calls] == [
        ("call_1", "completed", '{"left":20,"right":22}'),
        ("call_2", "incomplete", '{"left'),
    ]
    client = openai_client(served.body)
    with client.responses.stream(model=ASKED, input="Hi") as stream:
        list(stream)
        with pytest.raises(RuntimeError):  # the SDK has no final response for it
            stream.get_final_response()
    whole = whole_response(render_whole(CUT))
    assert (whole.status, whole.incomplete_details.reason) == ("incomplete", "max_output_tokens")
    assert [item.status for item in whole.output] == [None, "completed", "incomplete"]


def test_the_sdk_sees_a_content_filter_and_a_refusal() -> None:
    filtered = raw_events(render([start(), text("Part"), end("content_filter")]))[-1].response
    assert (filtered.status, filtered.incomplete_details.reason) == ("incomplete", "content_filter")
    final = final_response(render([start(), refusal("No, "), refusal("sorry."), end("refusal")]))
    [message] = final.output
    assert [(part.type, part.refusal) for part in message.content] == [("refusal", "No, sorry.")]
    assert (final.status, final.output_text) == ("completed", "")


# -- generated fixtures: the SDK's view and the round trip ---------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=6)
_ids = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=6)
_arguments = st.dictionaries(
    st.text(max_size=3), st.none() | st.booleans() | st.integers(-9, 9) | _text, max_size=3
)


@st.composite
def split(draw: st.DrawFn, joined: str) -> list[str]:
    """``joined`` cut at some places (empty pieces included)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(joined)), max_size=4)))
    bounds = [0, *cuts, len(joined)]
    return [joined[a:b] for a, b in itertools.pairwise(bounds)]


@st.composite
def responses(draw: st.DrawFn) -> Records:
    """A version-2 response whose every record the format carries back (``SPEC-V2.md``,
    "Round trip in version 2"): text, refusal and thinking (signed or not, or an empty
    signed block), tool calls with and without fragments; an end in its words, or a
    transport error after the start."""
    stop = draw(st.sampled_from(["stop", "length", "content_filter", "refusal", "failure"]))
    records: Records = [start(draw(st.none() | st.just(MODEL)))]
    kinds = ["text", "thinking", "call"] + (["refusal"] if stop in ("refusal", "failure") else [])
    call_ids = iter(draw(st.lists(_ids, min_size=8, max_size=8, unique=True)))
    calls = 0
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=5)):
        if kind == "text":
            records.append(text(draw(_text)))
        elif kind == "refusal":
            records.append(refusal(draw(_text)))
        elif kind == "thinking":
            if records[-1]["type"] == "thinking_delta":
                records.append(text(draw(_text)))  # keeps the blocks apart
            deltas = draw(st.lists(_text, max_size=3)) or [""]  # "": an empty signed block
            records += [thinking(delta) for delta in deltas]
            if deltas == [""] or draw(st.booleans()):
                records.append(signature(draw(_ids)))
        else:
            arguments = draw(_arguments)
            joined = json.dumps(arguments, separators=(",", ":"))
            fragments = draw(st.none() | split(joined))
            records.append(call(next(call_ids), fragments, **arguments))
            calls += 1
    if stop == "refusal" and not any(r["type"] == "refusal_delta" for r in records):
        records.append(refusal(draw(_text)))  # without refusal text it does not come back
    if stop == "length" and draw(st.booleans()):
        records.append(cut(next(call_ids), *draw(st.lists(st.text(max_size=4), max_size=3))))
    if stop == "failure":
        code = draw(_ids)
        records.append({"type": "transport_error", "message": draw(_text), "code": code})
        return records
    usage = {"inputTokens": draw(st.integers(0, 99)), "outputTokens": draw(st.integers(0, 99))}
    for key, within in (
        ("cacheReadTokens", "inputTokens"),
        ("cacheWriteTokens", None),
        ("reasoningTokens", "outputTokens"),
    ):
        if draw(st.booleans()):
            room = (
                usage[within] if within else usage["inputTokens"] - usage.get("cacheReadTokens", 0)
            )
            usage[key] = draw(st.integers(0, room))
    wire = "tool_call" if stop == "stop" and calls else stop
    word = {"length": "max_output_tokens", "content_filter": "content_filter"}.get(stop)
    record = {"type": "response_end", "responseId": "resp_1", "stopReason": wire, "usage": usage}
    if word is not None and draw(st.booleans()):
        record["providerStopReason"] = word
    records.append(record)
    return records


def normalised(fixture_records: Records, imported: Records) -> Records:
    """The imported records, compared as the SPEC says: ``model``, ``providerStopReason``,
    ``argumentFragments`` and each usage detail only where the fixture has them."""
    out = []
    for mine, theirs in zip(fixture_records, imported, strict=True):
        kept = {key: value for key, value in theirs.items() if key in mine}
        if "usage" in kept:
            kept["usage"] = {
                key: kept["usage"][key] for key in mine["usage"] if key in kept["usage"]
            }
        out.append(kept)
    return out


def without_left_out(records: Records) -> Records:
    """The fixture side of the round trip: the records and fields the format leaves out
    removed (none are generated), ``signature`` of a call included."""
    return [{key: value for key, value in r.items() if key != "delay"} for r in records]


@settings(max_examples=60)
@given(responses())
def test_importing_what_is_streamed_gives_back_every_version_2_record(records: Records) -> None:
    served = render(records)
    recording = import_recording(served.body)
    imported: Records = thaw(recording.response)["records"]  # type: ignore[assignment]
    expected = without_left_out(records)
    assert len(imported) == len(expected), (imported, expected)
    assert normalised(expected, imported) == expected
    assert not recording.truncated


@settings(max_examples=40)
@given(responses())
def test_generated_responses_validate_strictly_and_read_in_the_sdk(records: Records) -> None:
    served = render(records)
    assert_valid_for_the_sdk(served)
    events = raw_events(served)
    if records[-1]["type"] == "transport_error":
        assert (events[-1].type, events[-1].code) == ("error", records[-1]["code"])
        return
    whole = render_whole(records)
    assert_valid_for_the_sdk(whole)
    streamed = events[-1].response.model_dump()
    streamed.pop("created_at")
    body = whole_response(whole).model_dump()
    body.pop("created_at")
    assert body == streamed  # the whole body holds what the stream ends with


# -- the real server ------------------------------------------------------------------------------


def test_a_served_version_2_fixture_reaches_the_sdk_whole() -> None:
    with (
        serve(fixture(REASONED, CUT, CUT)) as server,
        openai.OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0) as client,
    ):
        with client.responses.stream(model=ASKED, input="Hi") as stream:
            final: Any = stream.get_final_response()
        events: list[Any] = list(client.responses.create(model=ASKED, input="Go", stream=True))
        whole: Any = client.responses.create(model=ASKED, input="Go")
    assert (final.model, final.output[0].encrypted_content, final.output_text) == (
        MODEL,
        SECRET,
        "It is 42.",
    )
    assert final.usage.input_tokens_details.cached_tokens == 16
    incomplete = events[-1].response
    assert (incomplete.status, incomplete.incomplete_details.reason) == (
        "incomplete",
        "max_output_tokens",
    )
    assert incomplete.output[-1].status == "incomplete"
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert deltas == ['{"left":', "20,", '"right":22}', '{"le', "ft"]  # one per fragment
    assert (whole.status, whole.model, whole.output[-1].arguments) == (
        "incomplete",
        MODEL,
        '{"left',
    )
