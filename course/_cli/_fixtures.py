"""Fixture files for the commands: check each response as the adapter would, and say where.

``check`` loads a file strictly and builds the adapter. A file the adapter refuses is
split, so that one broken response never hides the others: a response that is not
strict JSON, or that the adapter's constructor refuses, becomes a finding of its own,
and the rest are still played. ``play`` streams every queued response as an agent
loop would, and ``Checked.finding`` turns an error into a finding that points into the
file.

Positions are looked up only for the findings that are printed, in the text already
read (``TextPositions``): loading itself takes the fast path.

A recording is imported first, with the ``--format`` and ``--usage`` every command that
reads recordings takes (``add_recording_options``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.resources import as_file, files
from pathlib import Path
from typing import Final

from .._adapter import FIXTURE_KEYS, RESPONSE_KEYS, FixtureProviderAdapter
from .._errors import FixtureProviderError
from .._json import PlainJson
from .._json_text import TextPositions, item_spans
from .._loading import parse_fixture_text, place, read_fixture_text
from .._model import CourseModelChunk, CourseModelRequest, CourseModelResponse
from .._parser import (
    RECORD_TYPES,
    SCHEMA_VERSIONS,
    USAGE_ALIASES,
    USAGE_DETAIL_ALIASES,
    usage_keys,
)
from ._output import Finding, Status

__all__ = [
    "BUNDLED_FIXTURE",
    "Call",
    "Checked",
    "RecordingOptions",
    "add_recording_options",
    "bundled_fixture",
    "by_response",
    "check",
    "expand",
    "is_recording",
    "load",
    "play",
]

BUNDLED_FIXTURE: Final = "provider-tool-roundtrip.json"

RECORDING_SUFFIXES: Final = (".sse", ".yaml", ".yml")
"""Files read as recordings to import: SSE text, and VCR cassettes (YAML)."""
FOLDER_PATTERNS: Final = ("*.json", "*.sse")
"""What a folder stands for. Cassettes are named one by one (or by a shell glob): a
folder's other YAML files are seldom cassettes."""

MAX_REFUSED_RESPONSES: Final = 100
"""Past this many refused responses in one file, the rest of the file is not checked."""

_STAND_IN: Final[dict[str, PlainJson]] = {"records": []}
"""A response the adapter's constructor accepts, queued in place of a refused one."""


@dataclass(frozen=True, slots=True)
class RecordingOptions:
    """How recordings are imported: ``--format`` and ``--usage``."""

    format: str = "auto"
    usage: tuple[int, int] | None = None

    @classmethod
    def of(cls, args: argparse.Namespace) -> RecordingOptions:
        return cls(args.format, args.usage)


def add_recording_options(parser: argparse.ArgumentParser) -> None:
    """``--format`` and ``--usage IN,OUT``, for the commands that read recordings."""
    from ..vendors._importing import FORMATS  # noqa: PLC0415  (the vendors load on demand)

    parser.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="the wire format of recordings (default: told from each one's first event)",
    )
    parser.add_argument(
        "--usage",
        type=_usage,
        metavar="IN,OUT",
        help="token counts for a recorded answer that succeeded without usage",
    )


def _usage(text: str) -> tuple[int, int]:
    parts = text.split(",")
    try:
        counts = tuple(int(part, 10) for part in parts)
    except ValueError:
        counts = ()
    if len(counts) != 2 or not all(0 <= count <= 2**53 - 1 for count in counts):
        raise argparse.ArgumentTypeError(f"expected IN,OUT (two token counts), got {text!r}")
    return counts


@dataclass(slots=True)
class Checked:
    """One file, checked: what was refused, and an adapter for everything else."""

    name: str
    text: str | None = None
    data: PlainJson = None
    refused: list[Finding] = field(default_factory=list)
    """The fixture itself, or single responses, that are not a fixture's."""
    adapter: FixtureProviderAdapter | None = None
    """The fixture's responses, each refused one replaced by a stand-in."""
    stand_ins: set[int] = field(default_factory=set)
    """Indexes of the responses the adapter holds only as stand-ins: not to be played."""
    _positions: TextPositions | None = None

    def finding(self, error: FixtureProviderError, status: Status, chunks: int = 0) -> Finding:
        """``error`` (of the adapter, or of a stream) as a finding, located by its path."""
        line, column = self.position(error.path, key=_names_a_key(self.data, error.path))
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

    def outcome(self, call: Call, *, locate_ok: bool = True) -> Finding:
        """The finding of one played call; a settled response's position is looked up
        only with ``locate_ok`` (a failure's always is)."""
        if isinstance(call.outcome, FixtureProviderError):
            return self.finding(call.outcome, "failed", len(call.chunks))
        line, column = self.position(f"/responses/{call.index}" if locate_ok else None)
        return Finding(
            self.name,
            "ok",
            line,
            column,
            call.index,
            stop_reason=call.outcome.stop_reason,
            chunks=len(call.chunks),
        )

    def position(
        self, path: str | None, *, key: bool = False
    ) -> tuple[int, int] | tuple[None, None]:
        """The line and column of the value (or the key) at ``path``, or of its nearest
        enclosing value in the file."""
        if path is None or self.text is None:
            return None, None
        if self._positions is None:
            self._positions = TextPositions(self.text)
        offset = self._positions.offset(path, key=key)
        if offset is None:
            return None, None
        return self._positions.line_and_column(offset)

    def remember(self, spans: list[tuple[int, int]]) -> None:
        """Where each response starts, in a text that is broken before some of them."""
        if self.text is not None:
            self._positions = TextPositions(self.text)
            for index, (start, _) in enumerate(spans):
                self._positions.remember(f"/responses/{index}", start)


