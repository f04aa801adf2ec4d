"""The import driver, apart from any one format: arguments, decoding, format settling,
locating refusals, files and cassettes.

A toy format stands in for the real ones, so these tests pin the framework alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course import FixtureProviderAdapter, thaw
from course._json_text import JsonSyntaxError, loads
from course.vendors import (
    Recording,
    RecordingError,
    RecordingErrorCode,
    _importing,
    import_recording,
    load_recordings,
)
from course.vendors._cut import is_cut
from course.vendors._recording import ARGUMENTS_MAX_DEPTH, Event, Refusal, StreamImporter

Code = RecordingErrorCode


class ToyImporter(StreamImporter):
    """``{"type": "start", "id": ...}``, ``{"type": "text", "text": ...}``,
    ``{"type": "call", "args": "..."}``, ``{"type": "end", "usage": [i, o]}`` or
    ``{"type": "end"}``, ``{"type": "error", "message": ...}``."""

    format = "toy"

    def feed(self, event: Event) -> None:
        data = event.data
        if data is None:
            raise self.out_of_order("[DONE] in a toy stream")
        kind = self.string(data, "type", ())
        if kind == "start":
            self.start(self.identifier(data, "id", ()))
        elif kind == "text":
            self.text(self.string(data, "text", ()))
        elif kind == "call":
            self.tool_call("c1", "f", self.string(data, "args", ()), ("args",), 0)
        elif kind == "end":
            usage = self.obj(data, "usage", (), optional=True)
            counts = None
            if usage is not None:
                counts = (
                    self.count(usage, "in", ("usage",)) or 0,
                    self.count(usage, "out", ("usage",)) or 0,
                )
            self.end(False, counts, None)
        elif kind == "error":
            self.provider_error(self.string(data, "message", ()), None)
        elif kind == "ping":
            self.ignore("ping")
        else:
            raise self.malformed(f"unknown toy event {kind!r}", ("type",))

    def whole(self, body: dict[str, Any]) -> None:
        """``{"object": "toy", "id": ..., "text": ..., "usage": [i, o]}``."""
        self.start(self.identifier(body, "id", ()))
        self.text(self.string(body, "text", ()))
        counts = self.array(body, "usage", ())
        self.end(False, (counts[0], counts[1]), ("usage",))  # type: ignore[arg-type]


toy = types.ModuleType("toy")
toy.FORMAT = "toy"  # type: ignore[attr-defined]
toy.Importer = ToyImporter  # type: ignore[attr-defined]
toy.detects = lambda first: first.get("type") == "start"  # type: ignore[attr-defined]
toy.fits = lambda first: first.get("type") in ("start", "error", "ping")  # type: ignore[attr-defined]
toy.precedes = lambda event: event.get("type") == "ping"  # type: ignore[attr-defined]
toy.detects_whole = lambda body: body.get("object") == "toy"  # type: ignore[attr-defined]
toy.fits_whole = lambda body: body.get("object") in ("toy", "toy.error")  # type: ignore[attr-defined]
toy.read_error_body = lambda body: None  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def toy_format(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_importing, "_FORMAT_MODULES", (toy,))
    monkeypatch.setitem(_importing.FORMATS, "toy", toy)
    yield


START = 'data: {"type": "start", "id": "r1"}\n\n'
END = 'data: {"type": "end", "usage": {"in": 3, "out": 4}}\n\n'


def records_of(recording: Recording) -> list[dict[str, Any]]:
    """The recording's records as plain JSON."""
    return cast("list[dict[str, Any]]", thaw(recording.response)["records"])


def refused(data: str | bytes, **kwargs: object) -> RecordingError:
    with pytest.raises(RecordingError) as caught:
        import_recording(data, **kwargs)  # type: ignore[arg-type]
    return caught.value


# -- arguments ------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [None, 1, ["data: x"], bytearray(b"x")])
def test_data_of_another_type_is_a_type_error(data: object) -> None:
    with pytest.raises(TypeError):
        import_recording(data)  # type: ignore[arg-type]


