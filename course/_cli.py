"""``course-fixture``: check, replay and describe fixture files from the command line.

::

    course-fixture validate FILE...   stream every response of each fixture; point at failures
    course-fixture replay [FILE]      print each call's chunks and response (bundled fixture
                                      by default; ``python -m course`` alone does this)
    course-fixture schema             the JSON Schema (draft 2020-12) of fixture version 1
    course-fixture demo               a small agent loop against the bundled round trip

Exit status: 0 when every response settles, 1 when a response fails, 2 when a file is
not a fixture at all (unreadable, not strict JSON, or refused by the adapter's
constructor) or the command line is wrong; 141 when the reader of the output goes away
(``| head``). Positions are ``file:line:column``, 1-based, of the offending value (for a
missing field, of its record; for a missing terminal, of the records array), so an
editor can jump there.

One process does all the work: validating a thousand files costs one interpreter start.
Standard library only. Colour only on a terminal, never with ``NO_COLOR`` set.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import as_file, files
from pathlib import Path
from typing import Final, Literal, TextIO

from ._adapter import FixtureProviderAdapter
from ._errors import FixtureProviderError
from ._json import PlainJson, thaw
from ._loading import load_fixture, read_fixture
from ._model import CourseModelChunk, CourseModelRequest, CourseModelResponse
from ._schema import fixture_schema

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILED",
    "EXIT_NOT_A_FIXTURE",
    "EXIT_OK",
    "Finding",
    "agent_loop",
    "main",
]

EXIT_OK: Final = 0
"""Every response settled."""
EXIT_FAILED: Final = 1
"""At least one response failed."""
EXIT_NOT_A_FIXTURE: Final = 2
"""At least one file is not a fixture at all, or the command line is wrong."""
EXIT_BROKEN_PIPE: Final = 141
"""The reader of stdout went away (``| head``); 128 + SIGPIPE, as a shell reports it."""

BUNDLED_FIXTURE: Final = "provider-tool-roundtrip.json"
PROGRESS_MIN_FILES: Final = 10
"""Validating at least this many files shows a progress line (on a terminal's stderr)."""

Status = Literal["ok", "failed", "invalid"]


# -- terminal output ----------------------------------------------------------------------

_BOLD, _DIM, _RED, _GREEN, _CYAN = "1", "2", "31", "32", "36"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _one_line(text: str) -> str:
    """Escape control characters, so fixture data can never break a line or a terminal."""
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode(), text)


def _is_tty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


