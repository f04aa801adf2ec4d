"""The SSE reader: the WHATWG interpretation, and where every data value lies."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course.vendors._sse import SseEvent, format_event, read_events


def events(text: str) -> list[tuple[str, str]]:
    return [(event.name, event.data) for event in read_events(text)]


def test_an_event_is_dispatched_by_a_blank_line() -> None:
    assert events("data: a\n\ndata: b\n\n") == [("", "a"), ("", "b")]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_line_ending_is_a_line_ending(newline: str) -> None:
    text = newline.join(["event: x", "data: 1", "", "data: 2", "", ""])
    assert events(text) == [("x", "1"), ("", "2")]


def test_mixed_line_endings_in_one_text() -> None:
    assert events("data: 1\r\n\rdata: 2\n\r\ndata: 3\r\r") == [("", "1"), ("", "2"), ("", "3")]


def test_data_lines_of_one_event_are_joined_with_newlines() -> None:
    assert events('data: {\ndata:  "a": 1\ndata: }\n\n') == [("", '{\n "a": 1\n}')]


def test_one_optional_space_after_the_colon() -> None:
    assert events("data:x\n\ndata:  y\n\n") == [("", "x"), ("", " y")]


def test_comments_and_unknown_fields_are_skipped() -> None:
    text = ": keep-alive\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\n"
    assert events(text) == [("", "x")]


def test_a_field_without_colon_has_an_empty_value() -> None:
    assert events("data\n\n") == [("", "")]
    assert events("event\ndata: x\n\n") == [("", "x")]


def test_events_without_data_are_not_dispatched_and_reset_the_name() -> None:
    assert events("event: ping\n\ndata: x\n\n") == [("", "x")]
    assert events("event: a\n\n\n\n") == []


def test_a_final_event_without_its_blank_line_is_dispatched() -> None:
    assert events("data: a\n\ndata: b") == [("", "a"), ("", "b")]
    assert events("data: b\n") == [("", "b")]


def test_a_byte_order_mark_is_the_decoder_s_to_skip_not_the_reader_s() -> None:
    # The importer's decoder strips exactly one, for bytes and str alike; a BOM that
    # reaches the reader is part of the first line's field name, as WHATWG reads it.
    assert events("\ufeffdata: x\n\ndata: y\n\n") == [("", "y")]


def test_an_event_the_text_ends_inside_is_cut() -> None:
    def cut(text: str) -> list[bool]:
        return [event.cut for event in read_events(text)]

    assert cut('data: {"a"') == [True]
    assert cut('data: {"a": 1}\n\ndata: {"b"') == [False, True]
    assert cut('event: x\ndata: {"a"') == [True]
    assert cut('data: {"a"\n') == [False]  # the line has its end
    assert cut('data: {"a"\n: a comment') == [False]  # the data line has its end
    assert cut('data: {"a"\r\n') == [False]
    assert cut('data: {"a": 1}\n\n') == [False]


def test_the_event_name_is_the_last_one_given() -> None:
    assert events("event: a\nevent: b\ndata: x\n\n") == [("b", "x")]


def test_events_are_counted_from_zero() -> None:
    assert [e.index for e in read_events(": c\n\ndata: a\n\nevent: e\n\ndata: b\n\n")] == [0, 1]


def test_each_data_value_knows_its_line_and_column() -> None:
    text = 'event: x\r\ndata: {\r\ndata:\t"k": 1\r\ndata:}\r\n\r\n'
    (event,) = read_events(text)
    assert event.data_starts == ((2, 7), (3, 6), (4, 6))
    assert event.line == 2
    # The "k" key: second data line, after the tab.
    assert event.position(event.data.index('"k"')) == (3, 7)
    assert event.position(event.data.index("1")) == (3, 12)
    assert event.position(event.data.index("}")) == (4, 6)


def test_columns_count_code_points() -> None:
    (event,) = read_events('data: ["é😀", x]\n\n')
    assert event.position(event.data.index("x")) == (1, 14)


@given(st.text())
def test_any_text_is_an_event_stream(text: str) -> None:
    for event in read_events(text):
        assert isinstance(event, SseEvent)
        assert len(event.data_starts) == event.data.count("\n") + 1


data_lines = st.text(st.characters(exclude_characters="\r\n"), max_size=20)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", "a", "message_start"]),
            st.lists(data_lines, min_size=1, max_size=3),
        ),
        max_size=5,
    ),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_written_events_read_back_whatever_the_line_ending(
    written: list[tuple[str, list[str]]], newline: str
) -> None:
    text = "".join(format_event("\n".join(lines), name or None) for name, lines in written)
    text = text.replace("\n", newline)
    assert events(text) == [(name, "\n".join(lines)) for name, lines in written]


def test_format_event_writes_one_data_line_per_line() -> None:
    assert format_event('{"a":\n1}', "x") == 'event: x\ndata: {"a":\ndata: 1}\n\n'
    assert format_event("[DONE]") == "data: [DONE]\n\n"


def reference_events(text: str) -> list[tuple[int, str, str, tuple[tuple[int, int], ...]]]:
    """The WHATWG interpretation line by line, as the SPEC words it: the model the
    reader's block-at-a-time shortcut must agree with."""
    text = text.removeprefix("\ufeff")
    found: list[tuple[int, str, str, tuple[tuple[int, int], ...]]] = []
    name, data, starts = "", [], []  # type: ignore[var-annotated]
    for number, line in enumerate(re.split(r"\r\n|\r|\n", text), 1):
        if line == "":
            if data:
                found.append((len(found), name, "\n".join(data), tuple(starts)))
            name, data, starts = "", [], []
            continue
        if line.startswith(":"):
            continue
        field, colon, value = line.partition(":")
        column = len(field) + 2 if colon else len(line) + 1
        if value.startswith(" "):
            value, column = value[1:], column + 1
        if field == "data":
            data.append(value)
            starts.append((number, column))
        elif field == "event":
            name = value
    if data:
        found.append((len(found), name, "\n".join(data), tuple(starts)))
    return found


sse_text = st.lists(
    st.one_of(
        st.sampled_from(
            ["data: ", "data:", "data", "event: ", "event:x", ": c", "id: 1", "\n", "\r", "\r\n"]
        ),
        st.text(st.sampled_from('ab :\n\r{}"\ufeff'), max_size=6),
    ),
    max_size=30,
).map("".join)


@given(st.one_of(sse_text, st.text()))
def test_the_reader_agrees_with_the_line_by_line_model(text: str) -> None:
    assert [
        (event.index, event.name, event.data, event.data_starts) for event in read_events(text)
    ] == reference_events(text)
