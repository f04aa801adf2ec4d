"""The course model protocol: the trusted, immutable values the adapter emits.

These are the only types that leave the boundary. Every one is a frozen, slotted
dataclass whose sequences are tuples and whose JSON objects are read-only mappings,
all the way down; ``to_dict()`` gives the protocol's own camelCase JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ._json import JsonValue, PlainJson, preview, refreeze, thaw

__all__ = [
    "CourseAssistantMessage",
    "CourseContentBlock",
    "CourseModelChunk",
    "CourseModelRequest",
    "CourseModelResponse",
    "CourseModelUsage",
    "CourseStopReason",
    "CourseTextBlock",
    "CourseTextDeltaChunk",
    "CourseToolCallBlock",
    "CourseToolCallChunk",
]

CourseStopReason: TypeAlias = Literal["stop", "toolCall"]
"""Why the assistant stopped: a final answer, or tool calls to run."""


def _plain(value: object) -> object:
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


@dataclass(frozen=True, slots=True)
class CourseModelRequest:
    """A request for the next response; the fixture adapter reads ``id`` only."""

    id: str
    messages: tuple[object, ...] = ()
    tools: tuple[object, ...] = ()

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


@dataclass(frozen=True, slots=True)
class CourseTextDeltaChunk:
    """A piece of assistant text, streamed as it arrives."""

    text: str
    content_index: int
    type: Literal["textDelta"] = field(default="textDelta", kw_only=True)

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``text``, ``contentIndex``."""
        return {"type": self.type, "text": self.text, "contentIndex": self.content_index}


@dataclass(frozen=True, slots=True, repr=False)
class CourseToolCallChunk:
    """A complete tool call, streamed with the provider's own id."""

    id: str
    name: str
    arguments: Mapping[str, JsonValue]
    content_index: int
    type: Literal["toolCall"] = field(default="toolCall", kw_only=True)

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``id``, ``name``, ``arguments``, ``contentIndex``."""
        return {
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "arguments": thaw(self.arguments),
            "contentIndex": self.content_index,
        }

    def __repr__(self) -> str:
        return (
            f"CourseToolCallChunk(id={self.id!r}, name={self.name!r}, "
            f"arguments={preview(self.arguments)}, content_index={self.content_index!r})"
        )

    def __post_init__(self) -> None:
        # Built by hand from a plain dict: make it read-only, as the adapter's own are
        # (the adapter builds these without __init__, so this costs streaming nothing).
        if type(self.arguments) is dict:
            object.__setattr__(self, "arguments", refreeze(self.arguments))

    def __copy__(self) -> CourseToolCallChunk:
        return self

    def __deepcopy__(self, memo: object) -> CourseToolCallChunk:
        return self  # immutable all the way down

    def __reduce__(self) -> tuple[object, ...]:
        return (_tool_chunk, (self.id, self.name, thaw(self.arguments), self.content_index))


CourseModelChunk: TypeAlias = CourseTextDeltaChunk | CourseToolCallChunk
"""What a stream yields while a response is under way."""


@dataclass(frozen=True, slots=True)
class CourseTextBlock:
    """Assistant text in a finished message (one per text delta, in order)."""

    text: str
    type: Literal["text"] = field(default="text", kw_only=True)

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``text``."""
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, slots=True, repr=False)
class CourseToolCallBlock:
    """A tool call in a finished message, with the provider's own id."""

    id: str
    name: str
    arguments: Mapping[str, JsonValue]
    type: Literal["toolCall"] = field(default="toolCall", kw_only=True)

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``type``, ``id``, ``name``, ``arguments``."""
        return {
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "arguments": thaw(self.arguments),
        }

    def __repr__(self) -> str:
        return (
            f"CourseToolCallBlock(id={self.id!r}, name={self.name!r}, "
            f"arguments={preview(self.arguments)})"
        )

    def __post_init__(self) -> None:
        # Built by hand from a plain dict: make it read-only, as the adapter's own are
        # (the adapter builds these without __init__, so this costs streaming nothing).
        if type(self.arguments) is dict:
            object.__setattr__(self, "arguments", refreeze(self.arguments))

    def __copy__(self) -> CourseToolCallBlock:
        return self

    def __deepcopy__(self, memo: object) -> CourseToolCallBlock:
        return self  # immutable all the way down

    def __reduce__(self) -> tuple[object, ...]:
        return (_tool_block, (self.id, self.name, thaw(self.arguments)))


CourseContentBlock: TypeAlias = CourseTextBlock | CourseToolCallBlock
"""One block of an assistant message's content."""


