"""The course model protocol: the trusted, immutable values the adapter emits.

These are the only types that leave the boundary. Every one is a frozen, slotted
dataclass whose sequences are tuples and whose JSON objects are read-only mappings,
all the way down; ``to_dict()`` gives the protocol's own camelCase JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ._json import JsonValue, PlainJson, thaw

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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


CourseContentBlock: TypeAlias = CourseTextBlock | CourseToolCallBlock
"""One block of an assistant message's content."""


@dataclass(frozen=True, slots=True)
class CourseAssistantMessage:
    """The assistant's message: id ``"message-" + responseId``, content in record order."""

    id: str
    content: tuple[CourseContentBlock, ...]
    role: Literal["assistant"] = field(default="assistant", kw_only=True)

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