def is_recording(name: str) -> bool:
    """Whether ``name`` is read as a recording (SSE text, or a VCR cassette) to import."""
    return name.lower().endswith(RECORDING_SUFFIXES)


def check(name: str, recording: RecordingOptions | None = None) -> Checked:
    """Load ``name`` strictly and build the adapter, one response at a time if need be.

    A recording is imported first (``course.vendors.load_recordings``, with
    ``recording``'s format and usage); one it refuses is a finding that says where, as
    the importer does: ``FILE:LINE:COLUMN: CODE why``.
    """
    checked = Checked(name)
    if is_recording(name):
        return _check_recording(checked, recording or RecordingOptions())
    try:
        checked.text = text = read_fixture_text(name)
    except FixtureProviderError as error:
        checked.refused.append(_loader_finding(name, error))
        return checked
    try:
        checked.data = parse_fixture_text(name, text)
    except FixtureProviderError as error:
        if error.response_index is None or not _split_text(checked):
            checked.refused.append(_loader_finding(name, error))
            return checked
    _build(checked)
    # The fixture's own problems first, then response by response.
    checked.refused.sort(key=by_response)
    return checked


def by_response(finding: Finding) -> int:
    """Sort key: the fixture's own findings first, then response by response."""
    return -1 if finding.response is None else finding.response


def _check_recording(checked: Checked, options: RecordingOptions) -> Checked:
    from ..vendors import RecordingError, load_recordings  # noqa: PLC0415  (on demand)

    try:
        loaded = load_recordings(checked.name, format=options.format, usage=options.usage)
        checked.data = loaded  # type: ignore[assignment]
    except RecordingError as error:
        finding = Finding(
            checked.name,
            "invalid",
            error.line,
            error.column,
            code=str(error.code),
            message=error.message,
            subject="",
        )
        checked.refused.append(finding)
        return checked
    _build(checked)
    return checked


def load(name: str) -> FixtureProviderAdapter | Finding:
    """The adapter of the whole fixture, or the first reason there is none (for commands
    that need every response, such as ``serve``; ``check`` tells about each response)."""
    checked = check(name)
    if checked.refused or checked.adapter is None:
        return checked.refused[0]
    return checked.adapter


def _split_text(checked: Checked) -> bool:
    """Parse the fixture response by response, around the ones that are not strict JSON.

    ``False`` if the responses cannot be told apart, or the rest of the fixture is not
    strict JSON either: then the first error is all there is to say.
    """
    name, text = checked.name, checked.text
    assert text is not None
    spans = item_spans(text, "responses")
    if spans is None:
        return False
    # The fixture without its responses: each becomes a 0 of the same length and the
    # same number of lines, so every offset and line stays where it was.
    pieces: list[str] = []
    done = 0
    for start, end in spans:
        newlines = text.count("\n", start, end)
        pieces += [text[done:start], "0", " " * (end - start - 1 - newlines), "\n" * newlines]
        done = end
    pieces.append(text[done:])
    try:
        frame = parse_fixture_text(name, "".join(pieces))
    except FixtureProviderError:
        return False
    if type(frame) is not dict or type(frame.get("responses")) is not list:
        return False
    checked.remember(spans)
    responses: list[PlainJson] = []
    for index, (start, end) in enumerate(spans):
        try:
            responses.append(
                parse_fixture_text(
                    name, text, start=start, end=end, path=f"/responses/{index}", enclosing=2
                )
            )
        except FixtureProviderError as error:
            checked.refused.append(_loader_finding(name, error))
            checked.stand_ins.add(index)
            responses.append(_STAND_IN)
    checked.data = {**frame, "responses": responses}
    return True


