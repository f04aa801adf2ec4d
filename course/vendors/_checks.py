"""The checks a provider makes of the history an agent sends (``SPEC-REQUESTS.md``).

Each runs on a ``ReadRequest`` (the request in course's own vocabulary, whatever its
format) and the ``SentLog`` of what this server answered before:

1. every tool result names a tool call made earlier in the history;
2. every tool call is answered by a result before the conversation moves on (a later
   assistant turn, or a message that is not all tool results), or by the end;
3. what this server sent comes back as it was sent: each tool call it recognises by id
   keeps its name and arguments (as JSON values); Anthropic's last assistant message
   carries that response's thinking blocks before its tool calls; a Gemini call sent with
   a signature comes back with the same signature bytes.

Checks 1 and 2, and the Anthropic and Gemini parts of check 3, are what the providers
answer with a 400; a changed name or arguments they take, so it is only noted. Problems
come in check order, those that refuse first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final, cast

from .._json import JsonArray, JsonObject, JsonValue
from .._model import (
    CourseContentBlock,
    CourseIncompleteToolCallBlock,
    CourseRedactedThinkingBlock,
    CourseRequestBlock,
    CourseRequestMessage,
    CourseThinkingBlock,
    CourseToolCallBlock,
    CourseToolResultBlock,
)
from . import _gemini
from ._recording import quote
from ._requests import ReadRequest, SentLog

__all__ = ["Checked", "check", "equal_json"]

_ToolCall = CourseToolCallBlock | CourseIncompleteToolCallBlock


@dataclass(frozen=True, slots=True)
class Checked:
    """What the checks found: ``problems`` in order; ``refused``: the first is a 400."""

    problems: tuple[str, ...] = ()
    refused: bool = False


def check(format: str, read: ReadRequest, sent: SentLog) -> Checked:
    """The problems of ``read``'s history (a request in ``format``), as ``Checked``."""
    if not read.checked:
        return Checked()
    history = list(_placed(read))
    if format in _TURNS_MERGED:
        history = _turns(history)
    walk = _Walk(sent, read.recognised, signatures=format == _gemini.FORMAT)
    for message, places in history:
        walk.message(message, places)
    walk.end()
    if format == "anthropic":
        walk.kept += _thinking_kept(history, sent)
    refusing = [*walk.linked, *walk.answered, *walk.kept]
    return Checked((*refusing, *walk.noted), refused=bool(refusing))


# A message of the history, with the wire place of each of its blocks.
_Placed = tuple[CourseRequestMessage, tuple[str, ...]]


_TURNS_MERGED = frozenset({"anthropic", _gemini.FORMAT})
"""The formats whose providers take consecutive messages of one role as one turn
(Anthropic combines them; google-genai's streamed function calling sends each chunk's
content as a message of its own)."""


def _turns(history: list[_Placed]) -> list[_Placed]:
    """``history`` with each run of messages of one role joined into one."""
    turns: list[_Placed] = []
    for message, places in history:
        if turns and turns[-1][0].role == message.role:
            last, last_places = turns[-1]
            joined = CourseRequestMessage(message.role, (*last.content, *message.content))
            turns[-1] = (joined, (*last_places, *places))
        else:
            turns.append((message, places))
    return turns


def _placed(read: ReadRequest) -> Iterator[_Placed]:
    for message in read.history:
        yield message, ("previous_response_id",) * len(message.content)
    yield from zip(read.messages, read.places, strict=True)


def _calls(
    message: CourseRequestMessage, places: tuple[str, ...]
) -> Iterator[tuple[_ToolCall, str]]:
    for block, place in zip(message.content, places, strict=True):
        if type(block) is CourseToolCallBlock or type(block) is CourseIncompleteToolCallBlock:
            yield block, place


