"""Fixtures in code: a response in one line instead of a screen of records.

::

    from course import script

    fixture = script.fixture(
        script.response(script.call("add", {"left": 20, "right": 22}), usage=(12, 8)),
        script.response("The sum is 42.", usage=(30, 6)),
    )

``script.fixture`` returns the plain schema-version-1 dict, exactly what a careful
author would write by hand (records and keys in the README's order), so ``json.dump``
of it is a valid fixture file. Ids left out are filled in deterministically: the n-th
response is ``response-NNN`` and an unnamed call ``call-<name>-NNN``, NNN counting the
calls of that name in the whole fixture (explicit ids included), both from 001.

Every argument is checked at once: a value that is not plain JSON, an empty id or
name, a bad usage, ``script.error`` or ``script.CUT`` anywhere but last raise
``TypeError`` (wrong type) or ``ValueError`` (wrong value), naming the argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final, TypeAlias, cast, final

from . import _json, _parser

__all__ = [
    "CUT",
    "Call",
    "Cut",
    "Failure",
    "Item",
    "Response",
    "call",
    "error",
    "fixture",
    "response",
]

# The adapter's nesting limit counts from the fixture root; a tool call's arguments
# object sits inside the record's enclosing containers and the record. Refusing deeper
# arguments here keeps script's promise that its output is a valid fixture.
_MAX_ARGUMENTS_DEPTH: Final = _json.MAX_DEPTH - (_parser.RECORD_DEPTH + 1)

# The adapter's int limit: at most ``MAX_INT_DIGITS`` digits.
_INT_LIMIT: Final[int] = 10**_json.MAX_INT_DIGITS


@final
class Cut:
    """The type of ``script.CUT``: a response that stops without its ``response_end``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "script.CUT"

    def __reduce__(self) -> str:
        return "CUT"


CUT: Final = Cut()
"""Last item of a response: cut the stream there (replay: ``PROVIDER_MISSING_TERMINAL``)."""


@dataclass(frozen=True, slots=True)
class Call:
    """A scripted ``tool_call`` record; build it with ``script.call``.

    ``arguments`` is the checked private copy taken when the call was made, so later
    changes to the caller's dict change nothing. ``id=None`` is filled in by
    ``script.fixture``.
    """

    name: str
    arguments: dict[str, object] = field(repr=False)
    id: str | None = None

    def __post_init__(self) -> None:
        _check_name("call", "name", self.name)
        if self.id is not None:
            _check_name("call", "id", self.id)
        object.__setattr__(self, "arguments", _arguments_copy(self.arguments, "call"))


@dataclass(frozen=True, slots=True)
class Failure:
    """A scripted final ``transport_error`` record; build it with ``script.error``."""

    message: str
    code: str | None = None

    def __post_init__(self) -> None:
        if type(self.message) is not str:
            raise TypeError(f"error: `message` must be a str, got {_kind(self.message)}")
        if self.code is not None and type(self.code) is not str:
            raise TypeError(f"error: `code` must be a str or None, got {_kind(self.code)}")


Item: TypeAlias = str | Call | Failure | Cut
"""One item of ``script.response``: text, a tool call, or (last only) an error or ``CUT``."""


@dataclass(frozen=True, slots=True)
class Response:
    """One scripted fixture response; build it with ``script.response``."""

    items: tuple[Item, ...]
    response_id: str | None = None
    usage: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        if type(self.items) is not tuple:
            raise TypeError(f"response: `items` must be a tuple, got {_kind(self.items)}")
        last = len(self.items) - 1
        for index, item in enumerate(self.items):
            if type(item) is Failure or type(item) is Cut:
                if index != last:
                    what = "script.CUT" if type(item) is Cut else "script.error(...)"
                    raise ValueError(
                        f"response: items[{index}] is {what}, which ends a response, "
                        f"so it must be the last item (there are {last + 1})"
                    )
            elif type(item) is not str and type(item) is not Call:
                raise TypeError(
                    f"response: items[{index}] must be a str, script.call(...), "
                    f"script.error(...) or script.CUT, got {_kind(item)}"
                )
        if self.response_id is not None:
            _check_name("response", "response_id", self.response_id)
        object.__setattr__(self, "usage", _usage(self.usage))


