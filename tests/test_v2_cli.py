"""``course-fixture`` and schema version 2: ``validate`` judges every delay and never
sleeps, ``replay`` waits (unless ``--no-delay``) and prints the new chunk kinds and stop
reasons, and ``schema`` prints one schema for both versions (or one, with
``--schema-version``) that holds to the parser.

Whether a command waits is seen through ``asyncio.sleep`` as the stream calls it: a
spy that records each wait, or one that fails the test at the first wait, so a
command that waited an hour would fail at once instead of hanging."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Sequence
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from course._cli import EXIT_FAILED, EXIT_NOT_A_FIXTURE, EXIT_OK, main
from course._schema import fixture_schema

from .helpers import ROUNDTRIP_PATH, end, position, start, text, tool

HOUR = 3600
SLEEP = asyncio.sleep


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().out


def write(directory: Path, data: object, name: str = "v2.json") -> str:
    path = directory / name
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return str(path)


def v2(*responses: Sequence[object]) -> dict[str, object]:
    return {"schemaVersion": 2, "responses": [{"records": r} for r in responses]}


THINKING = [
    {**start("r-think"), "model": "claude-test", "delay": HOUR},
    {"type": "thinking_delta", "text": "Let me see", "delay": HOUR},
    {"type": "thinking_signature", "signature": "sig-" + "x" * 100},
    {"type": "redacted_thinking", "data": "opaque"},
    text("Done."),
    {
        **tool("c-1", "add", left=1),
        "argumentFragments": ['{"left"', ": 1}"],
        "signature": "gem",
    },
    {"type": "tool_call_incomplete", "id": "c-2", "name": "write", "argumentFragments": ['{"pa']},
    {
        **end("r-think", "length", {"inputTokens": 9, "outputTokens": 7, "cacheReadTokens": 4}),
        "providerStopReason": "max_tokens",
    },
]
REFUSAL = [
    start("r-no"),
    {"type": "refusal_delta", "text": "I can't help."},
    end("r-no", "refusal"),
]
RATE_LIMITED = [{"type": "transport_error", "message": "slow down", "status": 429, "retryAfter": 2}]


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail at the first real wait of a stream."""

    def refuse(delay: float, *args: object) -> Coroutine[object, object, None]:
        if delay:
            pytest.fail(f"the command waited {delay} s")
        return SLEEP(0)

    monkeypatch.setattr(asyncio, "sleep", refuse)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every real wait of a stream, each shortened to nothing."""
    seen: list[float] = []

    def record(delay: float, *args: object) -> Coroutine[object, object, None]:
        if delay:
            seen.append(delay)
        return SLEEP(0)

    monkeypatch.setattr(asyncio, "sleep", record)
    return seen


# -- validate ---------------------------------------------------------------------------------


@pytest.mark.usefixtures("no_sleep")
def test_validate_judges_every_delay_and_never_sleeps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, v2(THINKING, REFUSAL, RATE_LIMITED))
    status, out = cli(capsys, "validate", path)
    assert status == EXIT_FAILED  # the rate-limited response fails, as it should
    lines = out.splitlines()
    assert "response 0: ok (length, 6 chunks)" in lines[0]
    assert "response 1: ok (refusal, 1 chunk)" in lines[1]
    assert "PROVIDER_TRANSPORT_ERROR" in lines[2] and "429" in lines[2]


@pytest.mark.usefixtures("no_sleep")
def test_validate_points_at_a_bad_delay_and_a_bad_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = v2(
        [start(), {**text("a"), "delay": -7}, end()],
        [start(), end(usage={"inputTokens": 1, "outputTokens": 2, "cache_read_tokens": 5})],
    )
    path = write(tmp_path, data)
    content = Path(path).read_text(encoding="utf-8")
    status, out = cli(capsys, "validate", "--json", path)
    assert status == EXIT_FAILED
    first, second = map(json.loads, out.splitlines())
    assert (first["code"], first["path"]) == (
        "PROVIDER_MALFORMED_EVENT",
        "/responses/0/records/1/delay",
    )
    assert f"{first['line']}:{first['column']}" == position(content, "-7")
    assert second["path"] == "/responses/1/records/1/usage"


def test_validate_in_version_one_points_at_a_version_two_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = {"schemaVersion": 1, "responses": [{"records": [start(), {**text("a"), "delay": 1}]}]}
    path = write(tmp_path, data)
    content = Path(path).read_text(encoding="utf-8")
    status, out = cli(capsys, "validate", "--json", path)
    assert status == EXIT_FAILED
    finding = json.loads(out)
    assert finding["path"] == "/responses/0/records/1/delay"
    assert f"{finding['line']}:{finding['column']}" == position(content, '"delay"')  # the key


# -- replay -----------------------------------------------------------------------------------


def test_replay_waits_for_each_delay_and_prints_the_new_chunks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], waits: list[float]
) -> None:
    status, out = cli(capsys, "replay", write(tmp_path, v2(THINKING, REFUSAL)))
    assert status == EXIT_OK
    assert waits == [HOUR, HOUR]
    lines = out.splitlines()
    chunks = [line.split(None, 1)[1] for line in lines if line.lstrip().startswith("chunk")]
    assert chunks == [
        'thinkingDelta [0] "Let me see"',
        'thinkingSignature [0] "sig-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."',
        'redactedThinking [1] "opaque"',
        'textDelta  [2] "Done."',
        'toolCall   [3] c-1 add {"left": 1} (signature "gem")',
        'incompleteToolCall [4] c-2 write "{\\"pa" (cut short)',
        'refusalDelta [0] "I can\'t help."',
    ]
    responses = [line for line in lines if line.lstrip().startswith("response ")]
    assert responses[0].split()[1] == "length"
    assert "usage 9 in / 7 out (4 cache read)" in responses[0]
    assert "model claude-test, provider stop reason max_tokens" in responses[0]
    assert responses[1].split()[1] == "refusal"


@pytest.mark.usefixtures("no_sleep")
def test_replay_no_delay_never_sleeps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = cli(capsys, "replay", "--no-delay", write(tmp_path, v2(THINKING)))
    assert status == EXIT_OK
    assert out.splitlines()[-1] == "1 call: 1 ok"


@pytest.mark.usefixtures("no_sleep")
def test_replay_json_gives_the_new_values_to_dict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = cli(
        capsys, "replay", "--json", "--no-delay", write(tmp_path, v2(THINKING, RATE_LIMITED))
    )
    assert status == EXIT_FAILED
    objects = [json.loads(line) for line in out.splitlines()]
    kinds = [o["chunk"]["type"] for o in objects if "chunk" in o]
    assert kinds == [
        "thinkingDelta",
        "thinkingSignature",
        "redactedThinking",
        "textDelta",
        "toolCall",
        "incompleteToolCall",
    ]
    response = next(o["response"] for o in objects if "response" in o)
    assert (response["stopReason"], response["model"], response["providerStopReason"]) == (
        "length",
        "claude-test",
        "max_tokens",
    )
    assert response["usage"] == {"inputTokens": 9, "outputTokens": 7, "cacheReadTokens": 4}
    error = next(o["error"] for o in objects if "error" in o)
    assert error["code"] == "PROVIDER_TRANSPORT_ERROR"


def test_replay_of_a_version_one_fixture_prints_as_before(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out = cli(capsys, "replay", "--no-delay", str(ROUNDTRIP_PATH))
    assert status == EXIT_OK
    assert "usage 12 in / 8 out" in out and "cache" not in out and "model" not in out


# -- schema -----------------------------------------------------------------------------------


def test_schema_prints_one_schema_for_both_versions(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = cli(capsys, "schema")
    assert status == EXIT_OK
    schema = json.loads(out)
    assert schema == fixture_schema()
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    roundtrip = json.loads(ROUNDTRIP_PATH.read_text(encoding="utf-8"))
    assert validator.is_valid(roundtrip)
    assert validator.is_valid({**roundtrip, "schemaVersion": 2})  # v1 records are v2 too
    assert validator.is_valid(v2(THINKING, REFUSAL, RATE_LIMITED))
    # Chosen by schemaVersion: version 2's shapes are refused in version 1.
    assert not validator.is_valid({**v2(THINKING), "schemaVersion": 1})
    assert not validator.is_valid({**v2(THINKING), "schemaVersion": 3})


@pytest.mark.parametrize("version", [1, 2])
def test_schema_version_prints_one_version_alone(
    version: int, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = cli(capsys, "schema", "--schema-version", str(version))
    assert status == EXIT_OK
    schema = json.loads(out)
    assert schema == fixture_schema(version)
    assert schema["properties"]["schemaVersion"]["const"] == version
    validator = Draft202012Validator(schema)
    assert validator.is_valid(v2(THINKING)) is (version == 2)
    assert not validator.is_valid({**v2(REFUSAL), "schemaVersion": 3 - version})


def test_schema_version_refuses_other_versions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--schema-version", "3"]) == EXIT_NOT_A_FIXTURE
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize(
    "record",
    [
        {**text("a"), "delay": -1},
        {**text("a"), "delay": 3601},
        {"type": "transport_error", "message": "m", "status": 200},
        {"type": "transport_error", "message": "m", "retryAfter": -1},
        {"type": "tool_call_incomplete", "id": "c", "name": "n", "argumentFragments": [1]},
        {"type": "tool_call_incomplete", "id": "c", "name": "n", "argumentFragments": [], "x": 1},
        {**tool("c"), "argumentFragments": []},
        {**tool("c"), "signature": ""},
        {"type": "thinking_signature", "signature": ""},
        {"type": "redacted_thinking", "data": ""},
        {**end(), "providerStopReason": None},
        {**end(), "stopReason": "toolCall"},
        end(
            usage={
                "inputTokens": 1,
                "outputTokens": 1,
                "cacheReadTokens": 1,
                "cache_read_tokens": 1,
            }
        ),
        {**start(), "model": ""},
    ],
)
def test_a_shape_the_schema_refuses_the_adapter_refuses(
    record: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records: list[object] = [record] if record["type"] == "response_start" else [start(), record]
    data = v2(records)
    assert not Draft202012Validator(fixture_schema()).is_valid(data)
    status, _ = cli(capsys, "validate", write(tmp_path, data))
    assert status == EXIT_FAILED
