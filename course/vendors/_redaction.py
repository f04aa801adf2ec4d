"""Credentials out of a recorded fixture: what counts as one, and how it is struck out.

A recorded request's credentials are the bearer token of its ``Authorization``
header, its ``x-api-key``, ``x-goog-api-key`` and ``api-key`` (Azure OpenAI) headers,
and its ``key`` query parameters (Google's REST API). Before a fixture is written,
every occurrence of one, or of any part of one 8 characters long or longer, is
replaced by ``[redacted]`` in every string the fixture holds, because provider error
messages quote keys (``Incorrect API key provided: sk-proj-...``) and models echo
them. Parts shorter than 8 characters are left: they are too short to be worth the
text they would destroy.

The fixture's own vocabulary is not data and is never changed: its keys (outside
tool-call arguments, whose keys came from the provider) and the values of ``type``,
``role`` and ``stopReason``, which are words ``course`` writes. A tool call's
``argumentFragments`` are redacted as one text, so that a credential split across two
fragments is found and the fragments still join into the (redacted) arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final
from urllib.parse import parse_qsl

from .._json import PlainJson
from .._json_text import JsonSyntaxError, loads

__all__ = ["MIN_PART", "REDACTED", "Redactor", "credentials"]

REDACTED: Final = "[redacted]"
"""What a credential, or a part of one, is replaced by."""

MIN_PART: Final = 8
"""The shortest part of a credential that is redacted wherever it appears."""

CREDENTIAL_HEADERS: Final = frozenset({"x-api-key", "x-goog-api-key", "api-key"})
"""Headers whose whole value is a credential (``authorization`` is read apart)."""

CREDENTIAL_PARAMETERS: Final = frozenset({"key"})
"""Query parameters whose value is a credential."""

_VOCABULARY_VALUES: Final = frozenset({"type", "role", "stopReason"})
"""Record fields whose string values are the fixture's own words."""

_OPEN_OBJECTS: Final = frozenset({"arguments"})
"""Record fields whose objects have the provider's keys (data, so redacted too)."""

_FRAGMENTS: Final = "argumentFragments"


def credentials(headers: Iterable[tuple[bytes, bytes]], query: bytes) -> tuple[str, ...]:
    """The credentials a request carries in its headers and its query string."""
    found: list[str] = []
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1").strip()
        if name == "authorization":
            # "Bearer TOKEN" (or any scheme): the credentials are what follows the scheme.
            scheme, _, token = value.partition(" ")
            value = token.strip() if token.strip() else scheme
        elif name not in CREDENTIAL_HEADERS:
            continue
        if value:
            found.append(value)
    for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=False):
        if name in CREDENTIAL_PARAMETERS and value:
            found.append(value)
    return tuple(dict.fromkeys(found))


