"""JSON text, read strictly: everything ``json.loads`` forgives is refused, with its place.

Refused, each as a ``JsonSyntaxError`` carrying the character offset, a message and the
JSON pointer of the offending value: duplicate keys in one object (at the second one),
``NaN``/``Infinity`` and numbers that overflow to infinity, integers past Python's
4,300-digit conversion limit, nesting deeper than a limit, a byte order mark, trailing
text, and everything else that is not JSON.

``loads`` is the fast path: the C scanner of ``json.loads`` with hooks for duplicate keys
and constants, then a container walk for the depth. Only once it knows the text is bad
does it run ``parse_positioned``, an iterative parser that knows where every value
starts, to say where. Both readers refuse exactly the same texts; the tests hold them
together.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable

from ._errors import pointer
from ._json import MAX_DEPTH, MAX_INT_DIGITS, PlainJson

__all__ = ["JsonSyntaxError", "line_and_column", "loads", "parse_positioned"]

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


def parse_positioned(
    text: str, offsets: dict[str, int] | None = None, *, max_depth: int = MAX_DEPTH
) -> PlainJson:
    """Parse strict JSON. If ``offsets`` is given, fill it with each value's start.

    ``max_depth`` is how many containers may enclose a value, the outermost counting 1.
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
            if len(stack) >= max_depth:
                raise fail(i, f"Nesting is deeper than the limit of {max_depth} levels")
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


def loads(text: str, *, max_depth: int = MAX_DEPTH) -> PlainJson:
    """Parse strict JSON as fast as ``json.loads``; raises a located ``JsonSyntaxError``.

    ``max_depth`` as for ``parse_positioned``. The text is judged by the C scanner with
    strict hooks; a refusal of any kind is then explained by ``parse_positioned``.
    """
    try:
        value = _strict_loads(text)
        if _depth_may_exceed(text, max_depth):
            _check_depth(value, max_depth)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        # Raises the located error. A text the positioned parser accepted after all
        # would be a disagreement between the two readers, which the tests rule out.
        parse_positioned(text, max_depth=max_depth)
        raise AssertionError("the JSON readers disagree") from None  # pragma: no cover
    return value


def _unique_keys(pairs: list[tuple[str, PlainJson]]) -> dict[str, PlainJson]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("duplicate key")
    return value


def _no_constant(word: str) -> PlainJson:
    raise ValueError(f"{word} is not JSON")


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise ValueError("overflows")
    return value


def _bounded_int(token: str) -> int:
    # The SPEC's fixed limit, whatever sys.set_int_max_str_digits() says.
    if len(token) - (token[0] == "-") > MAX_INT_DIGITS:
        raise ValueError("too many digits")
    return int(token)


_strict_loads: Callable[[str], PlainJson] = json.JSONDecoder(
    object_pairs_hook=_unique_keys,
    parse_constant=_no_constant,
    parse_float=_finite_float,
    parse_int=_bounded_int,
).decode


def _depth_may_exceed(text: str, max_depth: int) -> bool:
    """Whether ``text`` has enough brackets to nest past ``max_depth`` (cheap, in C)."""
    return text.count("[") + text.count("{") > max_depth


def _check_depth(value: PlainJson, max_depth: int) -> None:
    """Raise ``ValueError`` if containers nest deeper than ``max_depth``."""
    stack: list[tuple[PlainJson, int]] = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        children = container.values() if type(container) is dict else container
        for child in children:  # type: ignore[union-attr]
            if type(child) is dict or type(child) is list:
                if depth >= max_depth:
                    raise ValueError("too deep")
                stack.append((child, depth + 1))


_TRAILING_COMMA = "Expected another item after this comma (a trailing comma is not JSON)"


def _trailing_comma(text: str, closer: int) -> int | None:
    """Where the comma is, if ``text[closer]`` closes a container right after one."""
    if closer >= len(text) or text[closer] not in "]}":
        return None
    before = len(text[:closer].rstrip(" \t\n\r")) - 1
    return before if before >= 0 and text[before] == "," else None


def _reason(exc: json.JSONDecodeError) -> str:
    # json's messages end in " at" before the position it reports separately.
    return exc.msg.removesuffix(" at").removesuffix(" starting")
