"""Fixtures in code: a response in one line instead of a screen of records.

::

    from course import script

    fixture = script.fixture(
        script.response(script.call("add", {"left": 20, "right": 22}), usage=(12, 8)),
        script.response("The sum is 42.", usage=(30, 6)),
    )

``script.fixture`` returns the plain fixture dict, exactly what a careful author would
write by hand (records and keys in the README's order), so ``json.dump`` of it is a
valid fixture file. It is schema version 1 unless a record needs version 2 (thinking,
a refusal, an incomplete call, a wait, a status, a model, usage details, a new stop
reason...), and then version 2. Ids left out are filled in deterministically: the n-th
response is ``response-NNN`` and an unnamed call ``call-<name>-NNN``, NNN counting the
calls of that name in the whole fixture (explicit ids and incomplete calls included),
both from 001.

Every argument is checked at once: a value that is not plain JSON, an empty id or
name, a bad usage, a bad delay, ``script.error`` or ``script.CUT`` anywhere but last
raise ``TypeError`` (wrong type) or ``ValueError`` (wrong value), naming the argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final, TypeAlias, cast, final

from . import _json, _json_text, _parser

__all__ = [
    "CUT",
    "Call",
    "Cut",
    "Failure",
    "IncompleteCall",
    "Item",
    "Redacted",
    "Refusal",
    "Response",
    "Thinking",
    "Usage",
    "Wait",
    "call",
    "error",
    "fixture",
    "incomplete_call",
    "redacted",
    "refusal",
    "response",
    "thinking",
    "usage",
    "wait",
]

# The adapter's nesting limit counts from the fixture root; a tool call's arguments
# object sits inside the record's enclosing containers and the record. Refusing deeper
# arguments here keeps script's promise that its output is a valid fixture.
_MAX_ARGUMENTS_DEPTH: Final = _json.MAX_DEPTH - _parser.ARGUMENTS_DEPTH

# The adapter's int limit: at most ``MAX_INT_DIGITS`` digits.
_INT_LIMIT: Final[int] = 10**_json.MAX_INT_DIGITS

_STOP_WORDS: Final = tuple(_parser.STOP_REASONS)
_MAX_DELAY: Final = _parser.MAX_DELAY
_MAX_RETRY_AFTER: Final = _parser.MAX_RETRY_AFTER
_MIN_STATUS, _MAX_STATUS = 400, 599


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


@final
@dataclass(frozen=True, slots=True)
class Call:
    """A scripted ``tool_call`` record; build it with ``script.call``.

    ``arguments`` is the checked private copy taken when the call was made, so later
    changes to the caller's dict change nothing. ``id=None`` is filled in by
    ``script.fixture``. ``fragments``, when given, are the arguments as streamed.
    """

    name: str
    arguments: dict[str, object] = field(repr=False)
    id: str | None = None
    fragments: tuple[str, ...] | None = field(default=None, repr=False)
    signature: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _check_name("call", "name", self.name)
        if self.id is not None:
            _check_name("call", "id", self.id)
        object.__setattr__(self, "arguments", _arguments_copy(self.arguments, "call"))
        if self.fragments is not None:
            object.__setattr__(self, "fragments", _strings("call", "fragments", self.fragments))
            _check_fragments(self.fragments, self.arguments)
        if self.signature is not None:
            _check_name("call", "signature", self.signature)


@final
@dataclass(frozen=True, slots=True)
class IncompleteCall:
    """A scripted ``tool_call_incomplete`` record; build it with ``script.incomplete_call``."""

    name: str
    fragments: tuple[str, ...] = ()
    id: str | None = None

    def __post_init__(self) -> None:
        _check_name("incomplete_call", "name", self.name)
        if type(self.fragments) is not tuple:
            raise TypeError(
                f"incomplete_call: `fragments` must be a tuple, got {_kind(self.fragments)}"
            )
        _strings("incomplete_call", "fragments", self.fragments, may_be_empty=True)
        if self.id is not None:
            _check_name("incomplete_call", "id", self.id)


@final
@dataclass(frozen=True, slots=True)
class Thinking:
    """Scripted ``thinking_delta`` records, then a ``thinking_signature`` if signed;
    build it with ``script.thinking``."""

    texts: tuple[str, ...]
    signature: str | None = None

    def __post_init__(self) -> None:
        if type(self.texts) is not tuple:
            raise TypeError(f"thinking: `texts` must be a tuple, got {_kind(self.texts)}")
        _strings("thinking", "text", self.texts)
        if self.signature is not None:
            _check_name("thinking", "signature", self.signature)


@final
@dataclass(frozen=True, slots=True)
class Redacted:
    """A scripted ``redacted_thinking`` record; build it with ``script.redacted``."""

    data: str

    def __post_init__(self) -> None:
        _check_name("redacted", "data", self.data)


@final
@dataclass(frozen=True, slots=True)
class Refusal:
    """A scripted ``refusal_delta`` record; build it with ``script.refusal``."""

    text: str

    def __post_init__(self) -> None:
        if type(self.text) is not str:
            raise TypeError(f"refusal: `text` must be a str, got {_kind(self.text)}")


@final
@dataclass(frozen=True, slots=True)
class Wait:
    """The ``delay`` of the next record; build it with ``script.wait``."""

    seconds: int | float

    def __post_init__(self) -> None:
        _check_seconds("wait", "seconds", self.seconds, _MAX_DELAY)


@final
@dataclass(frozen=True, slots=True)
class Failure:
    """A scripted final ``transport_error`` record; build it with ``script.error``."""

    message: str
    code: str | None = None
    status: int | None = None
    retry_after: int | float | None = None

    def __post_init__(self) -> None:
        if type(self.message) is not str:
            raise TypeError(f"error: `message` must be a str, got {_kind(self.message)}")
        if self.code is not None and type(self.code) is not str:
            raise TypeError(f"error: `code` must be a str or None, got {_kind(self.code)}")
        if self.status is not None:
            if type(self.status) is not int:
                raise TypeError(f"error: `status` must be an int or None, got {_kind(self.status)}")
            if not _MIN_STATUS <= self.status <= _MAX_STATUS:
                raise ValueError(
                    f"error: `status` must be an HTTP error status from {_MIN_STATUS} to "
                    f"{_MAX_STATUS}, got {_shown(self.status)}"
                )
        if self.retry_after is not None:
            _check_seconds("error", "retry_after", self.retry_after, _MAX_RETRY_AFTER)


@final
@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts for ``usage=`` and ``start_usage=``; build it with ``script.usage``.

    ``input`` is the whole input, cache reads and writes included; ``output`` the whole
    output, reasoning included. A detail left ``None`` is left out of the record.
    """

    input: int
    output: int
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None

    def __post_init__(self) -> None:
        _check_count("usage", "input", self.input)
        _check_count("usage", "output", self.output)
        for argument in ("cache_read", "cache_write", "reasoning"):
            count = getattr(self, argument)
            if count is not None:
                _check_count("usage", argument, count, or_none=True)
        cached = (self.cache_read or 0) + (self.cache_write or 0)
        if cached > self.input:
            raise ValueError(
                f"usage: `cache_read` + `cache_write` ({cached}) must not exceed `input` "
                f"({self.input}), which counts the whole input, cache reads and writes included"
            )
        if (self.reasoning or 0) > self.output:
            raise ValueError(
                f"usage: `reasoning` ({self.reasoning}) must not exceed `output` "
                f"({self.output}), which counts the whole output, reasoning included"
            )


