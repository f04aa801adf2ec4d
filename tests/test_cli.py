"""``course-fixture``: every exit status, positions an editor can jump to, output formats."""

from __future__ import annotations

import io
import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from course._cli import EXIT_BROKEN_PIPE, EXIT_FAILED, EXIT_NOT_A_FIXTURE, EXIT_OK, demo, main
from course._schema import fixture_schema

from .helpers import ROUNDTRIP_PATH, position

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "agent_loop.py"
ANSI = "\x1b["


class TTY(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write(directory: Path, name: str, content: str) -> str:
    path = directory / name
    path.write_text(content, encoding="utf-8")
    return str(path)


def lines_of(out: str) -> list[str]:
    return out.splitlines()


# A fixture laid out one record per line, with one broken thing per response.
BROKEN = """\
{
  "schemaVersion": 1,
  "responses": [
    {"records": [
      {"type": "response_start", "responseId": "r-0", "role": "assistant"},
      {"type": "text_delta", "text": "partial"},
      {"type": "response_end", "responseId": "r-0", "stopReason": "stop",
       "usage": {"input_tokens": -1, "outputTokens": 2}}
    ]},
    {"records": [
      {"type": "response_start", "responseId": "r-1", "role": "assistant"},
      {"type": "tool_result", "id": "x"}
    ]},
    {"records": [
      {"type": "response_start", "responseId": "r-2", "role": "assistant"},
      {"type": "tool_call", "id": "call-1", "arguments": {}}
    ]},
    {"records": [
      {"type": "response_start", "responseId": "r-3", "role": "assistant"}
    ]},
    {"records": [
      {"type": "response_start", "responseId": "r-4", "role": "assistant"},
      {"type": "text_delta", "text": "fine"},
      {"type": "response_end", "responseId": "r-4", "stopReason": "stop",
       "usage": {"inputTokens": 1, "outputTokens": 2}}
    ]}
  ]
}
"""


R3_RECORDS = '[\n      {"type": "response_start", "responseId": "r-3"'
R4_RESPONSE = '{"records": [\n      {"type": "response_start", "responseId": "r-4"'


def test_validate_bundled_fixture_prints_one_ok_line_per_response(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = cli(capsys, "validate", str(ROUNDTRIP_PATH))
    assert status == EXIT_OK
    assert err == ""
    name = re.escape(str(ROUNDTRIP_PATH))
    first, second, summary = lines_of(out)
    # The two response objects start at line 4 and line 31, column 5.
    assert re.fullmatch(rf"{name}:4:5: +response 0: ok \(toolCall, 1 chunk\)", first)
    assert re.fullmatch(rf"{name}:31:5: +response 1: ok \(stop, 1 chunk\)", second)
    assert summary == "1 file, 2 responses: 2 ok, 0 failed"


def test_validate_points_at_record_and_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "broken.json", BROKEN)
    status, out, _ = cli(capsys, "validate", path)
    assert status == EXIT_FAILED
    found = {
        int(match.group(2)): (match.group(1), match.group(3))
        for match in re.finditer(rf"{re.escape(path)}:(\d+:\d+): +response (\d): (\S+)", out)
    }
    assert found == {
        # usage level: the offending count itself
        0: (position(BROKEN, "-1"), "PROVIDER_MALFORMED_EVENT"),
        # record level: the unknown type's value
        1: (position(BROKEN, '"tool_result"'), "PROVIDER_UNKNOWN_EVENT"),
        # record level: a missing field points at its record
        2: (position(BROKEN, '{"type": "tool_call"'), "PROVIDER_MALFORMED_EVENT"),
        # response level: a missing terminal points at the records array
        3: (position(BROKEN, R3_RECORDS), "PROVIDER_MISSING_TERMINAL"),
        # an ok response points at the response object
        4: (position(BROKEN, R4_RESPONSE), "ok"),
    }
    assert "(at /responses/0/records/2/usage/input_tokens)" in out
    assert lines_of(out)[-1] == "1 file, 5 responses: 1 ok, 4 failed"


@pytest.mark.parametrize(
    "case",
    [
        # fixture level: a wrong schema version points at the value
        ('{"schemaVersion": 3, "responses": []}', "3", "fixture", "/schemaVersion"),
        # fixture level: not an object at all
        ("[1, 2]", "[", "fixture", ""),
        # response level: an unknown key of a response, pointed at the key
        (
            '{"schemaVersion": 1,\n "responses": [\n  {"records": [], "note": "x"}]}',
            '"note"',
            "response 0",
            "/responses/0/note",
        ),
        # response level: records that are not a list
        (
            '{"schemaVersion": 1, "responses": [{"records": []}, {"records": {}}]}',
            "{}",
            "response 1",
            "/responses/1/records",
        ),
    ],
)
def test_validate_points_at_fixture_and_response_shape_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: tuple[str, str, str, str]
) -> None:
    content, needle, subject, pointer = case
    path = write(tmp_path, "shape.json", content)
    status, out, _ = cli(capsys, "validate", path)
    assert status == EXIT_NOT_A_FIXTURE
    (line,) = [row for row in lines_of(out) if f" {subject}: PROVIDER_INVALID_FIXTURE " in row]
    where = f"{path}:{position(content, needle)}:"
    assert line.startswith(where), line
    assert re.match(rf"{re.escape(where)} +{subject}: PROVIDER_INVALID_FIXTURE ", line)
    assert line.endswith(f"(at {pointer})") if pointer else "(at" not in line
    assert lines_of(out)[-1].startswith("1 file (1 not a fixture), ")


