"""The README's recipe for capturing a stream, proven end to end.

The official SDKs' ``with_streaming_response`` hands out the raw bytes of a streamed
response; written to a file, they are a recording. Here the "provider" is ``serve`` over
the bundled fixture, so the capture must import back to the fixture's own records, and
``course-fixture import`` must write a fixture that replays the same way.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any, cast

import anthropic
import openai
import pytest

from course import load_fixture, thaw
from course._cli import main
from course.vendors import import_recording, load_recordings, serve

BUNDLED = Path(str(files("course") / "fixtures" / "provider-tool-roundtrip.json"))


def camel_usage(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with usage written in camelCase, as an import writes it."""
    return [camel_record(record) for record in records]


def camel_record(record: dict[str, Any]) -> dict[str, Any]:
    usage = record.get("usage")
    if usage is None:
        return record
    counts = {
        "inputTokens": usage.get("inputTokens", usage.get("input_tokens")),
        "outputTokens": usage.get("outputTokens", usage.get("output_tokens")),
    }
    return {**record, "usage": counts}


def capture_openai_chat(base_url: str, path: Path) -> None:
    client = openai.OpenAI(base_url=base_url + "/v1", api_key="test", max_retries=0)
    with (
        client.chat.completions.with_streaming_response.create(
            model="gpt-x",
            messages=[{"role": "user", "content": "Hi"}],
            stream=True,
            stream_options={"include_usage": True},  # as from OpenAI: usage only when asked
        ) as response,
        path.open("wb") as file,
    ):
        for chunk in response.iter_bytes():
            file.write(chunk)
    client.close()


def capture_openai_responses(base_url: str, path: Path) -> None:
    client = openai.OpenAI(base_url=base_url + "/v1", api_key="test", max_retries=0)
    with (
        client.responses.with_streaming_response.create(
            model="gpt-x", input="Hi", stream=True
        ) as response,
        path.open("wb") as file,
    ):
        for chunk in response.iter_bytes():
            file.write(chunk)
    client.close()


def capture_anthropic(base_url: str, path: Path) -> None:
    client = anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0)
    with (
        client.messages.with_streaming_response.create(
            model="claude-x",
            max_tokens=100,
            messages=[{"role": "user", "content": "Hi"}],
            stream=True,
        ) as response,
        path.open("wb") as file,
    ):
        for chunk in response.iter_bytes():
            file.write(chunk)
    client.close()


CAPTURES = {
    "openai-chat": capture_openai_chat,
    "openai-responses": capture_openai_responses,
    "anthropic": capture_anthropic,
}


@pytest.mark.parametrize("format", sorted(CAPTURES))
def test_a_captured_stream_imports_back_to_the_served_records(format: str, tmp_path: Path) -> None:
    fixture = cast("dict[str, Any]", load_fixture(BUNDLED))
    paths = []
    with serve(fixture) as server:
        for index in range(2):
            path = tmp_path / f"{index}.sse"
            CAPTURES[format](server.url, path)
            paths.append(path)
    for path, response in zip(paths, fixture["responses"], strict=True):
        recording = import_recording(path.read_bytes(), format=format)
        assert recording.format == format
        assert recording.truncated is False
        assert thaw(recording.response)["records"] == camel_usage(response["records"])
    assert load_recordings(*paths)["responses"] == [
        {"records": camel_usage(response["records"])} for response in fixture["responses"]
    ]


def test_course_fixture_import_writes_a_fixture_validate_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve(load_fixture(BUNDLED)) as server:
        capture_anthropic(server.url, tmp_path / "tool.sse")
        capture_openai_chat(server.url, tmp_path / "text.sse")
    out = tmp_path / "fixture.json"
    status = main(
        ["import", "-o", str(out), str(tmp_path / "tool.sse"), str(tmp_path / "text.sse")]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.err.splitlines() == [
        f"{tmp_path / 'tool.sse'}: anthropic, 3 records, toolCall",
        f"{tmp_path / 'text.sse'}: openai-chat, 3 records, stop",
    ]
    written = json.loads(out.read_text())
    assert out.read_text().startswith('{\n  "schemaVersion": 1,')
    assert [r["records"][0]["responseId"] for r in written["responses"]] == [
        "response-tool-001",
        "response-text-001",
    ]
    assert main(["validate", "--quiet", str(out)]) == 0