Item: TypeAlias = str | Call | IncompleteCall | Thinking | Redacted | Refusal | Wait | Failure | Cut
"""One item of ``script.response``: content, a wait, or (last only) an error or ``CUT``."""

_CONTENT: Final = (str, Call, IncompleteCall, Thinking, Redacted, Refusal)
_ITEM_TYPES: Final = frozenset({*_CONTENT, Wait, Failure, Cut})


@final
@dataclass(frozen=True, slots=True)
class Response:
    """One scripted fixture response; build it with ``script.response``."""

    items: tuple[Item, ...]
    response_id: str | None = None
    usage: tuple[int, int] | Usage = (0, 0)
    stop: str | None = None
    model: str | None = None
    provider_stop_reason: str | None = None
    start_delay: int | float | None = None
    start_usage: tuple[int, int] | Usage | None = None

    def __post_init__(self) -> None:
        if type(self.items) is not tuple:
            raise TypeError(f"response: `items` must be a tuple, got {_kind(self.items)}")
        _check_items(self.items)
        if self.response_id is not None:
            _check_name("response", "response_id", self.response_id)
        object.__setattr__(self, "usage", _usage(self.usage, "usage"))
        ends = not self.items or type(self.items[-1]) not in (Failure, Cut)
        if self.stop is not None:
            if type(self.stop) is not str:
                raise TypeError(f"response: `stop` must be a str or None, got {_kind(self.stop)}")
            if self.stop not in _STOP_WORDS:
                words = ", ".join(repr(word) for word in _STOP_WORDS)
                raise ValueError(
                    f"response: `stop` must be one of {words}, got {_shown(self.stop)}"
                )
        for argument in ("stop", "provider_stop_reason"):
            if getattr(self, argument) is not None and not ends:
                last = "script.CUT" if type(self.items[-1]) is Cut else "script.error(...)"
                raise ValueError(
                    f"response: `{argument}` belongs to the response_end, which the last "
                    f"item, {last}, leaves out"
                )
        for argument in ("model", "provider_stop_reason"):
            if getattr(self, argument) is not None:
                _check_name("response", argument, getattr(self, argument))
        if self.start_delay is not None:
            _check_seconds("response", "start_delay", self.start_delay, _MAX_DELAY)
        if self.start_usage is not None:
            object.__setattr__(self, "start_usage", _usage(self.start_usage, "start_usage"))


