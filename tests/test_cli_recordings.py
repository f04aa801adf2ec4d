"""``course-fixture validate`` and ``replay`` take recordings: SSE files and VCR cassettes.

A recording is imported on the fly (``course.vendors.load_recordings``) and then checked
as any fixture is. One the importer refuses is a file that is not a fixture: its line
reads ``FILE:LINE:COLUMN: CODE message``, as the importer's own error does.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course._cli import EXIT_FAILED, EXIT_NOT_A_FIXTURE, EXIT_OK, main
from course.vendors import RecordingError, load_recordings

from .helpers import ROUNDTRIP_PATH
from .vendor_helpers import RECORDINGS


def chunk(delta: dict[str, object], finish: str | None = None, **extra: object) -> str:
    """One ``data:`` event of an OpenAI Chat Completions stream."""
    data = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return f"data: {json.dumps(data)}\n\n"


USAGE = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
TEXT_STREAM = (
    chunk({"role": "assistant", "content": ""})
    + chunk({"content": "Hello"})
    + chunk({"content": "!"})
    + chunk({}, "stop", usage=USAGE)
    + "data: [DONE]\n\n"
)
ERROR_STREAM = (
    chunk({"role": "assistant", "content": ""})
    + chunk({"content": "The first"})
    + chunk({"content": ""}, "error", error={"code": "server_error", "message": "gone"})
    + "data: [DONE]\n\n"
)
BROKEN_STREAM = TEXT_STREAM.replace('"Hello"', "NaN")


def write(tmp_path: Path, name: str, content: str) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return str(path)


CHAT_URI = "https://api.openai.com/v1/chat/completions"
OTHER_URI = "https://tools.example.com/v1/weather"


def cassette(*bodies: str | tuple[str, str]) -> str:
    """A VCR cassette (as vcrpy writes one) whose responses have these bodies, each
    posted to Chat Completions, or (URI, body) to that URI."""
    interactions = [
        {
            "request": {"method": "POST", "uri": body[0] if isinstance(body, tuple) else CHAT_URI},
            "response": {
                "status": {"code": 200},
                "body": {"string": body[1] if isinstance(body, tuple) else body},
            },
        }
        for body in bodies
    ]
    # JSON is YAML: no need to write YAML by hand.
    return json.dumps({"interactions": interactions, "version": 1})


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    status = main(list(argv))
    return status, capsys.readouterr().out.splitlines()


def test_an_sse_recording_is_imported_and_validated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "text.sse", TEXT_STREAM)
    status, rows = run(capsys, "validate", path)
    assert status == EXIT_OK
    assert rows == [
        f"{path}: response 0: ok (stop, 2 chunks)",
        "1 file, 1 response: 1 ok, 0 failed",
    ]


def test_a_recording_that_imports_but_fails_when_streamed_is_a_failed_response(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "error.sse", ERROR_STREAM)
    status, rows = run(capsys, "validate", path)
    assert status == EXIT_FAILED
    assert rows[0].startswith(f"{path}: response 0: PROVIDER_TRANSPORT_ERROR ")


def test_a_refused_recording_says_where_as_the_importer_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "broken.sse", BROKEN_STREAM)
    with pytest.raises(RecordingError) as caught:
        load_recordings(path)
    status, rows = run(capsys, "validate", path)
    assert status == EXIT_NOT_A_FIXTURE
    assert rows == [str(caught.value), "1 file (1 not a fixture), 0 responses: 0 ok, 0 failed"]
    assert rows[0].startswith(f"{path}:3:")
    assert " RECORDING_INVALID_JSON " in rows[0]
    status, (line,) = run(capsys, "validate", "--json", path)
    finding = json.loads(line)
    assert status == EXIT_NOT_A_FIXTURE
    assert (finding["status"], finding["code"], finding["response"]) == (
        "invalid",
        "RECORDING_INVALID_JSON",
        None,
    )
    assert (finding["line"], finding["column"]) == (caught.value.line, caught.value.column)
    assert finding["message"] == caught.value.message


def test_a_refused_recording_among_other_files_keeps_the_columns_aligned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = write(tmp_path, "broken.sse", BROKEN_STREAM)
    status, rows = run(capsys, "validate", str(ROUNDTRIP_PATH), broken)
    assert status == EXIT_NOT_A_FIXTURE
    assert (
        len({row.index(" ok ") if " ok " in row else row.index(" RECORDING") for row in rows[:-1]})
        == 1
    )
    assert rows[-1] == "2 files (1 not a fixture), 2 responses: 2 ok, 0 failed"


def test_a_cassette_becomes_one_response_per_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        "cassette.yaml",
        cassette(TEXT_STREAM, (OTHER_URI, '{"not": "a stream"}'), ERROR_STREAM),
    )
    status, rows = run(capsys, "validate", path)
    assert status == EXIT_FAILED
    assert rows[0] == f"{path}: response 0: ok (stop, 2 chunks)"
    assert rows[1].startswith(f"{path}: response 1: PROVIDER_TRANSPORT_ERROR ")
    assert rows[-1] == "1 file, 2 responses: 1 ok, 1 failed"


def test_a_cassette_without_a_stream_is_not_a_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "empty.yml", cassette((OTHER_URI, '{"not": "a stream"}')))
    status, rows = run(capsys, "validate", path)
    assert status == EXIT_NOT_A_FIXTURE
    assert rows[0].startswith(f"{path}: RECORDING_UNREADABLE ")


def test_replay_plays_a_recording(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "text.sse", TEXT_STREAM)
    status, rows = run(capsys, "replay", path)
    assert status == EXIT_OK
    assert rows[0] == f"replaying {path} (1 response)"
    assert '[0] "Hello"' in "\n".join(rows)
    assert rows[-1] == "1 call: 1 ok"
    status, rows = run(capsys, "replay", write(tmp_path, "broken.sse", BROKEN_STREAM))
    assert status == EXIT_NOT_A_FIXTURE
    assert " RECORDING_INVALID_JSON " in rows[0]


def test_a_folder_stands_for_its_fixtures_and_sse_recordings_not_other_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "a.json", ROUNDTRIP_PATH.read_text(encoding="utf-8"))
    write(tmp_path, "nested/b.sse", TEXT_STREAM)
    write(tmp_path, "ci.yaml", "jobs: {}\n")  # a folder's YAML is seldom a cassette
    status, rows = run(capsys, "validate", str(tmp_path))
    assert status == EXIT_OK
    assert rows[-1] == "2 files, 3 responses: 3 ok, 0 failed"
    assert not any("ci.yaml" in row for row in rows)


# -- import: standard input, the output file -------------------------------------------------

NO_USAGE_STREAM = TEXT_STREAM.replace(f', "usage": {json.dumps(USAGE)}', "")


def run_import(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, list[str]]:
    status = main(["import", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err.splitlines()


def feed_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (TEXT_STREAM.encode(), "<stdin>: openai-chat, 4 records, stop"),
        (
            json.dumps(
                {
                    "id": "chatcmpl-9",
                    "object": "chat.completion",
                    "choices": [
                        {"index": 0, "message": {"content": "Hi"}, "finish_reason": "stop"}
                    ],
                    "usage": USAGE,
                }
            ).encode(),
            "<stdin>: openai-chat, 3 records, stop",
        ),
    ],
    ids=["sse", "json-body"],
)
def test_import_dash_reads_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, data: bytes, line: str
) -> None:
    feed_stdin(monkeypatch, data)
    status, out, err = run_import(capsys, "-")
    assert (status, err) == (EXIT_OK, [line])
    assert len(json.loads(out)["responses"]) == 1


def test_import_dash_names_standard_input_in_its_refusals(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    feed_stdin(monkeypatch, BROKEN_STREAM.encode())
    status, out, err = run_import(capsys, "-")
    assert (status, out) == (EXIT_FAILED, "")
    assert err[0].startswith("<stdin>:3:") and " RECORDING_INVALID_JSON " in err[0]


@pytest.mark.parametrize("spelling", ["same", "relative", "symlink", "hardlink"])
def test_import_refuses_an_output_that_is_one_of_its_inputs(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    spelling: str,
) -> None:
    recording = Path(write(tmp_path, "rec.sse", TEXT_STREAM))
    monkeypatch.chdir(tmp_path)
    output = {
        "same": str(recording),
        "relative": "./sub/../rec.sse",
        "symlink": "link.sse",
        "hardlink": "hard.sse",
    }[spelling]
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.sse").symlink_to(recording)
    os.link(recording, tmp_path / "hard.sse")
    status, out, err = run_import(capsys, str(recording), "-o", output)
    assert (status, out) == (EXIT_NOT_A_FIXTURE, "")
    assert err == [
        f"course-fixture import: the output {output} is the recording {recording}; "
        "refusing to overwrite it"
    ]
    assert recording.read_text(encoding="utf-8") == TEXT_STREAM


def test_import_refuses_an_output_that_will_be_an_input_not_yet_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "later.sse")
    status, _, err = run_import(capsys, missing, "-o", missing)
    assert status == EXIT_NOT_A_FIXTURE
    assert "refusing to overwrite it" in err[0]
    assert not os.path.exists(missing)


def test_a_failed_write_leaves_the_previous_fixture_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = write(tmp_path, "rec.sse", TEXT_STREAM)
    output = tmp_path / "fixture.json"
    output.write_text("the previous fixture", encoding="utf-8")
    renames: list[tuple[str, str]] = []

    def failing_replace(source: str, target: str) -> None:
        renames.append((source, target))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    status, _, err = run_import(capsys, recording, "-o", str(output))
    assert status == EXIT_NOT_A_FIXTURE
    assert err[-1] == f"{output}: cannot write: No space left on device"
    assert output.read_text(encoding="utf-8") == "the previous fixture"
    # The fixture went to a temporary file in the same folder, removed once the rename failed.
    ((temporary, target),) = renames
    assert (os.path.dirname(temporary), target) == (str(tmp_path), str(output))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["fixture.json", "rec.sse"]


def test_the_output_is_written_whole_keeping_its_mode_and_through_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recording = write(tmp_path, "rec.sse", TEXT_STREAM)
    target = tmp_path / "fixtures" / "chat.json"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "chat.json"
    link.symlink_to(target)
    status, _, _ = run_import(capsys, recording, "-o", str(link))
    assert status == EXIT_OK
    assert link.is_symlink()
    assert json.loads(target.read_text(encoding="utf-8"))["schemaVersion"] == 1
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(path.name for path in target.parent.iterdir()) == ["chat.json"]


def test_an_output_in_a_folder_that_does_not_exist_cannot_be_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recording = write(tmp_path, "rec.sse", TEXT_STREAM)
    output = str(tmp_path / "missing" / "fixture.json")
    status, _, err = run_import(capsys, recording, "-o", output)
    assert status == EXIT_NOT_A_FIXTURE
    assert err[-1].startswith(f"{output}: cannot write: ")


# -- validate and replay take the import's options ------------------------------------------------


def test_validate_and_replay_of_a_stream_without_usage_take_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "no_usage.sse", NO_USAGE_STREAM)
    status, rows = run(capsys, "validate", path)
    assert status == EXIT_NOT_A_FIXTURE
    assert " RECORDING_MISSING_USAGE " in rows[0] and "--usage IN,OUT" in rows[0]
    status, rows = run(capsys, "validate", "--usage", "3,4", path)
    assert (status, rows[0]) == (EXIT_OK, f"{path}: response 0: ok (stop, 2 chunks)")
    status, rows = run(capsys, "replay", "--usage", "3,4", path)
    assert status == EXIT_OK
    assert any("usage 3 in / 4 out" in row for row in rows)


def test_validate_and_replay_take_the_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "text.sse", TEXT_STREAM)
    for command in ("validate", "replay"):
        status, rows = run(capsys, command, "--format", "anthropic", path)
        assert status == EXIT_NOT_A_FIXTURE
        assert f"{path}:1:1: RECORDING_UNKNOWN_FORMAT " in rows[0]
        assert run(capsys, command, "--format", "openai-chat", path)[0] == EXIT_OK


def test_a_bad_usage_option_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "text.sse", TEXT_STREAM)
    assert main(["validate", "--usage", "3", path]) == EXIT_NOT_A_FIXTURE
    assert "expected IN,OUT" in capsys.readouterr().err


# -- a cassette's report -------------------------------------------------------------------


def test_importing_a_cassette_reports_each_model_call_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        "calls.yaml",
        cassette(TEXT_STREAM, (OTHER_URI, "{}"), (OTHER_URI, "{}"), ERROR_STREAM),
    )
    status, out, err = run_import(capsys, path)
    assert status == EXIT_OK
    assert err == [
        f"{path} (interaction 0): openai-chat, 4 records, stop",
        f"{path} (interaction 3): openai-chat, 3 records, transport_error server_error",
        f"{path}: 2 model calls imported, 2 other interactions skipped",
    ]
    assert len(json.loads(out)["responses"]) == 2


def test_the_readme_shows_a_real_cassette_import(tmp_path: Path) -> None:
    """The README's cassette example is the installed script's own output."""
    shutil.copy(RECORDINGS / "cassettes" / "agent.yaml", tmp_path / "agent.yaml")
    command = "course-fixture import agent.yaml -o fixture.json"
    script = Path(sys.executable).with_name("course-fixture")
    completed = subprocess.run(
        [str(script), *command.split()[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert completed.returncode == EXIT_OK, completed.stderr
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```console\n(.*?)```", readme, flags=re.DOTALL)
    shown = [block for block in blocks if block.startswith(f"$ {command}\n")]
    assert shown == [f"$ {command}\n{completed.stderr}"]
