"""The ``anthropic`` wire format (Anthropic Messages, ``stream: true``): both directions.

Everything ``course`` knows about this format lives here; its wire names stay inside.

**Import.** A stream is ``message_start``, content blocks by ``index``
(``content_block_start``, ``content_block_delta`` ..., ``content_block_stop``), one or
more ``message_delta`` (the stop reason and cumulative usage) and ``message_stop``, the
terminal; ``ping`` may come anywhere, ``error`` anywhere before the terminal. Text blocks
give text deltas; a ``tool_use`` block gives one tool call at its stop, its
``input_json_delta`` fragments joined; every other block kind (thinking, redacted
thinking, server tools and their results, ...) is skipped with its deltas and stop.

Each event is judged in the SPEC's classes: its ``type`` (vocabulary), then every key
its handler uses, by exact type (the event alone), then its place in the stream, then
against earlier events (malformed, stop reason mismatch, missing usage).

A non-streamed ``message`` gives what its stream would: a text delta per ``text``
block, a tool call per ``tool_use`` block, in order, then its stop reason and usage.
A message that stopped for another reason (``max_tokens``, ...) may end in a cut block:
a ``tool_use`` block last in it makes no tool call, as its stream would make none.

**Render.** A course stream becomes ``message_start``, a ``text`` block per run of
text deltas, a ``tool_use`` block per tool call (its whole input in one
``input_json_delta``), ``message_delta`` and ``message_stop``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final, NamedTuple

from .._errors import FixtureProviderError
from .._json import PlainJson, thaw
from .._model import CourseModelChunk, CourseModelResponse, CourseTextDeltaChunk
from ._recording import Event, PlainObject, RecordingErrorCode, Refusal, StreamImporter, quote
from ._rendering import StreamRenderer, compact, error_words
from ._sse import format_event

__all__ = [
    "FORMAT",
    "Importer",
    "Renderer",
    "detects",
    "detects_whole",
    "fits",
    "fits_whole",
    "precedes",
    "read_error_body",
]

FORMAT: Final = "anthropic"

_STOP: Final = frozenset({"end_turn", "stop_sequence"})
"""Stop reasons of a normal end; ``tool_use`` is the tool-call end; any other is a failure."""
_TOOL_USE: Final = "tool_use"
_TEXT: Final = "text"
"""How the importer marks an open text block."""


def detects(first: PlainObject) -> bool:
    """Whether a first event says this format (``format="auto"``): a ``message_start``."""
    return first.get("type") == "message_start"


def precedes(event: PlainObject) -> bool:
    """Whether an event may come before the start without telling a format: a ping."""
    return event.get("type") == "ping"


def fits(first: PlainObject) -> bool:
    """Whether a first event may open a recording of this format."""
    # A tuple, not a set: the value may be unhashable (a list, say).
    return first.get("type") in ("message_start", "ping", "error")


def detects_whole(body: PlainObject) -> bool:
    """Whether a non-streamed body says this format: a ``message``."""
    return body.get("type") == "message"


def fits_whole(body: PlainObject) -> bool:
    """Whether a non-streamed body is this format's: a ``message``, or the error body
    ``{"type": "error", ...}``."""
    return body.get("type") in ("message", "error")


def read_error_body(body: PlainObject) -> tuple[str, str | None] | None:
    """The message and code of an HTTP error body, ``{"type": "error", "error": {"type":
    C, "message": M}}``; ``None`` for a body of another shape."""
    error = body.get("error")
    if body.get("type") != "error" or type(error) is not dict:
        return None
    message, code = error.get("message"), error.get("type")
    if type(message) is not str:
        return None
    return message, code if type(code) is str else None


# -- import ---------------------------------------------------------------------------------


class _ToolUse:
    """An open ``tool_use`` block: its id, name and the input fragments so far."""

    __slots__ = ("call_id", "name", "parts")

    def __init__(self, call_id: str, name: str) -> None:
        self.call_id = call_id
        self.name = name
        self.parts: list[str] = []


class _WholeBlock(NamedTuple):
    """One content block of a non-streamed message, checked on its own."""

    kind: str
    text: str = ""
    call_id: str = ""
    name: str = ""
    input: PlainObject | None = None


_Block = _ToolUse | str | None
"""A block by index: an open tool use, ``_TEXT``, the kind of a skipped block, or
``None`` once stopped."""


class Importer(StreamImporter):
    """The anthropic state machine: one handler per event type, in stream order."""

    format = FORMAT

    def __init__(self, usage: tuple[int, int] | None) -> None:
        super().__init__(usage)
        self._blocks: dict[int, _Block] = {}
        self._tool_calls = 0
        """Tool calls completed (emitted)."""
        self._stop_reason: str | None = None
        self._input_tokens = 0
        self._output_tokens: int | None = None

    def feed(self, event: Event) -> None:
        data = event.data
        if data is None:  # the driver reads a literal [DONE] for every format
            raise self.done_not_json(
                "The event's data is `[DONE]`, which is not JSON (anthropic streams end "
                "with `message_stop`)"
            )
        kind = data.get("type")
        if type(kind) is not str:
            self.refuse(data, "type", str, ())
        handler = _HANDLERS.get(kind)
        if handler is None:
            raise Refusal(
                RecordingErrorCode.RECORDING_UNKNOWN_EVENT,
                f"Unknown anthropic event type {quote(kind)}",
                ("type",),
            )
        if event.name and event.name != kind:
            raise self.misnamed(event.name, kind)
        handler(self, data)

    # -- one handler per event type: the event alone, its place, then earlier events ---------

    def _message_start(self, data: PlainObject) -> None:
        message = self.obj(data, "message", ())
        response_id = self.identifier(message, "id", ("message",))
        usage = self.obj(message, "usage", ("message",))
        input_tokens = self.count(usage, "input_tokens", ("message", "usage"))
        if self.terminal_read:
            raise self._after_terminal("message_start")
        if self.started:
            raise self.out_of_order("A second `message_start`: the message already started")
        self._input_tokens = input_tokens  # type: ignore[assignment]
        self.start(response_id)

    def _content_block_start(self, data: PlainObject) -> None:
        index = self._index(data)
        block = self.obj(data, "content_block", ())
        kind = self.string(block, "type", ("content_block",))
        if kind == _TEXT:
            opening: _Block = _TEXT
            text = self.string(block, "text", ("content_block",))
        elif kind == _TOOL_USE:
            opening = _ToolUse(
                self.identifier(block, "id", ("content_block",)),
                self.identifier(block, "name", ("content_block",)),
            )
        else:
            opening = kind
        self._check_block_place("content_block_start")
        if index in self._blocks:
            raise self.out_of_order(f"`content_block_start` for block {index}, already started")
        self._blocks[index] = opening
        if opening is _TEXT:
            self.text(text)
        elif type(opening) is not _ToolUse:
            self.ignore(f"content_block_start:{kind}")

    def _content_block_delta(self, data: PlainObject) -> None:
        # The hot path of every stream: inline checks, the field helpers explain a refusal.
        index = self._index(data)
        delta = data.get("delta")
        if type(delta) is not dict:
            self.refuse(data, "delta", dict, ())
        kind = delta.get("type")
        if type(kind) is not str:
            self.refuse(delta, "type", str, ("delta",))
        text = fragment = ""
        if kind == "text_delta":
            text = delta.get("text")  # type: ignore[assignment]
            if type(text) is not str:
                self.refuse(delta, "text", str, ("delta",))
        elif kind == "input_json_delta":
            fragment = delta.get("partial_json")  # type: ignore[assignment]
            if type(fragment) is not str:
                self.refuse(delta, "partial_json", str, ("delta",))
        block = self._blocks.get(index, False)
        if block is False or block is None or self._stop_reason is not None:
            block = self._open_block(index, "content_block_delta")  # raises
        if block is _TEXT:
            if kind == "text_delta":
                self.text(text)
            elif kind == "citations_delta":
                self.ignore("content_block_delta:citations_delta")
            else:
                raise self.malformed(
                    f"A text block takes `text_delta` or `citations_delta`, got {quote(kind)}",
                    ("delta", "type"),
                )
        elif type(block) is _ToolUse:
            if kind != "input_json_delta":
                raise self.malformed(
                    f"A tool_use block takes `input_json_delta`, got {quote(kind)}",
                    ("delta", "type"),
                )
            block.parts.append(fragment)
        else:
            self.ignore(f"content_block_delta:{kind}")

    def _content_block_stop(self, data: PlainObject) -> None:
        index = self._index(data)
        block = self._open_block(index, "content_block_stop")
        self._blocks[index] = None
        if type(block) is _ToolUse:
            self.tool_call(block.call_id, block.name, "".join(block.parts), None, index)
            self._tool_calls += 1
        elif block is not _TEXT:
            self.ignore(f"content_block_stop:{block}")

    def _message_delta(self, data: PlainObject) -> None:
        delta = self.obj(data, "delta", ())
        reason = self.string(delta, "stop_reason", ("delta",), optional=True)
        usage = self.obj(data, "usage", ())
        output_tokens = self.count(usage, "output_tokens", ("usage",))
        input_tokens = self.count(usage, "input_tokens", ("usage",), optional=True)
        self._check_place("message_delta")
        if reason is not None:
            if reason == _TOOL_USE and not self._tool_calls:
                raise Refusal(
                    RecordingErrorCode.RECORDING_STOP_REASON_MISMATCH,
                    "The stop reason is `tool_use`, but no tool_use block has completed",
                    ("delta", "stop_reason"),
                )
            if reason in _STOP and self._tool_calls:
                raise Refusal(
                    RecordingErrorCode.RECORDING_STOP_REASON_MISMATCH,
                    f"The stop reason is {quote(reason)}, but {self._tool_calls} tool_use "
                    "block(s) completed (expected `tool_use`)",
                    ("delta", "stop_reason"),
                )
            self._stop_reason = reason
        self._output_tokens = output_tokens
        if input_tokens is not None:
            self._input_tokens = input_tokens

    def _message_stop(self, data: PlainObject) -> None:
        self._check_place("message_stop")
        reason = self._stop_reason
        if reason is None:
            raise self.malformed(
                "`message_stop` before any `message_delta` carried a stop reason", None
            )
        if reason in _STOP or reason == _TOOL_USE:
            if any(type(block) is _ToolUse for block in self._blocks.values()):
                raise self.malformed(
                    "The message stopped with a tool_use block still open (no "
                    "`content_block_stop`): its input may be partial",
                    None,
                )
            output_tokens = self._output_tokens
            usage = None if output_tokens is None else (self._input_tokens, output_tokens)
            self.end(reason == _TOOL_USE, usage, None)
        else:
            self.stopped(reason)

    def _ping(self, data: PlainObject) -> None:
        self.ignore("ping")

    def _error(self, data: PlainObject) -> None:
        error = self.obj(data, "error", ())
        code = self.string(error, "type", ("error",))
        message = self.string(error, "message", ("error",))
        if self.terminal_read:
            raise self._after_terminal("error")
        self.provider_error(message, code)

    # -- a non-streamed answer ----------------------------------------------------------------

    def whole(self, body: PlainObject) -> None:
        if body.get("type") != "message":
            self._error(body)  # the error body: `{"type": "error", "error": {...}}`
            return
        # (3) the body alone
        response_id = self.identifier(body, "id", ())
        content = self.array(body, "content", ())
        reason = self.string(body, "stop_reason", ())
        usage = self.obj(body, "usage", ())
        input_tokens = self.count(usage, "input_tokens", ("usage",))
        output_tokens = self.count(usage, "output_tokens", ("usage",))
        blocks = [self._whole_block(block, n) for n, block in enumerate(content)]
        # (5) what its stream would give, in its order
        self.start(response_id)
        complete = reason in _STOP or reason == _TOOL_USE
        for index, block in enumerate(blocks):
            if block.kind == _TEXT:
                self.text(block.text)
            elif block.kind != _TOOL_USE:
                self.ignore(f"content:{block.kind}")
            elif complete or index < len(blocks) - 1:
                path = ("content", index, "input")
                arguments = json.dumps(block.input)
                self.tool_call(block.call_id, block.name, arguments, path, index)
                self._tool_calls += 1
            else:
                self.ignore("content:tool_use")  # last in a message cut short: maybe cut
        if not complete:
            self.stopped(reason)
            return
        if reason == _TOOL_USE and not self._tool_calls:
            raise Refusal(
                RecordingErrorCode.RECORDING_STOP_REASON_MISMATCH,
                "The stop reason is `tool_use`, but the message has no tool_use block",
                ("stop_reason",),
            )
        if reason in _STOP and self._tool_calls:
            raise Refusal(
                RecordingErrorCode.RECORDING_STOP_REASON_MISMATCH,
                f"The stop reason is {quote(reason)}, but the message has {self._tool_calls} "
                "tool_use block(s) (expected `tool_use`)",
                ("stop_reason",),
            )
        assert input_tokens is not None and output_tokens is not None  # both required
        self.end(reason == _TOOL_USE, (input_tokens, output_tokens), ())

    def _whole_block(self, block: PlainJson, index: int) -> _WholeBlock:
        """Content block ``index`` of a message, checked on its own (class 3)."""
        path = ("content", index)
        if type(block) is not dict:
            raise self.mistyped(block, dict, path)
        kind = self.string(block, "type", path)
        if kind == _TEXT:
            return _WholeBlock(kind, text=self.string(block, "text", path))
        if kind == _TOOL_USE:
            return _WholeBlock(
                kind,
                call_id=self.identifier(block, "id", path),
                name=self.identifier(block, "name", path),
                input=self.obj(block, "input", path),
            )
        return _WholeBlock(kind)

    # -- place --------------------------------------------------------------------------------

    def _check_place(self, kind: str) -> None:
        """After ``message_start`` and before ``message_stop``."""
        if self.terminal_read:
            raise self._after_terminal(kind)
        if not self.started:
            raise self.out_of_order(f"`{kind}` before `message_start`")

    def _check_block_place(self, kind: str) -> None:
        """In the message, and before its stop reason."""
        self._check_place(kind)
        if self._stop_reason is not None:
            raise self.out_of_order(
                f"`{kind}` after the stop reason {quote(self._stop_reason)} came in `message_delta`"
            )

    def _open_block(self, index: int, kind: str) -> _Block:
        """The open block at ``index``, for a delta or a stop."""
        self._check_block_place(kind)
        block = self._blocks.get(index, False)
        if block is False:
            raise self.out_of_order(f"`{kind}` for block {index}, which was never started")
        if block is None:
            raise self.out_of_order(f"`{kind}` for block {index}, which already stopped")
        return block  # type: ignore[return-value]

    def _index(self, data: PlainObject) -> int:
        """A block event's ``index``."""
        index = data.get("index")
        if type(index) is not int:
            self.refuse(data, "index", int, ())
        return index

    def _after_terminal(self, kind: str) -> Refusal:
        return self.out_of_order(
            f"`{kind}` after `message_stop`: only `ping` events may follow the terminal"
        )