def call(name: str, arguments: dict[str, object], *, id: str | None = None) -> Call:
    """One ``tool_call`` record: ``name``, plain JSON object ``arguments``, optional ``id``.

    Without ``id``, ``script.fixture`` names it ``call-<name>-NNN``.
    """
    return Call(name, arguments, id)


def error(message: str, *, code: str | None = None) -> Failure:
    """A final ``transport_error`` record; without ``code`` the record has no ``code`` key."""
    return Failure(message, code)


def response(
    *items: Item, response_id: str | None = None, usage: tuple[int, int] = (0, 0)
) -> Response:
    """One fixture response: its items in order, between a start and (usually) an end.

    A ``str`` is one ``text_delta``, a ``script.call`` one ``tool_call``; last only,
    ``script.error(...)`` ends the response with a ``transport_error`` and
    ``script.CUT`` ends it with no record at all. Otherwise it ends with
    ``response_end``, stop reason ``tool_call`` if it has calls, else ``stop``, and
    ``usage`` = ``(input, output)`` tokens. Without ``response_id``,
    ``script.fixture`` names the n-th response ``response-NNN``.
    """
    return Response(items, response_id, usage)


def fixture(*responses: Response) -> dict[str, object]:
    """The plain schema-version-1 fixture dict holding ``responses``, ids filled in.

    Every call returns new containers: nothing is shared with the arguments or with
    an earlier result.
    """
    for index, scripted in enumerate(responses):
        if type(scripted) is not Response:
            raise TypeError(
                f"fixture: responses[{index}] must be a script.response(...), got {_kind(scripted)}"
            )
    calls_by_name: dict[str, int] = {}
    return {
        "schemaVersion": 1,
        "responses": [
            {"records": _records(scripted, number, calls_by_name)}
            for number, scripted in enumerate(responses, start=1)
        ],
    }


def _records(scripted: Response, number: int, calls_by_name: dict[str, int]) -> list[object]:
    """The records of the ``number``-th response; counts its calls in ``calls_by_name``."""
    response_id = scripted.response_id
    if response_id is None:
        response_id = f"response-{number:03d}"
    records: list[object] = [
        {"type": "response_start", "responseId": response_id, "role": "assistant"}
    ]
    calls = 0
    for item in scripted.items:
        if type(item) is str:
            records.append({"type": "text_delta", "text": item})
        elif type(item) is Call:
            calls += 1
            position = calls_by_name.get(item.name, 0) + 1
            calls_by_name[item.name] = position
            call_id = item.id
            if call_id is None:
                call_id = f"call-{item.name}-{position:03d}"
            arguments = _arguments_copy(item.arguments, "call")
            records.append(
                {"type": "tool_call", "id": call_id, "name": item.name, "arguments": arguments}
            )
        elif type(item) is Failure:
            record: dict[str, object] = {"type": "transport_error", "message": item.message}
            if item.code is not None:
                record["code"] = item.code
            records.append(record)
            return records  # the last item: a transport error ends the response
        else:
            return records  # CUT, the last item: no terminal record at all
    input_tokens, output_tokens = scripted.usage
    records.append(
        {
            "type": "response_end",
            "responseId": response_id,
            "stopReason": "tool_call" if calls else "stop",
            "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens},
        }
    )
    return records


# -- checks -----------------------------------------------------------------------------


def _check_name(where: str, argument: str, value: object) -> None:
    if type(value) is not str:
        raise TypeError(f"{where}: `{argument}` must be a str, got {_kind(value)}")
    if not value:
        raise ValueError(f"{where}: `{argument}` must not be empty")


