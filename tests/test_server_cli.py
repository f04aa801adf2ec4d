"""``course-fixture serve``: a foreground server that says where it is, logs each
request, and stops cleanly on Ctrl-C (SIGINT) and SIGTERM; run as a real subprocess."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import openai
import pytest

from .helpers import ROUNDTRIP_PATH, child_env

ROOT = Path(__file__).resolve().parent.parent

# The command's own interface (HELP, add_arguments, run), as the CLI registry drives it.
RUNNER = """
import argparse, sys
from course._cli import serve as command
parser = argparse.ArgumentParser(prog="course-fixture serve")
command.add_arguments(parser)
sys.exit(command.run(parser.parse_args(sys.argv[1:])))
"""


@contextmanager
def serving(*args: str) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """The command running in a subprocess, its base URL, and the banner it printed."""
    process = subprocess.Popen(
        [sys.executable, "-W", "error", "-c", RUNNER, *args],
        cwd=ROOT,
        env=child_env(PYTHONPATH=str(ROOT), NO_COLOR="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        match = re.search(r"on (http://\S+) \(Ctrl-C to stop\)", first)
        assert match is not None, first + process.stderr.read()  # type: ignore[union-attr]
        # Read the whole banner here: communicate() later reads the pipe, not this buffer.
        banner = [first]
        while not banner[-1].lstrip().startswith("Anthropic:"):
            banner.append(process.stdout.readline())
        yield process, match.group(1), "".join(banner)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)


def stop(process: subprocess.Popen[str], how: signal.Signals) -> tuple[int, str, str]:
    if process.poll() is None:
        process.send_signal(how)
    out, err = process.communicate(timeout=30)
    return process.returncode, out, err


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_serve_prints_its_urls_logs_each_request_and_stops_cleanly(how: signal.Signals) -> None:
    with serving(str(ROUNDTRIP_PATH)) as (process, url, banner):
        with openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0) as client:
            completion = client.chat.completions.create(model="m", messages=[])
            assert completion.choices[0].message.tool_calls is not None
            assert [model.id for model in client.models.list()] == ["course-fixture"]
            with pytest.raises(openai.NotFoundError) as missing:
                client.embeddings.create(model="m", input="x")
            assert missing.value.request_id == "request-3"
        body = httpx2.post(url + "/v1/messages", json={"stream": True}).text
        assert "The sum is 42." in body
        status, out, err = stop(process, how)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert f'OpenAI(base_url="{url}/v1", api_key="test")' in banner
    assert f'Anthropic(base_url="{url}", api_key="test")' in banner
    assert f"OPENAI_BASE_URL={url}/v1" in banner
    assert f"ANTHROPIC_BASE_URL={url}" in banner
    for path in ("/v1/chat/completions", "/v1/responses", "/v1/messages"):
        assert f"POST {url}{path}" in banner
    assert f"GET  {url}/v1/models" in banner
    log = [
        re.sub(r"^\d\d:\d\d:\d\d ", "", line)
        for line in lines
        if re.match(r"\d\d:\d\d:\d\d ", line)
    ]
    assert sorted(log) == [  # each line is written once its request is done
        "GET /v1/models -> 200 models",
        "POST /v1/chat/completions -> 200 response 0: complete (toolCall, not streamed)",
        "POST /v1/embeddings -> 404 not found",
        "POST /v1/messages -> 200 stream, response 1: complete (stop, 1 chunk)",
    ]
    assert lines[-1] == "stopped after 2 requests; 0 responses left"


def test_ctrl_c_while_a_client_reads_aborts_its_stream(tmp_path: Path) -> None:
    # Over a second of streaming: Ctrl-C comes long before the end.
    long = tmp_path / "long.json"
    records: list[object] = [{"type": "response_start", "responseId": "r", "role": "assistant"}]
    records += [{"type": "text_delta", "text": "word "}] * 20_000
    records.append(
        {
            "type": "response_end",
            "responseId": "r",
            "stopReason": "stop",
            "usage": {"inputTokens": 1, "outputTokens": 1},
        }
    )
    long.write_text(json.dumps({"schemaVersion": 1, "responses": [{"records": records}]}))
    with (
        serving(str(long)) as (process, url, _),
        httpx2.stream("POST", url + "/v1/chat/completions", json={"stream": True}) as reply,
    ):
        lines = reply.iter_lines()
        assert next(lines).startswith("data: ")
        process.send_signal(signal.SIGINT)
        rest = [line for line in lines if line]
        # The one Ctrl-C stops the server: wait for it, sending no second one (which,
        # arriving while it shuts down, would rightly end it at once).
        out, err = process.communicate(timeout=30)
        status = process.returncode
    assert (status, err) == (0, "")
    # The client gets the format's error and the end of the stream, never a cut.
    assert rest[-1] == "data: [DONE]"
    assert "PROVIDER_ABORTED" in rest[-2]
    assert "stopped after 1 request" in out


def test_a_file_that_is_not_a_fixture_is_refused_with_its_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schemaVersion": 3, "responses": []}))
    completed = subprocess.run(
        [sys.executable, "-c", RUNNER, str(bad)],
        cwd=ROOT,
        env=child_env(PYTHONPATH=str(ROOT), NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert "PROVIDER_INVALID_FIXTURE" in completed.stdout
    assert str(bad) in completed.stdout


def test_a_port_in_use_is_a_clear_error() -> None:
    with serving(str(ROUNDTRIP_PATH)) as (first, url, _):
        port = url.rsplit(":", 1)[1]
        completed = subprocess.run(
            [sys.executable, "-c", RUNNER, str(ROUNDTRIP_PATH), "--port", port],
            cwd=ROOT,
            env=child_env(PYTHONPATH=str(ROOT)),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        stop(first, signal.SIGINT)
    assert completed.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in completed.stderr


def test_a_host_that_is_no_host_name_is_a_usage_error_not_a_traceback() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", RUNNER, str(ROUNDTRIP_PATH), "--host", "a..b"],
        cwd=ROOT,
        env=child_env(PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert "a..b" in completed.stderr
