"""The ``openai-chat`` wire format (OpenAI Chat Completions, ``stream: true``), both ways.

A recording is a run of ``data: {chunk}`` events closed by ``data: [DONE]``. Every
chunk carries the response ``id``, ``object: "chat.completion.chunk"`` and
``choices``; the one choice (``n > 1`` has no place in a fixture) carries a ``delta``
and, once, a ``finish_reason``. Tool calls arrive as fragments keyed by ``index`` and
are complete only when the finish reason ``stop`` or ``tool_calls`` comes; the
outcome is decided at ``[DONE]``. A data object with a non-null ``error`` is the
provider's error event.

Azure OpenAI adds chunks whose ``object`` is ``""``: the prompt's content-filter
verdict before the first real chunk, and annotations on the answer's after it. They
hold no content, so they are counted in ``ignored``; an annotation's finish reason is
the stream's (Azure stops a blocked answer there).

Each event is judged in the SPEC's classes, in order: (2) the vocabulary (the chunk's
``object``), (3) the event alone (every key used, by exact type, then the shapes a
fixture cannot hold), (4) its place, (5) against earlier events. Checks inline the
common case and fall back on ``StreamImporter``'s field checks for the message.

A non-streamed answer, a ``chat.completion``, gives what its stream would: its
``content``, its ``tool_calls`` (when its finish reason completes them) and its end.

The renderer writes the shapes of the SPEC's "Serve" section: an opening chunk with
the role, a chunk per text delta and per tool call, a finish chunk, a usage chunk
with ``choices: []``, then ``[DONE]``; a failure is ``{"error": ...}`` then ``[DONE]``.

``read_request`` reads a request body (``SPEC-REQUESTS.md``): ``messages`` in order,
roles as named (``developer`` is ``system``; the legacy ``function`` role, whose result
names no call, a ``tool`` message of an ``other`` block), a string content one text
block, parts text, refusal or ``other``; an assistant's ``refusal`` and ``tool_calls``
after its content; a ``tool`` message one tool result. Its helpers are the OpenAI
wire's shared reading, which the Responses reader uses too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Final, NamedTuple

from .._errors import FixtureProviderError
from .._json import JsonValue, PlainJson, thaw
from .._json_text import JsonSyntaxError, loads
from .._model import (
    CourseIncompleteToolCallBlock,
    CourseIncompleteToolCallChunk,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
    CourseOtherBlock,
    CourseRefusalBlock,
    CourseRefusalDeltaChunk,
    CourseRequestBlock,
    CourseRequestMessage,
    CourseRequestRole,
    CourseTextBlock,
    CourseTextDeltaChunk,
    CourseTool,
    CourseToolCallBlock,
    CourseToolCallChunk,
    CourseToolResultBlock,
)
from .._text import one_line
from ._recording import (
    ARGUMENTS_MAX_DEPTH,
    Event,
    Path,
    PlainObject,
    RecordingErrorCode,
    Refusal,
    StreamImporter,
    Usage,
    _kind,
    quote,
)
from ._rendering import StreamRenderer, compact, error_words
from ._requests import ReadRequest, RequestReadError, SentLog, frozen_json, frozen_object
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

FORMAT: Final = "openai-chat"

_CHUNK: Final = "chat.completion.chunk"
_COMPLETION: Final = "chat.completion"
_ANNOTATION: Final = ""
"""The ``object`` of Azure's content-filter chunks."""
_CONTENT_KEYS: Final = ("content", "refusal", "tool_calls", "function_call")
"""Delta keys that carry content: an annotation has none of them."""
_COMPLETING: Final = frozenset({"stop", "tool_calls"})
"""Finish reasons at which the tool calls are complete."""
_STOP_REASONS: Final[Mapping[str, str]] = {"length": "length", "content_filter": "content_filter"}
"""Version 2: the other finish reasons SPEC-V2's table knows, and the stop reason each
reads as; any other word stays a ``transport_error``."""
_SKIPPED_DELTA_KEYS: Final = ("reasoning_content", "reasoning", "audio")
"""Delta parts a fixture has no place for (gateways' reasoning text, audio), counted."""

_Code = RecordingErrorCode


def detects(first: PlainObject) -> bool:
    """Whether a first event says this format (``format="auto"``)."""
    return first.get("object") == _CHUNK


def precedes(event: PlainObject) -> bool:
    """Whether an event may come before the start without telling a format: Azure's
    prompt-filter chunk (``object`` ``""``, no choices, ``prompt_filter_results``, or
    ``prompt_annotations`` as earlier API versions name it)."""
    return (
        event.get("object") == _ANNOTATION
        and event.get("choices") == []
        and (
            event.get("prompt_filter_results") is not None
            or event.get("prompt_annotations") is not None
        )
    )


def fits(first: PlainObject) -> bool:
    """Whether a first event may open a recording of this format."""
    return first.get("object") == _CHUNK or first.get("error") is not None or precedes(first)


def detects_whole(body: PlainObject) -> bool:
    """Whether a non-streamed body says this format: a ``chat.completion``."""
    return body.get("object") == _COMPLETION


def fits_whole(body: PlainObject) -> bool:
    """Whether a non-streamed body is this format's: a ``chat.completion``, or the
    error body ``{"error": ...}``."""
    return body.get("object") == _COMPLETION or body.get("error") is not None