def call(
    name: str,
    arguments: dict[str, object],
    *,
    id: str | None = None,
    fragments: list[str] | tuple[str, ...] | None = None,
    signature: str | None = None,
) -> Call:
    """One ``tool_call`` record: ``name``, plain JSON object ``arguments``, optional ``id``.

    Without ``id``, ``script.fixture`` names it ``call-<name>-NNN``. ``fragments``
    (version 2) are the arguments as streamed: a non-empty list of str whose
    concatenation is ``arguments`` as JSON (``""`` stands for ``{}``); ``signature``
    (version 2) is an opaque non-empty str.
    """
    return Call(name, arguments, id, _tuple(fragments), signature)


def incomplete_call(name: str, *fragments: str, id: str | None = None) -> IncompleteCall:
    """A ``tool_call_incomplete`` record (version 2): a call the token limit cut inside.

    ``fragments`` are the arguments text received, which need not be JSON. Last, or
    followed only by ``script.error`` or ``script.CUT`` (or a ``script.wait`` before the
    end); the response's stop reason is then ``length``. Its default id counts with its
    name's calls.
    """
    return IncompleteCall(name, fragments, id)


def thinking(text: str | list[str] | tuple[str, ...], *, signature: str | None = None) -> Thinking:
    """``thinking_delta`` records (version 2): one per str of ``text`` (a str or a
    non-empty list of str), then a ``thinking_signature`` if ``signature`` is given."""
    return Thinking(
        (text,) if type(text) is str else _strings_given("thinking", "text", text), signature
    )


def redacted(data: str) -> Redacted:
    """A ``redacted_thinking`` record (version 2); ``data`` is an opaque non-empty str."""
    return Redacted(data)


def refusal(text: str) -> Refusal:
    """A ``refusal_delta`` record (version 2); the response's stop reason is then ``refusal``."""
    return Refusal(text)


