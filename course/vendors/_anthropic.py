"""The ``anthropic`` wire format (Anthropic Messages, ``stream: true``): both directions.

Everything ``course`` knows about this format lives here; its wire names stay inside.

**Import.** A stream is ``message_start``, content blocks by ``index``
(``content_block_start``, ``content_block_delta`` ..., ``content_block_stop``), one or
more ``message_delta`` (the stop reason and cumulative usage) and ``message_stop``, the
terminal; ``ping`` may come anywhere, ``error`` anywhere before the terminal. Text blocks
give text deltas; a ``tool_use`` block gives one tool call at its stop, its
``input_json_delta`` fragments joined (and kept, in version 2); every other block kind
(server tools and their results, ...) is skipped with its deltas and stop.

Version 2 (the default) keeps what version 1 skips or turns into a failure: ``thinking``
blocks (their deltas and ``signature_delta``), ``redacted_thinking`` blocks, the model,
``message_start``'s own usage, the cache and thinking counts, and every stop reason of the
SPEC's table with its word (``max_tokens`` cuts the last open tool_use block into an
incomplete call). Version 1 keeps ``SPEC-VENDORS.md``'s rules exactly.

Each event is judged in the SPEC's classes: its ``type`` (vocabulary), then every key
its handler uses, by exact type (the event alone), then its place in the stream, then
against earlier events (malformed, stop reason mismatch, missing usage).

A non-streamed ``message`` gives what its stream would: a text delta per ``text``
block, a tool call per ``tool_use`` block, in order (version 2: thinking and redacted
thinking too), then its stop reason and usage. A message that stopped for another reason
(``max_tokens``, ...) may end in a cut block: a ``tool_use`` block last in it makes no
tool call, as its stream would make none (version 2, at a ``max_tokens`` end: the cut
call, as its stream would give it).

**Render.** A course stream becomes ``message_start`` (the fixture's model and start
usage), a ``text`` block per run of text deltas, a ``thinking`` block per thinking block
(one ``thinking_delta`` per delta, its ``signature_delta``), a ``redacted_thinking``
block, a ``tool_use`` block per tool call (one ``input_json_delta`` per fragment, else
the whole input in one; a cut call never stops), ``message_delta`` (the stop word, the
usage in anthropic's fields) and ``message_stop``. Refusal text has no place here.

**Requests.** ``read_request`` reads a Messages request body: ``system`` (a string or
text blocks) as one system message, then ``messages`` (``user`` and ``assistant``), each
block as its course block (``tool_use``, ``tool_result``, ``thinking``,
``redacted_thinking``; every other kind a ``CourseOtherBlock``), and the client tools.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Final, NamedTuple

from .._errors import FixtureProviderError
from .._json import JsonValue, PlainJson, thaw
from .._model import (
    CourseIncompleteToolCallBlock,
    CourseIncompleteToolCallChunk,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
    CourseModelUsage,
    CourseOtherBlock,
    CourseRedactedThinkingBlock,
    CourseRedactedThinkingChunk,
    CourseRefusalBlock,
    CourseRefusalDeltaChunk,
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
from ._rendering import StreamRenderer, compact, error_words
from ._requests import (
    ReadRequest,
    SentLog,
    found,
    frozen_json,
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
    "Importer",
    "Renderer",
    "detects",
    "detects_whole",
    "fits",
    "fits_whole",
    "precedes",
    "read_error_body",
    "read_request",
]

FORMAT: Final = "anthropic"

_STOP: Final = frozenset({"end_turn", "stop_sequence"})
"""Stop reasons of a normal end; ``tool_use`` is the tool-call end."""
_TOOL_USE: Final = "tool_use"
_TEXT: Final = "text"
"""How the importer marks an open text block."""
_THINKING: Final = "thinking"
_REDACTED_THINKING: Final = "redacted_thinking"

_STOP_REASONS: Final[Mapping[str, str]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_call",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
    "pause_turn": "pause_turn",
}
"""Import, version 2: each ``stop_reason`` of SPEC-V2's table and the fixture's stop
reason it is. Any other word stays a failure with that code (version 1: every word but
the first three)."""

_STOP_WORDS: Final[Mapping[str, tuple[str, ...]]] = {
    "stop": ("end_turn", "stop_sequence"),
    "toolCall": ("tool_use",),
    "length": ("max_tokens", "model_context_window_exceeded"),
    "contentFilter": ("refusal",),
    "refusal": ("refusal",),
    "pauseTurn": ("pause_turn",),
}
"""Serve: each stop reason's words, the one sent unless the fixture gives another of them
first (anthropic has no content filter word: it says ``refusal``)."""


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


class _Thinking:
    """An open ``thinking`` block (version 2): whether its signature came, and where its
    last ``thinking_delta`` record ends, so that a signature knows whether it follows one."""

    __slots__ = ("last", "signed")

    def __init__(self) -> None:
        self.signed = False
        self.last = -1
        """The record count just after the block's last ``thinking_delta`` (-1: none)."""


