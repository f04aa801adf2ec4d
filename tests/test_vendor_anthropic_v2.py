"""Importing ``anthropic`` recordings in schema version 2 (the default): SPEC-V2's rows.

Thinking and redacted thinking blocks, the model, ``message_start``'s own usage, the cache
and thinking counts, every stop word of the table with its word kept, the call a
``max_tokens`` end cuts, argument fragments; each refusal with its code, line and column.
Streams are built as in ``test_vendor_anthropic.py`` (event ``i``'s data on line
``3 * i + 2``); every imported response is replayed in version 2, where it must hold.
"""

from __future__ import annotations

import asyncio
import json
from typing import Final, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    CourseModelRequest,
    CourseModelResponse,
    FixtureProviderAdapter,
    FixtureProviderError,
    thaw,
)
from course.vendors import Recording, RecordingError, RecordingErrorCode, import_recording

from .test_vendor_anthropic import (
    MESSAGE_ID,
    MESSAGE_STOP,
    ROOT,
    TOOL_ID,
    Event,
    block_start,
    block_stop,
    delta,
    json_delta,
    message_delta,
    message_start,
    mutated_recordings,
    spot_in,
    stream,
    text_block,
    thinking_block,
    tool_block,
    where,
)
from .vendor_helpers import RECORDINGS

Code = RecordingErrorCode
ANTHROPIC: Final = RECORDINGS / "anthropic"
MODEL: Final = "claude-sonnet-4-5-20250929"
SIGNATURE: Final = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds4aAJDMsQ4l3"
REDACTED: Final = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"


# -- building and reading -----------------------------------------------------------------


def thinking_delta(index: object, text: object) -> Event:
    return delta(index, {"type": "thinking_delta", "thinking": text})


def signature_delta(index: object, signature: object = SIGNATURE) -> Event:
    return delta(index, {"type": "signature_delta", "signature": signature})


def redacted_block(index: object, data: object = REDACTED) -> Event:
    return block_start(index, {"type": "redacted_thinking", "data": data})


def started(**usage: object) -> Event:
    """A ``message_start`` whose usage has exactly ``usage`` besides the input count 25."""
    event = message_start()
    message = cast("dict[str, object]", event["message"])
    message["usage"] = {"input_tokens": 25, **usage}
    return event


def records_of(recording: Recording) -> list[dict[str, object]]:
    return cast("list[dict[str, object]]", thaw(recording.response)["records"])


def records(text: str, *, usage: tuple[int, int] | None = None) -> list[dict[str, object]]:
    recording = import_recording(text, format="anthropic", usage=usage)
    assert recording.schema_version == 2
    replay(recording)  # what import writes, replay accepts
    return records_of(recording)


def replay(recording: Recording) -> CourseModelResponse | FixtureProviderError:
    """The version-2 replay of an imported response: its response, or the provider error
    it ends in (a transport error, a cut stream; two calls with one id, which import keeps
    as they came), never another refusal of the fixture."""
    adapter = FixtureProviderAdapter({"schemaVersion": 2, "responses": [thaw(recording.response)]})

    async def run() -> CourseModelResponse:
        return await adapter.stream(CourseModelRequest(id="request-1")).result()

    try:
        return asyncio.run(run())
    except FixtureProviderError as error:
        assert error.code.value in _REPLAYED_ERRORS, error
        return error


_REPLAYED_ERRORS: Final = (
    "PROVIDER_TRANSPORT_ERROR",
    "PROVIDER_MISSING_TERMINAL",
    "PROVIDER_DUPLICATE_TOOL_CALL",
)


