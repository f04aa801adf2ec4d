"""Importing ``anthropic`` recordings: the SPEC's mapping rows and every refusal, located.

Streams are built event by event with ``stream(...)``, written as the API writes them
(``event: TYPE``, compact JSON, a blank line), so event ``i``'s data is on line
``3 * i + 2``. ``where(text, line, fragment)`` gives the line and column of a fragment
that must occur once on that line: the refusal's exact position, spelled readably.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Final, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course import FixtureProviderError, FixtureProviderErrorCode, thaw
from course.vendors import Recording, RecordingError, RecordingErrorCode, import_recording
from course.vendors._recording import ARGUMENTS_MAX_DEPTH

from .vendor_helpers import RECORDINGS, replay

Code = RecordingErrorCode
Event = dict[str, object]

MESSAGE_ID: Final = "msg_01XFDUDYJgAACzvnptvVoYEL"
TOOL_ID: Final = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
ANTHROPIC: Final = RECORDINGS / "anthropic"


# -- building streams ---------------------------------------------------------------------


def message_start(input_tokens: object = 25, message_id: object = MESSAGE_ID) -> Event:
    return {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 1,
                "service_tier": "standard",
            },
        },
    }


def block_start(index: object, block: Event) -> Event:
    return {"type": "content_block_start", "index": index, "content_block": block}


def text_block(index: object, text: object = "") -> Event:
    return block_start(index, {"type": "text", "text": text})


def tool_block(index: object, call_id: object = TOOL_ID, name: object = "get_weather") -> Event:
    return block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}})


def thinking_block(index: object) -> Event:
    return block_start(index, {"type": "thinking", "thinking": "", "signature": ""})


def delta(index: object, body: Event) -> Event:
    return {"type": "content_block_delta", "index": index, "delta": body}


def text_delta(index: object, text: object) -> Event:
    return delta(index, {"type": "text_delta", "text": text})


def json_delta(index: object, fragment: object) -> Event:
    return delta(index, {"type": "input_json_delta", "partial_json": fragment})


def block_stop(index: object) -> Event:
    return {"type": "content_block_stop", "index": index}


def message_delta(
    stop_reason: object = "end_turn", output_tokens: object = 15, **usage: object
) -> Event:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens, **usage},
    }


MESSAGE_STOP: Final[Event] = {"type": "message_stop"}
PING: Final[Event] = {"type": "ping"}


def error_event(kind: object = "overloaded_error", message: object = "Overloaded") -> Event:
    return {"type": "error", "error": {"type": kind, "message": message}}


def sse(event: Event, name: str | None = None) -> str:
    """One event as the API writes it; ``name`` overrides the ``event:`` line."""
    if name is None:
        kind = event.get("type")
        name = kind if isinstance(kind, str) else "message"
    return f"event: {name}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n"


def stream(*events: Event) -> str:
    return "".join(sse(event) for event in events)


def text_stream(*deltas: str) -> list[Event]:
    """A whole text answer: one text block holding ``deltas``."""
    return [
        message_start(),
        text_block(0),
        *(text_delta(0, text) for text in deltas),
        block_stop(0),
        message_delta(),
        MESSAGE_STOP,
    ]


def tool_stream(*fragments: str) -> list[Event]:
    """A whole tool call: one tool_use block whose input is ``fragments`` joined."""
    return [
        message_start(),
        tool_block(0),
        *(json_delta(0, fragment) for fragment in fragments),
        block_stop(0),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]


def records_of(recording: Recording) -> list[dict[str, object]]:
    """The imported response's records, as plain JSON."""
    return cast("list[dict[str, object]]", thaw(recording.response)["records"])


def records(text: str, *, usage: tuple[int, int] | None = None) -> list[dict[str, object]]:
    return records_of(import_recording(text, format="anthropic", usage=usage))


def refused(text: str, *, format: str = "anthropic") -> RecordingError:
    with pytest.raises(RecordingError) as info:
        import_recording(text, format=format)
    return info.value


def where(text: str, line: int, fragment: str) -> tuple[int, int]:
    """The 1-based line and column of ``fragment``, which occurs once on ``line``."""
    row = re.split(r"\r\n|\r|\n", text)[line - 1]
    assert row.count(fragment) == 1, (fragment, row)
    return line, row.index(fragment) + 1


ROOT: Final = "data: {"
"""The fragment that names the event's own object (a key missing from the event)."""


def assert_refused(
    text: str, code: Code, event_index: int, fragment: str | None = None
) -> RecordingError:
    """Refused with ``code`` at event ``event_index``: at ``fragment`` on its data line,
    or at the data line's column 1 when no fragment is given (the event as a whole)."""
    error = refused(text)
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
    return error


def start_record(message_id: str = MESSAGE_ID) -> dict[str, object]:
    return {"type": "response_start", "responseId": message_id, "role": "assistant"}


def end_record(stop_reason: str, usage: tuple[int, int] = (25, 15)) -> dict[str, object]:
    return {
        "type": "response_end",
        "responseId": MESSAGE_ID,
        "stopReason": stop_reason,
        "usage": {"inputTokens": usage[0], "outputTokens": usage[1]},
    }


def text_record(text: str) -> dict[str, object]:
    return {"type": "text_delta", "text": text}


def tool_record(arguments: dict[str, object], call_id: str = TOOL_ID) -> dict[str, object]:
    return {"type": "tool_call", "id": call_id, "name": "get_weather", "arguments": arguments}


# -- the format is settled first ----------------------------------------------------------


def test_auto_detects_a_stream_that_opens_with_message_start() -> None:
    recording = import_recording(stream(*text_stream("Hi")))
    assert recording.format == "anthropic"


def test_auto_refuses_a_stream_that_opens_with_an_error() -> None:
    error = refused(stream(error_event(), *text_stream("Hi")), format="auto")
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        0,
        2,
        1,
    )


def test_auto_reads_past_leading_pings_to_the_message_start() -> None:
    recording = import_recording(stream(PING, PING, *text_stream("Hi")))
    assert recording.format == "anthropic"
    assert recording.ignored == {"ping": 2}
    assert [record["type"] for record in records_of(recording)][:2] == [
        "response_start",
        "text_delta",
    ]