class _Redacted:
    """An open ``redacted_thinking`` block (version 2): its record came at its start."""

    __slots__ = ()


_REDACTED: Final = _Redacted()


class _WholeBlock(NamedTuple):
    """One content block of a non-streamed message, checked on its own."""

    kind: str
    text: str = ""
    call_id: str = ""
    name: str = ""
    input: PlainObject | None = None
    signature: str | None = None


_Block = _ToolUse | _Thinking | _Redacted | str | None
"""A block by index: an open tool use, ``_TEXT``, an open thinking or redacted thinking
block (version 2), the kind of a skipped block, or ``None`` once stopped."""


class _Counts:
    """The usage counts so far: each the last non-null value reported (``None``: never)."""

    __slots__ = ("cache_read", "cache_write", "input", "output", "thinking")

    def __init__(self) -> None:
        self.input = 0
        self.output: int | None = None
        self.cache_read: int | None = None
        self.cache_write: int | None = None
        self.thinking: int | None = None


class Importer(StreamImporter):
    """The anthropic state machine: one handler per event type, in stream order."""

    format = FORMAT

    def __init__(self, usage: tuple[int, int] | None) -> None:
        super().__init__(usage)
        self._blocks: dict[int, _Block] = {}
        self._tool_calls = 0
        """Tool calls completed (emitted)."""
        self._stop_reason: str | None = None
        self._counts = _Counts()

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
        model = output_tokens = start_usage = None
        if self.schema_version >= 2:
            model = self.string(message, "model", ("message",), optional=True)
            output_tokens = self._read_details(usage, ("message", "usage"))
        if self.terminal_read:
            raise self._after_terminal("message_start")
        if self.started:
            raise self.out_of_order("A second `message_start`: the message already started")
        assert input_tokens is not None  # required
        self._counts.input = input_tokens
        if output_tokens is not None:
            # Version 2: the start's own usage, read alone (frameworks read it there).
            self._counts.output = output_tokens
            start_usage = self._usage(output_tokens, ("message", "usage"))
        self.start(response_id, model=model, usage=start_usage)

    def _content_block_start(self, data: PlainObject) -> None:
        index = self._index(data)
        block = self.obj(data, "content_block", ())
        kind = self.string(block, "type", ("content_block",))
        version2 = self.schema_version >= 2
        text = signature = ""
        if kind == _TEXT:
            opening: _Block = _TEXT
            text = self.string(block, "text", ("content_block",))
        elif kind == _TOOL_USE:
            opening = _ToolUse(
                self.identifier(block, "id", ("content_block",)),
                self.identifier(block, "name", ("content_block",)),
            )
        elif kind == _THINKING and version2:
            opening = _Thinking()
            text = self.string(block, "thinking", ("content_block",))
            signature = self.string(block, "signature", ("content_block",), optional=True) or ""
        elif kind == _REDACTED_THINKING and version2:
            opening = _REDACTED
            text = self.identifier(block, "data", ("content_block",))
        else:
            opening = kind
        self._check_block_place("content_block_start")
        if index in self._blocks:
            raise self.out_of_order(f"`content_block_start` for block {index}, already started")
        self._blocks[index] = opening
        if opening is _TEXT:
            self.text(text)
        elif type(opening) is _Thinking:
            self._think(opening, text)
            if signature:  # a start that carries its signature (as a whole message's does)
                self._sign(opening, signature)
        elif opening is _REDACTED:
            self.redacted_thinking(text)
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
        elif self.schema_version >= 2:  # version 1 skips thinking with its deltas, unread
            if kind == "thinking_delta":
                text = delta.get("thinking")  # type: ignore[assignment]
                if type(text) is not str:
                    self.refuse(delta, "thinking", str, ("delta",))
            elif kind == "signature_delta":
                fragment = self.identifier(delta, "signature", ("delta",))
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
        elif type(block) is _Thinking:
            if kind == "thinking_delta" and not block.signed:  # the hot path of thinking
                if text:
                    self.thinking(text)
                    block.last = len(self.records)
            else:
                self._thinking_delta(block, kind, fragment)
        elif block is _REDACTED:
            raise self.malformed(
                f"A redacted_thinking block takes no delta, got {quote(kind)}",
                ("delta", "type"),
            )
        else:
            self.ignore(f"content_block_delta:{kind}")

    def _thinking_delta(self, block: _Thinking, kind: str, signature: str) -> None:
        """A thinking block's delta but a thinking delta of an unsigned block."""
        if kind == "thinking_delta":
            raise self.out_of_order(
                "A `thinking_delta` after its thinking block's `signature_delta`: the "
                "signature closes the block"
            )
        if kind == "signature_delta":
            if block.signed:
                raise self.out_of_order("A second `signature_delta` in one thinking block")
            self._sign(block, signature)
            return
        raise self.malformed(
            f"A thinking block takes `thinking_delta` or `signature_delta`, got {quote(kind)}",
            ("delta", "type"),
        )

    def _think(self, block: _Thinking, text: str) -> None:
        """A thinking delta of ``block``; an empty one makes no record."""
        if text:
            self.thinking(text)
            block.last = len(self.records)

    def _sign(self, block: _Thinking, signature: str) -> None:
        """``block``'s signature, which signs the ``thinking_delta`` right before it: an
        empty one first when its block's text is not the last record."""
        if block.last != len(self.records):
            self.thinking("")
        self.thinking_signature(signature)
        block.signed = True

    def _content_block_stop(self, data: PlainObject) -> None:
        index = self._index(data)
        block = self._open_block(index, "content_block_stop")
        self._blocks[index] = None
        if type(block) is _ToolUse:
            self.tool_call(
                block.call_id, block.name, "".join(block.parts), None, index, fragments=block.parts
            )
            self._tool_calls += 1
        elif type(block) is str and block is not _TEXT:
            self.ignore(f"content_block_stop:{block}")

    def _message_delta(self, data: PlainObject) -> None:
        delta = self.obj(data, "delta", ())
        reason = self.string(delta, "stop_reason", ("delta",), optional=True)
        usage = self.obj(data, "usage", ())
        output_tokens = self.count(usage, "output_tokens", ("usage",))
        input_tokens = self.count(usage, "input_tokens", ("usage",), optional=True)
        if self.schema_version >= 2:
            self._read_details(usage, ("usage",))
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
        self._counts.output = output_tokens
        if input_tokens is not None:
            self._counts.input = input_tokens

    def _message_stop(self, data: PlainObject) -> None:
        self._check_place("message_stop")
        reason = self._stop_reason
        if reason is None:
            raise self.malformed(
                "`message_stop` before any `message_delta` carried a stop reason", None
            )
        complete = reason in _STOP or reason == _TOOL_USE
        if complete and any(type(block) is _ToolUse for block in self._blocks.values()):
            raise self.malformed(
                "The message stopped with a tool_use block still open (no "
                "`content_block_stop`): its input may be partial",
                None,
            )
        if self.schema_version < 2:
            if complete:
                output_tokens = self._counts.output
                usage = None if output_tokens is None else (self._counts.input, output_tokens)
                self.end(reason == _TOOL_USE, usage, None)
            else:
                self.stopped(reason)
            return
        stop_reason = _STOP_REASONS.get(reason)
        if stop_reason is None:  # a word outside the table: never a guessed end
            self.stopped(reason)
            return
        if stop_reason == "length":
            self._cut_tool_calls()
        output_tokens = self._counts.output
        details = None if output_tokens is None else self._usage(output_tokens, None)
        self.finish(stop_reason, details, reason, None)

    def _cut_tool_calls(self) -> None:
        """At a ``length`` end, the open tool_use blocks: the last one started is the call
        the limit cut, its fragments kept as they came; every other one must hold a whole
        JSON object and becomes a tool call, in ascending index, before it."""
        open_calls = [
            (index, block) for index, block in self._blocks.items() if type(block) is _ToolUse
        ]
        if not open_calls:
            return
        cut = open_calls.pop()[1]
        for index, block in sorted(open_calls, key=lambda item: item[0]):
            arguments = "".join(block.parts)
            self.tool_call(block.call_id, block.name, arguments, None, index, fragments=block.parts)
        self.incomplete_tool_call(cut.call_id, cut.name, cut.parts)

    def _read_details(self, usage: PlainObject, path: Path) -> int | None:
        """Version 2: the usage details of a ``message_start`` or ``message_delta`` usage
        (each kept when not null: the last non-null value wins); its ``output_tokens``
        when the event need not carry it (``message_start``)."""
        counts = self._counts
        cache_read = self.count(usage, "cache_read_input_tokens", path, optional=True)
        cache_write = self.count(usage, "cache_creation_input_tokens", path, optional=True)
        output_tokens = self.count(usage, "output_tokens", path, optional=True)
        thinking = self.detail(usage, "output_tokens_details", "thinking_tokens", path)
        if cache_read is not None:
            counts.cache_read = cache_read
        if cache_write is not None:
            counts.cache_write = cache_write
        if thinking is not None:
            counts.thinking = thinking
        return output_tokens

    def _usage(self, output_tokens: int, path: Path | None) -> dict[str, int]:
        """The fixture usage of the counts so far: anthropic's ``input_tokens`` leaves the
        cache out, a fixture's ``inputTokens`` holds it. Refused at ``path``."""
        counts = self._counts
        cache_read, cache_write = counts.cache_read, counts.cache_write
        total = counts.input + (cache_read or 0) + (cache_write or 0)
        if total > MAX_COUNT:
            raise self.malformed(
                f"The usage's input tokens with the cache counts added ({total}) exceed 2**53 - 1",
                path,
            )
        return self.usage_details(
            total, output_tokens, cache_read, cache_write, counts.thinking, path=path
        )

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
        version2 = self.schema_version >= 2
        response_id = self.identifier(body, "id", ())
        content = self.array(body, "content", ())
        reason = self.string(body, "stop_reason", ())
        usage = self.obj(body, "usage", ())
        input_tokens = self.count(usage, "input_tokens", ("usage",))
        output_tokens = self.count(usage, "output_tokens", ("usage",))
        model = None
        if version2:
            model = self.string(body, "model", (), optional=True)
            self._read_details(usage, ("usage",))
        blocks = [self._whole_block(block, n) for n, block in enumerate(content)]
        assert input_tokens is not None and output_tokens is not None  # both required
        # (5) what its stream would give, in its order
        self.start(response_id, model=model)
        stop_reason = _STOP_REASONS.get(reason) if version2 else None
        complete = reason in _STOP or reason == _TOOL_USE
        for index, block in enumerate(blocks):
            last = index == len(blocks) - 1
            if block.kind == _TEXT:
                self.text(block.text)
            elif block.kind == _TOOL_USE:
                self._whole_tool_use(block, index, complete, stop_reason, last=last)
            elif block.kind == _THINKING and version2:
                thinking = _Thinking()
                self._think(thinking, block.text)
                if block.signature:
                    self._sign(thinking, block.signature)
            elif block.kind == _REDACTED_THINKING and version2:
                self.redacted_thinking(block.text)
            else:
                self.ignore(f"content:{block.kind}")
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
        if not version2:
            if complete:
                self.end(reason == _TOOL_USE, (input_tokens, output_tokens), ())
            else:
                self.stopped(reason)
            return
        if stop_reason is None:
            self.stopped(reason)
            return
        self._counts.input = input_tokens
        details = self._usage(output_tokens, ("usage",))
        self.finish(stop_reason, details, reason, ())

    def _whole_tool_use(
        self,
        block: _WholeBlock,
        index: int,
        complete: bool,
        stop_reason: str | None,
        *,
        last: bool,
    ) -> None:
        """A message's tool_use block: a tool call, but for the last block of a message
        cut short, which may be cut: at a ``length`` end (version 2) the cut call, with
        its input as the one fragment received; at another end, no record."""
        if last and not complete:
            if stop_reason == "length":
                fragment = json.dumps(block.input, ensure_ascii=False, separators=(",", ":"))
                self.incomplete_tool_call(block.call_id, block.name, [fragment])
            else:
                self.ignore("content:tool_use")
            return
        path = ("content", index, "input")
        arguments = json.dumps(block.input)
        self.tool_call(block.call_id, block.name, arguments, path, index)
        self._tool_calls += 1

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
        if self.schema_version >= 2:
            if kind == _THINKING:
                return _WholeBlock(
                    kind,
                    text=self.string(block, "thinking", path),
                    signature=self.string(block, "signature", path, optional=True),
                )
            if kind == _REDACTED_THINKING:
                return _WholeBlock(kind, text=self.identifier(block, "data", path))
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
    """The ``stop_reason`` of a response's end: the fixture's provider word when it is one
    of its end's words, else the end's own word."""
    words = _STOP_WORDS[response.stop_reason]
    provider = response.provider_stop_reason
    return provider if provider in words else words[0]


