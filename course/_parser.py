"""The record parser: the wire vocabulary and the response state machine, nothing else.

Every record arrives as an unknown (read-only) JSON value. It is judged in the
SPEC's order, and the first rule that applies decides:

1. after the terminal: ``response_end`` is a duplicate terminal, anything else invalid;
2. not an object, or no string ``type``: malformed;
3. a ``type`` outside the five: unknown;
4. the order table (``ORDER_ERRORS``): text, tool or end before the start; a second start;
5. the payload: unknown, missing or mistyped fields. Each ``_on_*`` handler accepts a
   payload with fast inline checks; ``RECORD_FIELDS`` describes the same payloads as
   data, explains every refusal (``_malformed``) and generates the JSON Schema, and
   the property tests hold the two together;
6. the meaning: duplicate tool-call ids, a mismatched end, a contradicting stop
   reason, a transport error.

Wire names (``response_end``, ``input_tokens`` ...) never leave this module: it
returns course values only.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from ._errors import FixtureProviderError, FixtureProviderErrorCode, pointer
from ._json import ArrayRecord, JsonValue, freeze
from ._model import (
    CourseAssistantMessage,
    CourseModelChunk,
    CourseModelResponse,
    CourseModelUsage,
    CourseStopReason,
    CourseToolCallBlock,
    CourseToolCallChunk,
    text_block,
    text_delta,
    tool_call,
)
from ._untrusted import type_name

__all__ = [
    "MAX_TOKENS",
    "ORDER_ERRORS",
    "RECORD_FIELDS",
    "RECORD_LAYOUTS",
    "RECORD_TYPES",
    "STOP_REASONS",
    "USAGE_ALIASES",
    "Field",
    "ParserState",
    "ResponseParser",
    "describe",
    "freeze_source_record",
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


@dataclass(frozen=True, slots=True)
class Field:
    """One payload field of a record type."""

    name: str
    kind: Literal["string", "non-empty string", "object", "choice", "usage"]
    required: bool = True
    choices: tuple[str, ...] = ()


RECORD_FIELDS: Final[Mapping[str, tuple[Field, ...]]] = MappingProxyType(
    {
        "response_start": (
            Field("responseId", "non-empty string"),
            Field("role", "choice", choices=("assistant",)),
        ),
        "text_delta": (Field("text", "string"),),
        "tool_call": (
            Field("id", "non-empty string"),
            Field("name", "non-empty string"),
            Field("arguments", "object"),
        ),
        "response_end": (
            Field("responseId", "string"),
            Field("stopReason", "choice", choices=tuple(STOP_REASONS)),
            Field("usage", "usage"),
        ),
        "transport_error": (
            Field("message", "string"),
            Field("code", "string", required=False),
        ),
    }
)
"""The closed payload of each record type, besides ``type`` itself.