def test_format_must_be_known() -> None:
    with pytest.raises(ValueError, match="format must be one of"):
        import_recording(START, format="openai")
    with pytest.raises(TypeError):
        import_recording(START, format=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "usage", [(1,), (1, 2, 3), (True, 1), (1.0, 2), (-1, 0), (0, 2**53), [1, 2], "1,2", {}]
)
def test_usage_must_be_two_counts(usage: object) -> None:
    with pytest.raises(ValueError, match="usage must be"):
        import_recording(START, usage=usage)  # type: ignore[arg-type]


def test_source_must_be_a_string() -> None:
    with pytest.raises(TypeError):
        import_recording(START, source=Path("x"))  # type: ignore[arg-type]


# -- decoding and reading -------------------------------------------------------------------


def test_a_recording_becomes_one_response() -> None:
    recording = import_recording(START + 'data: {"type": "text", "text": "Hi"}\n\n' + END)
    assert recording.format == "toy"
    assert recording.truncated is False
    assert thaw(recording.response) == {
        "records": [
            {"type": "response_start", "responseId": "r1", "role": "assistant"},
            {"type": "text_delta", "text": "Hi"},
            {
                "type": "response_end",
                "responseId": "r1",
                "stopReason": "stop",
                "usage": {"inputTokens": 3, "outputTokens": 4},
            },
        ]
    }


def test_the_response_and_the_counts_are_read_only() -> None:
    recording = import_recording(START + END)
    with pytest.raises(TypeError):
        recording.response["records"] = []  # type: ignore[index]
    with pytest.raises(TypeError):
        recording.ignored["x"] = 1  # type: ignore[index]
    with pytest.raises(AttributeError):
        recording.truncated = True  # type: ignore[misc]


def test_bytes_are_utf8_with_an_optional_bom() -> None:
    text = START + 'data: {"type": "text", "text": "é"}\n\n' + END
    assert import_recording(b"\xef\xbb\xbf" + text.encode()) == import_recording(text)


def test_bytes_that_are_not_utf8_are_unreadable() -> None:
    error = refused(b"data: \xff\n\n", source="rec.sse")
    assert error.code is Code.RECORDING_UNREADABLE
    assert (error.source, error.event_index, error.line, error.column) == (
        "rec.sse",
        None,
        None,
        None,
    )
    assert str(error).startswith("rec.sse: RECORDING_UNREADABLE ")


@pytest.mark.parametrize("text", ["", "\n\n", ": only a comment\n\n", "event: ping\n\n"])
def test_a_recording_without_data_is_unreadable(text: str) -> None:
    error = refused(text)
    assert error.code is Code.RECORDING_UNREADABLE
    assert str(error) == f"RECORDING_UNREADABLE {error.message}"


def test_subclasses_of_str_and_bytes_are_read_as_plain_values() -> None:
    class Hostile(str):
        def split(self, *args: object, **kwargs: object) -> list[str]:
            raise AssertionError("called")

        def startswith(self, *args: object, **kwargs: object) -> bool:
            raise AssertionError("called")

    class HostileBytes(bytes):
        def decode(self, *args: object, **kwargs: object) -> str:
            raise AssertionError("called")

    assert import_recording(Hostile(START + END)).format == "toy"
    assert import_recording(HostileBytes((START + END).encode())).format == "toy"


# -- settling the format --------------------------------------------------------------------


def test_auto_detection_needs_json_first() -> None:
    error = refused("\n\ndata: {nope\n\n")
    assert error.code is Code.RECORDING_INVALID_JSON
    assert (error.event_index, error.line, error.column) == (0, 3, 8)  # at `nope`


def test_auto_detection_refuses_done_first_as_not_json() -> None:
    error = refused("data: [DONE]\n\n")
    assert error.code is Code.RECORDING_INVALID_JSON
    assert (error.event_index, error.line, error.column) == (0, 1, 8)  # at `DONE`


@pytest.mark.parametrize("first", ["[1]", '"s"', "42", "null"])
def test_json_first_that_is_not_an_object_tells_no_format(first: str) -> None:
    error = refused(f"data: {first}\n\n")
    assert error.code is Code.RECORDING_UNKNOWN_FORMAT
    assert (error.event_index, error.line, error.column) == (0, 1, 1)