_HANDLERS: Final[dict[str, Callable[[Importer, PlainObject], None]]] = {
    "message_start": Importer._message_start,
    "content_block_start": Importer._content_block_start,
    "content_block_delta": Importer._content_block_delta,
    "content_block_stop": Importer._content_block_stop,
    "message_delta": Importer._message_delta,
    "message_stop": Importer._message_stop,
    "ping": Importer._ping,
    "error": Importer._error,
}
"""The vocabulary: each event type and its handler."""


# -- render ---------------------------------------------------------------------------------


def _event(payload: PlainObject) -> str:
    """One event: its ``event:`` line (the SDK dispatches on it) and compact JSON data."""
    return format_event(compact(payload), payload["type"])  # type: ignore[arg-type]


def _stop_reason(response: CourseModelResponse) -> str:
    return _TOOL_USE if response.stop_reason == "toolCall" else "end_turn"


def _usage(response: CourseModelResponse) -> PlainObject:
    return {
        "input_tokens": response.usage.input_tokens,
        "output_tokens": response.usage.output_tokens,
    }


class Renderer(StreamRenderer):
    """Renders one course stream as an anthropic stream (or a whole ``message``)."""

    format = FORMAT

    def __init__(self, model: str, request: PlainObject | None = None) -> None:
        super().__init__(model, request)
        self._blocks = 0
        """Content blocks started so far: the next block's index."""
        self._text_open = False

    def open(self, response_id: str) -> str:
        message: PlainObject = {
            "id": response_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return _event({"type": "message_start", "message": message})

    def chunk(self, chunk: CourseModelChunk) -> str:
        if isinstance(chunk, CourseTextDeltaChunk):
            head = "" if self._text_open else self._start_block({"type": "text", "text": ""})
            self._text_open = True
            delta: PlainObject = {"type": "text_delta", "text": chunk.text}
            return head + self._delta(delta)
        head = self._close_text()
        block: PlainObject = {"type": "tool_use", "id": chunk.id, "name": chunk.name, "input": {}}
        arguments = compact(thaw(chunk.arguments))
        return (
            head
            + self._start_block(block)
            + self._delta({"type": "input_json_delta", "partial_json": arguments})
            + self._stop_block()
        )

    def complete(self, response: CourseModelResponse) -> str:
        delta: PlainObject = {"stop_reason": _stop_reason(response), "stop_sequence": None}
        return (
            self._close_text()
            + _event({"type": "message_delta", "delta": delta, "usage": _usage(response)})
            + _event({"type": "message_stop"})
        )

    def fail(self, error: FixtureProviderError) -> str:
        return _event(self.error_body(error))

    def whole(self, response: CourseModelResponse) -> PlainObject:
        content: list[PlainJson] = []
        text: list[str] = []  # a run of text deltas becomes one text block, as when streamed
        for block in response.message.content:
            if block.type == "text":
                text.append(block.text)
                continue
            if text:
                content.append({"type": "text", "text": "".join(text)})
                text = []
            arguments = thaw(block.arguments)
            content.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": arguments}
            )
        if text:
            content.append({"type": "text", "text": "".join(text)})
        return {
            "id": response.response_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": _stop_reason(response),
            "stop_sequence": None,
            "usage": _usage(response),
        }

    @staticmethod
    def error_body(error: FixtureProviderError) -> PlainObject:
        code, message = error_words(error)
        # The SDKs read error.type; a transport error without a code is a plain api_error.
        body: PlainObject = {"type": "api_error" if code is None else code, "message": message}
        return {"type": "error", "error": body}

    # -- blocks -------------------------------------------------------------------------------

    def _start_block(self, block: PlainObject) -> str:
        return _event(
            {"type": "content_block_start", "index": self._blocks, "content_block": block}
        )

    def _delta(self, delta: PlainObject) -> str:
        return _event({"type": "content_block_delta", "index": self._blocks, "delta": delta})

    def _stop_block(self) -> str:
        index = self._blocks
        self._blocks += 1
        return _event({"type": "content_block_stop", "index": index})

    def _close_text(self) -> str:
        if not self._text_open:
            return ""
        self._text_open = False
        return self._stop_block()
