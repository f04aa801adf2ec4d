"""The ``openai-responses`` wire format (OpenAI Responses API, ``stream: true``).

Both directions live here, and the vendor's wire names stay here.

**Import.** ``Importer`` reads one recorded stream, event by event. Each event is
judged in the SPEC's classes: its ``type`` must be ``error`` or start with
``response.`` (vocabulary); the keys the event's handler uses are checked by exact
type (the event alone); then its place (after ``response.created``, before the
terminal, for an item that was added and is not done); then against earlier events.

- ``response.created`` is the start: ``response.id`` is the ``responseId`` (version 2:
  ``response.model`` the model).
- Output items are tracked by ``item.id`` from ``response.output_item.added``:
  ``message`` items carry text (``response.output_text.delta``) and refusal text
  (``response.refusal.delta``); ``function_call`` items are tool calls, complete at
  their ``response.output_item.done``, whose ``item.arguments`` must equal the
  argument deltas when there were any (version 2 keeps the deltas as the fragments); a
  ``custom_tool_call``, and every item that asks the client to act (a computer, shell
  or patch call, an MCP approval, a client-side tool search), is unsupported; version 2
  reads ``reasoning`` items (their summary and reasoning text deltas are one thinking
  block, signed by the ``encrypted_content`` of their ``output_item.done``); every
  other kind (web search, ...; in version 1 reasoning too) is ignored with its events.
- ``response.completed`` ends the response (``tool_call`` when a function call
  completed, else ``stop``; any refusal text makes it a ``refusal`` transport error,
  in version 2 a ``refusal`` end); ``response.incomplete`` is a transport error coded
  with its reason (version 2: ``max_output_tokens`` is a ``length`` end, which cuts
  the last open call, and ``content_filter`` a ``content_filter`` end, each keeping the
  reason as the provider's word; another reason stays a transport error);
  ``response.failed`` one with its ``response.error``; an ``error`` event is the
  provider error event (its fields nested under ``error``, as the live API sends them,
  or at the top). One ``data: [DONE]`` may trail the terminal. Version 2 keeps the
  usage details (cached, cache-write and reasoning tokens).
- Every other ``response.*`` event is ignorable: it only obeys the place rules.
- A non-streamed ``response`` object gives what its stream would: its ``output`` items
  in order, then its ``status`` read as the terminal event of that name.

**Serve.** ``Renderer`` streams ``response.created``; a ``message`` item for each run
of text and refusal deltas (added, then per run an ``output_text`` or ``refusal`` part:
added, one delta per delta, the text and the part done; then the item done); a
``reasoning`` item per thinking block (added, a summary part, one summary delta per
delta, then the summary, the part and the item done, with ``encrypted_content`` when
signed); a ``function_call`` item per tool call (added, one arguments delta per
fragment, arguments done, item done; a cut call is added with its deltas and never
done); then ``response.completed``, or ``response.incomplete`` with its reason for a
``length`` or ``content_filter`` end, with every item and the usage. Redacted thinking
and call signatures have no place in the format and are left out. Events carry
``sequence_number`` from 0, ``output_index`` and, for parts, ``item_id`` and
``content_index`` (``summary_index``). A failure once streaming has begun is an
``error`` event. ``sent_items`` gives each output item's id with the blocks it carried,
for a later ``item_reference``.

**Requests.** ``read_request`` reads a request body (``SPEC-REQUESTS.md``):
``instructions`` a system message, then ``input`` (a string: one user message). Its
items: a ``message`` (or an item with a ``role`` and no ``type``); consecutive items of
the model's turn (assistant messages, ``function_call``, ``reasoning``, other calls,
referenced items) one assistant message; a ``function_call_output`` (or another
``..._output``) a tool message; any other item an ``other`` block of a user message.
``previous_response_id`` brings the history of the response this server sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Final, NamedTuple, TypeAlias, cast

from .._errors import FixtureProviderError
from .._json import PlainJson, thaw
from .._model import (
    CourseIncompleteToolCallBlock,
    CourseIncompleteToolCallChunk,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
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
    CourseToolCallBlock,
    CourseToolCallChunk,
    CourseToolResultBlock,
)
from .._text import one_line
from ._openai_chat import (
    ROLES,
    an_object,
    at,
    content_blocks,
    frozen,
    listed,
    optional_string,
    read_problem,
    read_tools,
    string,
    tool_call,
)
from ._openai_chat import read_error_body as chat_error_body
from ._recording import (
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
from ._requests import ReadRequest, RequestReadError, SentLog, frozen_json
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

FORMAT: Final = "openai-responses"

_PREFIX: Final = "response."
_ERROR: Final = "error"
_MESSAGE: Final = "message"
_FUNCTION_CALL: Final = "function_call"
_RESPONSE_OBJECT: Final = "response"
_CLIENT_ACTIONS: Final = frozenset(
    {
        "custom_tool_call",
        "computer_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "mcp_approval_request",
    }
)
"""Items that ask the client to act, which a fixture has no place for: ignoring them
would turn a request for action into a clean stop. A ``tool_search_call`` joins them
when its ``execution`` is ``client``."""
_TERMINALS: Final = ("completed", "incomplete", "failed")
"""The statuses of a non-streamed response, read as the terminal event of that name."""

# Events that only restate what other events say (a part opened, a text finished):
# skipping them loses nothing, so ``ignored`` does not count them.
_RESTATING: Final = frozenset(
    {
        "response.in_progress",
        "response.queued",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.done",
        "response.refusal.done",
        "response.function_call_arguments.done",
    }
)


def detects(first: PlainObject) -> bool:
    """Whether a first event says this format (``format="auto"``)."""
    kind = first.get("type")
    return type(kind) is str and kind.startswith(_PREFIX)


def precedes(event: PlainObject) -> bool:
    """Whether an event may come before the start without telling a format: none."""
    return False


def fits(first: PlainObject) -> bool:
    """Whether a first event may open a recording of this format."""
    kind = first.get("type")
    return type(kind) is str and (kind == _ERROR or kind.startswith(_PREFIX))


def detects_whole(body: PlainObject) -> bool:
    """Whether a non-streamed body says this format: a ``response`` object."""
    return body.get("object") == _RESPONSE_OBJECT


def fits_whole(body: PlainObject) -> bool:
    """Whether a non-streamed body is this format's: a ``response`` object, or the
    error body ``{"error": ...}``."""
    return body.get("object") == _RESPONSE_OBJECT or body.get("error") is not None


def read_error_body(body: PlainObject) -> tuple[str, str | None] | None:
    """The message and code of an HTTP error body: OpenAI's, as Chat reads it; ``None``
    for a ``response`` object (a failed response carries an ``error`` too)."""
    if body.get("object") == _RESPONSE_OBJECT:
        return None
    return chat_error_body(body)


def _asks_the_client(kind: str, item: PlainObject) -> bool:
    """Whether an item of this kind asks the client to act."""
    return kind in _CLIENT_ACTIONS or (
        kind == "tool_search_call" and item.get("execution") == "client"
    )


def _unsupported(kind: str, path: Path) -> Refusal:
    if kind == "custom_tool_call":
        reason = (
            "(free-form tool input) has no place in a fixture: its tool calls take JSON "
            "object arguments"
        )
    else:
        reason = (
            "asks the client to act, which a fixture has no place for (ignoring it would "
            "turn the request for action into a clean stop)"
        )
    return Refusal(_Code.RECORDING_UNSUPPORTED, f"A {quote(kind)} item {reason}", path)


# -- import -------------------------------------------------------------------------------

_Code = RecordingErrorCode
_ROOT: Final[Path] = ()
_ITEM: Final[Path] = ("item",)
_RESPONSE: Final[Path] = ("response",)
_REASONING: Final = "reasoning"
_LENGTH_REASON: Final = "max_output_tokens"
_FILTER_REASON: Final = "content_filter"

Counts: TypeAlias = tuple[int, int, int | None, int | None, int | None]
"""A recorded usage's input, output, cache read, cache write and reasoning counts (the
last three ``None`` when not reported)."""


class _Item:
    """An output item between its ``output_item.added`` and ``output_item.done``."""

    __slots__ = ("arguments", "call_id", "done", "kind", "name", "output_index")

    def __init__(
        self, kind: str, call_id: str = "", name: str = "", output_index: int | None = None
    ) -> None:
        self.kind = kind
        """The item's ``type``: ``message``, ``function_call``, (version 2) ``reasoning``,
        or an ignored kind."""
        self.call_id = call_id
        self.name = name
        self.output_index = output_index
        """Where the item is in the response's output, if the event said."""
        self.arguments: list[str] = []
        """A function call's argument deltas, in order."""
        self.done = False


