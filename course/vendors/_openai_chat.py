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
"""

from __future__ import annotations

import time
from typing import Final, NamedTuple

from .._errors import FixtureProviderError
from .._json import PlainJson, thaw
from .._model import CourseModelChunk, CourseModelResponse, CourseTextBlock, CourseTextDeltaChunk
from ._recording import (
    Event,
    Path,
    PlainObject,
    RecordingErrorCode,
    Refusal,
    StreamImporter,
    Usage,
    quote,
)
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

FORMAT: Final = "openai-chat"

_CHUNK: Final = "chat.completion.chunk"
_COMPLETION: Final = "chat.completion"
_ANNOTATION: Final = ""
"""The ``object`` of Azure's content-filter chunks."""
_CONTENT_KEYS: Final = ("content", "refusal", "tool_calls", "function_call")
"""Delta keys that carry content: an annotation has none of them."""
_COMPLETING: Final = frozenset({"stop", "tool_calls"})
"""Finish reasons at which the tool calls are complete."""
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


class Importer(StreamImporter):
    """The openai-chat state machine: chunks until the finish reason, then ``[DONE]``."""

    format = FORMAT

    def __init__(self, usage: Usage | None) -> None:
        super().__init__(usage)
        self._calls: dict[int, _ToolCall] = {}
        self._finish: str | None = None
        self._refusal: list[str] = []
        self._usage: Usage | None = None

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
            self.start(chunk_id)
        elif chunk_id != self.response_id:
            raise self.malformed(
                f"The chunk's id {quote(chunk_id)} differs from the stream's "
                f"{quote(self.response_id)}",
                ("id",),
            )
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
        if self._refusal:
            self.refused("".join(self._refusal))
        elif finish in _COMPLETING:
            self.end(bool(self._calls), self._usage, None)
        else:
            self.stopped(finish)

    # -- class 3: one event's parts ----------------------------------------------------------

    def _check_name(self, data: PlainObject, name: str) -> None:
        """A chunk needs no ``type``, but the SSE ``event`` name must equal one it carries."""
        kind = data.get("type")
        if kind is not None and kind != name:
            raise self.misnamed(name, kind)

    def _usage_of(self, data: PlainObject) -> Usage:
        usage = data["usage"]
        if type(usage) is not dict:
            self.refuse(data, "usage", dict, ())
        prompt = self.count(usage, "prompt_tokens", ("usage",))
        completion = self.count(usage, "completion_tokens", ("usage",))
        return (prompt, completion)  # type: ignore[return-value]  # required counts are ints

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
        finish = choice.finish
        if finish is None or self._finish is not None:
            return  # no finish, or the same one repeated (gateways repeat it beside usage)
        self._finish_with(finish, (*choice.path, "finish_reason"))

    def _finish_with(self, finish: str, path: Path) -> None:
        """The stream's finish reason, at ``path``: the tool calls complete, or never."""
        self._finish = finish
        if finish not in _COMPLETING:
            return  # the tool calls never complete
        for index in sorted(self._calls):
            call = self._calls[index]
            # Arguments came in earlier events: a refusal points at this event as a whole.
            self.tool_call(call.id, call.name, "".join(call.arguments), None, index)
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
        if fragment.arguments:
            call.arguments.append(fragment.arguments)

    # -- a non-streamed answer -----------------------------------------------------------

    def whole(self, body: PlainObject) -> None:
        if body.get("object") != _COMPLETION:
            self._error(body, "")  # the error body: `{"error": {...}}`
            return
        # (3) the body alone
        response_id = self.identifier(body, "id", ())
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
        self.start(response_id)
        self.text(choice.choice.content or "")
        finish = choice.choice.finish
        assert finish is not None  # a whole choice's finish reason is required
        if finish in _COMPLETING:
            for number, call in enumerate(choice.calls):
                arguments = (*call.path, "function", "arguments")
                self.tool_call(call.id, call.name, call.arguments, arguments, number)
            if finish == "tool_calls" and not choice.calls:
                raise Refusal(
                    _Code.RECORDING_STOP_REASON_MISMATCH,
                    "The finish reason is tool_calls but the message has no tool call",
                    (*choice.choice.path, "finish_reason"),
                )
        if choice.choice.refusal:
            self.refused(choice.choice.refusal)
        elif finish in _COMPLETING:
            self.end(bool(choice.calls), usage, ())
        else:
            self.stopped(finish)

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
            return _WholeCall(call_id, "", "", True, path)
        function = self.obj(call, "function", path)
        function_path: Path = (*path, "function")
        name = self.identifier(function, "name", function_path)
        # Optional, as a stream's fragments are: a gateway leaves it out of a call without
        # arguments, which is `{}`, as its stream would give.
        arguments = self.string(function, "arguments", function_path, optional=True) or ""
        return _WholeCall(call_id, name, arguments, False, path)


class _WholeCall(NamedTuple):
    """One tool call of a non-streamed message, checked on its own."""

    id: str
    name: str
    arguments: str
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


# -- rendering ------------------------------------------------------------------------------

_DONE_EVENT: Final = format_event("[DONE]")


def _finish_reason(response: CourseModelResponse) -> str:
    return "tool_calls" if response.stop_reason == "toolCall" else "stop"


def _usage(response: CourseModelResponse) -> PlainObject:
    usage = response.usage
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _includes_usage(request: PlainObject) -> bool:
    """Whether the request asked for the usage chunk, as OpenAI sends it only then."""
    options = request.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


class Renderer(StreamRenderer):
    """Renders a stream as openai-chat chunks, as OpenAI sends them.

    The opening chunk (the role) waits for the first record: its ``content`` is
    ``null`` when a tool call comes first, else ``""``. The usage chunk comes only when
    the request's ``stream_options.include_usage`` is true; every other chunk then has
    ``usage: null``.
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
        index = self._tool_calls
        self._tool_calls += 1
        fragment: PlainObject = {
            "index": index,
            "id": chunk.id,
            "type": "function",
            "function": {"name": chunk.name, "arguments": compact(thaw(chunk.arguments))},
        }
        return self._opening(None) + self._chunk({"tool_calls": [fragment]})

    def complete(self, response: CourseModelResponse) -> str:
        text = self._opening("") + self._chunk({}, _finish_reason(response))
        if self._include_usage:
            usage_chunk = self._head()
            usage_chunk["choices"] = []
            usage_chunk["usage"] = _usage(response)
            text += format_event(compact(usage_chunk))
        return text + _DONE_EVENT

    def fail(self, error: FixtureProviderError) -> str:
        return format_event(compact(self.error_body(error))) + _DONE_EVENT

    def whole(self, response: CourseModelResponse) -> PlainObject:
        texts: list[str] = []
        tool_calls: list[PlainJson] = []
        for block in response.message.content:
            if isinstance(block, CourseTextBlock):
                texts.append(block.text)
            else:
                tool_calls.append(
                    {
                        "id": block.id,
                        "type": "function",
                        "function": {
                            "name": block.name,
                            "arguments": compact(thaw(block.arguments)),
                        },
                    }
                )
        message: PlainObject = {
            "role": "assistant",
            "content": "".join(texts) if texts else None,
            "refusal": None,
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

    def _opening(self, content: str | None) -> str:
        """The role chunk, before the first record only."""
        if self._opened:
            return ""
        self._opened = True
        return self._chunk({"role": "assistant", "content": content})

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