class Redactor:
    """Strikes a set of credentials out of text, and out of a fixture's records."""

    __slots__ = ("_parts", "_short")

    def __init__(self, secrets: Iterable[str]) -> None:
        unique = {secret for secret in secrets if secret}
        # A credential shorter than MIN_PART is struck out whole; a longer one by every
        # MIN_PART-long part, which finds every longer part too (each contains one).
        self._short = tuple(sorted((s for s in unique if len(s) < MIN_PART), key=len, reverse=True))
        self._parts = frozenset(
            secret[start : start + MIN_PART]
            for secret in unique
            if len(secret) >= MIN_PART
            for start in range(len(secret) - MIN_PART + 1)
        )

    def __bool__(self) -> bool:
        return bool(self._parts or self._short)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where ``text`` holds a credential or a part of one: sorted, merged spans."""
        found: list[tuple[int, int]] = []
        parts = self._parts
        if parts:
            for start in range(len(text) - MIN_PART + 1):
                if text[start : start + MIN_PART] in parts:
                    found.append((start, start + MIN_PART))
        for secret in self._short:
            start = text.find(secret)
            while start != -1:
                found.append((start, start + len(secret)))
                start = text.find(secret, start + len(secret))
        if not found:
            return found
        found.sort()
        merged = [found[0]]
        for start, end in found[1:]:
            last_start, last_end = merged[-1]
            if start <= last_end:  # overlapping or touching: one credential, one mark
                merged[-1] = (last_start, max(last_end, end))
            else:
                merged.append((start, end))
        return merged

    def text(self, text: str) -> str:
        """``text`` with every credential, and every long enough part of one, struck out."""
        spans = self.spans(text)
        if not spans:
            return text
        pieces: list[str] = []
        at = 0
        for start, end in spans:
            pieces += (text[at:start], REDACTED)
            at = end
        pieces.append(text[at:])
        return "".join(pieces)

    def fragments(self, fragments: Sequence[str]) -> list[str]:
        """Fragments redacted as the one text they join into, each keeping its place:
        a struck-out span goes into the fragment where it starts."""
        joined = "".join(fragments)
        spans = self.spans(joined)
        if not spans:
            return list(fragments)
        result: list[str] = []
        offset = 0
        for fragment in fragments:
            begin, finish = offset, offset + len(fragment)
            pieces: list[str] = []
            at = begin
            for start, end in spans:
                if end <= begin or start >= finish:
                    continue
                if start >= at:
                    pieces.append(joined[at:start])
                if begin <= start:
                    pieces.append(REDACTED)
                at = max(at, min(end, finish))
            pieces.append(joined[at:finish])
            result.append("".join(pieces))
            offset = finish
        return result

    def records(self, records: list[PlainJson]) -> list[PlainJson]:
        """A response's records with every credential struck out of their data.

        Raises ``ValueError`` (with a message naming the record) when redaction would
        change what the record means: two keys of one object made equal, or argument
        fragments that no longer join into the arguments.
        """
        result: list[PlainJson] = []
        for index, record in enumerate(records):
            if type(record) is not dict:
                result.append(self._value(record, keys=False, where=f"record {index}"))
                continue
            result.append(self._record(record, f"record {index}"))
        return result

    def _record(self, record: dict[str, PlainJson], where: str) -> dict[str, PlainJson]:
        redacted: dict[str, PlainJson] = {}
        for key, value in record.items():
            if key in _VOCABULARY_VALUES:
                redacted[key] = value
            elif key == _FRAGMENTS and type(value) is list and all(type(v) is str for v in value):
                redacted[key] = list[PlainJson](self.fragments([str(v) for v in value]))
            else:
                redacted[key] = self._value(value, keys=key in _OPEN_OBJECTS, where=where)
        if _FRAGMENTS in redacted and "arguments" in redacted:
            _check_fragments(redacted, where)
        return redacted

    def _value(self, value: PlainJson, *, keys: bool, where: str) -> PlainJson:
        if type(value) is str:
            return self.text(value)
        if type(value) is list:
            return [self._value(item, keys=keys, where=where) for item in value]
        if type(value) is dict:
            redacted: dict[str, PlainJson] = {}
            for key, item in value.items():
                name = self.text(key) if keys else key
                if name in redacted:
                    raise ValueError(
                        f"{where}: redacting a credential would make two keys of one "
                        f"object equal ({name!r})"
                    )
                redacted[name] = self._value(item, keys=keys, where=where)
            return redacted
        return value


def _check_fragments(record: dict[str, PlainJson], where: str) -> None:
    """The redacted fragments must still join into the redacted arguments."""
    fragments = record[_FRAGMENTS]
    assert type(fragments) is list
    joined = "".join(str(fragment) for fragment in fragments)
    try:
        value: PlainJson = loads(joined) if joined else {}
    except JsonSyntaxError:
        value = None
    if not _same(value, record["arguments"]):
        raise ValueError(
            f"{where}: a credential in the tool call's arguments cannot be struck out of "
            "its argument fragments alike (it is split by JSON syntax or escapes)"
        )


def _same(left: PlainJson, right: PlainJson) -> bool:
    """JSON equality by exact type: ``1`` is not ``1.0``, ``True`` is not ``1``."""
    if type(left) is not type(right):
        return False
    if type(left) is dict:
        assert type(right) is dict
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    if type(left) is list:
        assert type(right) is list
        return len(left) == len(right) and all(map(_same, left, right))
    return left == right