@dataclass(frozen=True, slots=True)
class CourseAssistantMessage:
    """The assistant's message: id ``"message-" + responseId``, content in record order."""

    id: str
    content: tuple[CourseContentBlock, ...]
    role: Literal["assistant"] = field(default="assistant", kw_only=True)

    def __post_init__(self) -> None:
        if type(self.content) is not tuple:  # built by hand from a list: keep it immutable
            object.__setattr__(self, "content", tuple(self.content))

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``id``, ``role``, ``content``."""
        return {
            "id": self.id,
            "role": self.role,
            "content": [block.to_dict() for block in self.content],
        }


@dataclass(frozen=True, slots=True)
class CourseModelUsage:
    """Token counts of one response."""

    input_tokens: int
    output_tokens: int

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``inputTokens``, ``outputTokens``."""
        return {"inputTokens": self.input_tokens, "outputTokens": self.output_tokens}


@dataclass(frozen=True, slots=True)
class CourseModelResponse:
    """The one terminal value of a stream that completed."""

    request_id: str
    response_id: str
    message: CourseAssistantMessage
    stop_reason: CourseStopReason
    usage: CourseModelUsage

    def to_dict(self) -> dict[str, PlainJson]:
        """Plain JSON: ``requestId``, ``responseId``, ``message``, ``stopReason``, ``usage``."""
        return {
            "requestId": self.request_id,
            "responseId": self.response_id,
            "message": self.message.to_dict(),
            "stopReason": self.stop_reason,
            "usage": self.usage.to_dict(),
        }


# -- construction on the hot path --------------------------------------------------------
#
# A frozen dataclass's generated __init__ sets every field through object.__setattr__.
# Setting the slots through their descriptors builds the very same object in about
# half the time, and building a chunk and its block is most of what streaming a
# record costs. The parser uses these; everyone else uses the ordinary constructors.

_new = object.__new__
_Setter: TypeAlias = Callable[[object, object], None]


def _slot_setters(cls: type, *names: str) -> tuple[_Setter, ...]:
    setters: tuple[_Setter, ...] = tuple(vars(cls)[name].__set__ for name in names)
    return setters


# Module globals, not tuples to unpack on every call.
_set_text_chunk_text, _set_text_chunk_index, _set_text_chunk_type = _slot_setters(
    CourseTextDeltaChunk, "text", "content_index", "type"
)
_set_text_block_text, _set_text_block_type = _slot_setters(CourseTextBlock, "text", "type")
(
    _set_tool_chunk_id,
    _set_tool_chunk_name,
    _set_tool_chunk_arguments,
    _set_tool_chunk_index,
    _set_tool_chunk_type,
) = _slot_setters(CourseToolCallChunk, "id", "name", "arguments", "content_index", "type")
(
    _set_tool_block_id,
    _set_tool_block_name,
    _set_tool_block_arguments,
    _set_tool_block_type,
) = _slot_setters(CourseToolCallBlock, "id", "name", "arguments", "type")


def text_delta(text: str, content_index: int) -> CourseTextDeltaChunk:
    """``CourseTextDeltaChunk(text, content_index)``, fast."""
    chunk = _new(CourseTextDeltaChunk)
    _set_text_chunk_text(chunk, text)
    _set_text_chunk_index(chunk, content_index)
    _set_text_chunk_type(chunk, "textDelta")
    return chunk


def text_block(text: str) -> CourseTextBlock:
    """``CourseTextBlock(text)``, fast."""
    block = _new(CourseTextBlock)
    _set_text_block_text(block, text)
    _set_text_block_type(block, "text")
    return block


def tool_call(
    call_id: str,
    name: str,
    arguments: Mapping[str, JsonValue],
    content: list[str | CourseToolCallBlock],
) -> CourseToolCallChunk:
    """Append the ``CourseToolCallBlock`` to ``content`` and return its chunk, fast."""
    chunk = _new(CourseToolCallChunk)
    _set_tool_chunk_id(chunk, call_id)
    _set_tool_chunk_name(chunk, name)
    _set_tool_chunk_arguments(chunk, arguments)
    _set_tool_chunk_index(chunk, len(content))
    _set_tool_chunk_type(chunk, "toolCall")
    block = _new(CourseToolCallBlock)
    _set_tool_block_id(block, call_id)
    _set_tool_block_name(block, name)
    _set_tool_block_arguments(block, arguments)
    _set_tool_block_type(block, "toolCall")
    content.append(block)
    return chunk


def _tool_chunk(
    call_id: str, name: str, arguments: dict[str, PlainJson], content_index: int
) -> CourseToolCallChunk:
    """Unpickle a tool chunk: its arguments travel as plain JSON."""
    return CourseToolCallChunk(call_id, name, refreeze(arguments), content_index)  # type: ignore[arg-type]


def _tool_block(call_id: str, name: str, arguments: dict[str, PlainJson]) -> CourseToolCallBlock:
    """Unpickle a tool block: its arguments travel as plain JSON."""
    return CourseToolCallBlock(call_id, name, refreeze(arguments))  # type: ignore[arg-type]