class Importer(StreamImporter):
    """The openai-responses state machine: one recorded stream, one event at a time."""

    format = FORMAT

    def __init__(self, usage: tuple[int, int] | None) -> None:
        super().__init__(usage)
        self._items: dict[str, _Item] = {}
        self._refusal: list[str] = []
        self._tool_called = False
        """A function call completed."""
        self._done_read = False
        """The trailing ``[DONE]`` was read."""
        self._thinking_item = ""
        """The reasoning item whose ``thinking_delta`` was the last record (version 2),
        while ``_thinking_end`` is the record count."""
        self._thinking_end = -1
        self._open_calls: list[_WholeItem] = []
        """A non-streamed body's function call items that were not completed (version 2:
        its end decides what they become)."""

    def feed(self, event: Event) -> None:
        data = event.data
        if data is None:
            self._on_done()
            return
        kind = data.get("type")
        if type(kind) is str:
            if kind != _ERROR and not kind.startswith(_PREFIX):
                raise Refusal(
                    _Code.RECORDING_UNKNOWN_EVENT,
                    f"Unknown event type {quote(kind)}: openai-responses events are "
                    "`error` and `response.*`",
                    ("type",),
                )
        else:
            kind = self.string(data, "type", _ROOT)  # raises: missing or not a string
        if event.name and event.name != kind:
            raise self.misnamed(event.name, kind)
        handler = (_HANDLERS if self.schema_version < 2 else _HANDLERS_V2).get(kind)
        if handler is None:
            self._on_other(kind)
        else:
            handler(self, data)

    # -- the start and the terminals -------------------------------------------------------

    def _on_created(self, data: PlainObject) -> None:
        response = self.obj(data, "response", _ROOT)
        response_id = self.identifier(response, "id", _RESPONSE)
        model = None
        if self.schema_version >= 2:
            model = self.string(response, "model", _RESPONSE, optional=True)
        if self.terminal_read:
            raise self._after_terminal("response.created")
        if self.started:
            raise self.out_of_order("A second `response.created`: the response has started")
        self.start(response_id, model=model)

    def _on_completed(self, data: PlainObject) -> None:
        response, response_id = self._terminal_response(data)
        counts = self._usage_of(response, ("response", "usage"))
        self._check_terminal_place("response.completed", response_id)
        if self._refusal and self.schema_version >= 2:
            self._finish("refusal", None, counts, _RESPONSE)
            return
        for item_id, item in self._items.items():
            if item.kind == _FUNCTION_CALL and not item.done:
                raise self.malformed(
                    f"The response completed while function call item {quote(item_id)} "
                    f"(call {quote(item.call_id)}) had no `response.output_item.done`",
                    None,
                )
        if self._refusal:
            self.refused("".join(self._refusal))
            return
        stop = "tool_call" if self._tool_called else "stop"
        self._finish(stop, None, counts, _RESPONSE)

    def _on_incomplete(self, data: PlainObject) -> None:
        response, response_id = self._terminal_response(data)
        details = self.obj(response, "incomplete_details", _RESPONSE)
        reason = self.string(details, "reason", ("response", "incomplete_details"))
        counts = None
        if self.schema_version >= 2:
            counts = self._usage_of(response, ("response", "usage"))
        self._check_terminal_place("response.incomplete", response_id)
        if self.schema_version < 2:
            self.stopped(reason)
            return
        if reason == _LENGTH_REASON and not self._refusal:
            self._cut_open_calls()
        self._end_incomplete(reason, counts, _RESPONSE)

    def _end_incomplete(self, reason: str, counts: Counts | None, path: Path) -> None:
        """Version 2: an incomplete response ends as its reason says (refusal text makes
        it a refusal whatever the reason); a reason outside the SPEC's table stays a
        transport error with that code."""
        if self._refusal:
            self._finish("refusal", reason, counts, path)
        elif reason == _LENGTH_REASON:
            self._finish("length", reason, counts, path)
        elif reason == _FILTER_REASON:
            self._finish("content_filter", reason, counts, path)
        else:
            self.stopped(reason)

    def _finish(
        self, stop: str, provider_word: str | None, counts: Counts | None, path: Path
    ) -> None:
        """A ``response_end`` (class 5: the usage rules, at the usage object, then the
        usage's presence, at its owner ``path`` names)."""
        usage = None if counts is None else self.usage_details(*counts, path=(*path, "usage"))
        self.finish(stop, usage, provider_word, path)

    def _cut_open_calls(self) -> None:
        """At a ``length`` end: the last function call still open is the cut one; every
        other open call must have complete arguments and is a tool call, before it."""
        open_calls = [
            item for item in self._items.values() if item.kind == _FUNCTION_CALL and not item.done
        ]
        if not open_calls:
            return
        *complete, cut = open_calls
        for item in complete:
            arguments = "".join(item.arguments)
            self.tool_call(
                item.call_id,
                item.name,
                arguments,
                None,
                item.output_index,
                fragments=item.arguments,
            )
        self.incomplete_tool_call(cut.call_id, cut.name, cut.arguments)

    def _on_failed(self, data: PlainObject) -> None:
        response, response_id = self._terminal_response(data)
        error = self.obj(response, "error", _RESPONSE)
        message = self.string(error, "message", ("response", "error"))
        code = error.get("code")
        self._check_terminal_place("response.failed", response_id)
        self.failed(message, code if type(code) is str else None)

    def _on_error(self, data: PlainObject) -> None:
        error = data.get("error")
        if type(error) is dict:  # as the live API sends it: the fields under `error`
            message = self.string(error, "message", ("error",))
            code = error.get("code")
            if type(code) is not str:
                code = error.get("type")
        else:
            message = self.string(data, "message", _ROOT)
            code = data.get("code")
        if self.terminal_read:
            raise self._after_terminal("error")
        self.provider_error(message, code if type(code) is str else None)

    def _on_done(self) -> None:
        if not self.terminal_read:
            raise self.done_not_json(
                "The event's data `[DONE]` is not JSON: openai-responses allows it only "
                "once, after the terminal event"
            )
        if self._done_read:
            raise self.out_of_order("A second `[DONE]` after the terminal event")
        self._done_read = True

    def _terminal_response(self, data: PlainObject) -> tuple[PlainObject, str]:
        """A terminal's ``response`` object and its ``id``."""
        response = self.obj(data, "response", _ROOT)
        return response, self.identifier(response, "id", _RESPONSE)

    def _check_terminal_place(self, kind: str, response_id: str) -> None:
        """Class 4 and the id check of class 5, shared by the three terminals."""
        self._check_place(kind)
        if response_id != self.response_id:
            raise self.malformed(
                f"`response.id` {quote(response_id)} differs from the started response's "
                f"{quote(self.response_id)}",
                ("response", "id"),
            )

    # -- output items ----------------------------------------------------------------------

    def _on_item_added(self, data: PlainObject) -> None:
        item = self.obj(data, "item", _ROOT)
        item_id = self.identifier(item, "id", _ITEM)
        kind = self.string(item, "type", _ITEM)
        if kind == _FUNCTION_CALL:
            output_index = data.get("output_index")
            entry = _Item(
                kind,
                self.identifier(item, "call_id", _ITEM),
                self.identifier(item, "name", _ITEM),
                output_index if type(output_index) is int else None,
            )
        elif _asks_the_client(kind, item):
            raise _unsupported(kind, ("item", "type"))
        else:
            entry = _Item(kind)
        self._check_place("response.output_item.added")
        if item_id in self._items:
            raise self.out_of_order(f"Output item {quote(item_id)} was added twice")
        self._items[item_id] = entry
        if kind not in (_MESSAGE, _FUNCTION_CALL) and not self._reads(kind):
            self.ignore(f"response.output_item.added:{kind}")

    def _reads(self, kind: str) -> bool:
        """Whether items of an ignorable ``kind`` are read: reasoning, in version 2."""
        return kind == _REASONING and self.schema_version >= 2

    def _on_item_done(self, data: PlainObject) -> None:
        item = self.obj(data, "item", _ROOT)
        item_id = self.identifier(item, "id", _ITEM)
        kind = self.string(item, "type", _ITEM, optional=True)
        arguments: str | None = None
        call_id: str | None = None
        name: str | None = None
        encrypted: str | None = None
        if kind == _FUNCTION_CALL:
            arguments = self.string(item, "arguments", _ITEM)
            call_id = self.string(item, "call_id", _ITEM, optional=True)
            name = self.string(item, "name", _ITEM, optional=True)
        elif kind == _REASONING and self.schema_version >= 2:
            encrypted = self.string(item, "encrypted_content", _ITEM, optional=True)
        entry = self._open_item(item_id, "response.output_item.done")
        if kind is not None and kind != entry.kind:
            raise self.malformed(
                f"Output item {quote(item_id)} was added as {quote(entry.kind)} "
                f"and is done as {quote(kind)}",
                ("item", "type"),
            )
        entry.done = True
        if entry.kind != _FUNCTION_CALL:
            if self._reads(entry.kind):
                if kind is None:  # the done item did not say its type
                    encrypted = self.string(item, "encrypted_content", _ITEM, optional=True)
                self._sign(item_id, encrypted)
            elif entry.kind != _MESSAGE:
                self.ignore(f"response.output_item.done:{entry.kind}")
            return
        if arguments is None:  # the done item did not say its type
            arguments = self.string(item, "arguments", _ITEM)
        if call_id is not None and call_id != entry.call_id:
            raise self.malformed(
                f"`item.call_id` {quote(call_id)} differs from the added item's "
                f"{quote(entry.call_id)}",
                ("item", "call_id"),
            )
        if name is not None and name != entry.name:
            raise self.malformed(
                f"`item.name` {quote(name)} differs from the added item's {quote(entry.name)}",
                ("item", "name"),
            )
        if entry.arguments and "".join(entry.arguments) != arguments:
            raise self.malformed(
                "`item.arguments` differs from the concatenated "
                "`response.function_call_arguments.delta` fragments",
                ("item", "arguments"),
            )
        self.tool_call(
            entry.call_id,
            entry.name,
            arguments,
            ("item", "arguments"),
            entry.output_index,
            fragments=entry.arguments,
        )
        self._tool_called = True

    def _on_text_delta(self, data: PlainObject) -> None:
        item_id, delta = self._delta_fields(data)
        entry = self._open_item(item_id, "response.output_text.delta")
        if entry.kind == _MESSAGE:
            self.text(delta)
        elif entry.kind == _FUNCTION_CALL or self._reads(entry.kind):
            raise self._wrong_item("response.output_text.delta", item_id, entry)
        else:
            self.ignore(f"response.output_text.delta:{entry.kind}")

    def _on_refusal_delta(self, data: PlainObject) -> None:
        item_id, delta = self._delta_fields(data)
        entry = self._open_item(item_id, "response.refusal.delta")
        if entry.kind == _MESSAGE:
            if delta:  # only non-empty refusal text makes a refusal
                self._refusal.append(delta)
                self.refusal(delta)
        elif entry.kind == _FUNCTION_CALL or self._reads(entry.kind):
            raise self._wrong_item("response.refusal.delta", item_id, entry)
        else:
            self.ignore(f"response.refusal.delta:{entry.kind}")

    def _on_arguments_delta(self, data: PlainObject) -> None:
        item_id, delta = self._delta_fields(data)
        entry = self._open_item(item_id, "response.function_call_arguments.delta")
        if entry.kind == _FUNCTION_CALL:
            entry.arguments.append(delta)
        elif entry.kind == _MESSAGE or self._reads(entry.kind):
            raise self._wrong_item("response.function_call_arguments.delta", item_id, entry)
        else:
            self.ignore(f"response.function_call_arguments.delta:{entry.kind}")

    def _on_reasoning_delta(self, data: PlainObject) -> None:
        """Version 2: a reasoning summary or reasoning text delta is a thinking delta."""
        kind = cast(str, data["type"])
        item_id, delta = self._delta_fields(data)
        entry = self._open_item(item_id, kind)
        if entry.kind == _REASONING:
            if delta:  # an empty one makes no record
                self.thinking(delta)
                self._thinking_item = item_id
                self._thinking_end = len(self.records)
        elif entry.kind in (_MESSAGE, _FUNCTION_CALL):
            raise self._wrong_item(kind, item_id, entry)
        else:
            self.ignore(f"{kind}:{entry.kind}")

    def _sign(self, item_id: str, encrypted: str | None) -> None:
        """A reasoning item's ``encrypted_content`` signs its thinking block, right after
        a thinking delta of the item (an empty one when its text did not just come)."""
        if not encrypted:
            return
        if self._thinking_item != item_id or self._thinking_end != len(self.records):
            self.thinking("")
        self.thinking_signature(encrypted)

    def _on_other(self, kind: str) -> None:
        self._check_place(kind)
        if kind not in _RESTATING and (self.schema_version < 2 or kind not in _RESTATING_V2):
            self.ignore(kind)

    # -- shared checks ---------------------------------------------------------------------

    def _delta_fields(self, data: PlainObject) -> tuple[str, str]:
        """``item_id`` and ``delta``, both strings (the common case checked inline)."""
        item_id = data.get("item_id")
        delta = data.get("delta")
        if type(item_id) is not str:
            item_id = self.string(data, "item_id", _ROOT)
        if type(delta) is not str:
            delta = self.string(data, "delta", _ROOT)
        return item_id, delta

    def _check_place(self, kind: str) -> None:
        if self.terminal_read:
            raise self._after_terminal(kind)
        if not self.started:
            raise self.out_of_order(f"`{kind}` before `response.created`")

    def _open_item(self, item_id: str, kind: str) -> _Item:
        """The added, not yet done item ``item_id`` names (class 4)."""
        entry = self._items.get(item_id)
        if entry is None or entry.done or self.terminal_read:
            self._check_place(kind)  # nothing is added before the start
            state = "never added" if entry is None else "already done"
            raise self.out_of_order(f"`{kind}` for output item {quote(item_id)}, {state}")
        return entry

    def _after_terminal(self, kind: str) -> Refusal:
        return self.out_of_order(
            f"`{kind}` after the terminal event: only one `[DONE]` may follow it"
        )

    def _wrong_item(self, kind: str, item_id: str, entry: _Item) -> Refusal:
        return self.malformed(
            f"`{kind}` for output item {quote(item_id)}, which is a {quote(entry.kind)} item",
            ("item_id",),
        )

    # -- a non-streamed answer ---------------------------------------------------------

    def whole(self, body: PlainObject) -> None:
        if body.get("object") != _RESPONSE_OBJECT:
            self._error_body(body)
            return
        # (3) the body alone: every key first, then what a fixture cannot hold
        response_id = self.identifier(body, "id", _ROOT)
        status = self.string(body, "status", _ROOT)
        model = None
        if self.schema_version >= 2:
            model = self.string(body, "model", _ROOT, optional=True)
        output = self.array(body, "output", _ROOT)
        counts = self._usage_of(body, ("usage",))
        items = [self._whole_item(item, n) for n, item in enumerate(output)]
        reason = message = ""
        code: PlainJson = None
        if status == "incomplete":
            details = self.obj(body, "incomplete_details", _ROOT)
            reason = self.string(details, "reason", ("incomplete_details",))
        elif status == "failed":
            error = self.obj(body, "error", _ROOT)
            message = self.string(error, "message", ("error",))
            code = error.get("code")
        for item in items:
            if item.unsupported:
                raise _unsupported(item.kind, (*item.path, "type"))
        if status not in _TERMINALS:
            raise Refusal(
                _Code.RECORDING_UNSUPPORTED,
                f"A response whose status is {quote(status)}: only a completed, incomplete "
                "or failed response has a place in a fixture",
                ("status",),
            )
        # (5) what its stream would give, in its order
        self.start(response_id, model=model)
        for item in items:
            self._emit_item(item, status)
        if status == "failed":
            self.failed(message, code if type(code) is str else None)
        elif self.schema_version >= 2:
            self._end_whole(status, reason, counts)
        elif status == "incomplete":
            self.stopped(reason)
        elif self._refusal:
            self.refused("".join(self._refusal))
        else:
            self.end(self._tool_called, None if counts is None else counts[:2], _ROOT)

    def _end_whole(self, status: str, reason: str, counts: Counts | None) -> None:
        """Version 2: the end of a completed or incomplete body, its open calls decided as
        the stream's terminal decides them."""
        open_calls = self._open_calls
        if status == "completed":
            if self._refusal:
                self._finish("refusal", None, counts, _ROOT)
                return
            if open_calls:
                raise self._still_open(open_calls[0])
            self._finish("tool_call" if self._tool_called else "stop", None, counts, _ROOT)
            return
        if reason == _LENGTH_REASON and not self._refusal and open_calls:
            *complete, cut = open_calls
            for item in complete:
                assert item.call is not None
                self.tool_call(*item.call, (*item.path, "arguments"), item.position)
            assert cut.call is not None
            call_id, name, arguments = cut.call
            self.incomplete_tool_call(call_id, name, [arguments] if arguments else [])
        self._end_incomplete(reason, counts, _ROOT)

    def _still_open(self, item: _WholeItem) -> Refusal:
        assert item.call is not None and item.status is not None
        return self.malformed(
            f"The response completed while function call {quote(item.call[0])} "
            f"is {quote(item.status)}",
            (*item.path, "status"),
        )

    def _whole_item(self, item: PlainJson, index: int) -> _WholeItem:
        """Output item ``index`` of a ``response`` object, checked on its own (class 3)."""
        path: Path = ("output", index)
        if type(item) is not dict:
            raise self.mistyped(item, dict, path)
        kind = self.string(item, "type", path)
        item_status = self.string(item, "status", path, optional=True)
        if kind == _MESSAGE:
            parts: list[tuple[str, str]] = []
            for n, part in enumerate(self.array(item, "content", path)):
                part_path: Path = (*path, "content", n)
                if type(part) is not dict:
                    raise self.mistyped(part, dict, part_path)
                part_kind = self.string(part, "type", part_path)
                if part_kind == "output_text":
                    parts.append((part_kind, self.string(part, "text", part_path)))
                elif part_kind == "refusal":
                    parts.append((part_kind, self.string(part, "refusal", part_path)))
                else:
                    parts.append((part_kind, ""))
            return _WholeItem(kind, index, item_status, parts=tuple(parts))
        if kind == _FUNCTION_CALL:
            call = (
                self.identifier(item, "call_id", path),
                self.identifier(item, "name", path),
                self.string(item, "arguments", path),
            )
            return _WholeItem(kind, index, item_status, call=call)
        if self._reads(kind):
            return self._whole_reasoning(item, index, item_status)
        return _WholeItem(kind, index, item_status, unsupported=_asks_the_client(kind, item))

    def _whole_reasoning(self, item: PlainObject, index: int, status: str | None) -> _WholeItem:
        """A reasoning item of a ``response`` object (version 2): its summary texts, then
        its reasoning texts, and its ``encrypted_content``."""
        path: Path = ("output", index)
        texts: list[str] = []
        for key, kind in (("summary", "summary_text"), ("content", "reasoning_text")):
            for n, part in enumerate(self.array(item, key, path, optional=True) or ()):
                part_path: Path = (*path, key, n)
                if type(part) is not dict:
                    raise self.mistyped(part, dict, part_path)
                if self.string(part, "type", part_path, optional=True) in (None, kind):
                    texts.append(self.string(part, "text", part_path))
        encrypted = self.string(item, "encrypted_content", path, optional=True)
        return _WholeItem(_REASONING, index, status, parts=(), thinking=(tuple(texts), encrypted))

    def _emit_item(self, item: _WholeItem, status: str) -> None:
        """The records of one checked output item (class 5)."""
        if item.kind == _MESSAGE:
            for kind, text in item.parts:
                if kind == "output_text":
                    self.text(text)
                elif kind == "refusal":
                    if text:
                        self._refusal.append(text)
                        self.refusal(text)
                else:
                    self.ignore(f"output.message.content:{kind}")
        elif item.call is not None:
            if item.status not in (None, "completed"):
                # Its stream had no `output_item.done` for it: never a tool call at once.
                if self.schema_version >= 2:
                    self._open_calls.append(item)  # the end decides
                elif status == "completed":
                    raise self._still_open(item)
                return
            self.tool_call(*item.call, (*item.path, "arguments"), item.position)
            self._tool_called = True
        elif item.thinking is not None:
            texts, encrypted = item.thinking
            thought = False
            for text in texts:
                if text:
                    self.thinking(text)
                    thought = True
            if encrypted:
                if not thought:
                    self.thinking("")
                self.thinking_signature(encrypted)
        else:
            self.ignore(f"output:{item.kind}")

    def _usage_of(self, owner: PlainObject, path: Path) -> Counts | None:
        """The token counts of ``owner[usage]`` (at ``path``): a null or missing usage is
        ``None`` (the fallback's turn). Version 2 reads the details too (each optional)."""
        recorded = self.obj(owner, "usage", path[:-1], optional=True)
        if recorded is None:
            return None
        input_tokens = self.count(recorded, "input_tokens", path)
        output_tokens = self.count(recorded, "output_tokens", path)
        assert input_tokens is not None and output_tokens is not None  # both required
        if self.schema_version < 2:
            return (input_tokens, output_tokens, None, None, None)
        return (
            input_tokens,
            output_tokens,
            self.detail(recorded, "input_tokens_details", "cached_tokens", path),
            self.detail(recorded, "input_tokens_details", "cache_write_tokens", path),
            self.detail(recorded, "output_tokens_details", "reasoning_tokens", path),
        )

    def _error_body(self, body: PlainObject) -> None:
        """The error body of an HTTP answer: ``{"error": {"message": ..., "code": ...}}``."""
        error = self.obj(body, "error", _ROOT)
        message = self.string(error, "message", ("error",))
        code = error.get("code")
        if type(code) is not str:
            code = error.get("type")
        self.provider_error(message, code if type(code) is str else None)


