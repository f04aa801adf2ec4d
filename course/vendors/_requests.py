"""What a served request is, and what the server sent before it (``SPEC-REQUESTS.md``).

Each format's module reads its request bodies (``read_request``, with the signature of
``ReadRequestFunction``) into a ``ReadRequest``: the ``CourseModelRequest`` with typed
messages and tools, and where each block stood on the wire, so that a problem can name
it. A body it cannot read is a ``RequestReadError``. ``SentLog`` is what the server has
answered so far, which the checks (``_checks``) compare the history against, and which
readers consult where the wire points at it (a Responses ``previous_response_id`` or
``item_reference``; a Gemini call that comes back without its id).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final, Protocol, cast

from .._json import JsonObject, JsonValue, Memo, PlainJson, copied, refreeze
from .._model import (
    CourseContentBlock,
    CourseModelRequest,
    CourseRequestBlock,
    CourseRequestMessage,
    CourseToolCallBlock,
)
from ._recording import PlainObject, _kind

__all__ = [
    "ReadRequest",
    "ReadRequestFunction",
    "RequestReadError",
    "SentLog",
    "SentResponse",
    "ServedCall",
    "field_at",
    "found",
    "frozen_json",
    "frozen_object",
    "mistyped",
    "optional_object",
    "optional_string",
    "read_body",
    "string_field",
    "unreadable",
]


class RequestReadError(Exception):
    """Why a request gets the provider's 400: a body its format's reader cannot read
    (what readers raise), or (raised by no one, built by the server) its first failed
    check.

    ``problem`` starts ``course read:`` and names the place on the wire (``messages[2]``,
    ``input[0].content[1]``, ``previous_response_id``, ...). ``code`` and ``param`` are
    the provider's own, for the formats whose error body has them (OpenAI's
    ``previous_response_not_found`` on ``previous_response_id``), else ``None``.
    """

    def __init__(self, problem: str, *, code: str | None = None, param: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.code = code
        self.param = param


@dataclass(frozen=True, slots=True)
class ReadRequest:
    """A request body as its format's reader read it."""

    request: CourseModelRequest
    """Its ``messages`` are ``CourseRequestMessage`` values, in the wire's order; its
    ``tools`` ``CourseTool`` values."""
    places: tuple[tuple[str, ...], ...]
    """Per message of ``request.messages``, per block of its content: where the block
    stood on the wire, as a problem names it (``messages[3]``, ``input[5]``,
    ``contents[1]``, ``system``)."""
    history: tuple[CourseRequestMessage, ...] = ()
    """Messages the request carries by reference, before its own (a Responses
    ``previous_response_id``: that response's history, then its output); checked as
    history, each of their blocks placed at ``previous_response_id``."""
    checked: bool = True
    """``False`` when the request's history is not all at hand (a Responses
    ``conversation``): nothing is checked."""
    recognised: Mapping[int, str] = field(default_factory=dict)
    """Gemini: for a tool call block that came back under an id this server did not send
    it with (recognised by name and arguments), that id, by the block's ``id()`` (the
    blocks live as long as this value)."""

    @property
    def messages(self) -> tuple[CourseRequestMessage, ...]:
        """The request's messages, typed (``request.messages`` is typed ``object``)."""
        return self.request.messages  # type: ignore[return-value]


class ReadRequestFunction(Protocol):
    """A format's request reader: ``body`` (the request's JSON object) read into a
    ``ReadRequest`` whose request has ``request_id``, or a ``RequestReadError``. It
    never raises anything else, whatever ``body`` holds."""

    def __call__(
        self, body: Mapping[str, PlainJson], request_id: str, sent: SentLog
    ) -> ReadRequest: ...


@dataclass(frozen=True, slots=True)
class SentResponse:
    """One answer this server sent, as a later request may bring it back."""

    format: str
    response_id: str
    """The id the wire gave the response (the fixture's ``responseId``)."""
    content: tuple[CourseContentBlock, ...]
    """What the answer sent, in order: its message's content (so far, when it was cut)."""
    history: tuple[CourseRequestMessage, ...] = ()
    """The history of the request it answered, its own messages included (what a later
    ``previous_response_id`` naming this response stands for, before ``content``)."""
    items: Mapping[str, tuple[CourseRequestBlock, ...]] = field(default_factory=dict)
    """Responses: each output item's id, and the blocks it sent (``item_reference``)."""

    def output(self) -> CourseRequestMessage:
        """The answer as an assistant message of a later history."""
        return CourseRequestMessage("assistant", self.content)