class _Out:
    """Lines to a text stream, with ANSI colour only on a terminal and without NO_COLOR."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        # https://no-color.org: NO_COLOR present and not empty disables colour.
        self.colour = (
            not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb" and _is_tty(stream)
        )

    def paint(self, text: str, *styles: str) -> str:
        if not self.colour or not styles or not text:
            return text
        return f"\x1b[{';'.join(styles)}m{text}\x1b[0m"

    def pad(self, text: str, width: int, *styles: str) -> str:
        """``text`` painted, then padded with plain spaces to ``width`` columns."""
        return self.paint(text, *styles) + " " * (width - len(text))

    def line(self, text: str = "") -> None:
        try:
            self.stream.write(text + "\n")
        except UnicodeEncodeError:
            encoding = getattr(self.stream, "encoding", None) or "utf-8"
            safe = text.encode(encoding, "backslashreplace").decode(encoding, "replace")
            self.stream.write(safe + "\n")

    def json(self, value: Mapping[str, object]) -> None:
        self.stream.write(json.dumps(value, ensure_ascii=True) + "\n")


class _Progress:
    """``validating 120/1000 files`` on stderr, rewritten in place; only on a terminal."""

    def __init__(self, total: int) -> None:
        self.stream = sys.stderr
        self.total = total
        self.enabled = total >= PROGRESS_MIN_FILES and _is_tty(self.stream)
        self.step = max(1, total // 100)
        self.width = 0

    def update(self, done: int) -> None:
        if self.enabled and (done % self.step == 0 or done == self.total):
            text = f"validating {done}/{self.total} files"
            self.width = len(text)
            self.stream.write("\r" + text)
            self.stream.flush()

    def clear(self) -> None:
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


# -- loading, positions, playing ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """The outcome of one response (or of a whole file that is not a fixture)."""

    file: str
    status: Status
    line: int | None = None
    column: int | None = None
    response: int | None = None
    code: str | None = None
    message: str | None = None
    path: str | None = None
    stop_reason: str | None = None
    chunks: int = 0

    @property
    def where(self) -> str:
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}:{self.column}"

    def to_dict(self) -> dict[str, PlainJson]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "response": self.response,
            "status": self.status,
            "code": self.code,
            "message": self.message,
            "path": self.path,
            "stopReason": self.stop_reason,
            "chunks": self.chunks,
        }


class _Fixture:
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


def _load(name: str) -> tuple[_Fixture, FixtureProviderAdapter] | Finding:
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
    fixture = _Fixture(name, text, offsets)
    try:
        return fixture, FixtureProviderAdapter(data)
    except FixtureProviderError as error:
        return fixture.finding(error, "invalid")


@dataclass(frozen=True, slots=True)
class _Call:
    number: int
    request_id: str
    chunks: list[CourseModelChunk]
    outcome: CourseModelResponse | FixtureProviderError


async def _play(adapter: FixtureProviderAdapter, prefix: str) -> list[_Call]:
    """Stream every queued response, in order, keeping chunks and outcomes."""
    calls: list[_Call] = []
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
        calls.append(_Call(number, request.id, chunks, outcome))
    return calls


def _outcome(fixture: _Fixture, call: _Call) -> Finding:
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


def _expand(paths: list[str]) -> list[str]:
    """Files as given; a directory stands for the ``*.json`` files under it, sorted."""
    names: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            names.extend(str(p) for p in sorted(Path(path).rglob("*.json")) if p.is_file())
        else:
            names.append(path)
    return names


@contextmanager
def _bundled_fixture() -> Iterator[str]:
    with as_file(files("course") / "fixtures" / BUNDLED_FIXTURE) as path:
        yield str(path)


# -- validate -----------------------------------------------------------------------------


def _validate(paths: list[str], *, quiet: bool, as_json: bool) -> int:
    out = _Out(sys.stdout)
    names = _expand(paths)
    if not names:
        # An empty folder is most likely a wrong path: never a silent pass in CI.
        print("course-fixture validate: no fixture files found", file=sys.stderr)
        return EXIT_NOT_A_FIXTURE
    findings: list[Finding] = []
    progress = _Progress(len(names))

    async def run_all() -> None:
        for done, name in enumerate(names, 1):
            loaded = _load(name)
            if isinstance(loaded, Finding):
                results = [loaded]
            else:
                fixture, adapter = loaded
                calls = await _play(adapter, "validate")
                results = [_outcome(fixture, call) for call in calls]
            for finding in results:
                findings.append(finding)
                if as_json and not (quiet and finding.status == "ok"):
                    out.json(finding.to_dict())
            progress.update(done)
            await asyncio.sleep(0)  # one file per event-loop step

    try:
        asyncio.run(run_all())
    finally:
        progress.clear()
    invalid = sum(1 for f in findings if f.status == "invalid")
    failed = sum(1 for f in findings if f.status == "failed")
    ok = sum(1 for f in findings if f.status == "ok")
    if not as_json:
        shown = [f for f in findings if not (quiet and f.status == "ok")]
        _print_findings(out, shown)
        if not quiet:
            _print_summary(out, len(names), invalid, ok, failed)
    if invalid:
        return EXIT_NOT_A_FIXTURE
    return EXIT_FAILED if failed else EXIT_OK


def _print_findings(out: _Out, findings: list[Finding]) -> None:
    rows: list[tuple[str, str, Finding]] = []
    for finding in findings:
        subject = "fixture" if finding.response is None else f"response {finding.response}"
        rows.append((_one_line(finding.where) + ":", subject + ":", finding))
    where_width = max((len(row[0]) for row in rows), default=0)
    subject_width = max((len(row[1]) for row in rows), default=0)
    for where, subject, finding in rows:
        cells = [
            out.pad(where, where_width, _BOLD),
            subject.ljust(subject_width),
        ]
        if finding.status == "ok":
            detail = f"({finding.stop_reason}, {_plural(finding.chunks, 'chunk')})"
            cells += [out.paint("ok", _GREEN), detail]
        else:
            cells += [out.paint(finding.code or "", _RED), _one_line(finding.message or "")]
            if finding.path:
                cells.append(out.paint(f"(at {_one_line(finding.path)})", _DIM))
        out.line(" ".join(cells))


def _print_summary(out: _Out, files: int, invalid: int, ok: int, failed: int) -> None:
    head = _plural(files, "file")
    if invalid:
        what = "not a fixture" if invalid == 1 else "not fixtures"
        head += " (" + out.paint(f"{invalid} {what}", _RED, _BOLD) + ")"
    counts = ", ".join(
        [
            out.paint(f"{ok} ok", _GREEN) if ok else f"{ok} ok",
            out.paint(f"{failed} failed", _RED, _BOLD) if failed else f"{failed} failed",
        ]
    )
    out.line(f"{head}, {_plural(ok + failed, 'response')}: {counts}")


# -- replay -------------------------------------------------------------------------------


def _replay(path: str | None, *, as_json: bool) -> int:
    if path is None:
        with _bundled_fixture() as bundled:
            return _replay_file(bundled, as_json=as_json)
    return _replay_file(path, as_json=as_json)


def _replay_file(name: str, *, as_json: bool) -> int:
    out = _Out(sys.stdout)
    loaded = _load(name)
    if isinstance(loaded, Finding):
        if as_json:
            out.json({"error": loaded.to_dict()})
        else:
            _print_findings(out, [loaded])
        return EXIT_NOT_A_FIXTURE
    fixture, adapter = loaded
    count = adapter.pending
    calls = asyncio.run(_play(adapter, "request"))
    if not as_json:
        out.line(
            out.paint(f"replaying {_one_line(name)}", _BOLD) + f" ({_plural(count, 'response')})"
        )
    for call in calls:
        _print_call(out, fixture, call, as_json=as_json)
    failed = sum(1 for call in calls if isinstance(call.outcome, FixtureProviderError))
    if not as_json:
        ok = len(calls) - failed
        summary = out.paint(f"{ok} ok", _GREEN) if ok else "0 ok"
        if failed:
            summary += ", " + out.paint(f"{failed} failed", _RED, _BOLD)
        out.line(f"{_plural(len(calls), 'call')}: {summary}")
    return EXIT_FAILED if failed else EXIT_OK


def _print_call(out: _Out, fixture: _Fixture, call: _Call, *, as_json: bool) -> None:
    head: dict[str, PlainJson] = {"call": call.number, "requestId": call.request_id}
    if as_json:
        for chunk in call.chunks:
            out.json({**head, "chunk": chunk.to_dict()})
        if isinstance(call.outcome, FixtureProviderError):
            out.json(
                {
                    **head,
                    "error": fixture.finding(call.outcome, "failed", len(call.chunks)).to_dict(),
                }
            )
        else:
            out.json({**head, "response": call.outcome.to_dict()})
        return
    out.line(
        out.paint(f"call {call.number}", _BOLD)
        + f" -> response {call.number - 1} "
        + out.paint(f"(request {call.request_id})", _DIM)
    )
    for chunk in call.chunks:
        if chunk.type == "textDelta":
            detail = json.dumps(chunk.text, ensure_ascii=False)
        else:
            arguments = json.dumps(thaw(chunk.arguments), ensure_ascii=False)
            detail = f"{chunk.id} {chunk.name} {arguments}"
        label = out.pad(chunk.type, 10, _CYAN)
        out.line(f"  chunk     {label} [{chunk.content_index}] {_one_line(detail)}")
    response = call.outcome
    if not isinstance(response, FixtureProviderError):
        usage = response.usage
        blocks = _plural(len(response.message.content), "block")
        out.line(
            f"  response  {out.pad(response.stop_reason, 10, _GREEN)} "
            f"{_one_line(response.response_id)}, message "
            f"{_one_line(response.message.id)} ({blocks}), usage "
            f"{usage.input_tokens} in / {usage.output_tokens} out"
        )
    else:
        finding = fixture.finding(response, "failed")
        out.line(
            f"  error     {out.paint(finding.code or '', _RED)} "
            f"{out.paint(_one_line(finding.where) + ':', _BOLD)} {_one_line(finding.message or '')}"
            + (f" {out.paint(f'(at {_one_line(finding.path)})', _DIM)}" if finding.path else "")
        )


# -- the agent-loop demo ------------------------------------------------------------------
# The same loop as examples/agent_loop.py (which is not installed), shipped so that
# ``course-fixture demo`` works from any installation.


def add(left: int, right: int) -> int:
    """The demo's one tool."""
    return left + right


