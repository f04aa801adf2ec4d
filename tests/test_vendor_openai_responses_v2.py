"""Importing ``openai-responses`` recordings in schema version 2 (the default): what
``SPEC-V2.md`` keeps besides version 1, row by row, and every new refusal, located.

Streams are built with the builders of ``test_vendor_openai_responses.py`` (event ``i``'s
data is on line ``3 * i + 2``). The recordings of each new kind
(``tests/recordings/openai-responses/``) are read by the official SDK too, and what it
builds must agree with the replayed fixture.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Final

import pytest

from course import (
    CourseIncompleteToolCallBlock,
    CourseModelRequest,
    CourseModelResponse,
    CourseRefusalBlock,
    CourseTextBlock,
    CourseThinkingBlock,
    CourseToolCallBlock,
    FixtureProviderAdapter,
    thaw,
)
from course.vendors import Recording, RecordingError, RecordingErrorCode, import_recording

from .test_vendor_openai_responses import (
    CALL_ID,
    CALL_ITEM_ID,
    FORMAT,
    MESSAGE_ID,
    REASONING_ID,
    RESPONSE_ID,
    Event,
    added,
    arguments_delta,
    call_events,
    call_item,
    completed,
    completed_without_usage,
    created,
    done,
    failed,
    incomplete,
    message_item,
    part_added,
    refusal_delta,
    response_object,
    spot_in,
    stream,
    text_delta,
    usage,
    where,
)
from .vendor_helpers import RECORDINGS, openai_client

Code = RecordingErrorCode
RESPONSES: Final = RECORDINGS / FORMAT
MODEL: Final = "gpt-4.1-2025-04-14"
SECRET: Final = "gAAAAABo-encrypted-reasoning=="
OTHER_ID: Final = "fc_second"
OTHER_CALL: Final = "call_second"


# -- helpers ------------------------------------------------------------------------------


def records(text: str | bytes, **options: Any) -> list[Any]:
    return records_of(import_recording(text, **options))


def records_of(recording: Recording) -> list[Any]:
    result: list[Any] = thaw(recording.response)["records"]  # type: ignore[assignment]
    return result


def refused(text: str, **options: Any) -> RecordingError:
    with pytest.raises(RecordingError) as caught:
        import_recording(text, **options)
    return caught.value


def replay(recording: Recording) -> CourseModelResponse:
    """The recording replayed in its own schema version."""
    fixture = {"schemaVersion": recording.schema_version, "responses": [thaw(recording.response)]}
    adapter = FixtureProviderAdapter(fixture)

    async def run() -> CourseModelResponse:
        return await adapter.stream(CourseModelRequest(id="request-1")).result()

    return asyncio.run(run())


def start(model: str | None = MODEL) -> Event:
    record: Event = {"type": "response_start", "responseId": RESPONSE_ID, "role": "assistant"}
    if model is not None:
        record["model"] = model
    return record


def end(stop: str = "stop", word: str | None = None, /, **counts: int) -> Event:
    record: Event = {
        "type": "response_end",
        "responseId": RESPONSE_ID,
        "stopReason": stop,
        "usage": {"inputTokens": 12, "outputTokens": 8, **counts},
    }
    if word is not None:
        record["providerStopReason"] = word
    return record


# The builders' usage reports both details as 0: version 2 keeps a reported 0.
ZEROS: Final = {"cacheReadTokens": 0, "reasoningTokens": 0}


def text_record(text: str) -> Event:
    return {"type": "text_delta", "text": text}


def thinking_record(text: str) -> Event:
    return {"type": "thinking_delta", "text": text}


def signature_record(signature: str = SECRET) -> Event:
    return {"type": "thinking_signature", "signature": signature}


def tool_record(arguments: object, fragments: list[str] | None, call_id: str = CALL_ID) -> Event:
    record: Event = {"type": "tool_call", "id": call_id, "name": "get_weather"}
    record["arguments"] = arguments
    if fragments is not None:
        record["argumentFragments"] = fragments
    return record


def reasoning_item(item_id: str = REASONING_ID, **extra: object) -> Event:
    return {"id": item_id, "type": "reasoning", "summary": [], **extra}


def summary_delta(delta: object, item_id: object = REASONING_ID, index: int = 0) -> Event:
    return {
        "type": "response.reasoning_summary_text.delta",
        "item_id": item_id,
        "output_index": 0,
        "summary_index": index,
        "delta": delta,
        "obfuscation": "Xq",
    }


def reasoning_text_delta(delta: object, item_id: object = REASONING_ID) -> Event:
    return {
        "type": "response.reasoning_text.delta",
        "item_id": item_id,
        "output_index": 0,
        "content_index": 0,
        "delta": delta,
    }


def summary_part(kind: str, text: str = "", index: int = 0) -> Event:
    return {
        "type": f"response.reasoning_summary_part.{kind}",
        "item_id": REASONING_ID,
        "output_index": 0,
        "summary_index": index,
        "part": {"type": "summary_text", "text": text},
    }


def reasoning_events(*deltas: str, encrypted: str | None = SECRET) -> list[Event]:
    """A reasoning item from added to done, its summary streamed as ``deltas``."""
    text = "".join(deltas)
    finished = reasoning_item(summary=[{"type": "summary_text", "text": text}] if deltas else [])
    if encrypted is not None:
        finished["encrypted_content"] = encrypted
    parts = [summary_part("added"), *(summary_delta(d) for d in deltas), summary_part("done", text)]
    return [added(reasoning_item()), *(parts if deltas else []), done(finished)]


def text_events(*deltas: str) -> list[Event]:
    return [
        added(message_item(), 1),
        part_added(),
        *(text_delta(delta) for delta in deltas),
        done(message_item(status="completed"), 1),
    ]


def completed_with(**recorded: object) -> Event:
    """``response.completed`` whose usage has ``recorded`` in place of the builders'."""
    return completed({**usage(), **recorded})