def test_validate_reports_strict_loading_failures_with_their_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = '{\n  "schemaVersion": 1,\n  "schemaVersion": 1,\n  "responses": []\n}'
    duplicate = write(tmp_path, "duplicate.json", content)
    not_json = write(tmp_path, "not-json.json", "{\n  oops\n}")
    status, out, _ = cli(capsys, "validate", duplicate, not_json)
    assert status == EXIT_NOT_A_FIXTURE
    first, second, summary = lines_of(out)
    assert first.startswith(f"{duplicate}:3:3: ")  # the second occurrence of the key
    assert "PROVIDER_INVALID_FIXTURE Duplicate key 'schemaVersion'" in first
    assert second.startswith(f"{not_json}:2:3: ")
    assert summary.startswith("2 files (2 not fixtures)")


def test_validate_unreadable_file_exits_2_without_a_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing.json")
    status, out, _ = cli(capsys, "validate", missing)
    assert status == EXIT_NOT_A_FIXTURE
    assert re.match(rf"{re.escape(missing)}: +fixture: PROVIDER_INVALID_FIXTURE cannot read", out)


def test_not_a_fixture_outranks_a_failed_response(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = write(tmp_path, "broken.json", BROKEN)
    bad = write(tmp_path, "bad.json", "[]")
    status, out, _ = cli(capsys, "validate", str(ROUNDTRIP_PATH), broken, bad)
    assert status == EXIT_NOT_A_FIXTURE
    assert lines_of(out)[-1] == "3 files (1 not a fixture), 7 responses: 3 ok, 4 failed"


def test_validate_columns_are_aligned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "broken.json", BROKEN)
    _, out, _ = cli(capsys, "validate", path, str(ROUNDTRIP_PATH))
    rows = lines_of(out)[:-1]
    assert len(rows) == 7
    assert len({row.index("response ") for row in rows}) == 1
    assert len({row.index(": ", row.index("response ")) for row in rows}) == 1