def assert_refused(text: str, code: Code, event_index: int, fragment: str | None = None) -> str:
    """Refused with ``code`` at event ``event_index``: at ``fragment`` on its data line, at
    the event's own ``{`` for ``ROOT``, or at column 1 (the event as a whole)."""
    with pytest.raises(RecordingError) as info:
        import_recording(text, format="anthropic")
    error = info.value
    line = 3 * event_index + 2
    if fragment is None:
        position = (line, 1)
    elif fragment == ROOT:
        position = (line, len(ROOT))
    else:
        position = where(text, line, fragment)
    assert (error.code, error.event_index, error.line, error.column) == (
        code,
        event_index,
        *position,
    ), str(error)
    return error.message


START: Final = {
    "type": "response_start",
    "responseId": MESSAGE_ID,
    "role": "assistant",
    "model": MODEL,
    "usage": {"inputTokens": 25, "outputTokens": 1, "cacheReadTokens": 0, "cacheWriteTokens": 0},
}
"""The start record of ``message_start()``: its model and its own usage."""
ZERO_CACHE: Final = {
    "inputTokens": 25,
    "outputTokens": 15,
    "cacheReadTokens": 0,
    "cacheWriteTokens": 0,
}
"""The end's usage after ``message_start()``, which reports both cache counts as 0."""


def end(stop_reason: str, provider: str, usage: dict[str, int] | None = None) -> dict[str, object]:
    return {
        "type": "response_end",
        "responseId": MESSAGE_ID,
        "stopReason": stop_reason,
        "usage": usage or {"inputTokens": 25, "outputTokens": 15},
        "providerStopReason": provider,
    }


def thinking(text: str) -> dict[str, object]:
    return {"type": "thinking_delta", "text": text}


def signature(value: str = SIGNATURE) -> dict[str, object]:
    return {"type": "thinking_signature", "signature": value}


def text(value: str) -> dict[str, object]:
    return {"type": "text_delta", "text": value}


def call(
    arguments: dict[str, object], *fragments: str, call_id: str = TOOL_ID
) -> dict[str, object]:
    record: dict[str, object] = {
        "type": "tool_call",
        "id": call_id,
        "name": "get_weather",
        "arguments": arguments,
    }
    if fragments:
        record["argumentFragments"] = list(fragments)
    return record


def cut(*fragments: str, call_id: str = TOOL_ID) -> dict[str, object]:
    return {
        "type": "tool_call_incomplete",
        "id": call_id,
        "name": "get_weather",
        "argumentFragments": list(fragments),
    }


def bare(*events: Event) -> str:
    """A stream whose ``message_start`` reports only the input count (no start usage)."""
    return stream(started(), *events)


BARE_START: Final = {
    "type": "response_start",
    "responseId": MESSAGE_ID,
    "role": "assistant",
    "model": MODEL,
}


# -- the start: model and usage -----------------------------------------------------------


def test_the_start_keeps_the_model_and_its_own_usage_with_the_cache_added_in() -> None:
    events = [message_start(), text_block(0, "Hi"), block_stop(0), message_delta(), MESSAGE_STOP]
    assert records(stream(*events)) == [START, text("Hi"), end("stop", "end_turn", ZERO_CACHE)]


def test_start_usage_details_are_the_start_s_own_and_cache_counts_join_the_input() -> None:
    start = started(
        output_tokens=3,
        cache_read_input_tokens=2048,
        cache_creation_input_tokens=100,
        output_tokens_details={"thinking_tokens": 2},
    )
    imported = records(stream(start, message_delta(), MESSAGE_STOP))
    assert imported[0]["usage"] == {
        "inputTokens": 25 + 2048 + 100,
        "outputTokens": 3,
        "cacheReadTokens": 2048,
        "cacheWriteTokens": 100,
        "reasoningTokens": 2,
    }


def test_a_start_without_an_output_count_has_no_start_usage() -> None:
    assert records(bare(message_delta(), MESSAGE_STOP))[0] == BARE_START


@pytest.mark.parametrize("model", ["", None], ids=["empty", "null"])
def test_an_empty_or_null_model_is_left_out(model: object) -> None:
    start = started()
    cast("dict[str, object]", start["message"])["model"] = model
    first = records(stream(start, message_delta(), MESSAGE_STOP))[0]
    assert "model" not in first