def test_the_repository_s_own_recording_that_opens_with_a_ping_is_detected() -> None:
    # tests/recordings/anthropic/stop_sequence.sse: a comment, a ping, then the start.
    data = (RECORDINGS / "anthropic" / "stop_sequence.sse").read_bytes()
    assert import_recording(data) == import_recording(data, format="anthropic")


@pytest.mark.parametrize(
    ("events", "index", "line"),
    [([PING], 0, 2), ([PING, PING], 0, 2), ([PING, error_event()], 1, 5)],
    ids=["only-a-ping", "only-pings", "ping-then-error"],
)
def test_auto_refuses_pings_that_no_start_follows(
    events: list[Event], index: int, line: int
) -> None:
    error = refused(stream(*events), format="auto")
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        index,
        line,
        1,
    )


def test_auto_refuses_a_ping_before_another_format_s_start() -> None:
    chat = 'data: {"id": "c1", "object": "chat.completion.chunk", "choices": []}\n\n'
    error = refused(stream(PING) + chat, format="auto")
    # The ping is anthropic's, the chunk openai-chat's: no format allows both.
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        1,
        4,
        1,
    )


@pytest.mark.parametrize(
    "first",
    [PING, error_event(), message_start()],
    ids=["ping", "error", "message_start"],
)
def test_named_format_accepts_its_three_opening_events(first: Event) -> None:
    import_recording(stream(first), format="anthropic")


@pytest.mark.parametrize(
    "first",
    [
        "event: content_block_start\ndata: " + json.dumps(text_block(0)) + "\n\n",
        "data: [DONE]\n\n",
        "data: {not json\n\n",
        'data: {"object": "chat.completion.chunk", "id": "x", "choices": []}\n\n',
        'data: {"type": "response.created", "response": {"id": "resp_1"}}\n\n',
    ],
    ids=["block-start", "done", "bad-json", "openai-chat", "openai-responses"],
)
def test_named_format_refuses_a_first_event_that_does_not_fit(first: str) -> None:
    error = refused(first + stream(*text_stream("Hi")[1:]))
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        0,
        first.count("\n") - 1,
        1,
    )


# -- what a recording becomes -------------------------------------------------------------


def test_text_deltas_keep_their_boundaries_and_empty_ones_make_no_record() -> None:
    events = text_stream("Hel", "", "lo, ", "wörld 👋")
    assert records(stream(*events)) == [
        start_record(),
        text_record("Hel"),
        text_record("lo, "),
        text_record("wörld 👋"),
        end_record("stop"),
    ]


def test_a_non_empty_starting_text_is_a_text_delta() -> None:
    events = text_stream(" and more")
    events[1] = text_block(0, "Already")
    assert records(stream(*events))[1:3] == [text_record("Already"), text_record(" and more")]


def test_citations_deltas_in_a_text_block_are_ignored_and_counted() -> None:
    citation = {
        "type": "web_search_result_location",
        "cited_text": "Paris is the capital of France.",
        "url": "https://en.wikipedia.org/wiki/Paris",
        "title": "Paris - Wikipedia",
        "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm",
    }
    events = text_stream("Paris.")
    events.insert(3, delta(0, {"type": "citations_delta", "citation": citation}))
    recording = import_recording(stream(*events))
    assert records_of(recording)[1:3] == [text_record("Paris."), end_record("stop")]
    assert recording.ignored["content_block_delta:citations_delta"] == 1


def test_tool_input_fragments_are_joined_and_parsed_at_the_block_stop() -> None:
    events = tool_stream("", '{"location":', ' "Paris"', ', "unit": "celsius"}')
    assert records(stream(*events)) == [
        start_record(),
        tool_record({"location": "Paris", "unit": "celsius"}),
        end_record("tool_call"),
    ]


def test_a_tool_call_is_emitted_at_its_stop_not_before() -> None:
    events = tool_stream('{"city": "Paris"}')
    cut = stream(*events[:3])  # start, block start, the whole input: no stop yet
    assert records(cut) == [start_record()]
    assert import_recording(cut).truncated


def test_tool_input_without_fragments_is_an_empty_object_and_the_start_input_is_not_read() -> None:
    events = tool_stream()
    events[1] = block_start(
        0, {"type": "tool_use", "id": TOOL_ID, "name": "get_weather", "input": {"city": "x"}}
    )
    assert records(stream(*events))[1] == tool_record({})


