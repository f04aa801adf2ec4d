"""JSON text, read strictly: everything ``json.loads`` forgives is refused, with its place.

Refused, each as a ``JsonSyntaxError`` carrying the character offset, a message and the
JSON pointer of the offending value: duplicate keys in one object (at the second one),
``NaN``/``Infinity`` and numbers that overflow to infinity, integers past Python's
4,300-digit conversion limit, nesting deeper than a limit, a byte order mark, trailing
text, and everything else that is not JSON.

Two readers, one verdict:

- ``loads`` is the fast path: ``json``'s C scanner with hooks for duplicate keys,
  constants and floats, then a level-by-level depth check that iterates in C. Only
  once it knows the text is bad does it run the positioned parser, to say where.
- ``parse_positioned`` is an iterative parser that knows where every value starts.

Both refuse exactly the same texts; the tests hold them together.

For text already read, ``TextPositions`` answers "where is the value at this JSON
pointer?" lazily, scanning only the containers on the way (siblings are skipped by the
C scanner), and ``line_and_column`` is the one mapping from offsets to lines and
columns. ``item_spans`` finds the items of a root member's array even when some item is
broken, so a caller can judge each item on its own.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from itertools import chain, compress
from json.scanner import make_scanner
from typing import cast

from ._errors import pointer
from ._json import MAX_DEPTH, MAX_INT_DIGITS, PlainJson

__all__ = [
    "JsonSyntaxError",
    "TextPositions",
    "item_spans",
    "line_and_column",
    "loads",
    "parse_positioned",
]

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


def _skip(text: str, i: int) -> int:
    return _WHITESPACE.match(text, i).end()  # type: ignore[union-attr]


# -- lines and columns ----------------------------------------------------------------------


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of a character offset."""
    line, line_start = _count_lines(text, 0, 1, 0, offset)
    return line, offset - line_start + 1


def _count_lines(text: str, start: int, line: int, line_start: int, offset: int) -> tuple[int, int]:
    """The line of ``offset`` and where that line starts, counting on from ``start``,
    known to be on ``line``, which starts at ``line_start``."""
    newlines = text.count("\n", start, offset)
    if newlines:
        return line + newlines, text.rfind("\n", start, offset) + 1
    return line, line_start


# -- the positioned parser ------------------------------------------------------------------


class _Frame:
    __slots__ = ("container", "key", "keys", "path")

    def __init__(self, container: dict[str, PlainJson] | list[PlainJson], path: str) -> None:
        self.container = container
        self.path = path  # the container's JSON pointer
        self.key: str | int = 0  # the member or index the next value goes to
        self.keys: set[str] = set()


def parse_positioned(
    text: str,
    offsets: dict[str, int] | None = None,
    *,
    max_depth: int = MAX_DEPTH,
    enclosing: int = 0,
) -> PlainJson:
    """Parse strict JSON. If ``offsets`` is given, fill it with each value's start.

    ``max_depth`` is how many containers may enclose a value, the outermost counting 1;
    ``enclosing`` is how many containers already enclose the text's value (when the
    text is one part of a larger document). Raises ``JsonSyntaxError``.
    """
    end = len(text)
    stack: list[_Frame] = []

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
        after = _skip(text, after)
        if after >= end or text[after] != ":":
            raise fail(after, "Expected ':' after an object key")
        return _skip(text, after + 1)

    i = _skip(text, 0)
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
            if len(stack) + enclosing >= max_depth:
                raise fail(i, f"Nesting is deeper than the limit of {max_depth} levels")
            container: dict[str, PlainJson] | list[PlainJson] = {} if char == "{" else []
            i = _skip(text, i + 1)
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
            i = _skip(text, i)
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
                i = _skip(text, i + 1)
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


def _reason(exc: json.JSONDecodeError) -> str:
    # json's messages end in " at" before the position it reports separately.
    return exc.msg.removesuffix(" at").removesuffix(" starting")


# -- the fast path --------------------------------------------------------------------------


def loads(text: str, *, max_depth: int = MAX_DEPTH, enclosing: int = 0) -> PlainJson:
    """Parse strict JSON about as fast as ``json.loads``; raises a located ``JsonSyntaxError``.

    ``max_depth`` and ``enclosing`` as for ``parse_positioned``. The text is judged by
    the C scanner and a walk of the result; a refusal of any kind is then explained by
    ``parse_positioned``.
    """
    try:
        value = _judge(text, max_depth - enclosing)
    except (ValueError, RecursionError) as refusal:  # JSONDecodeError is a ValueError
        # Raises the located error. A text the positioned parser accepted after all
        # would be a disagreement between the two readers, which the tests rule out;
        # even then the text is refused with a coded error, never a crash.
        parse_positioned(text, max_depth=max_depth, enclosing=enclosing)
        offset = refusal.pos if isinstance(refusal, json.JSONDecodeError) else 0
        raise JsonSyntaxError(offset, f"Not strict JSON: {refusal}") from None
    return value


