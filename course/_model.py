"""The course model protocol: the trusted, immutable values the adapter emits.

These are the only types that leave the boundary. Every one is a frozen, slotted
dataclass whose sequences are tuples and whose JSON objects are read-only mappings,
all the way down; ``to_dict()`` gives the protocol's own camelCase JSON, and ``repr``
is bounded however long the strings or large the arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Literal, TypeAlias, cast

from ._json import JsonObject, JsonValue, PlainJson, preview, refreeze, thaw, thaw_shared
from ._untrusted import type_name

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "CourseAssistantMessage",
    "CourseContentBlock",
    "CourseIncompleteToolCallBlock",
    "CourseIncompleteToolCallChunk",
    "CourseModelChunk",
    "CourseModelRequest",
    "CourseModelResponse",
    "CourseModelUsage",
    "CourseOtherBlock",
    "CourseRedactedThinkingBlock",
    "CourseRedactedThinkingChunk",
    "CourseRefusalBlock",
    "CourseRefusalDeltaChunk",
    "CourseRequestBlock",
    "CourseRequestMessage",
    "CourseRequestRole",
    "CourseStopReason",
    "CourseTextBlock",
    "CourseTextDeltaChunk",
    "CourseThinkingBlock",
    "CourseThinkingDeltaChunk",
    "CourseThinkingSignatureChunk",
    "CourseTool",
    "CourseToolCallBlock",
    "CourseToolCallChunk",
    "CourseToolResultBlock",
]

CourseStopReason: TypeAlias = Literal[
    "stop", "toolCall", "length", "contentFilter", "refusal", "pauseTurn"
]
"""Why the assistant stopped: a final answer, tool calls to run, or (schema version 2)
the token limit, a provider's filter, a refusal, or a turn the provider paused."""

_Memo: TypeAlias = dict[int, PlainJson]


def _bounded_repr(value: DataclassInstance) -> str:
    """``Class(field=..., ...)`` with every field shortened (see ``preview``); an
    optional field left at ``None`` is not shown, so a version-1 value reads as before."""
    shown = ", ".join(
        f"{spec.name}={preview(item, 100)}"
        for spec in fields(value)
        if spec.repr
        and ((item := getattr(value, spec.name)) is not None or spec.default is not None)
    )
    return f"{type(value).__qualname__}({shown})"


def _plain(value: object) -> object:
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def _frozen_arguments(owner: CourseToolCallChunk | CourseToolCallBlock) -> None:
    """Make a hand-built tool value's ``arguments`` read-only, or refuse them."""
    arguments: object = owner.arguments
    if type(arguments) is JsonObject:  # the adapter's own, or another value's
        return
    if type(arguments) is not dict:
        raise TypeError(
            f"{type(owner).__qualname__} needs `arguments` as a dict of plain JSON "
            f"(or another value's read-only arguments), got {type_name(arguments)}"
        )
    object.__setattr__(owner, "arguments", refreeze(cast(PlainJson, arguments)))


@dataclass(frozen=True, slots=True, repr=False)
class CourseModelRequest:
    """A request for the next response; the fixture adapter reads ``id`` only.

    ``serve`` reads each request body into one whose ``messages`` are
    ``CourseRequestMessage`` values and whose ``tools`` are ``CourseTool`` values. Built
    by hand it keeps whatever it is given (as a tuple): an agent may pass its own
    message objects, so the fields are typed ``object``.
    """

    id: str
    messages: tuple[object, ...] = ()
    tools: tuple[object, ...] = ()

    __repr__ = _bounded_repr

    def __post_init__(self) -> None:
        # Any iterable of messages or tools is kept as a tuple: the request is frozen.
        for name in ("messages", "tools"):
            value = getattr(self, name)
            if type(value) is not tuple:
                object.__setattr__(self, name, tuple(value))

    def to_dict(self) -> dict[str, object]:
        """Plain JSON: ``id``, ``messages`` and ``tools`` (items' own ``to_dict()``)."""
        return {
            "id": self.id,
            "messages": [_plain(m) for m in self.messages],
            "tools": [_plain(t) for t in self.tools],
        }


