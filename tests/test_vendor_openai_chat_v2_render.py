"""Serving version-2 fixtures as ``openai-chat`` (SPEC-V2.md, "Serve"), read by the real SDK.

Each response is rendered as the server renders a version-2 stream: the renderer is
given the stream, ``open`` once ``response_start`` was read, ``chunk`` per chunk, then
``complete`` or ``fail``. The bytes go to the official ``openai`` client (its stream
helper, its raw chunks, its non-streamed ``create``), and what it builds is compared
with the fixture: the finish words, refusals, a cut call, argument fragments one chunk
each, the fixture's model, the usage details. Importing what was served gives back the
records (SPEC-V2.md, "Round trip in version 2").
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import CourseModelRequest, FixtureProviderAdapter, FixtureProviderError, thaw
from course.vendors import import_recording, serve
from course.vendors._openai_chat import Renderer
from tests.vendor_helpers import JSON, SSE, Served, openai_client

REQUEST_MODEL = "gpt-4.1-mini"
MODEL = "gpt-4o-2024-08-06"
MESSAGES: Any = [{"role": "user", "content": "Book a trip."}]
WITH_USAGE: Any = {"stream_options": {"include_usage": True}}
ID = "chatcmpl-v2"
START: Any = {"type": "response_start", "responseId": ID, "role": "assistant", "model": MODEL}
USAGE: Any = {"inputTokens": 30, "outputTokens": 12}


def end(stop_reason: str, usage: Any = USAGE, **fields: Any) -> dict[str, Any]:
    return {
        "type": "response_end",
        "responseId": ID,
        "stopReason": stop_reason,
        "usage": usage,
        **fields,
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text_delta", "text": value}


def refusal(value: str) -> dict[str, Any]:
    return {"type": "refusal_delta", "text": value}


def call(call_id: str, arguments: Any, fragments: list[str] | None = None) -> dict[str, Any]:
    record = {"type": "tool_call", "id": call_id, "name": "search", "arguments": arguments}
    if fragments is not None:
        record["argumentFragments"] = fragments
    return record


def cut(call_id: str, fragments: list[str]) -> dict[str, Any]:
    return {
        "type": "tool_call_incomplete",
        "id": call_id,
        "name": "search",
        "argumentFragments": fragments,
    }


def _adapter(records: list[dict[str, Any]]) -> FixtureProviderAdapter:
    return FixtureProviderAdapter({"schemaVersion": 2, "responses": [{"records": records}]})


def serve_stream(records: list[dict[str, Any]], request: Any = WITH_USAGE) -> Served:
    """The streaming answer, rendered as the server renders a version-2 stream (given the
    stream, opened once its start was read, told the fixture's model)."""

    async def run() -> Served:
        renderer = Renderer(REQUEST_MODEL, request)
        stream = _adapter(records).stream(CourseModelRequest(id="request-1"))._without_delays()
        renderer.follow(stream)
        await stream._until_start()
        if stream.response_id is None:  # failed before its start: HTTP 500
            try:
                await stream.result()
            except FixtureProviderError as error:
                return Served(500, json.dumps(renderer.error_body(error)).encode(), JSON)
        if stream.model is not None:  # the server tells the renderer the fixture's model
            renderer.model = stream.model
        parts = [renderer.open(stream.response_id)]  # type: ignore[arg-type]
        try:
            async for chunk in stream:
                parts.append(renderer.chunk(chunk))
            parts.append(renderer.complete(await stream.result()))
        except FixtureProviderError as error:
            parts.append(renderer.fail(error))
        return Served(200, "".join(parts).encode(), SSE)

    return asyncio.run(run())


def serve_whole(records: list[dict[str, Any]]) -> Served:
    async def run() -> Served:
        renderer = Renderer(REQUEST_MODEL)
        stream = _adapter(records).stream(CourseModelRequest(id="request-1"))._without_delays()
        renderer.follow(stream)
        response = await stream.result()
        if response.model is not None:
            renderer.model = response.model
        return Served(200, json.dumps(renderer.whole(response)).encode(), JSON)

    return asyncio.run(run())


def events_of(served: Served) -> list[Any]:
    out: list[Any] = []
    for block in served.body.decode().split("\n\n"):
        if block:
            data = block.removeprefix("data: ")
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def deltas(served: Served) -> list[Any]:
    return [event["choices"][0]["delta"] for event in events_of(served)[:-1] if event["choices"]]


def client(served: Served) -> openai.OpenAI:
    return openai_client(served.body, content_type=served.content_type, status=served.status)


def sdk_stream(served: Served) -> Any:
    """The stream helper's accumulated completion; for a ``length`` or ``content_filter``
    end the helper raises, with the completion it built."""
    try:
        with client(served).chat.completions.stream(model="m", messages=MESSAGES) as stream:
            return stream.get_final_completion()
    except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as error:
        return error.completion


def sdk_chunks(served: Served) -> list[Any]:
    return list(client(served).chat.completions.create(model="m", messages=MESSAGES, stream=True))


def sdk_whole(served: Served) -> Any:
    return client(served).chat.completions.create(model="m", messages=MESSAGES)


# -- ends ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stop_reason", "provider_word", "finish"),
    [
        ("stop", None, "stop"),
        ("tool_call", None, "tool_calls"),
        ("tool_call", "stop", "stop"),  # tool_choice forced a function
        ("tool_call", "end_turn", "tool_calls"),  # not a word of the cell: the bold one
        ("length", None, "length"),
        ("length", "max_tokens", "length"),
        ("content_filter", None, "content_filter"),
        ("refusal", None, "stop"),
        ("pause_turn", "pause_turn", "stop"),
    ],
)
def test_each_stop_reason_is_sent_as_its_finish_word(
    stop_reason: str, provider_word: str | None, finish: str
) -> None:
    body: list[dict[str, Any]] = [call("call_1", {})] if stop_reason == "tool_call" else []
    if stop_reason == "refusal":
        body = [refusal("No.")]
    extra = {} if provider_word is None else {"providerStopReason": provider_word}
    records = [START, *body, end(stop_reason, **extra)]
    [*_, last, _usage] = sdk_chunks(serve_stream(records))
    assert last.choices[0].finish_reason == finish
    assert sdk_whole(serve_whole(records)).choices[0].finish_reason == finish


