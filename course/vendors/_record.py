"""Record a fixture by running the agent once: ``record`` and ``FixtureRecorder``.

``record(path)`` runs a local proxy with ``serve``'s routes (``._proxy``) that forwards
each model call to its provider and streams the answer back as it arrives. Here is
what becomes of the answers: when each ends it is imported (``import_recording``: a
stream as SSE, a whole body as a non-streamed body; an HTTP error status as one
``transport_error`` with that ``status``, the provider's code and message, and
``retryAfter``), optionally timed (``delay``), and leaving the context writes the
fixture: one response per call, in the order the requests arrived, with every
credential of the recorded requests struck out (``._redaction``), to a temporary file
in the same folder, then renamed over ``path``.

Nothing is written when the ``with`` body raises, or when an answer could not be
imported (the first ``RecordingError`` is raised instead, naming the call). A call
whose upstream could not be reached, or whose answer was cut before its first byte,
is recorded as nothing.
"""

from __future__ import annotations

import asyncio
import bisect
import codecs
import contextlib
import gzip
import json
import logging
import os
import re
import secrets
import zlib
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Final, cast
from urllib.parse import urlsplit

from .._json import JsonValue, PlainJson, thaw
from .._text import one_line, plural, shorten
from ._answer import Answer, Ending
from ._importing import ERROR_MESSAGE_CHARS, FORMATS, _error_words, _parse, import_recording
from ._recording import Event, RecordingError, RecordingErrorCode, Refusal
from ._redaction import Redactor
from ._requests import ServedCall
from ._server import FixtureServer, _check_address, _running_asyncio_loop, _trio
from ._sse import read_events

if TYPE_CHECKING:
    from ._proxy import ProxyApp

__all__ = ["DEFAULT_UPSTREAMS", "SCHEMA_VERSION", "FixtureRecorder", "record"]

DEFAULT_UPSTREAMS: Final[Mapping[str, str]] = {
    "openai": "https://api.openai.com",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
}
"""Where each provider's calls go unless ``upstreams`` says otherwise."""

SCHEMA_VERSION: Final = 2
"""The schema version of a recorded fixture (``SPEC-V2.md``)."""

MAX_DELAY: Final = 3600
"""The largest ``delay`` written (seconds): longer waits are capped."""

MAX_RETRY_AFTER: Final = 86400
"""The largest ``Retry-After`` kept as ``retryAfter`` (seconds)."""

EXTRA: Final = "course[record]"

logger = logging.getLogger("course.vendors.record")
"""One INFO record per forwarded call once it is recorded. Silent unless enabled."""

_Code = RecordingErrorCode
_NUMBER: Final = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")