def _judge(text: str, limit: int) -> PlainJson:
    """The value of ``text``, or ``ValueError`` (or ``RecursionError``) if it is not strict.

    ``json``'s C scanner does the reading, with hooks for what it cannot refuse itself:
    duplicate keys, ``NaN``/``Infinity``, floats that overflow, and (only if this
    process lifted Python's own 4,300-digit limit) over-long integers.
    """
    # Longer integers fail in C already, unless this process lifted Python's own limit.
    bounded = 0 < sys.get_int_max_str_digits() <= MAX_INT_DIGITS
    value = (_loads if bounded else _loads_bounding_ints)(text)
    # Each container is written with an opening bracket (brackets inside strings only
    # make this an overestimate), so this bounds how many containers there are.
    containers = text.count("{") + text.count("[")
    if containers > limit and _nests_deeper_than(value, limit, containers):
        raise ValueError("too deep")
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


def _decoder(parse_int: Callable[[str], int] | None) -> Callable[[str], PlainJson]:
    decoder = json.JSONDecoder(
        object_pairs_hook=_unique_keys,
        parse_constant=_no_constant,
        parse_float=_finite_float,
        parse_int=parse_int,  # None: int, in C
    )
    scan: Callable[[str, int], tuple[PlainJson, int]] = make_scanner(decoder)  # type: ignore[arg-type]

    def decode(text: str) -> PlainJson:
        # The C scanner straight away, without ``JSONDecoder.decode``'s wrappers: a
        # recording parses one small text per event, where they would cost a third.
        # Whitespace before the value, or anything after it, takes the long way.
        try:
            value, end = scan(text, 0)
        except StopIteration:
            return cast("PlainJson", decoder.decode(text))
        if end != len(text) and _WHITESPACE.fullmatch(text, end) is None:
            return cast("PlainJson", decoder.decode(text))
        return value

    return decode


_loads = _decoder(None)
_loads_bounding_ints = _decoder(_bounded_int)

_IS_DICT = frozenset({dict}).__contains__
_IS_LIST = frozenset({list}).__contains__


def _nests_deeper_than(value: PlainJson, limit: int, containers: int) -> bool:
    """Whether containers nest deeper than ``limit`` in ``value`` (itself counting 1),
    which holds at most ``containers`` containers.

    Level by level, each level's children gathered and sorted by type with ``map``,
    ``chain`` and ``compress``, so the loop runs in C: once per level, not per value.
    It stops as soon as the containers not yet seen are too few to reach past the
    limit even in a chain, which usually spares the last, largest levels (the values
    of every record) when only a few containers are left among them.
    """
    dicts = [value] if isinstance(value, dict) else []
    lists = [value] if isinstance(value, list) else []
    depth = 0
    while dicts or lists:
        depth += 1
        containers -= len(dicts) + len(lists)
        if depth + containers <= limit:
            return False
        if depth > limit:
            return True
        children: list[PlainJson] = list(
            chain(chain.from_iterable(map(dict.values, dicts)), chain.from_iterable(lists))
        )
        types = list(map(type, children))
        kinds = set(types)
        if len(kinds) == 1:  # one kind (all records, say): nothing to sort
            dicts = children if dict in kinds else []  # type: ignore[assignment]
            lists = children if list in kinds else []  # type: ignore[assignment]
            continue
        dicts = list(compress(children, map(_IS_DICT, types))) if dict in kinds else []  # type: ignore[arg-type]
        lists = list(compress(children, map(_IS_LIST, types))) if list in kinds else []  # type: ignore[arg-type]
    return False


# -- finding values in text already read ------------------------------------------------------

# Skips one value in C (any JSON json.loads would take), returning where it ends.
_scan_value: Callable[[str, int], tuple[object, int]] = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