def test_a_model_that_is_not_a_string_is_malformed_in_version_2_only() -> None:
    start = started()
    cast("dict[str, object]", start["message"])["model"] = 7
    text_ = stream(start, message_delta(), MESSAGE_STOP)
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 0, '7,"content"')
    import_recording(text_, schema_version=1)  # version 1 never reads it


# -- the end: usage -----------------------------------------------------------------------


def test_each_count_is_its_last_non_null_value_and_zero_is_kept() -> None:
    events = [
        started(output_tokens=1, cache_read_input_tokens=0, cache_creation_input_tokens=40),
        message_delta("end_turn", 9, cache_read_input_tokens=None, cache_creation_input_tokens=0),
        message_delta(None, 15, input_tokens=30, output_tokens_details={"thinking_tokens": 11}),
        MESSAGE_STOP,
    ]
    assert records(stream(*events))[-1] == end(
        "stop",
        "end_turn",
        {
            "inputTokens": 30 + 0 + 0,
            "outputTokens": 15,
            "cacheReadTokens": 0,
            "cacheWriteTokens": 0,
            "reasoningTokens": 11,
        },
    )


def test_counts_never_reported_are_absent() -> None:
    assert records(bare(message_delta(), MESSAGE_STOP))[-1] == end("stop", "end_turn")


def test_thinking_tokens_beyond_the_output_are_malformed_at_the_terminal() -> None:
    events = [
        message_start(),
        message_delta("end_turn", 15, output_tokens_details={"thinking_tokens": 16}),
        MESSAGE_STOP,
    ]
    message = assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, 2)
    assert "16 reasoning tokens exceed its 15 output tokens" in message


def test_thinking_tokens_beyond_the_start_s_output_are_malformed_at_its_usage() -> None:
    start = started(output_tokens=1, output_tokens_details={"thinking_tokens": 2})
    assert_refused(
        stream(start, message_delta(), MESSAGE_STOP),
        Code.RECORDING_MALFORMED_EVENT,
        0,
        '{"input_tokens"',
    )


def test_an_input_that_overflows_with_the_cache_added_is_malformed() -> None:
    events = [
        message_start(input_tokens=2**53 - 1),
        message_delta("end_turn", 15, cache_read_input_tokens=1),
        MESSAGE_STOP,
    ]
    # The start's own usage already overflows: its cache count is 0, the end's is 1.
    message = assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, 2)
    assert "2**53 - 1" in message


@pytest.mark.parametrize(
    ("usage", "fragment"),
    [
        ({"cache_read_input_tokens": -1}, "-1"),
        ({"cache_creation_input_tokens": "9"}, '"9"'),
        ({"output_tokens_details": []}, "[]"),
        ({"output_tokens_details": {"thinking_tokens": True}}, "true"),
    ],
    ids=["negative", "string", "details-array", "bool"],
)
def test_a_malformed_detail_is_refused_where_it_is(usage: Event, fragment: str) -> None:
    events = [message_start(), message_delta("end_turn", 15, **usage), MESSAGE_STOP]
    assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, 1, fragment)


# -- stop reasons -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "stop_reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "refusal"),
        ("pause_turn", "pause_turn"),
    ],
)
def test_every_stop_word_of_the_table_is_its_end_with_the_word_kept(
    word: str, stop_reason: str
) -> None:
    events = [text_block(0, "Hi"), block_stop(0), message_delta(word), MESSAGE_STOP]
    assert records(bare(*events))[-1] == end(stop_reason, word)


