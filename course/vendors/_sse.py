"""Server-sent events: the reader (with positions) and the writer.

The reader follows the WHATWG ``text/event-stream`` interpretation: lines end in CRLF,
LF or CR; a line starting with ``:`` is a comment; ``field: value`` takes one optional
space after the colon; the ``data`` lines of one event are joined with ``\\n``; a blank
line dispatches the event. ``event`` is read; ``id``, ``retry`` and unknown fields are
ignored. Two choices for recordings: only events that carry data are dispatched, and a
final event without its blank line is still dispatched (a recording may be cut there).

Every event remembers where each of its ``data`` values starts in the text, so an
error found later, deep inside the event's JSON, can point at its line and column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["SseEvent", "format_event", "read_events"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SseEvent:
    """One dispatched event: its ``event`` name, its ``data`` and where the data lies."""

    __slots__ = ("data", "data_starts", "index", "name")

    def __init__(
        self, index: int, name: str, data: str, data_starts: tuple[tuple[int, int], ...]
    ) -> None:
        self.index = index
        """Events that carry data, counted from 0."""
        self.name = name
        """The ``event`` field, ``""`` when there was none."""
        self.data = data
        self.data_starts = data_starts
        """For each ``data`` line: the 1-based line and column where its value starts."""

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column, in the whole text, of ``data[offset]``."""
        row = self.data.count("\n", 0, offset)
        line, column = self.data_starts[row]
        line_start = self.data.rfind("\n", 0, offset) + 1
        return line, column + offset - line_start

    @property
    def line(self) -> int:
        """The line of the event's first ``data`` line."""
        return self.data_starts[0][0]

    def __repr__(self) -> str:
        return f"<SseEvent {self.index} {self.name!r} at line {self.line}>"


def read_events(text: str) -> Iterator[SseEvent]:
    """The events of ``text`` that carry data, in order.

    A leading byte order mark is skipped. Never fails: any text is an event stream,
    possibly one without events.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    # Splitting on "\n" alone is the common case, and str.split is fast.
    lines = _LINE_BREAK.split(text) if "\r" in text else text.split("\n")
    index = 0
    name = ""
    data: list[str] = []
    starts: list[tuple[int, int]] = []
    for number, line in enumerate(lines, 1):
        if not line:
            if data:
                yield SseEvent(index, name, "\n".join(data), tuple(starts))
                index += 1
                data = []
                starts = []
            name = ""
            continue
        if line.startswith("data: "):
            data.append(line[6:])
            starts.append((number, 7))
            continue
        if line[0] == ":":  # a comment
            continue
        field, colon, value = line.partition(":")
        if colon:
            column = len(field) + 2
            if value.startswith(" "):
                value = value[1:]
                column += 1
        else:  # no colon: the whole line names a field whose value is empty
            column = len(line) + 1
        if field == "data":
            data.append(value)
            starts.append((number, column))
        elif field == "event":
            name = value
    if data:
        yield SseEvent(index, name, "\n".join(data), tuple(starts))


def format_event(data: str, name: str | None = None) -> str:
    """One event as text: ``event: NAME`` (if given), a ``data`` line per line of
    ``data``, and the blank line that dispatches it."""
    head = "" if name is None else f"event: {name}\n"
    body = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"{head}{body}\n"