def test_a_length_end_raises_the_sdks_length_error_with_what_came() -> None:
    records = [START, text("Once upon a"), end("length")]
    served = serve_stream(records)
    with (
        pytest.raises(openai.LengthFinishReasonError) as info,
        client(served).chat.completions.stream(model="m", messages=MESSAGES) as stream,
    ):
        stream.get_final_completion()
    completion = info.value.completion
    assert completion.choices[0].message.content == "Once upon a"
    assert completion.usage is not None and completion.usage.completion_tokens == 12
    whole = sdk_whole(serve_whole(records))
    assert (whole.choices[0].finish_reason, whole.choices[0].message.content) == (
        "length",
        "Once upon a",
    )


def test_a_content_filter_end_raises_the_sdks_content_filter_error() -> None:
    records = [START, text("Here is how"), end("content_filter")]
    served = serve_stream(records)
    with (
        pytest.raises(openai.ContentFilterFinishReasonError),
        client(served).chat.completions.stream(model="m", messages=MESSAGES) as stream,
    ):
        stream.get_final_completion()
    assert sdk_whole(serve_whole(records)).choices[0].finish_reason == "content_filter"


# -- refusals -----------------------------------------------------------------------------------


def test_a_refusal_streams_in_delta_refusal_opened_as_openai_opens_one() -> None:
    records = [START, refusal("I'm sorry,"), refusal(" I can't."), end("refusal")]
    served = serve_stream(records)
    assert deltas(served)[:3] == [
        {"role": "assistant", "content": None, "refusal": ""},
        {"refusal": "I'm sorry,"},
        {"refusal": " I can't."},
    ]
    message = sdk_stream(served).choices[0].message
    assert (message.content, message.refusal) == (None, "I'm sorry, I can't.")
    whole = sdk_whole(serve_whole(records)).choices[0].message
    assert (whole.content, whole.refusal) == (None, "I'm sorry, I can't.")


def test_text_then_a_refusal_keeps_both() -> None:
    records = [START, text("Well, "), refusal("no."), end("refusal")]
    message = sdk_stream(serve_stream(records)).choices[0].message
    assert (message.content, message.refusal) == ("Well, ", "no.")
    whole = sdk_whole(serve_whole(records)).choices[0].message
    assert (whole.content, whole.refusal) == ("Well, ", "no.")


# -- tool calls ---------------------------------------------------------------------------------