def read_error_body(body: PlainObject) -> tuple[str, str | None] | None:
    """The message and code of an HTTP error body, ``{"error": {"message": M, "code": C,
    "type": T}}`` (the code, else the type); ``None`` for a body of another shape."""
    error = body.get("error")
    if type(error) is not dict:
        return None
    message = error.get("message")
    if type(message) is not str:
        return None
    code = error.get("code")
    if type(code) is not str:
        code = error.get("type")
    return message, code if type(code) is str else None


# -- importing ------------------------------------------------------------------------------


class _Fragment(NamedTuple):
    """One tool-call fragment of a delta, checked on its own."""

    call_index: int
    id: str | None
    name: str | None
    arguments: str | None
    has_function: bool
    custom: bool
    """A custom tool call's fragment (free-form input), which a fixture cannot hold."""
    path: Path


class _Choice(NamedTuple):
    """The parts of one choice an importer uses, checked on their own."""

    choice_index: int
    content: str | None
    refusal: str | None
    fragments: tuple[_Fragment, ...]
    finish: str | None
    legacy_call: bool
    """The delta carries a ``function_call`` (the legacy API)."""
    path: Path


class _ToolCall:
    """A tool call being assembled from its fragments."""

    __slots__ = ("arguments", "id", "name")

    def __init__(self, call_id: str, name: str) -> None:
        self.id = call_id
        self.name = name
        self.arguments: list[str] = []
        """Every ``function.arguments`` string present, empty ones too (version 2 keeps
        them as ``argumentFragments``)."""


class _Counts(NamedTuple):
    """One chunk's usage: the two counts, and the details version 2 reads."""

    prompt: int
    completion: int
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None


