"""From recording text to fixture responses: ``import_recording`` and ``load_recordings``.

The steps, in the SPEC's order: decode (UTF-8, exactly one leading BOM skipped); a text
whose first non-whitespace character is ``{`` or ``[`` is the JSON body of a
non-streamed answer, any other text an event stream. For a stream: read the SSE events
that carry data, settle the format from the first events, then feed each event, parsed
as strict JSON, to the format's importer until the input ends (in the middle of its
last line, maybe: a cut stream) or a provider error event stops the reading. For a
body: parse it, settle the format from its keys, and let the importer read it whole. A
``Refusal`` from the importer is located here: its JSON pointer is looked up in the
event's text, and the event knows where its text lies in the recording.

A cassette is a file of answers (``._cassette``): each model call among them is imported
as above, its errors moved to the cassette's own lines and columns.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Final, cast

from .._errors import pointer
from .._json import JsonValue, PlainJson, adopt_array, adopt_object, thaw
from .._json_text import JsonSyntaxError, line_and_column, loads, parse_positioned
from .._parser import MAX_RETRY_AFTER
from .._text import shorten
from . import _anthropic, _gemini, _openai_chat, _openai_responses
from ._cassette import Answer, is_cassette, read_cassette
from ._cut import is_cut
from ._recording import (
    MAX_COUNT,
    Event,
    PlainObject,
    Recording,
    RecordingError,
    RecordingErrorCode,
    Refusal,
    StreamImporter,
    Usage,
)
from ._sse import SseEvent, read_events

__all__ = [
    "FORMATS",
    "MAX_CASSETTE_RECORDS",
    "FileImport",
    "check_format",
    "check_path",
    "check_schema_version",
    "check_usage",
    "decode",
    "import_recording",
    "import_text",
    "load_recordings",
    "read_file",
    "thaw_response",
]

_FORMAT_MODULES: Final[tuple[ModuleType, ...]] = (
    _openai_chat,
    _openai_responses,
    _anthropic,
    _gemini,
)
FORMATS: Final[dict[str, ModuleType]] = {module.FORMAT: module for module in _FORMAT_MODULES}
"""Each format's module by name: its ``Importer``, ``Renderer``, and the tests of a first
event (``detects``, ``fits``, ``precedes``) and of a whole body (``detects_whole``,
``fits_whole``)."""

MAX_CASSETTE_RECORDS: Final = 1_000_000
"""The most records the fixture of one cassette may hold, each repetition counted."""
ERROR_MESSAGE_CHARS: Final = 500
"""An HTTP error answer whose body is no provider error: its text, this long at most, is
the message."""

_Code = RecordingErrorCode
_DONE: Final = "[DONE]"
_BOM: Final = "\ufeff"
_LEADING_SPACE: Final = re.compile(r"[ \t\r\n]*")
"""JSON's whitespace, before a body's first character."""
_LINE_BREAK: Final = re.compile(r"\r\n|\r")
_RETRY_HEADERS: Final = ("retry-after-ms", "retry-after")
"""The response headers a retry delay is read from, the first one found first."""
_SECONDS: Final = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,30})?")
"""A number of seconds (or milliseconds) in a retry header, bounded so it parses at once."""
_MAX_STATUS: Final = 599
"""The highest HTTP status a fixture's ``transport_error`` may give."""


class _NoFormat(RecordingError):
    """The input tells no format (no event, no known first event or body): for a
    cassette's interaction that went to no model route, it is no model call."""


def import_recording(
    data: str | bytes,
    *,
    format: str = "auto",
    usage: tuple[int, int] | None = None,
    source: str | None = None,
    schema_version: int = 2,
) -> Recording:
    """Import one recorded answer (a stream's SSE text or bytes, or the JSON body of a
    non-streamed answer) as one fixture response.

    ``format`` is ``"auto"`` or a format name; ``usage`` supplies ``(input, output)``
    token counts for a successful answer that recorded none; ``schema_version`` (1 or 2)
    is the fixture version the records are written in. Raises ``RecordingError``; a
    wrong argument is a ``TypeError`` or ``ValueError``.
    """
    if not isinstance(data, (str, bytes)):
        raise TypeError(f"import_recording() needs str or bytes, got {type(data).__qualname__}")
    if source is not None and not isinstance(source, str):
        raise TypeError(f"source must be a str or None, got {type(source).__qualname__}")
    check_format(format)
    check_usage(usage)
    check_schema_version(schema_version)
    return import_text(decode(data, source), format, usage, source, schema_version)