def test_later_data_that_is_not_an_object_is_invalid_json_at_the_value() -> None:
    error = refused(START + "data:  [1]\n\n")
    assert error.code is Code.RECORDING_INVALID_JSON
    assert (error.event_index, error.line, error.column) == (1, 3, 8)


def test_an_unknown_first_event_is_an_unknown_format() -> None:
    error = refused('data: {"type": "error", "message": "boom"}\n\n')
    assert error.code is Code.RECORDING_UNKNOWN_FORMAT
    assert (error.event_index, error.line, error.column) == (0, 1, 1)
    assert "format=" in error.message


@pytest.mark.parametrize(
    "first", ["data: {nope", "data: [DONE]", 'data: {"type": "text", "text": "x"}']
)
def test_a_first_event_that_does_not_fit_the_named_format(first: str) -> None:
    error = refused(first + "\n\n", format="toy")
    assert error.code is Code.RECORDING_UNKNOWN_FORMAT
    assert (error.event_index, error.line, error.column) == (0, 1, 1)


def test_a_named_format_may_open_with_an_error() -> None:
    recording = import_recording('data: {"type": "error", "message": "boom"}\n\n', format="toy")
    assert thaw(recording.response) == {"records": [{"type": "transport_error", "message": "boom"}]}
    assert recording.truncated is False


# -- events ---------------------------------------------------------------------------------


def test_nothing_after_a_provider_error_is_read() -> None:
    text = START + 'data: {"type": "error", "message": "overloaded"}\n\ndata: {nope\n\n'
    recording = import_recording(text)
    assert [r["type"] for r in records_of(recording)] == [
        "response_start",
        "transport_error",
    ]


def test_a_cut_stream_keeps_its_records() -> None:
    recording = import_recording(START + 'data: {"type": "text", "text": "Hi"}\n\n')
    assert recording.truncated is True
    assert len(records_of(recording)) == 2


def test_invalid_json_is_located_inside_a_multi_line_event() -> None:
    text = START + 'event: x\ndata: {"type": "text",\ndata:    "text": NaN}\n\n'
    error = refused(text, source="r.sse")
    assert error.code is Code.RECORDING_INVALID_JSON
    assert (error.event_index, error.line, error.column) == (1, 5, 18)
    assert str(error) == f"r.sse:5:18: RECORDING_INVALID_JSON {error.message}"


@pytest.mark.parametrize(
    ("event", "column"),
    [
        ('{"type": "text", "text": 5}', 32),  # a mistyped value: at the value
        ('{"type": "text"}', 7),  # a missing key: at the object that lacks it
        ('{"type": "text", "text": null}', 32),  # null for a required key: at the null
        ('{"type": "start", "id": ""}', 31),  # an empty id
    ],
)
def test_refusals_point_at_the_offending_value(event: str, column: int) -> None:
    error = refused(START + f"data: {event}\n\n")
    assert error.code is Code.RECORDING_MALFORMED_EVENT
    assert (error.event_index, error.line, error.column) == (1, 3, column)


def test_a_refusal_of_the_whole_event_points_at_its_first_data_line() -> None:
    error = refused(START + ": comment\nevent: x\ndata: [DONE]\n\n")
    assert error.code is Code.RECORDING_OUT_OF_ORDER
    assert (error.event_index, error.line, error.column) == (1, 5, 1)


def test_missing_usage_and_the_fallback() -> None:
    end = 'data: {"type": "end"}\n\n'
    error = refused(START + end)
    assert error.code is Code.RECORDING_MISSING_USAGE
    assert "usage=" in error.message
    records = records_of(import_recording(START + end, usage=(5, 6)))
    assert records[-1]["usage"] == {"inputTokens": 5, "outputTokens": 6}
    # Recorded usage wins over the argument.
    records = records_of(import_recording(START + END, usage=(5, 6)))
    assert records[-1]["usage"] == {"inputTokens": 3, "outputTokens": 4}


