"""Importing ``openai-responses`` recordings: the SPEC's mapping rows and every refusal, located.

Streams are built event by event with ``stream(...)``, written as the API writes them
(``event: TYPE``, compact JSON, a blank line), so event ``i``'s data is on line
``3 * i + 2``. ``where(text, line, fragment)`` gives the line and column of a fragment
that occurs once on that line: the refusal's exact position, spelled readably.
"""

from __future__ import annotations

import json
from typing import Any, Final

import openai
import pytest

from course import (
    CourseTextBlock,
    CourseToolCallBlock,
    FixtureProviderError,
    FixtureProviderErrorCode,
    thaw,
)
from course.vendors import Recording, RecordingError, RecordingErrorCode, import_recording
from course.vendors._openai_responses import detects, fits
from course.vendors._recording import ARGUMENTS_MAX_DEPTH

from .vendor_helpers import RECORDINGS, openai_client, replay

Code = RecordingErrorCode
Event = dict[str, object]

RESPONSE_ID: Final = "resp_68a1f27d0c6c8190b6f0e3a2c1d4e5f6"
MESSAGE_ID: Final = "msg_68a1f27dd5f081909c8e1f2a3b4c5d6e"
CALL_ITEM_ID: Final = "fc_68a1f27e3c9c8190a1b2c3d4e5f60718"
CALL_ID: Final = "call_8tYgH2kLmN4pQ6rS0vW3xZ5b"
REASONING_ID: Final = "rs_68a1f27c1b2a8190f0e1d2c3b4a59687"
FORMAT: Final = "openai-responses"


# -- building streams ---------------------------------------------------------------------


def response_object(response_id: object = RESPONSE_ID, status: str = "in_progress") -> Event:
    return {
        "id": response_id,
        "object": "response",
        "created_at": 1755443837,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": "gpt-4.1-2025-04-14",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": None,
    }


def created(response_id: object = RESPONSE_ID) -> Event:
    return {"type": "response.created", "response": response_object(response_id)}


def in_progress() -> Event:
    return {"type": "response.in_progress", "response": response_object()}


def message_item(item_id: object = MESSAGE_ID, **extra: object) -> Event:
    return {"id": item_id, "type": "message", "status": "in_progress", "content": [], **extra}


def call_item(
    item_id: object = CALL_ITEM_ID,
    call_id: object = CALL_ID,
    name: object = "get_weather",
    arguments: object = "",
) -> Event:
    return {
        "id": item_id,
        "type": "function_call",
        "status": "in_progress",
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }


def added(item: object, output_index: int = 0) -> Event:
    return {"type": "response.output_item.added", "output_index": output_index, "item": item}


def done(item: object, output_index: int = 0) -> Event:
    return {"type": "response.output_item.done", "output_index": output_index, "item": item}


def part_added(item_id: str = MESSAGE_ID) -> Event:
    part = {"type": "output_text", "annotations": [], "text": ""}
    return {
        "type": "response.content_part.added",
        "item_id": item_id,
        "output_index": 0,
        "content_index": 0,
        "part": part,
    }


def text_delta(delta: object, item_id: object = MESSAGE_ID) -> Event:
    return {
        "type": "response.output_text.delta",
        "item_id": item_id,
        "output_index": 0,
        "content_index": 0,
        "delta": delta,
        "logprobs": [],
    }


def refusal_delta(delta: object, item_id: object = MESSAGE_ID) -> Event:
    return {
        "type": "response.refusal.delta",
        "item_id": item_id,
        "output_index": 0,
        "content_index": 0,
        "delta": delta,
    }


def arguments_delta(delta: object, item_id: object = CALL_ITEM_ID) -> Event:
    return {
        "type": "response.function_call_arguments.delta",
        "item_id": item_id,
        "output_index": 1,
        "delta": delta,
    }


def usage(input_tokens: object = 12, output_tokens: object = 8) -> Event:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 20,
    }


def completed(recorded: object = None, response_id: object = RESPONSE_ID) -> Event:
    """``response.completed`` with ``recorded`` usage (``usage()`` when not given)."""
    response = response_object(response_id, "completed")
    response["usage"] = usage() if recorded is None else recorded
    return {"type": "response.completed", "response": response}


def completed_without_usage(**response: object) -> Event:
    body = response_object(status="completed")
    del body["usage"]
    return {"type": "response.completed", "response": {**body, **response}}


def incomplete(reason: object = "max_output_tokens", response_id: object = RESPONSE_ID) -> Event:
    response = response_object(response_id, "incomplete")
    response["incomplete_details"] = {"reason": reason}
    return {"type": "response.incomplete", "response": response}


def failed(error: object, response_id: object = RESPONSE_ID) -> Event:
    response = response_object(response_id, "failed")
    response["error"] = error
    return {"type": "response.failed", "response": response}


def error_event(code: object = "server_error", message: object = "Internal error") -> Event:
    return {"type": "error", "code": code, "message": message, "param": None}


def sse(event: Event) -> str:
    """One event as the API writes it (an ``event:`` line naming a string ``type``)."""
    kind = event.get("type")
    name = kind if type(kind) is str else ""
    return f"event: {name}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n"


def stream(*events: Event | str) -> str:
    """The events in order; a ``str`` is written as it is (``[DONE]``, a comment)."""
    return "".join(event if isinstance(event, str) else sse(event) for event in events)


DONE: Final = "data: [DONE]\n\n"


def text_answer(*deltas: object) -> list[Event]:
    """A whole text answer: one message item holding ``deltas``."""
    return [
        created(),
        in_progress(),
        added(message_item()),
        part_added(),
        *(text_delta(delta) for delta in deltas),
        done(message_item(status="completed")),
        completed(),
    ]


def call_events(
    fragments: tuple[str, ...] = ('{"city":', '"Paris"}'),
    arguments: str | None = None,
    item_id: str = CALL_ITEM_ID,
    call_id: str = CALL_ID,
    name: str = "get_weather",
) -> list[Event]:
    """A function call item from added to done; ``arguments`` defaults to the fragments."""
    whole = "".join(fragments) if arguments is None else arguments
    return [
        added(call_item(item_id, call_id, name), 1),
        *(arguments_delta(fragment, item_id) for fragment in fragments),
        done(call_item(item_id, call_id, name, whole), 1),
    ]


def records(text: str | bytes, **options: Any) -> list[Any]:
    return records_of(import_recording(text, **options))


def records_of(recording: Recording) -> list[Any]:
    result: list[Any] = thaw(recording.response)["records"]  # type: ignore[assignment]
    return result


def where(text: str, line: int, fragment: str, marker: str | None = None) -> tuple[int, int]:
    """The line and column of ``fragment`` (or of ``marker`` inside it) on ``line``."""
    row = text.splitlines()[line - 1]
    assert row.count(fragment) == 1, f"{fragment!r} must occur once on line {line}: {row!r}"
    column = row.index(fragment) + 1
    if marker is not None:
        column += fragment.index(marker)
    return line, column