def load_recordings(
    *paths: str | os.PathLike[str],
    format: str = "auto",
    usage: tuple[int, int] | None = None,
    schema_version: int = 2,
) -> dict[str, object]:
    """Read recording files (SSE text, JSON bodies of non-streamed answers, or VCR
    cassettes ending ``.yaml``/``.yml``) and return one fixture: ``{"schemaVersion": N,
    "responses": [...]}`` (``N`` the ``schema_version``, 1 or 2), a response per answer
    in order. Raises ``RecordingError``; a path that is not a ``str`` or
    ``os.PathLike[str]`` (bytes included) is a ``TypeError``."""
    names = [check_path(path) for path in paths]
    if not names:
        raise ValueError("load_recordings() needs at least one path")
    check_format(format)
    check_usage(usage)
    check_schema_version(schema_version)
    responses: list[PlainJson] = []
    for name in names:
        # A body a cassette repeats is one response, repeated: shared, not copied.
        thawed: dict[int, PlainJson] = {}
        for _, recording in read_file(name, format, usage, schema_version).recordings:
            response = thawed.get(id(recording))
            if response is None:
                response = thawed[id(recording)] = thaw_response(recording)
            responses.append(response)
    return {"schemaVersion": schema_version, "responses": responses}


@dataclass(frozen=True, slots=True)
class FileImport:
    """What one recording file gave."""

    recordings: tuple[tuple[str, Recording], ...]
    """Each answer, with where it came from: ``""`` for a file of one answer,
    ``"interaction N"`` for a cassette's. A body a cassette repeats is one
    ``Recording``, repeated."""
    skipped: int = 0
    """A cassette's interactions that are not model calls."""


def read_file(name: str, format: str, usage: Usage | None, schema_version: int) -> FileImport:
    """Every answer of one file, imported in order (the arguments are already checked)."""
    try:
        with open(name, "rb") as file:
            data = file.read()
    except (OSError, ValueError) as exc:  # ValueError: a path with a NUL byte
        reason = getattr(exc, "strerror", None) or str(exc)
        raise RecordingError(
            _Code.RECORDING_UNREADABLE, f"Cannot read the file: {reason}", source=name
        ) from exc
    text = decode(data, name)
    if not is_cassette(name):
        return FileImport((("", import_text(text, format, usage, name, schema_version)),))
    return _import_cassette(text, name, format, usage, schema_version)


def thaw_response(recording: Recording) -> PlainJson:
    """The recording's fixture response as plain, mutable JSON."""
    return thaw(recording.response)


def import_text(
    text: str,
    format: str,
    usage: Usage | None,
    source: str | None,
    schema_version: int,
    *,
    label: str = "",
) -> Recording:
    """One answer's text (decoded, its BOM gone): a JSON body or an event stream.
    ``label`` starts every message (a cassette's ``interaction N: ``)."""
    try:
        return _import_answer_text(text, format, usage, source, version=schema_version, label=label)
    except _NoFormat as error:
        raise _plain(error) from None


def _import_answer_text(
    text: str, format: str, usage: Usage | None, source: str | None, *, version: int, label: str
) -> Recording:
    """``import_text``, whose refusals before a format is told are ``_NoFormat``."""
    first = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
    if text[first : first + 1] in ("{", "["):
        return _import_body(text, format, usage, source, version=version, label=label)
    return _import_stream(text, format, usage, source, version=version, label=label)


def _plain(error: RecordingError) -> RecordingError:
    """The same refusal as a plain ``RecordingError``."""
    return RecordingError(
        error.code,
        error.message,
        source=error.source,
        event_index=error.event_index,
        line=error.line,
        column=error.column,
    )


# -- one stream ---------------------------------------------------------------------------