def test_tool_calls_come_in_block_order_with_their_ids_verbatim() -> None:
    events = [
        message_start(),
        text_block(0),
        text_delta(0, "Checking both."),
        block_stop(0),
        tool_block(1, "toolu_01A"),
        tool_block(2, "toolu_01B"),
        json_delta(2, '{"b": 2}'),
        json_delta(1, '{"a": 1}'),
        block_stop(2),
        block_stop(1),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    assert records(stream(*events)) == [
        start_record(),
        text_record("Checking both."),
        tool_record({"b": 2}, "toolu_01B"),
        tool_record({"a": 1}, "toolu_01A"),
        end_record("tool_call"),
    ]


def test_two_tool_calls_with_one_id_are_imported_as_they_are() -> None:
    events = [
        message_start(),
        tool_block(0),
        block_stop(0),
        tool_block(1),
        block_stop(1),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    recording = import_recording(stream(*events))
    with pytest.raises(FixtureProviderError) as info:
        replay(recording)
    assert info.value.code is FixtureProviderErrorCode.PROVIDER_DUPLICATE_TOOL_CALL


@pytest.mark.parametrize(
    "block",
    [
        {"type": "thinking", "thinking": "", "signature": ""},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5"},
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": []},
        {"type": "a_block_kind_from_next_month"},
    ],
    ids=lambda block: block["type"],
)
def test_other_block_kinds_are_ignored_with_their_deltas_and_stop(block: Event) -> None:
    events = [
        message_start(),
        block_start(0, block),
        delta(0, {"type": "thinking_delta", "thinking": "Let me think."}),
        delta(0, {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}),
        json_delta(0, '{"query": "wea'),
        text_delta(0, "not text of the answer"),
        block_stop(0),
        text_block(1),
        text_delta(1, "Done."),
        block_stop(1),
        message_delta(),
        MESSAGE_STOP,
    ]
    recording = import_recording(stream(*events))
    assert records_of(recording) == [
        start_record(),
        text_record("Done."),
        end_record("stop"),
    ]
    kind = block["type"]
    assert recording.ignored[f"content_block_start:{kind}"] == 1
    assert recording.ignored[f"content_block_stop:{kind}"] == 1
    assert (
        sum(n for key, n in recording.ignored.items() if key.startswith("content_block_delta")) == 4
    )


def test_pings_may_come_before_the_start_anywhere_inside_and_after_the_terminal() -> None:
    events = text_stream("Hi")
    events = [PING, events[0], PING, *events[1:], PING, PING]
    recording = import_recording(stream(*events), format="anthropic")
    assert records_of(recording) == [
        start_record(),
        text_record("Hi"),
        end_record("stop"),
    ]
    assert recording.ignored == {"ping": 4}
    assert not recording.truncated


def test_comments_blank_lines_and_unknown_fields_are_skipped() -> None:
    text = ": keep-alive\n\n\n" + stream(*text_stream("Hi")).replace(
        "event: message_stop\n", "id: 7\nretry: 3000\nevent: message_stop\n: comment\n"
    )
    assert records(text)[-1] == end_record("stop")


@pytest.mark.parametrize("reason", ["end_turn", "stop_sequence"])
def test_a_normal_stop_is_stop(reason: str) -> None:
    events = text_stream("Hi")
    events[-2] = message_delta(reason)
    assert records(stream(*events))[-1] == end_record("stop")


def test_usage_is_the_starts_input_and_the_last_output_count() -> None:
    events = text_stream("Hi")
    events[0] = message_start(input_tokens=472)
    events[-2:-1] = [message_delta(None, 3), message_delta("end_turn", 89)]
    assert records(stream(*events))[-1] == end_record("stop", (472, 89))


def test_a_message_delta_input_count_replaces_the_starts() -> None:
    events = text_stream("Hi")
    events[0] = message_start(input_tokens=0)
    events[-2] = message_delta("end_turn", 9, input_tokens=57, cache_read_input_tokens=3)
    assert records(stream(*events))[-1] == end_record("stop", (57, 9))


def test_a_null_input_count_in_message_delta_counts_as_absent() -> None:
    events = text_stream("Hi")
    events[-2] = message_delta("end_turn", 9, input_tokens=None)
    assert records(stream(*events))[-1] == end_record("stop", (25, 9))


def test_the_last_non_null_stop_reason_wins() -> None:
    events = text_stream("Hi")
    events[-2:-1] = [message_delta("max_tokens"), message_delta("end_turn"), message_delta(None)]
    assert records(stream(*events))[-1] == end_record("stop")


def test_recorded_usage_wins_over_the_usage_argument() -> None:
    assert records(stream(*text_stream("Hi")), usage=(1, 2))[-1] == end_record("stop")


@pytest.mark.parametrize(
    "reason", ["max_tokens", "refusal", "pause_turn", "model_context_window_exceeded", "new"]
)
def test_any_other_stop_reason_is_a_transport_error_with_that_code(reason: str) -> None:
    events = text_stream("Partial")
    events[-2] = message_delta(reason)
    assert records(stream(*events)) == [
        start_record(),
        text_record("Partial"),
        {
            "type": "transport_error",
            "message": f"The provider stopped the response: {reason}",
            "code": reason,
        },
    ]


def test_a_stop_on_max_tokens_drops_an_open_tool_call() -> None:
    events = [
        message_start(),
        tool_block(0),
        json_delta(0, '{"filename": "taxes.txt", "lines": ["# A GUI'),
        message_delta("max_tokens"),
        MESSAGE_STOP,
    ]
    recording = import_recording(stream(*events))
    assert [record["type"] for record in records_of(recording)] == [
        "response_start",
        "transport_error",
    ]
    assert not recording.truncated
    with pytest.raises(FixtureProviderError) as info:
        replay(recording)
    assert info.value.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
    assert info.value.transport_code == "max_tokens"


def test_an_error_event_is_a_transport_error_and_ends_the_import() -> None:
    events = [*text_stream("Once upon")[:3], error_event("overloaded_error", "Overloaded")]
    text = stream(*events) + "data: {not even json\n\nevent: message_stop\ndata: 1\n\n"
    recording = import_recording(text)
    assert records_of(recording) == [
        start_record(),
        text_record("Once upon"),
        {"type": "transport_error", "message": "Overloaded", "code": "overloaded_error"},
    ]
    assert not recording.truncated


def test_an_error_event_before_the_start_is_the_whole_response() -> None:
    text = stream(PING, error_event("api_error", "Internal server error"))
    recording = import_recording(text, format="anthropic")
    assert records_of(recording) == [
        {"type": "transport_error", "message": "Internal server error", "code": "api_error"}
    ]
    with pytest.raises(FixtureProviderError) as info:
        replay(recording)
    assert info.value.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
    assert info.value.transport_message == "Internal server error"


def test_an_error_event_keeps_its_own_extra_keys_out_of_the_record() -> None:
    event = error_event("rate_limit_error", "Slow down")
    event["error"]["details"] = {"error_code": "x"}  # type: ignore[index]
    event["request_id"] = "req_011CSHoEeqs5C35K2UUqR7Fy"
    assert records(stream(message_start(), event))[-1] == {
        "type": "transport_error",
        "message": "Slow down",
        "code": "rate_limit_error",
    }


@pytest.mark.parametrize("cut", range(1, 10))
def test_a_cut_stream_is_truncated_and_keeps_what_came(cut: int) -> None:
    events = [
        message_start(),
        text_block(0),
        text_delta(0, "Let me"),
        text_delta(0, " check"),
        block_stop(0),
        tool_block(1),
        json_delta(1, '{"term": "x"}'),
        block_stop(1),
        message_delta("tool_use"),
        MESSAGE_STOP,
    ]
    recording = import_recording(stream(*events[:cut]))
    assert recording.truncated
    emitted = [
        start_record(),
        text_record("Let me"),
        text_record(" check"),
        tool_record({"term": "x"}),
    ]
    made = {1: 1, 2: 1, 3: 2, 4: 3, 5: 3, 6: 3, 7: 3, 8: 4, 9: 4}[cut]
    assert records_of(recording) == emitted[:made]
    with pytest.raises(FixtureProviderError) as info:
        replay(recording)
    assert info.value.code is FixtureProviderErrorCode.PROVIDER_MISSING_TERMINAL


def test_a_final_event_without_its_blank_line_still_counts() -> None:
    text = stream(*text_stream("Hi")).rstrip("\n")
    recording = import_recording(text)
    assert not recording.truncated


def test_a_successful_recording_replays_to_its_response() -> None:
    response = replay(import_recording(stream(*tool_stream('{"city": "Paris"}'))))
    assert response.response_id == MESSAGE_ID
    assert response.stop_reason == "toolCall"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (25, 15)


# -- line endings, multi-line data, padding -----------------------------------------------


def _all_events() -> list[Event]:
    return [
        message_start(),
        text_block(0, "A"),
        text_delta(0, "line\nbreak"),
        block_stop(0),
        tool_block(1),
        json_delta(1, '{"a": [1, 2.5, "\\u00e9"]}'),
        block_stop(1),
        message_delta("tool_use", 7, input_tokens=30),
        MESSAGE_STOP,
    ]


EXPECTED_ALL: Final = [
    start_record(),
    text_record("A"),
    text_record("line\nbreak"),
    tool_record({"a": [1, 2.5, "é"]}),
    end_record("tool_call", (30, 7)),
]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_every_line_ending_gives_the_same_records(newline: str) -> None:
    text = stream(*_all_events()).replace("\n", newline)
    assert records(text) == EXPECTED_ALL


def test_multi_line_data_and_padding_whitespace_give_the_same_records() -> None:
    parts = []
    for event in _all_events():
        pretty = json.dumps(event, indent=2)  # data split over many lines, padded
        parts.append(
            f"event: {event['type']}\n"
            + "".join(f"data:{line}\n" for line in pretty.split("\n"))
            + "\n"
        )
    assert records("".join(parts)) == EXPECTED_ALL


def test_a_refusal_inside_multi_line_data_points_at_its_own_line() -> None:
    event = message_start(input_tokens=-1)
    pretty = json.dumps(event, indent=1).split("\n")
    text = "event: message_start\n" + "".join(f"data: {line}\n" for line in pretty) + "\n"
    error = refused(text)
    line = next(i for i, row in enumerate(pretty) if '"input_tokens"' in row) + 2
    assert (error.code, error.event_index) == (Code.RECORDING_MALFORMED_EVENT, 0)
    assert (error.line, error.column) == where(text, line, "-1")


def test_a_bom_and_bytes_are_read_as_utf8() -> None:
    data = "\ufeff".encode() + stream(*text_stream("café")).encode()
    assert records_of(import_recording(data))[1] == text_record("café")


# -- class 1 and 2: JSON and vocabulary ---------------------------------------------------


def test_not_utf8_is_unreadable_without_a_position() -> None:
    with pytest.raises(RecordingError) as info:
        import_recording(b'event: ping\ndata: {"type": "ping\xff"}\n\n')
    error = info.value
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNREADABLE,
        None,
        None,
        None,
    )


def test_no_event_with_data_is_unreadable() -> None:
    error = refused(": just a comment\nevent: ping\n\n")
    assert (error.code, error.line) == (Code.RECORDING_UNREADABLE, None)


def test_invalid_json_in_a_later_event_points_at_the_fault() -> None:
    text = stream(message_start()) + 'event: ping\ndata: {"type": "ping",}\n\n'
    error = refused(text)
    assert (error.code, error.event_index) == (Code.RECORDING_INVALID_JSON, 1)
    assert (error.line, error.column) == where(text, 5, ",}")


@pytest.mark.parametrize("data", ["[DONE]", "[]", '"ping"', "null", '{"a": 1, "a": 2}', "NaN"])
def test_data_that_is_not_a_json_object_is_invalid_json(data: str) -> None:
    text = stream(message_start()) + f"data: {data}\n\n"
    error = refused(text)
    assert (error.code, error.event_index, error.line) == (Code.RECORDING_INVALID_JSON, 1, 4)


def test_done_is_invalid_json_even_after_the_terminal() -> None:
    text = stream(*text_stream("Hi")) + "data: [DONE]\n\n"
    error = refused(text)
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_INVALID_JSON,
        6,
        19,
        8,  # where a JSON reader stops: at `DONE`
    )