The JSON Schema of the fixture format is generated from this table.
"""

RECORD_TYPES: Final = frozenset(RECORD_FIELDS)


class ParserState(enum.Enum):
    """Where a response is in its life."""

    AWAITING_START = "awaiting start"
    """No ``response_start`` yet: only it, or a transport error, may come."""
    STREAMING = "streaming"
    """Started: text deltas, tool calls, a transport error or the end may come."""
    ENDED = "ended"
    """``response_end`` was read: the source must end now."""


ORDER_ERRORS: Final[Mapping[tuple[ParserState, str], FixtureProviderErrorCode]] = MappingProxyType(
    {
        (ParserState.AWAITING_START, "text_delta"): Code.PROVIDER_MISSING_START,
        (ParserState.AWAITING_START, "tool_call"): Code.PROVIDER_MISSING_START,
        (ParserState.AWAITING_START, "response_end"): Code.PROVIDER_MISSING_START,
        (ParserState.STREAMING, "response_start"): Code.PROVIDER_DUPLICATE_START,
    }
)
"""Record types that are out of order in a state, whatever their payload."""

_MISSING: Final = object()
_UNKNOWN: Final = object()
_STREAMING: Final = ParserState.STREAMING
_ENDED: Final = ParserState.ENDED  # a global is read in a few ns, an Enum member in ~50

# ORDER_ERRORS as one lookup per record: for each state, every known type's verdict
# (``None`` when allowed); a type missing from it is unknown.
_VERDICTS: Final = {
    state: {kind: ORDER_ERRORS.get((state, kind)) for kind in RECORD_FIELDS}
    for state in ParserState
}
_AWAITING_VERDICTS: Final = _VERDICTS[ParserState.AWAITING_START]
_STREAMING_VERDICTS: Final = _VERDICTS[ParserState.STREAMING]
_ENDED_VERDICTS: Final = _VERDICTS[ParserState.ENDED]
_Mapping = MappingProxyType  # the type ``freeze`` gives every JSON object in a record
_Packed: Final = tuple  # a record object as ``freeze`` packs it: its values, then its keys

RECORD_LAYOUTS: Final[Mapping[tuple[str, ...], tuple[str, ...]]] = MappingProxyType(
    {
        keys: keys
        for keys in [
            ("type", *(spec.name for spec in specs if spec.required))
            for specs in RECORD_FIELDS.values()
        ]
        + [
            ("type", *(spec.name for spec in specs))
            for specs in RECORD_FIELDS.values()
            if not all(spec.required for spec in specs)
        ]
    }
)
"""The key tuple of each well-formed record layout, in the SPEC's order. ``freeze``
shares these between packed records, so the parser can recognise a layout by identity."""
_TEXT_LAYOUT: Final = RECORD_LAYOUTS[("type", "text")]


def freeze_source_record(record: object, response_index: int, record_index: int) -> object:
    """The private, read-only copy of a record an async source gave, for ``feed``.

    Raises ``PROVIDER_INVALID_FIXTURE`` (located at the record) if it is not plain JSON.
    """
    return freeze(record, response_index, record_index, {}, None)


def describe(value: object) -> str:
    """Name a JSON value's kind the way a fixture author would, with a short rendering.

    Takes the adapter's read-only values and plain JSON alike; runs no code of the value.
    """
    kind = type(value)
    if value is None:
        return "null"
    if kind is bool:
        return f"boolean `{'true' if value else 'false'}`"
    if kind is int and not -(10**20) < value < 10**20:  # type: ignore[operator]
        return f"a number of about {int(value.bit_length() * 0.30103) + 1} digits"  # type: ignore[attr-defined]
    if kind is int or kind is float:
        return f"number `{value!r}`"
    if kind is str:
        text = value if len(value) <= 40 else value[:37] + "..."  # type: ignore[index,arg-type]
        return f"string {text!r}"
    if kind is tuple or kind is ArrayRecord or kind is list:
        return "array"
    if kind is _Mapping or kind is dict:
        return "object"
    return f"`{type_name(value)}`"


def _field_problem(spec: Field, value: object) -> str | None:
    """What is wrong with a present field's value, or ``None``."""
    kind = type(value)
    if spec.kind == "string":
        ok = kind is str
    elif spec.kind == "non-empty string":
        ok = kind is str and value != ""
    elif spec.kind == "choice":
        ok = kind is str and value in spec.choices
    else:  # object, usage
        ok = kind is _Mapping
    if ok:
        return None
    if spec.kind == "choice":
        expected = " or ".join(f"{choice!r}" for choice in spec.choices)
    else:
        expected = f"a {spec.kind}" if spec.kind != "object" else "an object"
        if spec.kind == "usage":
            expected = "a usage object"
    return f"Expected {expected}, got {describe(value)}"