def _import_stream(
    text: str, format: str, usage: Usage | None, source: str | None, *, version: int, label: str
) -> Recording:
    events = read_events(text)
    module, read = _settle_format(events, format, source, label)
    importer = _importer(module, usage, version, source, label)
    # Where a refusal decided at the end is located: the event the importer asked to
    # remember (gemini: the last finish reason), else the last event read.
    anchor: SseEvent | None = None
    last = read[0][0]
    for event, data in read:  # the events the format was told from, parsed already
        try:
            importer.feed(Event(event.name, data))
        except Refusal as refusal:
            raise _locate(refusal, event, source, label) from None
        if importer.remember:
            anchor, importer.remember = event, False
        if importer.provider_error_read:
            return _recording(module, importer)
        last = event
    for event in events:
        try:
            importer.feed(Event(event.name, _parse(event)))
        except Refusal as refusal:
            if event.cut and refusal.offset is not None and is_cut(event.data):
                return _recording(module, importer)  # the input ends inside this event: cut
            raise _locate(refusal, event, source, label) from None
        if importer.remember:
            anchor, importer.remember = event, False
        if importer.provider_error_read:
            return _recording(module, importer)  # nothing after a provider error is read
        last = event
    try:
        importer.finish_input()
    except Refusal as refusal:
        raise _locate(refusal, anchor or last, source, label) from None
    return _recording(module, importer)


def _importer(
    module: ModuleType, usage: Usage | None, version: int, source: str | None, label: str
) -> StreamImporter:
    if module is _gemini and version < 2:
        raise RecordingError(
            _Code.RECORDING_UNSUPPORTED,
            f"{label}A gemini recording imports as fixture schema version 2 only "
            "(SPEC-GEMINI); pass schema_version=2 (--schema-version 2)",
            source=source,
        )
    importer: StreamImporter = module.Importer(usage)
    # Set here rather than passed, so that a format's ``__init__`` keeps the one
    # argument it has always taken (and may forward ``schema_version`` or not).
    importer.schema_version = version
    return importer


def _recording(module: ModuleType, importer: StreamImporter) -> Recording:
    ignored: dict[str, JsonValue] = dict(importer.ignored)
    return Recording(
        format=module.FORMAT,
        response=adopt_object({"records": adopt_array(importer.records)}),
        ignored=cast("Mapping[str, int]", adopt_object(ignored)),
        truncated=not (importer.terminal_read or importer.provider_error_read),
        schema_version=importer.schema_version,
    )


def _parse(event: SseEvent) -> PlainObject | None:
    """Class 1: the event's data as a JSON object, or ``None`` for ``[DONE]``."""
    if event.data == _DONE:
        return None
    try:
        value = loads(event.data)
    except JsonSyntaxError:
        raise _not_json(event.data) from None
    if type(value) is not dict:
        raise Refusal(
            _Code.RECORDING_INVALID_JSON, "Expected the event's data to be a JSON object", ()
        )
    return value


def _not_json(text: str, what: str = "The event's data") -> Refusal:
    """The refusal of data that is not strict JSON, located where the reader stops."""
    try:
        loads(text)
    except JsonSyntaxError as error:
        return Refusal(
            _Code.RECORDING_INVALID_JSON,
            f"{what} is not strict JSON: {error.message}",
            offset=error.offset,
        )
    raise AssertionError(f"{text!r} is JSON")  # pragma: no cover


def _settle_format(
    events: Iterator[SseEvent], format: str, source: str | None, label: str
) -> tuple[ModuleType, list[tuple[SseEvent, PlainObject | None]]]:
    """The format's module, told from the first events, and those events parsed.

    With a name, the first event must fit it. With ``auto``, events a format allows
    before its start (pings, Azure's prompt filter) are read on until one tells the
    format, and it must allow every event before it.
    """

    def unknown(event: SseEvent, message: str) -> RecordingError:
        return _NoFormat(
            _Code.RECORDING_UNKNOWN_FORMAT,
            label + message,
            source=source,
            event_index=event.index,
            line=event.line,
            column=1,
        )

    read: list[tuple[SseEvent, PlainObject | None]] = []
    cut = False
    for event in events:
        try:
            data = _parse(event)
        except Refusal as refusal:
            if event.cut and refusal.offset is not None and is_cut(event.data):
                cut = True
                break  # the recording ends inside this event
            if format != "auto" or refusal.offset is None:
                # A named format's first event that is not JSON does not fit it; JSON of
                # any other kind than an object tells no format.
                raise unknown(event, _no_format_message(format)) from None
            raise _locate(refusal, event, source, label, _NoFormat) from None
        if format != "auto":
            module = FORMATS[format]
            if data is None or not module.fits(data):
                raise unknown(event, _no_format_message(format))
            return module, [(event, data)]
        if data is None:
            raise _locate(_not_json(_DONE), event, source, label, _NoFormat)
        before = [previous for _, previous in read]
        for module in _FORMAT_MODULES:
            if module.detects(data) and all(map(module.precedes, before)):
                return module, [*read, (event, data)]
        if not any(module.precedes(data) for module in _FORMAT_MODULES):
            raise unknown(event, _no_format_message(format))
        read.append((event, data))
    if read:
        raise unknown(read[0][0], _no_format_message(format))
    message = "was cut inside its first event" if cut else "holds no event with data"
    raise _NoFormat(_Code.RECORDING_UNREADABLE, f"{label}The recording {message}", source=source)


