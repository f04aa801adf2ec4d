"""Shared test helpers: running coroutines, building fixtures, collecting streams."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from course import (
    AbortSignal,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
    CourseModelStream,
    FixtureProviderAdapter,
    FixtureProviderError,
)

T = TypeVar("T")

ROUNDTRIP_PATH = (
    Path(__file__).resolve().parent.parent
    / "course"
    / "fixtures"
    / ("provider-tool-roundtrip.json")
)


def run(coroutine: Coroutine[object, object, T]) -> T:
    """Run a coroutine on a fresh event loop in debug mode."""
    return asyncio.run(coroutine, debug=True)


def roundtrip() -> dict[str, object]:
    """A fresh plain copy of the checked-in round-trip fixture."""
    data: dict[str, object] = json.loads(ROUNDTRIP_PATH.read_text(encoding="utf-8"))
    return data


def start(response_id: str = "r-1") -> dict[str, object]:
    return {"type": "response_start", "responseId": response_id, "role": "assistant"}


def text(value: str) -> dict[str, object]:
    return {"type": "text_delta", "text": value}


def tool(call_id: str = "call-1", name: str = "add", **arguments: object) -> dict[str, object]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": dict(arguments)}


def end(
    response_id: str = "r-1",
    stop_reason: str = "stop",
    usage: dict[str, object] | None = None,
) -> dict[str, object]:
    return {
        "type": "response_end",
        "responseId": response_id,
        "stopReason": stop_reason,
        "usage": {"inputTokens": 1, "outputTokens": 2} if usage is None else usage,
    }


def fixture(*responses: list[object] | object) -> dict[str, object]:
    """A fixture whose responses hold the given record lists (or async sources)."""
    return {"schemaVersion": 1, "responses": [{"records": r} for r in responses]}


async def source_of(records: list[object]) -> AsyncIterator[object]:
    """An async record source yielding deep copies of ``records``."""
    for record in copy.deepcopy(records):
        yield record


class Outcome:
    """Everything one stream produced: chunks, then the response or the error."""

    def __init__(
        self,
        chunks: list[CourseModelChunk],
        response: CourseModelResponse | None,
        error: FixtureProviderError | None,
        result_error: FixtureProviderError | None,
    ) -> None:
        self.chunks = chunks
        self.response = response
        self.error = error
        self.result_error = result_error

    @property
    def code(self) -> str | None:
        return None if self.error is None else self.error.code.value


async def collect(stream: CourseModelStream) -> Outcome:
    """Iterate a stream to its end, then ask for its result: both paths."""
    chunks: list[CourseModelChunk] = []
    error: FixtureProviderError | None = None
    try:
        async for chunk in stream:
            chunks.append(chunk)
    except FixtureProviderError as exc:
        error = exc
    response: CourseModelResponse | None = None
    result_error: FixtureProviderError | None = None
    try:
        response = await stream.result()
    except FixtureProviderError as exc:
        result_error = exc
    return Outcome(chunks, response, error, result_error)


def stream_one(
    data: object, request_id: str = "req-1", signal: AbortSignal | None = None
) -> Outcome:
    """Build an adapter for ``data`` and collect its first response."""
    adapter = FixtureProviderAdapter(data)
    return run(collect(adapter.stream(CourseModelRequest(request_id), signal)))


async def settle(awaitable: Awaitable[T]) -> T:
    return await awaitable


async def failure_of(stream: CourseModelStream) -> FixtureProviderError:
    """The error that ``stream.result()`` raises (it must raise one)."""
    with pytest.raises(FixtureProviderError) as caught:
        await stream.result()
    return caught.value


async def turns(count: int = 12) -> None:
    """Let the event loop run ``count`` times; never a real sleep."""
    for _ in range(count):
        await asyncio.sleep(0)


class BlockingSource:
    """A class source: a start, a text, then a step that waits until cancelled."""

    def __init__(self) -> None:
        self.pulls = 0
        self.closes = 0

    def __aiter__(self) -> BlockingSource:
        return self

    async def __anext__(self) -> object:
        self.pulls += 1
        if self.pulls == 1:
            return start()
        if self.pulls == 2:
            return text("a")
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        self.closes += 1


Replayed = list[tuple[list[dict[str, object]], object]]
"""Per response: its chunks as plain dicts, then its response as a dict or its error code."""


async def replayed(fixture: object) -> Replayed:
    """Every response of ``fixture`` in turn: its chunks, then its response or its error code."""
    adapter = FixtureProviderAdapter(fixture)
    outcomes: Replayed = []
    for number in range(adapter.pending):
        outcome = await collect(adapter.stream(CourseModelRequest(f"request-{number}")))
        chunks: list[dict[str, object]] = [dict(chunk.to_dict()) for chunk in outcome.chunks]
        if outcome.response is not None:
            outcomes.append((chunks, outcome.response.to_dict()))
        else:
            assert outcome.error is not None
            outcomes.append((chunks, outcome.error.code))
    return outcomes


def position(content: str, needle: str, occurrence: int = 1) -> str:
    """``line:column`` (1-based) where the ``occurrence``-th ``needle`` starts."""
    offset = -1
    for _ in range(occurrence):
        offset = content.index(needle, offset + 1)
    line = content.count("\n", 0, offset) + 1
    column = offset - (content.rfind("\n", 0, offset) + 1) + 1
    return f"{line}:{column}"


def is_slow_step_report(record: logging.LogRecord) -> bool:
    """Whether ``record`` is asyncio debug mode's "Executing <Task ...> took 0.12 seconds".

    Such a report says how loaded the machine is, not what the code under test did.
    """
    return record.name == "asyncio" and str(record.msg).startswith("Executing %s took")


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a child Python process whose stderr a test reads.

    This process's, without asyncio debug mode (which development mode turns on too):
    its "Executing <Task ...> took 0.2 seconds" reports depend on how loaded the machine
    is, not on the code under test. Run the child with ``-W error`` to keep warnings
    fatal.
    """
    quiet = ("PYTHONASYNCIODEBUG", "PYTHONDEVMODE")
    env = {key: value for key, value in os.environ.items() if key not in quiet}
    return {**env, **extra}


@contextmanager
def command_running(
    runner: str, started: str, *args: str
) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """A foreground command (``runner``, Python source run with ``args``) in a
    subprocess, its base URL (the group of ``started``, a pattern its first line
    matches), and the banner it printed (up to its ``Gemini:`` line, its last)."""
    root = Path(__file__).resolve().parent.parent
    process = subprocess.Popen(
        [sys.executable, "-W", "error", "-c", runner, *args],
        cwd=root,
        env=child_env(PYTHONPATH=str(root), NO_COLOR="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        match = re.search(started, first)
        assert match is not None, first + process.stderr.read()  # type: ignore[union-attr]
        # Read the whole banner here: communicate() later reads the pipe, not this buffer.
        banner = [first]
        while banner[-1] and not banner[-1].lstrip().startswith("Gemini:"):
            banner.append(process.stdout.readline())
        yield process, match.group(1), "".join(banner)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)


def stop(process: subprocess.Popen[str], how: signal.Signals) -> tuple[int, str, str]:
    """Signal a running command (unless it ended), and its exit code, stdout and stderr."""
    if process.poll() is None:
        process.send_signal(how)
    out, err = process.communicate(timeout=30)
    return process.returncode, out, err