def _usage(value: object) -> tuple[int, int]:
    if type(value) is not tuple and type(value) is not list:
        raise TypeError(
            f"response: `usage` must be a tuple (input, output) of two ints, got {_kind(value)}"
        )
    if len(value) != 2:
        raise ValueError(
            f"response: `usage` must be (input, output), two ints, got {len(value)} items"
        )
    for position, count in zip(("input", "output"), value, strict=True):
        if type(count) is not int:
            raise TypeError(
                f"response: `usage` {position} count must be an int, got {_kind(count)}"
            )
        if not 0 <= count <= _parser.MAX_TOKENS:
            raise ValueError(
                f"response: `usage` {position} count must be from 0 to 2**53 - 1, "
                f"got {_bounded(repr(count))}"
            )
    return (value[0], value[1])


def _arguments_copy(value: object, where: str) -> dict[str, object]:
    """A checked deep copy of plain JSON tool-call arguments, sharing kept as it was."""
    if type(value) is not dict:
        raise TypeError(f"{where}: `arguments` must be a dict (a JSON object), got {_kind(value)}")
    memo: dict[int, object] = {}
    heights: dict[int, int] = {}  # of each container copied: 1 holds no container
    active: set[int] = set()

    # ``path`` is a linked list, (key, parent), rendered only for an error message.
    def copy(item: object, path: _Path, depth: int) -> object:
        kind = type(item)
        if item is None or kind is str or kind is bool:
            return item
        if kind is int:
            if -_INT_LIMIT < item < _INT_LIMIT:  # type: ignore[operator]
                return item
            raise ValueError(f"{where}: {_render(path)} is an int of more than 4,300 digits")
        if kind is float:
            if math.isfinite(item):  # type: ignore[arg-type]
                return item
            raise ValueError(f"{where}: {_render(path)} is {item!r}, which JSON cannot hold")
        if kind is not dict and kind is not list:
            raise TypeError(
                f"{where}: {_render(path)} must be plain JSON (dict, list, str, int, float, "
                f"bool or None, by exact type), got {_kind(item)}"
            )
        key = id(item)
        if key in active:
            raise ValueError(f"{where}: {_render(path)} contains itself (a cycle)")
        done = memo.get(key)
        # A shared container must fit wherever it appears, not only where first seen.
        if depth + (heights[key] - 1 if done is not None else 0) > _MAX_ARGUMENTS_DEPTH:
            raise ValueError(
                f"{where}: `arguments` nest deeper than {_MAX_ARGUMENTS_DEPTH} containers, "
                "past the fixture's nesting limit"
            )
        if done is not None:
            return done
        active.add(key)
        result: dict[str, object] | list[object]
        if kind is dict:
            result = {}
            for name, member in cast("dict[object, object]", item).items():
                if type(name) is not str:
                    raise TypeError(
                        f"{where}: {_render(path)} has a key that is not a str: {_kind(name)}"
                    )
                result[name] = copy(member, (name, path), depth + 1)
        else:
            result = [
                copy(member, (position, path), depth + 1)
                for position, member in enumerate(cast("list[object]", item))
            ]
        active.discard(key)
        memo[key] = result
        children = cast("dict[object, object]", item).values() if kind is dict else item
        heights[key] = 1 + max(
            (heights[id(child)] for child in children if type(child) in (dict, list)),  # type: ignore[attr-defined]
            default=0,
        )
        return result

    return copy(value, None, 1)  # type: ignore[return-value]


_Path: TypeAlias = "tuple[str | int, _Path] | None"


def _render(path: _Path) -> str:
    keys: list[str] = []
    while path is not None:
        key, path = path
        keys.append(f"[{_bounded(repr(key), 40)}]")
    if len(keys) > 8:  # a deep path: its root and its leaf say enough
        keys[4:-4] = ["[...]"]
    return "`arguments" + "".join(reversed(keys)) + "`"


def _kind(value: object) -> str:
    return type(value).__qualname__


def _bounded(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