def _build(checked: Checked) -> None:
    """The adapter, with a stand-in for each response its constructor refuses.

    The constructor stops at the first refused response; the search for the next one
    starts after it (stand-ins before it cost next to nothing), so finding every
    refused response costs about one construction, not one per refusal.
    """
    fixture = checked.data
    try:
        checked.adapter = FixtureProviderAdapter(fixture)
        return
    except FixtureProviderError as refusal:
        first = refusal
    responses = fixture.get("responses") if type(fixture) is dict else None
    if first.response_index is None or type(responses) is not list:
        # The fixture itself is refused: its responses mean nothing on their own.
        checked.refused.append(checked.finding(first, "invalid"))
        return
    queued = [_STAND_IN if at in checked.stand_ins else r for at, r in enumerate(responses)]
    error: FixtureProviderError | None = first
    while error is not None:
        index = error.response_index
        checked.refused.append(checked.finding(error, "invalid"))
        if index is None or index in checked.stand_ins:
            return  # the fixture itself (cannot happen after the first try)
        checked.stand_ins.add(index)
        queued[index] = _STAND_IN
        if len(checked.stand_ins) >= MAX_REFUSED_RESPONSES:
            message = (
                f"Stopped after {MAX_REFUSED_RESPONSES} refused responses; "
                "the rest of the file was not checked"
            )
            checked.refused.append(
                Finding(checked.name, "invalid", code=first.code.value, message=message)
            )
            return
        rest = [_STAND_IN] * (index + 1) + queued[index + 1 :]
        try:
            FixtureProviderAdapter({**fixture, "responses": rest})  # type: ignore[dict-item]
            error = None
        except FixtureProviderError as next_error:
            error = next_error
    checked.adapter = FixtureProviderAdapter({**fixture, "responses": queued})  # type: ignore[dict-item]


def _loader_finding(name: str, error: FixtureProviderError) -> Finding:
    """A loading error as a finding: the place as data, the message without it."""
    return Finding(
        name,
        "invalid",
        error.line,
        error.column,
        error.response_index,
        error.code.value,
        error.message.removeprefix(place(name, error.line, error.column) + ": "),
        error.path,
    )


def _names_a_key(data: PlainJson, path: str | None) -> bool:
    """Whether ``path`` names a member its object may not hold: a key the format does not
    know there, or the second alias of a usage count. Such an error is about the key,
    so it points at the key (as a duplicate key does), not at the value."""
    if not path:
        return False
    version = data.get("schemaVersion") if type(data) is dict else None
    if type(version) is not int or version not in SCHEMA_VERSIONS:
        version = SCHEMA_VERSIONS[-1]  # only fixture-level errors then: any version will do
    *parents, key = [part.replace("~1", "/").replace("~0", "~") for part in path.split("/")[1:]]
    owner: PlainJson = data
    for part in parents:
        if type(owner) is dict:
            owner = owner.get(part)
        elif type(owner) is list and part.isdigit() and int(part) < len(owner):
            owner = owner[int(part)]
        else:
            return False
    if type(owner) is not dict or key not in owner:
        return False
    shape = [part if not part.isdigit() else "#" for part in parents]
    if shape == []:
        allowed: tuple[str, ...] = FIXTURE_KEYS
    elif shape == ["responses", "#"]:
        allowed = RESPONSE_KEYS
    elif shape == ["responses", "#", "records", "#"]:
        kind = owner.get("type")
        if type(kind) is not str or kind not in RECORD_TYPES:
            return False
        allowed = ("type", *(spec.name for spec in RECORD_TYPES[kind].fields_at(version)))
    elif shape == ["responses", "#", "records", "#", "usage"]:
        pairs = USAGE_ALIASES if version < 2 else USAGE_ALIASES + USAGE_DETAIL_ALIASES
        if any(key == second and first in owner for first, second in pairs):
            return True
        allowed = usage_keys(version)
    else:
        return False  # tool-call arguments and the like: open objects
    return key not in allowed


@dataclass(frozen=True, slots=True)
class Call:
    """One call of ``stream()``: its chunks, then its response or its error."""

    number: int
    request_id: str
    chunks: list[CourseModelChunk]
    outcome: CourseModelResponse | FixtureProviderError

    @property
    def index(self) -> int:
        """The index of the response the call took."""
        return self.number - 1


async def play(checked: Checked, prefix: str, *, wait: bool = False) -> list[Call]:
    """Stream every queued response, in order, keeping chunks and outcomes.

    A stand-in for a refused response is streamed (so that later calls take the
    responses they should) but not kept. Records' delays (schema version 2) are
    judged without waiting, unless ``wait``.
    """
    calls: list[Call] = []
    adapter = checked.adapter
    while adapter is not None and adapter.pending:
        number = adapter.call_count + 1
        request = CourseModelRequest(f"{prefix}-{number}")
        chunks: list[CourseModelChunk] = []
        outcome: CourseModelResponse | FixtureProviderError
        stream = adapter.stream(request)
        async with stream if wait else stream._without_delays():
            try:
                async for chunk in stream:
                    chunks.append(chunk)
                outcome = await stream.result()
            except FixtureProviderError as error:
                outcome = error
        if number - 1 not in checked.stand_ins:
            calls.append(Call(number, request.id, chunks, outcome))
    return calls


def expand(paths: list[str]) -> list[str]:
    """Files as given; a directory stands for the fixtures (``*.json``) and the SSE
    recordings (``*.sse``) under it, sorted."""
    names: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = {p for pattern in FOLDER_PATTERNS for p in Path(path).rglob(pattern)}
            names.extend(str(p) for p in sorted(found) if p.is_file())
        else:
            names.append(path)
    return names


@contextmanager
def bundled_fixture() -> Iterator[str]:
    """The path of the bundled round-trip fixture, wherever the package is installed."""
    with as_file(files("course") / "fixtures" / BUNDLED_FIXTURE) as path:
        yield str(path)