def wait(seconds: int | float) -> Wait:
    """A ``delay`` of ``seconds`` (0 .. 3600) on the next item's first record, or on the
    response's final record when last (version 2). Two in a row, or one right before
    ``script.CUT``, are a ``ValueError``."""
    return Wait(seconds)


def error(
    message: str,
    *,
    code: str | None = None,
    status: int | None = None,
    retry_after: int | float | None = None,
) -> Failure:
    """A final ``transport_error`` record; without ``code`` the record has no ``code`` key.

    ``status`` (an HTTP status from 400 to 599) and ``retry_after`` (seconds, 0 ..
    86400) are version 2: what a provider would answer with, and its ``Retry-After``.
    """
    return Failure(message, code, status, retry_after)


def usage(
    input: int,
    output: int,
    *,
    cache_read: int | None = None,
    cache_write: int | None = None,
    reasoning: int | None = None,
) -> Usage:
    """Token counts with details (version 2) for ``script.response(usage=...)``.

    ``input`` counts the whole input, ``cache_read`` and ``cache_write`` included;
    ``output`` the whole output, ``reasoning`` included. Each detail given is written,
    0 included.
    """
    return Usage(input, output, cache_read, cache_write, reasoning)


def response(
    *items: Item,
    response_id: str | None = None,
    usage: tuple[int, int] | Usage = (0, 0),
    stop: str | None = None,
    model: str | None = None,
    provider_stop_reason: str | None = None,
    start_delay: int | float | None = None,
    start_usage: tuple[int, int] | Usage | None = None,
) -> Response:
    """One fixture response: its items in order, between a start and (usually) an end.

    A ``str`` is one ``text_delta``, a ``script.call`` one ``tool_call``, and so on;
    last only, ``script.error(...)`` ends the response with a ``transport_error`` and
    ``script.CUT`` ends it with no record at all. Otherwise it ends with
    ``response_end`` and ``usage`` (``(input, output)`` tokens or ``script.usage``).
    Its stop reason is ``stop`` when given (a wire word), else ``length`` with an
    incomplete call, ``refusal`` with a refusal, ``tool_call`` with calls, ``stop``
    otherwise. Without ``response_id``, ``script.fixture`` names the n-th response
    ``response-NNN``. ``model`` and ``start_usage`` go on the start, ``start_delay``
    is its delay, ``provider_stop_reason`` goes on the end (all version 2).
    """
    return Response(
        items,
        response_id,
        usage,
        stop,
        model,
        provider_stop_reason,
        start_delay,
        start_usage,
    )


def fixture(*responses: Response) -> dict[str, object]:
    """The plain fixture dict holding ``responses``, ids filled in.

    Schema version 2 exactly when a record needs it (a type, key or stop reason
    version 1 refuses), else version 1. Every call returns new containers: nothing is
    shared with the arguments or with an earlier result.
    """
    for index, scripted in enumerate(responses):
        if type(scripted) is not Response:
            raise TypeError(
                f"fixture: responses[{index}] must be a script.response(...), got {_kind(scripted)}"
            )
    calls_by_name: dict[str, int] = {}
    written = [
        _records(scripted, number, calls_by_name)
        for number, scripted in enumerate(responses, start=1)
    ]
    version = 2 if any(map(_needs_version_2, written)) else 1
    return {"schemaVersion": version, "responses": [{"records": each} for each in written]}


# -- writing records --------------------------------------------------------------------