@pytest.mark.parametrize("count", ["-1", "9007199254740992", "true", "1.0"])
def test_token_counts_are_checked(count: str) -> None:
    error = refused(START + f'data: {{"type": "end", "usage": {{"in": {count}, "out": 1}}}}\n\n')
    assert error.code is Code.RECORDING_MALFORMED_EVENT


# -- tool-call arguments --------------------------------------------------------------------


def call(arguments: str) -> str:
    return START + f"data: {json.dumps({'type': 'call', 'args': arguments})}\n\n" + END


def test_arguments_are_strict_json_objects() -> None:
    records = records_of(import_recording(call('{"a": [1, {"b": null}]}')))
    assert records[1]["arguments"] == {"a": [1, {"b": None}]}
    assert records_of(import_recording(call("")))[1]["arguments"] == {}


@pytest.mark.parametrize(
    "arguments", ["[]", "1", '{"a": 1', '{"a": 1, "a": 2}', '{"a": NaN}', '{"a": 1e400}', " "]
)
def test_bad_arguments_are_malformed(arguments: str) -> None:
    error = refused(call(arguments))
    assert error.code is Code.RECORDING_MALFORMED_EVENT
    assert (error.line, error.column) == (3, 32)  # the `args` value


def test_arguments_may_nest_as_deeply_as_the_adapter_accepts() -> None:
    deepest = "[" * (ARGUMENTS_MAX_DEPTH - 1) + "]" * (ARGUMENTS_MAX_DEPTH - 1)
    fixture = load_fixture_of(call('{"a": ' + deepest + "}"))
    FixtureProviderAdapter(fixture)  # accepted
    too_deep = "[" + deepest + "]"
    assert refused(call('{"a": ' + too_deep + "}")).code is Code.RECORDING_MALFORMED_EVENT


def load_fixture_of(text: str) -> dict[str, object]:
    return {"schemaVersion": 1, "responses": [thaw(import_recording(text).response)]}


# -- files and cassettes --------------------------------------------------------------------


def test_load_recordings_reads_each_file_in_order(tmp_path: Path) -> None:
    one = tmp_path / "one.sse"
    one.write_text(START + END)
    two = tmp_path / "two.sse"
    two.write_bytes((START.replace("r1", "r2") + END).encode())
    fixture = load_recordings(one, str(two))
    assert fixture["schemaVersion"] == 1
    ids = [r["records"][0]["responseId"] for r in cast("list[Any]", fixture["responses"])]
    assert ids == ["r1", "r2"]