def test_tool_use_is_the_tool_call_end_with_its_word() -> None:
    events = [
        tool_block(0),
        json_delta(0, '{"city": "Paris"}'),
        block_stop(0),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    assert records(bare(*events))[1:] == [
        call({"city": "Paris"}, '{"city": "Paris"}'),
        end("tool_call", "tool_use"),
    ]


@pytest.mark.parametrize("word", ["compaction", "content_filter", "TOOL_USE"])
def test_a_word_outside_the_table_stays_a_transport_error_with_that_code(word: str) -> None:
    events = [message_start(), text_block(0, "Hi"), message_delta(word), MESSAGE_STOP]
    assert records(stream(*events))[-1] == {
        "type": "transport_error",
        "message": f"The provider stopped the response: {word}",
        "code": word,
    }


def test_the_version_1_mismatch_rules_hold() -> None:
    events = [message_start(), tool_block(0), block_stop(0), message_delta(), MESSAGE_STOP]
    assert_refused(stream(*events), Code.RECORDING_STOP_REASON_MISMATCH, 3, '"end_turn"')


# -- tool calls: fragments, and the call a max_tokens end cuts ----------------------------


def test_a_complete_call_keeps_every_fragment_empty_ones_included() -> None:
    events = [
        message_start(),
        tool_block(0),
        json_delta(0, ""),
        json_delta(0, '{"city":'),
        json_delta(0, ""),
        json_delta(0, ' "Paris"}'),
        block_stop(0),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    assert records(stream(*events))[1] == call({"city": "Paris"}, "", '{"city":', "", ' "Paris"}')


def test_a_call_without_fragments_has_none() -> None:
    events = [
        message_start(),
        tool_block(0),
        block_stop(0),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    assert records(stream(*events))[1] == call({})


def test_max_tokens_cuts_the_last_call_started_and_completes_the_other_open_ones() -> None:
    events = [
        tool_block(2, "toolu_C"),
        tool_block(0, "toolu_A"),
        tool_block(1, "toolu_B"),
        json_delta(2, '{"c": 3}'),
        json_delta(1, '{"b": [1, '),
        json_delta(0, '{"a": 1}'),
        message_delta("max_tokens"),
        MESSAGE_STOP,
    ]
    # The last started is toolu_B (index 1): cut, its fragments as they came, whatever
    # they are; the others come before it in ascending index.
    assert records(bare(*events))[1:] == [
        call({"a": 1}, '{"a": 1}', call_id="toolu_A"),
        call({"c": 3}, '{"c": 3}', call_id="toolu_C"),
        cut('{"b": [1, ', call_id="toolu_B"),
        end("length", "max_tokens"),
    ]


def test_a_length_end_refuses_another_open_call_whose_input_is_no_object() -> None:
    events = [
        message_start(),
        tool_block(0, "toolu_A"),
        json_delta(0, '{"a": 1'),
        tool_block(1, "toolu_B"),
        json_delta(1, '{"b"'),
        message_delta("max_tokens"),
        MESSAGE_STOP,
    ]
    message = assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, 6)
    assert "tool call 0 (id 'toolu_A'" in message


def test_a_cut_call_without_fragments_keeps_an_empty_list() -> None:
    events = [tool_block(0), message_delta("max_tokens"), MESSAGE_STOP]
    assert records(bare(*events))[1:] == [cut(), end("length", "max_tokens")]


def test_a_stopped_call_before_the_cut_one_comes_at_its_stop() -> None:
    data = (ANTHROPIC / "thinking_max_tokens.sse").read_bytes()
    imported = records_of(import_recording(data))
    assert [record["type"] for record in imported] == [
        "response_start",
        "thinking_delta",
        "thinking_signature",
        "tool_call_incomplete",
        "response_end",
    ]
    assert imported[3]["argumentFragments"] == [
        "",
        '{"path": "config.toml", ',
        '"content": "[server]\\nport = 80',
    ]


@pytest.mark.parametrize("word", ["refusal", "pause_turn", "compaction"])
def test_other_ends_drop_an_open_call(word: str) -> None:
    events = [
        message_start(),
        tool_block(0),
        json_delta(0, '{"a"'),
        message_delta(word),
        MESSAGE_STOP,
    ]
    assert [record["type"] for record in records(stream(*events))] == [
        "response_start",
        "response_end" if word != "compaction" else "transport_error",
    ]


def test_a_successful_end_still_refuses_an_open_call() -> None:
    events = [
        message_start(),
        tool_block(0, "toolu_A"),
        block_stop(0),
        tool_block(1, "toolu_B"),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, 5)


# -- thinking -----------------------------------------------------------------------------


def thinking_stream(*events: Event) -> str:
    """A stream whose block 0 is a thinking block holding ``events``, then a text block."""
    return bare(
        thinking_block(0),
        *events,
        block_stop(0),
        text_block(1, "Done."),
        block_stop(1),
        message_delta(),
        MESSAGE_STOP,
    )


def test_thinking_deltas_and_the_signature_become_their_records() -> None:
    imported = records(
        thinking_stream(
            thinking_delta(0, "Let me "),
            thinking_delta(0, ""),
            thinking_delta(0, "think."),
            signature_delta(0),
        )
    )
    assert imported == [
        BARE_START,
        thinking("Let me "),
        thinking("think."),
        signature(),
        text("Done."),
        end("stop", "end_turn"),
    ]


def test_a_thinking_block_without_a_signature_is_unsigned() -> None:
    imported = records(thinking_stream(thinking_delta(0, "Hmm.")))
    assert imported[1:3] == [thinking("Hmm."), text("Done.")]


def test_a_signature_without_thinking_text_follows_one_empty_thinking_delta() -> None:
    imported = records(thinking_stream(thinking_delta(0, ""), signature_delta(0)))
    assert imported[1:4] == [thinking(""), signature(), text("Done.")]


def test_a_signature_after_another_block_s_record_follows_one_empty_thinking_delta() -> None:
    events = [
        thinking_block(0),
        thinking_delta(0, "a"),
        text_block(1, "interleaved"),
        signature_delta(0),
        block_stop(0),
        block_stop(1),
        message_delta(),
        MESSAGE_STOP,
    ]
    imported = records(bare(*events))
    assert imported[1:5] == [thinking("a"), text("interleaved"), thinking(""), signature()]


def test_a_starting_thinking_text_and_signature_are_records_too() -> None:
    start = block_start(0, {"type": "thinking", "thinking": "Whole.", "signature": SIGNATURE})
    imported = records(bare(start, block_stop(0), message_delta(), MESSAGE_STOP))
    assert imported[1:3] == [thinking("Whole."), signature()]


def test_redacted_thinking_is_one_record_at_its_start() -> None:
    events = [
        redacted_block(0),
        text_block(1, "Done."),
        block_stop(1),
        block_stop(0),
        message_delta(),
        MESSAGE_STOP,
    ]
    imported = records(bare(*events))
    assert imported[1:3] == [{"type": "redacted_thinking", "data": REDACTED}, text("Done.")]


def test_version_1_still_skips_thinking() -> None:
    data = (ANTHROPIC / "thinking_tool_use.sse").read_bytes()
    recording = import_recording(data, schema_version=1)
    assert recording.schema_version == 1
    kinds = [record["type"] for record in records_of(recording)]
    assert kinds == ["response_start", "text_delta", "tool_call", "response_end"]
    assert recording.ignored["content_block_start:thinking"] == 1


@pytest.mark.parametrize(
    ("events", "index"),
    [
        ([thinking_delta(0, "a"), signature_delta(0), signature_delta(0, "again")], 4),
        ([thinking_delta(0, "a"), signature_delta(0), thinking_delta(0, "more")], 4),
    ],
    ids=["second-signature", "thinking-after-signature"],
)
def test_anything_after_a_block_s_signature_is_out_of_order(
    events: list[Event], index: int
) -> None:
    assert_refused(thinking_stream(*events), Code.RECORDING_OUT_OF_ORDER, index)


def test_a_start_s_signature_counts_as_the_block_s_signature() -> None:
    start = block_start(0, {"type": "thinking", "thinking": "", "signature": SIGNATURE})
    text_ = bare(start, signature_delta(0), block_stop(0), message_delta(), MESSAGE_STOP)
    assert_refused(text_, Code.RECORDING_OUT_OF_ORDER, 2)


@pytest.mark.parametrize(
    ("block", "body", "fragment"),
    [
        (text_block(0), {"type": "signature_delta", "signature": SIGNATURE}, '"signature_delta"'),
        (tool_block(0), {"type": "signature_delta", "signature": SIGNATURE}, '"signature_delta"'),
        (thinking_block(0), {"type": "text_delta", "text": "x"}, '"text_delta"'),
        (thinking_block(0), {"type": "input_json_delta", "partial_json": "{"}, '"input_json'),
        (redacted_block(0), {"type": "thinking_delta", "thinking": "x"}, '"thinking_delta"'),
    ],
    ids=[
        "signature-in-text",
        "signature-in-tool-use",
        "text-in-thinking",
        "json-in-thinking",
        "thinking-in-redacted",
    ],
)
def test_a_delta_its_block_cannot_hold_is_malformed_at_its_type(
    block: Event, body: Event, fragment: str
) -> None:
    text_ = bare(block, delta(0, body), block_stop(0), message_delta(), MESSAGE_STOP)
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 2, fragment)


@pytest.mark.parametrize(
    ("event", "fragment"),
    [
        (thinking_delta(0, 5), "5"),
        (thinking_delta(0, None), "null"),
        (signature_delta(0, ""), '""'),
        (signature_delta(0, ["x"]), '["x"]'),
        (block_start(1, {"type": "thinking", "signature": ""}), '{"type":"thinking"'),
        (block_start(1, {"type": "thinking", "thinking": "", "signature": 1}), "1}"),
        (redacted_block(1, ""), '""'),
        (block_start(1, {"type": "redacted_thinking"}), '{"type":"redacted'),
    ],
    ids=[
        "thinking-number",
        "thinking-null",
        "signature-empty",
        "signature-array",
        "start-without-thinking",
        "start-signature-number",
        "redacted-empty",
        "redacted-without-data",
    ],
)
def test_a_malformed_thinking_event_is_refused_at_the_offending_value(
    event: Event, fragment: str
) -> None:
    text_ = thinking_stream(thinking_delta(0, "a"), event)
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 3, fragment)