class _WholeItem(NamedTuple):
    """One output item of a non-streamed response, checked on its own."""

    kind: str
    position: int
    """Where the item is in ``output``."""
    status: str | None
    parts: tuple[tuple[str, str], ...] = ()
    """A message's content parts: each part's type and its text (or refusal)."""
    call: tuple[str, str, str] | None = None
    """A function call's ``call_id``, ``name`` and ``arguments``."""
    unsupported: bool = False
    """The item asks the client to act."""
    thinking: tuple[tuple[str, ...], str | None] | None = None
    """A reasoning item's texts and ``encrypted_content`` (version 2)."""

    @property
    def path(self) -> Path:
        return ("output", self.position)


_Handler = Callable[[Importer, PlainObject], None]

_HANDLERS: Final[Mapping[str, _Handler]] = {
    "response.created": Importer._on_created,
    "response.output_item.added": Importer._on_item_added,
    "response.output_text.delta": Importer._on_text_delta,
    "response.refusal.delta": Importer._on_refusal_delta,
    "response.function_call_arguments.delta": Importer._on_arguments_delta,
    "response.output_item.done": Importer._on_item_done,
    "response.completed": Importer._on_completed,
    "response.incomplete": Importer._on_incomplete,
    "response.failed": Importer._on_failed,
    "error": Importer._on_error,
}
"""The events that mean something, by ``type``; every other ``response.*`` is ignorable."""