# -- the default, the model ---------------------------------------------------------------


def test_version_2_is_the_default_and_the_recording_says_so() -> None:
    recording = import_recording(stream(created(), *text_events("Hi"), completed()))
    assert recording.schema_version == 2
    assert records_of(recording) == [start(), text_record("Hi"), end(**ZEROS)]
    assert replay(recording).model == MODEL
    assert import_recording(stream(created(), completed()), schema_version=1).schema_version == 1


@pytest.mark.parametrize("model", [None, ""], ids=["null", "empty"])
def test_a_response_without_a_model_leaves_it_out(model: object) -> None:
    opened = created()
    opened["response"]["model"] = model  # type: ignore[index]
    assert records(stream(opened, completed()))[0] == start(None)
    del opened["response"]["model"]  # type: ignore[attr-defined]
    assert records(stream(opened, completed()))[0] == start(None)


def test_the_model_is_response_created_s_not_the_terminal_s() -> None:
    final = completed()
    final["response"]["model"] = "gpt-4.1-other"  # type: ignore[index]
    assert records(stream(created(), final))[0] == start(MODEL)


# -- tool calls keep their fragments --------------------------------------------------------


def test_a_complete_call_keeps_every_argument_delta_empty_ones_included() -> None:
    fragments = ('{"city":', "", '"Paris"}')
    imported = records(stream(created(), *call_events(fragments), completed()))
    assert imported[1] == tool_record({"city": "Paris"}, list(fragments))
    assert imported[-1]["stopReason"] == "tool_call"


def test_a_call_without_argument_deltas_has_no_fragments() -> None:
    imported = records(stream(created(), *call_events(()), completed()))
    assert imported[1] == tool_record({}, None)
    replayed = replay(import_recording(stream(created(), *call_events(()), completed())))
    assert replayed.message.content == (CourseToolCallBlock(CALL_ID, "get_weather", {}),)


# -- usage details -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("recorded", "kept"),
    [
        (
            {
                "input_tokens_details": {"cached_tokens": 7, "cache_write_tokens": 3},
                "output_tokens_details": {"reasoning_tokens": 5},
            },
            {"cacheReadTokens": 7, "cacheWriteTokens": 3, "reasoningTokens": 5},
        ),
        ({"input_tokens_details": {"cached_tokens": 0}}, ZEROS),
        ({"input_tokens_details": {}, "output_tokens_details": {}}, {}),
        ({"input_tokens_details": None, "output_tokens_details": None}, {}),
        (
            {"input_tokens_details": {"cached_tokens": None, "cache_write_tokens": 12}},
            {"cacheWriteTokens": 12, "reasoningTokens": 0},
        ),
    ],
    ids=["all", "zeros", "empty-details", "null-details", "null-count"],
)
def test_usage_details_are_kept_as_reported(recorded: Event, kept: dict[str, int]) -> None:
    imported = records(stream(created(), completed_with(**recorded)))
    assert imported[-1] == end(**kept)
    replayed = replay(import_recording(stream(created(), completed_with(**recorded))))
    assert replayed.usage.cache_read_tokens == kept.get("cacheReadTokens")
    assert replayed.usage.cache_write_tokens == kept.get("cacheWriteTokens")
    assert replayed.usage.reasoning_tokens == kept.get("reasoningTokens")