def test_load_recordings_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        load_recordings()
    with pytest.raises(TypeError):
        load_recordings(1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        load_recordings(tmp_path / "x.sse", format="nope")


def test_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(RecordingError) as caught:
        load_recordings(tmp_path / "missing.sse")
    assert caught.value.code is Code.RECORDING_UNREADABLE
    assert caught.value.source == os.fspath(tmp_path / "missing.sse")
    with pytest.raises(RecordingError) as caught:
        load_recordings(tmp_path)  # a folder
    assert caught.value.code is Code.RECORDING_UNREADABLE


def test_errors_in_files_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.sse"
    path.write_text(START + "data: {nope\n\n")
    with pytest.raises(RecordingError) as caught:
        load_recordings(path)
    assert str(caught.value).startswith(f"{path}:3:8: RECORDING_INVALID_JSON ")


CASSETTE = """\
interactions:
- request:
    body: '{"stream": true}'
    method: POST
    uri: https://api.example.com/v1/x
  response:
    body:
      string: '{"not": "a stream"}'
    status: {code: 200, message: OK}
- request:
    method: POST
  response:
    body:
      string: "data: {\\"type\\": \\"start\\", \\"id\\": \\"r1\\"}\\n\\n\\
        data: {\\"type\\": \\"end\\", \\"usage\\": {\\"in\\": 1, \\"out\\": 2}}\\n\\n"
- response:
    body:
      string: !!binary |
        ZGF0YTogeyJ0eXBlIjogInN0YXJ0IiwgImlkIjogInJiIn0KCmRhdGE6IHsidHlwZSI6ICJlbmQifQoK
- response:
    body:
      string: |+
        data: {"type": "start", "id": "r2"}

        data: {"type": "text", "text": 7}

version: 1
"""


def test_cassettes_give_one_response_per_stream(tmp_path: Path) -> None:
    path = tmp_path / "cassette.yaml"
    path.write_text(CASSETTE.replace('"text": 7', '"text": "Hi"'))
    fixture = load_recordings(path, usage=(1, 1))
    responses = cast("list[Any]", fixture["responses"])
    # The answer of another service is skipped; the base64 body is decoded.
    assert [r["records"][0]["responseId"] for r in responses] == ["r1", "rb", "r2"]


def test_a_failing_stream_in_a_cassette_names_its_interaction(tmp_path: Path) -> None:
    path = tmp_path / "cassette.yml"
    path.write_text(CASSETTE)
    with pytest.raises(RecordingError) as caught:
        load_recordings(path, usage=(1, 1))
    error = caught.value
    assert error.code is Code.RECORDING_MALFORMED_EVENT
    assert error.message.startswith("interaction 3: ")
    # The position is the cassette's, at the offending value, so an editor jumps there.
    lines = CASSETTE.splitlines()
    (line,) = [n for n, text in enumerate(lines, 1) if '"text": 7' in text]
    column = lines[line - 1].index("7") + 1
    assert (error.source, error.event_index, error.line, error.column) == (
        str(path),
        1,
        line,
        column,
    )


@pytest.mark.parametrize(
    "text", ["interactions: []\n", "- a\n", "interactions: {a: 1}\n", "a: [\n", "[" * 5000]
)
def test_a_cassette_without_a_stream_is_unreadable(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(RecordingError) as caught:
        load_recordings(path)
    assert caught.value.code is Code.RECORDING_UNREADABLE


def test_a_cassette_without_pyyaml_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)
    path = tmp_path / "c.yaml"
    path.write_text(CASSETTE)
    with pytest.raises(RecordingError) as caught:
        load_recordings(path)
    assert caught.value.code is Code.RECORDING_UNREADABLE
    assert "course[cassettes]" in caught.value.message


# -- the error and the result as values -----------------------------------------------------


def test_errors_survive_pickling() -> None:
    error = refused(START + "data: {nope\n\n", source="s")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.message, copy.source, copy.event_index, copy.line, copy.column) == (
        error.code,
        error.message,
        error.source,
        error.event_index,
        error.line,
        error.column,
    )
    assert str(copy) == str(error)


def test_codes_are_their_names() -> None:
    for code in Code:
        assert code.value == code.name
        assert str(code) == code.name


def test_a_recording_is_a_frozen_value() -> None:
    recording = import_recording(START + END)
    assert isinstance(recording, Recording)
    assert recording == import_recording(START + END)


@given(st.binary(max_size=300))
def test_any_bytes_give_a_recording_or_a_recording_error(data: bytes) -> None:
    with contextlib.suppress(RecordingError):
        import_recording(data)