class Importer(StreamImporter):
    """The openai-chat state machine: chunks until the finish reason, then ``[DONE]``."""

    format = FORMAT

    def __init__(self, usage: Usage | None) -> None:
        super().__init__(usage)
        self._calls: dict[int, _ToolCall] = {}
        self._finish: str | None = None
        self._refusal: list[str] = []
        self._usage: _Counts | None = None
        self._model_known = False
        """The start has its model (version 2: the first non-empty chunk ``model``;
        version 1 keeps none), so later chunks' ``model`` is not read."""

    def feed(self, event: Event) -> None:
        data = event.data
        if data is None:
            self._done()
        elif data.get("error") is not None:
            self._error(data, event.name)
        else:
            self._chunk(data, event.name)

    # -- the three kinds of event ------------------------------------------------------------

    def _chunk(self, data: PlainObject, name: str) -> None:
        # (2) the vocabulary: `object` says what the event is
        kind = data.get("object")
        if kind != _CHUNK:
            if kind == _ANNOTATION:
                self._annotation(data, name)
                return
            if type(kind) is str:
                raise Refusal(
                    _Code.RECORDING_UNKNOWN_EVENT,
                    f"Expected a chunk (`object` {_CHUNK!r}), got `object` {quote(kind)}",
                    ("object",),
                )
            self.refuse(data, "object", str, ())
        # (3) the event alone
        chunk_id = data.get("id")
        if type(chunk_id) is not str or not chunk_id:
            self.refuse(data, "id", str, ())
        choices = data.get("choices")
        if type(choices) is not list:
            self.refuse(data, "choices", list, ())
        counts = None if data.get("usage") is None else self._usage_of(data)
        model: str | None = None
        if not self._model_known:  # read until a chunk names the model (version 2)
            given = data.get("model")
            if self.schema_version < 2:
                self._model_known = True  # version 1 keeps no model
            elif given is not None:
                if type(given) is not str:
                    self.refuse(data, "model", str, ())
                model = given
        if name:
            self._check_name(data, name)
        choice = None
        for position, item in enumerate(choices):
            read = self._choice(item, position)
            if choice is None:
                choice = read
        if choice is not None:
            _refuse_unsupported(choice)
            if len(choices) > 1:
                raise Refusal(
                    _Code.RECORDING_UNSUPPORTED,
                    "A chunk with a second choice: n > 1 has no place in a fixture",
                    ("choices", 1),
                )
        # (4) its place
        if self.terminal_read:
            raise self.out_of_order("A chunk after [DONE]")
        if choice is not None and self._finish is not None:
            self._after_finish(choice, self._finish)
        # (5) against earlier events
        if not self.started:
            self.start(chunk_id, model=model)
            self._model_known = self._model_known or bool(model)
        elif chunk_id != self.response_id:
            raise self.malformed(
                f"The chunk's id {quote(chunk_id)} differs from the stream's "
                f"{quote(self.response_id)}",
                ("id",),
            )
        elif model:  # the first chunks may name none (Azure's)
            self.model(model)
            self._model_known = True
        if counts is not None:
            self._usage = counts
        if choice is not None:
            self._apply(choice)

    def _error(self, data: PlainObject, name: str) -> None:
        # (3) the event alone
        if name:
            self._check_name(data, name)
        error = data["error"]
        if type(error) is not dict:
            self.refuse(data, "error", dict, ())
        message = error.get("message")
        if type(message) is not str:
            self.refuse(error, "message", str, ("error",))
        code = error.get("code")
        if type(code) is not str:
            code = error.get("type")
            if type(code) is not str:
                code = None
        # (4) its place
        if self.terminal_read:
            raise self.out_of_order("A provider error event after [DONE]")
        self.provider_error(message, code)

    def _annotation(self, data: PlainObject, name: str) -> None:
        """An Azure content-filter chunk: counted; only its finish reason counts."""
        # (3) the event alone
        choices = data.get("choices")
        if type(choices) is not list:
            self.refuse(data, "choices", list, ())
        finish: tuple[str, Path] | None = None
        for position, item in enumerate(choices):
            path: Path = ("choices", position)
            if type(item) is not dict:
                raise self.mistyped(item, dict, path)
            delta = item.get("delta")
            if delta is not None:
                if type(delta) is not dict:
                    self.refuse(item, "delta", dict, path)
                if any(delta.get(key) for key in _CONTENT_KEYS):
                    raise Refusal(
                        _Code.RECORDING_UNKNOWN_EVENT,
                        "A chunk with an empty `object` carries content: only Azure's "
                        "content-filter chunks have no `object`, and they carry none",
                        ("object",),
                    )
            reason = self.string(item, "finish_reason", path, optional=True)
            if reason is not None and finish is None:
                finish = (reason, (*path, "finish_reason"))
        if name:
            self._check_name(data, name)
        # (4) its place
        if self.terminal_read:
            raise self.out_of_order("A content-filter chunk after [DONE]")
        if finish is not None and self._finish is not None and finish[0] != self._finish:
            raise self.out_of_order(
                f"A second finish reason {quote(finish[0])} after {quote(self._finish)}"
            )
        self.ignore("content_filter_results" if choices else "prompt_filter_results")
        # (5) against earlier events
        if finish is not None and self._finish is None:
            self._finish_with(*finish)

    def _done(self) -> None:
        # (4) its place
        if self.terminal_read:
            raise self.out_of_order("A second [DONE]")
        # (5) against earlier events
        finish = self._finish
        if finish is None:
            raise self.malformed("[DONE] came before any finish_reason", None)
        if self.schema_version >= 2:
            refused = bool(self._refusal)
            if finish == "length" and not refused:
                self._cut(self._calls)
            self._end(finish, self._usage, bool(self._calls), refused, None)
        elif self._refusal:
            self.refused("".join(self._refusal))
        elif finish in _COMPLETING:
            usage = self._usage
            self.end(bool(self._calls), None if usage is None else usage[:2], None)
        else:
            self.stopped(finish)

    def _end(
        self, finish: str, counts: _Counts | None, calls: bool, refused: bool, path: Path | None
    ) -> None:
        """Version 2's end: the stop reason of ``finish`` (refusal text makes it
        ``refusal``), the finish reason its provider word; a word outside SPEC-V2's table
        stays a ``transport_error`` with that code. ``path`` locates a usage refused."""
        if refused:
            stop_reason = "refusal"
        elif finish in _COMPLETING:
            stop_reason = "tool_call" if calls else "stop"
        else:
            read = _STOP_REASONS.get(finish)
            if read is None:
                self.stopped(finish)
                return
            stop_reason = read
        usage = None
        if counts is not None:
            usage = self.usage_details(*counts, path=path)
        self.finish(stop_reason, usage, finish, path)

    # -- class 3: one event's parts ----------------------------------------------------------

    def _check_name(self, data: PlainObject, name: str) -> None:
        """A chunk needs no ``type``, but the SSE ``event`` name must equal one it carries."""
        kind = data.get("type")
        if kind is not None and kind != name:
            raise self.misnamed(name, kind)

    def _usage_of(self, data: PlainObject) -> _Counts:
        usage = data["usage"]
        if type(usage) is not dict:
            self.refuse(data, "usage", dict, ())
        path: Path = ("usage",)
        prompt = self.count(usage, "prompt_tokens", path)
        completion = self.count(usage, "completion_tokens", path)
        assert prompt is not None and completion is not None  # required counts
        if self.schema_version < 2:
            return _Counts(prompt, completion)
        return _Counts(
            prompt,
            completion,
            self.detail(usage, "prompt_tokens_details", "cached_tokens", path),
            self.detail(usage, "prompt_tokens_details", "cache_write_tokens", path),
            self.detail(usage, "completion_tokens_details", "reasoning_tokens", path),
        )

    def _choice(self, item: PlainJson, position: int) -> _Choice:
        path: Path = ("choices", position)
        if type(item) is not dict:
            raise self.mistyped(item, dict, path)
        index = item.get("index")
        if type(index) is not int:
            self.refuse(item, "index", int, path)
        delta = item.get("delta")
        if type(delta) is not dict:
            self.refuse(item, "delta", dict, path)
        finish = item.get("finish_reason")
        if finish is not None and type(finish) is not str:
            self.refuse(item, "finish_reason", str, path)
        delta_path: Path = (*path, "delta")
        content = delta.get("content")
        if content is not None and type(content) is not str:
            self.refuse(delta, "content", str, delta_path)
        refusal = delta.get("refusal")
        if refusal is not None and type(refusal) is not str:
            self.refuse(delta, "refusal", str, delta_path)
        fragments: tuple[_Fragment, ...] = ()
        calls = delta.get("tool_calls")
        if calls is not None:
            if type(calls) is not list:
                self.refuse(delta, "tool_calls", list, delta_path)
            if calls:
                calls_path: Path = (*delta_path, "tool_calls")
                fragments = tuple(
                    _fragment(call, (*calls_path, number)) for number, call in enumerate(calls)
                )
        for key in _SKIPPED_DELTA_KEYS:
            if delta.get(key) is not None:
                self.ignore(f"delta.{key}")
        return _Choice(
            index,
            content,
            refusal,
            fragments,
            finish,
            delta.get("function_call") is not None,
            path,
        )

    # -- class 4: after the finish reason ----------------------------------------------------

    def _after_finish(self, choice: _Choice, finish: str) -> None:
        if choice.content:
            raise self.out_of_order("Content after the finish reason")
        if choice.refusal:
            raise self.out_of_order("Refusal text after the finish reason")
        if choice.fragments:
            raise self.out_of_order("A tool-call fragment after the finish reason")
        if choice.finish is not None and choice.finish != finish:
            raise self.out_of_order(
                f"A second finish reason {quote(choice.finish)} after {quote(finish)}"
            )

    # -- class 5: against the state ----------------------------------------------------------

    def _apply(self, choice: _Choice) -> None:
        for fragment in choice.fragments:
            self._continue_call(fragment)
        if choice.content:
            self.text(choice.content)
        if choice.refusal:
            self._refusal.append(choice.refusal)
            self.refusal(choice.refusal)
        finish = choice.finish
        if finish is None or self._finish is not None:
            return  # no finish, or the same one repeated (gateways repeat it beside usage)
        self._finish_with(finish, (*choice.path, "finish_reason"))

    def _finish_with(self, finish: str, path: Path) -> None:
        """The stream's finish reason, at ``path``: the tool calls complete, or never."""
        self._finish = finish
        if finish not in _COMPLETING:
            return  # the tool calls never complete (version 2: a `length` cuts them at [DONE])
        for index in sorted(self._calls):
            call = self._calls[index]
            # Arguments came in earlier events: a refusal points at this event as a whole.
            self.tool_call(
                call.id, call.name, "".join(call.arguments), None, index, fragments=call.arguments
            )
        if finish == "tool_calls" and not self._calls:
            raise Refusal(
                _Code.RECORDING_STOP_REASON_MISMATCH,
                "The finish reason is tool_calls but no tool call came",
                path,
            )

    def _continue_call(self, fragment: _Fragment) -> None:
        call = self._calls.get(fragment.call_index)
        if call is None:
            if fragment.id is None:
                raise self.malformed(
                    f"The first fragment of tool call {fragment.call_index} has no `id`",
                    fragment.path,
                )
            if fragment.name is None:
                raise self.malformed(
                    f"The first fragment of tool call {fragment.call_index} has no `function.name`",
                    (*fragment.path, "function") if fragment.has_function else fragment.path,
                )
            call = self._calls[fragment.call_index] = _ToolCall(fragment.id, fragment.name)
        else:
            if fragment.id is not None and fragment.id != call.id:
                raise self.malformed(
                    f"Tool call {fragment.call_index} changes its id from {quote(call.id)} "
                    f"to {quote(fragment.id)}",
                    (*fragment.path, "id"),
                )
            if fragment.name is not None and fragment.name != call.name:
                raise self.malformed(
                    f"Tool call {fragment.call_index} changes its name from "
                    f"{quote(call.name)} to {quote(fragment.name)}",
                    (*fragment.path, "function", "name"),
                )
        if fragment.arguments is not None:
            call.arguments.append(fragment.arguments)

    def _cut(self, calls: Mapping[int, _ToolCall]) -> None:
        """A ``length`` end (version 2), at ``[DONE]``: every call but the last (the
        highest index) complete, in ascending index, then the last one cut."""
        if not calls:
            return
        *complete, last = sorted(calls)
        for index in complete:
            call = calls[index]
            self.tool_call(
                call.id, call.name, "".join(call.arguments), None, index, fragments=call.arguments
            )
        cut = calls[last]
        self.incomplete_tool_call(cut.id, cut.name, cut.arguments)

    # -- a non-streamed answer -----------------------------------------------------------

    def whole(self, body: PlainObject) -> None:
        if body.get("object") != _COMPLETION:
            self._error(body, "")  # the error body: `{"error": {...}}`
            return
        # (3) the body alone
        response_id = self.identifier(body, "id", ())
        model = None
        if self.schema_version >= 2:
            model = self.string(body, "model", (), optional=True)
        choices = self.array(body, "choices", ())
        usage = None if body.get("usage") is None else self._usage_of(body)
        read = [self._whole_choice(item, ("choices", n)) for n, item in enumerate(choices)]
        if not read:
            raise self.malformed("A chat.completion without a choice", ("choices",))
        choice = read[0]
        _refuse_unsupported(choice.choice, "message")
        if len(read) > 1:
            raise Refusal(
                _Code.RECORDING_UNSUPPORTED,
                "A second choice: n > 1 has no place in a fixture",
                ("choices", 1),
            )
        for call in choice.calls:
            if call.custom:
                raise _custom_tool_call((*call.path, "type"))
        # (5) what its stream would give, in its order
        self.start(response_id, model=model)
        self.text(choice.choice.content or "")
        refusal = choice.choice.refusal
        if refusal:
            self.refusal(refusal)
        finish = choice.choice.finish
        assert finish is not None  # a whole choice's finish reason is required
        if finish in _COMPLETING:
            for number, call in enumerate(choice.calls):
                arguments = (*call.path, "function", "arguments")
                self.tool_call(call.id, call.name, call.arguments or "", arguments, number)
            if finish == "tool_calls" and not choice.calls:
                raise Refusal(
                    _Code.RECORDING_STOP_REASON_MISMATCH,
                    "The finish reason is tool_calls but the message has no tool call",
                    (*choice.choice.path, "finish_reason"),
                )
        elif finish == "length" and self.schema_version >= 2 and not refusal:
            self._cut_whole(choice.calls)
        if self.schema_version >= 2:
            self._end(finish, usage, bool(choice.calls), bool(refusal), ())
        elif refusal:
            self.refused(refusal)
        elif finish in _COMPLETING:
            self.end(bool(choice.calls), None if usage is None else usage[:2], ())
        else:
            self.stopped(finish)

    def _cut_whole(self, calls: tuple[_WholeCall, ...]) -> None:
        """A whole message cut by the token limit (version 2), as its stream would give:
        every call but the last complete, the last one cut."""
        if not calls:
            return
        *complete, cut = calls
        for number, call in enumerate(complete):
            arguments = (*call.path, "function", "arguments")
            self.tool_call(call.id, call.name, call.arguments or "", arguments, number)
        # Its arguments are the one fragment a stream would have sent, if any.
        fragments = [] if cut.arguments is None else [cut.arguments]
        self.incomplete_tool_call(cut.id, cut.name, fragments)

    def _whole_choice(self, item: PlainJson, path: Path) -> _WholeChoice:
        """One choice of a ``chat.completion``, checked on its own (class 3)."""
        if type(item) is not dict:
            raise self.mistyped(item, dict, path)
        index = self.field(item, "index", int, path)
        message = self.obj(item, "message", path)
        finish = self.string(item, "finish_reason", path)
        message_path: Path = (*path, "message")
        content = self.string(message, "content", message_path, optional=True)
        refusal = self.string(message, "refusal", message_path, optional=True)
        calls = self.array(message, "tool_calls", message_path, optional=True) or []
        for key in _SKIPPED_DELTA_KEYS:
            if message.get(key) is not None:
                self.ignore(f"message.{key}")
        checked = _Choice(
            index,  # type: ignore[arg-type]  # checked to be an int
            content,
            refusal,
            (),
            finish,
            message.get("function_call") is not None,
            path,
        )
        calls_path: Path = (*message_path, "tool_calls")
        return _WholeChoice(
            checked, tuple(self._whole_call(call, (*calls_path, n)) for n, call in enumerate(calls))
        )

    def _whole_call(self, call: PlainJson, path: Path) -> _WholeCall:
        if type(call) is not dict:
            raise self.mistyped(call, dict, path)
        call_id = self.identifier(call, "id", path)
        if self.string(call, "type", path, optional=True) == "custom":
            return _WholeCall(call_id, "", None, True, path)
        function = self.obj(call, "function", path)
        function_path: Path = (*path, "function")
        name = self.identifier(function, "name", function_path)
        # Optional, as a stream's fragments are: a gateway leaves it out of a call without
        # arguments, which is `{}`, as its stream would give.
        arguments = self.string(function, "arguments", function_path, optional=True)
        return _WholeCall(call_id, name, arguments, False, path)