def test_a_usage_without_details_has_only_the_two_counts() -> None:
    bare = {"input_tokens": 12, "output_tokens": 8, "total_tokens": 20}
    assert records(stream(created(), completed(bare)))[-1] == end()


def test_version_1_reads_no_detail() -> None:
    recorded = {"input_tokens_details": {"cached_tokens": 99}, "output_tokens_details": "odd"}
    imported = records(stream(created(), completed_with(**recorded)), schema_version=1)
    assert imported[-1]["usage"] == {"inputTokens": 12, "outputTokens": 8}


# -- reasoning items -------------------------------------------------------------------------


def test_a_reasoning_item_is_a_thinking_block_signed_by_its_encrypted_content() -> None:
    text = stream(
        created(), *reasoning_events("Let me ", "think."), *text_events("42"), completed()
    )
    recording = import_recording(text)
    assert records_of(recording) == [
        start(),
        thinking_record("Let me "),
        thinking_record("think."),
        signature_record(),
        text_record("42"),
        end(**ZEROS),
    ]
    assert recording.ignored == {}
    assert replay(recording).message.content == (
        CourseThinkingBlock("Let me think.", SECRET),
        CourseTextBlock("42"),
    )


def test_summary_parts_and_reasoning_text_of_one_item_join_one_block() -> None:
    text = stream(
        created(),
        added(reasoning_item()),
        summary_part("added"),
        summary_delta("Plan."),
        summary_part("done", "Plan."),
        summary_part("added", index=1),
        summary_delta(" Units.", index=1),
        reasoning_text_delta(" raw"),
        done(reasoning_item(encrypted_content=SECRET)),
        completed(),
    )
    recording = import_recording(text)
    assert [r["type"] for r in records_of(recording)][1:-1] == [
        "thinking_delta",
        "thinking_delta",
        "thinking_delta",
        "thinking_signature",
    ]
    assert replay(recording).message.content == (CourseThinkingBlock("Plan. Units. raw", SECRET),)


def test_an_unsigned_item_is_an_unsigned_block_and_empty_deltas_make_no_record() -> None:
    text = stream(created(), *reasoning_events("", "Hmm", "", encrypted=None), completed())
    assert records(text)[1:-1] == [thinking_record("Hmm")]


def test_an_item_with_only_encrypted_content_is_an_empty_signed_block() -> None:
    text = stream(created(), *reasoning_events(), completed())
    imported = records(text)
    assert imported[1:-1] == [thinking_record(""), signature_record()]
    assert replay(import_recording(text)).message.content == (CourseThinkingBlock("", SECRET),)


def test_an_item_with_neither_text_nor_encrypted_content_gives_no_record() -> None:
    for encrypted in (None, ""):
        text = stream(created(), *reasoning_events("", encrypted=encrypted), completed())
        assert records(text) == [start(), end(**ZEROS)]


def test_a_signature_whose_text_did_not_just_come_follows_an_empty_thinking_delta() -> None:
    # The message's text comes between the item's summary and its done: the signature
    # must come right after a thinking delta of its block, so one empty delta opens it.
    text = stream(
        created(),
        added(reasoning_item()),
        added(message_item(), 1),
        summary_delta("Plan."),
        text_delta("Hi"),
        done(reasoning_item(encrypted_content=SECRET)),
        done(message_item(status="completed"), 1),
        completed(),
    )
    recording = import_recording(text)
    assert records_of(recording)[1:-1] == [
        thinking_record("Plan."),
        text_record("Hi"),
        thinking_record(""),
        signature_record(),
    ]
    assert replay(recording).message.content == (
        CourseThinkingBlock("Plan.", None),
        CourseTextBlock("Hi"),
        CourseThinkingBlock("", SECRET),
    )


def test_reasoning_deltas_of_an_ignored_item_are_ignored() -> None:
    search = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    text = stream(created(), added(search), summary_delta("x", "ws_1"), done(search), completed())
    recording = import_recording(text)
    assert records_of(recording) == [start(), end(**ZEROS)]
    assert recording.ignored["response.reasoning_summary_text.delta:web_search_call"] == 1


def test_version_1_still_ignores_reasoning() -> None:
    text = stream(created(), *reasoning_events("Let me think."), completed())
    recording = import_recording(text, schema_version=1)
    assert [r["type"] for r in records_of(recording)] == ["response_start", "response_end"]
    assert recording.ignored["response.output_item.added:reasoning"] == 1


