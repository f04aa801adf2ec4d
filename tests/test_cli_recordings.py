"""``course-fixture validate`` and ``replay`` take recordings: SSE files and VCR cassettes.

A recording is imported on the fly (``course.vendors.load_recordings``) and then checked
as any fixture is. One the importer refuses is a file that is not a fixture: its line
reads ``FILE:LINE:COLUMN: CODE message``, as the importer's own error does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course._cli import EXIT_FAILED, EXIT_NOT_A_FIXTURE, EXIT_OK, main
from course.vendors import RecordingError, load_recordings

from .helpers import ROUNDTRIP_PATH


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