def refused(text: str, **options: Any) -> RecordingError:
    with pytest.raises(RecordingError) as caught:
        import_recording(text, **options)
    return caught.value


def start_record(response_id: str = RESPONSE_ID) -> Event:
    return {"type": "response_start", "responseId": response_id, "role": "assistant"}


def end_record(stop: str = "stop", tokens: tuple[int, int] = (12, 8)) -> Event:
    return {
        "type": "response_end",
        "responseId": RESPONSE_ID,
        "stopReason": stop,
        "usage": {"inputTokens": tokens[0], "outputTokens": tokens[1]},
    }


def tool_record(arguments: object, call_id: str = CALL_ID, name: str = "get_weather") -> Event:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


# -- the format is settled first -----------------------------------------------------------


def test_detects_response_events_only() -> None:
    assert detects({"type": "response.created"})
    assert detects({"type": "response.in_progress"})
    assert not detects({"type": "error", "message": "x"})
    assert not detects({"type": "message_start"})
    assert not detects({"object": "chat.completion.chunk"})
    assert not detects({"type": 1})


def test_fits_error_and_response_events() -> None:
    assert fits({"type": "error", "message": "x"})
    assert fits({"type": "response.output_item.added"})
    assert not fits({"type": "message_start"})
    assert not fits({"type": "responses.created"})
    assert not fits({"type": None})


def test_auto_detects_a_stream_that_opens_with_response_created() -> None:
    recording = import_recording(stream(*text_answer("Hi")))
    assert recording.format == FORMAT


def test_a_stream_that_opens_with_an_error_needs_its_format_named() -> None:
    text = stream(error_event("rate_limit_exceeded", "Slow down"))
    error = refused(text)
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        0,
        2,
        1,
    )
    assert records(text, format=FORMAT) == [
        {"type": "transport_error", "message": "Slow down", "code": "rate_limit_exceeded"}
    ]


@pytest.mark.parametrize(
    "first",
    [
        'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[]}\n\n',
        "event: message_start\ndata: " + json.dumps({"type": "message_start"}) + "\n\n",
        DONE,
        "data: {not json\n\n",
    ],
    ids=["chat chunk", "anthropic start", "[DONE]", "bad JSON"],
)
def test_a_named_format_refuses_a_first_event_that_does_not_fit(first: str) -> None:
    error = refused(first + stream(*text_answer("Hi")), format=FORMAT)
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        0,
        first.count("\n") - 1,
        1,
    )


# -- what a recording becomes ----------------------------------------------------------------


def test_each_text_delta_is_one_record_with_its_exact_text() -> None:
    text = stream(*text_answer("Hel", "lo", "", " wörld ", "\n"))
    assert records(text) == [
        start_record(),
        {"type": "text_delta", "text": "Hel"},
        {"type": "text_delta", "text": "lo"},
        {"type": "text_delta", "text": " wörld "},
        {"type": "text_delta", "text": "\n"},
        end_record(),
    ]


def test_a_function_call_completes_at_its_item_done_with_the_item_arguments() -> None:
    text = stream(
        created(),
        *call_events(('{"city"', ':"Paris",', '"unit":"celsius"}')),
        completed(),
    )
    assert records(text) == [
        start_record(),
        tool_record({"city": "Paris", "unit": "celsius"}),
        end_record("tool_call"),
    ]


def test_a_function_call_without_argument_deltas_takes_the_done_arguments() -> None:
    text = stream(created(), *call_events((), '{"n": [1, 2.5, null]}'), completed())
    assert records(text)[1] == tool_record({"n": [1, 2.5, None]})


def test_arguments_may_nest_as_deeply_as_the_adapter_accepts() -> None:
    text = stream(created(), *call_events((_DEEPEST,)), completed())
    assert replay(import_recording(text)).stop_reason == "toolCall"


def test_empty_arguments_are_an_empty_object() -> None:
    text = stream(created(), *call_events((), ""), completed())
    assert records(text)[1] == tool_record({})


def test_records_follow_the_stream_order_across_items() -> None:
    second = "fc_second"
    text = stream(
        created(),
        added(message_item()),
        text_delta("Checking."),
        done(message_item()),
        *call_events(),
        *call_events(('{"tz":"UTC"}',), item_id=second, call_id="call_2", name="get_time"),
        added(message_item("msg_after"), 3),
        text_delta("Done.", "msg_after"),
        completed(),
    )
    assert records(text) == [
        start_record(),
        {"type": "text_delta", "text": "Checking."},
        tool_record({"city": "Paris"}),
        tool_record({"tz": "UTC"}, "call_2", "get_time"),
        {"type": "text_delta", "text": "Done."},
        end_record("tool_call"),
    ]


def test_a_message_item_may_stay_open_and_its_done_may_omit_the_type() -> None:
    text = stream(
        created(),
        added(message_item()),
        text_delta("a"),
        done({"id": MESSAGE_ID}),
        added(message_item("msg_open"), 1),
        text_delta("b", "msg_open"),
        completed(),
    )
    assert records(text) == [
        start_record(),
        {"type": "text_delta", "text": "a"},
        {"type": "text_delta", "text": "b"},
        end_record(),
    ]


def test_a_function_call_done_without_its_type_still_needs_and_uses_the_arguments() -> None:
    text = stream(
        created(),
        added(call_item()),
        done({"id": CALL_ITEM_ID, "arguments": '{"a":1}'}),
        completed(),
    )
    assert records(text)[1] == tool_record({"a": 1})


def test_refusal_text_makes_the_completed_response_a_refusal() -> None:
    text = stream(
        created(),
        added(message_item()),
        text_delta("Well"),
        refusal_delta("I can't"),
        refusal_delta(""),
        refusal_delta(" help with that."),
        completed(),
    )
    assert records(text) == [
        start_record(),
        {"type": "text_delta", "text": "Well"},
        {"type": "transport_error", "message": "I can't help with that.", "code": "refusal"},
    ]


def test_empty_refusal_deltas_are_no_refusal() -> None:
    text = stream(created(), added(message_item()), refusal_delta(""), completed())
    assert records(text) == [start_record(), end_record()]


def test_incomplete_is_a_transport_error_with_its_reason_and_open_calls_are_dropped() -> None:
    text = stream(
        created(),
        added(message_item()),
        text_delta("Once upon"),
        added(call_item(), 1),
        arguments_delta('{"city":'),
        incomplete("max_output_tokens"),
    )
    recording = import_recording(text)
    assert records_of(recording) == [
        start_record(),
        {"type": "text_delta", "text": "Once upon"},
        {
            "type": "transport_error",
            "message": "The provider stopped the response: max_output_tokens",
            "code": "max_output_tokens",
        },
    ]
    assert not recording.truncated