def _records(
    scripted: Response, number: int, calls_by_name: dict[str, int]
) -> list[dict[str, object]]:
    """The records of the ``number``-th response; counts its calls in ``calls_by_name``."""
    response_id = scripted.response_id
    if response_id is None:
        response_id = f"response-{number:03d}"
    start: dict[str, object] = {
        "type": "response_start",
        "responseId": response_id,
        "role": "assistant",
    }
    if scripted.model is not None:
        start["model"] = scripted.model
    if scripted.start_usage is not None:
        start["usage"] = _usage_record(scripted.start_usage)
    records = [_delayed(start, scripted.start_delay)]
    delay: int | float | None = None  # of the next record, from a script.wait
    for item in scripted.items:
        if type(item) is Wait:
            delay = item.seconds
            continue
        if type(item) is Cut:
            return records  # the last item: no terminal record at all
        written = _item_records(item, calls_by_name)
        written[0] = _delayed(written[0], delay)
        delay = None
        records += written
        if type(item) is Failure:
            return records  # the last item: a transport error ends the response
    end: dict[str, object] = {
        "type": "response_end",
        "responseId": response_id,
        "stopReason": _stop_reason(scripted),
        "usage": _usage_record(scripted.usage),
    }
    if scripted.provider_stop_reason is not None:
        end["providerStopReason"] = scripted.provider_stop_reason
    records.append(_delayed(end, delay))
    return records


def _item_records(
    item: str | Call | IncompleteCall | Thinking | Redacted | Refusal | Failure,
    calls_by_name: dict[str, int],
) -> list[dict[str, object]]:
    """The records one content item (or ``script.error``) stands for, in order."""
    if type(item) is str:
        return [{"type": "text_delta", "text": item}]
    if type(item) is Call:
        arguments = _arguments_copy(item.arguments, "call")
        record: dict[str, object] = {
            "type": "tool_call",
            "id": _call_id(item.name, item.id, calls_by_name),
            "name": item.name,
            "arguments": arguments,
        }
        if item.fragments is not None:
            _check_fragments(item.fragments, arguments)  # the arguments may have changed
            record["argumentFragments"] = list(item.fragments)
        if item.signature is not None:
            record["signature"] = item.signature
        return [record]
    if type(item) is IncompleteCall:
        call_id = _call_id(item.name, item.id, calls_by_name)
        return [
            {
                "type": "tool_call_incomplete",
                "id": call_id,
                "name": item.name,
                "argumentFragments": list(item.fragments),
            }
        ]
    if type(item) is Thinking:
        records: list[dict[str, object]] = [
            {"type": "thinking_delta", "text": text} for text in item.texts
        ]
        if item.signature is not None:
            records.append({"type": "thinking_signature", "signature": item.signature})
        return records
    if type(item) is Redacted:
        return [{"type": "redacted_thinking", "data": item.data}]
    if type(item) is Refusal:
        return [{"type": "refusal_delta", "text": item.text}]
    failure = cast(Failure, item)
    record = {"type": "transport_error", "message": failure.message}
    if failure.code is not None:
        record["code"] = failure.code
    if failure.status is not None:
        record["status"] = failure.status
    if failure.retry_after is not None:
        record["retryAfter"] = failure.retry_after
    return [record]


def _call_id(name: str, given: str | None, calls_by_name: dict[str, int]) -> str:
    """The call's id: ``given``, else ``call-<name>-NNN`` by its place among its name's."""
    position = calls_by_name.get(name, 0) + 1
    calls_by_name[name] = position
    return f"call-{name}-{position:03d}" if given is None else given


def _stop_reason(scripted: Response) -> str:
    if scripted.stop is not None:
        return scripted.stop
    kinds = {type(item) for item in scripted.items}
    if IncompleteCall in kinds:
        return "length"
    if Refusal in kinds:
        return "refusal"
    return "tool_call" if Call in kinds else "stop"


def _delayed(record: dict[str, object], delay: int | float | None) -> dict[str, object]:
    if delay is not None:
        record["delay"] = delay
    return record


_USAGE_KEYS: Final = (
    ("cache_read", "cacheReadTokens"),
    ("cache_write", "cacheWriteTokens"),
    ("reasoning", "reasoningTokens"),
)


