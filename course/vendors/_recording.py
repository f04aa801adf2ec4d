"""What every format's importer shares: the error, the result, and the record builder.

A format module (``openai_chat``, ``openai_responses``, ``anthropic``) subclasses
``StreamImporter``: a small state machine fed one parsed event at a time. It judges
each event in the SPEC's five classes, in order (JSON, vocabulary, the event alone,
its place, against earlier events), and refuses with ``Refusal``, which names the
offending value by its JSON pointer inside the event; ``course.vendors._importing``
turns that into a ``RecordingError`` with the line and column in the recording.

The records it builds are the fixture vocabulary of ``SPEC.md``, as plain JSON.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Final, NoReturn, TypeAlias, cast

from .._json import JsonValue, PlainJson, adopt_object, refreeze
from .._json_text import JsonSyntaxError, loads

__all__ = [
    "ARGUMENTS_MAX_DEPTH",
    "MAX_COUNT",
    "Event",
    "Path",
    "PlainObject",
    "Recording",
    "RecordingError",
    "RecordingErrorCode",
    "Refusal",
    "StreamImporter",
    "Usage",
    "quote",
]

PlainObject: TypeAlias = dict[str, PlainJson]
"""A JSON object as ``json.loads`` gives it: an event's data."""
Path: TypeAlias = tuple[str | int, ...]
"""Where a value is inside one event's JSON: its keys and indexes from the root."""
Usage: TypeAlias = tuple[int, int]
"""Input and output token counts."""

MAX_COUNT: Final = 2**53 - 1
"""The largest token count a fixture accepts."""

ARGUMENTS_MAX_DEPTH: Final = 251
"""How deeply tool-call arguments may nest (the object itself counting 1): a tool-call
record sits inside four containers of the fixture and the adapter allows 256 in all."""


class RecordingErrorCode(enum.StrEnum):
    """Why a recording was refused. Each value equals its name."""

    RECORDING_UNREADABLE = "RECORDING_UNREADABLE"
    """Not UTF-8, an unreadable file, no event with data, a cassette with no model call
    or without PyYAML, an unknown ``content-encoding``, too many records."""
    RECORDING_UNKNOWN_FORMAT = "RECORDING_UNKNOWN_FORMAT"
    """Auto-detection failed, or the first event does not fit the given format."""
    RECORDING_INVALID_JSON = "RECORDING_INVALID_JSON"
    """An event's data is not strict JSON, or not an object."""
    RECORDING_UNKNOWN_EVENT = "RECORDING_UNKNOWN_EVENT"
    """An event type outside the format's vocabulary."""
    RECORDING_MALFORMED_EVENT = "RECORDING_MALFORMED_EVENT"
    """A required field missing or mistyped, ids that change, bad arguments, an end
    without what it needs."""
    RECORDING_OUT_OF_ORDER = "RECORDING_OUT_OF_ORDER"
    """An event before the start, after the terminal, for an unknown or finished block
    or item, a second start, content after the finish."""
    RECORDING_STOP_REASON_MISMATCH = "RECORDING_STOP_REASON_MISMATCH"
    """A tool-call stop with no tool call, or a normal stop after one."""
    RECORDING_MISSING_USAGE = "RECORDING_MISSING_USAGE"
    """A successful stream without usage, and no ``usage=`` fallback."""
    RECORDING_UNSUPPORTED = "RECORDING_UNSUPPORTED"
    """More than one choice, legacy function calls, custom tool calls, items that ask the
    client to act, a non-streamed Responses status other than completed, incomplete or
    failed."""


