"""The ``openai-responses`` wire format (OpenAI Responses API, ``stream: true``).

Both directions live here, and the vendor's wire names stay here.

**Import.** ``Importer`` reads one recorded stream, event by event. Each event is
judged in the SPEC's classes: its ``type`` must be ``error`` or start with
``response.`` (vocabulary); the keys the event's handler uses are checked by exact
type (the event alone); then its place (after ``response.created``, before the
terminal, for an item that was added and is not done); then against earlier events.

- ``response.created`` is the start: ``response.id`` is the ``responseId``.
- Output items are tracked by ``item.id`` from ``response.output_item.added``:
  ``message`` items carry text (``response.output_text.delta``) and refusal text
  (``response.refusal.delta``); ``function_call`` items are tool calls, complete at
  their ``response.output_item.done``, whose ``item.arguments`` must equal the
  argument deltas when there were any; a ``custom_tool_call``, and every item that asks
  the client to act (a computer, shell or patch call, an MCP approval, a client-side
  tool search), is unsupported; every other kind (reasoning, web search, ...) is
  ignored with its events.
- ``response.completed`` ends the response (``tool_call`` when a function call
  completed, else ``stop``; any refusal text makes it a ``refusal`` transport error);
  ``response.incomplete`` is a transport error coded with its reason;
  ``response.failed`` one with its ``response.error``; an ``error`` event is the
  provider error event (its fields nested under ``error``, as the live API sends them,
  or at the top). One ``data: [DONE]`` may trail the terminal.
- Every other ``response.*`` event is ignorable: it only obeys the place rules.
- A non-streamed ``response`` object gives what its stream would: its ``output`` items
  in order, then its ``status`` read as the terminal event of that name.

**Serve.** ``Renderer`` streams ``response.created``; a ``message`` item for each run
of text deltas (added, content part added, one ``output_text.delta`` per delta, then
the text, the part and the item done); a ``function_call`` item per tool call (added,
one arguments delta, arguments done, item done); then ``response.completed`` with
every item and the usage. Events carry ``sequence_number`` from 0, ``output_index``
and, for parts, ``item_id`` and ``content_index``. A failure once streaming has
begun is an ``error`` event.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Final, NamedTuple

from .._errors import FixtureProviderError
from .._json import JsonValue, PlainJson, thaw
from .._model import (
    CourseModelChunk,
    CourseModelResponse,
    CourseTextBlock,
    CourseTextDeltaChunk,
    CourseToolCallBlock,
    CourseToolCallChunk,
)
from ._recording import (
    Event,
    Path,
    PlainObject,
    RecordingErrorCode,
    Refusal,
    StreamImporter,
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
    """The message and code of an HTTP error body, ``{"error": {"message": M, "code": C,
    "type": T}}`` (the code, else the type); ``None`` for a body of another shape."""
    error = body.get("error")
    if body.get("object") == _RESPONSE_OBJECT or type(error) is not dict:
        return None
    message = error.get("message")
    if type(message) is not str:
        return None
    code = error.get("code")
    if type(code) is not str:
        code = error.get("type")
    return message, code if type(code) is str else None


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


class _Item:
    """An output item between its ``output_item.added`` and ``output_item.done``."""

    __slots__ = ("arguments", "call_id", "done", "kind", "name", "output_index")

    def __init__(
        self, kind: str, call_id: str = "", name: str = "", output_index: int | None = None
    ) -> None:
        self.kind = kind
        """The item's ``type``: ``message``, ``function_call``, or an ignored kind."""
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
        handler = _HANDLERS.get(kind)
        if handler is None:
            self._on_other(kind)
        else:
            handler(self, data)

    # -- the start and the terminals -------------------------------------------------------

    def _on_created(self, data: PlainObject) -> None:
        response = self.obj(data, "response", _ROOT)
        response_id = self.identifier(response, "id", _RESPONSE)
        if self.terminal_read:
            raise self._after_terminal("response.created")
        if self.started:
            raise self.out_of_order("A second `response.created`: the response has started")
        self.start(response_id)

    def _on_completed(self, data: PlainObject) -> None:
        response, response_id = self._terminal_response(data)
        usage = self._usage_of(response, ("response", "usage"))
        self._check_terminal_place("response.completed", response_id)
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
        self.end(self._tool_called, usage, _RESPONSE)

    def _on_incomplete(self, data: PlainObject) -> None:
        response, response_id = self._terminal_response(data)
        details = self.obj(response, "incomplete_details", _RESPONSE)
        reason = self.string(details, "reason", ("response", "incomplete_details"))
        self._check_terminal_place("response.incomplete", response_id)
        self.stopped(reason)

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
        if kind not in (_MESSAGE, _FUNCTION_CALL):
            self.ignore(f"response.output_item.added:{kind}")

    def _on_item_done(self, data: PlainObject) -> None:
        item = self.obj(data, "item", _ROOT)
        item_id = self.identifier(item, "id", _ITEM)
        kind = self.string(item, "type", _ITEM, optional=True)
        arguments: str | None = None
        call_id: str | None = None
        name: str | None = None
        if kind == _FUNCTION_CALL:
            arguments = self.string(item, "arguments", _ITEM)
            call_id = self.string(item, "call_id", _ITEM, optional=True)
            name = self.string(item, "name", _ITEM, optional=True)
        entry = self._open_item(item_id, "response.output_item.done")
        if kind is not None and kind != entry.kind:
            raise self.malformed(
                f"Output item {quote(item_id)} was added as {quote(entry.kind)} "
                f"and is done as {quote(kind)}",
                ("item", "type"),
            )
        entry.done = True
        if entry.kind != _FUNCTION_CALL:
            if entry.kind != _MESSAGE:
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
            entry.call_id, entry.name, arguments, ("item", "arguments"), entry.output_index
        )
        self._tool_called = True

    def _on_text_delta(self, data: PlainObject) -> None:
        item_id, delta = self._delta_fields(data)
        entry = self._open_item(item_id, "response.output_text.delta")
        if entry.kind == _MESSAGE:
            self.text(delta)
        elif entry.kind == _FUNCTION_CALL:
            raise self._wrong_item("response.output_text.delta", item_id, entry)
        else:
            self.ignore(f"response.output_text.delta:{entry.kind}")

    def _on_refusal_delta(self, data: PlainObject) -> None:
        item_id, delta = self._delta_fields(data)
        entry = self._open_item(item_id, "response.refusal.delta")
        if entry.kind == _MESSAGE:
            if delta:  # only non-empty refusal text makes a refusal
                self._refusal.append(delta)
        elif entry.kind == _FUNCTION_CALL:
            raise self._wrong_item("response.refusal.delta", item_id, entry)
        else:
            self.ignore(f"response.refusal.delta:{entry.kind}")

    def _on_arguments_delta(self, data: PlainObject) -> None:
        item_id, delta = self._delta_fields(data)
        entry = self._open_item(item_id, "response.function_call_arguments.delta")
        if entry.kind == _FUNCTION_CALL:
            entry.arguments.append(delta)
        elif entry.kind == _MESSAGE:
            raise self._wrong_item("response.function_call_arguments.delta", item_id, entry)
        else:
            self.ignore(f"response.function_call_arguments.delta:{entry.kind}")

    def _on_other(self, kind: str) -> None:
        self._check_place(kind)
        if kind not in _RESTATING:
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
        output = self.array(body, "output", _ROOT)
        usage = self._usage_of(body, ("usage",))
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
        self.start(response_id)
        for item in items:
            self._emit_item(item, status)
        if status == "incomplete":
            self.stopped(reason)
        elif status == "failed":
            self.failed(message, code if type(code) is str else None)
        elif self._refusal:
            self.refused("".join(self._refusal))
        else:
            self.end(self._tool_called, usage, _ROOT)

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
        return _WholeItem(kind, index, item_status, unsupported=_asks_the_client(kind, item))

    def _emit_item(self, item: _WholeItem, status: str) -> None:
        """The records of one checked output item (class 5)."""
        if item.kind == _MESSAGE:
            for kind, text in item.parts:
                if kind == "output_text":
                    self.text(text)
                elif kind == "refusal":
                    if text:
                        self._refusal.append(text)
                else:
                    self.ignore(f"output.message.content:{kind}")
        elif item.call is not None:
            if item.status not in (None, "completed"):
                # Its stream had no `output_item.done` for it: never a tool call.
                if status == "completed":
                    raise self.malformed(
                        f"The response completed while function call {quote(item.call[0])} "
                        f"is {quote(item.status)}",
                        (*item.path, "status"),
                    )
                return
            call_id, name, arguments = item.call
            self.tool_call(call_id, name, arguments, (*item.path, "arguments"), item.position)
            self._tool_called = True
        else:
            self.ignore(f"output:{item.kind}")

    def _usage_of(self, owner: PlainObject, path: Path) -> tuple[int, int] | None:
        """The token counts of ``owner[usage]`` (at ``path``): a null or missing usage is
        ``None`` (the fallback's turn)."""
        recorded = self.obj(owner, "usage", path[:-1], optional=True)
        if recorded is None:
            return None
        input_tokens = self.count(recorded, "input_tokens", path)
        output_tokens = self.count(recorded, "output_tokens", path)
        assert input_tokens is not None and output_tokens is not None  # both required
        return (input_tokens, output_tokens)

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