_HANDLERS_V2: Final[Mapping[str, _Handler]] = {
    **_HANDLERS,
    "response.reasoning_summary_text.delta": Importer._on_reasoning_delta,
    "response.reasoning_text.delta": Importer._on_reasoning_delta,
}
"""Version 2 reads reasoning items too."""

# Version 2: the reasoning events that only restate what the deltas and items say.
_RESTATING_V2: Final = frozenset(
    {
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.done",
    }
)


# -- reading requests -----------------------------------------------------------------------

_INPUT_TEXT_PARTS: Final = frozenset({"input_text", "output_text"})
_FUNCTION_CALL_OUTPUT: Final = "function_call_output"
_ITEM_REFERENCE: Final = "item_reference"
_MODEL_ITEMS: Final = frozenset({"mcp_list_tools", "mcp_approval_request"})
"""Items the model's turn holds that are not named ``..._call``."""


class _Messages:
    """The request's messages as its items give them: consecutive assistant items (a
    message, function calls, reasoning, other calls) are one assistant message."""

    __slots__ = ("_blocks", "_places", "_roles")

    def __init__(self) -> None:
        self._roles: list[CourseRequestRole] = []
        self._blocks: list[list[CourseRequestBlock]] = []
        self._places: list[list[str]] = []

    def add(
        self, role: CourseRequestRole, blocks: Sequence[CourseRequestBlock], place: str
    ) -> None:
        """``blocks``, all from the item at ``place``, as a message of ``role``."""
        if role != "assistant" or not self._roles or self._roles[-1] != "assistant":
            self._roles.append(role)
            self._blocks.append([])
            self._places.append([])
        self._blocks[-1].extend(blocks)
        self._places[-1].extend([place] * len(blocks))

    def messages(self) -> tuple[CourseRequestMessage, ...]:
        return tuple(
            CourseRequestMessage(role, tuple(blocks))
            for role, blocks in zip(self._roles, self._blocks, strict=True)
        )

    def places(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(places) for places in self._places)