class RecordingError(Exception):
    """A recording that cannot become a fixture response, and where.

    ``source`` is the file (or the ``source=`` given), ``event_index`` counts events
    that carry data from 0, ``line`` and ``column`` are 1-based (columns in code
    points) in the recording text. Faults of the whole input have no event, line or
    column. ``str(error)`` is ``source:line:column: CODE message``.
    """

    code: RecordingErrorCode
    message: str
    source: str | None
    event_index: int | None
    line: int | None
    column: int | None

    def __init__(
        self,
        code: RecordingErrorCode | str,
        message: str,
        *,
        source: str | None = None,
        event_index: int | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(code, message)
        self.code = RecordingErrorCode(code)
        self.message = message
        self.source = source
        self.event_index = event_index
        self.line = line
        self.column = column

    def __str__(self) -> str:
        where = "" if self.source is None else f"{self.source}:"
        if self.line is not None:
            where += f"{self.line}:{self.column}:"
        return f"{where}{' ' if where else ''}{self.code.value} {self.message}"

    def __repr__(self) -> str:
        return (
            f"RecordingError({self.code.value!r}, {self.message!r}, source={self.source!r}, "
            f"event_index={self.event_index!r}, line={self.line!r}, column={self.column!r})"
        )

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only fields need help to survive pickling (e.g. pytest-xdist).
        return (_rebuild, (self.code, self.message), self.__dict__.copy())


def _rebuild(code: RecordingErrorCode, message: str) -> RecordingError:
    return RecordingError(code, message)


@dataclass(frozen=True, slots=True)
class Recording:
    """One imported answer (a stream, or a non-streamed body): a fixture response and
    what was left out on purpose."""

    format: str
    """The format name: ``openai-chat``, ``openai-responses`` or ``anthropic``."""
    response: Mapping[str, JsonValue]
    """One fixture response, ``{"records": [...]}``, read-only (``thaw`` copies it)."""
    ignored: Mapping[str, int]
    """Counts of events skipped because a fixture has no place for them (informational)."""
    truncated: bool
    """True when the input ended before the terminal event (in the middle of its last
    line, maybe) and no provider error came; never for a non-streamed body."""
    schema_version: int = 1
    """The fixture schema version the response's records are written in (1 or 2)."""


class Refusal(Exception):
    """Raised by an importer: the event is refused with ``code``.

    ``path`` is where the offending value lies inside the event's JSON (for a missing
    key, the object that lacks it); ``None`` means the event as a whole. ``offset`` is
    a character offset into the event's data instead (a JSON syntax error).
    """

    def __init__(
        self,
        code: RecordingErrorCode,
        message: str,
        path: Path | None = None,
        *,
        offset: int | None = None,
    ) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.path = path
        self.offset = offset


@dataclass(slots=True)
class Event:
    """One event as an importer sees it (made once per event: not frozen, which would
    cost twice as much to build)."""

    name: str
    """The SSE ``event`` field, ``""`` when there was none."""
    data: PlainObject | None
    """The event's JSON object, or ``None`` for the literal ``[DONE]``."""


_Code = RecordingErrorCode

# -- checking the keys an importer uses --------------------------------------------------
#
# Vendor objects are open: only the keys an importer uses are checked, by exact type.


def _kind(value: object) -> str:
    if value is None:
        return "null"
    kind = type(value)
    if kind is bool:
        return "a boolean"
    if kind is int or kind is float:
        return "a number"
    if kind is str:
        return "a string"
    if kind is list:
        return "an array"
    return "an object"


def _name(path: Path) -> str:
    return "".join(f"[{part}]" if type(part) is int else f".{part}" for part in path).lstrip(".")


def quote(text: str) -> str:
    """A string from the recording, quoted and bounded, for a message."""
    return repr(text) if len(text) <= 60 else repr(text[:57]) + "..."


class StreamImporter:
    """One recording's state machine. Subclasses implement ``feed``.

    Besides ``feed`` a subclass reads and writes only what this base class gives it:
    the record builders, the field checks, ``ignore``, the flags and ``response_id``.
    """

    format: ClassVar[str]
    """The format name this importer reads."""
    schema_version: ClassVar[int] = 1
    """The fixture schema version of the records it writes."""

    def __init__(self, usage: Usage | None) -> None:
        self.records: list[JsonValue] = []
        """The fixture records so far, each already read-only."""
        self.ignored: Counter[str] = Counter()
        self.fallback_usage = usage
        self.started = False
        """A start record was emitted."""
        self.terminal_read = False
        """The stream's terminal event was read: only trailing events may follow."""
        self.provider_error_read = False
        """A provider error event was read: nothing after it is read."""
        self.response_id = ""
        """The started response's id (``""`` before the start)."""
        self.remember = False
        """Set by ``feed`` when the event it read is where ``finish_input`` locates its
        refusals (the driver keeps that event, then clears the flag)."""

    def feed(self, event: Event) -> None:
        """Judge one event and emit its records; raise ``Refusal``."""
        raise NotImplementedError

    def whole(self, body: PlainObject) -> None:
        """Judge the JSON body of a non-streamed answer (or the format's error body) and
        emit the records its stream would give; raise ``Refusal``."""
        raise NotImplementedError

    def finish_input(self) -> None:
        """The input ended, with no provider error event: a format whose end is decided
        there (gemini) emits it now. A ``Refusal`` is located at the last event ``feed``
        asked to remember, else at the last event."""

    # -- records ---------------------------------------------------------------------------

    def start(self, response_id: str) -> None:
        self.started = True
        self.response_id = response_id
        self._emit({"type": "response_start", "responseId": response_id, "role": "assistant"})

    def text(self, text: str) -> None:
        """A text delta; an empty one makes no record."""
        if text:
            self._emit({"type": "text_delta", "text": text})

    def tool_call(
        self, call_id: str, name: str, arguments: str, path: Path | None, index: int | None
    ) -> None:
        """A complete tool call; ``arguments`` is the concatenated JSON text.

        ``path`` locates a refusal of the arguments (``None``: the event as a whole);
        ``index`` is the call's place in the provider's words (a tool-call index, a
        block or output index), which a refusal names with the id and the name.
        """
        where = "" if index is None else f" {index}"
        call = f"tool call{where} (id {quote(call_id)}, name {quote(name)})"
        parsed = refreeze(parse_arguments(arguments, path, call))
        self._emit({"type": "tool_call", "id": call_id, "name": name, "arguments": parsed})

    def end(self, tool_call: bool, usage: Usage | None, path: Path | None) -> None:
        """A successful terminal; ``usage`` as recorded, else the fallback, else refused.

        ``path`` locates the missing usage (``None``: the event as a whole).
        """
        usage = usage if usage is not None else self.fallback_usage
        if usage is None:
            raise Refusal(
                _Code.RECORDING_MISSING_USAGE,
                "The stream succeeded without usage; pass usage=(IN, OUT) "
                "(--usage IN,OUT) to supply it",
                path,
            )
        self.terminal_read = True
        self._emit(
            {
                "type": "response_end",
                "responseId": self.response_id,
                "stopReason": "tool_call" if tool_call else "stop",
                "usage": adopt_object({"inputTokens": usage[0], "outputTokens": usage[1]}),
            }
        )

    def stopped(self, reason: str) -> None:
        """A terminal whose stop reason is neither a normal stop nor a tool call."""
        self.terminal_read = True
        self._transport_error(f"The provider stopped the response: {reason}", reason)

    def refused(self, refusal_text: str) -> None:
        """A terminal after the model refused: the refusal text is the message."""
        self.terminal_read = True
        self._transport_error(refusal_text, "refusal")

    def failed(self, message: str, code: str | None) -> None:
        """A terminal that reports a failure in the provider's own words."""
        self.terminal_read = True
        self._transport_error(message, code)

    def provider_error(self, message: str, code: str | None, status: int | None = None) -> None:
        """A provider error event: the import ends here. ``status`` (version 2) is the
        HTTP status the provider gave with it."""
        self.provider_error_read = True
        self._transport_error(message, code, status)

    def _transport_error(self, message: str, code: str | None, status: int | None = None) -> None:
        record: dict[str, JsonValue] = {"type": "transport_error", "message": message}
        if code is not None:
            record["code"] = code
        if status is not None:
            record["status"] = status
        self._emit(record)

    # -- version-2 records -------------------------------------------------------------------

    def model(self, model: str) -> None:
        """The model that answered (``response_start.model``), known after the start was
        emitted: the start record gains it."""
        start = dict(cast("Mapping[str, JsonValue]", self.records[0]))
        start["model"] = model
        self.records[0] = adopt_object(start)

    def thinking(self, text: str) -> None:
        """A ``thinking_delta``; an empty one too (the caller decides)."""
        self._emit({"type": "thinking_delta", "text": text})

    def thinking_signature(self, signature: str) -> None:
        self._emit({"type": "thinking_signature", "signature": signature})

    def whole_tool_call(
        self, call_id: str, name: str, arguments: PlainObject, signature: str | None
    ) -> None:
        """A tool call whose arguments came whole, as an object (no fragments)."""
        record: dict[str, JsonValue] = {
            "type": "tool_call",
            "id": call_id,
            "name": name,
            "arguments": refreeze(arguments),
        }
        if signature is not None:
            record["signature"] = signature
        self._emit(record)

    def finish(
        self,
        stop_reason: str,
        usage: Mapping[str, int] | None,
        provider_stop_reason: str | None,
        path: Path | None,
    ) -> None:
        """A version-2 ``response_end``: ``stop_reason`` a wire stop reason, ``usage`` the
        recorded counts in the fixture's keys, else the fallback, else refused."""
        if usage is None and self.fallback_usage is not None:
            usage = {"inputTokens": self.fallback_usage[0], "outputTokens": self.fallback_usage[1]}
        if usage is None:
            raise Refusal(
                _Code.RECORDING_MISSING_USAGE,
                "The stream ended without usage; pass usage=(IN, OUT) "
                "(--usage IN,OUT) to supply it",
                path,
            )
        self.terminal_read = True
        record: dict[str, JsonValue] = {
            "type": "response_end",
            "responseId": self.response_id,
            "stopReason": stop_reason,
            "usage": adopt_object(dict(usage)),
        }
        if provider_stop_reason is not None:
            record["providerStopReason"] = provider_stop_reason
        self._emit(record)

    def _emit(self, record: dict[str, JsonValue]) -> None:
        # Records are built read-only as they come (this module made every part of
        # them), so the finished response needs no copy-and-freeze walk at the end.
        self.records.append(adopt_object(record))

    def ignore(self, key: str) -> None:
        """Count an event skipped on purpose, under ``key`` (``type`` or ``type:kind``)."""
        self.ignored[key] += 1

    # -- checks ----------------------------------------------------------------------------

    @staticmethod
    def malformed(message: str, path: Path | None) -> Refusal:
        return Refusal(_Code.RECORDING_MALFORMED_EVENT, message, path)

    @staticmethod
    def out_of_order(message: str) -> Refusal:
        return Refusal(_Code.RECORDING_OUT_OF_ORDER, message)

    @classmethod
    def misnamed(cls, name: str, kind: PlainJson) -> Refusal:
        """Class 3: the SSE ``event`` name ``name`` differs from the data's ``type``."""
        shown = quote(kind) if type(kind) is str else _kind(kind)
        return cls.malformed(
            f"The event is named {quote(name)} but its `type` is {shown}", ("type",)
        )

    @staticmethod
    def done_not_json(message: str) -> Refusal:
        """A literal ``[DONE]`` where the format takes a JSON object, located at its ``D``,
        where a JSON reader stops."""
        return Refusal(_Code.RECORDING_INVALID_JSON, message, offset=1)

    @classmethod
    def mistyped(cls, value: PlainJson, kind: type, path: Path) -> Refusal:
        """``value``, at ``path``, is not of ``kind`` (``str``, ``int``, ``dict``, ``list``)."""
        return cls.malformed(
            f"Expected `{_name(path)}` to be {_KINDS[kind]}, got {_kind(value)}", path
        )

    @classmethod
    def field(
        cls, owner: PlainObject, key: str, kind: type, path: Path, *, optional: bool = False
    ) -> PlainJson:
        """``owner[key]`` checked to be of exactly ``kind`` (``str``, ``int``, ``dict``,
        ``list``); ``path`` is ``owner``'s. An optional key that is absent or null is
        ``None``; a required one that is missing points at ``owner``."""
        value = owner.get(key)
        if value is None:
            if optional:
                return None
            if key not in owner:
                raise cls.malformed(f"Missing required key `{_name((*path, key))}`", path)
        if type(value) is not kind:
            raise cls.mistyped(value, kind, (*path, key))
        return value

    @classmethod
    def refuse(cls, owner: PlainObject, key: str, kind: type, path: Path) -> NoReturn:
        """Raise the refusal of ``owner[key]``, which an inline check (the hot path's) found
        wrong; the field checks word it. For ``str`` the id check runs: a string that an
        inline check refused is an empty id."""
        if kind is str:
            cls.identifier(owner, key, path)
        else:
            cls.field(owner, key, kind, path)
        # Only if the two checks ever drifted apart: still a coded refusal, never a crash.
        raise cls.mistyped(owner.get(key), kind, (*path, key))

    @classmethod
    def string(cls, owner: PlainObject, key: str, path: Path, *, optional: bool = False) -> str:
        return cls.field(owner, key, str, path, optional=optional)  # type: ignore[return-value]

    @classmethod
    def identifier(cls, owner: PlainObject, key: str, path: Path) -> str:
        """A required id or name: a non-empty string."""
        value = cls.string(owner, key, path)
        if not value:
            raise cls.malformed(
                f"Expected `{_name((*path, key))}` to be a non-empty string", (*path, key)
            )
        return value

    @classmethod
    def obj(
        cls, owner: PlainObject, key: str, path: Path, *, optional: bool = False
    ) -> PlainObject:
        return cls.field(owner, key, dict, path, optional=optional)  # type: ignore[return-value]

    @classmethod
    def array(
        cls, owner: PlainObject, key: str, path: Path, *, optional: bool = False
    ) -> list[PlainJson]:
        return cls.field(owner, key, list, path, optional=optional)  # type: ignore[return-value]

    @classmethod
    def count(
        cls, owner: PlainObject, key: str, path: Path, *, optional: bool = False
    ) -> int | None:
        """A token count: an ``int`` (not ``bool``) from 0 to 2**53 - 1."""
        value = cls.field(owner, key, int, path, optional=optional)
        if value is not None and not 0 <= value <= MAX_COUNT:  # type: ignore[operator]
            raise cls.malformed(
                f"Expected `{_name((*path, key))}` to be a token count from 0 to 2**53 - 1, "
                f"got {value}",
                (*path, key),
            )
        return value  # type: ignore[return-value]


_KINDS: Final[Mapping[type, str]] = {
    str: "a string",
    int: "an integer",
    dict: "an object",
    list: "an array",
}


def parse_arguments(text: str, path: Path | None, call: str = "the tool call") -> PlainObject:
    """Tool-call arguments as a JSON object; ``""`` is ``{}``. Raises ``Refusal``, whose
    message names ``call``."""
    if text == "":
        return {}
    try:
        value = loads(text, max_depth=ARGUMENTS_MAX_DEPTH)
    except JsonSyntaxError as error:
        raise Refusal(
            _Code.RECORDING_MALFORMED_EVENT,
            f"The arguments of {call} are not strict JSON: {error.message} "
            f"(at character {error.offset} of the arguments)",
            path,
        ) from None
    if type(value) is not dict:
        raise Refusal(
            _Code.RECORDING_MALFORMED_EVENT,
            f"Expected the arguments of {call} to be a JSON object, got {_kind(value)}",
            path,
        )
    return value