class _WholeCall(NamedTuple):
    """One tool call of a non-streamed message, checked on its own."""

    id: str
    name: str
    arguments: str | None
    """The arguments text, ``None`` when the body has none (``{}``)."""
    custom: bool
    """A custom tool call (free-form input), which a fixture cannot hold."""
    path: Path


class _WholeChoice(NamedTuple):
    """The one choice of a ``chat.completion``: the parts a stream's choice has, and
    the tool calls whole."""

    choice: _Choice
    calls: tuple[_WholeCall, ...]


def _fragment(call: PlainJson, path: Path) -> _Fragment:
    """A tool-call fragment checked on its own (class 3)."""
    if type(call) is not dict:
        raise StreamImporter.mistyped(call, dict, path)
    index = call.get("index")
    if type(index) is not int:
        StreamImporter.refuse(call, "index", int, path)
    call_id = call.get("id")
    if call_id is not None and (type(call_id) is not str or not call_id):
        StreamImporter.refuse(call, "id", str, path)
    function = call.get("function")
    name: str | None = None
    arguments: str | None = None
    if function is not None:
        function_path: Path = (*path, "function")
        if type(function) is not dict:
            StreamImporter.refuse(call, "function", dict, path)
        given_name = function.get("name")
        if given_name is not None:
            if type(given_name) is not str or not given_name:
                StreamImporter.refuse(function, "name", str, function_path)
            name = given_name
        given_arguments = function.get("arguments")
        if given_arguments is not None:
            if type(given_arguments) is not str:
                StreamImporter.refuse(function, "arguments", str, function_path)
            arguments = given_arguments
    custom = call.get("type") == "custom" or call.get("custom") is not None
    return _Fragment(index, call_id, name, arguments, function is not None, custom, path)