def test_an_unknown_event_type_points_at_its_type() -> None:
    events = text_stream("Hi")
    events.insert(2, {"type": "content_block_pause", "index": 0})
    assert_refused(stream(*events), Code.RECORDING_UNKNOWN_EVENT, 2, '"content_block_pause"')


def test_an_unknown_type_wins_over_a_mismatched_event_name() -> None:
    text = stream(message_start()) + sse({"type": "response.created"}, name="ping")
    assert_refused(text, Code.RECORDING_UNKNOWN_EVENT, 1, '"response.created"')


# -- class 3: the event alone -------------------------------------------------------------


MALFORMED_ALONE: Final[list[tuple[str, Event, str | None]]] = [
    # (case, the event at index 1 after a good message_start, the fragment pointed at)
    ("no type", {"index": 0}, ROOT),
    ("type not a string", {"type": 7}, "7"),
    ("type null", {"type": None, "index": 0}, "null"),
    (
        "block index missing",
        {"type": "content_block_start", "content_block": {"type": "text", "text": ""}},
        ROOT,
    ),
    ("block index a boolean", text_block(True), "true"),
    ("block index a string", text_block("0"), '"0"'),
    ("block index a float", text_block(0.0), "0.0"),
    ("content_block missing", {"type": "content_block_start", "index": 0}, ROOT),
    (
        "content_block an array",
        {"type": "content_block_start", "index": 0, "content_block": []},
        "[]",
    ),
    ("block type missing", block_start(0, {"text": ""}), '{"text"'),
    ("text block without text", block_start(0, {"type": "text"}), '{"type":"text"}'),
    ("text block text null", text_block(0, None), "null"),
    ("tool_use id empty", tool_block(0, ""), '""'),
    (
        "tool_use id missing",
        block_start(0, {"type": "tool_use", "name": "f"}),
        '{"type":"tool_use"',
    ),
    ("tool_use name not a string", tool_block(0, TOOL_ID, ["f"]), '["f"]'),
    ("tool_use name empty", tool_block(0, TOOL_ID, ""), '""'),
    ("delta missing", {"type": "content_block_delta", "index": 0}, ROOT),
    ("delta type missing", delta(0, {"text": "x"}), '{"text"'),
    ("text_delta text missing", delta(0, {"type": "text_delta"}), '{"type":"text_delta"}'),
    ("text_delta text a number", text_delta(0, 1), "1}}"),
    (
        "input_json_delta without partial_json",
        delta(0, {"type": "input_json_delta"}),
        '{"type":"input',
    ),
    ("partial_json an object", json_delta(0, {}), "{}"),
    ("stop index missing", {"type": "content_block_stop"}, ROOT),
    ("stop index null", block_stop(None), "null"),
    ("message_delta without delta", {"type": "message_delta", "usage": {"output_tokens": 1}}, ROOT),
    (
        "message_delta without usage",
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        ROOT,
    ),
    ("stop_reason a number", message_delta(1), '1,"stop_sequence"'),
    ("output_tokens missing", {"type": "message_delta", "delta": {}, "usage": {}}, "{}}"),
    ("output_tokens null", message_delta("end_turn", None), "null}}"),
    ("output_tokens negative", message_delta("end_turn", -1), "-1"),
    ("output_tokens too large", message_delta("end_turn", 2**53), str(2**53)),
    ("output_tokens a float", message_delta("end_turn", 1.0), "1.0"),
    ("input_tokens a boolean", message_delta("end_turn", 1, input_tokens=False), "false"),
    ("error without error", {"type": "error"}, ROOT),
    ("error type missing", {"type": "error", "error": {"message": "x"}}, '{"message"'),
    ("error message not a string", error_event("api_error", None), "null"),
]