def _no_format_message(format: str) -> str:
    if format != "auto":
        return f"The first event does not fit the {format} format"
    names = ", ".join(FORMATS)
    return f"Cannot tell the format from the first event; name it with format= (one of {names})"


def _locate(
    refusal: Refusal,
    event: SseEvent,
    source: str | None,
    label: str,
    kind: type[RecordingError] = RecordingError,
) -> RecordingError:
    """The refusal as a ``RecordingError`` (or ``kind``) pointing into the recording."""
    line, column = event.line, 1
    offset = refusal.offset
    if offset is not None:
        line, column = event.position(offset)
    elif refusal.path is not None:
        offsets: dict[str, int] = {}
        parse_positioned(event.data, offsets)  # the text was parsed once already
        offset = offsets.get(pointer(*refusal.path))
        if offset is not None:
            line, column = event.position(offset)
    return kind(
        refusal.code,
        label + refusal.message,
        source=source,
        event_index=event.index,
        line=line,
        column=column,
    )


# -- one non-streamed body ------------------------------------------------------------------


def _import_body(
    text: str, format: str, usage: Usage | None, source: str | None, *, version: int, label: str
) -> Recording:
    if "\r" in text:
        text = _LINE_BREAK.sub("\n", text)  # one "\n" per line break keeps every place
    try:
        data = loads(text)
    except JsonSyntaxError:
        refusal = _not_json(text, "The JSON body")
        raise _locate(refusal, _body_event(text), source, label, _NoFormat) from None
    module = None
    if type(data) is dict:
        if format == "auto":
            module = next((m for m in _FORMAT_MODULES if m.detects_whole(data)), None)
        elif FORMATS[format].fits_whole(data):
            module = FORMATS[format]
    elif type(data) is list and format in ("auto", _gemini.FORMAT):
        # streamGenerateContent without alt=sse: one JSON array of the stream's chunks
        fits = _gemini.detects_whole if format == "auto" else _gemini.fits_whole
        module = _gemini if fits(data) else None
    if module is None:
        start = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
        line, column = line_and_column(text, start)
        if type(data) is dict and "schemaVersion" in data and "responses" in data:
            message = "The JSON body is a fixture, not a recorded answer: replay it as it is"
        elif format == "auto":
            message = (
                "Cannot tell the format of the JSON body: expected a chat.completion, a "
                "Responses `response` object, an Anthropic `message` or a Gemini response; "
                "name it with format="
            )
        else:
            message = f"The JSON body is not a {format} answer or error body"
        raise _NoFormat(
            _Code.RECORDING_UNKNOWN_FORMAT,
            label + message,
            source=source,
            event_index=0,
            line=line,
            column=column,
        )
    if data == []:
        raise RecordingError(
            _Code.RECORDING_UNREADABLE, f"{label}The JSON array holds no chunk", source=source
        )
    importer = _importer(module, usage, version, source, label)
    try:
        if type(data) is list:
            importer.stream_array(data)  # type: ignore[attr-defined]
        else:
            importer.whole(cast(PlainObject, data))
    except Refusal as refusal:
        raise _locate(refusal, _body_event(text), source, label) from None
    return _recording(module, importer)


def _body_event(text: str) -> SseEvent:
    """A JSON body as one event whose data is all of it, so that refusals are located as
    an event's are."""
    lines = text.count("\n") + 1
    return SseEvent(0, "", text, tuple((number, 1) for number in range(1, lines + 1)))


# -- a cassette ---------------------------------------------------------------------------