class SentLog:
    """What a server has answered, oldest first."""

    __slots__ = ("_calls", "_items", "_order", "_responses")

    def __init__(self) -> None:
        self._order: list[SentResponse] = []
        self._responses: dict[str, SentResponse] = {}
        self._calls: dict[str, tuple[SentResponse, CourseToolCallBlock]] = {}
        self._items: dict[str, tuple[CourseRequestBlock, ...]] = {}

    def add(self, sent: SentResponse) -> None:
        """Remember ``sent``; a later response with the same id replaces an earlier one
        wherever the wire names it (the most recent that sent it wins)."""
        self._order.append(sent)
        self._responses[sent.response_id] = sent
        for block in sent.content:
            if type(block) is CourseToolCallBlock:
                self._calls[block.id] = (sent, block)
        self._items.update(sent.items)

    def response(self, response_id: str) -> SentResponse | None:
        """The most recent response sent with ``response_id``."""
        return self._responses.get(response_id)

    def call(self, call_id: str) -> tuple[SentResponse, CourseToolCallBlock] | None:
        """The complete tool call ``call_id`` as most recently sent, and its response."""
        return self._calls.get(call_id)

    def item(self, item_id: str) -> tuple[CourseRequestBlock, ...] | None:
        """The blocks of the Responses output item ``item_id``, if this server sent it."""
        return self._items.get(item_id)

    def recent(self) -> Iterator[SentResponse]:
        """Every response sent, the most recent first."""
        return reversed(self._order)


@dataclass(frozen=True, slots=True)
class ServedCall:
    """One POST to a model route whose body was a JSON object, as the server took it."""

    format: str
    """``openai-chat``, ``openai-responses``, ``anthropic`` or ``gemini``."""
    path: str
    body: Mapping[str, JsonValue]
    """The request's JSON body, read-only (as ``requests`` has it)."""
    request: CourseModelRequest | None
    """The body as its format reads it (its ``id`` the server's request id); ``None`` when
    it could not be read."""
    response_index: int | None
    """The index of the fixture response it took, or ``None`` (refused, or none left)."""
    problems: tuple[str, ...] = ()
    """What the checks found, in check order, each starting ``course check N:`` or
    ``course read:``; a refused call's 400 says the first."""


# -- reading a request's fields (the Anthropic and Gemini readers) -------------------------


def unreadable(place: str, what: str) -> RequestReadError:
    """The read problem ``course read: <place>: <what>``."""
    return RequestReadError(f"course read: {place}: {what}")


def field_at(place: str, key: str) -> str:
    """The place of ``key`` in the object at ``place`` (``""``: the body)."""
    return f"{place}.{key}" if place else key


def found(owner: PlainObject, key: str) -> str:
    """What ``owner`` holds at ``key``, for a message saying it is not what it should be."""
    return f"got {_kind(owner[key])}" if key in owner else "none was given"


def string_field(owner: PlainObject, key: str, place: str, what: str) -> str:
    """``owner[key]``, which must be a string; ``what`` names the owner in the message."""
    value = owner.get(key)
    if type(value) is not str:
        raise unreadable(field_at(place, key), f"{what} needs a string {key}, {found(owner, key)}")
    return value


def mistyped(owner: PlainObject, key: str, kind: str, place: str, what: str) -> RequestReadError:
    """``owner[key]`` is present but not ``kind`` (``a string``, ...)."""
    return unreadable(
        field_at(place, key), f"{what}'s {key} must be {kind}, got {_kind(owner[key])}"
    )


def optional_string(owner: PlainObject, key: str, place: str, what: str) -> str | None:
    """``owner[key]``, a string, or ``None`` when absent or null."""
    value = owner.get(key)
    if value is None or type(value) is str:
        return value
    raise mistyped(owner, key, "a string", place, what)


def optional_object(
    owner: PlainObject, key: str, place: str, what: str
) -> Mapping[str, JsonValue] | None:
    """``owner[key]``, an object made read-only, or ``None`` when absent or null."""
    value = owner.get(key)
    if value is None:
        return None
    if type(value) is not dict:
        raise mistyped(owner, key, "an object", place, what)
    return frozen_object(value)


def frozen_object(value: PlainObject) -> Mapping[str, JsonValue]:
    """A plain JSON object of the body, read-only (see ``frozen_json``)."""
    return cast(JsonObject, frozen_json(value))


def frozen_json(value: PlainJson) -> JsonValue:
    """A plain JSON value, read-only: within ``read_body``, when it is a part of the
    body, the copy the server already made of it, so nothing is frozen twice (the body
    is held while it is read, so ``copied`` may be asked of anything)."""
    copies = _BODY_COPIES.get()
    if copies is not None and type(value) in (dict, list):
        known = copied(copies, value)
        if known is not None:
            return known
    return refreeze(value)


_BODY_COPIES: Final[ContextVar[Memo | None]] = ContextVar("course_body_copies", default=None)
"""While a reader runs under ``read_body``: the memo of the body's read-only copy."""


def read_body(
    reader: ReadRequestFunction,
    body: Mapping[str, PlainJson],
    request_id: str,
    sent: SentLog,
    copies: Memo,
) -> ReadRequest:
    """``reader`` on ``body``, whose read-only copy was made with ``copies``: what the
    reader keeps of the body (arguments, results, other blocks) is taken from that copy
    instead of being frozen again (about a third of reading a tool loop's history)."""
    token = _BODY_COPIES.set(copies)
    try:
        return reader(body, request_id, sent)
    finally:
        _BODY_COPIES.reset(token)