class TextPositions:
    """Where the values (and the keys) of one JSON text are, found lazily by JSON pointer.

    Only the containers on the way to a value are scanned, each at most once, their
    other children skipped by the C scanner, so locating every response of a fixture
    costs about one ``json.loads`` of the text. A broken text is scanned as far as it
    goes: values past the break are unknown unless ``remember`` was told where they are.
    """

    __slots__ = ("_keys", "_line", "_scanned", "_text", "_values")

    def __init__(self, text: str) -> None:
        self._text = text
        self._values: dict[str, int] = {}
        self._keys: dict[str, int] = {}
        self._scanned: set[str] = set()
        self._line = (0, 1, 0)  # the last offset mapped, its line, where that line starts
        root = _skip(text, 0)
        if root < len(text):
            self._values[""] = root

    def remember(self, path: str, offset: int) -> None:
        """Say where the value at ``path`` starts (for a text broken before it)."""
        self._values[path] = offset

    def offset(self, path: str, *, key: bool = False) -> int | None:
        """Where the value at ``path`` starts, or with ``key`` where its member's key
        starts; else the nearest enclosing value found. ``None`` if none is."""
        found = self._values.get("")
        if found is None:
            return None
        walked = ""
        for part in path.split("/")[1:]:
            child = f"{walked}/{part}"
            if child not in self._values:
                self._scan(walked, found)
                if child not in self._values:
                    return found
            walked, found = child, self._values[child]
        if key:
            return self._keys.get(walked, found)
        return found

    def line_and_column(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of ``offset``; counts on from the last answer."""
        start, line, line_start = self._line
        if offset < start:
            start, line, line_start = 0, 1, 0
        line, line_start = _count_lines(self._text, start, line, line_start, offset)
        self._line = (offset, line, line_start)
        return line, offset - line_start + 1

    def _scan(self, path: str, start: int) -> None:
        """Record where each child of the container at ``path`` (at ``start``) starts."""
        if path in self._scanned:
            return
        self._scanned.add(path)
        text = self._text
        if text[start] not in "[{":
            return
        is_object = text[start] == "{"
        try:
            i = _skip(text, start + 1)
            index = 0
            while text[i] not in "]}":
                if is_object:
                    name, after = scanstring(text, i + 1, True)
                    child = path + pointer(name)
                    self._keys.setdefault(child, i)
                    i = _skip(text, after)
                    if text[i] != ":":
                        return
                    i = _skip(text, i + 1)
                else:
                    child = f"{path}/{index}"
                self._values.setdefault(child, i)
                i = _skip(text, _scan_value(text, i)[1])
                if text[i] != ",":
                    return
                i = _skip(text, i + 1)
                index += 1
        except (ValueError, IndexError, StopIteration, RecursionError):
            return  # broken here: later children stay unknown


# -- items of a broken text ------------------------------------------------------------------

# A string (possibly with escaped quotes) or one structural character.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]', re.DOTALL)
_SCALAR = re.compile(r"[^,\]}]*")


def item_spans(text: str, key: str) -> list[tuple[int, int]] | None:
    """Where each item of the array at member ``key`` of the root object starts and ends.

    Read leniently, so that one broken item (a trailing comma, a duplicate key, ``NaN``)
    does not hide the others: a well-formed item is skipped by the C scanner, a broken
    one by matching brackets outside strings. ``None`` if the array cannot be found or
    its items cannot be told apart.
    """
    try:
        i = _skip(text, 0)
        if text[i] != "{":
            return None
        i = _skip(text, i + 1)
        while True:
            name, after = scanstring(text, i + 1, True)
            i = _skip(text, after)
            if text[i] != ":":
                return None
            i = _skip(text, i + 1)
            if name == key:
                return _array_items(text, i) if text[i] == "[" else None
            end = _lenient_end(text, i)
            if end is None:
                return None
            i = _skip(text, end)
            if text[i] != ",":
                return None
            i = _skip(text, i + 1)
    except (ValueError, IndexError):
        return None


def _array_items(text: str, start: int) -> list[tuple[int, int]] | None:
    spans: list[tuple[int, int]] = []
    i = _skip(text, start + 1)
    if text[i] == "]":
        return spans
    while True:
        end = _lenient_end(text, i)
        if end is None or end == i:
            return None
        spans.append((i, end))
        i = _skip(text, end)
        if text[i] == "]":
            return spans
        if text[i] != ",":
            return None
        i = _skip(text, i + 1)


def _lenient_end(text: str, start: int) -> int | None:
    """Where the value at ``start`` ends, even if it is not strict JSON inside."""
    try:
        return _scan_value(text, start)[1]
    except (ValueError, StopIteration, RecursionError):
        pass
    if text[start] not in "[{":  # a broken scalar: up to the next separator
        end = _SCALAR.match(text, start).end()  # type: ignore[union-attr]
        while end > start and text[end - 1] in " \t\n\r":
            end -= 1
        return end
    depth = 0
    for token in _TOKEN.finditer(text, start):
        char = token.group()[0]
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return token.end()
    return None