def test_validate_folder_means_the_json_files_under_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "nested").mkdir()
    text = ROUNDTRIP_PATH.read_text(encoding="utf-8")
    write(tmp_path, "a.json", text)
    write(tmp_path / "nested", "b.json", text)
    write(tmp_path, "notes.txt", "not a fixture, not looked at")
    status, out, _ = cli(capsys, "validate", str(tmp_path))
    assert status == EXIT_OK
    assert lines_of(out)[-1] == "2 files, 4 responses: 4 ok, 0 failed"


def test_validate_json_prints_one_object_per_response(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "broken.json", BROKEN)
    status, out, _ = cli(capsys, "validate", "--json", path)
    assert status == EXIT_FAILED
    objects = [json.loads(line) for line in lines_of(out)]
    assert [o["response"] for o in objects] == [0, 1, 2, 3, 4]
    assert [o["status"] for o in objects] == ["failed"] * 4 + ["ok"]
    usage = objects[0]
    line, column = position(BROKEN, "-1").split(":")
    assert usage == {
        "file": path,
        "line": int(line),
        "column": int(column),
        "response": 0,
        "status": "failed",
        "code": "PROVIDER_MALFORMED_EVENT",
        "message": usage["message"],
        "path": "/responses/0/records/2/usage/input_tokens",
        "stopReason": None,
        "chunks": 1,  # the text delta was delivered before the failure
    }
    assert objects[4]["stopReason"] == "stop" and objects[4]["code"] is None


def test_validate_json_for_a_file_that_is_not_a_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "bad.json", '{"schemaVersion": 1}')
    status, out, _ = cli(capsys, "validate", "--json", path)
    assert status == EXIT_NOT_A_FIXTURE
    (finding,) = [json.loads(line) for line in lines_of(out)]
    assert finding["status"] == "invalid"
    assert finding["code"] == "PROVIDER_INVALID_FIXTURE"
    assert (finding["line"], finding["column"], finding["path"]) == (1, 1, "")


def test_validate_quiet_prints_nothing_on_success(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "validate", "--quiet", str(ROUNDTRIP_PATH)) == (EXIT_OK, "", "")
    assert cli(capsys, "validate", "-q", "--json", str(ROUNDTRIP_PATH)) == (EXIT_OK, "", "")


def test_validate_quiet_prints_only_the_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "broken.json", BROKEN)
    status, out, _ = cli(capsys, "validate", "-q", path, str(ROUNDTRIP_PATH))
    assert status == EXIT_FAILED
    rows = lines_of(out)
    assert len(rows) == 4
    assert all("PROVIDER_" in row and " ok " not in row for row in rows)


def test_fixture_data_cannot_break_lines_or_inject_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = json.dumps(
        {
            "schemaVersion": 1,
            "responses": [
                {
                    "records": [
                        {"type": "response_start", "responseId": "r", "role": "assistant"},
                        {"type": "text_delta", "text": "x", "a\nb\u001b[31m": 1},
                    ]
                }
            ],
        }
    )
    path = write(tmp_path, "hostile.json", content)
    status, out, _ = cli(capsys, "validate", path)
    assert status == EXIT_FAILED
    assert ANSI not in out
    row, _ = lines_of(out)
    assert "unknown field `a\\nb\\x1b[31m`" in row


def test_text_that_the_terminal_cannot_encode_is_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A lone surrogate is valid JSON ("\\ud800") and a valid Python str, but not UTF-8.
    content = ROUNDTRIP_PATH.read_text(encoding="utf-8").replace("The sum is 42.", "\\ud800")
    path = write(tmp_path, "surrogate.json", content)
    status, out, _ = cli(capsys, "replay", path)
    assert status == EXIT_OK
    assert '[0] "\\ud800"' in out


