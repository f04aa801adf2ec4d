"""The baseline: what a user would build instead of ``course``, with pydantic v2.

An honest attempt at the same contract, given every benefit of the doubt:

- the fixture envelope is a strict, closed (``extra="forbid"``), frozen pydantic model;
- construction snapshots every record list with ``copy.deepcopy`` (one memo, so
  shared sub-objects stay shared, as ``course`` does);
- each record is judged in the SPEC's order: after the terminal, not an object or no
  string ``type``, unknown ``type``, out of order, then the payload through a strict
  discriminated union on ``type`` (``extra="forbid"``, frozen models), then the
  meaning (duplicate tool-call ids, a mismatched end, a contradicting stop reason,
  a transport error);
- usage accepts each count under exactly one alias (``AliasChoices``; with
  ``extra="forbid"`` pydantic rejects the unused second alias when both are given);
- chunks, blocks, the message and the response are frozen pydantic models built with
  their ordinary validating constructors.

Schema version 2, as far as the ``thinking`` workload needs it (and judged as fully):
thinking deltas and signatures (a signature right after a delta of its open block,
else ``PROVIDER_OUT_OF_ORDER``; consecutive deltas form one block), usage details
under either alias with their invariants (a ``model_validator``), and the six stop
reasons, the four new ones allowing tool calls and needing none.

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

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    InstanceOf,
    JsonValue,
    TypeAdapter,
    ValidationError,
    model_validator,
)

__all__ = [
    "AssistantMessage",
    "BaselineAdapter",
    "BaselineError",
    "BaselineStream",
    "Chunk",
    "ModelResponse",
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

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)


class BaselineError(Exception):
    """A failure, with the same code names ``course`` uses."""

    def __init__(self, code: str, message: str, response_index: int, record_index: int) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.response_index = response_index
        self.record_index = record_index


# -- the wire records (input) -----------------------------------------------------------


class ResponseStart(BaseModel):
    model_config = _STRICT
    type: Literal["response_start"]
    response_id: str = Field(alias="responseId", min_length=1)
    role: Literal["assistant"]


class TextDelta(BaseModel):
    model_config = _STRICT
    type: Literal["text_delta"]
    text: str


class ToolCall(BaseModel):
    model_config = _STRICT
    type: Literal["tool_call"]
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: dict[str, JsonValue]


class Usage(BaseModel):
    model_config = _STRICT
    input_tokens: int = Field(
        validation_alias=AliasChoices("inputTokens", "input_tokens"), ge=0, le=MAX_TOKENS
    )
    output_tokens: int = Field(
        validation_alias=AliasChoices("outputTokens", "output_tokens"), ge=0, le=MAX_TOKENS
    )


class ResponseEnd(BaseModel):
    model_config = _STRICT
    type: Literal["response_end"]
    response_id: str = Field(alias="responseId")
    stop_reason: Literal["stop", "tool_call"] = Field(alias="stopReason")
    usage: Usage


class TransportError(BaseModel):
    model_config = _STRICT
    type: Literal["transport_error"]
    message: str
    code: str = ""  # optional means absent: strict ``str`` refuses ``null``


Record = Annotated[
    ResponseStart | TextDelta | ToolCall | ResponseEnd | TransportError,
    Field(discriminator="type"),
]
RECORD: TypeAdapter[Record] = TypeAdapter(Record)
RECORD_TYPES = frozenset(
    ("response_start", "text_delta", "tool_call", "response_end", "transport_error")
)
NEEDS_START = frozenset(("text_delta", "tool_call", "response_end"))


# -- version 2, as far as the thinking workload goes --------------------------------------


class ThinkingDelta(BaseModel):
    model_config = _STRICT
    type: Literal["thinking_delta"]
    text: str


class ThinkingSignature(BaseModel):
    model_config = _STRICT
    type: Literal["thinking_signature"]
    signature: str = Field(min_length=1)


def _detail(first: str, second: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(first, second), ge=0, le=MAX_TOKENS)


class UsageV2(Usage):
    cache_read_tokens: int | None = _detail("cacheReadTokens", "cache_read_tokens")
    cache_write_tokens: int | None = _detail("cacheWriteTokens", "cache_write_tokens")
    reasoning_tokens: int | None = _detail("reasoningTokens", "reasoning_tokens")

    @model_validator(mode="after")
    def _included(self) -> UsageV2:
        cached = (self.cache_read_tokens or 0) + (self.cache_write_tokens or 0)
        if cached > self.input_tokens or (self.reasoning_tokens or 0) > self.output_tokens:
            raise ValueError("a usage detail exceeds the count that includes it")
        return self


StopReasonV2 = Literal["stop", "tool_call", "length", "content_filter", "refusal", "pause_turn"]


class ResponseEndV2(BaseModel):
    model_config = _STRICT
    type: Literal["response_end"]
    response_id: str = Field(alias="responseId")
    stop_reason: StopReasonV2 = Field(alias="stopReason")
    usage: UsageV2


RecordV2 = Annotated[
    ResponseStart
    | TextDelta
    | ToolCall
    | ThinkingDelta
    | ThinkingSignature
    | ResponseEndV2
    | TransportError,
    Field(discriminator="type"),
]
RECORD_V2: TypeAdapter[RecordV2] = TypeAdapter(RecordV2)
RECORD_TYPES_V2 = RECORD_TYPES | {"thinking_delta", "thinking_signature"}
NEEDS_START_V2 = NEEDS_START | {"thinking_delta", "thinking_signature"}
STOP_REASONS = {
    "stop": "stop",
    "tool_call": "toolCall",
    "length": "length",
    "content_filter": "contentFilter",
    "refusal": "refusal",
    "pause_turn": "pauseTurn",
}


class _Envelope(BaseModel):
    model_config = _STRICT
    records: list[Any] | InstanceOf[AsyncIterable[Any]]


class _Fixture(BaseModel):
    model_config = _STRICT
    schema_version: Literal[1, 2] = Field(alias="schemaVersion")
    responses: list[_Envelope]


# -- the course values (output) ---------------------------------------------------------


class TextDeltaChunk(BaseModel):
    model_config = _STRICT
    text: str
    content_index: int
    type: Literal["textDelta"] = "textDelta"


class ToolCallChunk(BaseModel):
    model_config = _STRICT
    id: str
    name: str
    # ``Any``, not ``JsonValue``: the record's arguments were validated already, so
    # the baseline is spared a second recursive validation per chunk and block.
    arguments: dict[str, Any]
    content_index: int
    type: Literal["toolCall"] = "toolCall"


class ThinkingDeltaChunk(BaseModel):
    model_config = _STRICT
    text: str
    content_index: int
    type: Literal["thinkingDelta"] = "thinkingDelta"


class ThinkingSignatureChunk(BaseModel):
    model_config = _STRICT
    signature: str
    content_index: int
    type: Literal["thinkingSignature"] = "thinkingSignature"


Chunk = TextDeltaChunk | ToolCallChunk | ThinkingDeltaChunk | ThinkingSignatureChunk


class TextBlock(BaseModel):
    model_config = _STRICT
    text: str
    type: Literal["text"] = "text"


class ToolCallBlock(BaseModel):
    model_config = _STRICT
    id: str
    name: str
    arguments: dict[str, Any]
    type: Literal["toolCall"] = "toolCall"


class ThinkingBlock(BaseModel):
    model_config = _STRICT
    text: str
    signature: str | None = None
    type: Literal["thinking"] = "thinking"


class AssistantMessage(BaseModel):
    model_config = _STRICT
    id: str
    content: tuple[TextBlock | ToolCallBlock | ThinkingBlock, ...]
    role: Literal["assistant"] = "assistant"


class ModelResponse(BaseModel):
    model_config = _STRICT
    request_id: str
    response_id: str
    message: AssistantMessage
    stop_reason: Literal["stop", "toolCall", "length", "contentFilter", "refusal", "pauseTurn"]
    usage: Usage | UsageV2


# -- the state machine ------------------------------------------------------------------


class _Parser:
    __slots__ = (
        "content",
        "ended",
        "needs_start",
        "record",
        "record_types",
        "request_id",
        "response",
        "response_id",
        "response_index",
        "started",
        "thinking",
        "tool_ids",
    )

    def __init__(self, request_id: str, response_index: int, version: int = 1) -> None:
        self.request_id = request_id
        self.response_index = response_index
        self.started = False
        self.ended = False
        self.response_id = ""
        # A thinking block's texts while it is open, as a list (joined at the end).
        self.content: list[TextBlock | ToolCallBlock | list[str] | ThinkingBlock] = []
        self.thinking: list[str] | None = None
        self.tool_ids: set[str] = set()
        self.response: ModelResponse | None = None
        v2 = version == 2
        self.record: TypeAdapter[Any] = RECORD_V2 if v2 else RECORD
        self.record_types = RECORD_TYPES_V2 if v2 else RECORD_TYPES
        self.needs_start = NEEDS_START_V2 if v2 else NEEDS_START

    def _error(self, code: str, message: str, index: int) -> BaselineError:
        return BaselineError(code, message, self.response_index, index)

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
            event = self.record.validate_python(record)
        except ValidationError as exc:
            raise self._error("PROVIDER_MALFORMED_EVENT", str(exc), index) from exc
        if isinstance(event, ThinkingDelta):
            if self.thinking is None:
                self.thinking = []
                self.content.append(self.thinking)
            self.thinking.append(event.text)
            return ThinkingDeltaChunk(text=event.text, content_index=len(self.content) - 1)
        if isinstance(event, ThinkingSignature):
            if self.thinking is None:
                raise self._error("PROVIDER_OUT_OF_ORDER", "signature after no delta", index)
            content_index = len(self.content) - 1
            self.content[content_index] = ThinkingBlock(
                text="".join(self.thinking), signature=event.signature
            )
            self.thinking = None
            return ThinkingSignatureChunk(signature=event.signature, content_index=content_index)
        self.thinking = None  # any other record closes an open thinking block
        if isinstance(event, TextDelta):
            content_index = len(self.content)
            self.content.append(TextBlock(text=event.text))
            return TextDeltaChunk(text=event.text, content_index=content_index)
        if isinstance(event, ToolCall):
            if event.id in self.tool_ids:
                raise self._error("PROVIDER_DUPLICATE_TOOL_CALL", event.id, index)
            self.tool_ids.add(event.id)
            content_index = len(self.content)
            self.content.append(
                ToolCallBlock(id=event.id, name=event.name, arguments=event.arguments)
            )
            return ToolCallChunk(
                id=event.id, name=event.name, arguments=event.arguments, content_index=content_index
            )
        if isinstance(event, ResponseStart):
            self.started = True
            self.response_id = event.response_id
            return None
        if isinstance(event, ResponseEnd | ResponseEndV2):
            if event.response_id != self.response_id:
                raise self._error("PROVIDER_RESPONSE_MISMATCH", event.response_id, index)
            stop = event.stop_reason
            if (stop == "tool_call" and not self.tool_ids) or (stop == "stop" and self.tool_ids):
                raise self._error("PROVIDER_STOP_REASON_MISMATCH", event.stop_reason, index)
            self.ended = True
            content = tuple(
                ThinkingBlock(text="".join(block)) if isinstance(block, list) else block
                for block in self.content
            )
            self.response = ModelResponse(
                request_id=self.request_id,
                response_id=event.response_id,
                message=AssistantMessage(id="message-" + event.response_id, content=content),
                stop_reason=STOP_REASONS[stop],  # type: ignore[arg-type]
                usage=event.usage,
            )
            return None
        raise self._error("PROVIDER_TRANSPORT_ERROR", event.message, index)

    def finish(self, index: int) -> ModelResponse:
        if self.response is None:
            raise self._error("PROVIDER_MISSING_TERMINAL", "no response_end", index)
        return self.response


class BaselineStream:
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
        self._error: BaselineError | None = None
        self._steps = self._run()

    def __aiter__(self) -> BaselineStream:
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
        except BaselineError as error:
            self._error = error
            raise


class BaselineAdapter:
    """Validates the envelope, deep-copies every record list, then replays it."""

    __slots__ = ("_queue", "_version")

    def __init__(self, fixture: object) -> None:
        try:
            parsed = _Fixture.model_validate(fixture)
        except ValidationError as exc:
            raise BaselineError("PROVIDER_INVALID_FIXTURE", str(exc), -1, -1) from exc
        self._version = parsed.schema_version
        memo: dict[int, Any] = {}
        self._queue: deque[tuple[int, list[Any] | AsyncIterable[Any]]] = deque(
            (
                index,
                copy.deepcopy(response.records, memo)
                if isinstance(response.records, list)
                else response.records,
            )
            for index, response in enumerate(parsed.responses)
        )

    def stream(self, request_id: str) -> BaselineStream:
        if not self._queue:
            raise BaselineError("PROVIDER_EXHAUSTED", "no response left", -1, -1)
        index, records = self._queue.popleft()
        return BaselineStream(request_id, index, records, self._version)


# -- comparison with course's to_dict() ----------------------------------------------


def chunk_dict(chunk: Chunk) -> dict[str, object]:
    """The chunk in the course protocol's ``to_dict()`` shape."""
    if isinstance(chunk, TextDeltaChunk | ThinkingDeltaChunk):
        return {"type": chunk.type, "text": chunk.text, "contentIndex": chunk.content_index}
    if isinstance(chunk, ThinkingSignatureChunk):
        return {
            "type": chunk.type,
            "signature": chunk.signature,
            "contentIndex": chunk.content_index,
        }
    return {
        "type": chunk.type,
        "id": chunk.id,
        "name": chunk.name,
        "arguments": chunk.arguments,
        "contentIndex": chunk.content_index,
    }