def read_request(body: Mapping[str, PlainJson], request_id: str, sent: SentLog) -> ReadRequest:
    """A Responses body read (``SPEC-REQUESTS.md``): its ``instructions`` (a system
    message), then its ``input`` (a string: one user message; else its items, each block
    placed at ``input[i]``), and its function tools; the history its
    ``previous_response_id`` names, from ``sent``. A request with a ``conversation`` is
    not checked. Raises only ``RequestReadError``."""
    history = _previous(body, sent)
    messages = _Messages()
    instructions = optional_string(body, "instructions", "", "a request")
    if instructions is not None:
        messages.add("system", (CourseTextBlock(instructions),), "instructions")
    given = body.get("input")
    if type(given) is str:
        messages.add("user", (CourseTextBlock(given),), "input")
    elif type(given) is list:
        for index, item in enumerate(given):
            place = f"input[{index}]"
            _item(an_object(item, place, "an input item"), place, sent, messages)
    elif given is not None:
        raise read_problem(
            "input", f"input must be a string or an array of items, got {_kind(given)}"
        )
    request = CourseModelRequest(request_id, messages.messages(), read_tools(body, _flat_tool))
    checked = body.get("conversation") is None
    return ReadRequest(request, messages.places(), history, checked=checked)


def _previous(body: Mapping[str, PlainJson], sent: SentLog) -> tuple[CourseRequestMessage, ...]:
    """The history ``previous_response_id`` names: that response's, then its output."""
    response_id = optional_string(body, "previous_response_id", "", "a request")
    if response_id is None:
        return ()
    response = sent.response(response_id)
    if response is None:
        raise RequestReadError(
            f"course read: previous_response_id: previous response with id "
            f"{one_line(quote(response_id))} not found: this server never sent it",
            code="previous_response_not_found",
            param="previous_response_id",
        )
    return (*response.history, response.output())