def record(
    path: str | os.PathLike[str],
    *,
    upstreams: Mapping[str, str] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    timing: bool = False,
) -> FixtureRecorder:
    """A ``FixtureRecorder`` that will write the calls it forwards to ``path``.

    Use it as a context manager (``with`` or ``async with``), and point the client's
    base URL at its ``url`` as at ``serve``'s. ``upstreams`` maps ``"openai"``,
    ``"anthropic"``, ``"gemini"`` to base URLs (defaults: the providers' own);
    ``timing=True`` writes each record's ``delay``. Needs the optional extra
    ``course[record]`` (uvicorn and httpx2): without it, a ``RuntimeError`` naming it.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or a path, got {type(path).__qualname__}")
    name = os.fspath(path)
    if not isinstance(name, str):
        raise TypeError(f"path must be a str or a path, got {type(name).__qualname__}")
    if not name:
        raise ValueError("path must not be empty")
    chosen = _upstreams(upstreams)
    if type(timing) is not bool:
        raise TypeError(f"timing must be True or False, got {type(timing).__qualname__}")
    _check_address(host, port)
    _check_extra()
    return FixtureRecorder(name, chosen, host=host, port=port, timing=timing)


def _upstreams(given: object) -> dict[str, str]:
    chosen = dict(DEFAULT_UPSTREAMS)
    if given is None:
        return chosen
    if not isinstance(given, Mapping):
        raise TypeError(f"upstreams must be a mapping, got {type(given).__qualname__}")
    for key, url in given.items():
        if key not in DEFAULT_UPSTREAMS:
            names = ", ".join(map(repr, DEFAULT_UPSTREAMS))
            raise ValueError(f"upstreams: {key!r} is not a provider; use {names}")
        if not isinstance(url, str):
            raise TypeError(f"upstreams[{key!r}] must be a str, got {type(url).__qualname__}")
        try:
            parts = urlsplit(url)
        except ValueError:  # "http://[::1": not a URL at all
            parts = urlsplit("")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstreams[{key!r}] must be an http or https URL, got {url!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"upstreams[{key!r}] must have no query or fragment, got {url!r}")
        chosen[key] = url
    return chosen


def _check_extra() -> None:
    try:
        import httpx2  # noqa: F401, PLC0415  (optional extra, only for recording)
        import uvicorn  # noqa: F401, PLC0415
    except ImportError as exc:
        raise RuntimeError(
            f"Recording needs uvicorn and httpx2: install the extra {EXTRA} (pip install '{EXTRA}')"
        ) from exc


class FixtureRecorder:
    """A recording proxy run by uvicorn in a background thread (see ``record``).

    A context manager, sync and async: entering starts the proxy; leaving stops it
    and writes the fixture (nothing when the body raised, or a ``RecordingError`` when
    an answer could not be imported). It runs once.
    """

    def __init__(
        self,
        path: str,
        upstreams: Mapping[str, str],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        timing: bool = False,
    ) -> None:
        from ._proxy import ProxyApp  # noqa: PLC0415  (needs the extra)

        self._path = path
        self._timing = timing
        self._recorded: dict[int, _Recorded] = {}
        self._app: ProxyApp = ProxyApp(upstreams, self._settle)
        self._server = FixtureServer(self._app, host=host, port=port)
        self._stopped = False
        self._secrets: set[str] = set()
        self._redacting: tuple[int, Redactor] = (0, Redactor(()))
        """How many answers' credentials the redactor has, and the redactor."""

    def __repr__(self) -> str:
        state = "recording" if self._server.running else "stopped"
        return f"<FixtureRecorder {self._path!r} {state}>"

    @property
    def url(self) -> str:
        """``http://HOST:PORT``: the port actually bound, a wildcard host as loopback."""
        try:
            return self._server.url
        except RuntimeError:
            raise RuntimeError(
                "The recorder has not started: enter it first (with record(...) as r)"
            ) from None

    @property
    def path(self) -> str:
        """Where the fixture is written."""
        return self._path

    @property
    def running(self) -> bool:
        """Whether the proxy is serving."""
        return self._server.running

    @property
    def requests(self) -> tuple[Mapping[str, JsonValue], ...]:
        """The JSON bodies of the forwarded requests that took a response, in order."""
        return self._app.requests

    @property
    def calls(self) -> tuple[ServedCall, ...]:
        """Every forwarded model call, in arrival order, read as ``serve(...,
        check_requests=False)`` reads it: ``response_index`` is the response it was
        recorded as (``None`` while it is in flight, or when it recorded nothing)."""
        indexes: dict[int, int] = {}
        for answer in self._app.answers:
            if isinstance(self._recorded.get(answer.number), Recorded):
                indexes[answer.number] = len(indexes)
        calls = []
        for answer in self._app.answers:
            request, problems = self._app.reads[answer.number]
            index = indexes.get(answer.number)
            calls.append(
                ServedCall(answer.format, answer.path, answer.body, request, index, problems)
            )
        return tuple(calls)

    # -- context managers ---------------------------------------------------------------

    def __enter__(self) -> FixtureRecorder:
        self._server.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._leave(exc)

    async def __aenter__(self) -> FixtureRecorder:
        await self._server.__aenter__()  # asyncio or trio, cancel-safe, as serve's
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # Stopping and writing block: in a worker thread, under asyncio or trio.
        if _running_asyncio_loop() is None:
            await _trio("async with record(...)").to_thread.run_sync(self._leave, exc)
        else:
            await asyncio.to_thread(self._leave, exc)

    def _leave(self, exc: BaseException | None) -> None:
        self._stop()
        if exc is None:
            self._write()
            return
        error = self._first_error()
        if error is not None:
            exc.add_note(
                f"course: the fixture was not written; a call could not be imported either: {error}"
            )

    # -- what the plugin and the command line drive --------------------------------------

    def _stop(self) -> None:
        """Stop the proxy (responses in flight are cut) and settle every answer."""
        if self._stopped:
            return
        self._stopped = True
        self._server.__exit__(None, None, None)
        for answer in self._app.answers:  # any the server stopped before they settled
            self._settle(answer)

    def _write(self) -> None:
        """Write the fixture, or raise the first ``RecordingError`` and write nothing."""
        error = self._first_error()
        if error is not None:
            raise error
        text = self._fixture_text()
        _write_atomically(self._path, text)

    def _first_error(self) -> RecordingError | None:
        for answer in self._app.answers:
            outcome = self._recorded.get(answer.number)
            if isinstance(outcome, RecordingError):
                return outcome
        return None

    def _responses(self) -> list[Recorded]:
        """The recorded responses, in the order their requests arrived."""
        return [
            outcome
            for answer in self._app.answers
            if isinstance(outcome := self._recorded.get(answer.number), Recorded)
        ]

    def _fixture_text(self) -> str:
        """The fixture as its file holds it, every credential struck out.

        Raises ``RecordingError`` when a credential cannot be struck out alike everywhere.
        """
        redactor = self._redactor()
        responses: list[PlainJson] = []
        for recorded in self._responses():
            try:
                records = redactor.records(recorded.records)
            except ValueError as exc:
                raise RecordingError(
                    _Code.RECORDING_UNSUPPORTED, str(exc), source=recorded.label
                ) from None
            responses.append({"records": records})
        fixture = {"schemaVersion": SCHEMA_VERSION, "responses": responses}
        return json.dumps(fixture, indent=2) + "\n"

    def _redactor(self) -> Redactor:
        """Strikes out every credential of every forwarded request so far."""
        answers = self._app.answers
        seen, redactor = self._redacting
        if seen < len(answers):
            known = len(self._secrets)
            for answer in answers[seen:]:
                self._secrets.update(answer.credentials)
            if len(self._secrets) > known:  # built again only for a new credential
                redactor = Redactor(self._secrets)
            self._redacting = (len(answers), redactor)
        return redactor

    def _settle(self, answer: Answer) -> None:
        """Import an answer that has ended (once), and log its line."""
        if answer.number in self._recorded:
            return
        if not answer.answered:
            self._recorded[answer.number] = None
            _log(answer, None, self._redactor)
            return
        recorded: Recorded | RecordingError
        try:
            recorded = _record_answer(answer, self._timing)
        except RecordingError as error:
            recorded = _named(error, answer, self._redactor())
        self._recorded[answer.number] = recorded
        _log(answer, recorded, self._redactor)