@pytest.mark.parametrize(
    ("error", "record"),
    [
        (
            {"code": "server_error", "message": "The server had an error."},
            {
                "type": "transport_error",
                "message": "The server had an error.",
                "code": "server_error",
            },
        ),
        (
            {"code": None, "message": "No code."},
            {"type": "transport_error", "message": "No code."},
        ),
        (
            {"code": 500, "message": "A numeric code is no code."},
            {"type": "transport_error", "message": "A numeric code is no code."},
        ),
        (
            {"message": "Absent code."},
            {"type": "transport_error", "message": "Absent code."},
        ),
    ],
    ids=["code", "null code", "numeric code", "absent code"],
)
def test_failed_is_a_transport_error_from_response_error(error: Event, record: Event) -> None:
    recording = import_recording(stream(created(), failed(error), DONE))
    assert records_of(recording) == [start_record(), record]
    assert not recording.truncated


@pytest.mark.parametrize(
    ("code", "record"),
    [
        ("server_error", {"type": "transport_error", "message": "Boom", "code": "server_error"}),
        (None, {"type": "transport_error", "message": "Boom"}),
        (["x"], {"type": "transport_error", "message": "Boom"}),
    ],
    ids=["code", "null code", "non-string code"],
)
def test_an_error_event_is_a_transport_error_and_ends_the_reading(
    code: object, record: Event
) -> None:
    text = stream(
        created(),
        added(message_item()),
        text_delta("Partial"),
        error_event(code, "Boom"),
        "data: {this is never read\n\n",
        completed(),
    )
    recording = import_recording(text)
    assert records_of(recording) == [
        start_record(),
        {"type": "text_delta", "text": "Partial"},
        record,
    ]
    assert not recording.truncated


def test_an_error_event_before_the_start_is_the_whole_response() -> None:
    text = stream(error_event("rate_limit_exceeded", "Slow down"), *text_answer("never read"))
    assert records(text, format=FORMAT) == [
        {"type": "transport_error", "message": "Slow down", "code": "rate_limit_exceeded"}
    ]


def test_one_done_comments_and_blank_lines_may_trail_the_terminal() -> None:
    text = stream(*text_answer("Hi"), DONE, ": keep-alive\n\n", "\n\n", "event: ping\n\n")
    recording = import_recording(text)
    assert records_of(recording)[-1] == end_record()
    assert not recording.truncated


def test_a_cut_stream_keeps_its_records_and_never_emits_a_partial_call() -> None:
    text = stream(
        created(),
        added(message_item()),
        text_delta("Checking"),
        *call_events()[:2],
    )
    recording = import_recording(text)
    assert recording.truncated
    assert records_of(recording) == [
        start_record(),
        {"type": "text_delta", "text": "Checking"},
    ]
    with pytest.raises(FixtureProviderError) as caught:
        replay(recording)
    assert caught.value.code is FixtureProviderErrorCode.PROVIDER_MISSING_TERMINAL


def test_a_stream_cut_right_after_the_start_is_truncated() -> None:
    recording = import_recording(stream(created()))
    assert recording.truncated
    assert records_of(recording) == [start_record()]


def test_other_item_kinds_are_ignored_with_their_events() -> None:
    text = stream(
        created(),
        in_progress(),
        added({"id": REASONING_ID, "type": "reasoning", "summary": []}),
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": REASONING_ID,
            "output_index": 0,
            "summary_index": 0,
            "delta": "Thinking",
        },
        text_delta("not a message's text", REASONING_ID),
        refusal_delta("nor a refusal", REASONING_ID),
        arguments_delta("{nor arguments", REASONING_ID),
        done({"id": REASONING_ID, "type": "reasoning", "summary": []}),
        added({"id": "ws_1", "type": "web_search_call", "status": "in_progress"}, 1),
        {"type": "response.web_search_call.searching", "item_id": "ws_1", "output_index": 1},
        added(message_item(), 2),
        part_added(),
        text_delta("Answer"),
        {
            "type": "response.output_text.annotation.added",
            "item_id": MESSAGE_ID,
            "output_index": 2,
            "content_index": 0,
            "annotation_index": 0,
            "annotation": {"type": "url_citation", "url": "https://example.com"},
        },
        {"type": "response.output_text.done", "item_id": MESSAGE_ID, "text": "Answer"},
        completed(),
    )
    recording = import_recording(text)
    assert records_of(recording) == [
        start_record(),
        {"type": "text_delta", "text": "Answer"},
        end_record(),
    ]
    assert dict(recording.ignored) == {
        "response.output_item.added:reasoning": 1,
        "response.reasoning_summary_text.delta": 1,
        "response.output_text.delta:reasoning": 1,
        "response.refusal.delta:reasoning": 1,
        "response.function_call_arguments.delta:reasoning": 1,
        "response.output_item.done:reasoning": 1,
        "response.output_item.added:web_search_call": 1,
        "response.web_search_call.searching": 1,
        "response.output_text.annotation.added": 1,
    }


def test_usage_comes_from_the_recording_and_wins_over_the_argument() -> None:
    text = stream(*text_answer("Hi")[:-1], completed(usage(40, 2)))
    assert records(text, usage=(1, 1))[-1] == end_record(tokens=(40, 2))


@pytest.mark.parametrize(
    "terminal",
    [completed_without_usage(), completed_without_usage(usage=None)],
    ids=["absent", "null"],
)
def test_a_response_without_usage_takes_the_usage_argument(terminal: Event) -> None:
    text = stream(*text_answer("Hi")[:-1], terminal)
    assert records(text, usage=(7, 3))[-1] == end_record(tokens=(7, 3))


def test_two_calls_with_one_id_are_imported_as_they_are() -> None:
    text = stream(
        created(),
        *call_events(),
        *call_events(('{"city":"Rome"}',), item_id="fc_other"),
        completed(),
    )
    recording = import_recording(text)
    assert records_of(recording)[1:3] == [
        tool_record({"city": "Paris"}),
        tool_record({"city": "Rome"}),
    ]
    with pytest.raises(FixtureProviderError) as caught:
        replay(recording)
    assert caught.value.code is FixtureProviderErrorCode.PROVIDER_DUPLICATE_TOOL_CALL


def test_events_without_event_lines_are_read_by_their_type() -> None:
    text = "".join(f"data: {json.dumps(event)}\n\n" for event in text_answer("No", " names"))
    assert records(text)[1:3] == [
        {"type": "text_delta", "text": "No"},
        {"type": "text_delta", "text": " names"},
    ]


def test_a_recording_is_read_only_and_reports_its_format() -> None:
    recording = import_recording(stream(*text_answer("Hi")))
    assert isinstance(recording, Recording)
    assert recording.format == FORMAT
    with pytest.raises(TypeError):
        recording.response["records"] = []  # type: ignore[index]


# -- refusals, each at its place ---------------------------------------------------------------

# Each row: the events, the expected code, the index of the refused event, and the
# fragment of that event's data line the error points at (``None``: column 1), with an
# optional marker inside the fragment.
Row = tuple[list[Event | str], Code, int, str | None, str | None]