def test_each_argument_fragment_is_a_chunk_of_its_own() -> None:
    fragments = ["", '{"city":', ' "Par', 'is"}']
    records = [START, call("call_1", {"city": "Paris"}, fragments), end("tool_call")]
    served = serve_stream(records)
    assert deltas(served)[1:5] == [
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search", "arguments": ""},
                }
            ]
        },
        *(
            {"tool_calls": [{"index": 0, "function": {"arguments": part}}]}
            for part in fragments[1:]
        ),
    ]
    chunks = sdk_chunks(served)
    assert [
        chunk.choices[0].delta.tool_calls[0].function.arguments for chunk in chunks[1:5]
    ] == fragments
    (sdk_call,) = sdk_stream(served).choices[0].message.tool_calls
    assert (sdk_call.id, sdk_call.function.arguments) == ("call_1", '{"city": "Paris"}')
    # Without fragments, the arguments come whole, as compact JSON.
    plain = serve_stream([START, call("call_2", {"city": "Rome"}), end("tool_call")])
    assert deltas(plain)[1]["tool_calls"][0]["function"]["arguments"] == '{"city":"Rome"}'
    whole = sdk_whole(serve_whole(records)).choices[0].message.tool_calls[0]
    assert whole.function.arguments == '{"city": "Paris"}'  # the fragments joined


def test_a_cut_call_streams_its_fragments_then_the_length_finish() -> None:
    records = [
        START,
        call("call_1", {"from": "CDG"}, ['{"from"', ': "CDG"}']),
        cut("call_2", ['{"city": "New', " York"]),
        end("length"),
    ]
    served = serve_stream(records)
    events = events_of(served)
    assert [event["choices"][0]["finish_reason"] for event in events[:-2]] == [None] * 5 + [
        "length"
    ]
    assert deltas(served)[3:5] == [
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"city": "New'},
                }
            ]
        },
        {"tool_calls": [{"index": 1, "function": {"arguments": " York"}}]},
    ]
    completion = sdk_stream(served)
    first, second = completion.choices[0].message.tool_calls
    assert (first.function.arguments, second.function.arguments) == (
        '{"from": "CDG"}',
        '{"city": "New York',
    )
    assert completion.choices[0].finish_reason == "length"
    whole = sdk_whole(serve_whole(records)).choices[0]
    assert whole.finish_reason == "length"
    assert [tool.function.arguments for tool in whole.message.tool_calls] == [
        '{"from": "CDG"}',
        '{"city": "New York',
    ]


def test_a_cut_call_without_fragments_names_itself_and_sends_no_arguments() -> None:
    served = serve_stream([START, cut("call_1", []), end("length")])
    assert deltas(served)[:2] == [
        {"role": "assistant", "content": None},
        {
            "tool_calls": [
                {"index": 0, "id": "call_1", "type": "function", "function": {"name": "search"}}
            ]
        },
    ]
    whole = sdk_whole(serve_whole([START, cut("call_1", []), end("length")]))
    assert whole.choices[0].message.tool_calls[0].function.arguments == ""


def test_a_tool_call_signature_is_left_out() -> None:
    records = [START, {**call("call_1", {}), "signature": "c2lnbmVk"}, end("tool_call")]
    assert "c2lnbmVk" not in serve_stream(records).body.decode()
    assert "c2lnbmVk" not in serve_whole(records).body.decode()


# -- thinking, left out -----------------------------------------------------------------------


def test_thinking_and_redacted_thinking_are_left_out_and_do_not_open_the_stream() -> None:
    thinking = [
        {"type": "thinking_delta", "text": "Let me think."},
        {"type": "thinking_signature", "signature": "sig"},
        {"type": "redacted_thinking", "data": "opaque"},
    ]
    served = serve_stream([START, *thinking, call("call_1", {}), end("tool_call")])
    assert deltas(served)[:2] == [
        {"role": "assistant", "content": None},  # a tool call is the first record rendered
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search", "arguments": "{}"},
                }
            ]
        },
    ]
    for secret in ("Let me think.", "sig", "opaque"):
        assert secret not in served.body.decode()
    only = serve_stream([START, *thinking, end("stop")])
    assert deltas(only)[0] == {"role": "assistant", "content": ""}
    message = sdk_whole(serve_whole([START, *thinking, text("4"), end("stop")])).choices[0].message
    assert (message.content, message.tool_calls) == ("4", None)


# -- the model and the usage ------------------------------------------------------------------