@pytest.mark.parametrize(
    ("event", "fragment"),
    [case[1:] for case in MALFORMED_ALONE],
    ids=[case[0] for case in MALFORMED_ALONE],
)
def test_a_malformed_event_is_refused_at_the_offending_value(event: Event, fragment: str) -> None:
    # A missing key points at the object that lacks it (ROOT: the event itself).
    assert_refused(stream(message_start(), event), Code.RECORDING_MALFORMED_EVENT, 1, fragment)


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        ({"type": "message"}, '{"type":"message"}'),
        ({"id": "", "usage": {"input_tokens": 1}}, '""'),
        ({"id": 1, "usage": {"input_tokens": 1}}, "1,"),
        ({"id": MESSAGE_ID}, '{"id"'),
        ({"id": MESSAGE_ID, "usage": None}, "null"),
        ({"id": MESSAGE_ID, "usage": {"output_tokens": 1}}, '{"output'),
        ({"id": MESSAGE_ID, "usage": {"input_tokens": True}}, "true"),
        ({"id": MESSAGE_ID, "usage": {"input_tokens": 2**53}}, str(2**53)),
    ],
    ids=[
        "no id",
        "empty id",
        "id a number",
        "no usage",
        "usage null",
        "no input count",
        "input count a boolean",
        "input count too large",
    ],
)
def test_a_malformed_message_start_is_refused_at_the_offending_value(
    message: Event, fragment: str
) -> None:
    text = stream({"type": "message_start", "message": message})
    assert_refused(text, Code.RECORDING_MALFORMED_EVENT, 0, fragment)


def test_message_start_without_message_points_at_the_event() -> None:
    assert_refused(stream({"type": "message_start"}, PING), Code.RECORDING_MALFORMED_EVENT, 0, ROOT)


def test_an_event_name_that_differs_from_the_type_is_malformed_at_the_type() -> None:
    text = stream(message_start()) + sse(text_block(0), name="content_block_delta")
    assert_refused(text, Code.RECORDING_MALFORMED_EVENT, 1, '"content_block_start"')


def test_an_event_without_an_event_line_is_judged_by_its_type() -> None:
    text = "".join(f"data: {json.dumps(event)}\n\n" for event in text_stream("Hi"))
    assert records(text)[-1] == end_record("stop")


def test_the_event_alone_is_judged_before_its_place() -> None:
    # Before the start, after the stop reason, after the terminal: the bad index wins.
    assert_refused(stream(PING, text_block("0")), Code.RECORDING_MALFORMED_EVENT, 1, '"0"')
    events = [*text_stream("Hi")[:-1], text_delta(True, "x")]
    assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, 5, "true")
    events = [*text_stream("Hi"), error_event("api_error", 5)]
    assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, 6, "5}")


def test_a_delta_payload_is_checked_by_its_own_type_whatever_the_block() -> None:
    # A text_delta needs a string text even in a block whose kind is ignored.
    events = [message_start(), thinking_block(0), text_delta(0, None)]
    assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, 2, "null")


# -- class 4: its place -------------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [text_block(0), text_delta(0, "x"), block_stop(0), message_delta(), MESSAGE_STOP],
    ids=["block-start", "delta", "block-stop", "message-delta", "message-stop"],
)
def test_an_event_before_message_start_is_out_of_order(event: Event) -> None:
    assert_refused(stream(PING, event, message_start()), Code.RECORDING_OUT_OF_ORDER, 1)


@pytest.mark.parametrize(
    "event",
    [
        message_start(),
        text_block(1),
        text_delta(0, "x"),
        block_stop(0),
        message_delta(),
        MESSAGE_STOP,
        error_event(),
    ],
    ids=["start", "block-start", "delta", "block-stop", "message-delta", "message-stop", "error"],
)
def test_anything_but_ping_after_message_stop_is_out_of_order(event: Event) -> None:
    assert_refused(stream(*text_stream("Hi"), PING, event), Code.RECORDING_OUT_OF_ORDER, 7)


def test_a_second_message_start_is_out_of_order() -> None:
    events = [*text_stream("Hi")[:3], message_start()]
    assert_refused(stream(*events), Code.RECORDING_OUT_OF_ORDER, 3)


def test_a_block_started_twice_is_out_of_order_even_after_its_stop() -> None:
    assert_refused(
        stream(message_start(), text_block(0), text_block(0)), Code.RECORDING_OUT_OF_ORDER, 2
    )
    assert_refused(
        stream(message_start(), text_block(0), block_stop(0), tool_block(0)),
        Code.RECORDING_OUT_OF_ORDER,
        3,
    )