# -- refusals --------------------------------------------------------------------------------


def refusal_events(*deltas: str) -> list[Event]:
    return [
        added(message_item()),
        *(refusal_delta(delta) for delta in deltas),
        done(message_item(status="completed")),
    ]


def test_refusal_text_is_kept_and_ends_the_response_as_a_refusal() -> None:
    text = stream(created(), *refusal_events("I can't", "", " help."), completed())
    recording = import_recording(text)
    assert records_of(recording) == [
        start(),
        {"type": "refusal_delta", "text": "I can't"},
        {"type": "refusal_delta", "text": " help."},
        end("refusal", **ZEROS),
    ]
    replayed = replay(recording)
    assert replayed.stop_reason == "refusal"
    assert replayed.message.content == (CourseRefusalBlock("I can't"), CourseRefusalBlock(" help."))


def test_a_refusal_ends_as_a_refusal_whatever_the_terminal_says() -> None:
    cut = stream(created(), *refusal_events("No."), added(call_item(), 1), incomplete_with())
    assert records(cut)[1:] == [
        {"type": "refusal_delta", "text": "No."},
        end("refusal", "max_output_tokens", **ZEROS),  # the open call makes no record
    ]
    unknown = stream(created(), *refusal_events("No."), incomplete_with("max_messages"))
    assert records(unknown)[-1] == end("refusal", "max_messages", **ZEROS)
    open_call = stream(created(), added(call_item(), 1), *refusal_events("No."), completed())
    assert records(open_call)[-1] == end("refusal", **ZEROS)


def test_a_refusal_needs_usage_as_any_end() -> None:
    text = stream(created(), *refusal_events("No."), completed_without_usage())
    assert refused(text).code is Code.RECORDING_MISSING_USAGE
    assert records(text, usage=(1, 2))[-1]["usage"] == {"inputTokens": 1, "outputTokens": 2}


# -- the ends ------------------------------------------------------------------------------


def incomplete_with(reason: object = "max_output_tokens", recorded: object = None) -> Event:
    event = incomplete(reason)
    event["response"]["usage"] = usage() if recorded is None else recorded  # type: ignore[index]
    return event


@pytest.mark.parametrize(
    ("reason", "stop"),
    [("max_output_tokens", "length"), ("content_filter", "content_filter")],
)
def test_an_incomplete_response_ends_by_its_reason_with_the_provider_s_word(
    reason: str, stop: str
) -> None:
    text = stream(created(), *text_events("Once"), incomplete_with(reason))
    recording = import_recording(text)
    assert records_of(recording)[-1] == end(stop, reason, **ZEROS)
    replayed = replay(recording)
    assert (replayed.stop_reason, replayed.provider_stop_reason) == (
        {"length": "length", "content_filter": "contentFilter"}[stop],
        reason,
    )


@pytest.mark.parametrize("reason", ["max_messages", "steered", "a_word_from_next_year"])
def test_a_reason_outside_the_table_stays_a_transport_error_with_that_code(reason: str) -> None:
    text = stream(created(), *text_events("Once"), incomplete_with(reason))
    assert records(text)[-1] == {
        "type": "transport_error",
        "message": f"The provider stopped the response: {reason}",
        "code": reason,
    }


def test_an_incomplete_response_takes_its_usage_else_the_argument_else_is_refused() -> None:
    text = stream(created(), incomplete())  # the builder's usage is null
    assert records(text, usage=(3, 4))[-1] == {
        **end("length", "max_output_tokens"),
        "usage": {"inputTokens": 3, "outputTokens": 4},
    }
    error = refused(text)
    assert (error.code, error.event_index) == (Code.RECORDING_MISSING_USAGE, 1)


def test_completed_and_failed_are_as_in_version_1_besides_the_details() -> None:
    assert records(stream(created(), *call_events(("{}",)), completed()))[-1] == end(
        "tool_call", **ZEROS
    )
    boom = stream(created(), failed({"code": "server_error", "message": "Boom"}))
    assert records(boom)[-1] == {
        "type": "transport_error",
        "message": "Boom",
        "code": "server_error",
    }


# -- a length end cuts the last open call ------------------------------------------------------