def _flat_tool(tool: dict[str, PlainJson], place: str) -> tuple[dict[str, PlainJson], str]:
    return tool, place  # a Responses function tool names itself at its top level


def _item(item: dict[str, PlainJson], place: str, sent: SentLog, messages: _Messages) -> None:
    """One input item, added to ``messages``."""
    kind = optional_string(item, "type", place, "an input item")
    if kind is None and "role" in item:  # an easy input message, as the SDK allows
        kind = _MESSAGE
    if kind == _MESSAGE:
        given = string(item, "role", place, "a message item")
        role = ROLES.get(given)
        if role is None or role == "tool":  # a tool's result is a function_call_output
            raise read_problem(at(place, "role"), f"unknown role {quote(given)}")
        content = content_blocks(item.get("content"), at(place, "content"), _INPUT_TEXT_PARTS)
        messages.add(role, content, place)
    elif kind == _FUNCTION_CALL:
        what = "a function_call item"
        call_id = string(item, "call_id", place, what)
        name = string(item, "name", place, what)
        arguments = optional_string(item, "arguments", place, what)
        messages.add("assistant", (tool_call(call_id, name, arguments),), place)
    elif kind == _REASONING:
        messages.add("assistant", (_reasoning(item, place),), place)
    elif kind == _FUNCTION_CALL_OUTPUT:
        call_id = string(item, "call_id", place, "a function_call_output item")
        output = item.get("output")
        if type(output) is not str and type(output) is not list:
            raise read_problem(
                at(place, "output"),
                "a function_call_output item needs a string or an array of parts output, "
                f"got {_kind(output)}",
            )
        messages.add("tool", (CourseToolResultBlock(call_id, frozen_json(output)),), place)
    elif kind == _ITEM_REFERENCE:
        blocks = sent.item(string(item, "id", place, "an item_reference"))
        if blocks is None:  # an item this server never sent, kept as it came
            blocks = (CourseOtherBlock(kind, frozen(item)),)
        messages.add("assistant", blocks, place)  # what this server sent is the model's
    elif kind is None:
        raise read_problem(at(place, "type"), "an input item needs a string type, got null")
    else:
        messages.add(_role_of(kind), (CourseOtherBlock(kind, frozen(item)),), place)


def _reasoning(item: dict[str, PlainJson], place: str) -> CourseThinkingBlock:
    """A reasoning item: its summary texts joined (as the importer joins them, so what
    the renderer sent comes back as it was), signed by its ``encrypted_content``."""
    texts: list[str] = []
    for index, part in enumerate(listed(item, "summary", place)):
        part_place = f"{at(place, 'summary')}[{index}]"
        summary = an_object(part, part_place, "a summary part")
        texts.append(string(summary, "text", part_place, "a summary part"))
    signature = optional_string(item, "encrypted_content", place, "a reasoning item")
    return CourseThinkingBlock("".join(texts), signature)


def _role_of(kind: str) -> CourseRequestRole:
    """The role of an item this reader has no block for: a call the model made (web
    search, a custom tool, MCP, ...) is the model's turn, a call's output a tool's, and
    anything else (an approval, ...) the user's."""
    if kind.endswith("_call") or kind in _MODEL_ITEMS:
        return "assistant"
    return "tool" if kind.endswith("_output") else "user"


# -- serve --------------------------------------------------------------------------------

_TEXT_PART: Final = "output_text"
_REFUSAL_PART: Final = "refusal"
_INCOMPLETE_ENDS: Final[Mapping[str, tuple[str, ...]]] = {
    "length": ("max_output_tokens",),
    "contentFilter": ("content_filter",),
}
"""The ends the API reports as ``response.incomplete``, with the reasons it words them
by (the first is the one sent unless the fixture's ``providerStopReason`` is another);
every other end is ``response.completed``."""