@pytest.mark.parametrize("event", [text_delta(1, "x"), block_stop(1)], ids=["delta", "stop"])
def test_a_delta_or_stop_for_a_block_never_started_is_out_of_order(event: Event) -> None:
    assert_refused(stream(message_start(), text_block(0), event), Code.RECORDING_OUT_OF_ORDER, 2)


@pytest.mark.parametrize("event", [text_delta(0, "x"), block_stop(0)], ids=["delta", "stop"])
def test_a_delta_or_stop_for_a_stopped_block_is_out_of_order(event: Event) -> None:
    events = [message_start(), text_block(0), block_stop(0), event]
    assert_refused(stream(*events), Code.RECORDING_OUT_OF_ORDER, 3)


@pytest.mark.parametrize(
    "event",
    [text_block(1), text_delta(0, "x"), block_stop(0)],
    ids=["block-start", "delta", "block-stop"],
)
def test_a_block_event_after_the_stop_reason_is_out_of_order(event: Event) -> None:
    events = [message_start(), text_block(0), message_delta("end_turn"), event]
    error = assert_refused(stream(*events), Code.RECORDING_OUT_OF_ORDER, 3)
    assert "end_turn" in error.message


def test_a_block_event_after_a_message_delta_without_stop_reason_is_fine() -> None:
    events = [message_start(), message_delta(None, 1), *text_stream("Hi")[1:]]
    assert records(stream(*events))[-1] == end_record("stop")


def test_the_place_is_judged_before_earlier_events() -> None:
    # A delta of the wrong kind for a block never started: the place wins.
    events = [message_start(), tool_block(0), text_delta(1, "x")]
    assert_refused(stream(*events), Code.RECORDING_OUT_OF_ORDER, 2)


# -- class 5: against earlier events ------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "body"),
    [
        (text_block(0), {"type": "input_json_delta", "partial_json": "{}"}),
        (text_block(0), {"type": "thinking_delta", "thinking": "hm"}),
        (tool_block(0), {"type": "text_delta", "text": "x"}),
        (tool_block(0), {"type": "citations_delta", "citation": {}}),
    ],
    ids=["json-in-text", "thinking-in-text", "text-in-tool", "citation-in-tool"],
)
def test_a_delta_of_the_wrong_kind_for_its_block_is_malformed(block: Event, body: Event) -> None:
    events = [message_start(), block, delta(0, body)]
    kind = json.dumps(body["type"])
    assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, 2, kind)


@pytest.mark.parametrize(
    "fragments",
    [
        ("{",),
        ('{"a": 1', "}}"),
        ("[1, 2]",),
        ('"text"',),
        ("null",),
        ('{"a": NaN}',),
        ('{"a": 1, "a": 2}',),
    ],
    ids=["unfinished", "trailing", "array", "string", "null", "nan", "duplicate-key"],
)
def test_tool_input_that_is_not_a_json_object_is_malformed_at_the_block_stop(
    fragments: tuple[str, ...],
) -> None:
    assert_refused(
        stream(*tool_stream(*fragments)), Code.RECORDING_MALFORMED_EVENT, 2 + len(fragments)
    )


def test_tool_input_nested_deeper_than_the_adapter_accepts_is_malformed() -> None:
    deep = "[" * ARGUMENTS_MAX_DEPTH + "]" * ARGUMENTS_MAX_DEPTH
    assert_refused(stream(*tool_stream('{"a": ', deep, "}")), Code.RECORDING_MALFORMED_EVENT, 5)
    fits = "[" * (ARGUMENTS_MAX_DEPTH - 1) + "]" * (ARGUMENTS_MAX_DEPTH - 1)
    assert records(stream(*tool_stream('{"a": ', fits, "}")))[-1] == end_record("tool_call")


def test_message_stop_without_a_stop_reason_is_malformed() -> None:
    events = [message_start(), text_block(0), block_stop(0), message_delta(None), MESSAGE_STOP]
    assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, 4)
    assert_refused(stream(message_start(), MESSAGE_STOP), Code.RECORDING_MALFORMED_EVENT, 1)


@pytest.mark.parametrize("reason", ["tool_use", "end_turn"])
def test_a_successful_stop_with_a_tool_use_block_still_open_is_malformed(reason: str) -> None:
    events = [
        message_start(),
        tool_block(0, "toolu_01A"),
        block_stop(0),
        tool_block(1, "toolu_01B"),
        json_delta(1, '{"a": 1}'),
        message_delta(reason),
        MESSAGE_STOP,
    ]
    if reason == "end_turn":  # no completed call then: only the open one
        del events[1:3]
    assert_refused(stream(*events), Code.RECORDING_MALFORMED_EVENT, len(events) - 1)


def test_a_text_block_left_open_at_a_successful_stop_is_fine() -> None:
    events = [message_start(), text_block(0), text_delta(0, "Hi"), message_delta(), MESSAGE_STOP]
    assert records(stream(*events))[-1] == end_record("stop")


def test_tool_use_without_a_completed_tool_call_is_a_stop_reason_mismatch() -> None:
    events = [*text_stream("Hi")[:-2], message_delta("tool_use"), MESSAGE_STOP]
    assert_refused(stream(*events), Code.RECORDING_STOP_REASON_MISMATCH, 4, '"tool_use"')
    # An open tool_use block is not a completed one.
    events = [message_start(), tool_block(0), message_delta("tool_use")]
    assert_refused(stream(*events), Code.RECORDING_STOP_REASON_MISMATCH, 2, '"tool_use"')


@pytest.mark.parametrize("reason", ["end_turn", "stop_sequence"])
def test_a_normal_stop_after_a_completed_tool_call_is_a_stop_reason_mismatch(reason: str) -> None:
    events = tool_stream("{}")
    events[-2] = message_delta(reason)
    fragment = f'"{reason}","stop_sequence"'  # the value, not the key of the same name
    assert_refused(stream(*events), Code.RECORDING_STOP_REASON_MISMATCH, 4, fragment)


