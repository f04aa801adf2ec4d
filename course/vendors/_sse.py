"""Server-sent events: the reader (with positions) and the writer.

The reader follows the WHATWG ``text/event-stream`` interpretation: lines end in CRLF,
LF or CR; a line starting with ``:`` is a comment; ``field: value`` takes one optional
space after the colon; the ``data`` lines of one event are joined with ``\\n``; a blank
line dispatches the event. ``event`` is read; ``id``, ``retry`` and unknown fields are
ignored. Two choices for recordings: only events that carry data are dispatched, and a
final event without its blank line is still dispatched (a recording may be cut there). A
final event whose last ``data`` line the text ends inside, with no line end, is marked
``cut``: the recording stopped in the middle of it. The caller strips the byte order mark
(exactly one), so bytes and text read alike.

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

    __slots__ = ("cut", "data", "data_starts", "index", "name")

    def __init__(
        self,
        index: int,
        name: str,
        data: str,
        data_starts: tuple[tuple[int, int], ...],
        cut: bool = False,
    ) -> None:
        self.index = index
        """Events that carry data, counted from 0."""
        self.name = name
        """The ``event`` field, ``""`` when there was none."""
        self.data = data
        self.data_starts = data_starts
        """For each ``data`` line: the 1-based line and column where its value starts."""
        self.cut = cut
        """The text ends inside this event's last ``data`` line, with no line end."""

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

    Never fails: any text is an event stream, possibly one without events.
    """
    if "\r" in text:
        # One "\n" per line break keeps every line number and column.
        text = _LINE_BREAK.sub("\n", text)
    index = 0
    line = 1  # where the block starts
    # A blank line ends an event, so an event is a block between "\n\n"s. Nearly every
    # block is one `data` line, or an `event` line and a `data` line: those take a
    # shortcut; any other block is read line by line, and so is the last one, which
    # may have been cut.
    blocks = text.split("\n\n")
    tail = blocks.pop()
    for block in blocks:
        if block.startswith("data: ") and "\n" not in block:
            yield SseEvent(index, "", block[6:], ((line, 7),))
            index += 1
            line += 2
            continue
        if block.startswith("event: "):
            head, _, data = block.partition("\n")
            if data.startswith("data: ") and "\n" not in data:
                yield SseEvent(index, head[7:], data[6:], ((line + 1, 7),))
                index += 1
                line += 3
                continue
        event = _read_block(block, line, index)
        if event is not None:
            yield event
            index += 1
        line += block.count("\n") + 2
    event = _read_block(tail, line, index, open_end=not tail.endswith("\n"))
    if event is not None:
        yield event


def _read_block(
    block: str, first_line: int, index: int, *, open_end: bool = False
) -> SseEvent | None:
    """The event of a block of lines with no blank line inside (but maybe one before).

    ``open_end``: the text ends with the block's last line, which has no line end.
    """
    name = ""
    data: list[str] = []
    starts: list[tuple[int, int]] = []
    last_is_data = False
    for number, line in enumerate(block.split("\n"), first_line):
        last_is_data = False
        if not line or line[0] == ":":  # a blank line before any data, or a comment
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
            last_is_data = True
        elif field == "event":
            name = value
    if not data:
        return None
    return SseEvent(index, name, "\n".join(data), tuple(starts), open_end and last_is_data)


def format_event(data: str, name: str | None = None) -> str:
    """One event as text: ``event: NAME`` (if given), a ``data`` line per line of
    ``data``, and the blank line that dispatches it."""
    head = "" if name is None else f"event: {name}\n"
    body = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"{head}{body}\n"