def _refuse_unsupported(choice: _Choice, content: str = "delta") -> None:
    """Class 3, second half: the shapes a fixture cannot hold. ``content`` is the key of
    the choice's content: a stream's ``delta``, a whole answer's ``message``."""
    if choice.choice_index != 0:
        raise Refusal(
            _Code.RECORDING_UNSUPPORTED,
            f"A choice with index {choice.choice_index}: n > 1 has no place in a fixture",
            (*choice.path, "index"),
        )
    if choice.legacy_call:
        raise Refusal(
            _Code.RECORDING_UNSUPPORTED,
            f"A legacy `function_call` {content}: only `tool_calls` have a place in a fixture",
            (*choice.path, content, "function_call"),
        )
    if choice.finish == "function_call":
        raise Refusal(
            _Code.RECORDING_UNSUPPORTED,
            "The legacy finish reason function_call: only tool calls have a place in a fixture",
            (*choice.path, "finish_reason"),
        )
    for fragment in choice.fragments:
        if fragment.custom:
            raise _custom_tool_call((*fragment.path, "type"))


def _custom_tool_call(path: Path) -> Refusal:
    return Refusal(
        _Code.RECORDING_UNSUPPORTED,
        "A custom tool call (free-form input) has no place in a fixture: its tool calls "
        "take JSON object arguments",
        path,
    )