def test_the_mismatch_is_reported_at_the_message_delta_that_brings_it() -> None:
    events = tool_stream("{}")
    events[-2:-1] = [message_delta(None), message_delta("tool_use"), message_delta("end_turn")]
    assert_refused(stream(*events), Code.RECORDING_STOP_REASON_MISMATCH, 6, '"end_turn"')


def test_other_stop_reasons_never_mismatch() -> None:
    events = tool_stream("{}")
    events[-2] = message_delta("pause_turn")
    assert records(stream(*events))[-1]["code"] == "pause_turn"


# -- the recordings in tests/recordings/anthropic -----------------------------------------


def test_every_recording_imports_as_described() -> None:
    outcomes: dict[str, object] = {}
    for path in sorted(ANTHROPIC.glob("*.sse")):
        recording = import_recording(path.read_bytes(), format="anthropic", source=str(path))
        last = records_of(recording)[-1]
        outcomes[path.stem] = (
            "truncated" if recording.truncated else last.get("stopReason", last.get("code"))
        )
    assert outcomes == {
        "error_before_start": "api_error",
        "max_tokens": "max_tokens",
        "overloaded": "overloaded_error",
        "parallel_tool_use": "tool_call",
        "refusal": "refusal",
        "stop_sequence": "stop",
        "text": "stop",
        "thinking_tool_use": "tool_call",
        "tool_use": "tool_call",
        "truncated": "truncated",
        "web_search_citations": "stop",
    }


def test_a_recording_error_names_its_source_line_and_column() -> None:
    text = stream(message_start(), text_block(0), text_delta(0, 5))
    with pytest.raises(RecordingError) as info:
        import_recording(text, source="cassettes/chat.sse")
    assert str(info.value).startswith("cassettes/chat.sse:8:")
    assert " RECORDING_MALFORMED_EVENT " in str(info.value)


# -- properties ---------------------------------------------------------------------------


SAMPLES: Final = [path.read_text(encoding="utf-8") for path in sorted(ANTHROPIC.glob("*.sse"))]


def _events_of(text: str) -> list[str]:
    return [block for block in text.split("\n\n") if block.strip()]


@st.composite
def mutated_recordings(draw: st.DrawFn) -> str:
    """A real recording with its events dropped, repeated, swapped, cut or retyped."""
    events = _events_of(draw(st.sampled_from(SAMPLES)))
    for _ in range(draw(st.integers(1, 3))):
        if not events:
            break
        at = draw(st.integers(0, len(events) - 1))
        action = draw(st.sampled_from(["drop", "repeat", "swap", "cut", "edit", "rename"]))
        if action == "drop":
            del events[at]
        elif action == "repeat":
            events.insert(at, events[at])
        elif action == "swap":
            other = draw(st.integers(0, len(events) - 1))
            events[at], events[other] = events[other], events[at]
        elif action == "cut":
            events[at] = events[at][: draw(st.integers(0, len(events[at])))]
        elif action == "rename":
            events[at] = re.sub(
                r"^event: \w+",
                "event: " + draw(st.sampled_from(["ping", "error", "message_stop"])),
                events[at],
            )
        else:
            events[at] = _edit(draw, events[at])
    return "\n\n".join(events) + draw(st.sampled_from(["", "\n", "\n\n"]))


_REPLACEMENTS: Final = [
    "null",
    "true",
    "0",
    "-1",
    "1.5",
    '""',
    '"x"',
    "[]",
    "{}",
    '"tool_use"',
    '"end_turn"',
    '"max_tokens"',
    '"text"',
    '"text_delta"',
    '"input_json_delta"',
    '"thinking"',
    "9007199254740992",
]


def _edit(draw: st.DrawFn, event: str) -> str:
    """One JSON value of the event's data replaced, or one key renamed."""
    keys = list(re.finditer(r'"(\w+)":', event))
    rename: bool = draw(st.booleans())
    if keys and rename:
        key = draw(st.sampled_from(keys))
        name = draw(st.sampled_from(["type", "index", "id", "x"]))
        return event[: key.start(1)] + name + event[key.end(1) :]
    values = list(re.finditer(_VALUE, event))
    if not values:
        return event
    value = draw(st.sampled_from(values))
    return event[: value.start()] + draw(st.sampled_from(_REPLACEMENTS)) + event[value.end() :]


_VALUE: Final = r'(?<=:)(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null|\{\}|\[\])'
"""A JSON scalar, ``{}`` or ``[]`` right after a key's colon."""


def _import(data: str | bytes, format: str) -> Recording | RecordingError:
    """The recording, or its error once checked to be coded and located sensibly."""
    try:
        return import_recording(data, format=format)
    except RecordingError as error:
        assert error.code in Code
        if error.line is None:
            assert error.event_index is None and error.column is None
        else:
            assert error.event_index is not None and error.event_index >= 0
            assert error.column is not None and error.column >= 1 and error.line >= 1
        return error


FORMATS: Final = st.sampled_from(["auto", "anthropic"])


@given(mutated_recordings(), FORMATS)
def test_a_mutated_recording_gives_a_recording_or_a_recording_error(text: str, fmt: str) -> None:
    outcome = _import(text, fmt)
    if isinstance(outcome, Recording):
        # What it imported replays to a response or to a provider error, nothing else.
        with contextlib.suppress(FixtureProviderError):
            replay(outcome)


@given(st.binary(max_size=300) | st.text(max_size=300), FORMATS)
def test_any_input_gives_a_recording_or_a_recording_error(data: str | bytes, fmt: str) -> None:
    _import(data, fmt)


@given(
    st.sampled_from(SAMPLES),
    st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=8),
)
def test_mixed_line_endings_give_the_same_fixture(text: str, endings: list[str]) -> None:
    lines = text.split("\n")
    mixed = ""
    for i, line in enumerate(lines[:-1]):
        ending = endings[i % len(endings)]
        if ending == "\n" and not line and mixed.endswith("\r"):
            ending = "\r"  # CR, then LF after nothing, would be one CRLF line break
        mixed += line + ending
    expected = import_recording(text, format="anthropic")
    again = import_recording(mixed + lines[-1], format="anthropic")
    assert thaw(again.response) == thaw(expected.response)
    assert (again.truncated, dict(again.ignored)) == (expected.truncated, dict(expected.ignored))


# -- a refusal of a tool call's arguments names the call ---------------------------------------


