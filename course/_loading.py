"""Strict loading of fixture files: JSON as written, with nothing ``json.loads`` forgives.

Rejected, each with the file, the 1-based line and the 1-based column: invalid
UTF-8, a byte order mark, duplicate keys in one object (at the second one),
``NaN``/``Infinity`` and numbers that overflow to infinity, integers past Python's
4,300-digit conversion limit, and nesting deeper than ``MAX_DEPTH``. The parser is
iterative, so depth can never become a ``RecursionError``; it can also report where
each value starts, which ``course-fixture validate`` uses to point into the file.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable

from ._errors import FixtureProviderError, FixtureProviderErrorCode, pointer
from ._json import MAX_DEPTH, MAX_INT_DIGITS, PlainJson

__all__ = ["JsonSyntaxError", "line_and_column", "load_fixture", "parse_json"]

# The C string scanner json itself uses: fast, strict about control characters.
scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_NON_FINITE = ("NaN", "Infinity", "-Infinity")
_LITERALS: tuple[tuple[str, PlainJson], ...] = (("true", True), ("false", False), ("null", None))


class JsonSyntaxError(Exception):
    """Where (character offset and JSON pointer) and why a text is not strict JSON."""

    def __init__(self, offset: int, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.path = path


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


class _Frame:
    __slots__ = ("container", "key", "keys", "path")

    def __init__(self, container: dict[str, PlainJson] | list[PlainJson], path: str) -> None:
        self.container = container
        self.path = path  # the container's JSON pointer
        self.key: str | int = 0  # the member or index the next value goes to
        self.keys: set[str] = set()


def parse_json(text: str, offsets: dict[str, int] | None = None) -> PlainJson:
    """Parse strict JSON. If ``offsets`` is given, fill it with each value's start.

    Raises ``JsonSyntaxError``.
    """
    end = len(text)
    stack: list[_Frame] = []

    def skip(i: int) -> int:
        return _WHITESPACE.match(text, i).end()  # type: ignore[union-attr]

    def here() -> str:
        """The JSON pointer of the value being read."""
        if not stack:
            return ""
        frame = stack[-1]
        return frame.path + pointer(frame.key)

    def fail(i: int, message: str) -> JsonSyntaxError:
        return JsonSyntaxError(i, message, here())

    def read_key(frame: _Frame, i: int) -> int:
        # Until the key is read, errors belong to the object itself.
        if i >= end or text[i] != '"':
            comma = _trailing_comma(text, i)
            if comma is not None:
                raise JsonSyntaxError(comma, _TRAILING_COMMA, frame.path)
            raise JsonSyntaxError(i, "Expected a string key in double quotes", frame.path)
        try:
            key, after = scanstring(text, i + 1, True)
        except json.JSONDecodeError as exc:
            raise JsonSyntaxError(exc.pos, _reason(exc), frame.path) from None
        if key in frame.keys:
            frame.key = key
            raise fail(i, f"Duplicate key {key!r} in one object")
        frame.keys.add(key)
        frame.key = key
        after = skip(after)
        if after >= end or text[after] != ":":
            raise fail(after, "Expected ':' after an object key")
        return skip(after + 1)

    i = skip(0)
    if text.startswith("\ufeff"):
        raise JsonSyntaxError(
            0, "Expected JSON text, got a byte order mark (save as UTF-8 without BOM)"
        )
    while True:
        if offsets is not None:
            offsets[here()] = i
        if i >= end:
            raise fail(i, "Expected a value, got the end of the file")
        char = text[i]
        value: PlainJson
        if char in {"{", "["}:
            if len(stack) >= MAX_DEPTH:
                raise fail(i, f"Nesting is deeper than the limit of {MAX_DEPTH} levels")
            container: dict[str, PlainJson] | list[PlainJson] = {} if char == "{" else []
            i = skip(i + 1)
            if i < end and text[i] == ("}" if char == "{" else "]"):
                value = container
                i += 1
            else:
                frame = _Frame(container, here())
                stack.append(frame)
                if char == "{":
                    i = read_key(frame, i)
                continue
        elif char == '"':
            try:
                value, i = scanstring(text, i + 1, True)
            except json.JSONDecodeError as exc:
                raise fail(exc.pos, _reason(exc)) from None
        elif char == "-" or "0" <= char <= "9":
            match = _NUMBER.match(text, i)
            if match is None:
                if text.startswith("-Infinity", i):
                    raise fail(i, "Expected a finite number, got -Infinity")
                raise fail(i, "Expected a number")
            token = match.group()
            if match.group(1) is None and match.group(2) is None:
                # The SPEC's fixed limit, whatever sys.set_int_max_str_digits() says.
                if len(token) - (token[0] == "-") > MAX_INT_DIGITS:
                    raise fail(
                        i,
                        f"Expected an integer of at most {MAX_INT_DIGITS} digits, got a longer one",
                    )
                try:
                    value = int(token)
                except ValueError:  # this process lowered Python's own limit
                    raise fail(
                        i, f"The integer has more digits than Python allows here ({len(token)})"
                    ) from None
            else:
                value = float(token)
                if not math.isfinite(value):
                    raise fail(i, f"Expected a finite number, got {token[:20]!r}, which overflows")
            i = match.end()
        else:
            for word, literal in _LITERALS:
                if text.startswith(word, i):
                    value = literal
                    i += len(word)
                    break
            else:
                for word in _NON_FINITE:
                    if text.startswith(word, i):
                        raise fail(i, f"Expected a finite number, got {word} (not JSON)")
                comma = _trailing_comma(text, i)
                if comma is not None:
                    raise JsonSyntaxError(comma, _TRAILING_COMMA, stack[-1].path if stack else "")
                raise fail(i, f"Expected a JSON value, got {text[i]!r}")
        # A value is complete: attach it, then close every container that ends here.
        while True:
            i = skip(i)
            if not stack:
                if i != end:
                    raise JsonSyntaxError(i, "Expected the end of the file after the JSON value")
                return value
            frame = stack[-1]
            if type(frame.container) is dict:
                frame.container[frame.key] = value  # type: ignore[index]
                closer = "}"
            else:
                frame.container.append(value)  # type: ignore[union-attr]
                closer = "]"
            if i < end and text[i] == ",":
                i = skip(i + 1)
                if closer == "}":
                    i = read_key(frame, i)
                else:
                    frame.key = len(frame.container)
                break
            if i < end and text[i] == closer:
                i += 1
                value = stack.pop().container
                continue
            raise JsonSyntaxError(i, f"Expected ',' or '{closer}'", frame.path)


_TRAILING_COMMA = "Expected another item after this comma (a trailing comma is not JSON)"


def _trailing_comma(text: str, closer: int) -> int | None:
    """Where the comma is, if ``text[closer]`` closes a container right after one."""
    if closer >= len(text) or text[closer] not in "]}":
        return None
    before = len(text[:closer].rstrip(" \t\n\r")) - 1
    return before if before >= 0 and text[before] == "," else None


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
        return parse_json(text, offsets), text
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


def _reason(exc: json.JSONDecodeError) -> str:
    # json's messages end in " at" before the position it reports separately.
    return exc.msg.removesuffix(" at").removesuffix(" starting")


_RECORD_POINTER = re.compile(r"/responses/(\d+)(?=/|$)(?:/records/(\d+)(?=/|$))?")


def _indexes(path: str | None) -> tuple[int | None, int | None]:
    """The response and record indexes a JSON pointer into a fixture names, if any."""
    match = _RECORD_POINTER.match(path or "")
    if match is None:
        return None, None
    record = match.group(2)
    return int(match.group(1)), None if record is None else int(record)