def _usage_record(counts: tuple[int, int] | Usage) -> dict[str, object]:
    if type(counts) is tuple:
        return {"inputTokens": counts[0], "outputTokens": counts[1]}
    given = cast(Usage, counts)
    record: dict[str, object] = {"inputTokens": given.input, "outputTokens": given.output}
    for argument, key in _USAGE_KEYS:
        count = getattr(given, argument)
        if count is not None:
            record[key] = count
    return record


# What version 1 accepts, from the one record table: anything else needs version 2.
_VERSION_1_KEYS: Final = {
    name: record_type.views[1].keys
    for name, record_type in _parser.RECORD_TYPES.items()
    if record_type.views[1] is not None
}
_VERSION_1_STOPS: Final = frozenset(_parser.stop_reasons(1))
_VERSION_1_USAGE: Final = frozenset(_parser.usage_keys(1))


def _needs_version_2(records: list[dict[str, object]]) -> bool:
    """Whether version 1 would refuse one of ``records``: its type, a key, a stop reason
    or a usage detail."""
    for record in records:
        keys = _VERSION_1_KEYS.get(cast(str, record["type"]))
        if keys is None or not keys.issuperset(record):
            return True
        if record["type"] == "response_end" and (
            record["stopReason"] not in _VERSION_1_STOPS
            or not _VERSION_1_USAGE.issuperset(cast("dict[str, int]", record["usage"]))
        ):
            return True
    return False


# -- checks -----------------------------------------------------------------------------


def _check_items(items: tuple[object, ...]) -> None:
    """Each item's type, and its place: what ends a response last, a wait before a record,
    nothing but the end after an incomplete call."""
    last = len(items) - 1
    incomplete: int | None = None  # the index of an incomplete call
    for index, item in enumerate(items):
        kind = type(item)
        if kind not in _ITEM_TYPES:
            raise TypeError(
                f"response: items[{index}] must be a str, script.call(...), "
                "script.incomplete_call(...), script.thinking(...), script.redacted(...), "
                "script.refusal(...), script.wait(...), script.error(...) or script.CUT, "
                f"got {_kind(item)}"
            )
        if (kind is Failure or kind is Cut) and index != last:
            what = "script.CUT" if kind is Cut else "script.error(...)"
            raise ValueError(
                f"response: items[{index}] is {what}, which ends a response, "
                f"so it must be the last item (there are {last + 1})"
            )
        if kind is Wait and index < last and type(items[index + 1]) in (Wait, Cut):
            what = "script.CUT" if type(items[index + 1]) is Cut else "another script.wait"
            raise ValueError(
                f"response: items[{index}] is a script.wait(...) followed by {what}, "
                "so it delays no record"
            )
        if incomplete is not None and kind in _CONTENT:
            raise ValueError(
                f"response: items[{index}] follows the script.incomplete_call(...) at "
                f"items[{incomplete}], which must be the last content of its response "
                "(only script.error(...) or script.CUT may follow it)"
            )
        if kind is IncompleteCall:
            incomplete = index


def _check_name(where: str, argument: str, value: object) -> None:
    if type(value) is not str:
        raise TypeError(f"{where}: `{argument}` must be a str, got {_kind(value)}")
    if not value:
        raise ValueError(f"{where}: `{argument}` must not be empty")


def _tuple(value: list[str] | tuple[str, ...] | None) -> tuple[str, ...] | None:
    """A list as a tuple; anything else unchanged, for the value type's own check."""
    return tuple(value) if type(value) is list else cast("tuple[str, ...] | None", value)


def _strings_given(where: str, argument: str, value: object) -> tuple[str, ...]:
    if type(value) is not list and type(value) is not tuple:
        raise TypeError(
            f"{where}: `{argument}` must be a str or a non-empty list of str, got {_kind(value)}"
        )
    return tuple(cast("list[str]", value))


