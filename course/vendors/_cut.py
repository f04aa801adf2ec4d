"""Whether the data of an event the recording ends inside is the start of a whole one.

A recording that stops in the middle of its last line is a cut stream, not bad JSON,
when what it holds of that line is a proper prefix of some strict JSON text (or of
``[DONE]``). ``is_cut`` scans the text once to find what would complete it, then lets
the strict reader judge the completed text: a wrong guess can only say "not a prefix",
never call bad JSON cut.
"""

from __future__ import annotations

import re
from typing import Final

from .._json_text import JsonSyntaxError, loads

__all__ = ["is_cut"]

_DONE: Final = "[DONE]"
_SPACE: Final = re.compile(r"[ \t\n\r]*")
# A number as far as it goes, each part after the sign optional: "-", "1.", "1e+".
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)?(?:\.[0-9]*)?(?:[eE][-+]?[0-9]*)?")
_WHOLE_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_STRING_BODY: Final = re.compile(r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*')
_PARTIAL_ESCAPE: Final = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?")
_LITERALS: Final = ("true", "false", "null")
_UNHEARD: Final = "\\u0000course:cut"
"""Text no key of a recording holds: a key the completion adds, or ends, holds it, so
that it repeats none of its object's keys."""


def is_cut(data: str) -> bool:
    """Whether ``data``, which is not strict JSON, is a proper prefix of a strict JSON
    text or of ``[DONE]``."""
    if _DONE.startswith(data):
        return True
    completion = _completion(data)
    if not completion:
        return False
    try:
        loads(data + completion)
    except JsonSyntaxError:
        return False
    return True


def _completion(text: str) -> str | None:
    """What, appended to ``text``, could make it one JSON value: ``None`` when nothing
    can (a character no JSON text has there, or a value already whole)."""
    closers: list[str] = []  # "}" or "]" for each open container, innermost last
    # What comes next: a value, a key, a colon, what follows a value ("after"), or the
    # first key or item of a container, or its end ("first").
    state = "value"
    i, end = 0, len(text)
    while True:
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if i == end:
            return _finish(state, closers)
        char = text[i]
        if state == "after" or (state == "first" and char == closers[-1]):
            if char == ",":
                state = "key" if closers[-1] == "}" else "value"
            elif char == closers[-1]:
                closers.pop()
                state = "after"
                if not closers:
                    return None  # the value is whole: what follows is trailing text
            else:
                return None
            i += 1
            continue
        if state == "colon":
            if char != ":":
                return None
            state, i = "value", i + 1
            continue
        if state in ("key", "first") and closers[-1] == "}":
            if char != '"':
                return None
            closed, tail = _string(text, i)
            if tail is not None:
                return tail + _UNHEARD + '":null' + _closing(closers)
            if closed is None:
                return None
            state, i = "colon", closed
            continue
        # A value.
        if char in "{[":
            closers.append("}" if char == "{" else "]")
            state, i = "first", i + 1
            continue
        if char == '"':
            closed, tail = _string(text, i)
            if tail is not None:
                return tail + '"' + _closing(closers)
            if closed is None:
                return None
            i = closed
        elif char == "-" or char.isdigit():
            number = _NUMBER.match(text, i).group()  # type: ignore[union-attr]
            i += len(number)
            if i == end:
                whole = _WHOLE_NUMBER.fullmatch(number) is not None
                return ("" if whole else "0") + _closing(closers)
        else:
            word = next((w for w in _LITERALS if text.startswith(w[: end - i], i)), None)
            if word is None:
                return None
            if i + len(word) > end:
                return word[end - i :] + _closing(closers)
            i += len(word)
        if not closers:
            return None  # a whole value at the root
        state = "after"


def _string(text: str, start: int) -> tuple[int | None, str | None]:
    """The string that opens at ``start``: where it ends (after its quote), or, when
    the text ends inside it, what completes its last character (its closing quote not
    included); ``(None, None)`` when it holds what no string may."""
    body = _STRING_BODY.match(text, start + 1).end()  # type: ignore[union-attr]
    rest = text[body:]
    if not rest:
        return None, ""
    if rest[0] == '"':
        return body + 1, None
    if _PARTIAL_ESCAPE.fullmatch(rest):
        return None, "n" if rest == "\\" else "0" * (6 - len(rest))
    return None, None


def _finish(state: str, closers: list[str]) -> str:
    """What completes a text that ended, whole tokens only, in ``state``."""
    if state == "after":
        return _closing(closers)
    if state == "colon":
        return ":null" + _closing(closers)
    if state == "key":
        return f'"{_UNHEARD}":null' + _closing(closers)
    if state == "first":
        return _closing(closers)
    return "null" + _closing(closers)


def _closing(closers: list[str]) -> str:
    return "".join(reversed(closers))
