"""The ``gemini`` wire format (the Gemini Developer API, as ``google-genai`` speaks it).

Everything ``course`` knows about this format lives here, both directions; its wire
names stay inside. Gemini fixtures are schema version 2.

**The wire.** ``POST /{v1,v1beta,v1alpha}/{models,tunedModels}/{id}:{method}``:
``generateContent`` answers one ``GenerateContentResponse``; ``streamGenerateContent``
answers a stream of them, as SSE ``data:`` events with ``alt=sse`` (what the SDK always
asks for), else as one JSON array. Each chunk carries ``responseId``, ``modelVersion``,
at most one candidate (its ``content.parts``, ``finishReason``), ``usageMetadata`` (a
cumulative snapshot) and, for a blocked prompt, ``promptFeedback``; a failure is
``{"error": {"code", "message", "status"}}``.

**Import.** Every chunk is judged in the SPEC's classes (the chunk alone, its place,
against earlier chunks); its parts become records in order: text, thought text and its
signature, one whole tool call per ``functionCall`` (an id made up when Gemini gives
none). There is no terminal event: the end is decided when the input ends, by the last
``finishReason`` (``finish_input``).

**Render.** One chunk per content record, then a last chunk with the ``finishReason``
and the whole ``usageMetadata``; ``generateContent`` gets all of it in one response.

**Requests.** ``read_request`` reads a request body: ``systemInstruction`` as a system
message, then ``contents`` (``model`` is the assistant; ``function`` and ``tool`` are
tool messages), each part as its course block, ids read where the wire leaves them out,
and the function declarations.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, cast

from .._errors import FixtureProviderError, FixtureProviderErrorCode, pointer
from .._json import JsonArray, JsonObject, JsonValue, PlainJson, thaw
from .._model import (
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
    CourseModelUsage,
    CourseOtherBlock,
    CourseRequestBlock,
    CourseRequestMessage,
    CourseRequestRole,
    CourseTextBlock,
    CourseTextDeltaChunk,
    CourseThinkingBlock,
    CourseThinkingDeltaChunk,
    CourseThinkingSignatureChunk,
    CourseTool,
    CourseToolCallBlock,
    CourseToolCallChunk,
    CourseToolResultBlock,
)
from ._recording import (
    MAX_COUNT,
    Event,
    Path,
    PlainObject,
    RecordingErrorCode,
    Refusal,
    StreamImporter,
    _kind,
    quote,
)
from ._rendering import StreamRenderer, compact
from ._requests import (
    ReadRequest,
    SentLog,
    field_at,
    frozen_object,
    mistyped,
    optional_object,
    optional_string,
    string_field,
    unreadable,
)
from ._sse import format_event

__all__ = [
    "FORMAT",
    "ROUTES_SHOWN",
    "Importer",
    "Renderer",
    "Route",
    "check_signatures",
    "detects",
    "detects_whole",
    "fits",
    "fits_whole",
    "is_base64",
    "precedes",
    "read_error_body",
    "read_request",
    "route",
    "same_signature",
    "signature_bytes",
    "status_word",
]

FORMAT: Final = "gemini"

_Code = RecordingErrorCode

_STOP: Final = "STOP"
_FILTERED: Final = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "MODEL_ARMOR",
    }
)
"""The ``finishReason`` words of a content filter (``SPEC-V2.md``'s table)."""
_ENDS: Final[Mapping[str, str]] = {
    _STOP: "stop",
    "MAX_TOKENS": "length",
    **dict.fromkeys(_FILTERED, "content_filter"),
}
"""Each ``finishReason`` word of the table and its wire stop reason (``STOP`` becomes
``tool_call`` when the response has calls); any other word is a transport error."""
_PROMPT_BLOCKS: Final = frozenset({"BLOCKED_REASON_UNSPECIFIED", "OTHER", "JAILBREAK"})
"""Block reasons that are no finish reason: served as ``promptFeedback`` alone."""

_STATUS_WORDS: Final[Mapping[int, str]] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    529: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""Google's canonical status word for each HTTP status; ``UNKNOWN`` for any other."""
_WORDS: Final = frozenset(_STATUS_WORDS.values())


def detects(first: PlainObject) -> bool:
    """Whether a first event says this format (``format="auto"``): ``candidates`` (a
    list) or ``promptFeedback``, and neither ``object`` nor ``type``."""
    if "object" in first or "type" in first:
        return False
    return type(first.get("candidates")) is list or first.get("promptFeedback") is not None


def fits(first: PlainObject) -> bool:
    """Whether a first event may open a recording of this format."""
    return (
        first.get("candidates") is not None
        or first.get("promptFeedback") is not None
        or type(first.get("error")) is dict
    )


def detects_whole(body: PlainJson) -> bool:
    """Whether a JSON body says this format: a chunk that ``detects``, or an array whose
    first element does."""
    if type(body) is list:
        return bool(body) and type(body[0]) is dict and detects(body[0])
    return type(body) is dict and detects(body)


def fits_whole(body: PlainJson) -> bool:
    """Whether a JSON body may be read as this format: a chunk that ``fits`` (an error
    body included), or an array whose first element does (an empty one too)."""
    if type(body) is list:
        return not body or (type(body[0]) is dict and fits(body[0]))
    return type(body) is dict and fits(body)


def precedes(event: PlainObject) -> bool:
    """Whether an event may come before the start without telling a format: none may."""
    return False


def read_error_body(body: PlainObject) -> tuple[str, str | None] | None:
    """The message and code of an HTTP error body, ``{"error": {"code": N, "message": M,
    "status": S}}`` (the code is S); ``None`` for a body of another shape."""
    error = body.get("error")
    if type(error) is not dict:
        return None
    message, status = error.get("message"), error.get("status")
    if type(message) is not str or type(status) is not str or type(error.get("code")) is not int:
        return None
    return message, status


# -- signatures -----------------------------------------------------------------------------

_STANDARD: Final = re.compile(r"[A-Za-z0-9+/]*")
_URL_SAFE: Final = re.compile(r"[A-Za-z0-9_-]*")


def signature_bytes(text: str) -> bytes | None:
    """The bytes a base64 signature stands for, or ``None`` when it is not base64 as
    google-genai reads it: without its trailing ``=``, the unpadded standard or URL-safe
    base64 of some bytes (one alphabet, unused bits zero), its ``=`` taking its length
    no further than a multiple of 4."""
    core = text.rstrip("=")
    padded = -(-len(core) // 4) * 4
    if len(core) % 4 == 1 or len(text) > padded:
        return None
    if _STANDARD.fullmatch(core):
        altchars = b"+/"
    elif _URL_SAFE.fullmatch(core):
        altchars = b"-_"
    else:
        return None
    try:
        data = base64.b64decode(core + "=" * (padded - len(core)), altchars, validate=True)
    except binascii.Error:  # pragma: no cover (the alphabet and the length were checked)
        return None
    # Unused bits must be zero: the bytes encode back to the same text.
    if base64.b64encode(data, altchars).rstrip(b"=").decode() != core:
        return None
    return data


def is_base64(text: str) -> bool:
    """Whether ``text`` is a signature google-genai accepts (``signature_bytes``)."""
    return signature_bytes(text) is not None


# -- import ---------------------------------------------------------------------------------


class Importer(StreamImporter):
    """The gemini state machine: each chunk judged alone, then in its place, then
    against earlier chunks; the end decided by ``finish_input``."""

    format = FORMAT

    def __init__(self, usage: tuple[int, int] | None) -> None:
        super().__init__(usage)
        self._model = False
        """The start record has a model."""
        self._calls = 0
        """Function calls read: the next made-up id's ``k``."""
        self._reason: str | None = None
        """The finish word read (a ``finishReason`` or a ``blockReason``)."""
        self._blocked = False
        """The word is a ``promptFeedback.blockReason``."""
        self._usage: dict[str, int] | None = None
        """The last ``usageMetadata`` snapshot, in the fixture's keys."""
        self._thinking = False
        """The last record emitted is a ``thinking_delta``."""

    def feed(self, event: Event) -> None:
        data = event.data
        if data is None:  # the driver reads a literal [DONE] for every format
            raise self.done_not_json(
                "The event's data is `[DONE]`, which is not JSON (gemini streams end with the body)"
            )
        if data.get("error") is not None:
            self._error(data)
        else:
            self._chunk(data)

    def whole(self, body: PlainObject) -> None:
        """A non-streamed body (one ``GenerateContentResponse``) or an error body."""
        self.feed(Event("", body))
        if not self.provider_error_read:
            self.finish_input()

    def stream_array(self, items: Sequence[PlainJson]) -> None:
        """The JSON array ``streamGenerateContent`` answers without ``alt=sse``: read as
        the stream it holds, each refusal located at its element."""
        anchor = len(items) - 1
        for index, item in enumerate(items):
            try:
                if type(item) is not dict:
                    raise Refusal(
                        _Code.RECORDING_INVALID_JSON,
                        "Expected each element of the JSON array to be a chunk object",
                    )
                self.feed(Event("", item))
            except Refusal as refusal:
                raise _within(refusal, index) from None
            if self.remember:
                anchor, self.remember = index, False
            if self.provider_error_read:
                return  # nothing after a provider error is read
        try:
            self.finish_input()
        except Refusal as refusal:
            raise _within(refusal, anchor) from None

    def finish_input(self) -> None:
        word = self._reason
        if word is None:
            return  # no finish reason: a cut stream
        if self._blocked:
            self.finish("content_filter", self._usage, word, None)
            return
        end = _ENDS.get(word)
        if end is None:
            self.stopped(word)  # MALFORMED_FUNCTION_CALL, OTHER, a new word, ...
            return
        if end == "stop" and self._calls:
            end = "tool_call"
        self.finish(end, self._usage, word, None)

    # -- class 3: the chunk alone ----------------------------------------------------------
    #
    # The hot path of every stream: inline checks of the common shapes; the field helpers
    # word a refusal (``refuse`` and the checks below raise).

    def _chunk(self, data: PlainObject) -> None:
        response_id = data.get("responseId")
        if type(response_id) is not str or not response_id:
            self.refuse(data, "responseId", str, ())
        model = data.get("modelVersion")
        if model is not None and type(model) is not str:
            self.string(data, "modelVersion", (), optional=True)
        listed = data.get("candidates")
        if listed is not None and type(listed) is not list:
            self.array(data, "candidates", (), optional=True)
        candidates = cast("list[PlainJson]", listed or [])
        block = None
        feedback = data.get("promptFeedback")
        if feedback is not None:
            feedback = self.obj(data, "promptFeedback", (), optional=True)
            block = self.string(feedback, "blockReason", ("promptFeedback",), optional=True)
        meta = data.get("usageMetadata")
        usage = None if meta is None else self._usage_of(data)
        parts: list[PlainObject] = []
        reason = index = None
        for i, candidate in enumerate(candidates):
            found, ending, number = self._candidate(candidate, i)
            if i == 0:
                parts, reason, index = found, ending, number
        if len(candidates) > 1:
            raise Refusal(
                _Code.RECORDING_UNSUPPORTED,
                f"The chunk has {len(candidates)} candidates; a fixture holds one "
                "(candidateCount 1)",
                ("candidates",),
            )
        if index not in (None, 0):
            raise Refusal(
                _Code.RECORDING_UNSUPPORTED,
                f"The candidate's `index` is {index}; a fixture holds candidate 0 only",
                ("candidates", 0, "index"),
            )
        self._place(response_id, parts, reason, block, usage)
        if not self.started:
            self.start(response_id)
        if model and not self._model:
            self._model = True
            self.model(cast(str, model))
        for part in parts:
            self._emit_part(part)
        if usage is not None:
            self._usage = usage

    def _candidate(
        self, candidate: PlainJson, i: int
    ) -> tuple[list[PlainObject], str | None, int | None]:
        """A candidate's parts (each checked), its finish reason and its ``index``."""
        if type(candidate) is not dict:
            raise self.mistyped(candidate, dict, ("candidates", i))
        path = ("candidates", i)
        index = candidate.get("index")
        if index is not None and type(index) is not int:
            self.field(candidate, "index", int, path, optional=True)
        reason = candidate.get("finishReason")
        if reason is not None and type(reason) is not str:
            self.string(candidate, "finishReason", path, optional=True)
        parts: list[PlainObject] = []
        content = candidate.get("content")
        if content is not None:
            if type(content) is not dict:
                self.obj(candidate, "content", path, optional=True)
            content = cast(PlainObject, content)
            listed = content.get("parts")
            if listed is not None:
                if type(listed) is not list:
                    self.array(content, "parts", (*path, "content"), optional=True)
                listed = cast("list[PlainJson]", listed)
                for n, part in enumerate(listed):
                    if (
                        type(part) is not dict
                        or len(part) != 1
                        or type(part.get("text")) is not str
                    ):
                        self._check_part(part, (*path, "content", "parts", n))
                parts = listed  # type: ignore[assignment]
        return parts, reason, index  # type: ignore[return-value]

    def _check_part(self, part: PlainJson, path: Path) -> None:
        """Every key of a part that import reads, by exact type (a plain text part is
        checked inline)."""
        if type(part) is not dict:
            raise self.mistyped(part, dict, path)
        signature = self.string(part, "thoughtSignature", path, optional=True)
        if signature == "":
            raise self._empty((*path, "thoughtSignature"))
        thought = part.get("thought")
        if thought is not None and type(thought) is not bool:
            raise self.malformed(
                f"Expected `{_dotted((*path, 'thought'))}` to be a boolean", (*path, "thought")
            )
        call = self.obj(part, "functionCall", path, optional=True)
        if call is None:
            self.string(part, "text", path, optional=True)
            return
        where = (*path, "functionCall")
        self.identifier(call, "name", where)
        self.obj(call, "args", where, optional=True)
        if self.string(call, "id", where, optional=True) == "":
            raise self._empty((*where, "id"))

    @classmethod
    def _empty(cls, path: Path) -> Refusal:
        return cls.malformed(f"Expected `{_dotted(path)}` to be a non-empty string", path)

    def _usage_of(self, data: PlainObject) -> dict[str, int]:
        """The chunk's ``usageMetadata`` in the fixture's keys; absent counts 0, absent
        details left out."""
        meta = self.obj(data, "usageMetadata", ())
        counts: list[int | None] = []
        for key in _USAGE_KEYS:
            value = meta.get(key)
            if value is not None and (type(value) is not int or not 0 <= value <= MAX_COUNT):
                self.count(meta, key, ("usageMetadata",), optional=True)
            counts.append(value)  # type: ignore[arg-type]
        prompt, candidates, thoughts, cached = counts
        usage = {"inputTokens": prompt or 0, "outputTokens": (candidates or 0) + (thoughts or 0)}
        if cached is not None:
            usage["cacheReadTokens"] = cached
        if thoughts is not None:
            usage["reasoningTokens"] = thoughts
        return usage

    # -- classes 4 and 5: its place, then against earlier chunks ---------------------------

    def _place(
        self,
        response_id: str,
        parts: list[PlainObject],
        reason: str | None,
        block: str | None,
        usage: Mapping[str, int] | None,
    ) -> None:
        """Class 4 (after the finish, only usage and the same reason), then class 5 (the
        same ``responseId``, usage that a fixture accepts); the finish word is kept."""
        if reason is not None or block is not None or self._reason is not None:
            self._finish_place(parts, reason, block)
        if self.started and response_id != self.response_id:
            raise self.malformed(
                f"Expected `responseId` {quote(self.response_id)} (from the first chunk), "
                f"got {quote(response_id)}",
                ("responseId",),
            )
        if usage is not None:
            self._check_usage(usage)

    def _finish_place(
        self, parts: list[PlainObject], reason: str | None, block: str | None
    ) -> None:
        if self._reason is not None and parts:
            raise self.out_of_order(
                f"A part after the finish reason {quote(self._reason)}: only usage and the "
                "same finish reason may follow it"
            )
        word, blocked = self._reason, self._blocked
        for new, is_block in ((block, True), (reason, False)):
            if new is None:
                continue
            if word is not None and (new != word or is_block != blocked):
                raise self.out_of_order(
                    f"The {'block' if is_block else 'finish'} reason {quote(new)} after the "
                    f"{'block' if blocked else 'finish'} reason {quote(word)}"
                )
            word, blocked = new, is_block
            self.remember = True  # errors decided at the end are located here
        self._reason, self._blocked = word, blocked

    def _check_usage(self, usage: Mapping[str, int]) -> None:
        path = ("usageMetadata",)
        if usage["outputTokens"] > MAX_COUNT:
            raise self.malformed(
                "`candidatesTokenCount` plus `thoughtsTokenCount` is more than 2**53 - 1", path
            )
        if usage.get("cacheReadTokens", 0) > usage["inputTokens"]:
            raise self.malformed(
                "`cachedContentTokenCount` is more than `promptTokenCount`, which includes it",
                path,
            )

    def _emit_part(self, part: PlainObject) -> None:
        """A checked part's records: its payload first, then its signature."""
        if len(part) == 1:
            text = part.get("text")
            if type(text) is str:  # a plain text part: the common case
                if text:
                    self.text(text)
                    self._thinking = False
                return
        signature: str | None = part.get("thoughtSignature")  # type: ignore[assignment]
        call = part.get("functionCall")
        if call is not None:
            call_id = call.get("id")  # type: ignore[union-attr]
            if call_id is None:
                call_id = f"{self.response_id}:call:{self._calls}"
            self._calls += 1
            arguments = call.get("args") or {}  # type: ignore[union-attr]
            self.whole_tool_call(call_id, call["name"], arguments, signature)  # type: ignore[arg-type, index, call-overload]
            self._thinking = False
            return
        text = part.get("text")
        if part.get("thought") is True:
            text = text or ""
            if text or signature is None or not self._thinking:
                self.thinking(text)  # type: ignore[arg-type]
                self._thinking = True
        elif text is None:
            kind = next((key for key in part if key not in _PART_MARKS), "empty")
            self.ignore(f"part:{kind}")
            return
        elif text:
            self.text(text)  # type: ignore[arg-type]
            self._thinking = False
        if signature is not None:
            if not self._thinking:
                self.thinking("")
            self.thinking_signature(signature)
            self._thinking = False

    def _error(self, data: PlainObject) -> None:
        error = self.obj(data, "error", ())
        where = ("error",)
        status = self.field(error, "code", int, where)
        message = self.string(error, "message", where)
        word = self.string(error, "status", where)
        if not 400 <= status <= 599:  # type: ignore[operator]
            raise self.malformed(
                f"Expected `error.code` to be an HTTP error status from 400 to 599, got {status}",
                (*where, "code"),
            )
        if self._reason is not None:
            raise self.out_of_order(
                f"An error after the finish reason {quote(self._reason)}: only usage and the "
                "same finish reason may follow it"
            )
        self.provider_error(message, word, status)  # type: ignore[arg-type]


_USAGE_KEYS: Final = (
    "promptTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
)
_PART_MARKS: Final = ("thought", "thoughtSignature")
"""Keys of a part beside its payload."""


def _within(refusal: Refusal, index: int) -> Refusal:
    """``refusal`` of an array's element, located in the array."""
    path: Path = (index,) if refusal.path is None else (index, *refusal.path)
    return Refusal(refusal.code, refusal.message, path)


def _dotted(path: Path) -> str:
    return "".join(f"[{part}]" if type(part) is int else f".{part}" for part in path).lstrip(".")


# -- routes ---------------------------------------------------------------------------------

ROUTES_SHOWN: Final = "/{v1,v1beta,v1alpha}/models/ID:{generateContent,streamGenerateContent}"
"""The routes as serve's banner and its 404 name them (``tunedModels/ID`` works too)."""

_ROUTE: Final = re.compile(
    r"/(v1|v1beta|v1alpha)/(models|tunedModels)/([^/]+):(generateContent|streamGenerateContent)"
)


@dataclass(frozen=True, slots=True)
class Route:
    """A Gemini model call's path, read."""

    model: str
    """The name ``modelVersion`` falls back to: ``{id}``, or ``tunedModels/{id}``."""
    mode: Literal["whole", "sse", "array"]
    """``generateContent`` (one response), or ``streamGenerateContent`` with ``alt=sse``
    (SSE) or without it (a JSON array)."""


def route(path: str, query: str) -> Route | None:
    """The Gemini route ``path`` names (``query``: the URL's query string), or ``None``."""
    match = _ROUTE.fullmatch(path)
    if match is None:
        return None
    _, collection, model_id, method = match.groups()
    model = model_id if collection == "models" else f"tunedModels/{model_id}"
    if method == "generateContent":
        return Route(model, "whole")
    alt = [value for key, _, value in (p.partition("=") for p in query.split("&")) if key == "alt"]
    return Route(model, "sse" if alt and alt[-1] == "sse" else "array")


def status_word(status: int) -> str:
    """Google's canonical status for an HTTP status (``UNKNOWN`` for one it has none for)."""
    return _STATUS_WORDS.get(status, "UNKNOWN")


def check_signatures(records: Sequence[object], response_index: int) -> None:
    """Raise ``PROVIDER_INVALID_FIXTURE`` for the first str signature of a ``tool_call``
    or ``thinking_signature`` record that is not base64: google-genai could not read
    it, so serve answers the fixture's fault instead."""
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            continue
        kind = record.get("type")
        if kind not in ("tool_call", "thinking_signature"):
            continue
        signature = record.get("signature")
        if type(signature) is str and not is_base64(signature):
            raise _bad_signature(signature, response_index, index)


def _bad_signature(
    signature: str, response_index: int | None, index: int | None
) -> FixtureProviderError:
    return FixtureProviderError(
        FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE,
        f"The signature {quote(signature)} is not base64, which google-genai needs "
        "(it decodes every thoughtSignature)",
        response_index=response_index,
        record_index=index,
        path=None
        if index is None
        else pointer("responses", response_index or 0, "records", index, "signature"),
    )


# -- render ---------------------------------------------------------------------------------


def _usage_metadata(usage: CourseModelUsage) -> PlainObject:
    reasoning = usage.reasoning_tokens
    meta: PlainObject = {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens - (reasoning or 0),
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    }
    if reasoning is not None:
        meta["thoughtsTokenCount"] = reasoning
    if usage.cache_read_tokens is not None:
        meta["cachedContentTokenCount"] = usage.cache_read_tokens
    return meta


def finish_reason(response: CourseModelResponse) -> str:
    """The ``finishReason`` a response ends with (``SPEC-V2.md``'s table)."""
    stop = response.stop_reason
    if stop in ("stop", "toolCall"):
        return _STOP
    if stop == "length":
        return "MAX_TOKENS"
    if stop == "contentFilter":
        word = response.provider_stop_reason
        return word if word in _FILTERED else "SAFETY"
    return "OTHER"  # refusal, pauseTurn: Gemini has no word for them


def _blocked_prompt(response: CourseModelResponse) -> str | None:
    """The block reason of a response served as a blocked prompt, else ``None``."""
    word = response.provider_stop_reason
    blocked = response.stop_reason == "contentFilter" and word in _PROMPT_BLOCKS
    return word if blocked and not response.message.content else None


class Renderer(StreamRenderer):
    """Renders one course stream as Gemini chunks: SSE, a JSON array, or one response.

    ``model`` is the path's model name (the server sets the fixture's in its place when
    the fixture names one); ``mode`` the route's (``Route.mode``). The ``response_start``
    usage (``start_usage``, set by the server) goes in every chunk but the last.
    """

    format = FORMAT

    def __init__(
        self,
        model: str,
        request: PlainObject | None = None,
        *,
        mode: Literal["whole", "sse", "array"] = "sse",
    ) -> None:
        super().__init__(model, request)
        self.mode = mode
        self._response_id = ""
        self._start_usage: PlainObject | None = None
        self._calls = 0
        self._sent = 0
        """Chunks written so far (for the array's commas)."""

    def open(self, response_id: str) -> str:
        self._response_id = response_id
        start = self.start_usage
        self._start_usage = None if start is None else _usage_metadata(start)
        return ""  # gemini has no opening event

    def chunk(self, chunk: CourseModelChunk) -> str:
        part = self._part(chunk)
        if part is None:
            return ""  # a record Gemini has no place for
        candidate: PlainObject = {"content": {"parts": [part], "role": "model"}, "index": 0}
        body: PlainObject = {"candidates": [candidate]}
        if self._start_usage is not None:
            body["usageMetadata"] = self._start_usage
        return self._write(self._stamp(body))

    def complete(self, response: CourseModelResponse) -> str:
        self._response_id = response.response_id
        text = self._write(self._last(response))
        return text + ("]" if self.mode == "array" else "")

    def fail(self, error: FixtureProviderError) -> str:
        text = self._write(self.error_body(error))
        return text + ("]" if self.mode == "array" else "")

    def whole(self, response: CourseModelResponse) -> PlainObject:
        self._response_id = response.response_id
        word = _blocked_prompt(response)
        if word is not None:
            return self._blocked(word, response)
        parts: list[PlainJson] = []
        for block in response.message.content:
            if block.type == "text":
                parts.append({"text": block.text})
            elif block.type == "thinking":
                parts.append({"text": block.text, "thought": True})
                if block.signature is not None:
                    self._check(block.signature)
                    parts.append({"text": "", "thought": True, "thoughtSignature": block.signature})
            elif block.type == "toolCall":
                if block.signature is not None:
                    self._check(block.signature)
                parts.append(
                    self._call(block.id, block.name, thaw(block.arguments), block.signature)
                )
        candidate: PlainObject = {
            "content": {"parts": parts, "role": "model"},
            "finishReason": finish_reason(response),
            "index": 0,
        }
        return self._stamp(
            {"candidates": [candidate], "usageMetadata": _usage_metadata(response.usage)}
        )

    @staticmethod
    def error_body(error: FixtureProviderError) -> PlainObject:
        status, word, message = error_words(error)
        return {"error": {"code": status, "message": message, "status": word}}

    def error_answer(
        self, error: FixtureProviderError
    ) -> tuple[int, PlainObject | list[PlainJson]]:
        """A failure before anything was sent: the HTTP status (the error's own, as Google
        answers) and the body (in a one-element array for the JSON-array stream)."""
        body = self.error_body(error)
        return error_words(error)[0], [body] if self.mode == "array" else body

    # -- chunks -----------------------------------------------------------------------------

    def _part(self, chunk: CourseModelChunk) -> PlainObject | None:
        if isinstance(chunk, CourseTextDeltaChunk):
            return {"text": chunk.text}
        if isinstance(chunk, CourseThinkingDeltaChunk):
            return {"text": chunk.text, "thought": True}
        if isinstance(chunk, CourseThinkingSignatureChunk):
            self._check(chunk.signature)
            return {"text": "", "thought": True, "thoughtSignature": chunk.signature}
        if isinstance(chunk, CourseToolCallChunk):
            if chunk.signature is not None:
                self._check(chunk.signature)
            return self._call(chunk.id, chunk.name, thaw(chunk.arguments), chunk.signature)
        return None

    def _check(self, signature: str) -> None:
        # An async source's record is read when it comes: a bad one fails the stream.
        if not is_base64(signature):
            index = None if self.stream is None else self.stream._response_index
            raise _bad_signature(signature, index, None)

    def _call(
        self, call_id: str, name: str, arguments: PlainJson, signature: str | None
    ) -> PlainObject:
        call: PlainObject = {"name": name, "args": arguments}
        if call_id != f"{self._response_id}:call:{self._calls}":
            call = {"id": call_id, **call}  # a made-up id stays made up: Gemini sent none
        self._calls += 1
        part: PlainObject = {"functionCall": call}
        if signature is not None:
            part["thoughtSignature"] = signature
        return part

    def _last(self, response: CourseModelResponse) -> PlainObject:
        word = _blocked_prompt(response)
        if word is not None:
            return self._blocked(word, response)
        candidate: PlainObject = {
            "content": {"parts": [{"text": ""}], "role": "model"},
            "finishReason": finish_reason(response),
            "index": 0,
        }
        return self._stamp(
            {"candidates": [candidate], "usageMetadata": _usage_metadata(response.usage)}
        )

    def _blocked(self, word: str, response: CourseModelResponse) -> PlainObject:
        return self._stamp(
            {
                "promptFeedback": {"blockReason": word},
                "usageMetadata": _usage_metadata(response.usage),
            }
        )

    def _stamp(self, body: PlainObject) -> PlainObject:
        body["modelVersion"] = self.model
        body["responseId"] = self._response_id
        return body

    def _write(self, body: PlainObject) -> str:
        if self.mode == "array":
            self._sent += 1
            return ("[" if self._sent == 1 else ",") + compact(body)
        return format_event(compact(body))


def error_words(error: FixtureProviderError) -> tuple[int, str, str]:
    """The HTTP status, the canonical status word and the message of ``error``'s body."""
    if error.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR:
        status = error.transport_status or 500
        code = error.transport_code
        word = code if code in _WORDS else status_word(status)
        return status, word, error.transport_message or ""
    return 500, status_word(500), f"{error.code.value}: {error.message}"


# -- requests -------------------------------------------------------------------------------
#
# Gemini's wire is proto JSON, which takes a field by its camelCase or its snake_case
# name (google-genai itself sends `parameters_json_schema`): the messages read here are
# read by their camelCase names (``_fields``); the JSON values they carry (``args``,
# ``response``, schemas) keep their keys.

_ROLES: Final[Mapping[str, CourseRequestRole]] = {
    "user": "user",
    "model": "assistant",
    "function": "tool",
    "tool": "tool",
}
_PART_METADATA: Final = frozenset(
    {"thought", "thoughtSignature", "videoMetadata", "partMetadata", "mediaResolution"}
)
"""Keys of a request part beside its one payload."""
_SNAKE: Final = re.compile(r"_([a-z0-9])")


def same_signature(sent: str, back: str) -> bool:
    """Whether two signatures stand for the same bytes (``signature_bytes``: standard or
    URL-safe base64, padded or not); one that is not base64 equals nothing."""
    decoded = signature_bytes(sent)
    return decoded is not None and decoded == signature_bytes(back)


@dataclass(slots=True)
class _Call:
    """A ``functionCall`` part, its id read once its turn is."""

    name: str
    args: Mapping[str, JsonValue]
    wire_id: str | None
    signature: str | None
    id: str = ""
    sent_id: str | None = None
    """The id of the call this server sent that it was recognised as, if any."""


@dataclass(slots=True)
class _Answer:
    """A ``functionResponse`` part, its id read once the turn it answers is."""

    name: str
    response: JsonValue
    id: str | None


_Item = CourseRequestBlock | _Call | _Answer


def read_request(body: Mapping[str, PlainJson], request_id: str, sent: SentLog) -> ReadRequest:
    """A ``generateContent`` request body read (``SPEC-REQUESTS.md``, ``SPEC-GEMINI.md``),
    or a ``RequestReadError``.

    ``systemInstruction`` is one system message (no parts: none), then each of
    ``contents`` placed ``contents[i]``. A call or a response the wire sends without an
    id gets one as ``_read_ids`` says, ``sent`` telling the calls this server made.
    """
    fields = _fields(cast(PlainObject, body), "")
    read: list[tuple[CourseRequestRole, list[_Item], str]] = []
    system = fields.get("systemInstruction")
    if system is not None:
        if type(system) is not dict:
            raise unreadable(
                "systemInstruction",
                f"a system instruction must be a Content object, got {_kind(system)}",
            )
        items = _parts(_fields(system, "systemInstruction"), "systemInstruction")
        if items:
            read.append(("system", items, "systemInstruction"))
    listed = fields.get("contents")
    if listed is not None:
        if type(listed) is not list:
            raise unreadable("contents", f"the contents must be an array, got {_kind(listed)}")
        read.extend(_content(content, f"contents[{i}]") for i, content in enumerate(listed))
    _read_ids([(role, items) for role, items, _ in read], sent)
    recognised: dict[int, str] = {}
    messages = tuple(
        CourseRequestMessage(role, tuple(_block(item, recognised) for item in items))
        for role, items, _ in read
    )
    places = tuple((place,) * len(items) for _, items, place in read)
    tools = _tools(fields.get("tools"))
    request = CourseModelRequest(request_id, messages, tools)
    return ReadRequest(request, places, recognised=recognised)


def _fields(owner: PlainObject, place: str, *, part: bool = False) -> PlainObject:
    """``owner`` by its camelCase keys. A key the reader reads given in both spellings
    is a read problem (for a part, any key: each is its payload or marks it); of another
    key, the first spelling is kept, unread."""
    if not any("_" in key for key in owner):
        return owner  # what google-genai sends, but for a few schema keys
    fields: PlainObject = {}
    spelled: dict[str, str] = {}
    for key, value in owner.items():
        camel = _SNAKE.sub(lambda match: match.group(1).upper(), key)
        if camel in fields:
            if part or camel in _READ:
                raise unreadable(
                    field_at(place, camel),
                    f"the field is given twice, as {quote(spelled[camel])} and {quote(key)}",
                )
            continue
        fields[camel] = value
        spelled[camel] = key
    return fields


_READ: Final = frozenset(
    {
        "systemInstruction",
        "contents",
        "tools",
        "role",
        "parts",
        "name",
        "args",
        "id",
        "response",
        "functionDeclarations",
        "description",
        "parameters",
        "parametersJsonSchema",
    }
)
"""The keys read from the objects other than parts."""


_NO_ARGUMENTS: Final = frozen_object({})


def _content(content: PlainJson, place: str) -> tuple[CourseRequestRole, list[_Item], str]:
    """One of ``contents``: its role (none or ``""``: ``user``, as Gemini reads it) and
    its parts."""
    if type(content) is not dict:
        raise unreadable(place, f"a content must be an object, got {_kind(content)}")
    fields = _fields(content, place)
    word = optional_string(fields, "role", place, "a content")
    role = _ROLES.get(word or "user")
    if role is None:
        raise unreadable(
            f"{place}.role",
            f"unknown role {quote(cast(str, word))} (a content is 'user', 'model', 'function' "
            "or 'tool')",
        )
    return role, _parts(fields, place), place


def _parts(content: PlainObject, place: str) -> list[_Item]:
    """A Content's parts, read in order (none: no parts)."""
    parts = content.get("parts")
    if parts is None:
        return []
    if type(parts) is not list:
        raise unreadable(
            f"{place}.parts", f"a content's parts must be an array, got {_kind(parts)}"
        )
    items: list[_Item] = []
    for index, part in enumerate(parts):
        items.extend(_part(part, f"{place}.parts[{index}]"))
    return items


def _part(part: PlainJson, place: str) -> tuple[_Item, ...]:
    """One part: its one payload, and its ``thoughtSignature``. A thought is a thinking
    block (its text, empty or none); a signed text that is no thought is its text, then
    the signature alone, as import reads it."""
    if type(part) is not dict:
        raise unreadable(place, f"a part must be an object, got {_kind(part)}")
    fields = _fields(part, place, part=True)
    payload = [key for key in fields if key not in _PART_METADATA]
    signature = optional_string(fields, "thoughtSignature", place, "a part")
    thought = fields.get("thought")
    if thought is not None and type(thought) is not bool:
        raise mistyped(fields, "thought", "a boolean", place, "a part")
    if not payload and (thought or signature is not None):
        return (CourseThinkingBlock("", signature),)  # a signature alone, as Gemini sends it
    if len(payload) != 1:
        shown = ", ".join(quote(key) for key in payload) if payload else "none"
        raise unreadable(place, f"a part holds exactly one kind of data, got {shown}")
    kind = payload[0]
    if kind == "text":
        text = string_field(fields, "text", place, "a text part")
        if thought:
            return (CourseThinkingBlock(text, signature),)
        if signature is None:
            return (CourseTextBlock(text),)
        return CourseTextBlock(text), CourseThinkingBlock("", signature)
    if kind in ("functionCall", "functionResponse"):
        value = fields[kind]
        if type(value) is not dict:
            raise mistyped(fields, kind, "an object", place, "a part")
        inner = f"{place}.{kind}"
        if kind == "functionCall":
            return (_call(_fields(value, inner), inner, signature),)
        return (_answer(_fields(value, inner), inner),)
    return (
        CourseOtherBlock(kind, frozen_object(part)),
    )  # inlineData, fileData, executableCode, ...


def _call(call: PlainObject, place: str, signature: str | None) -> _Call:
    what = "a functionCall"
    name = string_field(call, "name", place, what)
    args = optional_object(call, "args", place, what)
    call_id = optional_string(call, "id", place, what)
    return _Call(name, _NO_ARGUMENTS if args is None else args, call_id, signature)


def _answer(answer: PlainObject, place: str) -> _Answer:
    what = "a functionResponse"
    name = string_field(answer, "name", place, what)
    response = optional_object(answer, "response", place, what)
    return _Answer(name, response, optional_string(answer, "id", place, what))


def _block(item: _Item, recognised: dict[int, str]) -> CourseRequestBlock:
    if type(item) is _Call:
        block = CourseToolCallBlock(item.id, item.name, item.args, signature=item.signature)
        if item.sent_id is not None and item.sent_id != item.id:
            recognised[id(block)] = item.sent_id
        return block
    if type(item) is _Answer:
        return CourseToolResultBlock(item.id or "", item.response)
    return cast(CourseRequestBlock, item)


# -- ids ------------------------------------------------------------------------------------


def _read_ids(contents: list[tuple[CourseRequestRole, list[_Item]]], sent: SentLog) -> None:
    """Give every call and response the id it stands for.

    A turn is a run of ``model`` contents (streaming with automatic function calling,
    google-genai sends each chunk's content as one of its own); the responses in the
    contents after it, up to the next turn, answer its calls.
    """
    calls: list[_Call] = []
    answers: list[_Answer] = []
    assistant = False
    index = _SentCalls(sent)
    for role, items in contents:
        if role == "assistant" and not assistant:
            _read_turn(calls, answers, index)
            calls, answers = [], []
        assistant = role == "assistant"
        for item in items:
            if type(item) is _Call:
                calls.append(item)
            elif type(item) is _Answer:
                answers.append(item)
    _read_turn(calls, answers, index)


def _read_turn(calls: list[_Call], answers: list[_Answer], sent: _SentCalls) -> None:
    """A call's id: the wire's, else the recognised call's (``_recognise``), else ``""``.
    A response answers the call of its id when both carry one, else the k-th response
    of a name the k-th call of that name; without an id it takes that call's."""
    _recognise(calls, sent)
    by_id = {call.wire_id: call for call in calls if call.wire_id is not None}
    answered: set[int] = set()
    by_name: list[_Answer] = []
    for answer in answers:
        call = by_id.get(answer.id) if answer.id is not None else None
        if call is None:
            by_name.append(answer)
        else:
            answered.add(id(call))
    for answer in by_name:
        found = next((c for c in calls if c.name == answer.name and id(c) not in answered), None)
        if found is not None:
            answered.add(id(found))
            if answer.id is None:
                answer.id = found.id


_Sent = tuple[CourseToolCallBlock, object]
"""A call this server sent, and its arguments' ``_json_key``."""


class _SentCalls:
    """The Gemini responses this server sent, by the calls they hold (name and
    arguments), most recent first; indexed once a call without an id asks."""

    __slots__ = ("_by_call", "_log")

    def __init__(self, log: SentLog) -> None:
        self._log = log
        self._by_call: dict[tuple[str, object], list[list[_Sent]]] | None = None

    def has_sent(self, call_id: str) -> bool:
        """Whether this server sent a call with the id ``call_id``."""
        return self._log.call(call_id) is not None

    def holding(self, name: str, key: object) -> list[list[_Sent]]:
        """The calls of each response that sent a call of ``name`` and arguments ``key``."""
        if self._by_call is None:
            self._by_call = {}
            for response in self._log.recent():
                if response.format != FORMAT:
                    continue
                sent = [
                    (block, _json_key(block.arguments))
                    for block in response.content
                    if type(block) is CourseToolCallBlock
                ]
                for block, args in sent:
                    found = self._by_call.setdefault((block.name, args), [])
                    if not found or found[-1] is not sent:
                        found.append(sent)
        return self._by_call.get((name, key), [])


def _recognise(calls: list[_Call], sent: _SentCalls) -> None:
    """Read the calls that came without an id as the calls of the most recent response
    this server sent that holds them all, by name and ``args`` (as JSON values). The
    calls that came back under ids this server never sent (pydantic-ai names the calls
    Gemini sends without one) are recognised the same way, apart, keeping their ids."""
    for call in calls:
        if call.wire_id is not None:
            call.id = call.wire_id
    taken = {call.wire_id for call in calls if call.wire_id is not None}
    _recognise_together([call for call in calls if call.wire_id is None], taken, sent)
    foreign = [c for c in calls if c.wire_id is not None and not sent.has_sent(c.wire_id)]
    _recognise_together(foreign, taken, sent)


def _recognise_together(calls: list[_Call], taken: set[str], sent: _SentCalls) -> None:
    if not calls:
        return
    keys = [_json_key(call.args) for call in calls]
    for response in sent.holding(calls[0].name, keys[0]):
        pool = [(block, key) for block, key in response if block.id not in taken]
        ids = _matched(calls, keys, pool)
        if ids is not None:
            for call, call_id in zip(calls, ids, strict=True):
                call.sent_id = call_id
                if call.wire_id is None:
                    call.id = call_id
            return


def _matched(calls: list[_Call], keys: list[object], pool: list[_Sent]) -> list[str] | None:
    """The ids of a distinct call of ``pool`` for each of ``calls`` (the first unused of
    the same name and arguments), or ``None`` when one has none."""
    ids: list[str] = []
    for call, key in zip(calls, keys, strict=True):
        for index, (block, args) in enumerate(pool):
            if block.name == call.name and args == key:
                ids.append(block.id)
                del pool[index]
                break
        else:
            return None
    return ids


def _json_key(value: JsonValue) -> object:
    """A hashable key equal for equal JSON values: numbers by value (``1`` is ``1.0``),
    ``true`` and ``false`` only themselves, objects whatever their key order."""
    kind = type(value)
    if kind is bool:
        return ("bool", value)
    if kind is JsonObject:  # exact types: an ABC check costs a third
        items = cast("Mapping[str, JsonValue]", value).items()
        return ("object", frozenset([(key, _json_key(item)) for key, item in items]))
    if kind is JsonArray or kind is tuple:
        return ("array", tuple([_json_key(item) for item in cast("tuple[JsonValue]", value)]))
    return value  # a number (1 == 1.0, with the same hash), a string or null


# -- tools ----------------------------------------------------------------------------------


def _tools(tools: PlainJson) -> tuple[CourseTool, ...]:
    """Each ``tools[].functionDeclarations[]``; other tools (``googleSearch``,
    ``codeExecution``, ...) are skipped."""
    if tools is None:
        return ()
    if type(tools) is not list:
        raise unreadable("tools", f"the tools must be an array, got {_kind(tools)}")
    found: list[CourseTool] = []
    for index, tool in enumerate(tools):
        place = f"tools[{index}]"
        if type(tool) is not dict:
            raise unreadable(place, f"a tool must be an object, got {_kind(tool)}")
        declarations = _fields(tool, place).get("functionDeclarations")
        if declarations is None:
            continue
        if type(declarations) is not list:
            raise unreadable(
                f"{place}.functionDeclarations",
                f"a tool's functionDeclarations must be an array, got {_kind(declarations)}",
            )
        for n, declaration in enumerate(declarations):
            found.append(_declaration(declaration, f"{place}.functionDeclarations[{n}]"))
    return tuple(found)


def _declaration(declaration: PlainJson, place: str) -> CourseTool:
    """A function declaration: its ``parametersJsonSchema``, else its ``parameters``."""
    if type(declaration) is not dict:
        raise unreadable(
            place, f"a function declaration must be an object, got {_kind(declaration)}"
        )
    fields = _fields(declaration, place)
    what = "a function declaration"
    name = string_field(fields, "name", place, what)
    description = optional_string(fields, "description", place, what)
    schema = optional_object(fields, "parametersJsonSchema", place, what)
    if schema is None:
        schema = optional_object(fields, "parameters", place, what)
    return CourseTool(name, description, schema)