class ResponseParser:
    """Reads one response's records in order and builds its course values.

    ``feed`` takes one record and returns the chunk it produced, or ``None``;
    ``finish`` is called when the source ends and returns the response. Both raise
    ``FixtureProviderError``; after one, the parser must not be used again.
    """

    __slots__ = (
        "_content",
        "_request_id",
        "_response",
        "_response_id",
        "_response_index",
        "_state",
        "_tool_ids",
        "_verdicts",
    )

    def __init__(self, request_id: str, response_index: int) -> None:
        self._request_id = request_id
        self._response_index = response_index
        self._enter(ParserState.AWAITING_START, _AWAITING_VERDICTS)
        self._response_id = ""
        # The message content so far: a text delta's ``str`` (its block is built at the
        # end, which keeps a long response's blocks out of the garbage collector's way
        # while it streams) or a tool call's block.
        self._content: list[str | CourseToolCallBlock] = []
        self._tool_ids: set[str] = set()
        self._response: CourseModelResponse | None = None

    def _enter(
        self, state: ParserState, verdicts: dict[str, FixtureProviderErrorCode | None]
    ) -> None:
        # The table comes in: ``_VERDICTS[state]`` would hash an Enum member, which runs
        # ``Enum.__hash__`` in Python, three times per response.
        self._state = state
        self._verdicts = verdicts

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
        if type(record) is _Packed:
            packed: tuple[JsonValue, ...] = record
            keys: tuple[str, ...] = packed[-1]  # type: ignore[assignment]
            # Fast path for the commonest record, a well-formed text delta while
            # streaming: rules 1 to 4 cannot apply to it and its payload is exactly a
            # ``str`` text. Any other record takes the full judgement below.
            if keys is _TEXT_LAYOUT and self._state is _STREAMING and packed[0] == "text_delta":
                text = packed[1]
                if type(text) is str:
                    content = self._content
                    content.append(text)
                    return text_delta(text, len(content) - 1)
            record = dict(zip(keys, packed, strict=False))
        if self._state is _ENDED:
            raise self._after_terminal(record, index)
        if type(record) is not dict and type(record) is not _Mapping:
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
        verdict = self._verdicts.get(kind, _UNKNOWN)
        if verdict is not None:
            if verdict is _UNKNOWN:
                expected = ", ".join(sorted(RECORD_FIELDS))
                raise self._error(
                    Code.PROVIDER_UNKNOWN_EVENT,
                    f"Expected a record type among {expected}; got unknown type {kind!r}",
                    index,
                    "type",
                )
            raise self._error(
                verdict,  # type: ignore[arg-type]
                f"A `{kind}` record cannot come "
                + (
                    "before `response_start`"
                    if self._state is ParserState.AWAITING_START
                    else "after `response_start`: a response starts once"
                ),
                index,
            )
        fields: Mapping[str, JsonValue] = record
        if kind == "text_delta":
            delta = fields.get("text", _MISSING)
            if type(delta) is not str or len(fields) != 2:
                raise self._malformed(fields, kind, index)
            content = self._content
            content.append(delta)
            return text_delta(delta, len(content) - 1)
        if kind == "tool_call":
            return self._on_tool_call(fields, index)
        if kind == "response_start":
            self._on_start(fields, index)
        elif kind == "response_end":
            self._on_end(fields, index)
        else:
            raise self._on_transport_error(fields, index)
        return None

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

    # -- the record types -----------------------------------------------------------

    def _on_start(self, fields: Mapping[str, JsonValue], index: int) -> None:
        response_id = fields.get("responseId", _MISSING)
        if (
            type(response_id) is not str
            or not response_id
            or fields.get("role") != "assistant"
            or len(fields) != 3
        ):
            raise self._malformed(fields, "response_start", index)
        self._response_id = response_id
        self._enter(_STREAMING, _STREAMING_VERDICTS)

    def _on_tool_call(self, fields: Mapping[str, JsonValue], index: int) -> CourseToolCallChunk:
        call_id = fields.get("id", _MISSING)
        name = fields.get("name", _MISSING)
        arguments = fields.get("arguments", _MISSING)
        if (
            type(call_id) is not str
            or not call_id
            or type(name) is not str
            or not name
            or type(arguments) is not _Mapping
            or len(fields) != 4
        ):
            raise self._malformed(fields, "tool_call", index)
        if call_id in self._tool_ids:
            raise self._error(
                Code.PROVIDER_DUPLICATE_TOOL_CALL,
                f"Tool-call id {call_id!r} is already used in this response",
                index,
                "id",
            )
        self._tool_ids.add(call_id)
        # ``arguments`` is already a read-only deep copy, made once at the boundary.
        return tool_call(call_id, name, arguments, self._content)

    def _on_end(self, fields: Mapping[str, JsonValue], index: int) -> None:
        response_id = fields.get("responseId", _MISSING)
        wire_stop_reason = fields.get("stopReason")
        # Only a str may be looked up: an unhashable value would raise TypeError.
        stop_reason = STOP_REASONS.get(wire_stop_reason) if type(wire_stop_reason) is str else None
        usage = self._usage(fields.get("usage", _MISSING), index)
        if type(response_id) is not str or stop_reason is None or usage is None or len(fields) != 4:
            raise self._malformed(fields, "response_end", index)
        if response_id != self._response_id:
            raise self._error(
                Code.PROVIDER_RESPONSE_MISMATCH,
                f"Expected `responseId` {self._response_id!r} (from response_start), "
                f"got {response_id!r}",
                index,
                "responseId",
            )
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
        self._enter(_ENDED, _ENDED_VERDICTS)
        self._response = CourseModelResponse(
            self._request_id,
            response_id,
            CourseAssistantMessage(
                "message-" + response_id,
                tuple([text_block(b) if type(b) is str else b for b in self._content]),  # type: ignore[misc]
            ),
            stop_reason,
            usage,
        )

    def _on_transport_error(
        self, fields: Mapping[str, JsonValue], index: int
    ) -> FixtureProviderError:
        message = fields.get("message", _MISSING)
        code = fields.get("code", _MISSING)
        if (
            type(message) is not str
            or (code is not _MISSING and type(code) is not str)
            or len(fields) != (2 if code is _MISSING else 3)
        ):
            return self._malformed(fields, "transport_error", index)
        # The provider's words are data: quoted verbatim, never read as a code.
        provider_code = "" if code is _MISSING else f" (provider code {code!r})"
        error = self._error(
            Code.PROVIDER_TRANSPORT_ERROR,
            f'The provider reported a transport error{provider_code}: "{message}"',
            index,
        )
        error.transport_message = message
        error.transport_code = None if code is _MISSING else code  # type: ignore[assignment]
        return error

    def _usage(self, usage: object, index: int) -> CourseModelUsage | None:
        """The normalized usage, or ``None`` if anything about it is wrong."""
        if type(usage) is not _Mapping or len(usage) != 2:
            return None
        # Two keys, and each count under exactly one of its aliases: nothing else.
        counts: Mapping[str, JsonValue] = usage
        input_tokens = counts.get("inputTokens", _MISSING)
        if input_tokens is _MISSING:
            input_tokens = counts.get("input_tokens", _MISSING)
        elif "input_tokens" in counts:
            return None
        output_tokens = counts.get("outputTokens", _MISSING)
        if output_tokens is _MISSING:
            output_tokens = counts.get("output_tokens", _MISSING)
        elif "output_tokens" in counts:
            return None
        if (
            type(input_tokens) is not int
            or type(output_tokens) is not int
            or not 0 <= input_tokens <= MAX_TOKENS
            or not 0 <= output_tokens <= MAX_TOKENS
        ):
            return None
        return CourseModelUsage(input_tokens, output_tokens)

    # -- diagnosis --------------------------------------------------------------------

    def _after_terminal(self, record: object, index: int) -> FixtureProviderError:
        kind = (
            record.get("type", _MISSING)
            if type(record) is dict or type(record) is _Mapping
            else _MISSING
        )
        if kind == "response_end":
            return self._error(
                Code.PROVIDER_DUPLICATE_TERMINAL,
                "A second `response_end` came after the terminal",
                index,
            )
        got = f"a `{kind}` record" if type(kind) is str else describe(record)
        return self._error(
            Code.PROVIDER_INVALID_TERMINAL,
            f"Expected the records to end after `response_end`, got {got}",
            index,
        )

    def _malformed(
        self, fields: Mapping[str, JsonValue], kind: str, index: int
    ) -> FixtureProviderError:
        """Explain, field by field, why a payload the fast checks refused is malformed."""
        specs = RECORD_FIELDS[kind]
        known = {spec.name for spec in specs}
        for key in fields:
            if key != "type" and key not in known:
                allowed = ", ".join(f"`{name}`" for name in ("type", *sorted(known)))
                return self._error(
                    Code.PROVIDER_MALFORMED_EVENT,
                    f"A `{kind}` record has unknown field `{key}` (allowed: {allowed})",
                    index,
                    key,
                )
        for spec in specs:
            value = fields.get(spec.name, _MISSING)
            if value is _MISSING:
                if spec.required:
                    return self._error(
                        Code.PROVIDER_MALFORMED_EVENT,
                        f"A `{kind}` record is missing required field `{spec.name}`",
                        index,
                    )
                continue
            problem = _field_problem(spec, value)
            if problem is None and spec.kind == "usage":
                return self._usage_problem(value, index)  # type: ignore[arg-type]
            if problem is not None:
                return self._error(
                    Code.PROVIDER_MALFORMED_EVENT,
                    f"{problem} for `{spec.name}` of a `{kind}` record",
                    index,
                    spec.name,
                )
        raise AssertionError(f"no problem found in a refused `{kind}` record")  # pragma: no cover

    def _usage_problem(self, usage: Mapping[str, JsonValue], index: int) -> FixtureProviderError:
        known = {alias for aliases in USAGE_ALIASES for alias in aliases}
        for key in usage:
            if key not in known:
                return self._error(
                    Code.PROVIDER_MALFORMED_EVENT,
                    f"Usage has unknown field `{key}` (allowed: inputTokens or "
                    "input_tokens, outputTokens or output_tokens)",
                    index,
                    "usage",
                    key,
                )
        for aliases in USAGE_ALIASES:
            present = [alias for alias in aliases if alias in usage]
            if not present:
                return self._error(
                    Code.PROVIDER_MALFORMED_EVENT,
                    f"Usage is missing `{aliases[0]}` (or `{aliases[1]}`)",
                    index,
                    "usage",
                )
            if len(present) == 2:
                return self._error(
                    Code.PROVIDER_MALFORMED_EVENT,
                    f"Usage holds both `{aliases[0]}` and `{aliases[1]}`; use one alias per count",
                    index,
                    "usage",
                    aliases[1],
                )
            value = usage[present[0]]
            if type(value) is not int or not 0 <= value <= MAX_TOKENS:
                return self._error(
                    Code.PROVIDER_MALFORMED_EVENT,
                    f"Expected `{present[0]}` to be an integer from 0 to 2**53 - 1, "
                    f"got {describe(value)}",
                    index,
                    "usage",
                    present[0],
                )
        raise AssertionError("no problem found in a refused usage object")  # pragma: no cover