# -- one answer becomes one response ------------------------------------------------------


class Recorded:
    """One call's response, as recorded (before redaction)."""

    __slots__ = ("label", "records", "truncated")

    def __init__(self, label: str, records: list[PlainJson], truncated: bool) -> None:
        self.label = label
        self.records = records
        self.truncated = truncated


_Recorded = Recorded | RecordingError | None
"""What became of a call: a response, the reason it could not be imported, or nothing."""


def _record_answer(answer: Answer, timing: bool) -> Recorded:
    status = answer.status
    assert status is not None
    data = _decoded(answer)
    if 400 <= status <= 599:
        records: list[PlainJson] = [_error_record(answer, data)]
        truncated = False
    else:
        recording = import_recording(
            data, format=answer.format, source=answer.label, schema_version=SCHEMA_VERSION
        )
        records = cast("list[PlainJson]", thaw(recording.response)["records"])
        truncated = recording.truncated
    if timing:
        _time(records, answer, data)
    return Recorded(answer.label, records, truncated)


def _decoded(answer: Answer) -> bytes:
    """The body as the provider meant it: the proxy asks for identity, but a provider
    may still compress (gzip, deflate)."""
    data = b"".join(answer.chunks)
    encoding = answer.headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        return data
    window = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
    try:
        if answer.ending is Ending.COMPLETE and encoding in ("gzip", "x-gzip"):
            return gzip.decompress(data)  # every member of a whole body
        if encoding in window:
            # A cut body: what it holds so far, as a cut stream imports (truncated).
            decompressor = zlib.decompressobj(window[encoding])
            body = decompressor.decompress(data)
            if answer.ending is Ending.COMPLETE and not decompressor.eof:
                raise EOFError("the compressed body ends before its end")
            return body
    except (OSError, EOFError, zlib.error) as exc:
        raise RecordingError(
            _Code.RECORDING_UNREADABLE,
            f"The {encoding} body cannot be decompressed: {exc}",
            source=answer.label,
        ) from None
    raise RecordingError(
        _Code.RECORDING_UNREADABLE,
        f"The body's content-encoding {encoding!r} cannot be read",
        source=answer.label,
    )


