"""Strict loading: ``load_fixture`` and the private parser behind it.

Every rejection is ``PROVIDER_INVALID_FIXTURE`` whose ``str()`` names the file and the
1-based line and column of the offending token, never a stray ``json`` or OS error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course import (
    CourseModelRequest,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    load_fixture,
)
from course._json import MAX_DEPTH
from course._json_text import JsonSyntaxError, line_and_column
from course._json_text import parse_positioned as parse_json
from course._loading import parse_fixture_text, place

from .helpers import ROUNDTRIP_PATH, collect, run

INVALID = FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE


def write(tmp_path: Path, data: bytes | str, name: str = "fixture.json") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def rejection(path: Path) -> FixtureProviderError:
    with pytest.raises(FixtureProviderError) as caught:
        load_fixture(path)
    assert caught.value.code is INVALID
    return caught.value


def assert_located(path: Path, line: int, column: int) -> FixtureProviderError:
    """``load_fixture(path)`` fails; its message starts ``file:line:column: ``, and the
    error holds the line and the column as data too."""
    error = rejection(path)
    assert error.message.startswith(f"{path}:{line}:{column}: "), str(error)
    assert (error.line, error.column) == (line, column)
    return error


def nested_lists(depth: int) -> str:
    return "[" * depth + "]" * depth


def pointer_values(value: object, prefix: str = "") -> dict[str, object]:
    """Every JSON pointer of ``value`` mapped to the value it names."""
    found: dict[str, object] = {prefix: value}
    if isinstance(value, dict):
        for key, item in value.items():
            escaped = str(key).replace("~", "~0").replace("/", "~1")
            found.update(pointer_values(item, f"{prefix}/{escaped}"))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.update(pointer_values(item, f"{prefix}/{index}"))
    return found


# -- accepted ----------------------------------------------------------------------------


def test_bundled_fixture_loads_as_the_same_plain_data_json_reads() -> None:
    loaded = load_fixture(ROUNDTRIP_PATH)
    assert loaded == json.loads(ROUNDTRIP_PATH.read_text(encoding="utf-8"))
    assert type(loaded) is dict


def test_load_fixture_accepts_a_str_path(tmp_path: Path) -> None:
    path = write(tmp_path, '{"schemaVersion": 1, "responses": []}')
    assert load_fixture(str(path)) == {"schemaVersion": 1, "responses": []}


def test_bundled_fixture_streams_both_responses_after_loading() -> None:
    adapter = FixtureProviderAdapter(load_fixture(ROUNDTRIP_PATH))
    first = run(collect(adapter.stream(CourseModelRequest("a"))))
    second = run(collect(adapter.stream(CourseModelRequest("b"))))
    assert first.response is not None and first.response.response_id == "response-tool-001"
    assert second.response is not None and second.response.response_id == "response-text-001"


def test_nesting_exactly_at_the_limit_is_accepted(tmp_path: Path) -> None:
    loaded = load_fixture(write(tmp_path, nested_lists(MAX_DEPTH)))
    depth = 0
    value: object = loaded
    while isinstance(value, list):
        depth += 1
        value = value[0] if value else None
    assert depth == MAX_DEPTH


def test_a_record_nested_to_the_limit_loads_and_constructs(tmp_path: Path) -> None:
    # The loader and the adapter count depth the same way: root 1, a record 5.
    record = nested_lists(MAX_DEPTH - 4)
    text = '{"schemaVersion": 1, "responses": [{"records": [' + record + "]}]}"
    adapter = FixtureProviderAdapter(load_fixture(write(tmp_path, text)))
    assert adapter.pending == 1


def test_the_nesting_limit_is_documented_as_at_least_200() -> None:
    assert MAX_DEPTH >= 200


def test_large_but_finite_numbers_are_accepted(tmp_path: Path) -> None:
    digits = "9" * 4300
    text = f"[{digits}, -{digits}, 1e308, 1e-400, 0.5]"
    assert load_fixture(write(tmp_path, text)) == [int(digits), -int(digits), 1e308, 0.0, 0.5]


def test_non_ascii_text_and_escapes_load_unchanged(tmp_path: Path) -> None:
    text = '{"k\\u00e9": "caf\u00e9 \\ud83d\\ude00 \\n", "e": ""}'
    assert load_fixture(write(tmp_path, text)) == {"k\u00e9": "caf\u00e9 \U0001f600 \n", "e": ""}


# -- rejected, with the file, line and column ----------------------------------------------


def test_duplicate_key_is_located_at_its_second_occurrence(tmp_path: Path) -> None:
    error = assert_located(write(tmp_path, '{"a": 1, "a": 2}'), 1, 10)
    assert "Duplicate key" in str(error)


def test_duplicate_key_in_a_nested_object_on_a_later_line(tmp_path: Path) -> None:
    text = '{\n  "a": 1,\n  "b": {"x": 1,\n     "x": 2}\n}'
    error = assert_located(write(tmp_path, text), 4, 6)
    assert error.path == "/b/x"


def test_same_key_in_sibling_objects_is_not_a_duplicate(tmp_path: Path) -> None:
    assert load_fixture(write(tmp_path, '[{"a": 1}, {"a": 2}]')) == [{"a": 1}, {"a": 2}]


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("NaN", 1),
        ("[NaN]", 2),
        ("[Infinity]", 2),
        ("[-Infinity]", 2),
        ('{"a": 1e400}', 7),
        ("[-1e400]", 2),
        ("[1.5e99999]", 2),
    ],
)
def test_non_finite_numbers_are_rejected(tmp_path: Path, text: str, column: int) -> None:
    assert_located(write(tmp_path, text), 1, column)


def test_integer_of_5000_digits_is_rejected(tmp_path: Path) -> None:
    error = assert_located(write(tmp_path, '{"n": ' + "1" * 5000 + "}"), 1, 7)
    assert error.path == "/n"


def test_integer_of_4301_digits_is_rejected(tmp_path: Path) -> None:
    assert_located(write(tmp_path, "[-" + "1" * 4301 + "]"), 1, 2)


def test_lone_0xff_byte_is_rejected_at_its_position(tmp_path: Path) -> None:
    error = assert_located(write(tmp_path, b'{\n  "a": "\xff"}'), 2, 9)
    assert "0xff" in str(error)


def test_invalid_utf8_column_counts_characters_not_bytes(tmp_path: Path) -> None:
    # "é" is two bytes but one column.
    assert_located(write(tmp_path, b'["\xc3\xa9", \xff]'), 1, 7)


def test_truncated_multibyte_sequence_is_rejected(tmp_path: Path) -> None:
    assert_located(write(tmp_path, b'["\xc3"]'), 1, 3)


def test_utf8_byte_order_mark_is_rejected(tmp_path: Path) -> None:
    error = assert_located(write(tmp_path, b"\xef\xbb\xbf{}"), 1, 1)
    assert "byte order mark" in str(error)


def test_nesting_one_past_the_limit_is_rejected_at_the_opening_bracket(tmp_path: Path) -> None:
    assert_located(write(tmp_path, nested_lists(MAX_DEPTH + 1)), 1, MAX_DEPTH + 1)


def test_100000_levels_of_nesting_is_a_clean_error(tmp_path: Path) -> None:
    # Not a RecursionError: pytest.raises(FixtureProviderError) would let it escape.
    assert_located(write(tmp_path, "[" * 100_000), 1, MAX_DEPTH + 1)
    assert_located(write(tmp_path, '{"a":' * 100_000), 1, 5 * MAX_DEPTH + 1)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("{} x", 4),
        ("[1] [2]", 5),
        ('{"a": 1}}', 9),
        ("1 2", 3),
    ],
)
def test_trailing_garbage_is_rejected(tmp_path: Path, text: str, column: int) -> None:
    assert_located(write(tmp_path, text), 1, column)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ('{"a": ', 7),
        ('{"a": 1', 8),
        ('{"a": 1,', 9),
        ('{"a"', 5),
        ('{"a', 2),
        ('["abc', 2),
        ("[1, 2", 6),
        ("[tru", 2),
        ("{", 2),
        ("-", 1),
    ],
)
def test_truncated_files_are_rejected(tmp_path: Path, text: str, column: int) -> None:
    assert_located(write(tmp_path, text), 1, column)


@pytest.mark.parametrize(("char", "column"), [("\x00", 4), ("\x01", 4), ("\n", 4), ("\t", 4)])
def test_control_characters_in_strings_are_rejected(tmp_path: Path, char: str, column: int) -> None:
    assert_located(write(tmp_path, '["a' + char + 'b"]'), 1, column)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("[1,]", 3),  # at the trailing comma
        ('{"a": 1,}', 8),
        ("{'a': 1}", 2),
        ("[01]", 3),
        ("[.5]", 2),
        ("[+1]", 2),
        ("[None]", 2),
        ("[true false]", 7),
    ],
)
def test_json_syntax_that_python_forgives_or_never_was_json_is_rejected(
    tmp_path: Path, text: str, column: int
) -> None:
    assert_located(write(tmp_path, text), 1, column)


def test_missing_file_is_invalid_fixture_not_file_not_found(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    error = rejection(path)
    assert error.message.startswith(f"{path}: cannot read the fixture file: ")
    assert isinstance(error.__cause__, FileNotFoundError)
    assert (error.line, error.column, error.path) == (None, None, None)


def test_the_place_is_said_once_in_a_message() -> None:
    # The message names the place once; the CLI prints the reason after its own place.
    text = '{"schemaVersion": 1,\n "responses": [NaN]}'
    with pytest.raises(FixtureProviderError) as caught:
        parse_fixture_text("f.json", text)
    error = caught.value
    assert error.message == "f.json:2:16: Expected a finite number, got NaN (not JSON)"
    assert (error.line, error.column, error.path) == (2, 16, "/responses/0")
    assert (error.response_index, error.record_index) == (0, None)
    assert place("f.json", 2, 16) == "f.json:2:16" and place("f.json") == "f.json"


def test_a_part_of_the_text_is_parsed_and_located_in_the_whole_text() -> None:
    text = '{"responses": [\n  {"records": [1,]}]}'
    start = text.index('{"records"')
    end = text.rindex("]")
    with pytest.raises(FixtureProviderError) as caught:
        parse_fixture_text("f.json", text, start=start, end=end, path="/responses/0")
    error = caught.value
    assert (error.line, error.column) == (2, 17)  # the trailing comma
    assert error.path == "/responses/0/records"
    assert (error.response_index, error.record_index) == (0, None)
    assert parse_fixture_text("f.json", text, start=start + 13, end=start + 14) == 1


def test_a_part_counts_the_containers_around_it_against_the_nesting_limit() -> None:
    inner = nested_lists(MAX_DEPTH - 2)
    assert parse_fixture_text("f.json", inner, enclosing=2) is not None
    with pytest.raises(FixtureProviderError) as caught:
        parse_fixture_text("f.json", "[" + inner + "]", enclosing=2)
    assert f"limit of {MAX_DEPTH} levels" in caught.value.message
    assert caught.value.column == MAX_DEPTH - 1


def test_a_directory_is_invalid_fixture_not_os_error(tmp_path: Path) -> None:
    error = rejection(tmp_path)
    assert str(tmp_path) in str(error)


@pytest.mark.parametrize(("data", "line", "column"), [("", 1, 1), ("  \n\n ", 3, 2)])
def test_empty_file_is_rejected(tmp_path: Path, data: str, line: int, column: int) -> None:
    assert_located(write(tmp_path, data), line, column)


# -- lines and columns -------------------------------------------------------------------


def test_line_and_column_are_right_in_a_multiline_file(tmp_path: Path) -> None:
    text = '{\n  "schemaVersion": 1,\n  "responses": [\n    {"records": [NaN]}\n  ]\n}\n'
    error = assert_located(write(tmp_path, text), 4, 18)
    assert error.path == "/responses/0/records/0"


def test_crlf_line_endings_count_one_line_each(tmp_path: Path) -> None:
    text = '{\r\n  "a": 1,\r\n  "a": 2\r\n}'
    assert_located(write(tmp_path, text), 3, 3)


def test_column_counts_characters_before_the_token(tmp_path: Path) -> None:
    # Each "é" is one character (two bytes): NaN is character 16, byte 18.
    assert_located(write(tmp_path, '{"\u00e9\u00e9": 1, "x": NaN}'), 1, 16)


@pytest.mark.parametrize(
    ("text", "offset", "expected"),
    [
        ("abc", 0, (1, 1)),
        ("abc", 2, (1, 3)),
        ("a\nbc", 1, (1, 2)),
        ("a\nbc", 2, (2, 1)),
        ("a\nbc", 3, (2, 2)),
        ("\n\n\nx", 3, (4, 1)),
        ("ab\r\ncd", 5, (2, 2)),
        ("", 0, (1, 1)),
    ],
)
def test_line_and_column(text: str, offset: int, expected: tuple[int, int]) -> None:
    assert line_and_column(text, offset) == expected


# -- parse_json --------------------------------------------------------------------------


def test_parse_json_offsets_point_at_each_values_start() -> None:
    text = ROUNDTRIP_PATH.read_text(encoding="utf-8")
    offsets: dict[str, int] = {}
    value = parse_json(text, offsets)
    expected = pointer_values(value)
    assert set(offsets) == set(expected)
    decoder = json.JSONDecoder()
    for path, offset in offsets.items():
        assert decoder.raw_decode(text, offset)[0] == expected[path], path


def test_parse_json_offsets_escape_pointer_keys_and_cover_empty_containers() -> None:
    text = '\n {"a/b": {"~c": [10, {}, []]},\n  "": "x"}'
    offsets: dict[str, int] = {}
    parse_json(text, offsets)
    assert offsets == {
        "": text.index("{"),
        "/a~1b": text.index('{"~c"'),
        "/a~1b/~0c": text.index("[10"),
        "/a~1b/~0c/0": text.index("10"),
        "/a~1b/~0c/1": text.index("{}"),
        "/a~1b/~0c/2": text.index("[]"),
        "/": text.index('"x"'),
    }


def test_parse_json_without_offsets_returns_the_value() -> None:
    assert parse_json('{"a": [1, 2.5, "s", true, false, null]}') == {
        "a": [1, 2.5, "s", True, False, None]
    }


def test_parse_json_reports_the_second_duplicate_key_offset() -> None:
    text = '{"a": 1,\n "a": 2}'
    with pytest.raises(JsonSyntaxError) as caught:
        parse_json(text)
    assert caught.value.offset == text.rindex('"a"')
    assert caught.value.path == "/a"


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ('{"schemaVersion": 1, "responses": [\n  {"records": [1,\n  ]}]}', 2, 17),
        ('{"schemaVersion": 1,\n "responses": [],\n}', 2, 17),
    ],
)
def test_a_trailing_comma_is_named_and_located_at_the_comma(
    text: str, line: int, column: int
) -> None:
    with pytest.raises(JsonSyntaxError) as caught:
        parse_json(text)
    assert "trailing comma" in caught.value.message
    assert line_and_column(text, caught.value.offset) == (line, column)


@pytest.mark.parametrize("key", ["\u0663", "03", "+3"])
def test_an_object_key_that_only_looks_like_an_index_locates_no_response(key: str) -> None:
    # "\u0663" is ARABIC-INDIC DIGIT THREE: a digit to ``\\d``, not an index to a pointer.
    text = '{"schemaVersion": 1, "responses": {"' + key + '": {"records": [NaN]}}}'
    with pytest.raises(FixtureProviderError) as caught:
        parse_fixture_text("f.json", text)
    error = caught.value
    assert error.path == f"/responses/{key}/records/0"
    assert (error.response_index, error.record_index) == (None, None)