# -- reading requests -----------------------------------------------------------------------
#
# The helpers up to `content_blocks` are the OpenAI wire's shared reading (the Responses
# reader uses them too): a problem's wording, the typed fields, a call's arguments, a
# message's content, the tools.

ROLES: Final[Mapping[str, CourseRequestRole]] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}
"""The message roles of both OpenAI formats, as a request message names them."""
_LEGACY_RESULT: Final = "function"
"""The legacy role of a function's result: it names no call, so it is read as an
``other`` block of a ``tool`` message (providers still accept it)."""
_TEXT_PARTS: Final = frozenset({"text"})
_REFUSAL_PART: Final = "refusal"


def read_problem(place: str, what: str) -> RequestReadError:
    """The read problem ``course read: <place>: <what>``."""
    return RequestReadError(f"course read: {place}: {one_line(what)}")


def at(place: str, key: str) -> str:
    """The place of ``key`` in the object at ``place`` (``""``: the body)."""
    return f"{place}.{key}" if place else key


def frozen(value: dict[str, PlainJson]) -> Mapping[str, JsonValue]:
    """A wire object in the read-only form a block keeps."""
    return frozen_object(value)


def listed(owner: Mapping[str, PlainJson], key: str, place: str) -> list[PlainJson]:
    """``owner[key]`` as a list (``[]``: absent or null); ``place`` is ``owner``'s."""
    value = owner.get(key)
    if value is None:
        return []
    if type(value) is not list:
        raise read_problem(at(place, key), f"{key} must be an array, got {_kind(value)}")
    return value


def string(owner: Mapping[str, PlainJson], key: str, place: str, what: str) -> str:
    """``owner[key]``, a string; ``what`` names ``owner`` in the problem (``a tool message``)."""
    value = owner.get(key)
    if type(value) is not str:
        raise read_problem(at(place, key), f"{what} needs a string {key}, got {_kind(value)}")
    return value


def optional_string(owner: Mapping[str, PlainJson], key: str, place: str, what: str) -> str | None:
    """``owner[key]``, a string, or ``None`` when it is absent or null."""
    value = owner.get(key)
    if value is None:
        return None
    return string(owner, key, place, what)


def an_object(value: PlainJson, place: str, what: str) -> dict[str, PlainJson]:
    """``value`` checked to be a JSON object; ``what`` is its kind (``a message``)."""
    if type(value) is not dict:
        raise read_problem(place, f"{what} must be an object, got {_kind(value)}")
    return value


def tool_call(
    call_id: str, name: str, arguments: str | None
) -> CourseToolCallBlock | CourseIncompleteToolCallBlock:
    """A tool call whose ``arguments`` the wire sends as JSON text (``None`` or ``""``:
    none, ``{}``, as the importer reads them). Text that is not a strict JSON object is
    kept as it came: providers accept it, and the checks find the call changed."""
    if not arguments:
        return CourseToolCallBlock(call_id, name, {})
    try:
        value = loads(arguments, max_depth=ARGUMENTS_MAX_DEPTH)
    except JsonSyntaxError:
        return CourseIncompleteToolCallBlock(call_id, name, arguments)
    if type(value) is not dict:
        return CourseIncompleteToolCallBlock(call_id, name, arguments)
    return CourseToolCallBlock(call_id, name, frozen(value))


def content_blocks(
    content: PlainJson, place: str, text_kinds: frozenset[str]
) -> list[CourseRequestBlock]:
    """A message's content at ``place``: a string is one text block (an empty one too),
    null none; a list's parts are text (its type in ``text_kinds``), refusal, or, of
    any other type (an image, a file, audio), an ``other`` block of the part."""
    if type(content) is str:
        return [CourseTextBlock(content)]
    if content is None:
        return []
    if type(content) is not list:
        raise read_problem(
            place, f"content must be a string, an array of parts or null, got {_kind(content)}"
        )
    blocks: list[CourseRequestBlock] = []
    for index, item in enumerate(content):
        part_place = f"{place}[{index}]"
        part = an_object(item, part_place, "a content part")
        kind = string(part, "type", part_place, "a content part")
        if kind in text_kinds:
            blocks.append(CourseTextBlock(string(part, "text", part_place, "a text part")))
        elif kind == _REFUSAL_PART:
            blocks.append(CourseRefusalBlock(string(part, "refusal", part_place, "a refusal part")))
        else:
            blocks.append(CourseOtherBlock(kind, frozen(part)))
    return blocks