def _error_record(answer: Answer, data: bytes) -> dict[str, PlainJson]:
    """An HTTP error answer as one ``transport_error``: the provider's code and message,
    read from its error body as the importer reads a cassette's (a body in no provider's
    shape: its text, shortened), the ``status`` and the ``retryAfter``."""
    text = data.decode("utf-8", "replace")
    words = _error_words(text, answer.format)
    message, code = (shorten(text, ERROR_MESSAGE_CHARS), None) if words is None else words[:2]
    record: dict[str, PlainJson] = {"type": "transport_error", "message": message}
    if code is not None:
        record["code"] = code
    record["status"] = cast("int", answer.status)
    retry_after = _retry_after(answer.headers)
    if retry_after is not None:
        record["retryAfter"] = retry_after
    return record


def _retry_after(headers: Mapping[str, str]) -> int | float | None:
    """``retry-after-ms`` / 1000, else ``retry-after``, when that is a number of seconds
    from 0 to ``MAX_RETRY_AFTER`` (an HTTP date is not)."""
    for name, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        text = headers.get(name, "").strip()
        if _NUMBER.fullmatch(text) is None:
            continue
        seconds = float(text) / scale
        if seconds <= MAX_RETRY_AFTER:
            return int(seconds) if seconds.is_integer() else seconds
    return None


# -- timing ---------------------------------------------------------------------------------


def _time(records: list[PlainJson], answer: Answer, data: bytes) -> None:
    """Give each record its ``delay``: the time since the previous record's data arrived
    (the first's: since the request was forwarded), 0 for a record made from the same
    event as the one before it."""
    owners = _owners(records, answer, data)
    arrivals = _event_arrivals(answer, data, owners[-1] + 1 if owners else 0)
    previous, previous_owner = answer.forwarded_at, -1
    for record, owner in zip(records, owners, strict=True):
        assert type(record) is dict
        if owner == previous_owner:
            record["delay"] = 0
            continue
        record["delay"] = _seconds(arrivals[owner] - previous)
        previous, previous_owner = arrivals[owner], owner


def _seconds(elapsed: float) -> int | float:
    """Seconds rounded to milliseconds, from 0 to ``MAX_DELAY``."""
    seconds = min(round(max(elapsed, 0.0), 3), float(MAX_DELAY))
    return int(seconds) if seconds.is_integer() else seconds


def _owners(records: list[PlainJson], answer: Answer, data: bytes) -> list[int]:
    """For each record, the index of the event whose data made it.

    An error answer and a whole (non-streamed) body are one event. A stream is read
    again, event by event, by its format's importer, counting the records each event
    adds: the text imported once already, so this pass refuses nothing new.
    """
    text = data.decode("utf-8-sig", "replace")
    count = len(records)
    if cast("int", answer.status) >= 400 or _is_whole_body(text):
        return [0] * count
    importer = FORMATS[answer.format].Importer(None)
    owners: list[int] = []
    for event in read_events(text):
        try:
            importer.feed(Event(event.name, _parse(event)))
        except Refusal:  # a cut final event, which makes no record
            break
        owners += [event.index] * (len(importer.records) - len(owners))
        if len(owners) >= count or importer.provider_error_read:
            break
    last = owners[-1] if owners else 0
    return (owners + [last] * count)[:count]


def _is_whole_body(text: str) -> bool:
    """A JSON body, not SSE: its first non-whitespace character is ``{`` or ``[``."""
    return text.lstrip(" \t\r\n").startswith(("{", "["))  # the importer's own rule