_DEEPEST = '{"a":' * (ARGUMENTS_MAX_DEPTH - 1) + "{}" + "}" * (ARGUMENTS_MAX_DEPTH - 1)
_DEEP = "{" + '"a":' + _DEEPEST + "}"

REFUSALS: Final[dict[str, Row]] = {
    # class 1: JSON
    "[DONE] before the terminal": (  # where a JSON reader stops: at `DONE`
        [created(), DONE, completed()],
        Code.RECORDING_INVALID_JSON,
        1,
        "[DONE]",
        "DONE",
    ),
    "bad JSON": (
        [created(), 'event: response.in_progress\ndata: {"type":"response.in_progress",]\n\n'],
        Code.RECORDING_INVALID_JSON,
        1,
        ",]",
        ",",
    ),
    "data not an object": (  # at the value
        [created(), "data: []\n\n"],
        Code.RECORDING_INVALID_JSON,
        1,
        "[]",
        "[",
    ),
    # class 2: vocabulary
    "unknown type": (
        [created(), {"type": "session.updated"}],
        Code.RECORDING_UNKNOWN_EVENT,
        1,
        '"session.updated"',
        None,
    ),
    "unknown type after the terminal": (
        [*text_answer("Hi"), {"type": "thread.run.created", "id": 3}],
        Code.RECORDING_UNKNOWN_EVENT,
        7,
        '"thread.run.created"',
        None,
    ),
    # class 3: the event alone
    "missing type": (
        [created(), {"sequence_number": 1}],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '{"sequence_number"',
        None,
    ),
    "type not a string": (
        [created(), {"type": 7}],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        "7",
        None,
    ),
    "event name differs from type": (
        [
            created(),
            'event: response.completed\ndata: {"type":"response.in_progress"}\n\n',
        ],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"response.in_progress"',
        None,
    ),
    "created without response": (
        [{"type": "response.created", "sequence_number": 0}],
        Code.RECORDING_MALFORMED_EVENT,
        0,
        '{"type"',
        None,
    ),
    "created with an empty id": (
        [created("")],
        Code.RECORDING_MALFORMED_EVENT,
        0,
        '"id":""',
        '""',
    ),
    "created with a numeric id": (
        [created(42)],
        Code.RECORDING_MALFORMED_EVENT,
        0,
        '"id":42',
        "42",
    ),
    "item added without item": (
        [created(), {"type": "response.output_item.added", "output_index": 0}],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '{"type"',
        None,
    ),
    "item without id": (
        [created(), added({"type": "message", "content": []})],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"item":{',
        "{",
    ),
    "item type not a string": (
        [created(), added({"id": MESSAGE_ID, "type": None})],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"type":null',
        "null",
    ),
    "function call without call_id": (
        [created(), added({"id": CALL_ITEM_ID, "type": "function_call", "name": "f"})],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"item":{',
        "{",
    ),
    "function call with an empty name": (
        [created(), added(call_item(name=""))],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"name":""',
        '""',
    ),
    "text delta without delta": (
        [created(), added(message_item()), {"type": "response.output_text.delta", "item_id": "x"}],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '{"type"',
        None,
    ),
    "text delta with a null item_id": (
        [created(), added(message_item()), text_delta("x", None)],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"item_id":null',
        "null",
    ),
    "refusal delta not a string": (
        [created(), added(message_item()), refusal_delta(5)],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"delta":5',
        "5",
    ),
    "arguments delta not a string": (
        [created(), added(call_item()), arguments_delta(["{"])],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"delta":[',
        "[",
    ),
    "function call done without arguments": (
        [created(), added(call_item()), done({"id": CALL_ITEM_ID, "type": "function_call"})],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"item":{',
        "{",
    ),
    "function call done with numeric arguments": (
        [created(), added(call_item()), done(call_item(arguments=12))],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"arguments":12',
        "12",
    ),
    "function call done with a numeric call_id": (
        [created(), added(call_item()), done(call_item(call_id=9, arguments="{}"))],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"call_id":9',
        "9",
    ),
    "done item without id": (
        [created(), added(message_item()), done({"type": "message"})],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"item":{',
        "{",
    ),
    "completed without response": (
        [created(), {"type": "response.completed"}],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '{"type"',
        None,
    ),
    "usage not an object": (
        [created(), completed("12/8")],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"12/8"',
        None,
    ),
    "usage without input_tokens": (
        [created(), completed({"output_tokens": 8})],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"usage":{',
        "{",
    ),
    "negative output_tokens": (
        [created(), completed(usage(12, -1))],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"output_tokens":-1',
        "-1",
    ),
    "boolean input_tokens": (
        [created(), completed(usage(True, 8))],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"input_tokens":true',
        "true",
    ),
    "input_tokens past 2**53 - 1": (
        [created(), completed(usage(2**53, 8))],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        f'"input_tokens":{2**53}',
        str(2**53),
    ),
    "fractional output_tokens": (
        [created(), completed(usage(12, 8.0))],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"output_tokens":8.0',
        "8.0",
    ),
    "incomplete without details": (
        [created(), {"type": "response.incomplete", "response": {"id": RESPONSE_ID}}],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"response":{',
        "{",
    ),
    "incomplete with a null reason": (
        [created(), incomplete(None)],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"reason":null',
        "null",
    ),
    "failed without error": (
        [created(), {"type": "response.failed", "response": {"id": RESPONSE_ID, "error": None}}],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"error":null',
        "null",
    ),
    "failed error without message": (
        [created(), failed({"code": "server_error"})],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"error":{',
        "{",
    ),
    "error event without message": (
        [created(), {"type": "error", "code": "server_error"}],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '{"type"',
        None,
    ),
    "error event with a numeric message": (
        [created(), error_event("x", 500)],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"message":500',
        "500",
    ),
    "malformed beats after the terminal": (
        [*text_answer("Hi"), text_delta(1)],
        Code.RECORDING_MALFORMED_EVENT,
        7,
        '"delta":1',
        "1",
    ),
    "malformed beats a second start": (
        [created(), created("")],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"id":""',
        '""',
    ),
    "custom tool call": (
        [
            created(),
            added({"id": "ctc_1", "type": "custom_tool_call", "call_id": "c", "name": "f"}),
        ],
        Code.RECORDING_UNSUPPORTED,
        1,
        '"custom_tool_call"',
        None,
    ),
    "malformed beats unsupported": (
        [created(), added({"type": "custom_tool_call", "call_id": "c"})],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"item":{',
        "{",
    ),
    "unsupported beats after the terminal": (
        [*text_answer("Hi"), added({"id": "ctc_1", "type": "custom_tool_call"})],
        Code.RECORDING_UNSUPPORTED,
        7,
        '"custom_tool_call"',
        None,
    ),
    # class 4: its place
    "item added before the start": (
        [added(message_item()), *text_answer("Hi")],
        Code.RECORDING_OUT_OF_ORDER,
        0,
        None,
        None,
    ),
    "in_progress before the start": (
        [in_progress(), *text_answer("Hi")],
        Code.RECORDING_OUT_OF_ORDER,
        0,
        None,
        None,
    ),
    "a second start": (
        [created(), in_progress(), created()],
        Code.RECORDING_OUT_OF_ORDER,
        2,
        None,
        None,
    ),
    "an item added twice": (
        [created(), added(message_item()), added(message_item(), 1)],
        Code.RECORDING_OUT_OF_ORDER,
        2,
        None,
        None,
    ),
    "an item added again after its done": (
        [created(), *call_events(), added(call_item(), 2)],
        Code.RECORDING_OUT_OF_ORDER,
        5,
        None,
        None,
    ),
    "text for an item never added": (
        [created(), added(message_item()), text_delta("x", "msg_other")],
        Code.RECORDING_OUT_OF_ORDER,
        2,
        None,
        None,
    ),
    "text for a done item": (
        [created(), added(message_item()), done(message_item()), text_delta("late")],
        Code.RECORDING_OUT_OF_ORDER,
        3,
        None,
        None,
    ),
    "arguments for a done call": (
        [created(), *call_events(), arguments_delta("}")],
        Code.RECORDING_OUT_OF_ORDER,
        5,
        None,
        None,
    ),
    "done for an item never added": (
        [created(), done(call_item(arguments="{}"))],
        Code.RECORDING_OUT_OF_ORDER,
        1,
        None,
        None,
    ),
    "an item done twice": (
        [created(), *call_events(), done(call_item(arguments='{"city":"Paris"}'))],
        Code.RECORDING_OUT_OF_ORDER,
        5,
        None,
        None,
    ),
    "an ignorable event after the terminal": (
        [*text_answer("Hi"), in_progress()],
        Code.RECORDING_OUT_OF_ORDER,
        7,
        None,
        None,
    ),
    "an error event after the terminal": (
        [*text_answer("Hi"), error_event()],
        Code.RECORDING_OUT_OF_ORDER,
        7,
        None,
        None,
    ),
    "a start after the terminal": (
        [*text_answer("Hi"), DONE, created()],
        Code.RECORDING_OUT_OF_ORDER,
        8,
        None,
        None,
    ),
    "a second terminal": (
        [created(), incomplete(), completed()],
        Code.RECORDING_OUT_OF_ORDER,
        2,
        None,
        None,
    ),
    "a second [DONE]": (
        [*text_answer("Hi"), DONE, DONE],
        Code.RECORDING_OUT_OF_ORDER,
        8,
        None,
        None,
    ),
    "events after a failed response": (
        [created(), failed({"code": "server_error", "message": "x"}), text_delta("x")],
        Code.RECORDING_OUT_OF_ORDER,
        2,
        None,
        None,
    ),
    "out of order beats a wrong item": (
        [created(), added(message_item()), done(message_item()), arguments_delta("{")],
        Code.RECORDING_OUT_OF_ORDER,
        3,
        None,
        None,
    ),
    "out of order beats a changed response id": (
        [*text_answer("Hi"), completed(response_id="resp_other")],
        Code.RECORDING_OUT_OF_ORDER,
        7,
        None,
        None,
    ),
    # class 5: against earlier events
    "text for a function call": (
        [created(), added(call_item()), text_delta("x", CALL_ITEM_ID)],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        f'"{CALL_ITEM_ID}"',
        None,
    ),
    "refusal for a function call": (
        [created(), added(call_item()), refusal_delta("no", CALL_ITEM_ID)],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        f'"{CALL_ITEM_ID}"',
        None,
    ),
    "arguments for a message": (
        [created(), added(message_item()), arguments_delta("{", MESSAGE_ID)],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        f'"{MESSAGE_ID}"',
        None,
    ),
    "arguments differ from the deltas": (
        [created(), *call_events(('{"city":', '"Paris"}'), '{"city":"Rome"}')],
        Code.RECORDING_MALFORMED_EVENT,
        4,
        '"arguments":"{',
        '"{',
    ),
    "arguments not JSON": (
        [created(), *call_events(('{"city":', "Paris}"))],
        Code.RECORDING_MALFORMED_EVENT,
        4,
        '"arguments":"{',
        '"{',
    ),
    "arguments not an object": (
        [created(), *call_events(("[1,", "2]"))],
        Code.RECORDING_MALFORMED_EVENT,
        4,
        '"arguments":"[',
        '"[',
    ),
    "arguments nested too deeply": (
        [created(), *call_events((), _DEEP), completed()],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"arguments":"{',
        '"{',
    ),
    "call_id changed at done": (
        [created(), added(call_item()), done(call_item(call_id="call_other", arguments="{}"))],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"call_other"',
        None,
    ),
    "name changed at done": (
        [created(), added(call_item()), done(call_item(name="get_time", arguments="{}"))],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"get_time"',
        None,
    ),
    "type changed at done": (
        [created(), added(message_item()), done(call_item(MESSAGE_ID, arguments="{}"))],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        '"function_call"',
        None,
    ),
    "completed with another response id": (
        [created(), completed(response_id="resp_other")],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"resp_other"',
        None,
    ),
    "incomplete with another response id": (
        [created(), incomplete(response_id="resp_other")],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"resp_other"',
        None,
    ),
    "failed with another response id": (
        [created(), failed({"message": "x"}, response_id="resp_other")],
        Code.RECORDING_MALFORMED_EVENT,
        1,
        '"resp_other"',
        None,
    ),
    "completed with a call still open": (
        [created(), *call_events()[:2], completed()],
        Code.RECORDING_MALFORMED_EVENT,
        3,
        None,
        None,
    ),
    "an open call beats missing usage": (
        [created(), added(call_item()), completed_without_usage()],
        Code.RECORDING_MALFORMED_EVENT,
        2,
        None,
        None,
    ),
    "missing usage": (
        [created(), completed_without_usage()],
        Code.RECORDING_MISSING_USAGE,
        1,
        '"response":{',
        "{",
    ),
    "null usage": (
        [created(), completed_without_usage(usage=None)],
        Code.RECORDING_MISSING_USAGE,
        1,
        '"response":{',
        "{",
    ),
}


@pytest.mark.parametrize("row", REFUSALS.values(), ids=REFUSALS.keys())
def test_a_refused_event_is_coded_and_located(row: Row) -> None:
    events, code, index, fragment, marker = row
    text = stream(*events)
    error = refused(text, format=FORMAT, source="rec.sse")
    line = stream(*events[: index + 1]).count("\n") - 1  # the event's one data line
    expected = (line, 1) if fragment is None else where(text, line, fragment, marker)
    assert (error.code, error.event_index, (error.line, error.column)) == (code, index, expected)
    assert error.source == "rec.sse"
    assert str(error).startswith(f"rec.sse:{expected[0]}:{expected[1]}: {code.value} ")


def test_messages_name_what_is_wrong() -> None:
    cases = {
        "missing usage": "usage=(IN, OUT)",
        "text for a done item": "already done",
        "text for an item never added": "never added",
        "arguments differ from the deltas": "concatenated",
        "call_id changed at done": "call_other",
        "custom tool call": "custom_tool_call",
        "[DONE] before the terminal": "only once, after the terminal event",
        "completed with a call still open": CALL_ID,
    }
    for name, words in cases.items():
        error = refused(stream(*REFUSALS[name][0]), format=FORMAT)
        assert words in error.message, (name, error.message)


# -- framing: line endings, multi-line data, padding -----------------------------------------


def _with_line_ending(text: str, ending: str) -> str:
    return text.replace("\n", ending)


@pytest.mark.parametrize("ending", ["\r\n", "\r"], ids=["CRLF", "CR"])
def test_line_endings_give_the_same_fixture(ending: str) -> None:
    text = stream(*text_answer("a", "b"), DONE)
    assert records(_with_line_ending(text, ending)) == records(text)


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_errors_are_located_the_same_whatever_the_line_endings(ending: str) -> None:
    text = stream(created(), added(call_item()), done(call_item(arguments=12)))
    error = refused(_with_line_ending(text, ending))
    assert (error.line, error.column) == where(text, 8, '"arguments":12', "12")


def test_multi_line_data_is_joined_and_located_on_its_own_line() -> None:
    answer = stream(*text_answer("Hi")[:-1])
    terminal = (
        "event: response.completed\n"
        'data: {"type":"response.completed",\n'
        'data:  "response":{"id":"' + RESPONSE_ID + '",\n'
        'data:"usage":{"input_tokens":3,"output_tokens":-4}}}\n\n'
    )
    error = refused(answer + terminal)
    last = (answer + terminal).count("\n") - 1
    assert (error.code, error.event_index) == (Code.RECORDING_MALFORMED_EVENT, 6)
    assert (error.line, error.column) == (
        last,
        len('data:"usage":{"input_tokens":3,"output_tokens":') + 1,
    )
    fixed = terminal.replace("-4", "4")
    assert records(answer + fixed)[-1] == end_record(tokens=(3, 4))


def test_padding_whitespace_inside_json_is_read_and_located() -> None:
    padded = (
        "event: response.created\n"
        'data:   {  "type" : "response.created" ,\t"response" : { "id" :  "'
        + RESPONSE_ID
        + '" }  }  \n\n'
    )
    rest = stream(added(message_item()), text_delta("x"), completed())
    assert records(padded + rest)[0] == start_record()
    broken = padded.replace(f'"{RESPONSE_ID}"', "  false ")
    error = refused(broken + rest)
    assert (error.line, error.column) == where(broken, 2, "false")


def test_a_byte_order_mark_and_bytes_are_accepted() -> None:
    text = stream(*text_answer("Hi"))
    assert records(("\ufeff" + text).encode()) == records(text)


# -- the official SDK agrees ----------------------------------------------------------------

RESPONSES: Final = RECORDINGS / FORMAT

SUCCEEDING: Final = (
    "text.sse",
    "function_call.sse",
    "text_and_parallel_calls.sse",
    "web_search.sse",
)


def sdk_stream(body: bytes) -> tuple[list[Any], Any]:
    """The SDK's stream helper over ``body``: its events, and its final response or the
    exception ``get_final_response()`` raised."""
    client = openai_client(body)
    with client.responses.stream(model="gpt-4.1", input="Hi") as events:
        seen = list(events)
        try:
            final: Any = events.get_final_response()
        except RuntimeError as error:
            final = error
    return seen, final


@pytest.mark.parametrize("name", SUCCEEDING)
def test_the_sdk_agrees_with_a_successful_recording(name: str) -> None:
    body = (RESPONSES / name).read_bytes()
    recording = import_recording(body)
    assert recording.format == FORMAT
    assert not recording.truncated
    response = replay(recording)
    _, final = sdk_stream(body)
    assert final.id == response.response_id
    assert final.status == "completed"
    text = "".join(b.text for b in response.message.content if isinstance(b, CourseTextBlock))
    assert final.output_text == text
    calls = [item for item in final.output if item.type == "function_call"]
    blocks = [b for b in response.message.content if isinstance(b, CourseToolCallBlock)]
    assert [(c.call_id, c.name, json.loads(c.arguments)) for c in calls] == [
        (b.id, b.name, thaw(b.arguments)) for b in blocks
    ]
    assert response.stop_reason == ("toolCall" if calls else "stop")
    assert (final.usage.input_tokens, final.usage.output_tokens) == (
        response.usage.input_tokens,
        response.usage.output_tokens,
    )


def test_the_sdk_keeps_what_the_importer_ignores() -> None:
    body = (RESPONSES / "function_call.sse").read_bytes()
    recording = import_recording(body)
    _, final = sdk_stream(body)
    assert [item.type for item in final.output] == ["reasoning", "function_call"]
    assert recording.ignored["response.output_item.added:reasoning"] == 1
    assert recording.ignored["response.reasoning_summary_text.delta"] == 3


def test_a_refusal_is_a_completed_response_to_the_sdk_and_a_transport_error_here() -> None:
    body = (RESPONSES / "refusal.sse").read_bytes()
    _, final = sdk_stream(body)
    parts = [part for item in final.output for part in item.content]
    assert [part.type for part in parts] == ["refusal"]
    with pytest.raises(FixtureProviderError) as caught:
        replay(import_recording(body))
    assert caught.value.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
    assert caught.value.transport_code == "refusal"
    assert caught.value.transport_message == parts[0].refusal


def test_an_incomplete_response_has_no_final_response_in_the_sdk() -> None:
    body = (RESPONSES / "incomplete.sse").read_bytes()
    events, final = sdk_stream(body)
    assert isinstance(final, RuntimeError)
    assert events[-1].type == "response.incomplete"
    reason = events[-1].response.incomplete_details.reason
    with pytest.raises(FixtureProviderError) as caught:
        replay(import_recording(body))
    assert caught.value.transport_code == reason == "max_output_tokens"


def test_a_failed_response_has_no_final_response_in_the_sdk() -> None:
    body = (RESPONSES / "failed.sse").read_bytes()
    events, final = sdk_stream(body)
    assert isinstance(final, RuntimeError)
    error = events[-1].response.error
    with pytest.raises(FixtureProviderError) as caught:
        replay(import_recording(body))
    assert (caught.value.transport_code, caught.value.transport_message) == (
        error.code,
        error.message,
    )


def test_an_error_event_reaches_the_sdk_as_an_event_and_leaves_no_final_response() -> None:
    body = (RESPONSES / "error_event.sse").read_bytes()
    events, final = sdk_stream(body)
    assert isinstance(final, RuntimeError)
    assert events[-1].type == "error"
    deltas = [event.delta for event in events if event.type == "response.output_text.delta"]
    recording = import_recording(body)
    imported = records_of(recording)
    assert [r["text"] for r in imported if r["type"] == "text_delta"] == deltas
    assert imported[-1] == {
        "type": "transport_error",
        "message": events[-1].message,
        "code": events[-1].code,
    }


def test_a_recording_that_opens_with_an_error_fails_in_the_sdk_too() -> None:
    body = (RESPONSES / "error_first.sse").read_bytes()
    with pytest.raises(RuntimeError):
        sdk_stream(body)
    with pytest.raises(FixtureProviderError) as caught:
        replay(import_recording(body, format=FORMAT))
    assert caught.value.transport_code == "rate_limit_exceeded"


def test_a_cut_recording_has_no_final_response_in_the_sdk_and_misses_its_terminal_here() -> None:
    body = (RESPONSES / "truncated.sse").read_bytes()
    _, final = sdk_stream(body)
    assert isinstance(final, RuntimeError)
    recording = import_recording(body)
    assert recording.truncated
    with pytest.raises(FixtureProviderError) as caught:
        replay(recording)
    assert caught.value.code is FixtureProviderErrorCode.PROVIDER_MISSING_TERMINAL


def test_a_recording_without_usage_needs_the_argument_where_the_sdk_reports_none() -> None:
    body = (RESPONSES / "no_usage.sse").read_bytes()
    _, final = sdk_stream(body)
    assert final.usage is None
    error = refused(body.decode())
    assert error.code is Code.RECORDING_MISSING_USAGE
    response = replay(import_recording(body, usage=(5, 2)))
    assert response.message.content == (CourseTextBlock("Ready"), CourseTextBlock("."))
    assert final.output_text == "Ready."


@pytest.mark.parametrize("name", sorted(path.name for path in RESPONSES.glob("*.sse")))
@pytest.mark.parametrize("ending", ["\r\n", "\r"], ids=["CRLF", "CR"])
def test_every_recording_imports_the_same_with_other_line_endings(name: str, ending: str) -> None:
    text = (RESPONSES / name).read_text(encoding="utf-8")
    usage_given = (1, 1)
    expected = import_recording(text, format=FORMAT, usage=usage_given)
    again = import_recording(_with_line_ending(text, ending), format=FORMAT, usage=usage_given)
    assert again == expected


# -- items that ask the client to act ---------------------------------------------------------


@pytest.mark.parametrize(
    "item",
    [
        {"id": "cu_1", "type": "computer_call", "call_id": "c", "action": {"type": "click"}},
        {"id": "lsh_1", "type": "local_shell_call", "call_id": "c", "action": {"type": "exec"}},
        {"id": "sh_1", "type": "shell_call", "call_id": "c", "action": {"commands": []}},
        {"id": "ap_1", "type": "apply_patch_call", "call_id": "c", "operation": {}},
        {"id": "mcpr_1", "type": "mcp_approval_request", "name": "f", "server_label": "s"},
        {"id": "ts_1", "type": "tool_search_call", "execution": "client", "arguments": {}},
    ],
    ids=lambda item: str(item["type"]),
)
def test_an_item_that_asks_the_client_to_act_is_unsupported(item: Event) -> None:
    text = stream(created(), added(item), done(item), completed())
    error = refused(text)
    assert (error.code, error.event_index) == (Code.RECORDING_UNSUPPORTED, 1)
    assert (error.line, error.column) == where(
        text, 5, f'"type":"{item["type"]}"', f'"{item["type"]}'
    )
    assert "asks the client to act" in error.message


def test_a_tool_search_the_server_runs_is_ignored_as_other_server_tools() -> None:
    item = {"id": "ts_1", "type": "tool_search_call", "execution": "server", "arguments": {}}
    recording = import_recording(stream(created(), added(item), done(item), completed()))
    assert records_of(recording) == [start_record(), end_record()]
    assert recording.ignored == {
        "response.output_item.added:tool_search_call": 1,
        "response.output_item.done:tool_search_call": 1,
    }


def test_the_repository_s_recorded_shell_call_stream_is_refused_not_a_clean_stop() -> None:
    text = stream(
        created(),
        added({"id": "sh_1", "type": "shell_call", "call_id": "call_1", "action": {}}),
        {"type": "response.shell_call_command.delta", "command_index": 0, "delta": "ls"},
        completed(),
    )
    assert refused(text).code is Code.RECORDING_UNSUPPORTED


# -- the live API's error event: its fields under `error` ------------------------------------


def live_error(**error: object) -> Event:
    return {"type": "error", "sequence_number": 2, "error": error}


@pytest.mark.parametrize(
    ("error", "record"),
    [
        (
            {"type": "invalid_request_error", "code": "context_length_exceeded", "message": "Long"},
            {"type": "transport_error", "message": "Long", "code": "context_length_exceeded"},
        ),
        (
            {"type": "server_error", "code": None, "message": "Boom", "param": None},
            {"type": "transport_error", "message": "Boom", "code": "server_error"},
        ),
        ({"message": "Boom"}, {"type": "transport_error", "message": "Boom"}),
    ],
    ids=["code", "type", "neither"],
)
def test_the_live_error_event_is_read_from_its_error_object(error: Event, record: Event) -> None:
    text = stream(created(), live_error(**error), completed())
    assert records(text) == [start_record(), record]


def test_a_live_error_event_first_needs_its_format_named() -> None:
    text = stream(live_error(code="server_error", message="Boom"))
    assert refused(text).code is Code.RECORDING_UNKNOWN_FORMAT
    assert records(text, format=FORMAT) == [
        {"type": "transport_error", "message": "Boom", "code": "server_error"}
    ]


def test_a_live_error_event_without_a_message_is_malformed_at_its_error_object() -> None:
    text = stream(created(), live_error(code="server_error"))
    error = refused(text)
    assert (error.code, error.event_index) == (Code.RECORDING_MALFORMED_EVENT, 1)
    assert (error.line, error.column) == where(text, 5, '"error":{', "{")


def test_the_top_level_error_event_is_still_read_when_error_is_no_object() -> None:
    text = stream(created(), {**error_event("server_error", "Boom"), "error": None})
    assert records(text)[-1] == {
        "type": "transport_error",
        "message": "Boom",
        "code": "server_error",
    }


# -- a refusal of a tool call's arguments names the call ---------------------------------------


def test_a_refusal_of_arguments_names_the_call_by_output_index_id_and_name() -> None:
    text = stream(created(), *call_events(('{"city": ',)), completed())
    error = refused(text)
    assert error.code is Code.RECORDING_MALFORMED_EVENT
    assert f"tool call 1 (id '{CALL_ID}', name 'get_weather')" in error.message


# -- a non-streamed answer: the response object ----------------------------------------------


def whole(status: str = "completed", *output: Event, **extra: object) -> Event:
    body = response_object(status=status)
    body["output"] = list(output)
    body["usage"] = usage()
    body.update(extra)
    return body


def text_item(*texts: str, status: str = "completed") -> Event:
    parts = [{"type": "output_text", "annotations": [], "text": t} for t in texts]
    return message_item(status=status, content=parts, role="assistant")


def whole_call(
    call_id: str = CALL_ID, arguments: str = '{"city":"Paris"}', **extra: object
) -> Event:
    return {
        **call_item(CALL_ITEM_ID, call_id, "get_weather", arguments),
        "status": "completed",
        **extra,
    }


def body(value: object) -> str:
    return json.dumps(value, indent=2)


def spot_in(text: str, needle: str) -> tuple[int, int]:
    """The line and column of ``needle``'s ``|`` (the needle occurs once)."""
    before, _, after = needle.partition("|")
    assert text.count(before + after) == 1, needle
    offset = text.index(before + after) + len(before)
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def test_a_response_object_gives_its_items_in_order_as_its_stream_would() -> None:
    reasoning: Event = {"id": REASONING_ID, "type": "reasoning", "summary": []}
    value = whole("completed", reasoning, text_item("Let me ", "check."), whole_call())
    recording = import_recording(body(value))
    assert (recording.format, recording.truncated) == (FORMAT, False)
    assert records_of(recording) == [
        start_record(),
        {"type": "text_delta", "text": "Let me "},
        {"type": "text_delta", "text": "check."},
        tool_record({"city": "Paris"}),
        end_record("tool_call"),
    ]
    assert recording.ignored == {"output:reasoning": 1}


def test_a_response_object_s_statuses_read_as_their_terminal_events() -> None:
    incomplete_body = whole(
        "incomplete",
        text_item("Once", status="incomplete"),
        whole_call(status="incomplete"),
        incomplete_details={"reason": "max_output_tokens"},
    )
    assert records(body(incomplete_body)) == [
        start_record(),
        {"type": "text_delta", "text": "Once"},
        {
            "type": "transport_error",
            "message": "The provider stopped the response: max_output_tokens",
            "code": "max_output_tokens",
        },
    ]
    failed_body = whole("failed", error={"code": "server_error", "message": "Boom"})
    assert records(body(failed_body))[-1] == {
        "type": "transport_error",
        "message": "Boom",
        "code": "server_error",
    }
    refusal = message_item(status="completed", content=[{"type": "refusal", "refusal": "No."}])
    assert records(body(whole("completed", refusal)))[-1] == {
        "type": "transport_error",
        "message": "No.",
        "code": "refusal",
    }


def test_a_response_object_without_usage_takes_the_fallback_or_is_refused() -> None:
    text = body(whole("completed", text_item("Hi"), usage=None))
    assert records(text, usage=(3, 4))[-1] == end_record(tokens=(3, 4))
    error = refused(text)
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_MISSING_USAGE,
        0,
        1,
        1,
    )


def test_an_error_body_with_the_format_named() -> None:
    text = body(
        {"error": {"message": "Slow down", "type": "requests", "code": "rate_limit_exceeded"}}
    )
    assert records(text, format=FORMAT) == [
        {"type": "transport_error", "message": "Slow down", "code": "rate_limit_exceeded"}
    ]
    assert refused(text).code is Code.RECORDING_UNKNOWN_FORMAT


@pytest.mark.parametrize(
    ("value", "code", "needle"),
    [
        (whole("queued"), Code.RECORDING_UNSUPPORTED, '"status": |"queued"'),
        (whole("cancelled"), Code.RECORDING_UNSUPPORTED, '"status": |"cancelled"'),
        ({**whole(), "status": None}, Code.RECORDING_MALFORMED_EVENT, '"status": |null'),
        ({**whole(), "id": ""}, Code.RECORDING_MALFORMED_EVENT, '"id": |""'),
        ({**whole(), "output": {}}, Code.RECORDING_MALFORMED_EVENT, '"output": |{}'),
        (whole("completed", {"type": 7}), Code.RECORDING_MALFORMED_EVENT, '"type": |7'),
        (
            whole("completed", message_item(content=None)),
            Code.RECORDING_MALFORMED_EVENT,
            '"content": |null',
        ),
        (
            whole("completed", text_item("Hi") | {"content": [{"type": "output_text"}]}),
            Code.RECORDING_MALFORMED_EVENT,
            '|{\n          "type": "output_text"',
        ),
        (
            whole("completed", whole_call(call_id="")),
            Code.RECORDING_MALFORMED_EVENT,
            '"call_id": |""',
        ),
        (
            whole("completed", whole_call(arguments="[1]")),
            Code.RECORDING_MALFORMED_EVENT,
            '"arguments": |"[1]"',
        ),
        (
            whole("completed", whole_call(status="in_progress")),
            Code.RECORDING_MALFORMED_EVENT,
            '"status": |"in_progress"',
        ),
        (whole("incomplete"), Code.RECORDING_MALFORMED_EVENT, '"incomplete_details": |null'),
        (whole("failed", error=None), Code.RECORDING_MALFORMED_EVENT, '"error": |null'),
        (
            whole(
                "completed",
                {
                    "id": "ctc_1",
                    "type": "custom_tool_call",
                    "call_id": "c",
                    "name": "f",
                    "input": "x",
                },
            ),
            Code.RECORDING_UNSUPPORTED,
            '"type": |"custom_tool_call"',
        ),
        (
            whole("completed", {"id": "cu_1", "type": "computer_call", "call_id": "c"}),
            Code.RECORDING_UNSUPPORTED,
            '"type": |"computer_call"',
        ),
        (whole("queued", {"type": 7}), Code.RECORDING_MALFORMED_EVENT, '"type": |7'),
    ],
    ids=[
        "queued",
        "cancelled",
        "null-status",
        "empty-id",
        "output-not-a-list",
        "item-type-not-a-string",
        "message-content-null",
        "text-part-without-text",
        "empty-call-id",
        "arguments-not-an-object",
        "completed-with-a-call-in-progress",
        "incomplete-without-details",
        "failed-without-error",
        "custom-tool-call",
        "computer-call",
        "malformed-beats-unsupported",
    ],
)
def test_a_response_object_is_refused_where_its_fault_lies(
    value: Event, code: RecordingErrorCode, needle: str
) -> None:
    text = body(value)
    error = refused(text)
    assert (error.code, error.event_index, (error.line, error.column)) == (
        code,
        0,
        spot_in(text, needle),
    ), str(error)


def test_a_response_object_does_not_fit_the_other_formats() -> None:
    text = body(whole("completed", text_item("Hi")))
    for other in ("anthropic", "openai-chat"):
        error = refused(text, format=other)
        assert (error.code, error.line, error.column) == (Code.RECORDING_UNKNOWN_FORMAT, 1, 1)


def test_the_live_error_event_fails_in_the_sdk_with_the_words_it_gives_here() -> None:
    body = (RESPONSES / "error_event_live.sse").read_bytes()
    with pytest.raises(openai.APIError) as caught:  # the SDK reads the nested `error` too
        sdk_stream(body)
    assert records_of(import_recording(body))[-1] == {
        "type": "transport_error",
        "message": caught.value.message,
        "code": caught.value.code,
    }
