"""Strict loading of fixture files: JSON as written, with nothing ``json.loads`` forgives.

Rejected, each with the file, the 1-based line and the 1-based column: invalid UTF-8,
and everything ``course._json_text`` refuses (a byte order mark, duplicate keys,
``NaN``/``Infinity``, overflowing numbers, over-long integers, nesting deeper than
``MAX_DEPTH``). The place is in the message (``FILE:LINE:COLUMN: why``) and, as data,
in the error's ``line`` and ``column`` (and ``path``, ``response_index``,
``record_index`` when the offending value sits inside the fixture).

``load_fixture`` reads a file in two steps that the command line also uses on their
own: ``read_fixture_text`` (bytes to text) and ``parse_fixture_text`` (text, or one
part of it, to plain data).
"""

from __future__ import annotations

import os
import re

from ._errors import FixtureProviderError, FixtureProviderErrorCode
from ._json import PlainJson
from ._json_text import JsonSyntaxError, line_and_column, loads

__all__ = ["load_fixture", "parse_fixture_text", "place", "read_fixture_text"]


def load_fixture(path: str | os.PathLike[str]) -> PlainJson:
    """Read a fixture file as strict UTF-8 JSON and return plain data for the adapter.

    Every failure is a ``FixtureProviderError`` with code ``PROVIDER_INVALID_FIXTURE``
    whose message names the file, the line and the column of the offending token; the
    error's ``line`` and ``column`` hold them too.
    """
    name = os.fspath(path)
    return parse_fixture_text(name, read_fixture_text(name))


def place(name: str, line: int | None = None, column: int | None = None) -> str:
    """``FILE:LINE:COLUMN``, or ``FILE`` without a line: how a place in a file is written."""
    return name if line is None else f"{name}:{line}:{column}"


def read_fixture_text(name: str) -> str:
    """The file's text: its bytes, decoded as strict UTF-8."""
    try:
        with open(name, "rb") as file:
            data = file.read()
    except (OSError, ValueError) as exc:  # ValueError: a path with a NUL byte
        error = _error(
            name, f"cannot read the fixture file: {getattr(exc, 'strerror', None) or exc}"
        )
        raise error from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8")
        line, column = line_and_column(prefix, len(prefix))
        raise _error(
            name,
            f"Expected UTF-8 text, got the invalid byte 0x{data[exc.start]:02x}",
            line=line,
            column=column,
        ) from None


def parse_fixture_text(
    name: str,
    text: str,
    *,
    start: int = 0,
    end: int | None = None,
    path: str = "",
    enclosing: int = 0,
) -> PlainJson:
    """Parse ``text[start:end]``, the value at ``path`` of the fixture, strictly.

    ``enclosing`` is how many containers enclose that value in the whole fixture (for
    the nesting limit). Errors are located in the whole text.
    """
    part = text if start == 0 and end is None else text[start:end]
    try:
        return loads(part, enclosing=enclosing)
    except JsonSyntaxError as exc:
        line, column = line_and_column(text, start + exc.offset)
        pointer = path + (exc.path or "")
        response_index, record_index = _indexes(pointer)
        raise _error(
            name,
            exc.message,
            line=line,
            column=column,
            path=pointer,
            response_index=response_index,
            record_index=record_index,
        ) from None


def _error(
    name: str,
    reason: str,
    *,
    line: int | None = None,
    column: int | None = None,
    path: str | None = None,
    response_index: int | None = None,
    record_index: int | None = None,
) -> FixtureProviderError:
    error = FixtureProviderError(
        FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE,
        f"{place(name, line, column)}: {reason}",
        response_index=response_index,
        record_index=record_index,
        path=path,
    )
    error.line = line
    error.column = column
    return error


# An index as a pointer writes it: ASCII digits, no leading zero. (``\d`` would also
# take other scripts' digits, so an object key such as "\u0663" would pass for 3.)
_INDEX = r"(0|[1-9][0-9]*)(?=/|$)"
_RECORD_POINTER = re.compile(rf"/responses/{_INDEX}(?:/records/{_INDEX})?")


def _indexes(path: str) -> tuple[int | None, int | None]:
    """The response and record indexes a JSON pointer into a fixture names, if any."""
    match = _RECORD_POINTER.match(path)
    if match is None:
        return None, None
    record = match.group(2)
    return int(match.group(1)), None if record is None else int(record)
