"""The record parser: the wire vocabulary and the response state machine, nothing else.

Every record arrives as the adapter's private copy of a JSON value (``freeze_record``):
a record object as a plain ``dict`` whose values are read-only, anything else as its
read-only value. It is judged in the SPEC's order, and the first rule that applies
decides:

1. after the terminal: ``response_end`` is a duplicate terminal, anything else invalid;
2. not an object, or no string ``type``: malformed;
3. a ``type`` outside the fixture's version (five types in version 1, ten in 2): unknown;
4. the order table (``ORDER_ERRORS``): content or the end before the start; a second start;
5. the payload, read by the one table of record types (``RECORD_TYPES``): an unknown,
   missing or mistyped field is malformed, with a message the same table words. Each
   row and field says the schema version it arrived in, so one table serves both
   versions. The JSON Schema (``course/_schema.py``) is generated from that table too;
6. the meaning: duplicate tool-call ids, a mismatched end, a contradicting stop
   reason, a transport error; in version 2 then, in this order, a misplaced thinking
   signature, content after an incomplete tool call (both out of order), an
   incomplete call's duplicate id, and an end that an incomplete call or a refusal
   contradicts.

A version-2 record's ``delay`` is the stream's business (it waits before it feeds the
record: ``delay_of``); the parser only checks it as a field.

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
from ._json import (
    JsonArray,
    JsonObject,
    Memo,
    NotPlainJson,
    PlainJson,
    freeze,
    members,
    new_memo,
)
from ._json_text import JsonSyntaxError, loads
from ._model import (
    CourseAssistantMessage,
    CourseContentBlock,
    CourseIncompleteToolCallBlock,
    CourseIncompleteToolCallChunk,
    CourseModelChunk,
    CourseModelResponse,
    CourseModelUsage,
    CourseRedactedThinkingBlock,
    CourseRedactedThinkingChunk,
    CourseRefusalBlock,
    CourseRefusalDeltaChunk,
    CourseStopReason,
    CourseTextDeltaChunk,
    CourseThinkingBlock,
    CourseThinkingDeltaChunk,
    CourseThinkingSignatureChunk,
    CourseToolCallChunk,
    response,
    text_block,
    text_delta,
    thinking_delta,
    tool_call,
    usage,
)
from ._text import shorten
from ._untrusted import type_name

__all__ = [
    "CONTENT_TYPES",
    "DELAY",
    "MAX_DELAY",
    "MAX_RETRY_AFTER",
    "MAX_TOKENS",
    "ORDER_ERRORS",
    "RECORD_DEPTH",
    "RECORD_TYPES",
    "SCHEMA_VERSIONS",
    "STOP_REASONS",
    "STOP_REASON_SINCE",
    "USAGE_ALIASES",
    "USAGE_DETAIL_ALIASES",
    "Field",
    "FieldKind",
    "ParserState",
    "RecordType",
    "RecordView",
    "ResponseParser",
    "delay_of",
    "describe",
    "freeze_record",
    "stop_reasons",
    "usage_keys",
]

Code = FixtureProviderErrorCode

SCHEMA_VERSIONS: Final = (1, 2)
"""The fixture format versions, oldest first: ``schemaVersion`` is one of them."""

MAX_TOKENS: Final = 2**53 - 1
"""The largest token count a usage object may hold (JavaScript's safe integer)."""

MAX_DELAY: Final = 3600
"""The longest ``delay`` a record may ask for, in seconds (schema version 2)."""

MAX_RETRY_AFTER: Final = 86400
"""The longest ``retryAfter`` a transport error may give, in seconds (schema version 2)."""

STOP_REASONS: Final[Mapping[str, CourseStopReason]] = MappingProxyType(
    {
        "stop": "stop",
        "tool_call": "toolCall",
        "length": "length",
        "content_filter": "contentFilter",
        "refusal": "refusal",
        "pause_turn": "pauseTurn",
    }
)
"""Wire stop reasons and the course stop reasons they become."""

STOP_REASON_SINCE: Final[Mapping[str, int]] = MappingProxyType(
    {"stop": 1, "tool_call": 1, "length": 2, "content_filter": 2, "refusal": 2, "pause_turn": 2}
)
"""The schema version each wire stop reason arrived in."""


def stop_reasons(version: int) -> tuple[str, ...]:
    """The wire stop reasons a fixture of ``version`` may use, in table order."""
    return tuple(wire for wire in STOP_REASONS if STOP_REASON_SINCE[wire] <= version)


# Indexed by version: judged once per response, so looked up, never rebuilt.
_STOP_REASONS_AT: Final = (frozenset(), *(frozenset(stop_reasons(v)) for v in (1, 2)))


USAGE_ALIASES: Final = (
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
)
"""Each required usage count's two accepted spellings; a usage object holds exactly one
of each."""

USAGE_DETAIL_ALIASES: Final = (
    ("cacheReadTokens", "cache_read_tokens"),
    ("cacheWriteTokens", "cache_write_tokens"),
    ("reasoningTokens", "reasoning_tokens"),
)
"""The optional usage details of schema version 2, each under at most one alias."""


def usage_keys(version: int) -> tuple[str, ...]:
    """Every key a usage object of a fixture of ``version`` may hold."""
    pairs = USAGE_ALIASES if version < 2 else USAGE_ALIASES + USAGE_DETAIL_ALIASES
    return tuple(alias for aliases in pairs for alias in aliases)


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


FieldKind: TypeAlias = Literal[
    "string",
    "non-empty string",
    "choice",
    "stop reason",
    "object",
    "usage",
    "fragments",
    "string list",
    "delay",
    "status",
    "retry after",
]


def _is_number(value: object, maximum: int) -> bool:
    """An ``int`` or finite ``float`` (never ``bool``) from 0 to ``maximum``."""
    kind = type(value)
    # NaN fails every comparison, infinity the upper bound.
    return (kind is int or kind is float) and 0 <= value <= maximum  # type: ignore[operator]


@dataclass(frozen=True, slots=True)
class Field:
    """One payload field of a record type: what it holds, whether it may be absent, and
    the schema version it arrived in (``since``).

    ``problem`` is the one judge of a present value: ``None``, or what to report. It
    reads the record only for a field checked against another (``fragments``, against
    ``arguments``, which comes before it in its row and was proven already).
    """

    name: str
    kind: FieldKind
    required: bool = True
    choices: tuple[str, ...] = ()
    since: int = 1

    def problem(
        self, value: object, version: int = 1, record: Mapping[str, object] | None = None
    ) -> _Problem | None:
        # The commonest kinds first: each case is one comparison more for the rest.
        match self.kind:
            case "non-empty string":
                if type(value) is str and value:
                    return None
                return _Problem(f"Expected a non-empty string, got {describe(value)}")
            case "string":
                if type(value) is str:
                    return None
                return _Problem(f"Expected a string, got {describe(value)}")
            case "object":
                if type(value) is JsonObject:
                    return None
                return _Problem(f"Expected an object, got {describe(value)}")
            case "choice":
                if type(value) is str and value in self.choices:
                    return None
                expected = " or ".join(f"{choice!r}" for choice in self.choices)
                return _Problem(f"Expected {expected}, got {describe(value)}")
            case "usage":
                usage = _read_usage(value, version)
                return usage if type(usage) is _Problem else None
            case "stop reason":
                if type(value) is str and value in _STOP_REASONS_AT[version]:
                    return None
                quoted = [f"{choice!r}" for choice in stop_reasons(version)]
                expected = ", ".join(quoted[:-1]) + " or " + quoted[-1]
                later = (
                    f" (`{value}` needs `schemaVersion` 2)"
                    if type(value) is str and STOP_REASON_SINCE.get(value, 0) > version
                    else ""
                )
                return _Problem(f"Expected {expected}, got {describe(value)}{later}")
            case "fragments":
                return _fragments_problem(value, record)
            case "string list":
                if type(value) is JsonArray and all(type(item) is str for item in value):
                    return None
                return _Problem(f"Expected an array of strings, got {describe(value)}")
            case "delay":
                if _is_number(value, MAX_DELAY):
                    return None
                return _Problem(
                    f"Expected a number of seconds from 0 to {MAX_DELAY}, got {describe(value)}"
                )
            case "status":
                if type(value) is int and 400 <= value <= 599:
                    return None
                return _Problem(
                    f"Expected an HTTP error status, an integer from 400 to 599, "
                    f"got {describe(value)}"
                )
            case "retry after":
                if _is_number(value, MAX_RETRY_AFTER):
                    return None
                return _Problem(
                    f"Expected a number of seconds from 0 to {MAX_RETRY_AFTER}, "
                    f"got {describe(value)}"
                )
            case _:  # pragma: no cover
                assert_never(self.kind)


DELAY: Final = Field("delay", "delay", required=False, since=2)
"""The field every record type has from schema version 2: seconds to wait before the
record is judged."""


class RecordView(NamedTuple):
    """A record type as one schema version reads it: its fields (``delay`` last, from
    version 2) and every key it may have, ``type`` included."""

    fields: tuple[Field, ...]
    keys: frozenset[str]


@dataclass(frozen=True, slots=True)
class RecordType:
    """A record type's closed payload: its fields, besides ``type`` itself, and the
    schema version it arrived in (``since``)."""

    fields: tuple[Field, ...]
    since: int = 1
    keys: frozenset[str] = field(init=False)
    """Every key a record of this type may have in the latest version, ``type`` included."""
    views: tuple[RecordView | None, ...] = field(init=False, repr=False)
    """Indexed by schema version: how that version reads the type (``None`` at 0 and
    before ``since``)."""

    def __post_init__(self) -> None:
        views: list[RecordView | None] = [None]
        for version in SCHEMA_VERSIONS:
            if version < self.since:
                views.append(None)
                continue
            fields = tuple(f for f in self.fields if f.since <= version)
            if version >= DELAY.since:
                fields += (DELAY,)
            views.append(RecordView(fields, frozenset({"type", *(f.name for f in fields)})))
        latest = views[-1]
        assert latest is not None  # every type exists in the latest version
        object.__setattr__(self, "views", tuple(views))
        object.__setattr__(self, "keys", latest.keys)

    def fields_at(self, version: int) -> tuple[Field, ...]:
        """The fields of the type in ``version`` (``()`` if it has no such type)."""
        view = self.views[version]
        return () if view is None else view.fields


RECORD_TYPES: Final[Mapping[str, RecordType]] = MappingProxyType(
    {
        "response_start": RecordType(
            (
                Field("responseId", "non-empty string"),
                Field("role", "choice", choices=("assistant",)),
                Field("model", "non-empty string", required=False, since=2),
                Field("usage", "usage", required=False, since=2),
            )
        ),
        "text_delta": RecordType((Field("text", "string"),)),
        "tool_call": RecordType(
            (
                Field("id", "non-empty string"),
                Field("name", "non-empty string"),
                Field("arguments", "object"),
                Field("argumentFragments", "fragments", required=False, since=2),
                Field("signature", "non-empty string", required=False, since=2),
            )
        ),
        "tool_call_incomplete": RecordType(
            (
                Field("id", "non-empty string"),
                Field("name", "non-empty string"),
                Field("argumentFragments", "string list"),
            ),
            since=2,
        ),
        "thinking_delta": RecordType((Field("text", "string"),), since=2),
        "thinking_signature": RecordType((Field("signature", "non-empty string"),), since=2),
        "redacted_thinking": RecordType((Field("data", "non-empty string"),), since=2),
        "refusal_delta": RecordType((Field("text", "string"),), since=2),
        "response_end": RecordType(
            (
                Field("responseId", "string"),
                Field("stopReason", "stop reason"),
                Field("usage", "usage"),
                Field("providerStopReason", "non-empty string", required=False, since=2),
            )
        ),
        "transport_error": RecordType(
            (
                Field("message", "string"),
                Field("code", "string", required=False),
                Field("status", "status", required=False, since=2),
                Field("retryAfter", "retry after", required=False, since=2),
            )
        ),
    }
)
"""Every record type and its closed payload, in both schema versions: the parser reads
records by this table, words its errors from it, and the JSON Schema of the fixture
format is generated from it."""

CONTENT_TYPES: Final = (
    "text_delta",
    "tool_call",
    "tool_call_incomplete",
    "thinking_delta",
    "thinking_signature",
    "redacted_thinking",
    "refusal_delta",
)
"""The record types that emit a chunk each (the content of the message)."""


def _read_usage(value: object, version: int) -> CourseModelUsage | _Problem:
    """The normalized usage of a usage object, or what is wrong with it."""
    if type(value) is not JsonObject:
        return _Problem(f"Expected a usage object, got {describe(value)}")
    counts = members(value)  # read where the lookups run in C: ends are frequent
    keys = _USAGE_KEYS[version]
    if not keys.issuperset(counts):
        unknown = next(key for key in counts if key not in keys)
        later = " (usage details need `schemaVersion` 2)" if unknown in _USAGE_KEYS[2] else ""
        return _Problem(
            f"Usage has unknown field `{shorten(unknown)}` (allowed: "
            f"{_USAGE_ALLOWED[version]}){later}",
            (unknown,),
            about_value=False,
        )
    required: list[int] = []
    for first, second in USAGE_ALIASES:
        alias = first if first in counts else second
        count = counts.get(alias, _MISSING)
        if count is _MISSING:
            return _Problem(f"Usage is missing `{first}` (or `{second}`)", about_value=False)
        if (
            type(count) is not int
            or not 0 <= count <= MAX_TOKENS
            or (alias == first and second in counts)
        ):
            return _count_problem(counts, first, second, alias, count)
        required.append(count)  # an int: checked just above
    if version < 2:
        return usage(*required)
    details: list[int | None] = []
    for first, second in USAGE_DETAIL_ALIASES:
        alias = first if first in counts else second
        count = counts.get(alias, _MISSING)
        if count is _MISSING:
            details.append(None)
            continue
        if (
            type(count) is not int
            or not 0 <= count <= MAX_TOKENS
            or (alias == first and second in counts)
        ):
            return _count_problem(counts, first, second, alias, count)
        details.append(count)  # an int: checked just above
    inputs, outputs = required
    cache_read, cache_write, reasoning = details
    # ``inputTokens`` is the whole input, cache reads and writes included; ``outputTokens``
    # the whole output, reasoning included.
    if (cache_read or 0) + (cache_write or 0) > inputs:
        return _Problem(
            f"Usage counts {cache_read or 0} cache read and {cache_write or 0} cache write "
            f"tokens, more than its {inputs} input tokens, which include them",
            about_value=False,
        )
    if (reasoning or 0) > outputs:
        return _Problem(
            f"Usage counts {reasoning} reasoning tokens, more than its {outputs} output "
            "tokens, which include them",
            about_value=False,
        )
    return usage(inputs, outputs, cache_read, cache_write, reasoning)


def _count_problem(
    counts: Mapping[str, object], first: str, second: str, alias: str, count: object
) -> _Problem:
    """What is wrong with a present usage count (under ``alias``) known to be refused:
    both aliases present, or a value out of type or range."""
    if alias == first and second in counts:  # presence, apart from value: `null` too
        return _Problem(
            f"Usage holds both `{first}` and `{second}`; use one alias per count",
            (second,),
            about_value=False,
        )
    return _Problem(
        f"Expected `{alias}` to be an integer from 0 to 2**53 - 1, got {describe(count)}",
        (alias,),
        about_value=False,
    )


_USAGE_KEYS: Final = (frozenset(), *(frozenset(usage_keys(v)) for v in SCHEMA_VERSIONS))
_USAGE_ALLOWED: Final = (
    "",
    *(
        ", ".join(
            f"{first} or {second}"
            for first, second in (
                USAGE_ALIASES if version < 2 else USAGE_ALIASES + USAGE_DETAIL_ALIASES
            )
        )
        for version in SCHEMA_VERSIONS
    ),
)

ARGUMENTS_DEPTH: Final = RECORD_DEPTH + 1
"""How many containers enclose a tool call's ``arguments``: those of its record, and
the record. Joined fragments are read under the same nesting limit."""


def _fragments_problem(value: object, record: Mapping[str, object] | None) -> _Problem | None:
    """What is wrong with a complete call's ``argumentFragments``: not a non-empty array
    of strings, or joined, not strict JSON equal to its ``arguments``."""
    if type(value) is not JsonArray or not value or not all(type(f) is str for f in value):
        return _Problem(f"Expected a non-empty array of strings, got {describe(value)}")
    joined = "".join(value)  # type: ignore[arg-type]  # strings: checked just above
    parsed: PlainJson
    if joined:
        try:
            parsed = loads(joined, enclosing=ARGUMENTS_DEPTH)
        except JsonSyntaxError as refusal:
            return _Problem(
                f"Expected the fragments, joined, to be strict JSON: {refusal.message} "
                f"(at character {refusal.offset} of {describe(joined)})"
            )
    else:
        parsed = {}  # no fragment text at all stands for no arguments
    arguments = None if record is None else record.get("arguments")
    if not _same_json(arguments, parsed):
        return _Problem(
            f"Expected the fragments, joined ({describe(joined)}), to equal the call's "
            "`arguments` as JSON (the same keys and items; numbers of the same type and value)"
        )
    return None


def _same_json(frozen: object, plain: PlainJson) -> bool:
    """Whether a read-only JSON value equals a plain one as JSON: the same keys (order
    ignored), the same items, and scalars of the same type and value (``1`` is not
    ``1.0``, nor ``true``). Iterative, and bounded by the size of ``plain``, a tree."""
    pending: list[tuple[object, object]] = [(frozen, plain)]
    while pending:
        left, right = pending.pop()
        kind = type(left)
        if kind is JsonObject:
            if type(right) is not dict or len(left) != len(right):  # type: ignore[arg-type]
                return False
            for key, item in left.items():  # type: ignore[attr-defined]
                if key not in right:
                    return False
                pending.append((item, right[key]))
        elif kind is JsonArray:
            if type(right) is not list or len(left) != len(right):  # type: ignore[arg-type]
                return False
            pending.extend(zip(left, right, strict=True))  # type: ignore[call-overload]
        elif kind is not type(right) or left != right:
            return False
    return True


def delay_of(record: object) -> int | float:
    """How long the stream waits before it judges a version-2 record: the record's
    ``delay`` if it is an object with a valid one, else 0 (judged at once)."""
    if type(record) is dict:
        delay = record.get("delay")
        if _is_number(delay, MAX_DELAY):
            return delay  # type: ignore[return-value]  # a number: checked just above
    return 0


# -- the state machine -------------------------------------------------------------------


class ParserState(enum.Enum):
    """Where a response is in its life."""

    AWAITING_START = "awaiting start"
    """No ``response_start`` yet: only it, or a transport error, may come."""
    STREAMING = "streaming"
    """Started: content, a transport error or the end may come."""
    THINKING = "thinking"
    """Schema version 2: a thinking block is open, so its signature may come next; any
    other content record closes it."""
    CUT = "cut"
    """Schema version 2: a ``tool_call_incomplete`` was read, the last content of the
    response: only the end or a transport error may come."""
    ENDED = "ended"
    """``response_end`` was read: the source must end now."""


# The fast path below compares with this constant: on CPython 3.11, reading an Enum
# member through its class costs as much as the rest of a text delta's fast path (a
# sixth of the long bench workload's streaming time).
_STREAMING: Final = ParserState.STREAMING
_THINKING: Final = ParserState.THINKING
_CUT: Final = ParserState.CUT

_STARTED_ORDER: Final = MappingProxyType({"response_start": Code.PROVIDER_DUPLICATE_START})

ORDER_ERRORS: Final[Mapping[ParserState, Mapping[str, FixtureProviderErrorCode]]] = (
    MappingProxyType(
        {
            ParserState.AWAITING_START: MappingProxyType(
                {
                    **dict.fromkeys(CONTENT_TYPES, Code.PROVIDER_MISSING_START),
                    "response_end": Code.PROVIDER_MISSING_START,
                }
            ),
            ParserState.STREAMING: _STARTED_ORDER,
            ParserState.THINKING: _STARTED_ORDER,
            ParserState.CUT: _STARTED_ORDER,
            ParserState.ENDED: MappingProxyType({}),  # every record is a terminal error
        }
    )
)
"""For each state, the record types that are out of order in it, whatever their payload
(rule 4). A version-1 fixture never reaches the other states, nor has the types only
version 2 knows (rule 3 refuses them first)."""


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


class _OpenThinking:
    """A thinking block while its deltas arrive: their texts, then its signature."""

    __slots__ = ("signature", "texts")

    def __init__(self, text: str) -> None:
        self.texts = [text]
        self.signature: str | None = None

    def block(self) -> CourseThinkingBlock:
        return CourseThinkingBlock("".join(self.texts), self.signature)


class ResponseParser:
    """Reads one response's records in order and builds its course values.

    ``feed`` takes one record (as ``freeze_record`` gives it) and returns the chunk it
    produced, or ``None``; ``finish`` is called when the source ends and returns the
    response. Both raise ``FixtureProviderError``; after one, the parser must not be
    used again. ``version`` is the fixture's schema version: it decides which record
    types, fields and stop reasons exist.
    """

    __slots__ = (
        "_content",
        "_model",
        "_order",
        "_refused",
        "_request_id",
        "_response",
        "_response_id",
        "_response_index",
        "_start_usage",
        "_state",
        "_thinking",
        "_tool_ids",
        "_version",
    )

    def __init__(self, request_id: str, response_index: int, version: int = 1) -> None:
        self._request_id = request_id
        self._response_index = response_index
        self._version = version
        self._enter(ParserState.AWAITING_START)
        self._response_id = ""
        self._model: str | None = None
        self._start_usage: CourseModelUsage | None = None
        # The message content so far: a text delta's ``str`` (its block is built at the
        # end, which keeps a long response's blocks out of the garbage collector's way
        # while it streams), an open thinking block, or any other block.
        self._content: list[str | _OpenThinking | CourseContentBlock] = []
        # The ids of the tool calls, an incomplete one's too (which is in state CUT).
        self._tool_ids: set[str] = set()
        self._thinking: _OpenThinking | None = None
        self._refused = False
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
        elif type(record) is dict and state is _THINKING:
            # Version 2's commonest: a thinking delta going on with the open block.
            text = record.get("text")
            if type(text) is str and len(record) == 2 and record.get("type") == "thinking_delta":
                self._thinking.texts.append(text)  # type: ignore[union-attr]  # THINKING: open
                return thinking_delta(text, len(self._content) - 1)
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
        view = None if record_type is None else record_type.views[self._version]
        if view is None:
            raise self._unknown_type(kind, record_type, index)
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
        self._check_payload(kind, view, record, index)
        return _HANDLERS[kind](self, record, index)

    @property
    def response_id(self) -> str | None:
        """The response's id once its ``response_start`` was read, else ``None``."""
        return self._response_id if self._state is not ParserState.AWAITING_START else None

    @property
    def model(self) -> str | None:
        """The ``response_start``'s ``model`` once it was read, else ``None``."""
        return self._model

    @property
    def start_usage(self) -> CourseModelUsage | None:
        """The ``response_start``'s usage once it was read, else ``None``."""
        return self._start_usage

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

    # -- rule 3: the type ----------------------------------------------------------------

    def _unknown_type(
        self, kind: str, record_type: RecordType | None, index: int
    ) -> FixtureProviderError:
        version = self._version
        known = sorted(k for k, row in RECORD_TYPES.items() if row.views[version] is not None)
        later = (
            f" (`{kind}` needs `schemaVersion` {record_type.since})"
            if record_type is not None
            else ""
        )
        return self._error(
            Code.PROVIDER_UNKNOWN_EVENT,
            f"Expected a record type among {', '.join(known)}; got unknown type "
            f"{shorten(kind)!r}{later}",
            index,
            "type",
        )

    # -- rule 5: the payload, by the table -----------------------------------------------

    def _check_payload(
        self, kind: str, view: RecordView, record: dict[str, object], index: int
    ) -> None:
        """Raise the malformed-event error for the payload's first problem, if any, in
        the table's order: an unknown field, then each field missing or refused."""
        keys = view.keys
        if not keys.issuperset(record):
            unknown = next(key for key in record if key not in keys)
            names = ("type", *sorted(keys - {"type"}))
            allowed = ", ".join(f"`{name}`" for name in names)
            later = (
                f" (`{unknown}` needs `schemaVersion` 2)"
                if unknown in RECORD_TYPES[kind].keys
                else ""
            )
            raise self._error(
                Code.PROVIDER_MALFORMED_EVENT,
                f"A `{kind}` record has unknown field `{shorten(unknown)}` (allowed: {allowed})"
                + later,
                index,
                unknown,
            )
        version = self._version
        for spec in view.fields:
            value = record.get(spec.name, _MISSING)
            if value is _MISSING:
                if spec.required:
                    raise self._error(
                        Code.PROVIDER_MALFORMED_EVENT,
                        f"A `{kind}` record is missing required field `{spec.name}`",
                        index,
                    )
                continue
            problem = spec.problem(value, version, record)
            if problem is not None:
                message, parts, about_value = problem
                if about_value:
                    message = f"{message} for `{spec.name}` of a `{kind}` record"
                raise self._error(Code.PROVIDER_MALFORMED_EVENT, message, index, spec.name, *parts)

    # -- rule 6: the meaning of each record type -----------------------------------------

    def _on_start(self, fields: _Fields, index: int) -> None:
        self._response_id = fields["responseId"]
        if len(fields) > 3:  # more than `type`, `responseId` and `role` (version 2)
            self._model = fields.get("model")
            usage = fields.get("usage", _MISSING)
            if usage is not _MISSING:
                self._start_usage = cast(CourseModelUsage, _read_usage(usage, self._version))
        self._enter(ParserState.STREAMING)

    def _leave_block(self, kind: str, index: int) -> None:
        """Before a content record other than a thinking delta or signature, when the
        state is not plain streaming: close an open thinking block, or refuse content
        after an incomplete tool call."""
        if self._state is _THINKING:
            self._thinking = None
            self._enter(ParserState.STREAMING)
        elif self._state is _CUT:
            raise self._after_cut(kind, index)

    def _after_cut(self, kind: str, index: int) -> FixtureProviderError:
        return self._error(
            Code.PROVIDER_OUT_OF_ORDER,
            f"A `{kind}` record cannot come after a `tool_call_incomplete`, the last content "
            "of its response: only `response_end` or `transport_error` may follow it",
            index,
        )

    def _on_text(self, fields: _Fields, index: int) -> CourseTextDeltaChunk:
        if self._state is not _STREAMING:
            self._leave_block("text_delta", index)
        text = fields["text"]
        self._content.append(text)
        return CourseTextDeltaChunk(text, len(self._content) - 1)

    def _duplicate(self, call_id: str, index: int) -> FixtureProviderError:
        return self._error(
            Code.PROVIDER_DUPLICATE_TOOL_CALL,
            f"Tool-call id {shorten(call_id)!r} is already used in this response",
            index,
            "id",
        )

    def _on_tool_call(self, fields: _Fields, index: int) -> CourseToolCallChunk:
        call_id, name, arguments = fields["id"], fields["name"], fields["arguments"]
        if call_id in self._tool_ids:
            raise self._duplicate(call_id, index)
        if self._state is not _STREAMING:
            self._leave_block("tool_call", index)
        self._tool_ids.add(call_id)
        # ``arguments`` is already a read-only deep copy, made once at the boundary.
        chunk, block = tool_call(
            call_id, name, arguments, len(self._content), fields.get("signature")
        )
        self._content.append(block)
        return chunk

    def _on_incomplete_tool_call(
        self, fields: _Fields, index: int
    ) -> CourseIncompleteToolCallChunk:
        call_id, name = fields["id"], fields["name"]
        if self._state is not _STREAMING:
            self._leave_block("tool_call_incomplete", index)
        if call_id in self._tool_ids:
            raise self._duplicate(call_id, index)
        arguments_text = "".join(fields["argumentFragments"])
        content_index = len(self._content)
        self._content.append(CourseIncompleteToolCallBlock(call_id, name, arguments_text))
        self._tool_ids.add(call_id)
        self._enter(ParserState.CUT)
        return CourseIncompleteToolCallChunk(call_id, name, arguments_text, content_index)

    def _on_thinking(self, fields: _Fields, index: int) -> CourseThinkingDeltaChunk:
        text = fields["text"]
        thinking = self._thinking
        if thinking is not None:  # the open block goes on
            thinking.texts.append(text)
            return thinking_delta(text, len(self._content) - 1)
        if self._state is _CUT:
            raise self._after_cut("thinking_delta", index)
        self._thinking = thinking = _OpenThinking(text)
        self._content.append(thinking)
        self._enter(ParserState.THINKING)
        return thinking_delta(text, len(self._content) - 1)

    def _on_signature(self, fields: _Fields, index: int) -> CourseThinkingSignatureChunk:
        thinking = self._thinking
        if thinking is None:
            raise self._error(
                Code.PROVIDER_OUT_OF_ORDER,
                "A `thinking_signature` must come right after a `thinking_delta` of the "
                "thinking block it signs"
                + (
                    ", and no content may follow a `tool_call_incomplete`"
                    if self._state is _CUT
                    else "; here no thinking block is open"
                ),
                index,
            )
        thinking.signature = fields["signature"]
        self._thinking = None
        self._enter(ParserState.STREAMING)
        return CourseThinkingSignatureChunk(thinking.signature, len(self._content) - 1)

    def _on_redacted(self, fields: _Fields, index: int) -> CourseRedactedThinkingChunk:
        if self._state is not _STREAMING:
            self._leave_block("redacted_thinking", index)
        data = fields["data"]
        self._content.append(CourseRedactedThinkingBlock(data))
        return CourseRedactedThinkingChunk(data, len(self._content) - 1)

    def _on_refusal(self, fields: _Fields, index: int) -> CourseRefusalDeltaChunk:
        if self._state is not _STREAMING:
            self._leave_block("refusal_delta", index)
        text = fields["text"]
        self._content.append(CourseRefusalBlock(text))
        self._refused = True
        return CourseRefusalDeltaChunk(text, len(self._content) - 1)

    def _on_end(self, fields: _Fields, index: int) -> None:
        response_id = fields["responseId"]
        wire_stop_reason = fields["stopReason"]
        # The table approved it.
        read = cast(CourseModelUsage, _read_usage(fields["usage"], self._version))
        if response_id != self._response_id:
            raise self._error(
                Code.PROVIDER_RESPONSE_MISMATCH,
                f"Expected `responseId` {shorten(self._response_id)!r} (from response_start), "
                f"got {shorten(response_id)!r}",
                index,
                "responseId",
            )
        stop_reason = STOP_REASONS[wire_stop_reason]
        # Complete calls only: an incomplete one (there is one in state CUT) counts for no end.
        calls = len(self._tool_ids) - (self._state is _CUT)
        if (stop_reason == "toolCall" and not calls) or (stop_reason == "stop" and calls):
            raise self._error(
                Code.PROVIDER_STOP_REASON_MISMATCH,
                f"Stop reason {wire_stop_reason!r} contradicts the response's "
                f"{calls} tool call{'s' if calls != 1 else ''}: `tool_call` needs at "
                "least one, `stop` allows none"
                + (" (an incomplete call counts for no end)" if self._state is _CUT else ""),
                index,
                "stopReason",
            )
        if self._state is _CUT and stop_reason != "length":
            raise self._error(
                Code.PROVIDER_STOP_REASON_MISMATCH,
                f"Stop reason {wire_stop_reason!r} contradicts the response's "
                "`tool_call_incomplete`: a call cut short needs the end `length`",
                index,
                "stopReason",
            )
        if self._refused and stop_reason != "refusal":
            raise self._error(
                Code.PROVIDER_STOP_REASON_MISMATCH,
                f"Stop reason {wire_stop_reason!r} contradicts the response's "
                "`refusal_delta`: a refusal needs the end `refusal`",
                index,
                "stopReason",
            )
        self._enter(ParserState.ENDED)
        content = tuple(
            [
                text_block(block)
                if type(block) is str
                else (block.block() if type(block) is _OpenThinking else block)
                for block in self._content
            ]
        )
        self._response = response(
            self._request_id,
            response_id,
            CourseAssistantMessage("message-" + response_id, content),  # type: ignore[arg-type]
            stop_reason,
            read,
            model=self._model,
            provider_stop_reason=fields.get("providerStopReason"),
        )

    def _on_transport_error(self, fields: _Fields, index: int) -> None:
        message, code = fields["message"], fields.get("code", _MISSING)
        # The provider's words are data: quoted verbatim, never read as a code.
        provider_code = "" if code is _MISSING else f" (provider code {shorten(code)!r})"
        status = fields.get("status")
        retry_after = fields.get("retryAfter")
        http = "" if status is None else f" with HTTP status {status}"
        later = "" if retry_after is None else f", retry after {retry_after} s"
        error = self._error(
            Code.PROVIDER_TRANSPORT_ERROR,
            f"The provider reported a transport error{http}{later}{provider_code}: "
            f'"{shorten(message, 500)}"',
            index,
        )
        error.transport_message = message
        error.transport_code = None if code is _MISSING else code
        error.transport_status = status
        error.transport_retry_after = None if retry_after is None else float(retry_after)
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
        "tool_call_incomplete": ResponseParser._on_incomplete_tool_call,
        "thinking_delta": ResponseParser._on_thinking,
        "thinking_signature": ResponseParser._on_signature,
        "redacted_thinking": ResponseParser._on_redacted,
        "refusal_delta": ResponseParser._on_refusal,
    }
)
"""What each record type means, once its payload was read."""