def _event_arrivals(answer: Answer, data: bytes, events: int) -> list[float]:
    """When the data of each of the first ``events`` events arrived (``perf_counter``).

    An event's data has arrived with the chunk that holds the end of its last ``data``
    line; a whole body, or an error body, with its last chunk.
    """
    last = answer.arrivals[-1] if answer.arrivals else answer.forwarded_at
    text = data.decode("utf-8-sig", "replace")
    if cast("int", answer.status) >= 400 or _is_whole_body(text):
        return [last] * events
    ends = _chunk_ends(answer.chunks)
    line_ends = [match.start() for match in _LINE_BREAK.finditer(text)]
    arrivals: list[float] = []
    for event in read_events(text):
        if event.index >= events:
            break
        line = event.data_starts[-1][0]  # 1-based
        offset = line_ends[line - 1] if line <= len(line_ends) else len(text)
        index = bisect.bisect_right(ends, offset)
        arrivals.append(answer.arrivals[index] if index < len(answer.arrivals) else last)
    return arrivals + [last] * (events - len(arrivals))


def _chunk_ends(chunks: list[bytes]) -> list[int]:
    """The text offset (in characters, a leading BOM skipped) at which each chunk ends."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")
    ends: list[int] = []
    total = 0
    for chunk in chunks:
        total += len(decoder.decode(chunk))
        ends.append(total)
    return ends


# -- naming, logging, writing ---------------------------------------------------------------


def _named(error: RecordingError, answer: Answer, redactor: Redactor) -> RecordingError:
    """The import's refusal, naming the call and with no credential in its message."""
    message = redactor.text(error.message)
    if error.code is _Code.RECORDING_MISSING_USAGE:
        # The importer's advice (usage=) is not the recorder's: the provider must send it.
        message = "The answer succeeded without usage, which a fixture response needs"
        if answer.format == "openai-chat":
            message += (
                "; OpenAI streams usage only when the request asks: "
                "stream_options={'include_usage': True}"
            )
    named = RecordingError(
        error.code,
        f"{answer.label} answered {answer.status}: {message}",
        source=answer.label,
        event_index=error.event_index,
        line=error.line,
        column=error.column,
    )
    return named


def _summary(recorded: Recorded | RecordingError) -> str:
    """``5 records, toolCall``; ``not imported: CODE``."""
    if isinstance(recorded, RecordingError):
        return f"not imported: {recorded.code.value}"
    records = recorded.records
    last = records[-1] if records else None
    if recorded.truncated or type(last) is not dict:
        outcome = "cut"
    elif last.get("type") == "transport_error":
        code, status = last.get("code"), last.get("status")
        outcome = "transport_error" + ("" if code is None else f" {code}")
        outcome += "" if status is None else f" ({status})"
    else:
        outcome = _camel(str(last.get("stopReason")))
    return f"{plural(len(records), 'record')}, {outcome}"


def _camel(word: str) -> str:
    """A wire stop reason as ``course`` names it: ``tool_call`` is ``toolCall``."""
    head, *rest = word.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _log(
    answer: Answer, recorded: Recorded | RecordingError | None, redactor: Callable[[], Redactor]
) -> None:
    """One line for the call, when the log is on. How the answer ended is said when the
    recording shows it cut: a client that leaves after the terminal event (the SDKs
    close at ``[DONE]``) left nothing out."""
    if not logger.isEnabledFor(logging.INFO):
        return
    status = "-" if answer.status is None else str(answer.status)
    what = "recorded nothing" if recorded is None else _summary(recorded)
    cut = recorded is None or (isinstance(recorded, Recorded) and recorded.truncated)
    ending = answer.ending
    how = "" if ending in (None, Ending.COMPLETE) or not cut else f" ({ending.value})"
    if ending is Ending.UNREACHABLE:
        how = f" ({ending.value}: {answer.reason})"
        status = "502"
    line = f"call {answer.number}: POST {answer.path} -> {status}: {what}{how}"
    logger.info("%s", one_line(redactor().text(line)))


def _write_atomically(path: str, text: str) -> None:
    """``text`` to ``path`` through a temporary file in the same folder and a rename,
    so that ``path`` holds the old fixture or the new one, never a part of one."""
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    # O_EXCL: never another file; mode 0o666 less the umask, as open() would create it.
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