def test_a_signature_delta_outside_any_started_block_is_out_of_order() -> None:
    text_ = bare(signature_delta(0), message_delta(), MESSAGE_STOP)
    assert_refused(text_, Code.RECORDING_OUT_OF_ORDER, 1)


# -- a non-streamed message ---------------------------------------------------------------


def whole(*content: Event, stop_reason: str = "end_turn", **usage: object) -> str:
    body: Event = {
        "id": MESSAGE_ID,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": list(content),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 15, **usage},
    }
    return json.dumps(body, indent=2)


def tool_use(call_id: str = TOOL_ID, **input_: object) -> Event:
    return {"type": "tool_use", "id": call_id, "name": "get_weather", "input": input_}


def test_a_message_gives_thinking_redacted_thinking_and_its_model() -> None:
    imported = records(
        whole(
            {"type": "thinking", "thinking": "Hmm.", "signature": SIGNATURE},
            {"type": "thinking", "thinking": "", "signature": SIGNATURE},
            {"type": "thinking", "thinking": "Unsigned.", "signature": ""},
            {"type": "redacted_thinking", "data": REDACTED},
            {"type": "text", "text": "Done."},
        )
    )
    assert imported == [
        BARE_START,
        thinking("Hmm."),
        signature(),
        thinking(""),
        signature(),
        thinking("Unsigned."),
        {"type": "redacted_thinking", "data": REDACTED},
        text("Done."),
        end("stop", "end_turn"),
    ]