TOOLS: Final[Mapping[str, Callable[..., int]]] = {"add": add}


async def agent_loop(adapter: FixtureProviderAdapter, question: str) -> None:
    """Ask, run the tools the provider calls, link each result to its call id, repeat."""
    messages: list[object] = [{"role": "user", "content": question}]
    print(f"user: {question}")
    while True:
        request = CourseModelRequest(f"request-{adapter.call_count + 1}", tuple(messages))
        async with adapter.stream(request) as stream:
            async for chunk in stream:
                if chunk.type == "textDelta":
                    print(chunk.text, end="", flush=True)  # text as it arrives
            response = await stream.result()
        messages.append(response.message)
        if response.stop_reason == "stop":
            print()
            return
        for block in response.message.content:
            if block.type == "toolCall":
                result = TOOLS[block.name](**block.arguments)
                call = f"{block.name}({json.dumps(thaw(block.arguments))})"
                print(f"tool {call} = {result}, result for {block.id}")
                messages.append({"role": "tool", "toolCallId": block.id, "content": result})


def _demo() -> int:
    with _bundled_fixture() as path:
        adapter = FixtureProviderAdapter(load_fixture(path))
    asyncio.run(agent_loop(adapter, "What is 20 + 22?"))
    return EXIT_OK


# -- the command line ---------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course-fixture",
        description=(
            "Check, replay and describe fixture files of the course offline provider adapter. "
            "With no command, replay the bundled round-trip fixture."
        ),
        epilog=(
            "exit status: 0 every response settled, 1 a response failed, "
            "2 a file is not a fixture (or a usage error)"
        ),
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    validate = commands.add_parser(
        "validate",
        help="stream every response of each fixture and report where each one fails",
        description=(
            "Load each file strictly, build the adapter and stream every response; print one "
            "line per response as FILE:LINE:COLUMN: response N: ok (...) or CODE message. "
            "A directory stands for the *.json files under it."
        ),
    )
    validate.add_argument("files", nargs="+", metavar="FILE", help="fixture files or folders")
    validate.add_argument(
        "-q", "--quiet", action="store_true", help="print failures only (nothing when all settle)"
    )
    validate.add_argument("--json", action="store_true", help="one JSON object per response")
    replay = commands.add_parser(
        "replay",
        help="print every call's chunks and response (the bundled fixture by default)",
        description="Replay a fixture, one call per response, printing chunks and responses.",
    )
    replay.add_argument("file", nargs="?", metavar="FILE", help="a fixture file")
    replay.add_argument(
        "--json", action="store_true", help="JSON lines, with each value's to_dict()"
    )
    commands.add_parser(
        "schema",
        help="print the JSON Schema (draft 2020-12) of fixture format version 1",
        description="Print the JSON Schema of fixture format version 1, made from the parser.",
    )
    commands.add_parser(
        "demo",
        help="run a small agent loop offline against the bundled round trip",
        description="Stream a tool call, run the tool, link its result, stream the answer.",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``course-fixture`` with ``argv`` (default: ``sys.argv[1:]``); return the status."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:  # --help, or a usage error argparse already printed
        return exit_.code if isinstance(exit_.code, int) else EXIT_NOT_A_FIXTURE
    try:
        status = _run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as ``cat`` would.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    return status


def _run(args: argparse.Namespace) -> int:
    command: str | None = args.command
    if command == "validate":
        return _validate(args.files, quiet=args.quiet, as_json=args.json)
    if command == "schema":
        sys.stdout.write(json.dumps(fixture_schema(), indent=2) + "\n")
        return EXIT_OK
    if command == "demo":
        return _demo()
    return _replay(getattr(args, "file", None), as_json=getattr(args, "json", False))


def _silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's final flush stays quiet."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # not a real file descriptor
        pass
