"""``course-fixture record``: a foreground recording proxy that says where it is, prints a
line per recorded call, and writes the fixture on Ctrl-C (SIGINT) or SIGTERM; run as a
real subprocess against a local upstream."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from contextlib import AbstractContextManager
from pathlib import Path

import httpx2
import openai
import pytest

from course._cli import COMMANDS
from course.vendors._gemini import ROUTES_SHOWN

from .helpers import child_env, command_running, stop
from .record_helpers import OPENAI_KEY, Reply, events, recording, upstream

ROOT = Path(__file__).resolve().parent.parent

RUNNER = """
import sys
from course._cli import main
sys.exit(main(["record", *sys.argv[1:]]))
"""


def recording_cli(*args: str) -> AbstractContextManager[tuple[subprocess.Popen[str], str, str]]:
    """The command running in a subprocess, its base URL, and the banner it printed."""
    return command_running(RUNNER, r"through (http://\S+) \(Ctrl-C to write and stop\)", *args)


def test_record_is_a_command() -> None:
    assert "record" in COMMANDS


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_record_prints_its_urls_a_line_per_call_and_writes_on_ctrl_c(
    tmp_path: Path, how: signal.Signals
) -> None:
    output = tmp_path / "fixture.json"
    body = recording("openai-chat", "tool_call")
    with upstream(Reply(events(body))) as (server, _):
        args = ("-o", str(output), "--openai-upstream", server.url + "/", "--timing")
        with recording_cli(*args) as (process, url, banner):
            with openai.OpenAI(base_url=url + "/v1", api_key=OPENAI_KEY, max_retries=0) as client:
                stream = client.chat.completions.create(model="m", messages=[], stream=True)
                assert [c.choices[0].finish_reason for c in stream if c.choices][-1] == (
                    "tool_calls"
                )
            models = httpx2.get(url + "/v1/models").json()  # as serve answers it
            assert models["data"][0]["id"] == "course-fixture"
            status, out, err = stop(process, how)
    assert (status, err) == (0, "")
    assert f"POST {url}/v1/chat/completions -> {server.url}/v1/chat/completions" in banner
    assert f"POST {url}/v1/messages -> https://api.anthropic.com/v1/messages" in banner
    assert f'OpenAI(base_url="{url}/v1")' in banner
    assert f'Anthropic(base_url="{url}")' in banner
    google = "https://generativelanguage.googleapis.com"
    assert f"POST {url}{ROUTES_SHOWN} -> {google}{ROUTES_SHOWN}" in banner
    assert f'genai.Client(http_options=types.HttpOptions(base_url="{url}"))' in banner
    log = [re.sub(r"^\d\d:\d\d:\d\d ", "", line) for line in out.splitlines()]
    assert log == [
        "call 1: POST /v1/chat/completions -> 200: 3 records, toolCall",
        f"wrote 1 response to {output}",
    ]
    fixture = json.loads(output.read_text())
    assert fixture["schemaVersion"] == 2
    assert all("delay" in record for record in fixture["responses"][0]["records"])
    assert OPENAI_KEY[:8] not in output.read_text()


def test_an_answer_that_cannot_be_imported_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    output = tmp_path / "fixture.json"
    with (
        upstream(Reply(events(recording("openai-chat", "no_usage")))) as (server, _),
        recording_cli("-o", str(output), "--openai-upstream", server.url) as (process, url, _),
    ):
        httpx2.post(url + "/v1/chat/completions", json={"stream": True})
        status, out, err = stop(process, signal.SIGINT)
    assert status == 1
    assert "not imported: RECORDING_MISSING_USAGE" in out
    assert err.splitlines()[0].startswith(
        "call 1 (POST /v1/chat/completions):19:1: RECORDING_MISSING_USAGE"
    )
    assert err.splitlines()[-1] == f"nothing written to {output}"
    assert not output.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-o", "f.json", "--openai-upstream", "ftp://x"), "must be an http or https URL"),
        (("-o", "f.json", "--port", "70000"), "port must be from 0 to 65535"),
        (("-o", ""), "path must not be empty"),
    ],
)
def test_a_bad_option_exits_2_saying_why(args: tuple[str, ...], message: str) -> None:
    process = subprocess.run(
        [sys.executable, "-W", "error", "-c", RUNNER, *args],
        cwd=ROOT,
        env=child_env(PYTHONPATH=str(ROOT), NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert process.returncode == 2
    assert message in process.stderr


def test_without_an_output_it_is_a_usage_error() -> None:
    process = subprocess.run(
        [sys.executable, "-c", RUNNER],
        cwd=ROOT,
        env=child_env(PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert process.returncode == 2
    assert "-o/--output" in process.stderr