def test_a_message_s_usage_details_and_tool_calls_without_fragments() -> None:
    value = whole(
        tool_use(city="Paris"),
        stop_reason="tool_use",
        cache_read_input_tokens=7,
        cache_creation_input_tokens=3,
        output_tokens_details={"thinking_tokens": 5},
    )
    assert records(value)[1:] == [
        call({"city": "Paris"}),
        end(
            "tool_call",
            "tool_use",
            {
                "inputTokens": 35,
                "outputTokens": 15,
                "cacheReadTokens": 7,
                "cacheWriteTokens": 3,
                "reasoningTokens": 5,
            },
        ),
    ]


def test_a_message_cut_by_max_tokens_ends_in_its_cut_call() -> None:
    value = whole(
        tool_use("toolu_A", a=1), tool_use("toolu_B", path="é.txt"), stop_reason="max_tokens"
    )
    assert records(value)[1:] == [
        {**call({"a": 1}, call_id="toolu_A")},
        cut('{"path":"é.txt"}', call_id="toolu_B"),
        end("length", "max_tokens"),
    ]


@pytest.mark.parametrize("word", ["refusal", "pause_turn"])
def test_a_message_that_ends_otherwise_drops_a_last_tool_use(word: str) -> None:
    value = whole(
        tool_use("toolu_A"), {"type": "text", "text": "x"}, tool_use("toolu_B"), stop_reason=word
    )
    assert records(value)[1:] == [call({}, call_id="toolu_A"), text("x"), end(word, word)]