class Renderer(StreamRenderer):
    """Renders one response as the Responses API streams it (and its whole body)."""

    format = FORMAT

    def __init__(self, model: str, request: PlainObject | None = None) -> None:
        super().__init__(model, request)
        self._response_id = ""
        self._created_at = int(time.time())
        self._sequence = 0
        self._output: list[PlainJson] = []
        """Every output item so far, in its final form, for the terminal event (a cut
        call is listed as soon as it is sent: it never finishes)."""
        self._message: PlainObject | None = None
        """The message item a run of text and refusal deltas is writing, while it is open."""
        self._parts: list[PlainJson] = []
        """The open message's finished content parts."""
        self._part_kind = ""
        """The open part's type (``output_text`` or ``refusal``; ``""``: none is open)."""
        self._texts: list[str] = []
        """The open part's deltas, or the open reasoning item's."""
        self._reasoning: PlainObject | None = None
        """The reasoning item a thinking block is writing, while it is open."""
        self._thinking_index = -1
        """The ``content_index`` of the thinking block the open reasoning item renders."""
        self._sent: dict[str, tuple[CourseRequestBlock, ...]] = {}
        """Each output item sent and closed (a cut call: as soon as it is sent), by id,
        with the blocks it carried."""
        self._part_blocks: list[CourseRequestBlock] = []
        """The blocks of the open message's finished content parts."""

    # -- streaming -------------------------------------------------------------------------

    def open(self, response_id: str) -> str:
        self._response_id = response_id
        return self._event(
            "response.created", {"response": self._response("in_progress", [], None)}
        )

    def chunk(self, chunk: CourseModelChunk) -> str:
        if type(chunk) is CourseTextDeltaChunk:
            return self._close_reasoning() + self._delta(_TEXT_PART, chunk.text)
        if type(chunk) is CourseToolCallChunk:
            fragments = self.argument_fragments(chunk.id) or (compact(thaw(chunk.arguments)),)
            call = CourseToolCallBlock(chunk.id, chunk.name, chunk.arguments)
            return self._function_call(call, fragments)
        if type(chunk) is CourseThinkingDeltaChunk:
            return self._thinking(chunk.text, chunk.content_index)
        if type(chunk) is CourseThinkingSignatureChunk:
            return self._close_reasoning(chunk.signature)
        if type(chunk) is CourseRefusalDeltaChunk:
            return self._close_reasoning() + self._delta(_REFUSAL_PART, chunk.text)
        if type(chunk) is CourseIncompleteToolCallChunk:
            fragments = self.argument_fragments(chunk.id) or ()
            if "".join(fragments) != chunk.arguments_text:  # its records are not at hand
                fragments = (chunk.arguments_text,) if chunk.arguments_text else ()
            cut = CourseIncompleteToolCallBlock(chunk.id, chunk.name, chunk.arguments_text)
            return self._function_call(cut, fragments)
        # A redacted thinking block has no place in this format: it is left out (a
        # thinking block after it is another block, so another reasoning item).
        assert type(chunk) is CourseRedactedThinkingChunk
        return ""

    def complete(self, response: CourseModelResponse) -> str:
        reason = _incomplete_reason(response)
        closing = self._close_all("completed" if reason is None else "incomplete")
        body = self._final(response, reason)
        if reason is None:
            return closing + self._event("response.completed", {"response": body})
        return closing + self._event("response.incomplete", {"response": body})

    def fail(self, error: FixtureProviderError) -> str:
        code, message = error_words(error)
        return self._event(_ERROR, {"code": code, "message": message, "param": None})

    def sent_items(self) -> Mapping[str, tuple[CourseRequestBlock, ...]]:
        """Each output item sent so far (``msg_...``, ``rs_...``, ``fc_...``), with the
        blocks it carried: an open item's so far (a stream that failed in it)."""
        items = dict(self._sent)
        text = "".join(self._texts)
        if self._message is not None:
            open_part = (_part_block(self._part_kind, text),) if self._part_kind else ()
            items[cast(str, self._message["id"])] = (*self._part_blocks, *open_part)
        if self._reasoning is not None:
            items[cast(str, self._reasoning["id"])] = (CourseThinkingBlock(text),)
        return items

    # -- a message item: runs of text and refusal parts ------------------------------------

    def _delta(self, part_kind: str, text: str) -> str:
        opening = ""
        if self._message is None:
            self._message = _message_item(self._item_id("msg"), "in_progress", [])
            opening = self._item_event("response.output_item.added", self._message)
        if part_kind != self._part_kind:
            opening += self._close_part() + self._event(
                "response.content_part.added", {**self._part_keys(), "part": _part(part_kind, "")}
            )
            self._part_kind = part_kind
        self._texts.append(text)
        if part_kind == _TEXT_PART:
            fields: PlainObject = {**self._part_keys(), "delta": text, "logprobs": []}
            return opening + self._event("response.output_text.delta", fields)
        return opening + self._event("response.refusal.delta", {**self._part_keys(), "delta": text})

    def _close_part(self) -> str:
        kind = self._part_kind
        if not kind:
            return ""
        text = "".join(self._texts)
        keys = self._part_keys()
        part = _part(kind, text)
        if kind == _TEXT_PART:
            done = self._event("response.output_text.done", {**keys, "text": text, "logprobs": []})
        else:
            done = self._event("response.refusal.done", {**keys, "refusal": text})
        self._parts.append(part)
        self._part_blocks.append(_part_block(kind, text))
        self._part_kind = ""
        self._texts = []
        return done + self._event("response.content_part.done", {**keys, "part": part})

    def _close_message(self, status: str = "completed") -> str:
        message = self._message
        if message is None:
            return ""
        closing = self._close_part()
        message["status"] = status
        message["content"] = self._parts
        closing += self._item_event("response.output_item.done", message)
        self._output.append(message)
        self._sent[cast(str, message["id"])] = tuple(self._part_blocks)
        self._message = None
        self._parts = []
        self._part_blocks = []
        return closing

    def _part_keys(self) -> PlainObject:
        """The keys that place an event on the open message's open content part."""
        assert self._message is not None
        return {
            "item_id": self._message["id"],
            "output_index": len(self._output),
            "content_index": len(self._parts),
        }

    # -- a reasoning item: one thinking block ----------------------------------------------

    def _thinking(self, text: str, content_index: int) -> str:
        opening = self._close_message()
        if self._reasoning is not None and content_index != self._thinking_index:
            opening += self._close_reasoning()  # a new block: a new item
        if self._reasoning is None:
            self._reasoning = {"id": self._item_id("rs"), "type": "reasoning", "summary": []}
            self._thinking_index = content_index
            opening += self._item_event("response.output_item.added", self._reasoning)
            opening += self._event(
                "response.reasoning_summary_part.added",
                {**self._summary_keys(), "part": _summary_part("")},
            )
        self._texts.append(text)
        return opening + self._event(
            "response.reasoning_summary_text.delta", {**self._summary_keys(), "delta": text}
        )

    def _close_reasoning(self, signature: str | None = None) -> str:
        """Close the open reasoning item (signed: with its ``encrypted_content``)."""
        reasoning = self._reasoning
        if reasoning is None:
            return ""
        text = "".join(self._texts)
        keys = self._summary_keys()
        part = _summary_part(text)
        reasoning["summary"] = [part]
        if signature is not None:
            reasoning["encrypted_content"] = signature
        events = (
            self._event("response.reasoning_summary_text.done", {**keys, "text": text})
            + self._event("response.reasoning_summary_part.done", {**keys, "part": part})
            + self._item_event("response.output_item.done", reasoning)
        )
        self._output.append(reasoning)
        self._sent[cast(str, reasoning["id"])] = (CourseThinkingBlock(text, signature),)
        self._reasoning = None
        self._texts = []
        return events

    def _summary_keys(self) -> PlainObject:
        assert self._reasoning is not None
        return {
            "item_id": self._reasoning["id"],
            "output_index": len(self._output),
            "summary_index": 0,
        }

    def _close_all(self, status: str = "completed") -> str:
        return self._close_message(status) + self._close_reasoning()

    # -- a function call item --------------------------------------------------------------

    def _function_call(
        self, call: CourseToolCallBlock | CourseIncompleteToolCallBlock, fragments: tuple[str, ...]
    ) -> str:
        """A function call item: added, one arguments delta per fragment, then (unless the
        call was cut: an incomplete call) the arguments and the item done."""
        events = self._close_all()  # a tool call ends a run of text, and a thinking block
        call_id, name = call.id, call.name
        status = "incomplete" if type(call) is CourseIncompleteToolCallBlock else "completed"
        text = "".join(fragments)
        item_id = self._item_id("fc")
        self._sent[item_id] = (call,)
        index = len(self._output)
        keys: PlainObject = {"item_id": item_id, "output_index": index}
        added = _function_item(item_id, "in_progress", call_id, name, "")
        final = _function_item(item_id, status, call_id, name, text)
        self._output.append(final)
        events += self._event("response.output_item.added", {"output_index": index, "item": added})
        for fragment in fragments:
            events += self._event(
                "response.function_call_arguments.delta", {**keys, "delta": fragment}
            )
        if status == "incomplete":
            return events  # cut: no `.done` event ever comes
        return (
            events
            + self._event(
                "response.function_call_arguments.done", {**keys, "arguments": text, "name": name}
            )
            + self._event("response.output_item.done", {"output_index": index, "item": final})
        )

    # -- the events and the response object ------------------------------------------------

    def _item_event(self, kind: str, item: PlainObject) -> str:
        return self._event(kind, {"output_index": len(self._output), "item": item})

    def _event(self, kind: str, fields: PlainObject) -> str:
        data: PlainObject = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return format_event(compact(data), kind)

    def _item_id(self, prefix: str) -> str:
        """An output item's id: unique within the response, as the API's are."""
        return f"{prefix}_{self._response_id}_{len(self._output)}"

    def _final(self, response: CourseModelResponse, reason: str | None) -> PlainObject:
        """The response object of the terminal event (and of a whole body)."""
        status = "completed" if reason is None else "incomplete"
        body = self._response(status, self._output, _usage(response))
        if reason is not None:
            body["incomplete_details"] = {"reason": reason}
        return body

    def _response(self, status: str, output: list[PlainJson], usage: PlainJson) -> PlainObject:
        return {
            "id": self._response_id,
            "object": "response",
            "created_at": self._created_at,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": None,
            "max_tool_calls": None,
            "model": self.model,
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None},
            "service_tier": "default",
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [],
            "top_logprobs": 0,
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "user": None,
            "metadata": {},
        }

    # -- whole bodies ----------------------------------------------------------------------

    def whole(self, response: CourseModelResponse) -> PlainObject:
        """The response object a stream of the same blocks ends with: a message item per
        run of text and refusal, a reasoning item per thinking block, a function call
        item per tool call (a cut one ``incomplete``, with the arguments received)."""
        self._response_id = response.response_id
        # The items are built as the stream builds them; its events are not sent.
        for index, block in enumerate(response.message.content):
            if type(block) is CourseTextBlock:
                self._delta(_TEXT_PART, block.text)
            elif type(block) is CourseToolCallBlock:
                fragments = self.argument_fragments(block.id) or (compact(thaw(block.arguments)),)
                self._function_call(block, fragments)
            elif type(block) is CourseThinkingBlock:
                self._thinking(block.text, index)
                self._close_reasoning(block.signature)
            elif type(block) is CourseRefusalBlock:
                self._delta(_REFUSAL_PART, block.text)
            elif type(block) is CourseIncompleteToolCallBlock:
                self._function_call(block, (block.arguments_text,))
            else:  # redacted thinking: left out
                assert type(block) is CourseRedactedThinkingBlock
        reason = _incomplete_reason(response)
        self._close_all("completed" if reason is None else "incomplete")
        return self._final(response, reason)

    @staticmethod
    def error_body(error: FixtureProviderError) -> PlainObject:
        code, message = error_words(error)
        return {"error": {"message": message, "type": code, "code": code}}