def _import_cassette(
    text: str, source: str, format: str, usage: Usage | None, version: int
) -> FileImport:
    """One response per model call, in file order; the rest counted as skipped."""
    recordings: list[tuple[str, Recording]] = []
    imported: dict[tuple[object, ...], Recording | None] = {}
    records = skipped = 0
    for answer in read_cassette(text, source):
        # What the import of a body depends on: YAML aliases repeat the rest too.
        status = answer.status or 200
        encoding = answer.headers.get("content-encoding")
        key = (*answer.key, status >= 400, 200 <= status < 300, answer.method, answer.route)
        key += (encoding,)
        if status >= 400:  # version 2 keeps an error's status and retry delay
            key += (status, *map(answer.headers.get, _RETRY_HEADERS))
        if key in imported:  # one body YAML aliases repeat: imported once
            recording = imported[key]
        else:
            recording = imported[key] = _import_answer(answer, format, usage, source, version)
        if recording is None:
            skipped += 1
            continue
        records += len(cast("tuple[object, ...]", recording.response["records"]))
        if records > MAX_CASSETTE_RECORDS:
            line, column = answer.start
            raise RecordingError(
                _Code.RECORDING_UNREADABLE,
                f"interaction {answer.index}: The cassette's fixture would hold more than "
                f"{MAX_CASSETTE_RECORDS:,} records (YAML aliases repeating a body count "
                "each time)",
                source=source,
                line=line,
                column=column,
            )
        recordings.append((f"interaction {answer.index}", recording))
    if not recordings:
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            "The cassette holds no model call: no interaction posted to a model route or "
            "answered with a model's stream or body",
            source=source,
        )
    return FileImport(tuple(recordings), skipped)


def _import_answer(
    answer: Answer, format: str, usage: Usage | None, source: str, version: int
) -> Recording | None:
    """One interaction's response, or ``None`` when it is no model call: a model call is
    a POST to a model route, or a POST answered as a model answers."""
    label = f"interaction {answer.index}: "
    route = answer.route
    if answer.method not in (None, "POST"):
        return None
    status = answer.status or 200
    if status >= 400:
        return _error_answer(answer, format, route, source, version=version, label=label)
    if status >= 300 or (status < 200 and answer.status is not None):
        return None  # a redirect or an interim answer: the answer comes in another one
    text: str | None = None
    try:
        text = answer.text(source, label)
        return _import_answer_text(text, format, usage, source, version=version, label=label)
    except RecordingError as error:
        if route is None and (text is None or isinstance(error, _NoFormat)):
            return None  # sent to no model route, and no model's answer (nor readable)
        raise _in_cassette(error, answer, source, text) from None


def _in_cassette(
    error: RecordingError, answer: Answer, source: str, body: str | None
) -> RecordingError:
    """``error``, located in a body's text, located in the cassette instead."""
    message = error.message
    line, column = error.line, error.column
    if line is not None and column is not None and body is not None:
        place = answer.place(body, line, column)
        if place is None:
            message += f" (at line {line}, column {column} of the decoded response body)"
            place = answer.start
        line, column = place
    elif line is None:
        line, column = answer.start
    return RecordingError(
        error.code,
        message,
        source=source,
        event_index=error.event_index,
        line=line,
        column=column,
    )


def _error_answer(
    answer: Answer, format: str, route: str | None, source: str, *, version: int, label: str
) -> Recording | None:
    """An HTTP error answer: one ``transport_error`` with the provider's words; ``None``
    for an error of another service (a request to no model route; with no recorded
    URI, a body in no provider's shape)."""
    if route is None and answer.path is not None:
        return None
    text = answer.text(source, label)
    words = _error_words(text, format)
    if route is None and words is None:
        return None
    if words is None:
        message, code, kind = shorten(text, ERROR_MESSAGE_CHARS), None, None
    else:
        message, code, kind = words
    name = format if format != "auto" else route or kind or _openai_chat.FORMAT
    record: dict[str, JsonValue] = {"type": "transport_error", "message": message}
    if code is not None:
        record["code"] = code
    if version >= 2:
        status = answer.status
        if status is not None and status <= _MAX_STATUS:
            record["status"] = status
        retry_after = _retry_after(answer.headers)
        if retry_after is not None:
            record["retryAfter"] = retry_after
    return Recording(
        format=name,
        response=adopt_object({"records": adopt_array([adopt_object(record)])}),
        ignored=cast("Mapping[str, int]", adopt_object({})),
        truncated=False,
        schema_version=version,
    )