def read_tools(
    body: Mapping[str, PlainJson],
    function_of: Callable[[dict[str, PlainJson], str], tuple[dict[str, PlainJson], str]],
) -> tuple[CourseTool, ...]:
    """The function tools of ``tools``, in order; other tools are skipped.
    ``function_of`` gives the object of a function tool at ``tools[n]`` that holds its
    ``name``, ``description`` and ``parameters``, and that object's place."""
    tools: list[CourseTool] = []
    for index, item in enumerate(listed(body, "tools", "")):
        tool = an_object(item, f"tools[{index}]", "a tool")
        if tool.get("type") != "function":
            continue
        function, place = function_of(tool, f"tools[{index}]")
        name = string(function, "name", place, "a function tool")
        description = optional_string(function, "description", place, "a function tool")
        parameters = function.get("parameters")
        if parameters is not None and type(parameters) is not dict:
            raise read_problem(
                at(place, "parameters"),
                f"a function tool's `parameters` must be an object, got {_kind(parameters)}",
            )
        tools.append(
            CourseTool(name, description, None if parameters is None else frozen(parameters))
        )
    return tuple(tools)


def read_request(body: Mapping[str, PlainJson], request_id: str, sent: SentLog) -> ReadRequest:
    """A Chat Completions body read (``SPEC-REQUESTS.md``): its ``messages`` in order,
    each block placed at ``messages[i]``, and its function tools. Raises only
    ``RequestReadError``; ``sent`` is not needed (Chat keeps no state)."""
    messages: list[CourseRequestMessage] = []
    places: list[tuple[str, ...]] = []
    for index, item in enumerate(listed(body, "messages", "")):
        place = f"messages[{index}]"
        message = _message(an_object(item, place, "a message"), place)
        messages.append(message)
        places.append((place,) * len(message.content))
    tools = read_tools(body, _tool_function)
    return ReadRequest(CourseModelRequest(request_id, tuple(messages), tools), tuple(places))


def _tool_function(tool: dict[str, PlainJson], place: str) -> tuple[dict[str, PlainJson], str]:
    place = at(place, "function")
    return an_object(tool.get("function"), place, "a function tool's `function`"), place


def _message(message: dict[str, PlainJson], place: str) -> CourseRequestMessage:
    """One message: its content (then an assistant's refusal and tool calls), or a tool
    message's result."""
    given = string(message, "role", place, "a message")
    role = ROLES.get(given)
    if role is None:
        if given == _LEGACY_RESULT:
            return CourseRequestMessage("tool", (CourseOtherBlock(given, frozen(message)),))
        raise read_problem(at(place, "role"), f"unknown role {quote(given)}")
    if role == "tool":
        call_id = string(message, "tool_call_id", place, "a tool message")
        result = CourseToolResultBlock(call_id, frozen_json(message.get("content")))
        return CourseRequestMessage("tool", (result,))
    blocks = content_blocks(message.get("content"), at(place, "content"), _TEXT_PARTS)
    if role == "assistant":
        refusal = optional_string(message, "refusal", place, "an assistant message")
        if refusal is not None:
            blocks.append(CourseRefusalBlock(refusal))
        legacy = message.get("function_call")
        if legacy is not None:  # the legacy call names no id: no result can name it
            call = an_object(legacy, at(place, "function_call"), "a `function_call`")
            blocks.append(CourseOtherBlock("function_call", frozen(call)))
        for number, item in enumerate(listed(message, "tool_calls", place)):
            call_place = f"{at(place, 'tool_calls')}[{number}]"
            blocks.append(_tool_call(an_object(item, call_place, "a tool call"), call_place))
    return CourseRequestMessage(role, tuple(blocks))


def _tool_call(call: dict[str, PlainJson], place: str) -> CourseRequestBlock:
    """A function tool call; a call of another type (``custom``) is an ``other`` block."""
    kind = optional_string(call, "type", place, "a tool call")
    if kind is not None and kind != "function":
        return CourseOtherBlock(kind, frozen(call))
    call_id = string(call, "id", place, "a tool call")
    function_place = at(place, "function")
    what = "a tool call's `function`"
    function = an_object(call.get("function"), function_place, what)
    name = string(function, "name", function_place, what)
    arguments = optional_string(function, "arguments", function_place, what)
    return tool_call(call_id, name, arguments)


# -- rendering ------------------------------------------------------------------------------

_DONE_EVENT: Final = format_event("[DONE]")

_FINISH_WORDS: Final[Mapping[str, tuple[str, ...]]] = {
    "stop": ("stop",),
    "toolCall": ("tool_calls", "stop"),
    "length": ("length",),
    "contentFilter": ("content_filter",),
    "refusal": ("stop",),
    "pauseTurn": ("stop",),
}
"""Each stop reason's ``finish_reason`` words (SPEC-V2's table), the one sent first:
the fixture's ``providerStopReason`` is sent instead when it is one of them. Chat has no
word for a refusal (its text is in ``delta.refusal``) nor for a paused turn."""


def _finish_reason(response: CourseModelResponse) -> str:
    words = _FINISH_WORDS[response.stop_reason]
    provider_word = response.provider_stop_reason
    return provider_word if provider_word in words else words[0]


