"""Plain JSON at the trust boundary: one copy-and-freeze walk, its read-only values, ``thaw``.

The walk (``freeze``; ``refreeze`` is it for trusted input) is the only way a value
from outside becomes part of the adapter's state. It accepts plain JSON by *exact*
type (``type(v) is dict``, never ``isinstance``), so no code of the input ever runs: not
``__eq__``, ``__hash__``, ``__iter__``, ``__getattr__``, nor a metaclass's
``__instancecheck__``. It copies each distinct container once, as ``copy.deepcopy``
does, so sharing is kept and a shared graph never expands into a tree; it refuses
cycles and nesting past ``MAX_DEPTH``; and it is iterative, so hostile depth is a coded
error, never a ``RecursionError``.

Its copies are ``JsonObject`` (a read-only ``Mapping`` that never hands out its storage)
and ``JsonArray`` (a ``tuple``). Both are immutable all the way down, so copying one
returns it, pickling keeps its sharing, and ``repr`` is bounded however large or shared
the value. Both are final: a subclass could break those promises.

This module knows JSON only: where a value sits in a fixture, and what a record is,
are its callers' business (``NotPlainJson`` carries the path below the value).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, NoReturn, TypeAlias, TypeVar, cast, final, overload

from ._errors import pointer
from ._untrusted import type_name

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "JsonArray",
    "JsonObject",
    "JsonValue",
    "Memo",
    "NotPlainJson",
    "PlainJson",
    "adopt_array",
    "adopt_object",
    "copied",
    "freeze",
    "members",
    "new_memo",
    "preview",
    "refreeze",
    "thaw",
]

JsonValue: TypeAlias = (
    "bool | int | float | str | tuple[JsonValue, ...] | Mapping[str, JsonValue] | None"
)
"""A read-only JSON value as the adapter emits it (``JsonObject``, ``JsonArray``, scalars)."""

PlainJson: TypeAlias = "bool | int | float | str | list[PlainJson] | dict[str, PlainJson] | None"
"""A plain, mutable JSON value as ``json.loads`` returns it."""

MAX_DEPTH: Final = 256
"""How many containers may enclose a value, counting the fixture root as 1."""

MAX_INT_DIGITS: Final = 4300
"""The most decimal digits a fixture integer may have (Python's default conversion limit)."""

# By default Python refuses to print ints of more digits; such an int could not be
# written back as JSON, so it is not plain JSON.
_INT_LIMIT: Final = 10**MAX_INT_DIGITS
_INT_FLOOR: Final = -_INT_LIMIT

_PREVIEW_LIMIT: Final = 200

_T = TypeVar("_T")


# -- the read-only values ----------------------------------------------------------------


@final
class JsonObject(Mapping[str, JsonValue]):
    """A read-only JSON object: a ``Mapping`` from ``str`` to read-only JSON values.

    No public path leads to its storage: comparisons, copies, pickling and every
    ``Mapping`` method hand out the members or a fresh ``dict`` of them, never the
    object's own. Unhashable, as hashing a shared graph would expand it into a tree.
    ``JsonObject(mapping)`` freezes a plain JSON mapping as ``refreeze`` does.
    """

    __slots__ = ("_members",)
    _members: dict[str, JsonValue]

    def __new__(cls, members: Mapping[str, object] | None = None, /) -> JsonObject:
        # A dict freezes into a JsonObject.
        plain = cast("PlainJson", {} if members is None else dict(members))
        return cast(JsonObject, refreeze(plain))

    def __init_subclass__(cls) -> NoReturn:
        raise TypeError("JsonObject cannot be subclassed: it promises immutability")

    def __getitem__(self, key: str) -> JsonValue:
        return self._members[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, key: object) -> bool:
        return key in self._members

    @overload
    def get(self, key: str, /) -> JsonValue: ...
    @overload
    def get(self, key: str, default: JsonValue | _T, /) -> JsonValue | _T: ...
    def get(self, key: str, default: object = None, /) -> object:
        return self._members.get(key, default)

    def __eq__(self, other: object) -> bool:
        # Never ``self._members == other`` with ``other`` of an unknown type: Python
        # would offer it our dict to compare, and it could keep or change it.
        if type(other) is JsonObject:
            return self._members == other._members
        if type(other) is dict:
            return self._members == other
        if issubclass(type(other), Mapping):  # its real type: not what __class__ claims
            return self._members == dict(cast(Mapping[object, object], other).items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # hashing a shared graph would expand it

    def __repr__(self) -> str:
        return preview(self)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"JsonObject is read-only: cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"JsonObject is read-only: cannot delete {name!r}")

    def __copy__(self) -> JsonObject:
        return self

    def __deepcopy__(self, memo: object) -> JsonObject:
        return self  # immutable all the way down

    def __getstate__(self) -> dict[str, JsonValue]:
        return dict(self._members)

    def __reduce__(self) -> tuple[Callable[..., JsonObject], tuple[object, ...]]:
        # The members pickle as themselves, so the pickle keeps the sharing among them;
        # as flat arguments (the keys, then each value), so that each level of nesting
        # costs the pickler's recursion two frames, not three.
        return (_rebuild_object, (tuple(self._members), *self._members.values()))


@final
class JsonArray(tuple[JsonValue, ...]):
    """A read-only JSON array: a ``tuple`` of read-only JSON values.

    Unlike ``()``, every empty ``JsonArray`` is its own object, so two distinct empty
    arrays of a fixture stay two arrays (and two lists after ``thaw``). Unhashable, as
    hashing a shared graph would expand it into a tree. ``JsonArray(items)`` freezes a
    plain JSON sequence as ``refreeze`` does.
    """

    __slots__ = ()

    def __new__(cls, items: Iterable[object] = (), /) -> JsonArray:
        # A list freezes into a JsonArray.
        return cast(JsonArray, refreeze(cast("PlainJson", list(items))))

    def __init_subclass__(cls) -> NoReturn:
        raise TypeError("JsonArray cannot be subclassed: it promises immutability")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return preview(self)

    def __copy__(self) -> JsonArray:
        return self

    def __deepcopy__(self, memo: object) -> JsonArray:
        return self  # immutable all the way down

    def __reduce__(self) -> tuple[Callable[..., JsonArray], tuple[JsonValue, ...]]:
        return (_rebuild_array, tuple(self))  # flat, as for JsonObject


def _rebuild_object(keys: tuple[str, ...], *values: JsonValue) -> JsonObject:
    """Unpickle a ``JsonObject``."""
    return JsonObject(dict(zip(keys, values, strict=True)))


def _rebuild_array(*items: JsonValue) -> JsonArray:
    """Unpickle a ``JsonArray``."""
    return JsonArray(items)


# How the walk builds its read-only values: past ``JsonObject``'s read-only
# ``__setattr__`` and ``JsonArray``'s freezing ``__new__`` (its items are frozen).
_new_object = object.__new__
_set_members = JsonObject.__dict__["_members"].__set__
_new_tuple = tuple.__new__


def adopt_object(members: dict[str, JsonValue]) -> JsonObject:
    """A ``JsonObject`` that takes ``members`` as its storage, without a copy.

    For code that builds an object itself from values already read-only (scalars,
    ``JsonObject``, ``JsonArray``) and keeps no other reference to the dict: the
    importer's records. Anything from outside goes through ``refreeze`` or the walk.
    """
    adopted = _new_object(JsonObject)
    _set_members(adopted, members)
    return adopted


def adopt_array(items: list[JsonValue]) -> JsonArray:
    """A ``JsonArray`` of ``items``, values already read-only (see ``adopt_object``)."""
    return _new_tuple(JsonArray, items)


# -- the walk ----------------------------------------------------------------------------


Memo: TypeAlias = "tuple[dict[int, JsonValue], dict[int, int]]"
"""What the walks that share it have copied: each container's copy, by the container's
``id``; and the heights of the copies a walk reused, by the copy's ``id`` (how many
containers deep each goes: 1 for one that holds none). A height lets a shared copy be
reused only where it still fits under ``MAX_DEPTH``; it is computed when a copy is first
reused, so a fixture that shares nothing keeps none. Pass one memo to many walks to
keep the sharing among them, as ``copy.deepcopy`` does (but not after a walk raised: it
may hold containers left half-copied). Dicts of ids and ints rather than of pairs: a
pair per container would be one more object for the garbage collector to walk, again
and again, while a large fixture is copied."""


def new_memo() -> Memo:
    """An empty ``Memo``."""
    return ({}, {})


def copied(memo: Memo, value: object) -> JsonValue | None:
    """The copy a walk with ``memo`` made of the container ``value``, else ``None``.

    The memo is by ``id``: ask only while every container that walk copied still lives
    (the value walked is held), so that no other container can have one's ``id``."""
    known = memo[0].get(id(value))
    return None if known is _OPEN else known


# With ``plain_root``, a root object of at most this many members is copied afresh each
# time, without a memo entry: a caller walking many small objects one by one (the
# adapter's records) pays no entry for each, and copying again one that repeats costs
# a constant factor at most. A larger one is copied once.
_UNSHARED_MEMBERS: Final = 32

_TOO_DEEP: Final = f"Nesting is deeper than the limit of {MAX_DEPTH} levels"
_CYCLE: Final = "Expected a tree of values, got a cycle (this container contains itself)"


def _scalar_problem(value: object) -> str | None:
    """Why a value that is not a container is not plain JSON, or ``None`` if it is.

    The one definition of a plain JSON scalar: by exact type (``type`` and ``is``
    only, which run no code of the value), an int Python can print, a finite float.
    """
    if type(value) is str or type(value) is bool or value is None:
        return None
    if type(value) is int:
        if _INT_FLOOR < value < _INT_LIMIT:
            return None
        return f"Expected an integer of at most {MAX_INT_DIGITS} digits, got a longer one"
    if type(value) is float:
        if math.isfinite(value):
            return None
        return f"Expected a finite number, got `{value!r}`"
    return (
        f"Expected plain JSON (dict, list, str, int, float, bool, None), got `{type_name(value)}`"
    )


class NotPlainJson(Exception):
    """What ``freeze`` raises: why a value is not plain JSON, and the path to the
    problem below the value (keys and indexes). Each caller turns it into its own
    error, located as only the caller knows."""

    def __init__(self, message: str, parts: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.message = message
        self.parts = parts


def _problem(
    message: str, parents: list[_Parent], key_above: object, *extra: object
) -> NotPlainJson:
    """The problem at the keys from the walk's root down to the current container,
    then ``extra``."""
    above = (key_above,) if parents else ()
    keys = (*(parent[3] for parent in parents[1:]), *above, *extra)
    return NotPlainJson(message, cast("tuple[str | int, ...]", keys))


class _Refused(Exception):
    """Raised by the fillers: why an item of the current container is refused, and its
    key (``()`` for a problem with the container itself). The walk adds the path above."""

    def __init__(self, message: str, *key: object) -> None:
        self.message = message
        self.key = key


_NO_LIMIT: Final = sys.maxsize
_OPEN: Final = cast("JsonValue", object())
"""The memo's copy of a container being copied, until its copy is done."""

_Copy: TypeAlias = "dict[str, object] | list[object]"
_Parent: TypeAlias = "tuple[object, Iterator[Any], _Copy, object]"
"""A container whose copy waits for a child's: its source, its items still to go
through, its copy so far, and its own key in its parent."""
_Found: TypeAlias = "tuple[object, object] | None"
"""What a filler stopped at: a container item and its key, or ``None`` at the end."""


def freeze(value: object, memo: Memo, enclosing: int, trusted: bool, plain_root: bool) -> object:
    """The one copy-and-freeze walk (see the module docstring): the read-only copy of
    ``value``, or ``NotPlainJson``.

    Untrusted input, surrounded by ``enclosing`` containers, is plain JSON only.
    ``trusted`` input may also hold tuples and read-only values already frozen (kept as
    they are), and has no nesting limit. With ``plain_root``, an object at the root
    comes back as a plain ``dict`` of its frozen members: the caller's private view,
    which it must never change (it may be the storage of a memoized ``JsonObject``).
    """
    kind = type(value)
    if kind is not dict and kind is not list and not (trusted and kind is tuple):
        return _leaf(value, trusted)
    limit = _NO_LIMIT if trusted else MAX_DEPTH
    # A small object at a plain root is copied afresh (see ``_UNSHARED_MEMBERS``).
    remembered = not (
        plain_root and kind is dict and len(cast("dict[str, object]", value)) <= _UNSHARED_MEMBERS
    )
    if remembered:
        known = _known_copy(memo, value, enclosing, limit)
        if known is not None:
            if plain_root and type(known) is JsonObject:
                return known._members  # the walk's own type: the one way to its storage
            return known
    if enclosing >= limit:
        raise NotPlainJson(_TOO_DEEP, ())
    # The root's own items first: most records hold no container, and are done then.
    # (An object's items are its members, as pairs; a container's copy starts empty.)
    items: Iterator[Any] = iter(value.items()) if kind is dict else iter(value)  # type: ignore[attr-defined,call-overload]
    copy: _Copy = {} if kind is dict else []
    try:
        found = (_fill_object if kind is dict else _fill_array)(items, copy, trusted)
    except _Refused as refused:
        raise NotPlainJson(refused.message, refused.key) from None  # type: ignore[arg-type]
    if found is not None:
        _walk(value, items, copy, found, memo, enclosing + 1, limit, trusted)
    if plain_root and kind is dict:
        if remembered:
            _finished(memo[0], value, copy)  # its JsonObject shares ``copy``
        return copy
    return _finished(memo[0], value, copy)


def _leaf(value: object, trusted: bool) -> object:
    """A value that is not a container to copy: itself, if it is a plain JSON scalar (or,
    ``trusted``, a read-only value already frozen); else ``NotPlainJson``."""
    if trusted and (type(value) is JsonObject or type(value) is JsonArray):
        return value
    problem = _scalar_problem(value)
    if problem is not None:
        raise NotPlainJson(problem, ())
    return value


def _known_copy(memo: Memo, value: object, enclosing: int, limit: int) -> JsonValue | None:
    """The memo's copy of ``value``, if it has one that still fits under ``limit``."""
    copies, heights = memo
    known = copies.get(id(value))
    if known is None or known is _OPEN:
        return None
    if limit != _NO_LIMIT and enclosing + _height(known, heights) > limit:
        return None  # it would not fit here: copied again, and refused as too deep
    return known


def _finished(copies: dict[int, JsonValue], source: object, copy: _Copy) -> JsonValue:
    """The read-only value around the finished ``copy`` of ``source`` (an object keeps
    ``copy`` as its storage), remembered in ``copies``."""
    frozen: object
    if type(copy) is dict:
        frozen = _new_object(JsonObject)
        _set_members(frozen, copy)
    else:
        frozen = _new_tuple(JsonArray, copy)
    copies[id(source)] = cast(JsonValue, frozen)
    return cast(JsonValue, frozen)


def _inner(copy: object) -> list[object]:
    """The containers directly inside a copy."""
    items = copy._members.values() if type(copy) is JsonObject else cast(JsonArray, copy)
    return [item for item in items if type(item) is JsonObject or type(item) is JsonArray]


def _height(copy: JsonValue, heights: dict[int, int]) -> int:
    """How many containers deep a copy goes, kept in ``heights`` by the copy's id with the
    heights of the copies inside it. Iterative (post-order), and linear: each copy's
    height is computed once."""
    pending: list[tuple[object, list[object]]] = [(copy, _inner(copy))]
    while pending:
        value, inner = pending[-1]
        unknown = [child for child in inner if id(child) not in heights]
        if unknown:
            pending.extend((child, _inner(child)) for child in unknown)
            continue
        pending.pop()
        heights[id(value)] = 1 + max((heights[id(child)] for child in inner), default=0)
    return heights[id(copy)]


def _walk(  # noqa: PLR0917  (positional: it is called once per record with containers)
    root: object,
    items: Iterator[Any],
    copy: _Copy,
    found: tuple[object, object],
    memo: Memo,
    level: int,
    limit: int,
    trusted: bool,
) -> None:
    """Finish the copy of the container ``root``, sitting at ``level``, whose items were
    copied into ``copy`` up to the container item ``found``. Every container below is
    copied once, frozen and remembered in ``memo``.

    Depth first, without recursion. The container being copied is ``source``, with its
    ``items`` still to go through, its ``copy`` so far, and its key in its parent,
    ``key_above``. Its ancestors wait in ``parents`` and are ``_OPEN`` in the memo: a
    container found open, or the root itself, is a cycle.
    """
    copies, heights = memo
    parents: list[_Parent] = []
    source, key_above = root, None
    next_found: _Found = found
    while True:
        if next_found is None:  # ``copy`` is complete: hand it to its parent
            if not parents:
                return
            key, known = key_above, _finished(copies, source, copy)
            source, items, copy, key_above = parents.pop()
            level -= 1
        else:
            key, child = next_found
            known = copies.get(id(child))
            if known is None:  # go down into it; this container waits
                if child is root or level >= limit:
                    raise _problem(_CYCLE if child is root else _TOO_DEEP, parents, key_above, key)
                parents.append((source, items, copy, key_above))
                copies[id(child)] = _OPEN
                source, key_above = child, key
                items = iter(child.items()) if type(child) is dict else iter(child)  # type: ignore[call-overload]
                copy = {} if type(child) is dict else []
                level += 1
            else:  # a shared container, copied before: it must still fit at this level
                unshareable = _unshareable(known, heights, level, limit)
                if unshareable is not None:
                    raise _problem(unshareable, parents, key_above, key)
        if known is not None:  # store the child's copy (just finished, or shared)
            if type(copy) is dict:
                copy[key] = known  # type: ignore[index]  # a str: checked by the filler
            else:
                copy.append(known)  # type: ignore[union-attr]  # a list, then
        try:
            next_found = (_fill_object if type(copy) is dict else _fill_array)(items, copy, trusted)
        except _Refused as refused:
            raise _problem(refused.message, parents, key_above, *refused.key) from None


def _unshareable(known: JsonValue, heights: dict[int, int], level: int, limit: int) -> str | None:
    """Why a container copied before cannot be shared under a container at ``level``, or
    ``None`` if it can: it is still open (a cycle), or its copy would not fit under
    ``limit``."""
    if known is _OPEN:
        return _CYCLE
    if limit != _NO_LIMIT and level + _height(known, heights) > limit:
        return _TOO_DEEP
    return None


def _fill_object(items: Iterator[Any], copy: _Copy, trusted: bool) -> _Found:
    """Copy an object's members from ``items`` into ``copy`` until one holds a container:
    return its key and it (the walk copies it first), or ``None`` once every member is
    in. Raises ``_Refused``."""
    for key, item in items:
        if type(key) is not str:
            raise _Refused(f"Expected `str` object keys, got `{type_name(key)}`")
        kind = type(item)
        if (
            kind is str
            or kind is bool
            or item is None
            or (kind is int and _INT_FLOOR < item < _INT_LIMIT)
        ):
            copy[key] = item  # type: ignore[call-overload]  # the commonest plain scalars
        elif kind is dict or kind is list or (trusted and kind is tuple):
            return key, item
        else:
            copy[key] = _item(item, key, trusted)  # type: ignore[call-overload]
    return None


def _fill_array(items: Iterator[Any], copy: _Copy, trusted: bool) -> _Found:
    """Copy an array's items from ``items`` into ``copy``, as ``_fill_object`` does."""
    append = copy.append  # type: ignore[union-attr]  # a list: the copy of an array
    for item in items:
        kind = type(item)
        if (
            kind is str
            or kind is bool
            or item is None
            or (kind is int and _INT_FLOOR < item < _INT_LIMIT)
        ):
            append(item)
        elif kind is dict or kind is list or (trusted and kind is tuple):
            return len(copy), item
        else:
            append(_item(item, len(copy), trusted))
    return None


def _item(item: object, key: object, trusted: bool) -> object:
    """An item that is neither a container nor one of the commonest scalars: a float, a
    long int, a read-only value (``trusted``), or ``_Refused``."""
    if trusted and (type(item) is JsonObject or type(item) is JsonArray):
        return item
    problem = _scalar_problem(item)
    if problem is not None:
        raise _Refused(problem, key)
    return item


def refreeze(value: PlainJson | JsonValue, memo: Memo | None = None) -> JsonValue:
    """The read-only form of trusted plain JSON (from ``thaw``, or built by hand).

    Takes ``dict`` and ``list`` (and ``tuple``), JSON scalars, and read-only values
    already frozen, by exact type. Sharing is kept; iterative, so depth is never a
    ``RecursionError``. Anything else, a cycle included, is a ``TypeError``. ``memo``
    keeps what was copied (see ``copied``).
    """
    try:
        return cast(JsonValue, freeze(value, new_memo() if memo is None else memo, 0, True, False))
    except NotPlainJson as problem:
        at = pointer(*problem.parts)
        raise TypeError(f"Not plain JSON{f' at {at}' if at else ''}: {problem.message}") from None


# -- back to plain -----------------------------------------------------------------------


@overload
def thaw(value: Mapping[str, JsonValue]) -> dict[str, PlainJson]: ...
@overload
def thaw(value: tuple[JsonValue, ...]) -> list[PlainJson]: ...
@overload
def thaw(value: JsonValue) -> PlainJson: ...
def thaw(value: JsonValue) -> PlainJson:
    """Return a plain, mutable deep copy of a read-only JSON value.

    Read-only mappings become ``dict`` and tuples become ``list``, so ``json.dumps``
    and ordinary mutation work on the result. Copies as ``copy.deepcopy`` does: one
    new container for each distinct container, so sharing is kept and two distinct
    empty arrays stay two lists. Raises ``TypeError`` for anything that is not JSON.
    """
    return thaw_shared(value, {})


def thaw_shared(value: object, memo: dict[int, PlainJson]) -> PlainJson:
    """``thaw``, keeping the sharing among all values thawed with one ``memo``.

    Also takes plain ``dict`` and ``list`` containers (copied the same way), so a
    value's ``to_dict()`` can be built around its read-only parts in one go.
    """
    unfilled: list[tuple[object, PlainJson]] = []

    def copy_of(item: object) -> PlainJson:
        kind = type(item)
        if kind is str or kind is int or kind is float or kind is bool or item is None:
            return cast(PlainJson, item)
        known = memo.get(id(item))
        if known is not None:
            return known
        copy: PlainJson
        if kind is JsonObject or kind is dict:
            copy = {}
        elif kind is JsonArray or kind is tuple or kind is list:
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
        if type(copy) is dict:
            members = _members_of(source)
            for key, item in members.items():
                if type(key) is not str:
                    raise TypeError(f"thaw() expects str keys, got {type_name(key)}")
                copy[key] = copy_of(item)
        elif isinstance(copy, list):
            copy.extend([copy_of(item) for item in cast("list[object]", source)])
    return result


def members(value: JsonObject) -> Mapping[str, JsonValue]:
    """A ``JsonObject``'s own storage, for this package's code that only reads it: a
    lookup there runs in C, where the ``Mapping`` methods are calls of Python code."""
    return value._members


def _members_of(value: object) -> Mapping[object, object]:
    """The members of a ``JsonObject`` or a ``dict``, to copy or render them."""
    members = value._members if type(value) is JsonObject else value
    return cast("dict[object, object]", members)


def preview(value: object, limit: int = _PREVIEW_LIMIT) -> str:
    """A short JSON-like rendering of a value, for ``repr``: about ``limit`` characters.

    Why: ``repr`` of a container walks every path, so a shared sub-object printed at
    each place it appears can expand a small graph into an enormous string, and one
    long key or string is as long as it is. This shortens strings (keys included) and
    stops at ``limit`` characters, whatever the graph. Other values show their own
    ``repr``, shortened.
    """
    parts: list[str] = []
    room = limit

    def put(text: str) -> None:
        nonlocal room
        parts.append(text)
        room -= len(text)

    def short(item: object) -> str:
        text = repr(item)
        cut = max(room, 20)
        return text if len(text) <= cut else text[:cut] + "..."

    def walk(item: object) -> None:
        # Each level writes at least one character, so depth is bounded by ``limit``.
        kind = type(item)
        if kind is JsonObject or kind is dict:
            put("{")
            for index, (key, child) in enumerate(_members_of(item).items()):
                if room <= 0:
                    put("...")
                    break
                put(f"{', ' if index else ''}{short(key)}: ")
                walk(child)
            put("}")
        elif kind is JsonArray or kind is tuple or kind is list:
            put("[")
            for index, child in enumerate(cast("list[object]", item)):
                if room <= 0:
                    put("...")
                    break
                put(", " if index else "")
                walk(child)
            put("]")
        else:
            put(short(item))

    walk(value)
    return "".join(parts)