def _usage(usage: CourseModelUsage) -> PlainObject:
    """A course usage in anthropic's fields: ``input_tokens`` leaves the cache counts out
    (a fixture's ``inputTokens`` holds them); details only where the fixture has them."""
    cache_read, cache_write = usage.cache_read_tokens, usage.cache_write_tokens
    counts: PlainObject = {
        "input_tokens": usage.input_tokens - (cache_read or 0) - (cache_write or 0)
    }
    if cache_write is not None:
        counts["cache_creation_input_tokens"] = cache_write
    if cache_read is not None:
        counts["cache_read_input_tokens"] = cache_read
    counts["output_tokens"] = usage.output_tokens
    if usage.reasoning_tokens is not None:
        counts["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    return counts


_NO_USAGE: Final[PlainObject] = {"input_tokens": 0, "output_tokens": 0}
"""``message_start``'s usage when the fixture reports none at the start."""


class Renderer(StreamRenderer):
    """Renders one course stream as an anthropic stream (or a whole ``message``)."""

    format = FORMAT

    def __init__(self, model: str, request: PlainObject | None = None) -> None:
        super().__init__(model, request)
        self._blocks = 0
        """Content blocks started so far: the next block's index."""
        self._open = ""
        """The kind of the block left open for more deltas (``text``, ``thinking``), or
        ``""``."""
        self._thinking_at = -1
        """The course content index of the open thinking block."""

    def open(self, response_id: str) -> str:
        # The server has set ``model`` (the fixture's, else the request's) and
        # ``start_usage`` (version 2) by now.
        start_usage = self.start_usage
        message: PlainObject = {
            "id": response_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": dict(_NO_USAGE) if start_usage is None else _usage(start_usage),
        }
        return _event({"type": "message_start", "message": message})

    def chunk(self, chunk: CourseModelChunk) -> str:
        if type(chunk) is CourseTextDeltaChunk:
            head = ""
            if self._open is not _TEXT:
                head = self._close() + self._start_block({"type": "text", "text": ""})
                self._open = _TEXT
            return head + self._delta({"type": "text_delta", "text": chunk.text})
        if type(chunk) is CourseThinkingDeltaChunk:
            head = ""
            if self._open is not _THINKING or self._thinking_at != chunk.content_index:
                block: PlainObject = {"type": "thinking", "thinking": "", "signature": ""}
                head = self._close() + self._start_block(block)
                self._open, self._thinking_at = _THINKING, chunk.content_index
            return head + self._delta({"type": "thinking_delta", "thinking": chunk.text})
        if type(chunk) is CourseThinkingSignatureChunk:
            # It comes right after a thinking delta of its block, which is open.
            signature = self._delta({"type": "signature_delta", "signature": chunk.signature})
            return signature + self._close()
        if type(chunk) is CourseRedactedThinkingChunk:
            block = {"type": "redacted_thinking", "data": chunk.data}
            return self._close() + self._start_block(block) + self._stop_block()
        if type(chunk) is CourseRefusalDeltaChunk:
            return ""  # anthropic has no refusal text: the end's `refusal` says it
        if type(chunk) is CourseIncompleteToolCallChunk:
            fragments = self._fragments_of(chunk.id, chunk.arguments_text)
            # A call the limit cut: its deltas, and never its stop.
            text = self._close() + self._tool_use(chunk.id, chunk.name, fragments)
            self._blocks += 1
            return text
        assert type(chunk) is CourseToolCallChunk
        fragments = self._fragments_of(chunk.id, None) or (compact(thaw(chunk.arguments)),)
        return self._close() + self._tool_use(chunk.id, chunk.name, fragments) + self._stop_block()

    def complete(self, response: CourseModelResponse) -> str:
        delta: PlainObject = {"stop_reason": _stop_reason(response), "stop_sequence": None}
        usage = _usage(response.usage)
        return (
            self._close()
            + _event({"type": "message_delta", "delta": delta, "usage": usage})
            + _event({"type": "message_stop"})
        )

    def fail(self, error: FixtureProviderError) -> str:
        return _event(self.error_body(error))

    def whole(self, response: CourseModelResponse) -> PlainObject:
        content: list[PlainJson] = []
        text: list[str] = []  # a run of text deltas becomes one text block, as when streamed
        for block in response.message.content:
            if isinstance(block, CourseTextBlock):
                text.append(block.text)
                continue
            if isinstance(block, CourseRefusalBlock | CourseIncompleteToolCallBlock):
                # Refusal text has no place here, streamed or not; nor has a cut call in
                # a message, whose tool_use blocks are all whole.
                continue
            if text:
                content.append({"type": "text", "text": "".join(text)})
                text = []
            if isinstance(block, CourseToolCallBlock):
                arguments = thaw(block.arguments)
                content.append(
                    {"type": "tool_use", "id": block.id, "name": block.name, "input": arguments}
                )
            elif isinstance(block, CourseThinkingBlock):
                signature = block.signature or ""
                content.append({"type": "thinking", "thinking": block.text, "signature": signature})
            else:
                content.append({"type": "redacted_thinking", "data": block.data})
        if text:
            content.append({"type": "text", "text": "".join(text)})
        return {
            "id": response.response_id,
            "type": "message",
            "role": "assistant",
            "model": self.model if response.model is None else response.model,
            "content": content,
            "stop_reason": _stop_reason(response),
            "stop_sequence": None,
            "usage": _usage(response.usage),
        }

    @staticmethod
    def error_body(error: FixtureProviderError) -> PlainObject:
        code, message = error_words(error)
        # The SDKs read error.type; a transport error without a code is a plain api_error.
        body: PlainObject = {"type": "api_error" if code is None else code, "message": message}
        return {"type": "error", "error": body}

    # -- what the chunks do not carry ----------------------------------------------------------

    def _fragments_of(self, call_id: str, joined: str | None) -> tuple[str, ...]:
        """The call's ``argumentFragments``, which no chunk carries: the followed stream
        has them. ``()`` when the call has none (or nothing is followed), but for a cut
        call (``joined``: its text), whose fragments are then that text, in one piece."""
        found = self.argument_fragments(call_id)
        if found is not None:
            return found
        return () if joined is None or not joined else (joined,)

    # -- blocks -------------------------------------------------------------------------------

    def _tool_use(self, call_id: str, name: str, fragments: tuple[str, ...]) -> str:
        """A tool_use block's start and one ``input_json_delta`` per fragment."""
        block: PlainObject = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        return self._start_block(block) + "".join(
            [self._delta({"type": "input_json_delta", "partial_json": part}) for part in fragments]
        )

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

    def _close(self) -> str:
        """Stop the text or thinking block left open, if any."""
        if not self._open:
            return ""
        self._open = ""
        return self._stop_block()


# -- requests -------------------------------------------------------------------------------

_ROLES: Final[Mapping[str, CourseRequestRole]] = {"user": "user", "assistant": "assistant"}


def read_request(body: Mapping[str, PlainJson], request_id: str, sent: SentLog) -> ReadRequest:
    """A Messages request body read (``SPEC-REQUESTS.md``), or a ``RequestReadError``.

    ``system`` is one system message placed ``system`` (an empty string or array: none),
    then each of ``messages`` placed ``messages[i]``. ``sent`` is not needed: every id
    comes back on the wire.
    """
    messages: list[CourseRequestMessage] = []
    places: list[tuple[str, ...]] = []
    system = _system(body.get("system"))
    if system:
        messages.append(CourseRequestMessage("system", system))
        places.append(("system",) * len(system))
    listed = body.get("messages")
    if listed is not None:
        if type(listed) is not list:
            raise unreadable("messages", f"the messages must be an array, got {_kind(listed)}")
        for index, message in enumerate(listed):
            place = f"messages[{index}]"
            read = _message(message, place)
            messages.append(read)
            places.append((place,) * len(read.content))
    tools = _tools(body.get("tools"))
    return ReadRequest(CourseModelRequest(request_id, tuple(messages), tools), tuple(places))


def _system(system: PlainJson) -> tuple[CourseRequestBlock, ...]:
    """The system prompt's text blocks: a string is one (an empty one none)."""
    if system is None or system == "":
        return ()
    if type(system) is str:
        return (CourseTextBlock(system),)
    if type(system) is not list:
        raise unreadable(
            "system",
            f"the system prompt must be a string or an array of text blocks, got {_kind(system)}",
        )
    blocks: list[CourseRequestBlock] = []
    for index, block in enumerate(system):
        place = f"system[{index}]"
        if type(block) is not dict:
            raise unreadable(place, f"a system block must be an object, got {_kind(block)}")
        kind = block.get("type")
        if kind != _TEXT:
            shown = f"got {quote(kind)}" if type(kind) is str else found(block, "type")
            raise unreadable(f"{place}.type", f"a system block must be a text block, {shown}")
        blocks.append(CourseTextBlock(string_field(block, "text", place, "a text block")))
    return tuple(blocks)


def _message(message: PlainJson, place: str) -> CourseRequestMessage:
    if type(message) is not dict:
        raise unreadable(place, f"a message must be an object, got {_kind(message)}")
    word = string_field(message, "role", place, "a message")
    role = _ROLES.get(word)
    if role is None:
        raise unreadable(
            f"{place}.role", f"unknown role {quote(word)} (a message is 'user' or 'assistant')"
        )
    content = message.get("content")
    if type(content) is str:
        return CourseRequestMessage(role, (CourseTextBlock(content),))
    if type(content) is not list:
        raise unreadable(
            f"{place}.content",
            f"a message's content must be a string or an array of blocks, "
            f"{found(message, 'content')}",
        )
    blocks = tuple(_block(block, f"{place}.content[{i}]") for i, block in enumerate(content))
    return CourseRequestMessage(role, blocks)


def _block(block: PlainJson, place: str) -> CourseRequestBlock:
    """One content block of a message, by its ``type``."""
    if type(block) is not dict:
        raise unreadable(place, f"a content block must be an object, got {_kind(block)}")
    kind = string_field(block, "type", place, "a content block")
    if kind == _TEXT:
        return CourseTextBlock(string_field(block, "text", place, "a text block"))
    if kind == _TOOL_USE:
        what = "a tool_use block"
        call_id, name = (
            string_field(block, "id", place, what),
            string_field(block, "name", place, what),
        )
        arguments = optional_object(block, "input", place, what)
        return CourseToolCallBlock(call_id, name, _NO_ARGUMENTS if arguments is None else arguments)
    if kind == _THINKING:
        what = "a thinking block"
        text = string_field(block, "thinking", place, what)
        return CourseThinkingBlock(text, optional_string(block, "signature", place, what))
    if kind == _REDACTED_THINKING:
        data = string_field(block, "data", place, "a redacted_thinking block")
        return CourseRedactedThinkingBlock(data)
    if kind == "tool_result":
        return _tool_result(block, place)
    return CourseOtherBlock(kind, frozen_object(block))  # image, document, server_tool_use, ...


_NO_ARGUMENTS: Final = frozen_object({})


def _tool_result(block: PlainObject, place: str) -> CourseToolResultBlock:
    """A ``tool_result`` block: its ``content`` a string, an array of blocks (kept as
    JSON) or absent (``None``); ``is_error`` false unless it says true."""
    what = "a tool_result block"
    call_id = string_field(block, "tool_use_id", place, what)
    content = block.get("content")
    if type(content) is list:
        frozen: JsonValue = frozen_json(content)
    elif content is None or type(content) is str:
        frozen = content
    else:
        raise unreadable(
            f"{place}.content",
            f"a tool_result's content must be a string or an array of blocks, got {_kind(content)}",
        )
    is_error = block.get("is_error")
    if is_error is not None and type(is_error) is not bool:
        raise mistyped(block, "is_error", "a boolean", place, what)
    return CourseToolResultBlock(call_id, frozen, is_error is True)


def _tools(tools: PlainJson) -> tuple[CourseTool, ...]:
    """The client tools (no ``type``, or ``custom``); server tools are skipped."""
    if tools is None:
        return ()
    if type(tools) is not list:
        raise unreadable("tools", f"the tools must be an array, got {_kind(tools)}")
    found: list[CourseTool] = []
    for index, tool in enumerate(tools):
        place = f"tools[{index}]"
        if type(tool) is not dict:
            raise unreadable(place, f"a tool must be an object, got {_kind(tool)}")
        kind = optional_string(tool, "type", place, "a tool")
        if kind is not None and kind != "custom":
            continue  # a server tool (web_search_20250305, bash_20250124, ...)
        what = "a client tool"
        name = string_field(tool, "name", place, what)
        description = optional_string(tool, "description", place, what)
        found.append(
            CourseTool(name, description, optional_object(tool, "input_schema", place, what))
        )
    return tuple(found)