def _retry_after(headers: Mapping[str, str]) -> int | float | None:
    """The provider's retry delay in seconds: ``retry-after-ms`` / 1000, else
    ``retry-after``, when it is a number of seconds from 0 to ``MAX_RETRY_AFTER`` (an
    HTTP date, or anything else, gives none)."""
    for name, scale in zip(_RETRY_HEADERS, (1000, 1), strict=True):
        text = headers.get(name, "").strip()
        if _SECONDS.fullmatch(text):
            value = int(text) if text.isdigit() else float(text)
            value = int(value) // scale if value % scale == 0 else value / scale
            if value <= MAX_RETRY_AFTER:
                return value
    return None


def _error_words(text: str, format: str) -> tuple[str, str | None, str | None] | None:
    """The message and code of a provider's error body (and the format whose shape it
    has), in the named format's shape, or, with ``auto``, the shape the body has."""
    try:
        body = loads(text)
    except JsonSyntaxError:
        return None
    if type(body) is not dict:
        return None
    if format != "auto":
        words = FORMATS[format].read_error_body(body)
        return None if words is None else (*words, format)
    # The most particular shape first: Anthropic's says `"type": "error"`; Google's has a
    # `status` word beside its numeric `code`; OpenAI's is any other
    # `{"error": {"message": ...}}`.
    for module in (_anthropic, _gemini):
        words = module.read_error_body(body)
        if words is not None:
            return (*words, module.FORMAT)
    words = _openai_chat.read_error_body(body)
    return None if words is None else (*words, _openai_chat.FORMAT)


# -- arguments ----------------------------------------------------------------------------


def decode(data: str | bytes, source: str | None) -> str:
    """The recording as text: bytes read as UTF-8; exactly one leading BOM skipped."""
    # Exact types first: no method a subclass overrides is ever called.
    if isinstance(data, str):
        text = str.__str__(data)
        return text[1:] if text.startswith(_BOM) else text
    data = bytes.__getitem__(data, slice(None))
    skipped = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        return bytes.decode(data[skipped:], "utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start + skipped
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            f"The recording is not UTF-8 text (invalid byte 0x{data[at]:02x} at byte {at})",
            source=source,
        ) from None


def check_path(path: object) -> str:
    """The file name of a path argument; ``TypeError`` unless it is a ``str`` or an
    ``os.PathLike`` giving one (bytes are refused: decode them with ``os.fsdecode``)."""
    name = os.fspath(path) if isinstance(path, os.PathLike) else path
    if isinstance(name, bytes):
        raise TypeError(
            f"load_recordings() needs str paths, got {type(name).__qualname__} "
            "(decode a bytes path with os.fsdecode)"
        )
    if not isinstance(name, str):
        raise TypeError(f"load_recordings() needs paths, got {type(path).__qualname__}")
    return name


def check_format(format: object) -> None:
    """``TypeError`` or ``ValueError`` unless ``format`` is ``"auto"`` or a format name."""
    if not isinstance(format, str):
        raise TypeError(f"format must be a str, got {type(format).__qualname__}")
    if format != "auto" and format not in FORMATS:
        names = ", ".join(("auto", *FORMATS))
        raise ValueError(f"format must be one of {names}; got {format!r}")


def check_schema_version(schema_version: object) -> None:
    """``TypeError`` unless ``schema_version`` is an ``int`` (``bool`` is not), ``ValueError``
    unless it is 1 or 2."""
    if type(schema_version) is not int:
        raise TypeError(f"schema_version must be an int, got {type(schema_version).__qualname__}")
    if schema_version not in (1, 2):
        raise ValueError(f"schema_version must be 1 or 2; got {schema_version}")


def check_usage(usage: object) -> None:
    """``ValueError`` unless ``usage`` is ``None`` or two token counts."""
    if usage is None:
        return
    if (
        type(usage) is not tuple
        or len(usage) != 2
        or not all(type(count) is int and 0 <= count <= MAX_COUNT for count in usage)
    ):
        raise ValueError(
            "usage must be a tuple of two ints (input, output) from 0 to 2**53 - 1; "
            f"got {type(usage).__qualname__} {_short(usage)}"
        )


def _short(value: object) -> str:
    """A bounded rendering of a caller's value (tuples of ints, typically)."""
    text = repr(value) if type(value) is tuple else ""
    return text if len(text) <= 60 else text[:57] + "..."
