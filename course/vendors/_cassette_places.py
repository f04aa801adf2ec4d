"""Where a cassette's response body lies in the file, character by character.

A refusal inside a body is found at a line and column of the body's own text; an editor
needs the line and column in the cassette. PyYAML gives the value of a scalar and where
the scalar starts, not where each of its characters comes from, so ``scalar_offsets``
reads the scalar's source again as PyYAML's scanner does (quoted scalars with their
escapes and line folding; literal blocks) and keeps, for each character of the value,
its offset in the file. The value it reads must equal PyYAML's, else there is no exact
answer and the caller points at the scalar as a whole: a slip here can cost precision,
never a wrong place.
"""

from __future__ import annotations

import bisect
import re
from typing import Final

__all__ = ["Lines", "body_offset", "scalar_offsets"]

_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")
_BREAKS: Final = "\r\n\x85\u2028\u2029"
_PROPERTIES: Final = re.compile(r"(?:[&!][^ \t\r\n]*[ \t]+)*")
"""An anchor and a tag before a value: ``&body !!str ``."""
_ESCAPES: Final = {
    "0": "\0",
    "a": "\x07",
    "b": "\x08",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "\\": "\\",
    "/": "/",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_ESCAPE_CODES: Final = {"x": 2, "u": 4, "U": 8}
_HEX: Final = re.compile(r"[0-9A-Fa-f]*")
_BLOCK_HEADER: Final = re.compile(r"\|(?:[1-9][+-]?|[+-][1-9]?)?[ \t]*(?:#.*)?")


class Lines:
    """Offsets to 1-based lines and columns (code points) of one text, whose lines end
    in CRLF, LF or CR, as an editor counts them."""

    def __init__(self, text: str) -> None:
        self._starts = [0, *(match.end() for match in _LINE_BREAK.finditer(text))]

    def position(self, offset: int) -> tuple[int, int]:
        row = bisect.bisect_right(self._starts, offset) - 1
        return row + 1, offset - self._starts[row] + 1

    def offset(self, line: int, column: int) -> int | None:
        """The offset of a line and column, if the line exists."""
        if not 1 <= line <= len(self._starts):
            return None
        return self._starts[line - 1] + column - 1


def body_offset(body: str, line: int, column: int) -> int | None:
    """The offset in ``body`` of a line and column the recording reader gave (it counts
    CRLF, LF and CR as one line end each)."""
    return Lines(body).offset(line, column)


def scalar_offsets(text: str, start: int, style: str | None, value: str) -> list[int] | None:
    """For each character of ``value``, a scalar whose node starts at ``start`` of
    ``text`` (anchor and tag included), its offset in ``text``; ``None`` when the scalar
    is of a style not read here (plain, folded) or reads otherwise than ``value``."""
    start = _PROPERTIES.match(text, start).end()  # type: ignore[union-attr]
    if style in ('"', "'") and text.startswith(style, start):
        read = _flow_scalar(text, start)
    elif style == "|" and text.startswith("|", start):
        read = _literal_block(text, start, value)
    else:
        return None
    if read is None or read[0] != value:
        return None
    return read[1]


# -- quoted scalars, as PyYAML's scan_flow_scalar reads them ---------------------------------


class _Reader:
    """The characters of a quoted scalar, each with the offset it comes from."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.chars: list[str] = []
        self.offsets: list[int] = []

    def push(self, chars: str, offset: int) -> None:
        for char in chars:
            self.chars.append(char)
            self.offsets.append(offset)

    def copy(self, start: int, end: int) -> None:
        """Characters ``start`` to ``end`` of the text, as they are."""
        self.chars.extend(self.text[start:end])
        self.offsets.extend(range(start, end))

    def peek(self, i: int) -> str:
        return self.text[i] if i < len(self.text) else "\0"

    def line_break(self, i: int) -> tuple[str, int]:
        """The line break at ``i`` as YAML reads it (CRLF, CR and NEL are a newline),
        and where it ends; ``("", i)`` when there is none."""
        char = self.peek(i)
        if char == "\r" and self.peek(i + 1) == "\n":
            return "\n", i + 2
        if char in "\r\n\x85":
            return "\n", i + 1
        if char in "\u2028\u2029":
            return char, i + 1
        return "", i

    def breaks(self, i: int) -> int:
        """Blank lines (and the indentation of the next one) after a line break: each
        break is kept. Returns where the next content starts."""
        while True:
            while self.peek(i) in " \t":
                i += 1
            at = i
            kept, i = self.line_break(i)
            if not kept:
                return at
            self.push(kept, at)


def _flow_scalar(text: str, start: int) -> tuple[str, list[int]] | None:
    quote = text[start]
    double = quote == '"'
    stops = "'\"\\\0 \t" + _BREAKS
    reader = _Reader(text)
    i = start + 1
    while True:
        # Characters that are neither spaces nor line breaks, escapes resolved.
        while True:
            end = i
            while end < len(text) and text[end] not in stops:
                end += 1
            reader.copy(i, end)
            i = end
            char = reader.peek(i)
            if not double and char == "'" and reader.peek(i + 1) == "'":
                reader.push("'", i)
                i += 2
            elif (double and char == "'") or (not double and char in '"\\'):
                reader.push(char, i)
                i += 1
            elif double and char == "\\":
                escape = reader.peek(i + 1)
                if escape in _ESCAPES:
                    reader.push(_ESCAPES[escape], i)
                    i += 2
                elif escape in _ESCAPE_CODES:
                    length = _ESCAPE_CODES[escape]
                    digits = text[i + 2 : i + 2 + length]
                    if len(digits) != length or _HEX.fullmatch(digits) is None:
                        return None
                    reader.push(chr(int(digits, 16)), i)
                    i += 2 + length
                elif escape in _BREAKS:  # an escaped line break joins the lines
                    _, i = reader.line_break(i + 1)
                    i = reader.breaks(i)
                else:
                    return None
            else:
                break
        if char == quote:
            return "".join(reader.chars), reader.offsets
        # Spaces, then maybe a line break: folded to one space, or to the breaks after it.
        end = i
        while reader.peek(end) in " \t":
            end += 1
        char = reader.peek(end)
        if char == "\0":
            return None  # the text ends inside the scalar
        if char in _BREAKS:
            kept, after = reader.line_break(end)
            length = len(reader.chars)
            i = reader.breaks(after)
            if kept != "\n":
                reader.chars.insert(length, kept)
                reader.offsets.insert(length, end)
            elif len(reader.chars) == length:  # no blank line: the break is one space
                reader.push(" ", end)
        else:
            reader.copy(i, end)
            i = end


# -- literal blocks ---------------------------------------------------------------------------


def _literal_block(text: str, start: int, value: str) -> tuple[str, list[int]] | None:
    """A ``|`` block: each line of the value is a line of the file after the header,
    without the block's indentation."""
    header = _LINE_BREAK.search(text, start)
    if header is None or _BLOCK_HEADER.fullmatch(text, start, header.start()) is None:
        return None
    lines = value.split("\n")
    offsets: list[int] = []
    i = header.end()
    indent: int | None = None  # the block's, told by its first line that has content
    for number, line in enumerate(lines):
        end_match = _LINE_BREAK.search(text, i)
        end = len(text) if end_match is None else end_match.start()
        source = text[i:end]
        if line:
            if indent is None:
                indent = len(source) - len(line)
                if indent < 0 or source[:indent].strip(" "):
                    return None
            if source[indent:] != line:
                return None
            offsets.extend(range(i + indent, i + indent + len(line)))
        if number < len(lines) - 1:
            offsets.append(end)  # the line's own break
        i = len(text) if end_match is None else end_match.end()
    return value, offsets