def _incomplete_reason(response: CourseModelResponse) -> str | None:
    """The ``incomplete_details.reason`` of a response the API reports incomplete (the
    fixture's ``providerStopReason`` when it is a word of its end), else ``None``."""
    words = _INCOMPLETE_ENDS.get(response.stop_reason)
    if words is None:
        return None
    provider_word = response.provider_stop_reason
    return provider_word if provider_word in words else words[0]


def _message_item(item_id: str, status: str, content: list[PlainJson]) -> PlainObject:
    return {
        "id": item_id,
        "type": "message",
        "status": status,
        "content": content,
        "role": "assistant",
    }


def _part(kind: str, text: str) -> PlainObject:
    """A message's content part: an ``output_text`` part, or a ``refusal`` part."""
    if kind == _TEXT_PART:
        return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    return {"type": "refusal", "refusal": text}


def _part_block(kind: str, text: str) -> CourseTextBlock | CourseRefusalBlock:
    """The block a message's content part carried."""
    return CourseTextBlock(text) if kind == _TEXT_PART else CourseRefusalBlock(text)


def _summary_part(text: str) -> PlainObject:
    return {"type": "summary_text", "text": text}


def _function_item(
    item_id: str, status: str, call_id: str, name: str, arguments: str
) -> PlainObject:
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call_id,
        "name": name,
    }


def _usage(response: CourseModelResponse) -> PlainObject:
    """The API's usage object. Its detail objects are always there, as the API sends
    them (and the SDK requires): a count the fixture does not have is 0."""
    usage = response.usage
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_tokens or 0,
            "cache_write_tokens": usage.cache_write_tokens or 0,
        },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
