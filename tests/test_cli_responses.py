"""``course-fixture``: every response gets its own finding, and each points at the right token.

One broken response never hides the others: a response that is not strict JSON, or that
the adapter's constructor refuses, is a finding of its own and every other response is
still streamed. Labels follow the error's place (``response N:`` inside response N,
``fixture:`` outside every response), whatever found the error. An error about a key
(an unknown one, the second alias of a usage count) points at the key; an error about
a value, at the value. Loading takes the fast path; positions are looked up only for
what is printed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import course._json_text
from course import FixtureProviderAdapter
from course._cli import EXIT_FAILED, EXIT_NOT_A_FIXTURE, EXIT_OK, _fixtures, main
from course._json_text import TextPositions

from .helpers import ROUNDTRIP_PATH
from .helpers import position as at

START = '{"type": "response_start", "responseId": "r", "role": "assistant"}'
TEXT = '{"type": "text_delta", "text": "hi"}'
END = '{"type": "response_end", "responseId": "r", "stopReason": "stop", "usage": {"inputTokens": 1, "outputTokens": 2}}'  # noqa: E501
GOOD = f'{{"records": [{START}, {TEXT}, {END}]}}'


def fixture_text(*responses: str, before: str = '"schemaVersion": 1') -> str:
    """A fixture written one response per line."""
    return "{" + before + ',\n "responses": [\n  ' + ",\n  ".join(responses) + "\n ]\n}\n"


def write(tmp_path: Path, content: str, name: str = "fixture.json") -> str:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return str(path)


def findings(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, object]]]:
    status = main(["validate", "--json", *argv])
    return status, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def where(finding: dict[str, object]) -> str:
    return f"{finding['line']}:{finding['column']}"


# -- each response on its own --------------------------------------------------------------


def test_responses_the_constructor_refuses_do_not_hide_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = fixture_text(
        GOOD,
        '{"records": {}}',
        GOOD,
        '{"records": [], "note": 1}',
        GOOD,
    )
    status, found = findings(capsys, write(tmp_path, content))
    assert status == EXIT_NOT_A_FIXTURE
    assert [(f["response"], f["status"]) for f in found] == [
        (0, "ok"),
        (1, "invalid"),
        (2, "ok"),
        (3, "invalid"),
        (4, "ok"),
    ]
    assert where(found[1]) == at(content, "{}")
    assert found[1]["message"] == (
        "Expected `records` to be an array (or, in code, an async iterable), got object"
    )
    assert where(found[3]) == at(content, '"note"')
    assert found[3]["message"] == "Response 3 has unknown key `note` (allowed: `records`)"
    assert [where(f) for f in found if f["status"] == "ok"] == [
        at(content, GOOD, n) for n in (1, 2, 3)
    ]


def test_responses_that_are_not_strict_json_do_not_hide_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = fixture_text(
        f'{{"records": [{START}, {TEXT},]}}',
        GOOD,
        f'{{"records": [{START}, {{"type": "text_delta", "text": NaN}}]}}',
        '{"records": [], "records": []}',
        f'{{"records": [{START}, {TEXT}]}}',
    )
    status, found = findings(capsys, write(tmp_path, content))
    assert status == EXIT_NOT_A_FIXTURE
    summary = [(f["response"], f["status"], f["code"], where(f)) for f in found]
    assert summary == [
        (0, "invalid", "PROVIDER_INVALID_FIXTURE", at(content, ",]")),
        (1, "ok", None, at(content, GOOD)),
        (2, "invalid", "PROVIDER_INVALID_FIXTURE", at(content, "NaN")),
        (3, "invalid", "PROVIDER_INVALID_FIXTURE", at(content, '"records"', 5)),
        (4, "failed", "PROVIDER_MISSING_TERMINAL", at(content, f"[{START}, {TEXT}]")),
    ]
    assert found[0]["message"] == (
        "Expected another item after this comma (a trailing comma is not JSON)"
    )
    assert found[2]["path"] == "/responses/2/records/1/text"
    assert found[3]["message"] == "Duplicate key 'records' in one object"


def test_a_response_nested_past_the_limit_counts_the_levels_around_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A record sits at depth 5: 252 more levels inside it reach 256, 253 pass it.
    deep = "[" * 252 + "]" * 252
    deeper = "[" * 253 + "]" * 253
    content = fixture_text(f'{{"records": [{deep}]}}', f'{{"records": [{deeper}]}}', GOOD)
    status, found = findings(capsys, write(tmp_path, content))
    assert status == EXIT_NOT_A_FIXTURE
    assert [(f["response"], f["status"], f["code"]) for f in found] == [
        (0, "failed", "PROVIDER_MALFORMED_EVENT"),  # a record that is not an object
        (1, "invalid", "PROVIDER_INVALID_FIXTURE"),
        (2, "ok", None),
    ]
    assert found[1]["message"] == "Nesting is deeper than the limit of 256 levels"
    line = content.splitlines()[3]
    # The records' own bracket, then 253 more: the last one is too deep.
    assert where(found[1]) == f"4:{line.index('[' * 254) + 254}"


_TWO_GOOD = fixture_text(GOOD, GOOD)
_FRAME_BREAKS = {
    # a trailing comma in the responses array itself, after a good response
    "trailing comma in responses": (_TWO_GOOD.replace("}\n ]", "},\n ]"), ",\n ]", 1),
    # a broken response, and a fixture broken after it too: the first error, in text order
    "broken response, then a broken fixture": (
        fixture_text(GOOD, '{"records": [1,]}').replace("\n}\n", ',\n "schemaVersion": 1\n}\n'),
        ",]",
        1,
    ),
    # a broken fixture, then a broken response
    "broken fixture, then a broken response": (
        fixture_text(GOOD, '{"records": [1,]}', before='"schemaVersion": 1, "x": NaN'),
        "NaN",
        1,
    ),
}


@pytest.mark.parametrize("case", sorted(_FRAME_BREAKS))
def test_when_the_fixture_itself_is_broken_its_first_error_is_all_there_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    content, needle, occurrence = _FRAME_BREAKS[case]
    status, found = findings(capsys, write(tmp_path, content))
    assert status == EXIT_NOT_A_FIXTURE
    (finding,) = found
    assert where(finding) == at(content, needle, occurrence)


def test_a_broken_fixture_frame_after_responses_hides_nothing_that_could_be_trusted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = fixture_text(GOOD, '{"records": {}}', before='"schemaVersion": 3')
    status, found = findings(capsys, write(tmp_path, content))
    assert status == EXIT_NOT_A_FIXTURE
    # The version is wrong: what a response means is not known, so none is judged.
    ((finding,),) = [found]
    assert finding["response"] is None and finding["path"] == "/schemaVersion"


def test_refused_responses_past_the_cap_stop_the_file_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fixtures, "MAX_REFUSED_RESPONSES", 3)
    content = fixture_text(*['{"records": {}}'] * 5, GOOD)
    status, found = findings(capsys, write(tmp_path, content))
    assert status == EXIT_NOT_A_FIXTURE
    assert [f["response"] for f in found] == [None, 0, 1, 2]
    assert found[0]["message"] == (
        "Stopped after 3 refused responses; the rest of the file was not checked"
    )


def test_many_refused_responses_cost_about_one_construction_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    constructed: list[int] = []

    def counting(fixture: object) -> object:
        constructed.append(1)
        return FixtureProviderAdapter(fixture)

    monkeypatch.setattr("course._cli._fixtures.FixtureProviderAdapter", counting)
    content = fixture_text(*[GOOD, '{"records": {}}'] * 20)
    status, found = findings(capsys, write(tmp_path, content))
    assert status == EXIT_NOT_A_FIXTURE
    assert [f["status"] for f in found] == ["ok", "invalid"] * 20
    assert len(constructed) == 20 + 2  # the first try, one per refusal, the final one


def test_replay_of_a_file_with_refused_responses_prints_each_and_plays_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = fixture_text('{"records": {}}', GOOD, '{"records": [1,]}')
    path = write(tmp_path, content)
    assert main(["replay", path]) == EXIT_NOT_A_FIXTURE
    rows = capsys.readouterr().out.splitlines()
    assert [row.split(": ")[1] for row in rows] == ["response 0", "response 2"]
    assert not any("call " in row for row in rows)


# -- labels follow the place -----------------------------------------------------------------

_INSIDE_RESPONSE_1 = {
    "trailing comma in records": ('{"records": [1,]}', ",]"),
    "trailing comma in an object": ('{"records": [],}', ",}"),
    "duplicate key": ('{"records": [{"a": 1, "a": 2}]}', '"a": 2'),
    "NaN": ('{"records": [NaN]}', "NaN"),
    "overflow": ('{"records": [1e400]}', "1e400"),
    "control character": ('{"records": ["a\x01"]}', "\x01"),
    "unknown key": ('{"records": [], "extra": 1}', '"extra"'),
    "records not a list": ('{"records": 1}', "1}"),
    "missing terminal": ('{"records": []}', "[]}"),
}


@pytest.mark.parametrize("case", sorted(_INSIDE_RESPONSE_1))
def test_every_kind_of_error_inside_a_response_is_labelled_by_that_response(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    response, needle = _INSIDE_RESPONSE_1[case]
    content = fixture_text(GOOD, response, GOOD)
    path = write(tmp_path, content)
    status = main(["validate", path])
    rows = capsys.readouterr().out.splitlines()
    assert status in {EXIT_FAILED, EXIT_NOT_A_FIXTURE}
    assert [re.split(r": +", row)[1] for row in rows[:-1]] == [
        "response 0",
        "response 1",
        "response 2",
    ]
    assert rows[1].startswith(f"{path}:{at(content, needle)}: ")


_OUTSIDE_EVERY_RESPONSE = {
    "trailing comma in the fixture": (fixture_text(GOOD).replace("\n}\n", ",\n}\n"), ",\n}"),
    "duplicate key of the fixture": (
        fixture_text(GOOD, before='"schemaVersion": 1, "schemaVersion": 1'),
        '"schemaVersion"',
    ),
    "NaN in the fixture": (fixture_text(GOOD, before='"schemaVersion": NaN'), "NaN"),
    "unknown key of the fixture": (fixture_text(GOOD, before='"schemaVersion": 1, "x": 1'), '"x"'),
    "wrong version": (fixture_text(GOOD, before='"schemaVersion": 3'), "3,"),
}


@pytest.mark.parametrize("case", sorted(_OUTSIDE_EVERY_RESPONSE))
def test_every_kind_of_error_outside_the_responses_is_labelled_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    content, needle = _OUTSIDE_EVERY_RESPONSE[case]
    path = write(tmp_path, content)
    assert main(["validate", path]) == EXIT_NOT_A_FIXTURE
    rows = capsys.readouterr().out.splitlines()
    occurrence = 2 if case.startswith("duplicate") else 1
    assert re.match(rf"{re.escape(path)}:{at(content, needle, occurrence)}: +fixture: ", rows[0])
    assert len(rows) == 2


# -- keys and values -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("records", "needle", "path"),
    [
        # an unknown field of a record: its key
        (
            f'{START}, {{"type": "text_delta", "text": "x", "colour": "red"}}, {END}',
            '"colour"',
            "/responses/0/records/1/colour",
        ),
        # an unknown field of a usage object: its key
        (
            f"{START}, " + END.replace('"outputTokens": 2}', '"outputTokens": 2, "cached": 0}'),
            '"cached"',
            "/responses/0/records/1/usage/cached",
        ),
        # both aliases of a count: the second one's key, as for a duplicate key
        (
            f"{START}, "
            + END.replace('"outputTokens": 2}', '"outputTokens": 2, "input_tokens": 1}'),
            '"input_tokens"',
            "/responses/0/records/1/usage/input_tokens",
        ),
        # a wrong value of a known field: the value
        (
            f'{START}, {{"type": "text_delta", "text": 7}}, {END}',
            "7",
            "/responses/0/records/1/text",
        ),
        # an unknown type: the value
        (
            f'{START}, {{"type": "tool_result"}}, {END}',
            '"tool_result"',
            "/responses/0/records/1/type",
        ),
        # a usage count out of range: the value
        (f"{START}, " + END.replace('"outputTokens": 2', '"outputTokens": -2'), "-2", None),
    ],
)
def test_an_error_about_a_key_points_at_the_key_and_about_a_value_at_the_value(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    records: str,
    needle: str,
    path: str | None,
) -> None:
    content = fixture_text(f'{{"records": [{records}]}}')
    status, (finding,) = findings(capsys, write(tmp_path, content))
    assert status == EXIT_FAILED
    assert finding["code"] in {"PROVIDER_MALFORMED_EVENT", "PROVIDER_UNKNOWN_EVENT"}
    assert where(finding) == at(content, needle)
    if path is not None:
        assert finding["path"] == path


def test_an_unknown_key_of_the_fixture_points_at_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = fixture_text(GOOD, before='"schemaVersion": 1, "responses0": "x"')
    status, (finding,) = findings(capsys, write(tmp_path, content))
    assert status == EXIT_NOT_A_FIXTURE
    assert where(finding) == at(content, '"responses0"')


def test_keys_inside_tool_call_arguments_are_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = '{"type": "tool_call", "id": "c", "name": "f", "arguments": {"colour": "red"}}'
    end = END.replace('"stop"', '"tool_call"')
    content = fixture_text(f'{{"records": [{START}, {tool}, {end}]}}')
    status, (finding,) = findings(capsys, write(tmp_path, content))
    assert status == EXIT_OK and finding["status"] == "ok"


# -- the fast path, and positions only when printed --------------------------------------------


def test_validate_reads_good_files_without_the_positioned_parser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = course._json_text.parse_positioned

    def spy(text: str, *args: object, **kwargs: object) -> object:
        calls.append(text)
        return real(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(course._json_text, "parse_positioned", spy)
    assert main(["validate", str(ROUNDTRIP_PATH)]) == EXIT_OK
    assert calls == []
    broken = write(tmp_path, fixture_text(GOOD, '{"records": [1,]}', GOOD))
    assert main(["validate", broken]) == EXIT_NOT_A_FIXTURE
    # Once to locate the error in the file, once in the response that holds it.
    assert len(calls) == 2
    capsys.readouterr()


def test_positions_are_looked_up_only_for_what_is_printed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[object] = []

    def counting(text: str) -> object:
        made.append(text)
        return TextPositions(text)

    monkeypatch.setattr("course._cli._fixtures.TextPositions", counting)
    assert main(["validate", "--quiet", str(ROUNDTRIP_PATH)]) == EXIT_OK
    assert made == []
    assert main(["validate", str(ROUNDTRIP_PATH)]) == EXIT_OK
    assert len(made) == 1  # one per file, however many responses it has
    capsys.readouterr()