def test_every_chunk_and_the_whole_body_name_the_fixtures_model_else_the_requests() -> None:
    records = [START, text("a"), end("stop")]
    assert {chunk.model for chunk in sdk_chunks(serve_stream(records))} == {MODEL}
    assert sdk_whole(serve_whole(records)).model == MODEL
    anonymous = [{k: v for k, v in START.items() if k != "model"}, text("a"), end("stop")]
    assert {chunk.model for chunk in sdk_chunks(serve_stream(anonymous))} == {REQUEST_MODEL}
    assert sdk_whole(serve_whole(anonymous)).model == REQUEST_MODEL


def test_the_usage_details_are_sent_only_where_the_fixture_has_them() -> None:
    usage = {**USAGE, "cacheReadTokens": 20, "cacheWriteTokens": 4, "reasoningTokens": 8}
    records = [START, text("a"), end("stop", usage)]
    for completion in (sdk_stream(serve_stream(records)), sdk_whole(serve_whole(records))):
        sent = completion.usage
        assert (sent.prompt_tokens, sent.completion_tokens, sent.total_tokens) == (30, 12, 42)
        assert sent.prompt_tokens_details.cached_tokens == 20
        assert sent.prompt_tokens_details.cache_write_tokens == 4
        assert sent.completion_tokens_details.reasoning_tokens == 8
    [*_, usage_chunk] = events_of(
        serve_stream([START, end("stop", {**USAGE, "cacheReadTokens": 0})])
    )[:-1]
    assert usage_chunk["usage"] == {
        "prompt_tokens": 30,
        "completion_tokens": 12,
        "total_tokens": 42,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    plain = sdk_whole(serve_whole([START, end("stop")])).usage
    assert (plain.prompt_tokens_details, plain.completion_tokens_details) == (None, None)


# -- failures ----------------------------------------------------------------------------------


def test_a_failure_right_after_the_start_follows_the_role_chunk() -> None:
    records = [
        START,
        {"type": "transport_error", "message": "Upstream reset", "code": "server_error"},
    ]
    served = serve_stream(records)
    assert events_of(served)[:2] == [
        {
            "id": ID,
            "object": "chat.completion.chunk",
            "created": events_of(served)[0]["created"],
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": ""},
                    "logprobs": None,
                    "finish_reason": None,
                }
            ],
            "usage": None,
        },
        {"error": {"message": "Upstream reset", "type": "server_error", "code": "server_error"}},
    ]
    with pytest.raises(openai.APIError) as info:
        sdk_stream(served)
    assert info.value.code == "server_error"


# -- through a real server ------------------------------------------------------------------------


def test_a_version_2_fixture_through_a_real_server() -> None:
    fixture = {
        "schemaVersion": 2,
        "responses": [
            {
                "records": [
                    START,
                    call("call_1", {"a": 1}, ['{"a"', ":1}"]),
                    cut("call_2", ['{"b']),
                    end("length"),
                ]
            },
            {"records": [START, refusal("No."), end("refusal", {**USAGE, "cacheReadTokens": 10})]},
        ],
    }
    with serve(fixture) as server:
        sdk = openai.OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)
        chunks = list(
            sdk.chat.completions.create(
                model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
            )
        )
        whole = sdk.chat.completions.create(model="m", messages=MESSAGES)
    arguments = [
        chunk.choices[0].delta.tool_calls[0].function.arguments  # type: ignore[union-attr]
        for chunk in chunks
        if chunk.choices and chunk.choices[0].delta.tool_calls
    ]
    assert arguments == ['{"a"', ":1}", '{"b']
    assert chunks[-2].choices[0].finish_reason == "length"
    assert {chunk.model for chunk in chunks} == {MODEL}
    assert (whole.choices[0].message.refusal, whole.choices[0].finish_reason) == ("No.", "stop")
    assert whole.usage is not None and whole.usage.prompt_tokens_details is not None
    assert whole.usage.prompt_tokens_details.cached_tokens == 10


# -- round trip --------------------------------------------------------------------------------

_characters = st.characters(codec="utf-8", exclude_categories=["Cs"])
_texts = st.text(_characters, min_size=1, max_size=6)
_ids = st.text(_characters, min_size=1, max_size=8)
_arguments = st.dictionaries(
    st.text(_characters, max_size=4),
    st.one_of(st.integers(-9, 9), st.text(_characters, max_size=4)),
    max_size=3,
)


@st.composite
def _fragments(draw: st.DrawFn, arguments: dict[str, Any]) -> list[str] | None:
    """Maybe no fragments, else the compact JSON of ``arguments`` split anywhere."""
    if draw(st.booleans()):
        return None
    whole = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
    cuts = sorted(draw(st.lists(st.integers(0, len(whole)), max_size=4)))
    return [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True)]