@given(
    st.lists(
        st.sampled_from(
            [
                START,
                END,
                'data: {"type": "text", "text": "x"}\n\n',
                'data: {"type": "call", "args": "{}"}\n\n',
                'data: {"type": "error", "message": "m"}\n\n',
                "data: [DONE]\n\n",
                ": c\n\n",
                "data: {\n\n",
                "event: text\n",
            ]
        ),
        max_size=8,
    ),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_line_endings_never_change_the_result(parts: list[str], newline: str) -> None:
    text = "".join(parts)

    def outcome(data: str) -> object:
        try:
            return import_recording(data)
        except RecordingError as error:
            return (error.code, error.event_index, error.line, error.column)

    assert outcome(text.replace("\n", newline)) == outcome(text)


@pytest.mark.parametrize(("owner", "kind"), [({"n": 1}, int), ({"id": "x"}, str)])
def test_a_refusal_the_field_checks_would_not_make_is_still_a_coded_refusal(
    owner: dict[str, object], kind: type
) -> None:
    # An inline check and the field checks that drifted apart: never a crash.
    key = next(iter(owner))
    with pytest.raises(Refusal) as caught:
        StreamImporter.refuse(owner, key, kind, ("event",))  # type: ignore[arg-type]
    assert caught.value.code is Code.RECORDING_MALFORMED_EVENT


# -- one byte order mark, for bytes and text alike ----------------------------------------


def test_exactly_one_byte_order_mark_is_skipped_for_bytes_and_for_text() -> None:
    text = START + 'data: {"type": "text", "text": "Hi"}\n\n' + END
    assert import_recording("\ufeff" + text) == import_recording(text)
    assert import_recording(b"\xef\xbb\xbf" + text.encode()) == import_recording(text)
    # A second mark is text: it starts the first line, whose field is no longer `data`.
    twice_text = refused("\ufeff\ufeff" + text)
    twice_bytes = refused(b"\xef\xbb\xbf\xef\xbb\xbf" + text.encode())
    assert (twice_text.code, twice_text.event_index, twice_text.line, twice_text.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        0,
        3,
        1,
    )
    assert str(twice_bytes) == str(twice_text)


def test_the_byte_a_bom_precedes_is_named_at_its_own_offset() -> None:
    error = refused(b"\xef\xbb\xbfdata: \xfe\n\n")
    assert error.code is Code.RECORDING_UNREADABLE
    assert error.message == "The recording is not UTF-8 text (invalid byte 0xfe at byte 9)"
    assert refused(b"data: \xfe\n\n").message.endswith("(invalid byte 0xfe at byte 6)")


# -- paths -------------------------------------------------------------------------------


def test_a_bytes_path_is_a_type_error_naming_fsdecode(tmp_path: Path) -> None:
    (tmp_path / "one.sse").write_text(START + END)
    with pytest.raises(TypeError, match=r"os\.fsdecode"):
        load_recordings(os.fsencode(tmp_path / "one.sse"))  # type: ignore[arg-type]
    with os.scandir(os.fsencode(tmp_path)) as entries:
        (entry,) = list(entries)
    with pytest.raises(TypeError, match=r"os\.fsdecode"):
        load_recordings(entry)  # type: ignore[arg-type]
    assert load_recordings(os.fsdecode(entry.path))["responses"]


# -- settling the format past events that come before a start --------------------------------


def test_events_a_format_allows_before_its_start_are_read_past_while_detecting() -> None:
    ping = 'data: {"type": "ping"}\n\n'
    recording = import_recording(ping + ping + START + END)
    assert (recording.format, dict(recording.ignored)) == ("toy", {"ping": 2})


def test_only_events_before_a_start_tell_no_format() -> None:
    ping = 'data: {"type": "ping"}\n\n'
    error = refused(ping + ping)
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        0,
        1,
        1,
    )
    error = refused(ping + 'data: {"type": "text", "text": "x"}\n\n')
    assert (error.code, error.event_index, error.line) == (Code.RECORDING_UNKNOWN_FORMAT, 1, 3)
    error = refused(ping + "data: {nope\n\n")  # not JSON, after a ping: not JSON
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_INVALID_JSON,
        1,
        3,
        8,
    )


# -- a cut last line -----------------------------------------------------------------------


def test_a_stream_cut_inside_its_last_line_keeps_its_records() -> None:
    recording = import_recording(START + 'data: {"type": "text", "text": "H')
    assert recording.truncated is True
    assert records_of(recording) == [
        {"type": "response_start", "responseId": "r1", "role": "assistant"}
    ]


def test_a_cut_event_after_the_terminal_counts_for_nothing() -> None:
    recording = import_recording(START + END + 'data: {"type": "te')
    assert recording.truncated is False
    assert records_of(recording)[-1]["type"] == "response_end"


def test_a_last_line_with_its_line_end_is_invalid_json_not_cut() -> None:
    for tail in ('data: {"type": "te\n', 'data: {"type": "te\r', 'data: {"type": "te\n\n'):
        error = refused(START + tail)
        assert (error.code, error.event_index, error.line) == (Code.RECORDING_INVALID_JSON, 1, 3)


