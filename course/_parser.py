"""The record parser: the wire vocabulary and the response state machine, nothing else.

Every record arrives as the adapter's private copy of a JSON value (``freeze_record``):
a record object as a plain ``dict`` whose values are read-only, anything else as its
read-only value. It is judged in the SPEC's order, and the first rule that applies
decides:

1. after the terminal: ``response_end`` is a duplicate terminal, anything else invalid;
2. not an object, or no string ``type``: malformed;
3. a ``type`` outside the five: unknown;
4. the order table (``ORDER_ERRORS``): text, tool or end before the start; a second start;
5. the payload, read by the one table of record types (``RECORD_TYPES``): an unknown,
   missing or mistyped field is malformed, with a message the same table words. The
   JSON Schema (``course/_schema.py``) is generated from that table too;
6. the meaning: duplicate tool-call ids, a mismatched end, a contradicting stop
   reason, a transport error.

Wire names (``response_end``, ``input_tokens`` ...) never leave this module: it
returns course values only.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, NamedTuple, TypeAlias, assert_never, cast

from ._errors import FixtureProviderError, FixtureProviderErrorCode, Location, pointer
from ._json import JsonArray, JsonObject, Memo, NotPlainJson, freeze, new_memo
from ._model import (
    CourseAssistantMessage,
    CourseModelChunk,
    CourseModelResponse,
    CourseModelUsage,
    CourseStopReason,
    CourseTextDeltaChunk,
    CourseToolCallBlock,
    CourseToolCallChunk,
    text_block,
    text_delta,
    tool_call,
)
from ._text import shorten
from ._untrusted import type_name

__all__ = [
    "MAX_TOKENS",
    "ORDER_ERRORS",
    "RECORD_DEPTH",
    "RECORD_TYPES",
    "STOP_REASONS",
    "USAGE_ALIASES",
    "Field",
    "FieldKind",
    "ParserState",
    "RecordType",
    "ResponseParser",
    "describe",
    "freeze_record",
]

Code = FixtureProviderErrorCode

MAX_TOKENS: Final = 2**53 - 1
"""The largest token count a usage object may hold (JavaScript's safe integer)."""

STOP_REASONS: Final[Mapping[str, CourseStopReason]] = MappingProxyType(
    {"stop": "stop", "tool_call": "toolCall"}
)
"""Wire stop reasons and the course stop reasons they become."""

USAGE_ALIASES: Final = (
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
)
"""Each usage count's two accepted spellings; a usage object holds exactly one of each."""

RECORD_DEPTH: Final = 4
"""How many containers enclose a record: the fixture, its response list, the response
and its record list. The nesting limit counts from the fixture root."""

_MISSING: Final = object()


# -- the one table of record payloads ---------------------------------------------------


class _Problem(NamedTuple):
    """Why a field's value is refused, and where below the field (inside a usage)."""

    message: str
    parts: tuple[str, ...] = ()
    about_value: bool = True
    """The message is about the field's value as a whole, so it says which field."""


FieldKind: TypeAlias = Literal["string", "non-empty string", "choice", "object", "usage"]


@dataclass(frozen=True, slots=True)
class Field:
    """One payload field of a record type: what it holds, and whether it may be absent.

    ``problem`` is the one judge of a present value: ``None``, or what to report.
    """

    name: str
    kind: FieldKind
    required: bool = True
    choices: tuple[str, ...] = ()

    def problem(self, value: object) -> _Problem | None:
        match self.kind:
            case "string":
                if type(value) is str:
                    return None
                return _Problem(f"Expected a string, got {describe(value)}")
            case "non-empty string":
                if type(value) is str and value:
                    return None
                return _Problem(f"Expected a non-empty string, got {describe(value)}")
            case "choice":
                if type(value) is str and value in self.choices:
                    return None
                expected = " or ".join(f"{choice!r}" for choice in self.choices)
                return _Problem(f"Expected {expected}, got {describe(value)}")
            case "object":
                if type(value) is JsonObject:
                    return None
                return _Problem(f"Expected an object, got {describe(value)}")
            case "usage":
                usage = _read_usage(value)
                return usage if type(usage) is _Problem else None
            case _:  # pragma: no cover
                assert_never(self.kind)


@dataclass(frozen=True, slots=True)
class RecordType:
    """A record type's closed payload: its fields, besides ``type`` itself."""

    fields: tuple[Field, ...]
    keys: frozenset[str] = field(init=False)
    """Every key a record of this type may have, ``type`` included."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", frozenset({"type", *(f.name for f in self.fields)}))


RECORD_TYPES: Final[Mapping[str, RecordType]] = MappingProxyType(
    {
        "response_start": RecordType(
            (
                Field("responseId", "non-empty string"),
                Field("role", "choice", choices=("assistant",)),
            )
        ),
        "text_delta": RecordType((Field("text", "string"),)),
        "tool_call": RecordType(
            (
                Field("id", "non-empty string"),
                Field("name", "non-empty string"),
                Field("arguments", "object"),
            )
        ),
        "response_end": RecordType(
            (
                Field("responseId", "string"),
                Field("stopReason", "choice", choices=tuple(STOP_REASONS)),
                Field("usage", "usage"),
            )
        ),
        "transport_error": RecordType(
            (Field("message", "string"), Field("code", "string", required=False))
        ),
    }
)
"""Every record type and its closed payload: the parser reads records by this table,
words its errors from it, and the JSON Schema of the fixture format is generated from
it."""

_USAGE_KEYS: Final = frozenset(alias for aliases in USAGE_ALIASES for alias in aliases)


def _read_usage(value: object) -> CourseModelUsage | _Problem:
    """The normalized usage of a usage object, or what is wrong with it."""
    if type(value) is not JsonObject:
        return _Problem(f"Expected a usage object, got {describe(value)}")
    if not _USAGE_KEYS.issuperset(value):
        unknown = next(key for key in value if key not in _USAGE_KEYS)
        return _Problem(
            f"Usage has unknown field `{shorten(unknown)}` (allowed: inputTokens or input_tokens, "
            "outputTokens or output_tokens)",
            (unknown,),
            about_value=False,
        )
    counts: list[int] = []
    for first, second in USAGE_ALIASES:
        alias = first if first in value else second
        count = value.get(alias, _MISSING)
        if count is _MISSING:
            return _Problem(f"Usage is missing `{first}` (or `{second}`)", about_value=False)
        if alias == first and second in value:  # presence, apart from value: `null` too
            return _Problem(
                f"Usage holds both `{first}` and `{second}`; use one alias per count",
                (second,),
                about_value=False,
            )
        if type(count) is not int or not 0 <= count <= MAX_TOKENS:
            return _Problem(
                f"Expected `{alias}` to be an integer from 0 to 2**53 - 1, got {describe(count)}",
                (alias,),
                about_value=False,
            )
        counts.append(count)
    return CourseModelUsage(*counts)


# -- the state machine -------------------------------------------------------------------


class ParserState(enum.Enum):
    """Where a response is in its life."""

    AWAITING_START = "awaiting start"
    """No ``response_start`` yet: only it, or a transport error, may come."""
    STREAMING = "streaming"
    """Started: text deltas, tool calls, a transport error or the end may come."""
    ENDED = "ended"
    """``response_end`` was read: the source must end now."""


# The fast path below compares with this constant: on CPython 3.11, reading an Enum
# member through its class costs as much as the rest of a text delta's fast path (a
# sixth of the long bench workload's streaming time).
_STREAMING: Final = ParserState.STREAMING

ORDER_ERRORS: Final[Mapping[ParserState, Mapping[str, FixtureProviderErrorCode]]] = (
    MappingProxyType(
        {
            ParserState.AWAITING_START: MappingProxyType(
                {
                    "text_delta": Code.PROVIDER_MISSING_START,
                    "tool_call": Code.PROVIDER_MISSING_START,
                    "response_end": Code.PROVIDER_MISSING_START,
                }
            ),
            ParserState.STREAMING: MappingProxyType(
                {"response_start": Code.PROVIDER_DUPLICATE_START}
            ),
            ParserState.ENDED: MappingProxyType({}),  # every record is a terminal error
        }
    )
)
"""For each state, the record types that are out of order in it, whatever their payload."""


# -- records -----------------------------------------------------------------------------


def freeze_record(
    record: object, response_index: int, record_index: int, memo: Memo | None = None
) -> object:
    """The parser's private, read-only copy of a record, for ``feed``.

    A record object becomes a plain ``dict`` whose values are read-only (the parser
    only reads it); anything else, its read-only value. One ``memo`` passed with many
    records keeps the sharing among them. Raises ``PROVIDER_INVALID_FIXTURE`` (located
    in the record) if it is not plain JSON.
    """
    try:
        return freeze(record, new_memo() if memo is None else memo, RECORD_DEPTH, False, True)
    except NotPlainJson as problem:
        place = ("responses", response_index, "records", record_index)
        where = Location(place, response_index, record_index)
        raise where.error(problem.message, *problem.parts) from None


def describe(value: object) -> str:
    """Name a JSON value's kind the way a fixture author would, with a short rendering.

    Takes the adapter's read-only values and plain JSON alike; runs no code of the value.
    """
    kind = type(value)
    if value is None:
        return "null"
    if type(value) is bool:
        return f"boolean `{'true' if value else 'false'}`"
    if type(value) is int and not -(10**20) < value < 10**20:
        return f"a number of about {int(value.bit_length() * 0.30103) + 1} digits"
    if kind is int or kind is float:
        return f"number `{value!r}`"
    if type(value) is str:
        text = value if len(value) <= 40 else value[:37] + "..."
        return f"string {text!r}"
    if kind is JsonArray or kind is list:
        return "array"
    if kind is JsonObject or kind is dict:
        return "object"
    return f"`{type_name(value)}`"


# A handler's ``fields`` are a record whose payload the table approved: each handler
# relies on its record type's entry in ``RECORD_TYPES`` (hence ``Any``).
_Fields: TypeAlias = Mapping[str, Any]
_Handler: TypeAlias = Callable[["ResponseParser", _Fields, int], CourseModelChunk | None]


class ResponseParser:
    """Reads one response's records in order and builds its course values.

    ``feed`` takes one record (as ``freeze_record`` gives it) and returns the chunk it
    produced, or ``None``; ``finish`` is called when the source ends and returns the
    response. Both raise ``FixtureProviderError``; after one, the parser must not be
    used again.
    """

    __slots__ = (
        "_content",
        "_order",
        "_request_id",
        "_response",
        "_response_id",
        "_response_index",
        "_state",
        "_tool_ids",
    )

    def __init__(self, request_id: str, response_index: int) -> None:
        self._request_id = request_id
        self._response_index = response_index
        self._enter(ParserState.AWAITING_START)
        self._response_id = ""
        # The message content so far: a text delta's ``str`` (its block is built at the
        # end, which keeps a long response's blocks out of the garbage collector's way
        # while it streams) or a tool call's block.
        self._content: list[str | CourseToolCallBlock] = []
        self._tool_ids: set[str] = set()
        self._response: CourseModelResponse | None = None

    def _enter(self, state: ParserState) -> None:
        self._state = state
        self._order = ORDER_ERRORS[state]

    def _error(
        self, code: FixtureProviderErrorCode, message: str, index: int, *parts: str | int
    ) -> FixtureProviderError:
        return FixtureProviderError(
            code,
            message,
            response_index=self._response_index,
            record_index=index,
            path=pointer("responses", self._response_index, "records", index, *parts),
        )

    def feed(self, record: object, index: int) -> CourseModelChunk | None:
        """Judge one record (the ``index``-th of the response) and advance."""
        state = self._state
        if type(record) is dict and state is _STREAMING:
            # The commonest record, a text delta while streaming, read by the table's
            # rule for it at once: exactly `type` and a string `text`.
            text = record.get("text")
            if type(text) is str and len(record) == 2 and record.get("type") == "text_delta":
                content = self._content
                content.append(text)
                return text_delta(text, len(content) - 1)
        if state is ParserState.ENDED:
            raise self._after_terminal(record, index)
        if type(record) is not dict:
            raise self._error(
                Code.PROVIDER_MALFORMED_EVENT,
                f"Expected a record object, got {describe(record)}",
                index,
            )
        kind = record.get("type", _MISSING)
        if type(kind) is not str:
            if kind is _MISSING:  # a missing field points at its record, as everywhere
                raise self._error(
                    Code.PROVIDER_MALFORMED_EVENT,
                    "A record is missing required field `type`",
                    index,
                )
            raise self._error(
                Code.PROVIDER_MALFORMED_EVENT,
                f"Expected `type` to be a string, got {describe(kind)}",
                index,
                "type",
            )
        record_type = RECORD_TYPES.get(kind)
        if record_type is None:
            expected = ", ".join(sorted(RECORD_TYPES))
            raise self._error(
                Code.PROVIDER_UNKNOWN_EVENT,
                f"Expected a record type among {expected}; got unknown type {shorten(kind)!r}",
                index,
                "type",
            )
        out_of_order = self._order.get(kind)
        if out_of_order is not None:
            raise self._error(
                out_of_order,
                f"A `{kind}` record cannot come "
                + (
                    "before `response_start`"
                    if state is ParserState.AWAITING_START
                    else "after `response_start`: a response starts once"
                ),
                index,
            )
        self._check_payload(kind, record_type, record, index)
        return _HANDLERS[kind](self, record, index)

    @property
    def response_id(self) -> str | None:
        """The response's id once its ``response_start`` was read, else ``None``."""
        return self._response_id if self._state is not ParserState.AWAITING_START else None

    def finish(self) -> CourseModelResponse:
        """The source ended: return the response, or fail if it never ended."""
        if self._response is None:
            raise FixtureProviderError(
                Code.PROVIDER_MISSING_TERMINAL,
                (
                    "The records ended before any `response_start`, so without a `response_end`"
                    if self._state is ParserState.AWAITING_START
                    else "The records ended after `response_start` without a `response_end`; "
                    f"the {len(self._content)} chunk(s) delivered are not a complete response"
                ),
                response_index=self._response_index,
                path=pointer("responses", self._response_index, "records"),
            )
        return self._response

    # -- rule 5: the payload, by the table -----------------------------------------------

    def _check_payload(
        self, kind: str, record_type: RecordType, record: dict[str, object], index: int
    ) -> None:
        """Raise the malformed-event error for the payload's first problem, if any, in
        the table's order: an unknown field, then each field missing or refused."""
        if not record_type.keys.issuperset(record):
            unknown = next(key for key in record if key not in record_type.keys)
            names = ("type", *sorted(record_type.keys - {"type"}))
            allowed = ", ".join(f"`{name}`" for name in names)
            raise self._error(
                Code.PROVIDER_MALFORMED_EVENT,
                f"A `{kind}` record has unknown field `{shorten(unknown)}` (allowed: {allowed})",
                index,
                unknown,
            )
        for spec in record_type.fields:
            value = record.get(spec.name, _MISSING)
            if value is _MISSING:
                if spec.required:
                    raise self._error(
                        Code.PROVIDER_MALFORMED_EVENT,
                        f"A `{kind}` record is missing required field `{spec.name}`",
                        index,
                    )
                continue
            problem = spec.problem(value)
            if problem is not None:
                message, parts, about_value = problem
                if about_value:
                    message = f"{message} for `{spec.name}` of a `{kind}` record"
                raise self._error(Code.PROVIDER_MALFORMED_EVENT, message, index, spec.name, *parts)

    # -- rule 6: the meaning of each record type -----------------------------------------

    def _on_start(self, fields: _Fields, index: int) -> None:
        self._response_id = fields["responseId"]
        self._enter(ParserState.STREAMING)

    def _on_text(self, fields: _Fields, index: int) -> CourseTextDeltaChunk:
        text = fields["text"]
        self._content.append(text)
        return CourseTextDeltaChunk(text, len(self._content) - 1)

    def _on_tool_call(self, fields: _Fields, index: int) -> CourseToolCallChunk:
        call_id, name, arguments = fields["id"], fields["name"], fields["arguments"]
        if call_id in self._tool_ids:
            raise self._error(
                Code.PROVIDER_DUPLICATE_TOOL_CALL,
                f"Tool-call id {shorten(call_id)!r} is already used in this response",
                index,
                "id",
            )
        self._tool_ids.add(call_id)
        # ``arguments`` is already a read-only deep copy, made once at the boundary.
        chunk, block = tool_call(call_id, name, arguments, len(self._content))
        self._content.append(block)
        return chunk

    def _on_end(self, fields: _Fields, index: int) -> None:
        response_id = fields["responseId"]
        wire_stop_reason = fields["stopReason"]
        usage = cast(CourseModelUsage, _read_usage(fields["usage"]))  # the table approved it
        if response_id != self._response_id:
            raise self._error(
                Code.PROVIDER_RESPONSE_MISMATCH,
                f"Expected `responseId` {shorten(self._response_id)!r} (from response_start), "
                f"got {shorten(response_id)!r}",
                index,
                "responseId",
            )
        stop_reason = STOP_REASONS[wire_stop_reason]
        if (stop_reason == "toolCall") != bool(self._tool_ids):
            count = len(self._tool_ids)
            raise self._error(
                Code.PROVIDER_STOP_REASON_MISMATCH,
                f"Stop reason {wire_stop_reason!r} contradicts the response's "
                f"{count} tool call{'s' if count != 1 else ''}: `tool_call` needs at "
                "least one, `stop` allows none",
                index,
                "stopReason",
            )
        self._enter(ParserState.ENDED)
        content = tuple(
            [text_block(block) if isinstance(block, str) else block for block in self._content]
        )
        self._response = CourseModelResponse(
            self._request_id,
            response_id,
            CourseAssistantMessage("message-" + response_id, content),
            stop_reason,
            usage,
        )

    def _on_transport_error(self, fields: _Fields, index: int) -> None:
        message, code = fields["message"], fields.get("code", _MISSING)
        # The provider's words are data: quoted verbatim, never read as a code.
        provider_code = "" if code is _MISSING else f" (provider code {shorten(code)!r})"
        error = self._error(
            Code.PROVIDER_TRANSPORT_ERROR,
            f'The provider reported a transport error{provider_code}: "{shorten(message, 500)}"',
            index,
        )
        error.transport_message = message
        error.transport_code = None if code is _MISSING else code
        raise error

    # -- rule 1: after the terminal ------------------------------------------------------

    def _after_terminal(self, record: object, index: int) -> FixtureProviderError:
        kind = record.get("type", _MISSING) if type(record) is dict else _MISSING
        if kind == "response_end":
            return self._error(
                Code.PROVIDER_DUPLICATE_TERMINAL,
                "A second `response_end` came after the terminal",
                index,
            )
        got = f"a `{shorten(kind)}` record" if type(kind) is str else describe(record)
        return self._error(
            Code.PROVIDER_INVALID_TERMINAL,
            f"Expected the records to end after `response_end`, got {got}",
            index,
        )


_HANDLERS: Final[Mapping[str, _Handler]] = MappingProxyType(
    {
        "response_start": ResponseParser._on_start,
        "text_delta": ResponseParser._on_text,
        "tool_call": ResponseParser._on_tool_call,
        "response_end": ResponseParser._on_end,
        "transport_error": ResponseParser._on_transport_error,
    }
)
"""What each record type means, once its payload was read."""