def test_a_length_end_cuts_the_last_open_call_and_completes_the_others_before_it() -> None:
    text = stream(
        created(),
        *call_events(('{"city":"Rome"}',), item_id="fc_done", call_id="call_done"),
        added(call_item(), 1),
        arguments_delta('{"city":'),
        arguments_delta('"Paris"}'),
        added(call_item(OTHER_ID, OTHER_CALL), 2),
        arguments_delta('{"ci', OTHER_ID),
        incomplete_with(),
    )
    recording = import_recording(text)
    assert records_of(recording) == [
        start(),
        tool_record({"city": "Rome"}, ['{"city":"Rome"}'], "call_done"),
        tool_record({"city": "Paris"}, ['{"city":', '"Paris"}']),
        {
            "type": "tool_call_incomplete",
            "id": OTHER_CALL,
            "name": "get_weather",
            "argumentFragments": ['{"ci'],
        },
        end("length", "max_output_tokens", **ZEROS),
    ]
    assert replay(recording).message.content[-1] == CourseIncompleteToolCallBlock(
        OTHER_CALL, "get_weather", '{"ci'
    )


def test_a_cut_call_may_have_received_nothing() -> None:
    text = stream(created(), added(call_item(), 1), incomplete_with())
    assert records(text)[1] == {
        "type": "tool_call_incomplete",
        "id": CALL_ID,
        "name": "get_weather",
        "argumentFragments": [],
    }


def test_other_ends_drop_open_calls() -> None:
    for terminal in (incomplete_with("content_filter"), incomplete_with("max_messages")):
        text = stream(created(), added(call_item(), 1), arguments_delta("{}"), terminal)
        assert [r["type"] for r in records(text)] == ["response_start", terminal_type(terminal)]


def terminal_type(terminal: Event) -> str:
    reason = terminal["response"]["incomplete_details"]["reason"]  # type: ignore[index]
    return "response_end" if reason == "content_filter" else "transport_error"


def test_version_1_keeps_a_length_end_a_transport_error() -> None:
    text = stream(created(), added(call_item(), 1), arguments_delta("{"), incomplete_with())
    assert records(text, schema_version=1)[1:] == [
        {
            "type": "transport_error",
            "message": "The provider stopped the response: max_output_tokens",
            "code": "max_output_tokens",
        }
    ]


# -- refusals, each at its place ---------------------------------------------------------------

# Each row: the events, the expected code, the index of the refused event, and the
# fragment of that event's data line the error points at (``None``: column 1), with an
# optional marker inside the fragment.
Row = tuple[list[Event | str], Code, int, str | None, str | None]


def open_call_then(*events: Event) -> list[Event | str]:
    return [created(), added(call_item(), 1), arguments_delta("{"), *events]