def _usage(response: CourseModelResponse) -> PlainObject:
    """The usage in Chat's fields: the details only where the fixture has them."""
    usage = response.usage
    plain: PlainObject = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
    prompt: PlainObject = {}
    if usage.cache_read_tokens is not None:
        prompt["cached_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens is not None:
        prompt["cache_write_tokens"] = usage.cache_write_tokens
    if prompt:
        plain["prompt_tokens_details"] = prompt
    if usage.reasoning_tokens is not None:
        plain["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return plain


def _includes_usage(request: PlainObject) -> bool:
    """Whether the request asked for the usage chunk, as OpenAI sends it only then."""
    options = request.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


class Renderer(StreamRenderer):
    """Renders a stream as openai-chat chunks, as OpenAI sends them.

    The opening chunk (the role) waits for the first record this format renders: its
    ``content`` is ``null`` when a tool call comes first, and when a refusal does (with
    ``refusal: ""``, as OpenAI opens a refusal), else ``""``. Thinking has no place in
    Chat's wire and is left out. The usage chunk comes only when the request's
    ``stream_options.include_usage`` is true; every other chunk then has ``usage: null``.
    """

    format = FORMAT

    def __init__(self, model: str, request: PlainObject | None = None) -> None:
        super().__init__(model, request)
        self._created = int(time.time())
        self._response_id = ""
        self._tool_calls = 0
        self._opened = False
        self._include_usage = _includes_usage(self.request)

    def open(self, response_id: str) -> str:
        self._response_id = response_id
        return ""  # the role chunk goes out with the first record, which decides its content

    def chunk(self, chunk: CourseModelChunk) -> str:
        if isinstance(chunk, CourseTextDeltaChunk):
            return self._opening("") + self._chunk({"content": chunk.text})
        if isinstance(chunk, CourseRefusalDeltaChunk):
            return self._opening(None, refusal=True) + self._chunk({"refusal": chunk.text})
        if isinstance(chunk, CourseToolCallChunk):
            fragments = self.argument_fragments(chunk.id)
            if fragments is None:
                fragments = (compact(thaw(chunk.arguments)),)
            return self._call(chunk.id, chunk.name, fragments)
        if isinstance(chunk, CourseIncompleteToolCallChunk):
            fragments = self.argument_fragments(chunk.id)
            if fragments is None:
                fragments = (chunk.arguments_text,)
            return self._call(chunk.id, chunk.name, fragments)
        return ""  # thinking, its signature, redacted thinking: Chat has no place for them

    def complete(self, response: CourseModelResponse) -> str:
        text = self._opening("") + self._chunk({}, _finish_reason(response))
        if self._include_usage:
            usage_chunk = self._head()
            usage_chunk["choices"] = []
            usage_chunk["usage"] = _usage(response)
            text += format_event(compact(usage_chunk))
        return text + _DONE_EVENT

    def fail(self, error: FixtureProviderError) -> str:
        # Version 2 begins streaming at the start: a failure before any record still
        # follows the role chunk, so the answer's id comes before its error.
        opening = self._opening("") if self._response_id else ""
        return opening + format_event(compact(self.error_body(error))) + _DONE_EVENT

    def whole(self, response: CourseModelResponse) -> PlainObject:
        texts: list[str] = []
        refusals: list[str] = []
        tool_calls: list[PlainJson] = []
        for block in response.message.content:
            if isinstance(block, CourseTextBlock):
                texts.append(block.text)
            elif isinstance(block, CourseRefusalBlock):
                refusals.append(block.text)
            elif isinstance(block, (CourseToolCallBlock, CourseIncompleteToolCallBlock)):
                tool_calls.append(
                    {
                        "id": block.id,
                        "type": "function",
                        "function": {"name": block.name, "arguments": self._arguments_text(block)},
                    }
                )
        message: PlainObject = {
            "role": "assistant",
            "content": "".join(texts) if texts else None,
            "refusal": "".join(refusals) if refusals else None,
        }
        if tool_calls:
            message["tool_calls"] = tool_calls
        return {
            "id": response.response_id,
            "object": "chat.completion",
            "created": self._created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": _finish_reason(response),
                }
            ],
            "usage": _usage(response),
        }

    @staticmethod
    def error_body(error: FixtureProviderError) -> PlainObject:
        code, message = error_words(error)
        return {"error": {"message": message, "type": code, "code": code}}

    def _arguments_text(self, block: CourseToolCallBlock | CourseIncompleteToolCallBlock) -> str:
        """A call's whole arguments text: its fragments joined (a cut call's always),
        else compact JSON."""
        if isinstance(block, CourseIncompleteToolCallBlock):
            return block.arguments_text
        fragments = self.argument_fragments(block.id)
        return compact(thaw(block.arguments)) if fragments is None else "".join(fragments)

    def _call(self, call_id: str, name: str, fragments: Sequence[str]) -> str:
        """A tool call as OpenAI streams it: the first chunk names it and carries the
        first fragment, each later fragment is a chunk of its own."""
        index = self._tool_calls
        self._tool_calls += 1
        function: PlainObject = {"name": name}
        if fragments:
            function["arguments"] = fragments[0]
        first: PlainObject = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": function,
        }
        text = self._opening(None) + self._chunk({"tool_calls": [first]})
        for fragment in fragments[1:]:
            later: PlainObject = {"index": index, "function": {"arguments": fragment}}
            text += self._chunk({"tool_calls": [later]})
        return text

    def _opening(self, content: str | None, *, refusal: bool = False) -> str:
        """The role chunk, before the first record only."""
        if self._opened:
            return ""
        self._opened = True
        delta: PlainObject = {"role": "assistant", "content": content}
        if refusal:
            delta["refusal"] = ""
        return self._chunk(delta)

    def _head(self) -> PlainObject:
        return {
            "id": self._response_id,
            "object": _CHUNK,
            "created": self._created,
            "model": self.model,
        }

    def _chunk(self, delta: PlainObject, finish_reason: str | None = None) -> str:
        chunk = self._head()
        chunk["choices"] = [
            {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        ]
        if self._include_usage:
            chunk["usage"] = None
        return format_event(compact(chunk))