def test_a_message_s_thinking_tokens_beyond_its_output_are_malformed_at_its_usage() -> None:
    value = whole(output_tokens_details={"thinking_tokens": 16})
    with pytest.raises(RecordingError) as info:
        import_recording(value)
    line = value.splitlines().index('  "usage": {') + 1
    assert (info.value.code, info.value.line, info.value.column) == (
        Code.RECORDING_MALFORMED_EVENT,
        line,
        len('  "usage": {'),
    )


@pytest.mark.parametrize(
    ("block", "needle"),
    [
        ({"type": "thinking", "signature": SIGNATURE}, '    |{\n      "type": "thinking"'),
        ({"type": "thinking", "thinking": 1, "signature": ""}, '"thinking": |1'),
        ({"type": "thinking", "thinking": "", "signature": 1}, '"signature": |1'),
        ({"type": "redacted_thinking", "data": ""}, '"data": |""'),
    ],
    ids=["thinking-missing", "thinking-number", "signature-number", "redacted-empty"],
)
def test_a_message_s_malformed_thinking_block_is_refused_where_it_lies(
    block: Event, needle: str
) -> None:
    value = whole(block)
    with pytest.raises(RecordingError) as info:
        import_recording(value)
    assert (info.value.code, info.value.event_index, info.value.line, info.value.column) == (
        Code.RECORDING_MALFORMED_EVENT,
        0,
        *spot_in(value, needle),
    )


# -- the recordings in tests/recordings/anthropic -------------------------------------------


def test_every_recording_imports_in_version_2_as_described() -> None:
    outcomes: dict[str, object] = {}
    for path in sorted(ANTHROPIC.glob("*.*")):
        recording = import_recording(path.read_bytes(), format="anthropic", source=str(path))
        replay(recording)
        last = records_of(recording)[-1]
        outcomes[path.name] = (
            "truncated" if recording.truncated else last.get("providerStopReason", last.get("code"))
        )
    assert outcomes == {
        "context_window.sse": "model_context_window_exceeded",
        "error_before_start.sse": "api_error",
        "max_tokens.sse": "max_tokens",
        "message_max_tokens.json": "max_tokens",
        "message_refusal.json": "refusal",
        "message_stop_sequence.json": "stop_sequence",
        "message_text.json": "end_turn",
        "message_thinking.json": "end_turn",
        "message_tool_use.json": "tool_use",
        "overloaded.sse": "overloaded_error",
        "parallel_tool_use.sse": "tool_use",
        "pause_turn.sse": "pause_turn",
        "refusal.sse": "refusal",
        "stop_sequence.sse": "stop_sequence",
        "text.sse": "end_turn",
        "thinking_cached.sse": "end_turn",
        "thinking_max_tokens.sse": "max_tokens",
        "thinking_tool_use.sse": "tool_use",
        "tool_use.sse": "tool_use",
        "truncated.sse": "truncated",
        "web_search_citations.sse": "end_turn",
    }