REFUSALS: Final[dict[str, Row]] = {
    # class 3: the event alone
    "model not a string": (
        [{"type": "response.created", "response": {**response_object(), "model": 4}}],
        Code.RECORDING_MALFORMED_EVENT,
        0,
        '"model":4',
        "4",
    ),
    "reasoning delta without its delta": (
        [created(), added(reasoning_item()), {**summary_delta("x"), "delta": None}],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"delta":null',
        "null",
    ),
    "encrypted content not a string": (
        [created(), added(reasoning_item()), done(reasoning_item(encrypted_content=7))],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"encrypted_content":7',
        "7",
    ),
    "cached tokens not a count": (
        [created(), completed_with(input_tokens_details={"cached_tokens": -1})],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"cached_tokens":-1',
        "-",
    ),
    "details not an object": (
        [created(), completed_with(output_tokens_details=[])],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"output_tokens_details":[]',
        "[",
    ),
    "incomplete without a reason": (
        [created(), incomplete_with(None)],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"reason":null',
        "null",
    ),
    # class 4: its place
    "reasoning delta before the start": (
        [summary_delta("x")],
        Code.RECORDING_OUT_OF_ORDER,
        0,
        None,
        None,
    ),
    "reasoning delta for an item never added": (
        [created(), summary_delta("x")],
        Code.RECORDING_OUT_OF_ORDER,
        1,
        None,
        None,
    ),
    "a reasoning item done twice": (
        [created(), *reasoning_events("x"), done(reasoning_item(encrypted_content=SECRET))],
        Code.RECORDING_OUT_OF_ORDER,
        6,
        None,
        None,
    ),
    "reasoning delta after its item is done": (
        [created(), *reasoning_events("x"), reasoning_text_delta("late")],
        Code.RECORDING_OUT_OF_ORDER,
        6,
        None,
        None,
    ),
    "reasoning delta after the terminal": (
        [created(), added(reasoning_item()), completed(), summary_delta("x")],
        Code.RECORDING_OUT_OF_ORDER,
        3,
        None,
        None,
    ),
    # class 5: against earlier events
    "reasoning delta for a message item": (
        [created(), added(message_item()), summary_delta("x", MESSAGE_ID)],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        f'"item_id":"{MESSAGE_ID}"',
        f'"{MESSAGE_ID}"',
    ),
    "reasoning text for a function call item": (
        [created(), added(call_item()), reasoning_text_delta("x", CALL_ITEM_ID)],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        f'"item_id":"{CALL_ITEM_ID}"',
        f'"{CALL_ITEM_ID}"',
    ),
    "text delta for a reasoning item": (
        [created(), added(reasoning_item()), text_delta("x", REASONING_ID)],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        f'"item_id":"{REASONING_ID}"',
        f'"{REASONING_ID}"',
    ),
    "refusal delta for a reasoning item": (
        [created(), added(reasoning_item()), refusal_delta("x", REASONING_ID)],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        f'"item_id":"{REASONING_ID}"',
        f'"{REASONING_ID}"',
    ),
    "argument delta for a reasoning item": (
        [created(), added(reasoning_item()), arguments_delta("{}", REASONING_ID)],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        f'"item_id":"{REASONING_ID}"',
        f'"{REASONING_ID}"',
    ),
    "cache counts over the input": (
        [
            created(),
            completed_with(input_tokens_details={"cached_tokens": 10, "cache_write_tokens": 3}),
        ],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"usage":{',
        "{",
    ),
    "reasoning over the output": (
        [created(), completed_with(output_tokens_details={"reasoning_tokens": 9})],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"usage":{',
        "{",
    ),
    "cache counts over the input of an incomplete response": (
        [
            created(),
            incomplete_with(recorded=usage(2, 8) | {"input_tokens_details": {"cached_tokens": 3}}),
        ],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"usage":{',
        "{",
    ),
    "a length end with another open call whose arguments are cut": (
        [
            *open_call_then(added(call_item(OTHER_ID, OTHER_CALL), 2)),
            incomplete_with(),
        ],
        Code.RECORDING_MALFORMED_EVENT,
        4,
        None,
        None,
    ),
    "a completed response with an open call": (
        [*open_call_then(completed())],
        Code.RECORDING_MALFORMED_EVENT,
        3,
        None,
        None,
    ),
    "a length end without usage": (
        [*open_call_then(incomplete())],
        Code.RECORDING_MISSING_USAGE,
        3,
        '"response":{',
        "{",
    ),
}


@pytest.mark.parametrize("row", REFUSALS.values(), ids=REFUSALS.keys())
def test_a_refused_event_is_coded_and_located(row: Row) -> None:
    events, code, index, fragment, marker = row
    text = stream(*events)
    error = refused(text, source="rec.sse")
    line = stream(*events[: index + 1]).count("\n") - 1  # the event's one data line
    expected = (line, 1) if fragment is None else where(text, line, fragment, marker)
    assert (error.code, error.event_index, (error.line, error.column)) == (code, index, expected)
    assert str(error).startswith(f"rec.sse:{expected[0]}:{expected[1]}: {code.value} ")


def test_the_usage_refusals_say_what_breaks_the_rule() -> None:
    over = stream(created(), completed_with(input_tokens_details={"cached_tokens": 13}))
    assert "exceed its 12 input tokens" in refused(over).message
    over = stream(created(), completed_with(output_tokens_details={"reasoning_tokens": 9}))
    assert "exceed its 8 output tokens" in refused(over).message


def test_version_1_reads_none_of_what_version_2_refuses() -> None:
    for name in (
        "model not a string",
        "encrypted content not a string",
        "reasoning over the output",
    ):
        events = REFUSALS[name][0]
        import_recording(stream(*events), schema_version=1, usage=(1, 1))


# -- a non-streamed answer --------------------------------------------------------------------


def whole(status: str = "completed", *output: Event, **extra: object) -> Event:
    body = response_object(status=status)
    body.update(output=list(output), usage=usage(), **extra)
    return body


def body(value: object) -> str:
    return json.dumps(value, indent=2)


def whole_text(*parts: Event, status: str = "completed") -> Event:
    return message_item(status=status, content=list(parts), role="assistant")


def output_text(text: str) -> Event:
    return {"type": "output_text", "annotations": [], "text": text}


def whole_call(
    call_id: str = CALL_ID, arguments: str = '{"city":"Paris"}', **extra: object
) -> Event:
    return {
        **call_item(CALL_ITEM_ID, call_id, "get_weather", arguments),
        "status": "completed",
        **extra,
    }


def test_a_response_object_keeps_reasoning_refusal_model_and_details() -> None:
    reasoning = reasoning_item(
        summary=[{"type": "summary_text", "text": "Plan."}, {"type": "summary_text", "text": ""}],
        content=[{"type": "reasoning_text", "text": " Raw."}],
        encrypted_content=SECRET,
    )
    refusal: Event = {"type": "refusal", "refusal": "No."}
    value = whole("completed", reasoning, whole_text(output_text("Hi"), refusal))
    value["usage"]["input_tokens_details"] = {"cached_tokens": 4}  # type: ignore[index]
    recording = import_recording(body(value))
    assert records_of(recording) == [
        start(),
        thinking_record("Plan."),
        thinking_record(" Raw."),
        signature_record(),
        text_record("Hi"),
        {"type": "refusal_delta", "text": "No."},
        end("refusal", cacheReadTokens=4, reasoningTokens=0),
    ]
    assert replay(recording).message.content[0] == CourseThinkingBlock("Plan. Raw.", SECRET)


def test_a_response_object_cut_inside_a_call_ends_with_the_call_cut() -> None:
    cut = whole_call(OTHER_CALL, '{"ci', status="incomplete")
    earlier = whole_call(status="in_progress")
    value = whole("incomplete", earlier, cut, incomplete_details={"reason": "max_output_tokens"})
    assert records(body(value))[1:] == [
        tool_record({"city": "Paris"}, None),
        {
            "type": "tool_call_incomplete",
            "id": OTHER_CALL,
            "name": "get_weather",
            "argumentFragments": ['{"ci'],
        },
        end("length", "max_output_tokens", **ZEROS),
    ]
    empty = whole("incomplete", whole_call(arguments="", status="incomplete"))
    empty["incomplete_details"] = {"reason": "max_output_tokens"}
    assert records(body(empty))[1]["argumentFragments"] == []
    filtered = whole("incomplete", cut, incomplete_details={"reason": "content_filter"})
    assert records(body(filtered))[1:] == [end("content_filter", "content_filter", **ZEROS)]


def test_a_completed_response_object_with_an_unfinished_call_is_refused_unless_refused() -> None:
    value = whole("completed", whole_call(status="in_progress"))
    text = body(value)
    error = refused(text)
    assert (error.code, (error.line, error.column)) == (
        Code.RECORDING_MALFORMED_EVENT,
        spot_in(text, '"status": |"in_progress"'),
    )
    value["output"].append(whole_text({"type": "refusal", "refusal": "No."}))  # type: ignore[attr-defined]
    assert records(body(value))[1:] == [
        {"type": "refusal_delta", "text": "No."},
        end("refusal", **ZEROS),
    ]


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        (whole("completed", reasoning_item(summary={})), '"summary": |{}'),
        (whole("completed", reasoning_item(summary=[3])), '"summary": [\n        |3'),
        (
            whole("completed", reasoning_item(summary=[{"type": "summary_text"}])),
            '|{\n          "type": "summary_text"',
        ),
        (whole("completed", reasoning_item(encrypted_content=[])), '"encrypted_content": |[]'),
        ({**whole(), "model": 1}, '"model": |1'),
        (
            whole() | {"usage": usage(3, 8) | {"input_tokens_details": {"cached_tokens": 4}}},
            '"usage": |{',
        ),
    ],
    ids=[
        "summary-not-a-list",
        "summary-part-not-an-object",
        "summary-part-without-text",
        "encrypted-content-not-a-string",
        "model-not-a-string",
        "cache-over-input",
    ],
)
def test_a_response_object_is_refused_where_its_fault_lies(value: Event, needle: str) -> None:
    text = body(value)
    error = refused(text)
    assert (error.code, error.event_index, (error.line, error.column)) == (
        Code.RECORDING_MALFORMED_EVENT,
        0,
        spot_in(text, needle),
    ), str(error)


# -- the recordings, read by the SDK too ---------------------------------------------------------


def sdk_final(path: Path) -> Any:
    """What the official client builds from the recording: a stream's final response (for
    an incomplete stream, the ``response`` of its terminal event), or a whole body."""
    data = path.read_bytes()
    if path.suffix == ".json":
        client = openai_client(data, content_type="application/json")
        return client.responses.create(model="gpt-4.1", input="Hi")
    with openai_client(data).responses.stream(model="gpt-4.1", input="Hi") as events:
        last = list(events)[-1]
        if last.type == "response.completed":
            return events.get_final_response()
    assert last.type == "response.incomplete"
    return last.response


def sdk_content(final: Any) -> list[tuple[str, object]]:
    """The response's content as the SDK holds it, in course's block kinds: a message's
    text and refusal parts, a reasoning item's texts and signature, the calls."""
    content: list[tuple[str, object]] = []
    for item in final.output:
        if item.type == "message":
            for part in item.content:
                if part.type == "output_text":
                    content.append(("text", part.text))
                else:
                    content.append(("refusal", part.refusal))
        elif item.type == "reasoning":
            texts = [part.text for part in item.summary] + [
                part.text for part in item.content or []
            ]
            if any(texts) or item.encrypted_content:
                content.append(("thinking", ("".join(texts), item.encrypted_content or None)))
        elif item.type == "function_call":
            if item.status == "incomplete":
                content.append(("incompleteToolCall", (item.call_id, item.name, item.arguments)))
            else:
                arguments = json.loads(item.arguments)
                content.append(("toolCall", (item.call_id, item.name, arguments)))
    return content


def course_content(response: CourseModelResponse) -> list[tuple[str, object]]:
    """The replayed content, a run of text (or of refusal) joined as one part holds it."""
    content: list[tuple[str, object]] = []
    for block in response.message.content:
        if isinstance(block, CourseTextBlock | CourseRefusalBlock):
            kind = block.type
            if content and content[-1][0] == kind:
                content[-1] = (kind, str(content[-1][1]) + block.text)
            else:
                content.append((kind, block.text))
        elif isinstance(block, CourseThinkingBlock):
            content.append(("thinking", (block.text, block.signature)))
        elif isinstance(block, CourseToolCallBlock):
            content.append(("toolCall", (block.id, block.name, thaw(block.arguments))))
        else:
            assert isinstance(block, CourseIncompleteToolCallBlock)
            content.append(("incompleteToolCall", (block.id, block.name, block.arguments_text)))
    return content


_STOPS: Final = {
    ("completed", None): {"stop", "toolCall", "refusal"},
    ("incomplete", "max_output_tokens"): {"length"},
    ("incomplete", "content_filter"): {"contentFilter"},
}

V2_RECORDINGS: Final = (
    "reasoning_encrypted.sse",
    "reasoning_text.sse",
    "incomplete_in_function_call.sse",
    "content_filter.sse",
    "incomplete.sse",
    "refusal.sse",
    "function_call.sse",
    "text_and_parallel_calls.sse",
    "response_reasoning.json",
    "response_incomplete_call.json",
    "response_incomplete.json",
    "response_refusal.json",
    "response_function_call.json",
)


@pytest.mark.parametrize("name", V2_RECORDINGS)
def test_the_sdk_agrees_with_each_recording_in_version_2(name: str) -> None:
    path = RESPONSES / name
    recording = import_recording(path.read_bytes())
    assert (recording.format, recording.schema_version, recording.truncated) == (FORMAT, 2, False)
    response = replay(recording)
    final = sdk_final(path)
    assert (final.id, final.model) == (response.response_id, response.model)
    reason = None if final.incomplete_details is None else final.incomplete_details.reason
    assert response.stop_reason in _STOPS[final.status, reason]
    assert response.provider_stop_reason == reason
    assert course_content(response) == sdk_content(final)
    has_refusal = any(kind == "refusal" for kind, _ in sdk_content(final))
    assert (response.stop_reason == "refusal") == has_refusal
    usage_ = final.usage
    details = (
        usage_.input_tokens,
        usage_.output_tokens,
        usage_.input_tokens_details.cached_tokens,
        usage_.output_tokens_details.reasoning_tokens,
    )
    ours = response.usage
    assert details == (
        ours.input_tokens,
        ours.output_tokens,
        ours.cache_read_tokens,
        ours.reasoning_tokens,
    )


def test_the_new_recordings_keep_what_they_were_made_to_show() -> None:
    encrypted = replay(import_recording((RESPONSES / "reasoning_encrypted.sse").read_bytes()))
    [thinking, *_] = encrypted.message.content
    assert isinstance(thinking, CourseThinkingBlock)
    assert thinking.signature is not None and thinking.signature.startswith("gAAAA")
    assert (encrypted.usage.cache_read_tokens, encrypted.usage.reasoning_tokens) == (1024, 320)
    cut = replay(import_recording((RESPONSES / "incomplete_in_function_call.sse").read_bytes()))
    assert [block.type for block in cut.message.content] == ["toolCall", "incompleteToolCall"]
    assert cut.stop_reason == "length"
    text = replay(import_recording((RESPONSES / "reasoning_text.sse").read_bytes()))
    assert text.message.content[0] == CourseThinkingBlock(
        "We need the weather in Tokyo; call get_weather.", None
    )