@st.composite
def responses(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A version-2 response that SPEC-V2's round trip covers for openai-chat: text and
    refusal deltas (none empty) before the tool calls; thinking anywhere (left out on the
    wire); an end whose stop reason has a Chat word (a refusal only with refusal text), or
    a coded transport error after no tool call."""
    response_id = draw(_ids)
    start: dict[str, Any] = {
        "type": "response_start",
        "responseId": response_id,
        "role": "assistant",
    }
    if draw(st.booleans()):
        start["model"] = draw(_ids)
    stop = draw(
        st.sampled_from(["stop", "tool_call", "length", "content_filter", "refusal", "error"])
    )
    kinds = ["text"] + (["refusal"] if stop == "refusal" else [])
    body: list[dict[str, Any]] = []
    for kind in draw(st.lists(st.sampled_from(kinds), max_size=4)):
        body.append({"type": f"{kind}_delta", "text": draw(_texts)})
    if stop == "refusal" and not any(record["type"] == "refusal_delta" for record in body):
        body.append(refusal(draw(_texts)))
    if stop in ("tool_call", "length", "refusal") and (stop == "tool_call" or draw(st.booleans())):
        for call_id in draw(st.lists(_ids, unique=True, min_size=1, max_size=3)):
            arguments = draw(_arguments)
            record = {
                "type": "tool_call",
                "id": call_id,
                "name": draw(_ids),
                "arguments": arguments,
            }
            fragments = draw(_fragments(arguments))
            if fragments is not None:
                record["argumentFragments"] = fragments
            body.append(record)
    if stop == "length" and (any(r["type"] == "tool_call" for r in body) or draw(st.booleans())):
        used = {record.get("id") for record in body}
        call_id = draw(_ids.filter(lambda value: value not in used))
        fragments = draw(st.lists(st.text(_characters, max_size=4), max_size=3))
        body.append(
            {
                "type": "tool_call_incomplete",
                "id": call_id,
                "name": draw(_ids),
                "argumentFragments": fragments,
            }
        )
    for _ in range(draw(st.integers(0, 2))):  # never after a cut call: it is the last
        cut_last = bool(body) and body[-1]["type"] == "tool_call_incomplete"
        at = draw(st.integers(0, len(body) - cut_last))
        body.insert(at, {"type": "thinking_delta", "text": draw(_texts)})
    records = [start, *body]
    if stop == "error":
        records.append({"type": "transport_error", "message": draw(_texts), "code": draw(_texts)})
        return records
    usage: dict[str, Any] = {
        "inputTokens": draw(st.integers(10, 99)),
        "outputTokens": draw(st.integers(10, 99)),
    }
    for key in ("cacheReadTokens", "cacheWriteTokens", "reasoningTokens"):
        if draw(st.booleans()):
            usage[key] = draw(st.integers(0, 5))
    ending: dict[str, Any] = {
        "type": "response_end",
        "responseId": response_id,
        "stopReason": stop,
        "usage": usage,
    }
    words = {"tool_call": ["tool_calls", "stop"], "refusal": ["stop"]}.get(stop, [stop])
    if draw(st.booleans()):
        ending["providerStopReason"] = draw(st.sampled_from(words))
    return [*records, ending]


_LEFT_OUT = ("thinking_delta", "thinking_signature", "redacted_thinking")


def _normalised(
    fixture: list[dict[str, Any]], imported: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The imported records with what the fixture does not say removed (SPEC-V2's round
    trip: ``model``, ``providerStopReason``, ``argumentFragments`` compared only where the
    fixture has them)."""
    kept = [record for record in fixture if record["type"] not in _LEFT_OUT]
    out = []
    for mine, theirs in zip(kept, imported, strict=False):
        out.append({key: value for key, value in theirs.items() if key in mine or key == "type"})
    return out + imported[len(kept) :]


@settings(max_examples=60)
@given(responses())
def test_importing_what_was_served_gives_back_the_records(records: list[dict[str, Any]]) -> None:
    served = serve_stream(records)
    assert served.status == 200
    imported = import_recording(served.body)
    assert imported.truncated is False
    got = cast("list[dict[str, Any]]", thaw(imported.response)["records"])
    expected = [record for record in records if record["type"] not in _LEFT_OUT]
    assert _normalised(records, got) == expected