def response_dict(response: ModelResponse) -> dict[str, object]:
    """The response in the course protocol's ``to_dict()`` shape."""
    content: list[dict[str, object]] = []
    for block in response.message.content:
        if isinstance(block, TextBlock):
            content.append({"type": block.type, "text": block.text})
        elif isinstance(block, ThinkingBlock):
            thinking: dict[str, object] = {"type": block.type, "text": block.text}
            if block.signature is not None:
                thinking["signature"] = block.signature
            content.append(thinking)
        else:
            content.append(
                {
                    "type": block.type,
                    "id": block.id,
                    "name": block.name,
                    "arguments": block.arguments,
                }
            )
    return {
        "requestId": response.request_id,
        "responseId": response.response_id,
        "message": {"id": response.message.id, "role": response.message.role, "content": content},
        "stopReason": response.stop_reason,
        "usage": _usage_dict(response.usage),
    }


def _usage_dict(usage: Usage | UsageV2) -> dict[str, object]:
    plain: dict[str, object] = {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
    }
    if isinstance(usage, UsageV2):
        for key, count in (
            ("cacheReadTokens", usage.cache_read_tokens),
            ("cacheWriteTokens", usage.cache_write_tokens),
            ("reasoningTokens", usage.reasoning_tokens),
        ):
            if count is not None:
                plain[key] = count
    return plain