def _strings(
    where: str, argument: str, value: object, *, may_be_empty: bool = False
) -> tuple[str, ...]:
    """``value`` as a tuple of str: a list or a tuple, non-empty unless ``may_be_empty``."""
    if type(value) is not list and type(value) is not tuple:
        raise TypeError(f"{where}: `{argument}` must be a list of str, got {_kind(value)}")
    for position, text in enumerate(cast("list[object]", value)):
        if type(text) is not str:
            raise TypeError(f"{where}: `{argument}[{position}]` must be a str, got {_kind(text)}")
    if not value and not may_be_empty:
        raise ValueError(f"{where}: `{argument}` must not be empty")
    return tuple(cast("list[str]", value))


def _check_fragments(fragments: tuple[str, ...], arguments: dict[str, object]) -> None:
    """The fragments' concatenation must be ``arguments`` as JSON (``""`` is ``{}``)."""
    joined = "".join(fragments)
    try:
        streamed = _json_text.loads(joined, enclosing=_parser.ARGUMENTS_DEPTH) if joined else {}
    except _json_text.JsonSyntaxError as refusal:
        raise ValueError(
            f"call: `fragments` join into text that is not strict JSON: {refusal.message}"
        ) from None
    if not _same_json(streamed, arguments):
        raise ValueError(
            "call: `fragments` join into JSON that differs from `arguments` "
            "(ints and floats differ, and so do booleans and numbers)"
        )


def _same_json(left: object, right: object) -> bool:
    """Equal as JSON: as ``==``, except that an int, a float and a bool never meet."""
    kind = type(left)
    if kind is not type(right):
        return False
    if kind is dict:
        mine, theirs = cast("dict[str, object]", left), cast("dict[str, object]", right)
        return mine.keys() == theirs.keys() and all(
            _same_json(value, theirs[key]) for key, value in mine.items()
        )
    if kind is list:
        mine_list, theirs_list = cast("list[object]", left), cast("list[object]", right)
        return len(mine_list) == len(theirs_list) and all(map(_same_json, mine_list, theirs_list))
    return left == right


def _check_seconds(where: str, argument: str, value: object, limit: int) -> None:
    if type(value) is not int and type(value) is not float:
        raise TypeError(
            f"{where}: `{argument}` must be an int or a float (seconds), got {_kind(value)}"
        )
    if not 0 <= value <= limit:  # NaN and the infinities fail it too
        raise ValueError(
            f"{where}: `{argument}` must be from 0 to {limit:,} seconds, got {_shown(value)}"
        )


def _check_count(where: str, argument: str, value: object, *, or_none: bool = False) -> None:
    if type(value) is not int:
        expected = "an int or None" if or_none else "an int"
        raise TypeError(f"{where}: `{argument}` must be {expected}, got {_kind(value)}")
    if not 0 <= value <= _parser.MAX_TOKENS:
        raise ValueError(f"{where}: `{argument}` must be from 0 to 2**53 - 1, got {_shown(value)}")


def _usage(value: object, argument: str) -> tuple[int, int] | Usage:
    if type(value) is Usage:
        return value
    if type(value) is not tuple and type(value) is not list:
        raise TypeError(
            f"response: `{argument}` must be a tuple (input, output) of two ints or a "
            f"script.usage(...), got {_kind(value)}"
        )
    if len(value) != 2:
        raise ValueError(
            f"response: `{argument}` must be (input, output), two ints, got {len(value)} items"
        )
    for position, count in zip(("input", "output"), value, strict=True):
        if type(count) is not int:
            raise TypeError(
                f"response: `{argument}` {position} count must be an int, got {_kind(count)}"
            )
        if not 0 <= count <= _parser.MAX_TOKENS:
            raise ValueError(
                f"response: `{argument}` {position} count must be from 0 to 2**53 - 1, "
                f"got {_shown(count)}"
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


def _shown(value: object) -> str:
    """A checked value for a message: short, even for an int too long for ``repr``."""
    if type(value) is int and not -(10**20) < value < 10**20:
        return f"an int of about {int(value.bit_length() * 0.30103) + 1} digits"
    return _bounded(repr(value))


def _bounded(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