def test_a_recording_cut_inside_its_first_event_holds_no_event() -> None:
    error = refused('data: {"type": "sta', format="toy")
    assert (error.code, error.event_index, error.line) == (Code.RECORDING_UNREADABLE, None, None)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(_JSON, st.data())
def test_every_proper_prefix_of_json_text_is_cut(value: object, data: st.DataObject) -> None:
    text = json.dumps(value, indent=data.draw(st.sampled_from([None, 1])), ensure_ascii=False)
    prefix = text[: data.draw(st.integers(0, len(text) - 1))]
    if prefix.strip() and _is_json(prefix):
        return  # a number cut after a digit is a number
    assert is_cut(prefix)


@given(_JSON, st.sampled_from(["x", "}", "]", ",", " 1", "NaN"]))
def test_whole_json_text_with_more_after_it_is_not_cut(value: object, more: str) -> None:
    text = json.dumps(value)
    if not _is_json(text + more):
        assert not is_cut(text + more)


@pytest.mark.parametrize(
    "data",
    ['{"a": Na', '{"a": 1e400', '{"a": 1, "a"', '{"a" 1', "{,", '{"a": "x\ny', "01", '"\\q'],
)
def test_data_no_json_text_starts_with_is_not_cut(data: str) -> None:
    assert not is_cut(data)


def _is_json(text: str) -> bool:
    try:
        loads(text)
    except JsonSyntaxError:
        return False
    return True


# -- a non-streamed body -------------------------------------------------------------------

TOY_BODY = '{"object": "toy", "id": "w1", "text": "Hi", "usage": [1, 2]}'


def test_a_json_body_is_imported_whole() -> None:
    for text in (TOY_BODY, "\n  \t" + TOY_BODY + "\n", "\ufeff" + TOY_BODY):
        recording = import_recording(text)
        assert (recording.format, recording.truncated) == ("toy", False)
        assert [r["type"] for r in records_of(recording)] == [
            "response_start",
            "text_delta",
            "response_end",
        ]


def test_a_body_is_json_when_its_first_character_opens_an_object_or_array() -> None:
    error = refused("  [1, 2]")
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        0,
        1,
        3,
    )
    # Anything else is an event stream: here, one without events.
    assert refused('"object": "toy"').code is Code.RECORDING_UNREADABLE


def test_a_json_body_that_is_not_strict_json_is_invalid_json_where_the_reader_stops() -> None:
    error = refused('{\n  "object": "toy",\n  "id": NaN}')
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_INVALID_JSON,
        0,
        3,
        9,
    )
    cut = refused(TOY_BODY[:30])  # a cut body is no cut stream: it is invalid JSON
    assert (cut.code, cut.line) == (Code.RECORDING_INVALID_JSON, 1)


def test_a_json_body_no_format_knows_is_an_unknown_format_at_its_start() -> None:
    for format in ("auto", "toy"):
        error = refused('\r\n {"object": "chat.completion"}', format=format)
        assert (error.code, error.event_index, error.line, error.column) == (
            Code.RECORDING_UNKNOWN_FORMAT,
            0,
            2,
            2,
        )


def test_a_refusal_inside_a_json_body_points_at_the_value_across_line_endings() -> None:
    for newline in ("\n", "\r\n", "\r"):
        text = newline.join(
            ['{"object": "toy",', '  "id": "w1",', '  "text": 5,', '  "usage": [1, 2]}']
        )
        error = refused(text)
        assert (error.code, error.event_index, error.line, error.column) == (
            Code.RECORDING_MALFORMED_EVENT,
            0,
            3,
            11,
        )


def test_a_fixture_given_as_a_recording_is_named_so() -> None:
    error = refused('{"schemaVersion": 1, "responses": []}')
    assert (error.code, error.line, error.column) == (Code.RECORDING_UNKNOWN_FORMAT, 1, 1)
    assert "is a fixture, not a recorded answer" in error.message
