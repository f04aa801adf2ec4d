"""Fixture files for the commands: load strictly, play every response, say where.

``load`` turns a file into an adapter (or into a finding, when the file is not a
fixture); ``play`` streams every queued response as an agent loop would; ``Fixture``
maps an error's JSON pointer back to a line and column of the file.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import as_file, files
from pathlib import Path
from typing import Final

from .._adapter import FixtureProviderAdapter
from .._errors import FixtureProviderError
from .._loading import read_fixture
from .._model import CourseModelChunk, CourseModelRequest, CourseModelResponse
from ._output import Finding, Status

__all__ = [
    "BUNDLED_FIXTURE",
    "Call",
    "Fixture",
    "bundled_fixture",
    "expand",
    "load",
    "outcome",
    "play",
]

BUNDLED_FIXTURE: Final = "provider-tool-roundtrip.json"


class Fixture:
    """A loaded fixture file: its adapter, and where each of its values starts."""

    __slots__ = ("_line_starts", "name", "offsets", "text")

    def __init__(self, name: str, text: str, offsets: dict[str, int]) -> None:
        self.name = name
        self.text = text
        self.offsets = offsets
        self._line_starts: list[int] | None = None

    def position(self, path: str | None) -> tuple[int, int] | tuple[None, None]:
        """The line and column of the value at ``path``, or of its nearest ancestor."""
        if path is None:
            return None, None
        parts = path.split("/")
        while True:
            offset = self.offsets.get("/".join(parts))
            if offset is not None:
                break
            if len(parts) <= 1:
                return None, None
            parts.pop()
        if self._line_starts is None:
            self._line_starts = [0, *(m.end() for m in re.finditer("\n", self.text))]
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def finding(self, error: FixtureProviderError, status: Status, chunks: int = 0) -> Finding:
        """``error`` as a finding of this file, located by its path."""
        line, column = self.position(error.path)
        return Finding(
            self.name,
            status,
            line,
            column,
            error.response_index,
            error.code.value,
            error.message,
            error.path,
            chunks=chunks,
        )


_LOADER_POSITION = re.compile(r"(\d+):(\d+): ")


def load(name: str) -> tuple[Fixture, FixtureProviderAdapter] | Finding:
    """Load strictly and construct the adapter; a file that is not a fixture is a Finding."""
    offsets: dict[str, int] = {}
    try:
        data, text = read_fixture(name, offsets)
    except FixtureProviderError as error:
        # The loader's message reads "FILE:LINE:COLUMN: why" (or "FILE: why").
        message = error.message
        line = column = None
        if message.startswith(name + ":"):
            message = message[len(name) + 1 :]
            match = _LOADER_POSITION.match(message)
            if match is not None:
                line, column = int(match.group(1)), int(match.group(2))
                message = message[match.end() :].removesuffix(f" (line {line}, column {column})")
            message = message.strip()
        return Finding(
            name,
            "invalid",
            line,
            column,
            error.response_index,
            error.code.value,
            message,
            error.path,
        )
    fixture = Fixture(name, text, offsets)
    try:
        return fixture, FixtureProviderAdapter(data)
    except FixtureProviderError as error:
        return fixture.finding(error, "invalid")


@dataclass(frozen=True, slots=True)
class Call:
    """One call of ``stream()``: its chunks, then its response or its error."""

    number: int
    request_id: str
    chunks: list[CourseModelChunk]
    outcome: CourseModelResponse | FixtureProviderError


async def play(adapter: FixtureProviderAdapter, prefix: str) -> list[Call]:
    """Stream every queued response, in order, keeping chunks and outcomes."""
    calls: list[Call] = []
    while adapter.pending:
        number = adapter.call_count + 1
        request = CourseModelRequest(f"{prefix}-{number}")
        chunks: list[CourseModelChunk] = []
        outcome: CourseModelResponse | FixtureProviderError
        async with adapter.stream(request) as stream:
            try:
                async for chunk in stream:
                    chunks.append(chunk)
                outcome = await stream.result()
            except FixtureProviderError as error:
                outcome = error
        calls.append(Call(number, request.id, chunks, outcome))
    return calls


def outcome(fixture: Fixture, call: Call) -> Finding:
    """The finding of one played call."""
    if isinstance(call.outcome, FixtureProviderError):
        return fixture.finding(call.outcome, "failed", len(call.chunks))
    index = call.number - 1
    line, column = fixture.position(f"/responses/{index}")
    return Finding(
        fixture.name,
        "ok",
        line,
        column,
        index,
        stop_reason=call.outcome.stop_reason,
        chunks=len(call.chunks),
    )


def expand(paths: list[str]) -> list[str]:
    """Files as given; a directory stands for the ``*.json`` files under it, sorted."""
    names: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            names.extend(str(p) for p in sorted(Path(path).rglob("*.json")) if p.is_file())
        else:
            names.append(path)
    return names


@contextmanager
def bundled_fixture() -> Iterator[str]:
    """The path of the bundled round-trip fixture, wherever the package is installed."""
    with as_file(files("course") / "fixtures" / BUNDLED_FIXTURE) as path:
        yield str(path)
