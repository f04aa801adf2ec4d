"""The msgspec peer: what a speed-minded user would build instead of ``course``.

The same contract as the pydantic baseline (``baseline_pydantic.py``), written with the
fastest validation library Python has, and given every benefit of the doubt:

- construction checks the fixture envelope by hand (a closed object, the version, a
  closed object per response) and snapshots every record list with ``copy.deepcopy``
  (one memo, so shared sub-objects stay shared, as ``course`` does);
- each record is judged in the SPEC's order: after the terminal, not an object or no
  string ``type``, unknown ``type``, out of order, then the payload through
  ``msgspec.convert`` (strict) into the frozen, tagged ``msgspec.Struct`` its ``type``
  names, with ``forbid_unknown_fields``, then the meaning (duplicate tool-call ids, a
  mismatched end, a contradicting stop reason, a transport error);
- usage is a ``dict`` of bounded ``int`` counts (msgspec has no alias choices), whose
  aliases are checked by hand: each count under exactly one alias, no other key;
- chunks, blocks, the message and the response are frozen ``msgspec.Struct`` values
  (built by their C constructors; msgspec leaves a struct of scalars untracked by the
  garbage collector).

Schema version 2 as far as the ``thinking`` workload needs it (and judged as fully):
thinking deltas and signatures, usage details under either alias with their
invariants, and the six stop reasons.

It yields the same chunks and the same final response as ``course`` (checked by
``equivalence.py`` before anything is timed). It leaves out what only costs time in
edge cases: abort signals, source claiming and cleanup rules, plain-JSON checks at
construction. It is a bench-only dependency, never a run-time one.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct, field

__all__ = [
    "AssistantMessage",
    "MsgspecAdapter",
    "MsgspecError",
    "MsgspecStream",
    "TextBlock",
    "TextDeltaChunk",
    "ThinkingBlock",
    "ThinkingDeltaChunk",
    "ThinkingSignatureChunk",
    "ToolCallBlock",
    "ToolCallChunk",
    "chunk_dict",
    "response_dict",
]

MAX_TOKENS = 2**53 - 1

NonEmpty = Annotated[str, Meta(min_length=1)]
Count = Annotated[int, Meta(ge=0, le=MAX_TOKENS)]


class MsgspecError(Exception):
    """A failure, with the same code names ``course`` uses."""

    def __init__(self, code: str, message: str, response_index: int, record_index: int) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.response_index = response_index
        self.record_index = record_index


# -- the wire records (input) -----------------------------------------------------------


class _Record(Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class ResponseStart(_Record, frozen=True, tag="response_start"):
    response_id: NonEmpty = field(name="responseId")
    role: Literal["assistant"]


class TextDelta(_Record, frozen=True, tag="text_delta"):
    text: str


class ToolCall(_Record, frozen=True, tag="tool_call"):
    id: NonEmpty
    name: NonEmpty
    arguments: dict[str, Any]


class ResponseEnd(_Record, frozen=True, tag="response_end"):
    response_id: str = field(name="responseId")
    stop_reason: Literal["stop", "tool_call"] = field(name="stopReason")
    usage: dict[str, Count]


class TransportError(_Record, frozen=True, tag="transport_error"):
    message: str
    code: str = ""  # optional means absent: strict ``str`` refuses ``null``


class ThinkingDelta(_Record, frozen=True, tag="thinking_delta"):
    text: str


class ThinkingSignature(_Record, frozen=True, tag="thinking_signature"):
    signature: NonEmpty


StopReasonV2 = Literal["stop", "tool_call", "length", "content_filter", "refusal", "pause_turn"]


class ResponseEndV2(_Record, frozen=True, tag="response_end"):
    response_id: str = field(name="responseId")
    stop_reason: StopReasonV2 = field(name="stopReason")
    usage: dict[str, Count]


# Each record type's struct, by its tag. ``msgspec.convert`` into the one struct the
# ``type`` names (checked first, by the order rules) is about thirty times faster than
# into the union of them all, which msgspec resolves again on every call.
RECORDS: dict[str, type[_Record]] = {
    cls.__struct_config__.tag: cls  # type: ignore[misc]
    for cls in (ResponseStart, TextDelta, ToolCall, ResponseEnd, TransportError)
}
RECORDS_V2: dict[str, type[_Record]] = {
    **RECORDS,
    "response_end": ResponseEndV2,
    "thinking_delta": ThinkingDelta,
    "thinking_signature": ThinkingSignature,
}
RECORD_TYPES = frozenset(RECORDS)
NEEDS_START = frozenset(("text_delta", "tool_call", "response_end"))
RECORD_TYPES_V2 = frozenset(RECORDS_V2)
NEEDS_START_V2 = NEEDS_START | {"thinking_delta", "thinking_signature"}
STOP_REASONS = {
    "stop": "stop",
    "tool_call": "toolCall",
    "length": "length",
    "content_filter": "contentFilter",
    "refusal": "refusal",
    "pause_turn": "pauseTurn",
}
USAGE_ALIASES = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"))
DETAIL_ALIASES = (
    ("cacheReadTokens", "cache_read_tokens"),
    ("cacheWriteTokens", "cache_write_tokens"),
    ("reasoningTokens", "reasoning_tokens"),
)
USAGE_KEYS = frozenset(alias for pair in USAGE_ALIASES for alias in pair)
USAGE_KEYS_V2 = USAGE_KEYS | {alias for pair in DETAIL_ALIASES for alias in pair}


# -- the course values (output) ---------------------------------------------------------


class TextDeltaChunk(Struct, frozen=True):
    text: str
    content_index: int
    type: Literal["textDelta"] = "textDelta"


class ToolCallChunk(Struct, frozen=True):
    id: str
    name: str
    arguments: dict[str, Any]
    content_index: int
    type: Literal["toolCall"] = "toolCall"


class ThinkingDeltaChunk(Struct, frozen=True):
    text: str
    content_index: int
    type: Literal["thinkingDelta"] = "thinkingDelta"


class ThinkingSignatureChunk(Struct, frozen=True):
    signature: str
    content_index: int
    type: Literal["thinkingSignature"] = "thinkingSignature"


Chunk = TextDeltaChunk | ToolCallChunk | ThinkingDeltaChunk | ThinkingSignatureChunk


class TextBlock(Struct, frozen=True):
    text: str
    type: Literal["text"] = "text"


class ToolCallBlock(Struct, frozen=True):
    id: str
    name: str
    arguments: dict[str, Any]
    type: Literal["toolCall"] = "toolCall"


class ThinkingBlock(Struct, frozen=True):
    text: str
    signature: str | None = None
    type: Literal["thinking"] = "thinking"


class Usage(Struct, frozen=True):
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


class AssistantMessage(Struct, frozen=True):
    id: str
    content: tuple[TextBlock | ToolCallBlock | ThinkingBlock, ...]
    role: Literal["assistant"] = "assistant"


class ModelResponse(Struct, frozen=True):
    request_id: str
    response_id: str
    message: AssistantMessage
    stop_reason: str
    usage: Usage


def _count(counts: dict[str, int], first: str, second: str) -> int | None:
    """The count under exactly one of its aliases (``None`` if neither), or ``ValueError``."""
    if first in counts:
        if second in counts:
            raise ValueError(f"both `{first}` and `{second}`")
        return counts[first]
    return counts.get(second)


def _usage(counts: dict[str, int], version: int) -> Usage:
    """The usage of a usage object whose counts msgspec bounded, or ``ValueError``."""
    if not (USAGE_KEYS_V2 if version >= 2 else USAGE_KEYS).issuperset(counts):
        raise ValueError("unknown usage field")
    inputs = _count(counts, *USAGE_ALIASES[0])
    outputs = _count(counts, *USAGE_ALIASES[1])
    if inputs is None or outputs is None:
        raise ValueError("a usage count is missing")
    if version < 2:
        return Usage(inputs, outputs)
    cache_read, cache_write, reasoning = (_count(counts, *pair) for pair in DETAIL_ALIASES)
    if (cache_read or 0) + (cache_write or 0) > inputs or (reasoning or 0) > outputs:
        raise ValueError("a usage detail exceeds the count that includes it")
    return Usage(inputs, outputs, cache_read, cache_write, reasoning)


# -- the state machine ------------------------------------------------------------------


class _Parser:
    __slots__ = (
        "content",
        "ended",
        "needs_start",
        "record_types",
        "records",
        "request_id",
        "response",
        "response_id",
        "response_index",
        "started",
        "thinking",
        "tool_ids",
        "version",
    )

    def __init__(self, request_id: str, response_index: int, version: int = 1) -> None:
        self.request_id = request_id
        self.response_index = response_index
        self.version = version
        self.started = False
        self.ended = False
        self.response_id = ""
        # A thinking block's texts while it is open, as a list (joined at the end).
        self.content: list[TextBlock | ToolCallBlock | list[str] | ThinkingBlock] = []
        self.thinking: list[str] | None = None
        self.tool_ids: set[str] = set()
        self.response: ModelResponse | None = None
        v2 = version == 2
        self.records = RECORDS_V2 if v2 else RECORDS
        self.record_types = RECORD_TYPES_V2 if v2 else RECORD_TYPES
        self.needs_start = NEEDS_START_V2 if v2 else NEEDS_START

    def _error(self, code: str, message: str, index: int) -> MsgspecError:
        return MsgspecError(code, message, self.response_index, index)

    def feed(self, record: object, index: int) -> Chunk | None:
        if self.ended:
            if isinstance(record, dict) and record.get("type") == "response_end":
                raise self._error("PROVIDER_DUPLICATE_TERMINAL", "second terminal", index)
            raise self._error("PROVIDER_INVALID_TERMINAL", "record after the terminal", index)
        if not isinstance(record, dict):
            raise self._error("PROVIDER_MALFORMED_EVENT", "not an object", index)
        kind = record.get("type")
        if not isinstance(kind, str):
            raise self._error("PROVIDER_MALFORMED_EVENT", "no string `type`", index)
        if kind not in self.record_types:
            raise self._error("PROVIDER_UNKNOWN_EVENT", f"unknown type {kind!r}", index)
        if not self.started and kind in self.needs_start:
            raise self._error("PROVIDER_MISSING_START", f"{kind} before the start", index)
        if self.started and kind == "response_start":
            raise self._error("PROVIDER_DUPLICATE_START", "second start", index)
        try:
            event = msgspec.convert(record, self.records[kind])
        except msgspec.ValidationError as exc:
            raise self._error("PROVIDER_MALFORMED_EVENT", str(exc), index) from exc
        if type(event) is TextDelta:
            self.thinking = None  # any other record closes an open thinking block
            content_index = len(self.content)
            self.content.append(TextBlock(event.text))
            return TextDeltaChunk(event.text, content_index)
        if type(event) is ThinkingDelta:
            if self.thinking is None:
                self.thinking = []
                self.content.append(self.thinking)
            self.thinking.append(event.text)
            return ThinkingDeltaChunk(event.text, len(self.content) - 1)
        if type(event) is ThinkingSignature:
            if self.thinking is None:
                raise self._error("PROVIDER_OUT_OF_ORDER", "signature after no delta", index)
            content_index = len(self.content) - 1
            self.content[content_index] = ThinkingBlock("".join(self.thinking), event.signature)
            self.thinking = None
            return ThinkingSignatureChunk(event.signature, content_index)
        self.thinking = None
        if type(event) is ToolCall:
            if event.id in self.tool_ids:
                raise self._error("PROVIDER_DUPLICATE_TOOL_CALL", event.id, index)
            self.tool_ids.add(event.id)
            content_index = len(self.content)
            self.content.append(ToolCallBlock(event.id, event.name, event.arguments))
            return ToolCallChunk(event.id, event.name, event.arguments, content_index)
        if type(event) is ResponseStart:
            self.started = True
            self.response_id = event.response_id
            return None
        if type(event) is ResponseEnd or type(event) is ResponseEndV2:
            self._end(event, index)
            return None
        assert type(event) is TransportError
        raise self._error("PROVIDER_TRANSPORT_ERROR", event.message, index)

    def _end(self, event: ResponseEnd | ResponseEndV2, index: int) -> None:
        try:
            usage = _usage(event.usage, self.version)
        except ValueError as exc:
            raise self._error("PROVIDER_MALFORMED_EVENT", str(exc), index) from exc
        if event.response_id != self.response_id:
            raise self._error("PROVIDER_RESPONSE_MISMATCH", event.response_id, index)
        stop = event.stop_reason
        if (stop == "tool_call" and not self.tool_ids) or (stop == "stop" and self.tool_ids):
            raise self._error("PROVIDER_STOP_REASON_MISMATCH", stop, index)
        self.ended = True
        content = tuple(
            [ThinkingBlock("".join(b)) if isinstance(b, list) else b for b in self.content]
        )
        self.response = ModelResponse(
            self.request_id,
            event.response_id,
            AssistantMessage("message-" + event.response_id, content),
            STOP_REASONS[stop],
            usage,
        )

    def finish(self, index: int) -> ModelResponse:
        if self.response is None:
            raise self._error("PROVIDER_MISSING_TERMINAL", "no response_end", index)
        return self.response


class MsgspecStream:
    """Async iterator of chunks; ``await result()`` drives to the end and returns."""

    __slots__ = ("_error", "_parser", "_pending", "_records", "_response", "_steps")

    def __init__(
        self,
        request_id: str,
        response_index: int,
        records: list[Any] | AsyncIterable[Any],
        version: int = 1,
    ) -> None:
        self._parser = _Parser(request_id, response_index, version)
        self._records = records
        self._pending: deque[Chunk] = deque()
        self._response: ModelResponse | None = None
        self._error: MsgspecError | None = None
        self._steps = self._run()

    def __aiter__(self) -> MsgspecStream:
        return self

    async def __anext__(self) -> Chunk:
        if self._pending:
            return self._pending.popleft()
        if self._error is not None:
            raise self._error
        return await self._steps.__anext__()

    async def result(self) -> ModelResponse:
        async for chunk in self._steps:
            self._pending.append(chunk)
        if self._error is not None:
            raise self._error
        if self._response is None:
            raise RuntimeError("the stream was closed before its end")
        return self._response

    async def aclose(self) -> None:
        await self._steps.aclose()

    async def _run(self) -> AsyncGenerator[Chunk, None]:
        parser = self._parser
        records = self._records
        index = 0
        try:
            if isinstance(records, list):
                for index, record in enumerate(records):
                    chunk = parser.feed(record, index)
                    if chunk is not None:
                        yield chunk
                index = len(records)
            else:
                try:
                    async for record in records:
                        chunk = parser.feed(record, index)
                        index += 1
                        if chunk is not None:
                            yield chunk
                finally:
                    aclose = getattr(records, "aclose", None)
                    if aclose is not None:
                        await aclose()
            self._response = parser.finish(index)
        except MsgspecError as error:
            self._error = error
            raise


def _closed(value: object, keys: frozenset[str], what: str) -> dict[str, Any]:
    if type(value) is not dict or value.keys() != keys:
        raise MsgspecError("PROVIDER_INVALID_FIXTURE", f"{what} is not a closed object", -1, -1)
    return value


_FIXTURE_KEYS = frozenset(("schemaVersion", "responses"))
_RESPONSE_KEYS = frozenset(("records",))


class MsgspecAdapter:
    """Checks the envelope, deep-copies every record list, then replays it."""

    __slots__ = ("_queue", "_version")

    def __init__(self, fixture: object) -> None:
        fields = _closed(fixture, _FIXTURE_KEYS, "the fixture")
        version, responses = fields["schemaVersion"], fields["responses"]
        if type(version) is not int or version not in (1, 2) or type(responses) is not list:
            raise MsgspecError("PROVIDER_INVALID_FIXTURE", "bad version or responses", -1, -1)
        self._version = version
        memo: dict[int, Any] = {}
        queue: deque[tuple[int, list[Any] | AsyncIterable[Any]]] = deque()
        for index, response in enumerate(responses):
            records = _closed(response, _RESPONSE_KEYS, f"response {index}")["records"]
            if type(records) is list:
                queue.append((index, copy.deepcopy(records, memo)))
            elif hasattr(type(records), "__aiter__"):
                queue.append((index, records))
            else:
                raise MsgspecError("PROVIDER_INVALID_FIXTURE", "bad records", index, -1)
        self._queue = queue

    def stream(self, request_id: str) -> MsgspecStream:
        if not self._queue:
            raise MsgspecError("PROVIDER_EXHAUSTED", "no response left", -1, -1)
        index, records = self._queue.popleft()
        return MsgspecStream(request_id, index, records, self._version)


# -- comparison with course's to_dict() ----------------------------------------------


def chunk_dict(chunk: Chunk) -> dict[str, object]:
    """The chunk in the course protocol's ``to_dict()`` shape."""
    if type(chunk) is ToolCallChunk:
        return {
            "type": chunk.type,
            "id": chunk.id,
            "name": chunk.name,
            "arguments": chunk.arguments,
            "contentIndex": chunk.content_index,
        }
    if type(chunk) is ThinkingSignatureChunk:
        return {
            "type": chunk.type,
            "signature": chunk.signature,
            "contentIndex": chunk.content_index,
        }
    assert type(chunk) is TextDeltaChunk or type(chunk) is ThinkingDeltaChunk
    return {"type": chunk.type, "text": chunk.text, "contentIndex": chunk.content_index}


def response_dict(response: ModelResponse) -> dict[str, object]:
    """The response in the course protocol's ``to_dict()`` shape."""
    content: list[dict[str, object]] = []
    for block in response.message.content:
        if type(block) is TextBlock:
            content.append({"type": block.type, "text": block.text})
        elif type(block) is ThinkingBlock:
            thinking: dict[str, object] = {"type": block.type, "text": block.text}
            if block.signature is not None:
                thinking["signature"] = block.signature
            content.append(thinking)
        else:
            assert type(block) is ToolCallBlock
            content.append(
                {
                    "type": block.type,
                    "id": block.id,
                    "name": block.name,
                    "arguments": block.arguments,
                }
            )
    usage = response.usage
    plain_usage: dict[str, object] = {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
    }
    for key, count in (
        ("cacheReadTokens", usage.cache_read_tokens),
        ("cacheWriteTokens", usage.cache_write_tokens),
        ("reasoningTokens", usage.reasoning_tokens),
    ):
        if count is not None:
            plain_usage[key] = count
    return {
        "requestId": response.request_id,
        "responseId": response.response_id,
        "message": {"id": response.message.id, "role": response.message.role, "content": content},
        "stopReason": response.stop_reason,
        "usage": plain_usage,
    }
