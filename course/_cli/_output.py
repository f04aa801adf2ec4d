"""How every command prints: exit statuses, findings, colour, progress, safe text.

A *finding* is the outcome of one response (or of a whole file that is not a
fixture): where it is, what happened. Commands build findings and print them with
``print_findings`` (aligned rows) or ``Out.json`` (one JSON object per line), so all
of them point at files the same way: ``FILE:LINE:COLUMN:``, 1-based, which an editor
can jump to.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, TextIO

from .._json import PlainJson, thaw
from .._model import CourseModelChunk, CourseModelResponse, CourseModelUsage
from .._text import one_line, plural, shorten

__all__ = [
    "BOLD",
    "CYAN",
    "DIM",
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILED",
    "EXIT_NOT_A_FIXTURE",
    "EXIT_OK",
    "GREEN",
    "PROGRESS_MIN_FILES",
    "RED",
    "Finding",
    "Out",
    "Progress",
    "Status",
    "describe_chunk",
    "describe_response",
    "describe_usage",
    "print_findings",
    "print_summary",
]

EXIT_OK: Final = 0
"""Every response settled."""
EXIT_FAILED: Final = 1
"""At least one response failed."""
EXIT_NOT_A_FIXTURE: Final = 2
"""At least one file is not a fixture at all, or the command line is wrong."""
EXIT_BROKEN_PIPE: Final = 141
"""The reader of stdout went away (``| head``); 128 + SIGPIPE, as a shell reports it."""

PROGRESS_MIN_FILES: Final = 10
"""Validating at least this many files shows a progress line (on a terminal's stderr)."""

Status = Literal["ok", "failed", "invalid"]
"""A response settled, a response failed, or a file is not a fixture at all."""

BOLD, DIM, RED, GREEN, CYAN = "1", "2", "31", "32", "36"


def _is_tty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


class Out:
    """Lines to a text stream, with ANSI colour only on a terminal and without NO_COLOR."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        # https://no-color.org: NO_COLOR present and not empty disables colour.
        self.colour = (
            not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb" and _is_tty(stream)
        )

    def paint(self, text: str, *styles: str) -> str:
        """``text`` in the given ANSI styles, when colour is on."""
        if not self.colour or not styles or not text:
            return text
        return f"\x1b[{';'.join(styles)}m{text}\x1b[0m"

    def pad(self, text: str, width: int, *styles: str) -> str:
        """``text`` painted, then padded with plain spaces to ``width`` columns."""
        return self.paint(text, *styles) + " " * (width - len(text))

    def line(self, text: str = "") -> None:
        """Write one line; what the stream cannot encode is backslash-escaped."""
        try:
            self.stream.write(text + "\n")
        except UnicodeEncodeError:
            encoding = getattr(self.stream, "encoding", None) or "utf-8"
            safe = text.encode(encoding, "backslashreplace").decode(encoding, "replace")
            self.stream.write(safe + "\n")

    def json(self, value: Mapping[str, object]) -> None:
        """Write one JSON object as one ASCII line."""
        self.stream.write(json.dumps(value, ensure_ascii=True) + "\n")


class Progress:
    """``validating 120/1000 files`` on stderr, rewritten in place; only on a terminal."""

    def __init__(self, total: int) -> None:
        self.stream = sys.stderr
        self.total = total
        self.enabled = total >= PROGRESS_MIN_FILES and _is_tty(self.stream)
        self.step = max(1, total // 100)
        self.width = 0

    def update(self, done: int) -> None:
        """Show that ``done`` of the files are done."""
        if self.enabled and (done % self.step == 0 or done == self.total):
            text = f"validating {done}/{self.total} files"
            self.width = len(text)
            self.stream.write("\r" + text)
            self.stream.flush()

    def clear(self) -> None:
        """Wipe the progress line, so results start on a clean line."""
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


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
    subject: str | None = None
    """What the finding is about, when neither the fixture nor a response (``""``: a
    recording's refusal, which names its place itself)."""

    @property
    def where(self) -> str:
        """``FILE:LINE:COLUMN``, or ``FILE`` when there is no position."""
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}:{self.column}"

    def to_dict(self) -> dict[str, PlainJson]:
        """The finding as one JSON object (``--json``)."""
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


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def describe_chunk(chunk: CourseModelChunk) -> str:
    """What a chunk carries, on one line: text quoted, a call's id, name and arguments,
    an opaque signature or data shortened (it is a token, not something to read)."""
    match chunk.type:
        case "textDelta" | "thinkingDelta" | "refusalDelta":
            detail = _quoted(chunk.text)
        case "toolCall":
            arguments = json.dumps(thaw(chunk.arguments), ensure_ascii=False)
            detail = f"{chunk.id} {chunk.name} {arguments}"
            if chunk.signature is not None:
                detail += f" (signature {_quoted(shorten(chunk.signature, 40))})"
        case "incompleteToolCall":
            detail = f"{chunk.id} {chunk.name} {_quoted(chunk.arguments_text)} (cut short)"
        case "thinkingSignature":
            detail = _quoted(shorten(chunk.signature, 40))
        case "redactedThinking":
            detail = _quoted(shorten(chunk.data, 40))
    return one_line(detail)


def describe_usage(usage: CourseModelUsage) -> str:
    """``12 in / 8 out``, and the details a version-2 fixture gives."""
    text = f"{usage.input_tokens} in / {usage.output_tokens} out"
    details = [
        f"{count} {what}"
        for count, what in (
            (usage.cache_read_tokens, "cache read"),
            (usage.cache_write_tokens, "cache write"),
            (usage.reasoning_tokens, "reasoning"),
        )
        if count is not None
    ]
    return text + (f" ({', '.join(details)})" if details else "")


def describe_response(response: CourseModelResponse) -> str:
    """The model and the provider's own stop reason, when a version-2 fixture gives them."""
    said = []
    if response.model is not None:
        said.append(f"model {one_line(shorten(response.model))}")
    if response.provider_stop_reason is not None:
        said.append(f"provider stop reason {one_line(shorten(response.provider_stop_reason))}")
    return f", {', '.join(said)}" if said else ""


def print_findings(out: Out, findings: list[Finding]) -> None:
    """One aligned row per finding: ``WHERE: SUBJECT: ok (...)`` or ``CODE message``."""
    rows: list[tuple[str, str, Finding]] = []
    for finding in findings:
        if finding.subject is not None:
            subject = finding.subject + ":" if finding.subject else ""
        elif finding.response is None:
            subject = "fixture:"
        else:
            subject = f"response {finding.response}:"
        rows.append((one_line(finding.where) + ":", subject, finding))
    where_width = max((len(row[0]) for row in rows), default=0)
    subject_width = max((len(row[1]) for row in rows), default=0)
    for where, subject, finding in rows:
        cells = [out.pad(where, where_width, BOLD)]
        if subject_width:
            cells.append(subject.ljust(subject_width))
        if finding.status == "ok":
            detail = f"({finding.stop_reason}, {plural(finding.chunks, 'chunk')})"
            cells += [out.paint("ok", GREEN), detail]
        else:
            cells += [out.paint(finding.code or "", RED), one_line(finding.message or "")]
            if finding.path:
                cells.append(out.paint(f"(at {one_line(finding.path)})", DIM))
        out.line(" ".join(cells))


def print_summary(out: Out, files: int, invalid: int, ok: int, failed: int) -> None:
    """``3 files (1 not a fixture), 7 responses: 3 ok, 4 failed``."""
    head = plural(files, "file")
    if invalid:
        what = "not a fixture" if invalid == 1 else "not fixtures"
        head += " (" + out.paint(f"{invalid} {what}", RED, BOLD) + ")"
    counts = ", ".join(
        [
            out.paint(f"{ok} ok", GREEN) if ok else f"{ok} ok",
            out.paint(f"{failed} failed", RED, BOLD) if failed else f"{failed} failed",
        ]
    )
    out.line(f"{head}, {plural(ok + failed, 'response')}: {counts}")