class ClosedPipe(io.StringIO):
    """A stdout whose reader went away."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_stops_the_output_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["validate", str(ROUNDTRIP_PATH)]) == EXIT_BROKEN_PIPE
    assert capsys.readouterr().err == ""


# -- colour and progress ---------------------------------------------------------------------


def test_colour_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    terminal = TTY()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["validate", str(ROUNDTRIP_PATH)]) == EXIT_OK
    out = terminal.getvalue()
    assert "\x1b[32mok\x1b[0m" in out
    # Colour never breaks the alignment: the plain text is the same as without it.
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    monkeypatch.setenv("NO_COLOR", "1")
    again = TTY()
    monkeypatch.setattr(sys, "stdout", again)
    assert main(["validate", str(ROUNDTRIP_PATH)]) == EXIT_OK
    assert again.getvalue() == plain


@pytest.mark.parametrize("command", [["validate"], ["replay"]])
def test_no_colour_with_no_color_set_even_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    terminal = TTY()
    monkeypatch.setattr(sys, "stdout", terminal)
    main([*command, str(ROUNDTRIP_PATH)])
    assert terminal.getvalue() and ANSI not in terminal.getvalue()


def test_no_colour_when_stdout_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    _, out, _ = cli(capsys, "replay")
    assert out and ANSI not in out


def test_progress_line_on_a_terminal_when_validating_many_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = ROUNDTRIP_PATH.read_text(encoding="utf-8")
    for index in range(12):
        write(tmp_path, f"f{index:02}.json", text)
    terminal = TTY()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["validate", "-q", str(tmp_path)]) == EXIT_OK
    progress = terminal.getvalue()
    assert "\rvalidating 1/12 files" in progress
    assert "\rvalidating 12/12 files" in progress
    assert progress.endswith("\r")  # the line is wiped before the results
    assert capsys.readouterr().out == ""


def test_no_progress_line_when_stderr_is_not_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = ROUNDTRIP_PATH.read_text(encoding="utf-8")
    for index in range(12):
        write(tmp_path, f"f{index:02}.json", text)
    assert cli(capsys, "validate", "-q", str(tmp_path)) == (EXIT_OK, "", "")


# -- replay ----------------------------------------------------------------------------------


def test_replay_defaults_to_the_bundled_round_trip(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "replay")
    assert status == EXIT_OK and err == ""
    assert "provider-tool-roundtrip.json (2 responses)" in lines_of(out)[0]
    assert 'call-add-001 add {"left": 20, "right": 22}' in out
    assert '"The sum is 42."' in out
    assert "response-tool-001, message message-response-tool-001 (1 block)" in out
    assert "usage 30 in / 6 out" in out
    assert lines_of(out)[-1] == "2 calls: 2 ok"


def test_no_arguments_means_replay(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys) == cli(capsys, "replay")


def test_replay_json_lines_use_each_values_to_dict(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "replay", "--json", str(ROUNDTRIP_PATH))
    assert status == EXIT_OK
    objects = [json.loads(line) for line in lines_of(out)]
    assert [(o["call"], next(iter(o.keys() - {"call", "requestId"}))) for o in objects] == [
        (1, "chunk"),
        (1, "response"),
        (2, "chunk"),
        (2, "response"),
    ]
    assert objects[0]["chunk"] == {
        "type": "toolCall",
        "id": "call-add-001",
        "name": "add",
        "arguments": {"left": 20, "right": 22},
        "contentIndex": 0,
    }
    assert objects[3]["response"]["stopReason"] == "stop"
    assert objects[3]["response"]["usage"] == {"inputTokens": 30, "outputTokens": 6}
    assert objects[3]["response"]["requestId"] == objects[3]["requestId"] == "request-2"


def test_replay_of_a_failing_fixture_prints_code_and_position_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "broken.json", BROKEN)
    status, out, _ = cli(capsys, "replay", path)
    assert status == EXIT_FAILED
    assert '[0] "partial"' in out  # the chunk delivered before the failure
    assert f"PROVIDER_MALFORMED_EVENT {path}:{position(BROKEN, '-1')}:" in out
    assert f"PROVIDER_MISSING_TERMINAL {path}:{position(BROKEN, R3_RECORDS)}:" in out
    assert lines_of(out)[-1] == "5 calls: 1 ok, 4 failed"


def test_replay_json_of_a_failing_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "broken.json", BROKEN)
    status, out, _ = cli(capsys, "replay", "--json", path)
    assert status == EXIT_FAILED
    errors = [o["error"] for o in map(json.loads, lines_of(out)) if "error" in o]
    assert [e["code"] for e in errors] == [
        "PROVIDER_MALFORMED_EVENT",
        "PROVIDER_UNKNOWN_EVENT",
        "PROVIDER_MALFORMED_EVENT",
        "PROVIDER_MISSING_TERMINAL",
    ]
    assert f"{errors[1]['line']}:{errors[1]['column']}" == position(BROKEN, '"tool_result"')


def test_replay_of_a_file_that_is_not_a_fixture_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = '{"schemaVersion": 1, "responses": [], "x": NaN}'
    path = write(tmp_path, "bad.json", content)
    status, out, _ = cli(capsys, "replay", path)
    assert status == EXIT_NOT_A_FIXTURE
    assert f"{path}:{position(content, 'NaN')}:" in out and "PROVIDER_INVALID_FIXTURE" in out
    status, out, _ = cli(capsys, "replay", "--json", path)
    assert status == EXIT_NOT_A_FIXTURE
    assert json.loads(out)["error"]["code"] == "PROVIDER_INVALID_FIXTURE"


# -- schema, demo, usage, entry points ---------------------------------------------------------


def test_schema_command_prints_the_generated_schema(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "schema")
    assert status == EXIT_OK
    assert json.loads(out) == fixture_schema()


def test_demo_runs_the_agent_loop_offline(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "demo")
    assert status == EXIT_OK
    assert lines_of(out) == [
        "user: What is 20 + 22?",
        'tool add({"left": 20, "right": 22}) = 42, result for call-add-001',
        "The sum is 42.",
    ]


def test_example_agent_loop_prints_what_the_demo_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    example = capsys.readouterr().out
    assert cli(capsys, "demo")[1] == example
    assert example.endswith("The sum is 42.\n")


def test_the_example_runs_the_demos_own_loop_not_a_copy() -> None:
    namespace = runpy.run_path(str(EXAMPLE))
    assert namespace["agent_loop"] is demo.agent_loop


def test_the_example_runs_as_a_program_from_the_repository_root() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [sys.executable, "examples/agent_loop.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines()[-1] == "The sum is 42."


def test_usage_errors_exit_2_and_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, "frobnicate")
    assert status == EXIT_NOT_A_FIXTURE and "invalid choice" in err
    status, _, err = cli(capsys, "validate")
    assert status == EXIT_NOT_A_FIXTURE and "FILE" in err
    status, out, _ = cli(capsys, "--help")
    assert status == EXIT_OK and "validate" in out and "exit status" in out


def test_python_dash_m_course_replays_the_bundled_fixture() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    completed = subprocess.run(
        [sys.executable, "-m", "course"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == EXIT_OK, completed.stderr
    assert "call-add-001" in completed.stdout
    assert '"The sum is 42."' in completed.stdout
    assert completed.stdout.splitlines()[-1] == "2 calls: 2 ok"


def test_validate_of_a_folder_without_fixtures_is_not_a_silent_pass(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _out, err = cli(capsys, "validate", str(tmp_path))
    assert status == 2
    assert "no fixture files found" in err


def test_a_loading_error_reports_its_response_once_located(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    name = write(
        tmp_path,
        "dup.json",
        '{"schemaVersion": 1, "responses": [{"records": [{"type": "a", "type": "b"}]}]}',
    )
    status, out, _ = cli(capsys, "validate", "--json", name)
    assert status == 2
    finding = json.loads(out.splitlines()[0])
    assert finding["response"] == 0
    assert (finding["line"], finding["column"]) == (1, 63)
    assert "(line" not in finding["message"]
