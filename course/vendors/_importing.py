"""From recording text to fixture responses: ``import_recording`` and ``load_recordings``.

The steps, in the SPEC's order: decode (UTF-8, a leading BOM skipped), read the SSE
events that carry data, settle the format from the first event, then feed each event,
parsed as strict JSON, to the format's importer until the input ends or a provider
error event stops the reading. A ``Refusal`` from the importer is located here: its
JSON pointer is looked up in the event's text, and the event knows where its text
lies in the recording.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Final, cast

from .._errors import pointer
from .._json import JsonValue, PlainJson, adopt_array, adopt_object, thaw
from .._json_text import JsonSyntaxError, line_and_column, loads, parse_positioned
from . import _anthropic, _gemini, _openai_chat, _openai_responses
from ._cassette import is_cassette, read_cassette
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
    "check_format",
    "check_usage",
    "import_recording",
    "load_recordings",
    "read_recordings",
    "thaw_response",
]

_FORMAT_MODULES: Final[tuple[ModuleType, ...]] = (
    _openai_chat,
    _openai_responses,
    _anthropic,
    _gemini,
)
FORMATS: Final[dict[str, ModuleType]] = {module.FORMAT: module for module in _FORMAT_MODULES}
"""Each format's module by name: its ``Importer``, ``Renderer``, ``detects`` and ``fits``."""

_BODY_MODULES: Final[tuple[ModuleType, ...]] = (_gemini,)
"""The formats whose importers read a whole JSON body (``whole``; gemini's also the
JSON array of a stream's chunks, ``stream_array``)."""

_Code = RecordingErrorCode
_DONE: Final = "[DONE]"
_JSON_SPACE: Final = " \t\r\n"
_LINE_BREAK: Final = re.compile(r"\r\n|\r")


def import_recording(
    data: str | bytes,
    *,
    format: str = "auto",
    usage: tuple[int, int] | None = None,
    source: str | None = None,
) -> Recording:
    """Import one recorded stream (its SSE text or bytes) as one fixture response.

    ``format`` is ``"auto"`` or a format name; ``usage`` supplies ``(input, output)``
    token counts for a successful stream that recorded none. Raises
    ``RecordingError``; a wrong argument is a ``TypeError`` or ``ValueError``.
    """
    if not isinstance(data, (str, bytes)):
        raise TypeError(f"import_recording() needs str or bytes, got {type(data).__qualname__}")
    if source is not None and not isinstance(source, str):
        raise TypeError(f"source must be a str or None, got {type(source).__qualname__}")
    check_format(format)
    check_usage(usage)
    text = _decode(data, source)
    return _import_text(text, format, usage, source, "")


def load_recordings(
    *paths: str | os.PathLike[str],
    format: str = "auto",
    usage: tuple[int, int] | None = None,
) -> dict[str, object]:
    """Read recording files (SSE text, or VCR cassettes ending ``.yaml``/``.yml``) and
    return one fixture: ``{"schemaVersion": 1, "responses": [...]}``, a response per
    stream in order. Raises ``RecordingError``."""
    for path in paths:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"load_recordings() needs paths, got {type(path).__qualname__}")
    if not paths:
        raise ValueError("load_recordings() needs at least one path")
    check_format(format)
    check_usage(usage)
    responses: list[PlainJson] = []
    version = 1
    for path in paths:
        for _, recording in read_recordings(path, format, usage):
            responses.append(thaw_response(recording))
            # A version-1 response is a valid version-2 one: the fixture takes the highest.
            version = max(version, recording.schema_version)
    return {"schemaVersion": version, "responses": responses}


def read_recordings(
    path: str | os.PathLike[str], format: str, usage: Usage | None
) -> Iterator[tuple[str, Recording]]:
    """Every stream of one file, imported in order, each with where it came from:
    ``""`` for an SSE file, ``"interaction N"`` for a cassette's (the arguments are
    already checked)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as file:
            data = file.read()
    except (OSError, ValueError) as exc:  # ValueError: a path with a NUL byte
        reason = getattr(exc, "strerror", None) or str(exc)
        raise RecordingError(
            _Code.RECORDING_UNREADABLE, f"Cannot read the file: {reason}", source=name
        ) from exc
    text = _decode(data, name)
    if not is_cassette(name):
        yield "", _import_text(text, format, usage, name, "")
        return
    found = False
    for interaction, body in read_cassette(text, name):
        if next(read_events(body), None) is None:
            continue  # no stream in this interaction (a plain JSON answer, say)
        found = True
        where = f"interaction {interaction}"
        yield where, _import_text(body, format, usage, name, f"{where}: ")
    if not found:
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            "The cassette holds no interaction whose response body is an event stream",
            source=name,
        )


def thaw_response(recording: Recording) -> PlainJson:
    """The recording's fixture response as plain, mutable JSON."""
    return thaw(recording.response)


# -- one stream ---------------------------------------------------------------------------