@dataclass(frozen=True, slots=True, repr=False)
class CourseTextDeltaChunk:
    """A piece of assistant text, streamed as it arrives."""

    text: str
    content_index: int
    type: Literal["textDelta"] = field(default="textDelta", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``text``, ``contentIndex``."""
        return {"type": self.type, "text": self.text, "contentIndex": self.content_index}


@dataclass(frozen=True, slots=True, repr=False)
class CourseToolCallChunk:
    """A complete tool call, streamed with the provider's own id.

    Built by hand, ``arguments`` may be a dict of plain JSON: it is copied into the
    read-only form (anything else is a ``TypeError``).
    """

    id: str
    name: str
    arguments: Mapping[str, JsonValue]
    content_index: int
    type: Literal["toolCall"] = field(default="toolCall", kw_only=True)
    signature: str | None = field(default=None, kw_only=True)
    """The provider's opaque signature of the call (schema version 2), else ``None``."""

    __repr__ = _bounded_repr

    def __post_init__(self) -> None:
        _frozen_arguments(self)

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``id``, ``name``, ``arguments``, ``contentIndex``, and
        ``signature`` when set."""
        plain: dict[str, PlainJson] = {
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "arguments": thaw(self.arguments),
            "contentIndex": self.content_index,
        }
        if self.signature is not None:
            plain["signature"] = self.signature
        return plain

    def __copy__(self) -> CourseToolCallChunk:
        return self

    def __deepcopy__(self, memo: object) -> CourseToolCallChunk:
        return self  # immutable all the way down


@dataclass(frozen=True, slots=True, repr=False)
class CourseIncompleteToolCallChunk:
    """A tool call the response was cut inside (schema version 2): its id, its name and
    the arguments text received, which need not be JSON."""

    id: str
    name: str
    arguments_text: str
    content_index: int
    type: Literal["incompleteToolCall"] = field(default="incompleteToolCall", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``id``, ``name``, ``argumentsText``, ``contentIndex``."""
        return {
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "argumentsText": self.arguments_text,
            "contentIndex": self.content_index,
        }


@dataclass(frozen=True, slots=True, repr=False)
class CourseThinkingDeltaChunk:
    """A piece of the model's thinking, streamed as it arrives (schema version 2)."""

    text: str
    content_index: int
    type: Literal["thinkingDelta"] = field(default="thinkingDelta", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``text``, ``contentIndex``."""
        return {"type": self.type, "text": self.text, "contentIndex": self.content_index}


@dataclass(frozen=True, slots=True, repr=False)
class CourseThinkingSignatureChunk:
    """The opaque signature that signs and closes a thinking block (schema version 2);
    ``content_index`` is the block it signs."""

    signature: str
    content_index: int
    type: Literal["thinkingSignature"] = field(default="thinkingSignature", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``signature``, ``contentIndex``."""
        return {
            "type": self.type,
            "signature": self.signature,
            "contentIndex": self.content_index,
        }


@dataclass(frozen=True, slots=True, repr=False)
class CourseRedactedThinkingChunk:
    """Thinking the provider sent encrypted, as opaque ``data`` (schema version 2)."""

    data: str
    content_index: int
    type: Literal["redactedThinking"] = field(default="redactedThinking", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``data``, ``contentIndex``."""
        return {"type": self.type, "data": self.data, "contentIndex": self.content_index}


@dataclass(frozen=True, slots=True, repr=False)
class CourseRefusalDeltaChunk:
    """A piece of the model's refusal text, streamed as it arrives (schema version 2)."""

    text: str
    content_index: int
    type: Literal["refusalDelta"] = field(default="refusalDelta", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``text``, ``contentIndex``."""
        return {"type": self.type, "text": self.text, "contentIndex": self.content_index}


CourseModelChunk: TypeAlias = (
    CourseTextDeltaChunk
    | CourseToolCallChunk
    | CourseIncompleteToolCallChunk
    | CourseThinkingDeltaChunk
    | CourseThinkingSignatureChunk
    | CourseRedactedThinkingChunk
    | CourseRefusalDeltaChunk
)
"""What a stream yields while a response is under way."""


@dataclass(frozen=True, slots=True, repr=False)
class CourseTextBlock:
    """Assistant text in a finished message (one per text delta, in order)."""

    text: str
    type: Literal["text"] = field(default="text", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``text``."""
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True, repr=False)
class CourseToolCallBlock:
    """A tool call in a finished message, with the provider's own id.

    Built by hand, ``arguments`` may be a dict of plain JSON: it is copied into the
    read-only form (anything else is a ``TypeError``).
    """

    id: str
    name: str
    arguments: Mapping[str, JsonValue]
    type: Literal["toolCall"] = field(default="toolCall", kw_only=True)
    signature: str | None = field(default=None, kw_only=True)
    """The provider's opaque signature of the call (schema version 2), else ``None``."""

    __repr__ = _bounded_repr

    def __post_init__(self) -> None:
        _frozen_arguments(self)

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``id``, ``name``, ``arguments``, and ``signature`` when set."""
        return self._to_dict({})

    def _to_dict(self, memo: _Memo) -> dict[str, PlainJson]:
        # The message's memo, so arguments that share stay shared.
        plain: dict[str, PlainJson] = {
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "arguments": thaw_shared(self.arguments, memo),
        }
        if self.signature is not None:
            plain["signature"] = self.signature
        return plain

    def __copy__(self) -> CourseToolCallBlock:
        return self

    def __deepcopy__(self, memo: object) -> CourseToolCallBlock:
        return self  # immutable all the way down


@dataclass(frozen=True, slots=True, repr=False)
class CourseIncompleteToolCallBlock:
    """A tool call the response was cut inside (schema version 2): ``arguments_text`` is
    its fragments joined, which need not be JSON."""

    id: str
    name: str
    arguments_text: str
    type: Literal["incompleteToolCall"] = field(default="incompleteToolCall", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``id``, ``name``, ``argumentsText``."""
        return {
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "argumentsText": self.arguments_text,
        }


@dataclass(frozen=True, slots=True, repr=False)
class CourseThinkingBlock:
    """The model's thinking (schema version 2): consecutive thinking deltas joined, and
    the signature that closed them, if any (to send back on the next turn)."""

    text: str
    signature: str | None = None
    type: Literal["thinking"] = field(default="thinking", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``text``, and ``signature`` when set."""
        plain: dict[str, PlainJson] = {"type": self.type, "text": self.text}
        if self.signature is not None:
            plain["signature"] = self.signature
        return plain


@dataclass(frozen=True, slots=True, repr=False)
class CourseRedactedThinkingBlock:
    """Thinking the provider sent encrypted, as opaque ``data`` (schema version 2)."""

    data: str
    type: Literal["redactedThinking"] = field(default="redactedThinking", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``data``."""
        return {"type": self.type, "data": self.data}


@dataclass(frozen=True, slots=True, repr=False)
class CourseRefusalBlock:
    """Refusal text in a finished message (schema version 2): one per refusal delta."""

    text: str
    type: Literal["refusal"] = field(default="refusal", kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``text``."""
        return {"type": self.type, "text": self.text}


CourseContentBlock: TypeAlias = (
    CourseTextBlock
    | CourseToolCallBlock
    | CourseIncompleteToolCallBlock
    | CourseThinkingBlock
    | CourseRedactedThinkingBlock
    | CourseRefusalBlock
)
"""One block of an assistant message's content."""


@dataclass(frozen=True, slots=True, repr=False)
class CourseToolResultBlock:
    """A tool's result sent back to the model, naming the call it answers.

    ``content`` is a ``str`` when the wire holds a string, else the wire's JSON value
    (read-only); ``is_error`` is Anthropic's ``is_error`` (else ``False``).
    """

    tool_call_id: str
    content: JsonValue
    is_error: bool = False
    type: Literal["toolResult"] = field(default="toolResult", kw_only=True)

    __repr__ = _bounded_repr

    def __post_init__(self) -> None:
        if type(self.content) in (dict, list):  # built by hand: keep it immutable
            object.__setattr__(self, "content", refreeze(cast(PlainJson, self.content)))

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``toolCallId``, ``content``, ``isError``."""
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "content": thaw(self.content),
            "isError": self.is_error,
        }


@dataclass(frozen=True, slots=True, repr=False)
class CourseOtherBlock:
    """A request block with no place of its own (an image, a file, audio, ...): ``kind``
    is its wire type, ``data`` the wire's JSON object for it, read-only."""

    kind: str
    data: Mapping[str, JsonValue]
    type: Literal["other"] = field(default="other", kw_only=True)

    __repr__ = _bounded_repr

    def __post_init__(self) -> None:
        if type(self.data) is dict:  # built by hand: keep it immutable
            object.__setattr__(self, "data", refreeze(cast(PlainJson, self.data)))

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``kind``, ``data``."""
        return {"type": self.type, "kind": self.kind, "data": thaw(self.data)}


CourseRequestBlock: TypeAlias = (
    CourseTextBlock
    | CourseToolCallBlock
    | CourseIncompleteToolCallBlock
    | CourseThinkingBlock
    | CourseRedactedThinkingBlock
    | CourseRefusalBlock
    | CourseToolResultBlock
    | CourseOtherBlock
)
"""One block of a request message. A tool call whose arguments text is not a JSON
object is a ``CourseIncompleteToolCallBlock``, its text kept as it came."""

CourseRequestRole: TypeAlias = Literal["system", "user", "assistant", "tool"]
"""Who a request message is from (a developer message is ``"system"``)."""


@dataclass(frozen=True, slots=True, repr=False)
class CourseRequestMessage:
    """One message of the history an agent sends, in the wire's order."""

    role: CourseRequestRole
    content: tuple[CourseRequestBlock, ...]

    __repr__ = _bounded_repr

    def __post_init__(self) -> None:
        if type(self.content) is not tuple:  # built by hand from a list: keep it immutable
            object.__setattr__(self, "content", tuple(self.content))

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``role``, ``content``."""
        return {"role": self.role, "content": [block.to_dict() for block in self.content]}


@dataclass(frozen=True, slots=True, repr=False)
class CourseTool:
    """A function tool the request offers the model (``None``: the wire left it out)."""

    name: str
    description: str | None = None
    parameters: Mapping[str, JsonValue] | None = None

    __repr__ = _bounded_repr

    def __post_init__(self) -> None:
        if type(self.parameters) is dict:  # built by hand: keep it immutable
            object.__setattr__(self, "parameters", refreeze(cast(PlainJson, self.parameters)))

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``name``, ``description``, ``parameters`` (``null`` when absent)."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": None if self.parameters is None else thaw(self.parameters),
        }


@dataclass(frozen=True, slots=True, repr=False)
class CourseAssistantMessage:
    """The assistant's message: id ``"message-" + responseId``, content in record order."""

    id: str
    content: tuple[CourseContentBlock, ...]
    role: Literal["assistant"] = field(default="assistant", kw_only=True)

    __repr__ = _bounded_repr

    def __post_init__(self) -> None:
        if type(self.content) is not tuple:  # built by hand from a list: keep it immutable
            object.__setattr__(self, "content", tuple(self.content))

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``id``, ``role``, ``content``."""
        memo: _Memo = {}  # one for the whole message: arguments that share stay shared
        return {
            "id": self.id,
            "role": self.role,
            "content": [
                block._to_dict(memo) if isinstance(block, CourseToolCallBlock) else block.to_dict()
                for block in self.content
            ],
        }


@dataclass(frozen=True, slots=True, repr=False)
class CourseModelUsage:
    """Token counts of one response.

    ``input_tokens`` is the whole input, cache reads and writes included;
    ``output_tokens`` the whole output, reasoning included. The details (schema version
    2) are ``None`` when the fixture does not give them.
    """

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int | None = field(default=None, kw_only=True)
    cache_write_tokens: int | None = field(default=None, kw_only=True)
    reasoning_tokens: int | None = field(default=None, kw_only=True)

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``inputTokens``, ``outputTokens``, and each of
        ``cacheReadTokens``, ``cacheWriteTokens``, ``reasoningTokens`` when set."""
        plain: dict[str, PlainJson] = {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
        }
        if self.cache_read_tokens is not None:
            plain["cacheReadTokens"] = self.cache_read_tokens
        if self.cache_write_tokens is not None:
            plain["cacheWriteTokens"] = self.cache_write_tokens
        if self.reasoning_tokens is not None:
            plain["reasoningTokens"] = self.reasoning_tokens
        return plain


@dataclass(frozen=True, slots=True, repr=False)
class CourseModelResponse:
    """The one terminal value of a stream that completed."""

    request_id: str
    response_id: str
    message: CourseAssistantMessage
    stop_reason: CourseStopReason
    usage: CourseModelUsage
    model: str | None = field(default=None, kw_only=True)
    """The model that answered, from ``response_start`` (schema version 2), else ``None``."""
    provider_stop_reason: str | None = field(default=None, kw_only=True)
    """The provider's own word for the end, verbatim (schema version 2), else ``None``."""

    __repr__ = _bounded_repr

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``requestId``, ``responseId``, ``message``, ``stopReason``, ``usage``,
        and ``model``, ``providerStopReason`` when set."""
        plain: dict[str, PlainJson] = {
            "requestId": self.request_id,
            "responseId": self.response_id,
            "message": self.message.to_dict(),
            "stopReason": self.stop_reason,
            "usage": self.usage.to_dict(),
        }
        if self.model is not None:
            plain["model"] = self.model
        if self.provider_stop_reason is not None:
            plain["providerStopReason"] = self.provider_stop_reason
        return plain


# -- building values on the hot path ------------------------------------------------------
#
# A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``. The
# parser builds a chunk for every record and a block for every chunk, and setting the
# slots directly builds the very same object in half the time: on the ``long`` bench
# workload, a sixth of the end-to-end time. Only the parser uses these.

_Setter: TypeAlias = Callable[[object, object], None]


def _setters(cls: type, *names: str) -> tuple[_Setter, ...]:
    """Each named slot's own setter, which the frozen ``__setattr__`` does not guard."""
    return tuple(vars(cls)[name].__set__ for name in names)


_TEXT_DELTA = _setters(CourseTextDeltaChunk, "text", "content_index", "type")
_TEXT_BLOCK = _setters(CourseTextBlock, "text", "type")
_TOOL_CHUNK = _setters(
    CourseToolCallChunk, "id", "name", "arguments", "content_index", "type", "signature"
)
_TOOL_BLOCK = _setters(CourseToolCallBlock, "id", "name", "arguments", "type", "signature")


_MESSAGE = _setters(CourseAssistantMessage, "id", "content", "role")
_USAGE = _setters(
    CourseModelUsage,
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)
_RESPONSE = _setters(
    CourseModelResponse,
    "request_id",
    "response_id",
    "message",
    "stop_reason",
    "usage",
    "model",
    "provider_stop_reason",
)


def usage(
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int | None = None,
    cache_write_tokens: int | None = None,
    reasoning_tokens: int | None = None,
) -> CourseModelUsage:
    """``CourseModelUsage(...)``, built directly (a frozen dataclass's ``__init__`` pays
    for each keyword-only field left at its default)."""
    set_input, set_output, set_cache_read, set_cache_write, set_reasoning = _USAGE
    value = object.__new__(CourseModelUsage)
    set_input(value, input_tokens)
    set_output(value, output_tokens)
    set_cache_read(value, cache_read_tokens)
    set_cache_write(value, cache_write_tokens)
    set_reasoning(value, reasoning_tokens)
    return value


def message(message_id: str, content: tuple[CourseContentBlock, ...]) -> CourseAssistantMessage:
    """``CourseAssistantMessage(message_id, content)``, built directly (``content`` is a
    tuple already)."""
    set_id, set_content, set_role = _MESSAGE
    value = object.__new__(CourseAssistantMessage)
    set_id(value, message_id)
    set_content(value, content)
    set_role(value, "assistant")
    return value


def response(
    request_id: str,
    response_id: str,
    message: CourseAssistantMessage,
    stop_reason: CourseStopReason,
    usage: CourseModelUsage,
    *,
    model: str | None,
    provider_stop_reason: str | None,
) -> CourseModelResponse:
    """``CourseModelResponse(...)``, built directly."""
    set_request, set_response, set_message, set_stop, set_usage, set_model, set_provider = _RESPONSE
    value = object.__new__(CourseModelResponse)
    set_request(value, request_id)
    set_response(value, response_id)
    set_message(value, message)
    set_stop(value, stop_reason)
    set_usage(value, usage)
    set_model(value, model)
    set_provider(value, provider_stop_reason)
    return value


def text_delta(text: str, content_index: int) -> CourseTextDeltaChunk:
    """``CourseTextDeltaChunk(text, content_index)``, built directly."""
    set_text, set_index, set_type = _TEXT_DELTA
    chunk = object.__new__(CourseTextDeltaChunk)
    set_text(chunk, text)
    set_index(chunk, content_index)
    set_type(chunk, "textDelta")
    return chunk


_THINKING_DELTA = _setters(CourseThinkingDeltaChunk, "text", "content_index", "type")


def thinking_delta(text: str, content_index: int) -> CourseThinkingDeltaChunk:
    """``CourseThinkingDeltaChunk(text, content_index)``, built directly."""
    set_text, set_index, set_type = _THINKING_DELTA
    chunk = object.__new__(CourseThinkingDeltaChunk)
    set_text(chunk, text)
    set_index(chunk, content_index)
    set_type(chunk, "thinkingDelta")
    return chunk


def text_block(text: str) -> CourseTextBlock:
    """``CourseTextBlock(text)``, built directly."""
    set_text, set_type = _TEXT_BLOCK
    block = object.__new__(CourseTextBlock)
    set_text(block, text)
    set_type(block, "text")
    return block


def tool_call(
    call_id: str,
    name: str,
    arguments: JsonObject,
    content_index: int,
    signature: str | None = None,
) -> tuple[CourseToolCallChunk, CourseToolCallBlock]:
    """The chunk and the block of one tool call, built directly (``arguments`` is
    read-only already: there is nothing to freeze)."""
    set_id, set_name, set_arguments, set_index, set_type, set_signature = _TOOL_CHUNK
    chunk = object.__new__(CourseToolCallChunk)
    set_id(chunk, call_id)
    set_name(chunk, name)
    set_arguments(chunk, arguments)
    set_index(chunk, content_index)
    set_type(chunk, "toolCall")
    set_signature(chunk, signature)
    set_id, set_name, set_arguments, set_type, set_signature = _TOOL_BLOCK
    block = object.__new__(CourseToolCallBlock)
    set_id(block, call_id)
    set_name(block, name)
    set_arguments(block, arguments)
    set_type(block, "toolCall")
    set_signature(block, signature)
    return chunk, block