class _Walk:
    """One walk of the history, block by block, finding the problems of every check
    but Anthropic's thinking: ``linked`` (check 1), ``answered`` (check 2), ``kept``
    (check 3, refused: Gemini's signatures) and ``noted`` (check 3: a changed call)."""

    def __init__(self, sent: SentLog, recognised: Mapping[int, str], *, signatures: bool) -> None:
        self._sent = sent
        self._recognised = recognised
        self._signatures = signatures
        self._made: set[str] = set()
        self._waiting: dict[str, str] = {}  # a call's id -> its place, until answered
        self.linked: list[str] = []
        self.answered: list[str] = []
        self.kept: list[str] = []
        self.noted: list[str] = []

    def message(self, message: CourseRequestMessage, places: tuple[str, ...]) -> None:
        assistant = message.role == "assistant"
        where = places[0] if places else "an empty message"
        if assistant:
            self._unanswered(f"before the assistant turn at {where}")
        moved_on = False
        for block, place in zip(message.content, places, strict=True):
            kind = type(block)
            if kind is CourseToolResultBlock:
                self._result(cast("CourseToolResultBlock", block), place)
            elif kind is CourseToolCallBlock or kind is CourseIncompleteToolCallBlock:
                self._call(cast("_ToolCall", block), place, assistant=assistant)
                moved_on = True
            else:
                moved_on = True
        if moved_on and not assistant:
            self._unanswered(f"before the {message.role} message at {where}")

    def end(self) -> None:
        self._unanswered("by the end of the history")

    def _result(self, result: CourseToolResultBlock, place: str) -> None:
        call_id = result.tool_call_id
        if call_id not in self._made:
            self.linked.append(
                f"course check 1: {place}: the tool result for {quote(call_id)} answers no "
                "tool call made earlier in the history"
            )
        self._waiting.pop(call_id, None)

    def _call(self, call: _ToolCall, place: str, *, assistant: bool) -> None:
        self._made.add(call.id)
        if assistant:
            self._waiting[call.id] = place
        sent_id = self._recognised.get(id(call), call.id)
        found = self._sent.call(sent_id) if sent_id else None
        if found is None:
            return
        original = found[1]
        what = f"course check 3: {place}: the tool call {quote(call.id)}"
        if call.name != original.name:
            self.noted.append(
                f"{what} comes back named {quote(call.name)}, sent as {quote(original.name)}"
            )
        if type(call) is not CourseToolCallBlock:
            self.noted.append(f"{what} comes back with arguments that are not a JSON object")
        elif not equal_json(call.arguments, original.arguments):
            self.noted.append(f"{what} comes back with other arguments than it was sent with")
        if self._signatures and original.signature is not None:
            self._signature_kept(call, original.signature, place)

    def _signature_kept(self, call: _ToolCall, sent: str, place: str) -> None:
        """Gemini: a call sent with a signature comes back with the same signature bytes."""
        back = call.signature if type(call) is CourseToolCallBlock else None
        what = f"course check 3: {place}: the function call {quote(call.id)}"
        if back is None:
            self.kept.append(f"{what} comes back without the thoughtSignature it was sent with")
        elif not _gemini.same_signature(sent, back):
            self.kept.append(
                f"{what} comes back with another thoughtSignature than it was sent with"
            )

    def _unanswered(self, when: str) -> None:
        for call_id, place in self._waiting.items():
            self.answered.append(
                f"course check 2: {place}: the tool call {quote(call_id)} has no result {when}"
            )
        self._waiting.clear()


def _thinking_kept(history: list[_Placed], sent: SentLog) -> Iterator[str]:
    """Anthropic: the last assistant message keeps, before the tool calls this server
    sent, every thinking block of their response, recognised by signature (or data)."""
    last = next((placed for placed in reversed(history) if placed[0].role == "assistant"), None)
    if last is None:
        return
    message, places = last
    checked: set[str] = set()
    for call, place in _calls(message, places):
        found = sent.call(call.id)
        if found is None or found[0].response_id in checked:
            continue
        response = found[0]
        checked.add(response.response_id)
        before = message.content[: _index_of(message, call)]
        for block in response.content:
            problem = _kept(block, before)
            if problem is not None:
                yield (
                    f"course check 3: {place}: {problem}, which came before the tool call "
                    f"{quote(call.id)} in response {quote(response.response_id)}"
                )


def _index_of(message: CourseRequestMessage, block: CourseRequestBlock) -> int:
    return next(i for i, item in enumerate(message.content) if item is block)


def _kept(block: CourseContentBlock, before: tuple[CourseRequestBlock, ...]) -> str | None:
    """Why the sent thinking ``block`` is not among ``before`` as sent, else ``None``."""
    if type(block) is CourseThinkingBlock and block.signature is not None:
        back = next(
            (
                item
                for item in before
                if type(item) is CourseThinkingBlock and item.signature == block.signature
            ),
            None,
        )
        if back is None:
            return f"the thinking block signed {quote(block.signature)} is missing"
        if back.text != block.text:
            return f"the thinking block signed {quote(block.signature)} comes back with other text"
    elif type(block) is CourseRedactedThinkingBlock and not any(
        type(item) is CourseRedactedThinkingBlock and item.data == block.data for item in before
    ):
        return f"the redacted thinking block {quote(block.data)} is missing"
    return None


def equal_json(left: JsonValue, right: JsonValue) -> bool:
    """Whether two read-only JSON values are equal as JSON values: key order does not
    matter, numbers compare by value (``1`` equals ``1.0``), and ``true``, ``false`` and
    ``null`` equal only themselves. Iterative, so depth is no ``RecursionError``."""
    pending: list[tuple[object, object]] = [(left, right)]
    while pending:
        a, b = pending.pop()
        kind, other = type(a), type(b)
        if kind is JsonObject:
            if other is not JsonObject or len(a) != len(b):  # type: ignore[arg-type]
                return False
            for key, item in a.items():  # type: ignore[attr-defined]
                found = b.get(key, _MISSING)  # type: ignore[attr-defined]
                if found is _MISSING:
                    return False
                pending.append((item, found))
        elif kind in _ARRAYS:
            if other not in _ARRAYS or len(a) != len(b):  # type: ignore[arg-type]
                return False
            pending.extend(zip(a, b, strict=True))  # type: ignore[call-overload]
        elif kind in _NUMBERS:
            if other not in _NUMBERS or a != b:
                return False
        elif kind is not other or a != b:  # str, bool, None
            return False
    return True


_MISSING: Final = object()
_ARRAYS: Final = (JsonArray, tuple)
_NUMBERS: Final = (int, float)