# -- serve --------------------------------------------------------------------------------


class Renderer(StreamRenderer):
    """Renders one response as the Responses API streams it (and its whole body)."""

    format = FORMAT

    def __init__(self, model: str, request: PlainObject | None = None) -> None:
        super().__init__(model, request)
        self._response_id = ""
        self._created_at = int(time.time())
        self._sequence = 0
        self._output: list[PlainJson] = []
        """Every finished output item, for ``response.completed``."""
        self._message: PlainObject | None = None
        """The message item a run of text deltas is writing, while it is open."""
        self._text: list[str] = []

    # -- streaming -------------------------------------------------------------------------

    def open(self, response_id: str) -> str:
        self._response_id = response_id
        return self._event(
            "response.created", {"response": self._response("in_progress", [], None)}
        )

    def chunk(self, chunk: CourseModelChunk) -> str:
        if type(chunk) is CourseTextDeltaChunk:
            return self._text_delta(chunk.text)
        assert type(chunk) is CourseToolCallChunk
        return self._function_call(chunk.id, chunk.name, chunk.arguments)

    def complete(self, response: CourseModelResponse) -> str:
        closing = self._close_message()
        body = self._response("completed", self._output, _usage(response))
        return closing + self._event("response.completed", {"response": body})

    def fail(self, error: FixtureProviderError) -> str:
        code, message = error_words(error)
        return self._event(_ERROR, {"code": code, "message": message, "param": None})

    def _text_delta(self, text: str) -> str:
        opening = ""
        message = self._message
        if message is None:
            message = self._message = _message_item(self._item_id("msg"), "in_progress", [])
            opening = self._item_event("response.output_item.added", message) + self._event(
                "response.content_part.added",
                {**self._part_keys(), "part": _text_part("")},
            )
        self._text.append(text)
        return opening + self._event(
            "response.output_text.delta", {**self._part_keys(), "delta": text, "logprobs": []}
        )

    def _close_message(self) -> str:
        message = self._message
        if message is None:
            return ""
        text = "".join(self._text)
        keys = self._part_keys()
        part = _text_part(text)
        message["status"] = "completed"
        message["content"] = [part]
        events = (
            self._event("response.output_text.done", {**keys, "text": text, "logprobs": []})
            + self._event("response.content_part.done", {**keys, "part": part})
            + self._item_event("response.output_item.done", message)
        )
        self._output.append(message)
        self._message = None
        self._text = []
        return events

    def _function_call(self, call_id: str, name: str, arguments: Mapping[str, JsonValue]) -> str:
        closing = self._close_message()  # a tool call ends a run of text
        text = compact(thaw(arguments))
        item_id = self._item_id("fc")
        index = len(self._output)
        added = _function_item(item_id, "in_progress", call_id, name, "")
        keys: PlainObject = {"item_id": item_id, "output_index": index}
        done = _function_item(item_id, "completed", call_id, name, text)
        self._output.append(done)
        return (
            closing
            + self._event("response.output_item.added", {"output_index": index, "item": added})
            + self._event("response.function_call_arguments.delta", {**keys, "delta": text})
            + self._event(
                "response.function_call_arguments.done", {**keys, "arguments": text, "name": name}
            )
            + self._event("response.output_item.done", {"output_index": index, "item": done})
        )

    def _part_keys(self) -> PlainObject:
        """The keys that place an event on the open message's one content part."""
        assert self._message is not None
        return {
            "item_id": self._message["id"],
            "output_index": len(self._output),
            "content_index": 0,
        }

    def _item_event(self, kind: str, item: PlainObject) -> str:
        return self._event(kind, {"output_index": len(self._output), "item": item})

    def _event(self, kind: str, fields: PlainObject) -> str:
        data: PlainObject = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return format_event(compact(data), kind)

    def _item_id(self, prefix: str) -> str:
        """An output item's id: unique within the response, as the API's are."""
        return f"{prefix}_{self._response_id}_{len(self._output)}"

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
        """The response object a stream of the same blocks completes with: a message
        item per run of text, a function call item per tool call."""
        self._response_id = response.response_id
        for block in response.message.content:
            if type(block) is CourseTextBlock:
                self._text_delta(block.text)
            else:
                assert type(block) is CourseToolCallBlock
                self._function_call(block.id, block.name, block.arguments)
        self._close_message()  # the events are not sent: only the items are kept
        return self._response("completed", self._output, _usage(response))

    @staticmethod
    def error_body(error: FixtureProviderError) -> PlainObject:
        code, message = error_words(error)
        return {"error": {"message": message, "type": code, "code": code}}


def _message_item(item_id: str, status: str, content: list[PlainJson]) -> PlainObject:
    return {
        "id": item_id,
        "type": "message",
        "status": status,
        "content": content,
        "role": "assistant",
    }


def _text_part(text: str) -> PlainObject:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


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
    usage = response.usage
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
