"""Strict loading of fixture files: JSON as written, with nothing ``json.loads`` forgives.

Rejected, each with the file, the 1-based line and the 1-based column: invalid UTF-8,
and everything ``course._json_text`` refuses (a byte order mark, duplicate keys,
``NaN``/``Infinity``, overflowing numbers, over-long integers, nesting deeper than
``MAX_DEPTH``).
"""

from __future__ import annotations

import os
import re

from ._errors import FixtureProviderError, FixtureProviderErrorCode
from ._json import PlainJson
from ._json_text import JsonSyntaxError, line_and_column, loads, parse_positioned

__all__ = ["load_fixture", "read_fixture"]


def load_fixture(path: str | os.PathLike[str]) -> PlainJson:
    """Read a fixture file as strict UTF-8 JSON and return plain data for the adapter.

    Every failure is a ``FixtureProviderError`` with code ``PROVIDER_INVALID_FIXTURE``
    whose message names the file, the line and the column of the offending token.
    """
    return read_fixture(path)[0]


def read_fixture(
    path: str | os.PathLike[str], offsets: dict[str, int] | None = None
) -> tuple[PlainJson, str]:
    """Load a fixture and also return its text (for mapping offsets to lines)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as file:
            data = file.read()
    except (OSError, ValueError) as exc:  # ValueError: a path with a NUL byte
        error = FixtureProviderError(
            FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE,
            f"{name}: cannot read the fixture file: {getattr(exc, 'strerror', None) or exc}",
        )
        raise error from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8")
        line, column = line_and_column(prefix, len(prefix))
        raise FixtureProviderError(
            FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE,
            f"{name}:{line}:{column}: Expected UTF-8 text, got the invalid byte "
            f"0x{data[exc.start]:02x} (line {line}, column {column})",
        ) from None
    try:
        return (loads(text) if offsets is None else parse_positioned(text, offsets)), text
    except JsonSyntaxError as exc:
        line, column = line_and_column(text, exc.offset)
        response_index, record_index = _indexes(exc.path)
        raise FixtureProviderError(
            FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE,
            f"{name}:{line}:{column}: {exc.message} (line {line}, column {column})",
            response_index=response_index,
            record_index=record_index,
            path=exc.path,
        ) from None


_RECORD_POINTER = re.compile(r"/responses/(\d+)(?=/|$)(?:/records/(\d+)(?=/|$))?")


def _indexes(path: str | None) -> tuple[int | None, int | None]:
    """The response and record indexes a JSON pointer into a fixture names, if any."""
    match = _RECORD_POINTER.match(path or "")
    if match is None:
        return None, None
    record = match.group(2)
    return int(match.group(1)), None if record is None else int(record)
