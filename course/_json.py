"""Plain JSON at the trust boundary: the read-only snapshot and its inverse, ``thaw``.

``freeze`` is the only way a value from outside becomes part of the adapter's state.
It accepts plain JSON by *exact* type (``type(v) is dict``, never ``isinstance``), so
no method of the input is ever called: not ``__eq__``, ``__hash__``, ``__iter__``,
``__getattr__``, nor a metaclass ``__instancecheck__``. It copies each distinct
container once, into a ``MappingProxyType`` or a ``tuple``, preserving sharing as
``copy.deepcopy`` does, and rejects cycles and nesting past ``MAX_DEPTH``. It is
iterative, so hostile depth is a coded error rather than a ``RecursionError``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TypeAlias, overload

from ._errors import FixtureProviderError, FixtureProviderErrorCode, pointer
from ._untrusted import type_name

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "RECORD_DEPTH",
    "ArrayRecord",
    "JsonValue",
    "Location",
    "Memo",
    "PlainJson",
    "freeze",
    "preview",
    "refreeze",
    "thaw",
]

JsonValue: TypeAlias = (
    "bool | int | float | str | tuple[JsonValue, ...] | Mapping[str, JsonValue] | None"
)
"""A read-only JSON value as the adapter emits it."""

PlainJson: TypeAlias = "bool | int | float | str | list[PlainJson] | dict[str, PlainJson] | None"
"""A plain, mutable JSON value as ``json.loads`` returns it."""

MAX_DEPTH = 256
"""How many containers may enclose a value, counting the fixture root as 1."""

MAX_INT_DIGITS = 4300
"""The most decimal digits a fixture integer may have (Python's default conversion limit)."""

# By default Python refuses to print ints of more digits; such an int could not be
# written back as JSON, so it is not plain JSON.
_INT_LIMIT = 10**MAX_INT_DIGITS

_INVALID = FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE


class Location:
    """Where a value sits in the fixture, for errors."""

    __slots__ = ("parts", "record_index", "response_index")

    def __init__(
        self,
        parts: tuple[str | int, ...],
        response_index: int | None = None,
        record_index: int | None = None,
    ) -> None:
        self.parts = parts
        self.response_index = response_index
        self.record_index = record_index

    def error(self, message: str, *extra: str | int) -> FixtureProviderError:
        return FixtureProviderError(
            _INVALID,
            message,
            response_index=self.response_index,
            record_index=self.record_index,
            path=pointer(*self.parts, *extra),
        )


def _scalar_problem(value: object) -> str | None:
    """Why a non-container value is not plain JSON, or ``None`` if it is."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return None
    if kind is int:
        if -_INT_LIMIT < value < _INT_LIMIT:
            return None
        return f"Expected an integer of at most {MAX_INT_DIGITS} digits, got a longer one"
    if kind is float:
        if math.isfinite(value):  # type: ignore[arg-type]
            return None
        return f"Expected a finite number, got `{value!r}`"
    return (
        f"Expected plain JSON (dict, list, str, int, float, bool, None), got `{type_name(value)}`"
    )


# Containers around a record: the fixture root, the response list, the response and
# its record list. A record object sits at level RECORD_DEPTH + 1 = 5.
RECORD_DEPTH = 4

Memo: TypeAlias = "dict[int, tuple[JsonValue, int]]"
"""For each container copied so far, by ``id``: its copy and its height (a container
holding no container has height 1). The height lets a shared copy be reused only
where it still fits under ``MAX_DEPTH``."""


def freeze(
    record: object,
    response_index: int,
    record_index: int,
    memo: Memo,
    layouts: Mapping[tuple[str, ...], tuple[str, ...]] | None,
) -> object:
    """Check a record as plain JSON and return its private copy.

    Everything inside the copy is read-only (``MappingProxyType`` and ``tuple``) and
    is what the parser emits. The record's own shape is private to the parser:

    - a record object of at most ``_PACK_LIMIT`` keys is *packed* into a plain tuple,
      its values in order and then the tuple of its keys (the one from ``layouts``
      when it is a known layout, so records of one layout share it). Why: a small
      dict costs 184 bytes, a packed record of two values 64; at a million queued
      records that is most of the adapter's memory. A plain tuple of strings and
      numbers is also left alone by the garbage collector. With ``layouts=None`` (a
      record from a source, parsed at once) it stays a plain ``dict`` instead;
    - a larger or unusual record object stays the memo's read-only mapping, so one
      shared many times is still copied once;
    - a record that is a JSON array becomes an ``ArrayRecord`` (it can only be
      malformed), and any other scalar stays itself.

    Passing one ``memo`` to many calls preserves sharing across them, as
    ``copy.deepcopy`` does. Raises ``PROVIDER_INVALID_FIXTURE`` located at the record
    or inside it.
    """
    kind = type(record)
    if kind is dict and layouts is None:
        plain = _copy_object(record, memo)  # type: ignore[arg-type]
        if plain is not None:
            return plain
    elif kind is dict and layouts is not None and len(record) <= _PACK_LIMIT:  # type: ignore[arg-type]
        packed: list[object] = []
        for key, item in record.items():  # type: ignore[attr-defined]
            item_kind = type(item)
            if type(key) is not str:
                break
            # The plain-JSON scalar test, as in ``_quick_copy`` and ``_scalar_problem``.
            if (
                item_kind is str
                or item is None
                or item_kind is bool
                or (item_kind is int and -_INT_LIMIT < item < _INT_LIMIT)
                or (item_kind is float and math.isfinite(item))
            ):
                packed.append(item)
            elif item_kind is dict or item_kind is list:
                entry = _quick_copy(item, RECORD_DEPTH + 2, memo)
                if entry is None:
                    break
                packed.append(entry[0])
            else:
                break
        else:
            keys: tuple[str, ...] = tuple(record)  # type: ignore[arg-type]
            packed.append(layouts.get(keys, keys))
            return tuple(packed)
    elif kind is not list and kind is not dict:
        problem = _scalar_problem(record)
        if problem is not None:
            raise _record_location(response_index, record_index).error(problem)
        return record
    done = memo.get(id(record))
    copy: JsonValue
    if done is not None and RECORD_DEPTH + done[1] <= MAX_DEPTH:
        copy = done[0]
    else:
        where = _record_location(response_index, record_index)
        copy = _freeze_tree(record, where, RECORD_DEPTH, memo)  # type: ignore[arg-type]
    return ArrayRecord(copy) if kind is list else copy  # type: ignore[arg-type]


def _copy_object(record: dict[object, object], memo: Memo) -> dict[str, JsonValue] | None:
    """``freeze``'s loop again, into a plain dict: ``None`` if the careful path must judge.

    A second copy of the loop on purpose: a record from a source is parsed at once, and
    building the dict directly is twice as fast as packing and unpacking it.
    """
    copy: dict[str, JsonValue] = {}
    for key, item in record.items():
        item_kind = type(item)
        if type(key) is not str:
            return None
        if (
            item_kind is str
            or item is None
            or item_kind is bool
            or (item_kind is int and -_INT_LIMIT < item < _INT_LIMIT)
            or (item_kind is float and math.isfinite(item))  # type: ignore[arg-type]
        ):
            copy[key] = item  # type: ignore[assignment]
        elif item_kind is dict or item_kind is list:
            entry = _quick_copy(item, RECORD_DEPTH + 2, memo)
            if entry is None:
                return None
            copy[key] = entry[0]
        else:
            return None
    return copy


class ArrayRecord(tuple[JsonValue, ...]):
    """A record that is a JSON array: told apart from a packed record object."""

    __slots__ = ()


_PACK_LIMIT = 32
"""Record objects of at most this many keys are packed, without the memo (every valid
record has at most five): copying a shared one twice is invisible, since records never
leave the parser, and the bound keeps that a constant factor."""


# The deepest level ``_quick_copy`` opens a container at before it leaves the rest to
# ``_freeze_tree``: deep enough for ordinary arguments, shallow enough never to strain
# Python's stack.
_QUICK_LEVELS = RECORD_DEPTH + 1 + 12


def _quick_copy(value: object, level: int, memo: Memo) -> tuple[JsonValue, int] | None:
    """Copy a dict or list at nesting ``level`` (the root is 1); ``None`` if unusual.

    Why: ``_freeze_tree`` explains every problem with its exact path, and pays for it
    with a frame per container. Well-formed values, nearly all of them, take this
    recursive path at a fraction of the cost. Anything it does not accept outright (a
    foreign type, a non-finite float, a long int, a level past ``_QUICK_LEVELS``,
    which includes every cycle, or a shared copy too tall to fit here) is judged
    again, from the record, by ``_freeze_tree``. Containers it finishes go into the
    memo with their height, so sharing is kept either way.
    """
    done = memo.get(id(value))
    if done is not None:
        return done if level + done[1] - 1 <= MAX_DEPTH else None
    if level > _QUICK_LEVELS:
        return None
    height = 1
    result: JsonValue
    if type(value) is dict:
        copy: dict[str, JsonValue] = {}
        for key, item in value.items():
            kind = type(item)
            if type(key) is not str:
                return None
            if (
                kind is str
                or item is None
                or kind is bool
                or (kind is int and -_INT_LIMIT < item < _INT_LIMIT)
                or (kind is float and math.isfinite(item))
            ):
                copy[key] = item
            elif kind is dict or kind is list:
                entry = _quick_copy(item, level + 1, memo)
                if entry is None:
                    return None
                copy[key] = entry[0]
                if entry[1] >= height:
                    height = entry[1] + 1
            else:
                return None
        result = MappingProxyType(copy)
    else:
        for item in value:  # type: ignore[attr-defined]
            kind = type(item)
            if not (
                kind is str
                or item is None
                or kind is bool
                or (kind is int and -_INT_LIMIT < item < _INT_LIMIT)
                or (kind is float and math.isfinite(item))
            ):
                break
        else:
            # Scalars only: the tuple is the copy, with no list in between.
            entry = (tuple(value), 1)  # type: ignore[arg-type]
            memo[id(value)] = entry
            return entry
        items: list[JsonValue] = []
        for item in value:  # type: ignore[attr-defined]
            kind = type(item)
            if (
                kind is str
                or item is None
                or kind is bool
                or (kind is int and -_INT_LIMIT < item < _INT_LIMIT)
                or (kind is float and math.isfinite(item))
            ):
                items.append(item)
            elif kind is dict or kind is list:
                entry = _quick_copy(item, level + 1, memo)
                if entry is None:
                    return None
                items.append(entry[0])
                if entry[1] >= height:
                    height = entry[1] + 1
            else:
                return None
        result = tuple(items)
    entry = (result, height)
    memo[id(value)] = entry
    return entry


def _record_location(response_index: int, record_index: int) -> Location:
    return Location(
        ("responses", response_index, "records", record_index), response_index, record_index
    )


def _freeze_tree(
    value: dict[object, object] | list[object], where: Location, depth: int, memo: Memo
) -> JsonValue:
    """The careful, iterative copy of a container enclosed by ``depth`` containers."""
    stack: list[_Frame] = []
    active: set[int] = set()  # ids of the containers being copied: a cycle's way back
    too_deep = f"Nesting is deeper than the limit of {MAX_DEPTH} levels"

    def path_of(*extra: str | int) -> tuple[str | int, ...]:
        return (*(frame.key for frame in stack[1:]), *extra)

    def open_frame(container: dict[object, object] | list[object], key: str | int) -> None:
        if len(stack) + depth >= MAX_DEPTH:
            raise where.error(too_deep, *(path_of(key) if stack else ()))
        active.add(id(container))
        stack.append(_Frame(container, key))

    open_frame(value, 0)
    while True:
        frame = stack[-1]
        copy = frame.copy
        is_dict = type(copy) is dict
        descended = False
        for key, item in frame.items:
            if is_dict and type(key) is not str:
                raise where.error(f"Expected `str` object keys, got `{type_name(key)}`", *path_of())
            item_kind = type(item)
            if item_kind is str or item_kind is bool or item is None:
                frozen: object = item
            elif item_kind is dict or item_kind is list:
                seen = memo.get(id(item))
                if seen is None:
                    if id(item) in active:
                        raise where.error(
                            "Expected a tree of values, got a cycle "
                            "(this container contains itself)",
                            *path_of(key),  # type: ignore[arg-type]
                        )
                    open_frame(item, key)  # type: ignore[arg-type]
                    descended = True
                    break
                # A shared container, copied before: it must still fit at this level.
                if depth + len(stack) + seen[1] > MAX_DEPTH:
                    raise where.error(too_deep, *path_of(key))  # type: ignore[arg-type]
                frozen = seen[0]
                frame.height = max(frame.height, seen[1] + 1)
            else:
                problem = _scalar_problem(item)
                if problem is not None:
                    raise where.error(problem, *path_of(key))  # type: ignore[arg-type]
                frozen = item
            if is_dict:
                copy[key] = frozen  # type: ignore[call-overload]
            else:
                copy.append(frozen)  # type: ignore[union-attr]
        if descended:
            continue
        stack.pop()
        active.discard(id(frame.source))
        result: JsonValue = (
            MappingProxyType(copy) if is_dict else tuple(copy)  # type: ignore[arg-type]
        )
        memo[id(frame.source)] = (result, frame.height)
        if not stack:
            return result
        parent = stack[-1]
        parent.height = max(parent.height, frame.height + 1)
        if type(parent.copy) is dict:
            parent.copy[frame.key] = result
        else:
            parent.copy.append(result)  # type: ignore[union-attr]


class _Frame:
    """A container being copied; resumed after each child container is finished."""

    __slots__ = ("copy", "height", "items", "key", "source")

    def __init__(self, source: dict[object, object] | list[object], key: str | int) -> None:
        self.source = source
        self.key = key  # where the copy goes in its parent
        self.height = 1  # of the copy so far
        self.items: Iterator[tuple[object, object]]
        self.copy: dict[object, object] | list[object]
        if type(source) is dict:
            self.items = iter(source.items())
            self.copy = {}
        else:
            self.items = enumerate(source)
            self.copy = []


@overload
def thaw(value: Mapping[str, JsonValue]) -> dict[str, PlainJson]: ...
@overload
def thaw(value: tuple[JsonValue, ...]) -> list[PlainJson]: ...
@overload
def thaw(value: JsonValue) -> PlainJson: ...
def thaw(value: JsonValue) -> PlainJson:
    """Return a plain, mutable deep copy of a read-only JSON value.

    Read-only mappings become ``dict`` and tuples become ``list``, so ``json.dumps``
    and ordinary mutation work on the result. Sharing is preserved: a sub-value
    reachable twice is copied once. Raises ``TypeError`` for anything that is not
    JSON.
    """
    memo: dict[int, PlainJson] = {}
    unfilled: list[tuple[object, PlainJson]] = []

    def copy_of(item: object) -> PlainJson:
        kind = type(item)
        if item is None or kind is str or kind is int or kind is float or kind is bool:
            return item  # type: ignore[return-value]
        known = memo.get(id(item))
        if known is not None:
            return known
        copy: PlainJson
        if isinstance(item, Mapping):
            copy = {}
        elif isinstance(item, (tuple, list)):
            copy = []
        else:
            raise TypeError(f"thaw() expects a JSON value, got {type_name(item)}")
        memo[id(item)] = copy
        unfilled.append((item, copy))
        return copy

    result = copy_of(value)
    # Iterative, so depth is never a RecursionError.
    while unfilled:
        source, copy = unfilled.pop()
        if isinstance(copy, dict):
            for key, item in source.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    raise TypeError(f"thaw() expects str keys, got {type_name(key)}")
                copy[key] = copy_of(item)
        else:
            copy.extend([copy_of(item) for item in source])  # type: ignore[attr-defined,union-attr]
    return result


def refreeze(value: PlainJson) -> JsonValue:
    """The read-only form of trusted plain JSON (from ``thaw``, or built by hand).

    Sharing is kept; iterative, so depth is never a ``RecursionError``. A cycle is a
    ``TypeError``: a read-only copy of one cannot be built from tuples.
    """
    memo: dict[int, JsonValue] = {}
    on_path: set[int] = set()
    # Each entry: a container, and whether its children are already copied.
    pending: list[tuple[PlainJson, bool]] = [(value, False)]

    def copy_of(item: PlainJson) -> JsonValue:
        return memo[id(item)] if type(item) is dict or type(item) is list else item  # type: ignore[return-value]

    while pending:
        item, children_done = pending.pop()
        if (type(item) is not dict and type(item) is not list) or id(item) in memo:
            continue
        if children_done:
            on_path.discard(id(item))
            memo[id(item)] = (
                MappingProxyType({key: copy_of(child) for key, child in item.items()})
                if type(item) is dict
                else tuple([copy_of(child) for child in item])
            )
            continue
        if id(item) in on_path:
            raise TypeError("refreeze() cannot copy a cycle")
        on_path.add(id(item))
        pending.append((item, True))
        children = item.values() if type(item) is dict else item
        pending.extend((child, False) for child in children)
    return copy_of(value)


def preview(value: JsonValue, limit: int = 200) -> str:
    """A short JSON-like rendering of a read-only value, for ``repr``.

    Why: ``repr`` of a mapping walks every path, so a shared sub-object printed at
    each place it appears can expand a small graph into an enormous string. This
    stops at ``limit`` characters, whatever the graph.
    """
    parts: list[str] = []
    room = limit

    def put(text: str) -> None:
        nonlocal room
        parts.append(text)
        room -= len(text)

    def walk(item: JsonValue) -> None:
        # Each level writes at least one character, so depth is bounded by ``limit``.
        if isinstance(item, Mapping):
            put("{")
            for index, (key, child) in enumerate(item.items()):
                if room <= 0:
                    put("...")
                    break
                put(f"{', ' if index else ''}{key!r}: ")
                walk(child)
            put("}")
        elif type(item) is tuple:
            put("[")
            for index, child in enumerate(item):
                if room <= 0:
                    put("...")
                    break
                put(", " if index else "")
                walk(child)
            put("]")
        else:
            text = repr(item)
            put(text if len(text) <= max(room, 20) else text[: max(room, 20)] + "...")

    walk(value)
    return "".join(parts)