def _import_text(
    text: str, format: str, usage: Usage | None, source: str | None, label: str
) -> Recording:
    if text.lstrip(_JSON_SPACE)[:1] in ("{", "["):
        return _import_body(text, format, usage, source, label)
    events = read_events(text)
    first = next(events, None)
    if first is None:
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            f"{label}The recording holds no event with data",
            source=source,
        )
    module = _settle_format(first, format, source, label)
    importer: StreamImporter = module.Importer(usage)
    event: SseEvent | None = first
    last, anchor = first, None
    while event is not None:
        try:
            importer.feed(Event(event.name, _parse(event)))
        except Refusal as refusal:
            raise _locate(refusal, event, source, label) from None
        if importer.remember:
            anchor, importer.remember = event, False
        if importer.provider_error_read:
            break  # nothing after a provider error event is read
        last, event = event, next(events, None)
    if not importer.provider_error_read:
        try:
            importer.finish_input()
        except Refusal as refusal:
            raise _locate(refusal, anchor or last, source, label) from None
    return _recording(module, importer)


def _recording(module: ModuleType, importer: StreamImporter) -> Recording:
    ignored: dict[str, JsonValue] = dict(importer.ignored)
    return Recording(
        format=module.FORMAT,
        response=adopt_object({"records": adopt_array(importer.records)}),
        ignored=cast("Mapping[str, int]", adopt_object(ignored)),
        truncated=not (importer.terminal_read or importer.provider_error_read),
        schema_version=importer.schema_version,
    )


# -- one JSON body --------------------------------------------------------------------------


def _import_body(
    text: str, format: str, usage: Usage | None, source: str | None, label: str
) -> Recording:
    """A JSON body: a non-streamed answer or error body, or gemini's JSON array of chunks."""
    if "\r" in text:
        text = _LINE_BREAK.sub("\n", text)  # one "\n" per line break keeps every place
    body = _body_event(text)
    try:
        data = loads(text)
    except JsonSyntaxError:
        raise _locate(_not_json(text, "The JSON body"), body, source, label) from None
    if format == "auto":
        module = next((m for m in _BODY_MODULES if m.detects_whole(data)), None)
    else:
        module = FORMATS[format]
        if module not in _BODY_MODULES or not module.fits_whole(data):
            module = None
    if module is None:
        start = len(text) - len(text.lstrip(_JSON_SPACE))
        line, column = line_and_column(text, start)
        message = (
            "Cannot tell the format of the JSON body; name it with format="
            if format == "auto"
            else f"The JSON body is not a {format} answer or error body"
        )
        raise RecordingError(
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
    importer: StreamImporter = module.Importer(usage)
    try:
        if type(data) is list:
            importer.stream_array(data)  # type: ignore[attr-defined]
        else:
            importer.whole(data)  # type: ignore[attr-defined]
    except Refusal as refusal:
        raise _locate(refusal, body, source, label) from None
    return _recording(module, importer)


def _body_event(text: str) -> SseEvent:
    """A JSON body as one event whose data is all of it, so that refusals are located as
    an event's are."""
    lines = text.count("\n") + 1
    return SseEvent(0, "", text, tuple((number, 1) for number in range(1, lines + 1)))


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


def _settle_format(first: SseEvent, format: str, source: str | None, label: str) -> ModuleType:
    """The format's module, judged from the first event."""

    def unknown(message: str) -> RecordingError:
        return RecordingError(
            _Code.RECORDING_UNKNOWN_FORMAT,
            label + message,
            source=source,
            event_index=0,
            line=first.line,
            column=1,
        )

    if format != "auto":
        module = FORMATS[format]
        try:
            data = _parse(first)
        except Refusal:
            data = None
        if data is None or not module.fits(data):
            raise unknown(f"The first event does not fit the {format} format")
        return module
    # Auto: text that is not JSON is refused as such; JSON of any other kind (an array,
    # an object no format opens with) tells no format.
    if first.data == _DONE:
        raise _locate(_not_json(_DONE), first, source, label)
    try:
        data = _parse(first)
    except Refusal as refusal:
        if refusal.offset is not None:
            raise _locate(refusal, first, source, label) from None
        data = None
    if data is not None:
        for module in _FORMAT_MODULES:
            if module.detects(data):
                return module
    names = ", ".join(FORMATS)
    raise unknown(
        f"Cannot tell the format from the first event; name it with format= (one of {names})"
    )


def _locate(refusal: Refusal, event: SseEvent, source: str | None, label: str) -> RecordingError:
    """The refusal as a ``RecordingError`` pointing into the recording."""
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
    return RecordingError(
        refusal.code,
        label + refusal.message,
        source=source,
        event_index=event.index,
        line=line,
        column=column,
    )


# -- arguments ----------------------------------------------------------------------------


def _decode(data: str | bytes, source: str | None) -> str:
    # Exact types first: no method a subclass overrides is ever called.
    if isinstance(data, str):
        return str.__str__(data)
    data = bytes.__getitem__(data, slice(None))
    try:
        return bytes.decode(data, "utf-8-sig")  # a leading byte order mark is skipped
    except UnicodeDecodeError as exc:
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            f"The recording is not UTF-8 text (invalid byte 0x{data[exc.start]:02x} "
            f"at byte {exc.start})",
            source=source,
        ) from None


def check_format(format: object) -> None:
    """``TypeError`` or ``ValueError`` unless ``format`` is ``"auto"`` or a format name."""
    if not isinstance(format, str):
        raise TypeError(f"format must be a str, got {type(format).__qualname__}")
    if format != "auto" and format not in FORMATS:
        names = ", ".join(("auto", *FORMATS))
        raise ValueError(f"format must be one of {names}; got {format!r}")


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