def test_the_cached_thinking_recording_in_full() -> None:
    data = (ANTHROPIC / "thinking_cached.sse").read_bytes()
    recording = import_recording(data)
    assert records_of(recording) == [
        {
            "type": "response_start",
            "responseId": "msg_01CachedThinking7Qw3Er5Ty",
            "role": "assistant",
            "model": "claude-opus-4-5-20251101",
            "usage": {
                "inputTokens": 12 + 2048,
                "outputTokens": 4,
                "cacheReadTokens": 2048,
                "cacheWriteTokens": 0,
            },
        },
        thinking("The cached system prompt says answers must be brief."),
        thinking(" The user asks for the boiling point of water"),
        thinking(" at sea level: 100 °C."),
        signature(
            "ErUBCkYIBxgCIkCm3cS9Fq0uFlbPyJm2wN7ZyXGS9h1GMVmc1kW8ZqQxTj0Nq3pVvLr9XhX2kVwA7cD0tNn1"
            "YbEjGm4J5tYcEgw"
        ),
        text("Water boils at 100 °C"),
        text(" (212 °F) at sea level."),
        {
            "type": "response_end",
            "responseId": "msg_01CachedThinking7Qw3Er5Ty",
            "stopReason": "stop",
            "usage": {
                "inputTokens": 12 + 2048,
                "outputTokens": 96,
                "cacheReadTokens": 2048,
                "cacheWriteTokens": 0,
                "reasoningTokens": 61,
            },
            "providerStopReason": "end_turn",
        },
    ]
    assert recording.ignored == {"ping": 1}


# -- properties ---------------------------------------------------------------------------


_SWAPS: Final = [
    ('"thinking_delta"', '"signature_delta"'),
    ('"signature_delta"', '"thinking_delta"'),
    ('"text_delta"', '"thinking_delta"'),
    ('"type":"thinking"', '"type":"redacted_thinking"'),
    ('"type":"text"', '"type":"thinking"'),
    ('"end_turn"', '"max_tokens"'),
    ('"tool_use"', '"max_tokens"'),
    ('"end_turn"', '"pause_turn"'),
    ('"cache_read_input_tokens":0', '"cache_read_input_tokens":9007199254740991'),
    ('"output_tokens":', '"output_tokens_details":{"thinking_tokens":500},"output_tokens":'),
]
"""Edits aimed at version 2's own rules: a delta of another kind, another block kind,
another end, counts that overflow or break the usage rules."""


@st.composite
def v2_mutations(draw: st.DrawFn) -> str:
    text_ = draw(mutated_recordings())
    old, new = draw(st.sampled_from(_SWAPS))
    count = text_.count(old)
    if count:
        at = draw(st.integers(0, count - 1))
        parts = text_.split(old)
        text_ = old.join(parts[: at + 1]) + new + old.join(parts[at + 1 :])
    return text_


@settings(max_examples=80)
@given(v2_mutations())
def test_a_mutated_recording_imports_to_what_version_2_replay_accepts(text_: str) -> None:
    # Import never writes what replay refuses: a recording or a located RecordingError.
    try:
        recording = import_recording(text_, format="anthropic")
    except RecordingError as error:
        assert error.code in Code
        assert (error.line is None) == (error.event_index is None)
        return
    replay(recording)