def test_a_refusal_of_arguments_names_the_call_by_block_index_id_and_name() -> None:
    error = refused(stream(*tool_stream('{"city": ')))
    assert error.code is Code.RECORDING_MALFORMED_EVENT
    assert f"tool call 0 (id '{TOOL_ID}', name 'get_weather')" in error.message


# -- a non-streamed answer: the message ----------------------------------------------------


def whole(*content: Event, stop_reason: object = "end_turn", **extra: object) -> Event:
    body: Event = {
        "id": MESSAGE_ID,
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": list(content),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 15},
    }
    body.update(extra)
    return body


def text_of(text: str) -> Event:
    return {"type": "text", "text": text, "citations": None}


def tool_use(call_id: str = TOOL_ID, **input_: object) -> Event:
    return {"type": "tool_use", "id": call_id, "name": "get_weather", "input": input_}


def body(value: object) -> str:
    return json.dumps(value, indent=2)


def spot_in(text: str, needle: str) -> tuple[int, int]:
    """The line and column of ``needle``'s ``|`` (the needle occurs once)."""
    before, _, after = needle.partition("|")
    assert text.count(before + after) == 1, needle
    offset = text.index(before + after) + len(before)
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


@pytest.mark.parametrize("format", ["auto", "anthropic"])
def test_a_message_gives_its_blocks_in_order_as_its_stream_would(format: str) -> None:
    thinking: Event = {"type": "thinking", "thinking": "Hmm", "signature": "sig"}
    value = whole(
        thinking,
        text_of("Let me "),
        text_of("check."),
        tool_use(city="Paris"),
        stop_reason="tool_use",
    )
    recording = import_recording(body(value), format=format)
    assert (recording.format, recording.truncated) == ("anthropic", False)
    assert records_of(recording) == [
        start_record(),
        text_record("Let me "),
        text_record("check."),
        tool_record({"city": "Paris"}),
        end_record("tool_call"),
    ]
    assert recording.ignored == {"content:thinking": 1}


def test_a_message_s_stop_sequence_is_a_stop_and_empty_text_no_record() -> None:
    value = whole(text_of(""), text_of("1, 2"), stop_reason="stop_sequence")
    assert records_of(import_recording(body(value))) == [
        start_record(),
        text_record("1, 2"),
        end_record("stop"),
    ]


def test_a_message_cut_short_drops_only_a_last_tool_use() -> None:
    value = whole(
        tool_use("toolu_a", q=1), text_of("and"), tool_use("toolu_b"), stop_reason="max_tokens"
    )
    assert records_of(import_recording(body(value))) == [
        start_record(),
        tool_record({"q": 1}, "toolu_a"),
        text_record("and"),
        {
            "type": "transport_error",
            "message": "The provider stopped the response: max_tokens",
            "code": "max_tokens",
        },
    ]


def test_an_error_body_with_the_format_named() -> None:
    text = body({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert records_of(import_recording(text, format="anthropic")) == [
        {"type": "transport_error", "message": "Overloaded", "code": "overloaded_error"}
    ]
    assert refused(text, format="auto").code is Code.RECORDING_UNKNOWN_FORMAT


@pytest.mark.parametrize(
    ("value", "code", "needle"),
    [
        ({**whole(), "id": ""}, Code.RECORDING_MALFORMED_EVENT, '"id": |""'),
        ({**whole(), "content": {}}, Code.RECORDING_MALFORMED_EVENT, '"content": |{}'),
        (whole(stop_reason=None), Code.RECORDING_MALFORMED_EVENT, '"stop_reason": |null'),
        ({**whole(), "usage": {"input_tokens": 1}}, Code.RECORDING_MALFORMED_EVENT, '"usage": |{'),
        (
            {**whole(), "usage": {"input_tokens": -1, "output_tokens": 1}},
            Code.RECORDING_MALFORMED_EVENT,
            '"input_tokens": |-1',
        ),
        (whole({"type": 1}), Code.RECORDING_MALFORMED_EVENT, '"type": |1'),
        (whole({"type": "text"}), Code.RECORDING_MALFORMED_EVENT, '|{\n      "type": "text"'),
        (
            whole({"type": "tool_use", "id": "t", "name": "", "input": {}}),
            Code.RECORDING_MALFORMED_EVENT,
            '"name": |""',
        ),
        (
            whole({"type": "tool_use", "id": "t", "name": "f", "input": "{}"}),
            Code.RECORDING_MALFORMED_EVENT,
            '"input": |"{}"',
        ),
        (whole(tool_use()), Code.RECORDING_STOP_REASON_MISMATCH, '"stop_reason": |"end_turn"'),
        (
            whole(text_of("x"), stop_reason="tool_use"),
            Code.RECORDING_STOP_REASON_MISMATCH,
            '"stop_reason": |"tool_use"',
        ),
    ],
    ids=[
        "empty-id",
        "content-not-a-list",
        "no-stop-reason",
        "no-output-tokens",
        "negative-tokens",
        "block-type-not-a-string",
        "text-block-without-text",
        "empty-tool-name",
        "input-not-an-object",
        "end-turn-after-a-tool-use",
        "tool-use-without-one",
    ],
)
def test_a_message_is_refused_where_its_fault_lies(value: Event, code: Code, needle: str) -> None:
    text = body(value)
    error = refused(text, format="auto")
    assert (error.code, error.event_index, (error.line, error.column)) == (
        code,
        0,
        spot_in(text, needle),
    ), str(error)


def test_a_message_s_tool_input_nested_deeper_than_a_fixture_allows_is_malformed() -> None:
    deep: object = {}
    for _ in range(251):
        deep = {"a": deep}
    text = body(
        whole({"type": "tool_use", "id": "t", "name": "f", "input": deep}, stop_reason="tool_use")
    )
    error = refused(text)
    assert error.code is Code.RECORDING_MALFORMED_EVENT
    assert "tool call 0 (id 't', name 'f')" in error.message


def test_a_message_does_not_fit_the_other_formats() -> None:
    text = body(whole(text_of("Hi")))
    for other in ("openai-chat", "openai-responses"):
        error = refused(text, format=other)
        assert (error.code, error.line, error.column) == (Code.RECORDING_UNKNOWN_FORMAT, 1, 1)
