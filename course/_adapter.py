"""``FixtureProviderAdapter``: validates and snapshots a fixture, owns its response queue."""

from __future__ import annotations

import inspect
import types
from collections import deque
from pathlib import PurePath
from typing import Final, TypeAlias

from ._abort import AbortSignal, describe_reason
from ._errors import FixtureProviderError, FixtureProviderErrorCode, Location
from ._json import new_memo
from ._model import CourseModelRequest
from ._parser import SCHEMA_VERSIONS, delay_of, describe, freeze_record
from ._source import SourceFeed, is_async_source
from ._stream import CourseModelStream
from ._text import shorten
from ._untrusted import type_name

__all__ = ["FixtureProviderAdapter"]

Code = FixtureProviderErrorCode

FIXTURE_KEYS: Final = ("schemaVersion", "responses")
RESPONSE_KEYS: Final = ("records",)


def _closed_object(
    value: object, keys: tuple[str, ...], where: Location, what: str
) -> dict[str, object]:
    if type(value) is not dict:
        raise where.error(f"Expected {what} to be an object, got {_unchecked(value)}")
    for key in value:
        if type(key) is not str:
            raise where.error(f"Expected `str` keys in {what}, got `{type_name(key)}`")
        if key not in keys:
            allowed = ", ".join(f"`{k}`" for k in keys)
            raise where.error(
                f"{what.capitalize()} has unknown key `{shorten(key)}` (allowed: {allowed})", key
            )
    for key in keys:
        if key not in value:
            raise where.error(f"{what.capitalize()} is missing required key `{key}`")
    return value


def _not_a_fixture_hint(value: object) -> str:
    """What to do instead, for a fixture given as a file name or path."""
    if issubclass(type(value), PurePath | str):  # the real type: no code of the value runs
        return "; to replay a fixture file, pass `load_fixture(path)`"
    return ""


def _uncalled_hint(records: object) -> str:
    """What to do instead, for an async generator *function* given as records."""
    function = records.__func__ if type(records) is types.MethodType else records
    if type(function) is not types.FunctionType:
        return ""
    if not function.__code__.co_flags & inspect.CO_ASYNC_GENERATOR:
        return ""
    name = str.__str__(function.__name__)
    return f"; `{name}` is an async generator function: call it, as in `records={name}()`"


def _unchecked(value: object) -> str:
    """``describe`` for a value not yet checked as plain JSON: a tuple, say, is no array."""
    kind = type(value)
    if (
        kind is dict
        or kind is list
        or kind is str
        or kind is int
        or kind is float
        or kind is bool
        or value is None
    ):
        return describe(value)
    return f"`{type_name(value)}` (not plain JSON)"


_Queued: TypeAlias = tuple[int, "tuple[object, ...] | SourceFeed", "tuple[int | float, ...] | None"]
"""A queued response: its index, its frozen records or source, and for frozen records
of version 2 the delay before each record (``None``: no record waits)."""


class FixtureProviderAdapter:
    """An offline provider: replays a fixture's responses, one per ``stream()`` call.

    Construction checks the fixture's shape (schema version 1 or 2, closed keys, plain
    JSON by exact type, no cycles, bounded depth) and copies every array record into
    a read-only snapshot, so later changes to the caller's objects change nothing.
    Any problem is a ``FixtureProviderError`` with code ``PROVIDER_INVALID_FIXTURE``.
    Records are parsed only when their response streams.
    """

    __slots__ = ("_call_count", "_queue", "_version")

    def __init__(self, fixture: object) -> None:
        root = Location(())
        if type(fixture) is not dict:
            raise root.error(
                f"Expected the fixture to be an object, got {_unchecked(fixture)}"
                + _not_a_fixture_hint(fixture)
            )
        fields = _closed_object(fixture, FIXTURE_KEYS, root, "the fixture")
        version = fields["schemaVersion"]
        if type(version) is not int or version not in SCHEMA_VERSIONS:
            raise root.error(
                f"Expected `schemaVersion` to be the integer 1 or 2, got {_unchecked(version)}",
                "schemaVersion",
            )
        responses = fields["responses"]
        if type(responses) is not list:
            raise root.error(
                f"Expected `responses` to be an array, got {_unchecked(responses)}",
                "responses",
            )
        self._version: int = version
        self._queue = self._snapshot(responses, version)
        self._call_count = 0

    @staticmethod
    def _snapshot(responses: list[object], version: int) -> deque[_Queued]:
        queue: deque[_Queued] = deque()
        memo = new_memo()
        sources: set[int] = set()
        for index, response in enumerate(responses):
            where = Location(("responses", index), index)
            fields = _closed_object(response, RESPONSE_KEYS, where, f"response {index}")
            records = fields["records"]
            if type(records) is list:
                frozen = tuple([freeze_record(r, index, at, memo) for at, r in enumerate(records)])
                if version < 2:
                    queue.append((index, frozen, None))
                    continue
                # Version 2: how long the stream waits before each record, known now
                # (the records are the adapter's own); ``None`` when it never waits.
                delays = tuple([delay_of(r) for r in frozen])
                queue.append((index, frozen, delays if any(delays) else None))
            elif is_async_source(records):
                if id(records) in sources:
                    raise where.error(
                        "This async record source already backs an earlier response; "
                        "a source can be consumed once",
                        "records",
                    )
                sources.add(id(records))
                queue.append((index, SourceFeed(records, index), None))
            else:
                raise where.error(
                    "Expected `records` to be an array (or, in code, an async iterable), "
                    f"got {_unchecked(records)}{_uncalled_hint(records)}",
                    "records",
                )
        return queue

    @property
    def call_count(self) -> int:
        """How many times ``stream()`` was called, failed calls included."""
        return self._call_count

    @property
    def pending(self) -> int:
        """How many responses are still queued."""
        return len(self._queue)

    def stream(
        self, request: CourseModelRequest, signal: AbortSignal | None = None
    ) -> CourseModelStream:
        """Take the next response and return its stream.

        Fixture failures, an aborted ``signal`` and an empty queue arrive through the
        stream; only a programming error (a request without a ``str`` id, a signal
        that is not an ``AbortSignal``) raises ``TypeError`` here, counting no call.
        """
        if issubclass(type(request), str):
            raise TypeError(
                f"stream() needs a CourseModelRequest, got a str: pass "
                f"`CourseModelRequest(id={str.__str__(request)[:40]!r})`"
            )
        try:
            request_id = getattr(request, "id", None)
        except Exception as exc:
            raise TypeError(f"stream() could not read the request's `id`: {exc!r}") from exc
        # The real types, not ``__class__``, which an object may claim to be anything.
        if not issubclass(type(request_id), str):
            raise TypeError(f"stream() needs a request with a str `id`, got {type_name(request)}")
        request_id = str.__str__(request_id)  # an exact str, whatever subclass came in
        if signal is not None and not issubclass(type(signal), AbortSignal):
            raise TypeError(f"stream() needs an AbortSignal or None, got {type_name(signal)}")
        self._call_count += 1
        if signal is not None and signal.aborted:
            why = describe_reason(signal)
            error = FixtureProviderError(
                Code.PROVIDER_ABORTED,
                f"The signal was aborted before the call, which took no response{why}",
            )
            return CourseModelStream(request_id=request_id, response_index=None, outcome=error)
        if not self._queue:
            error = FixtureProviderError(
                Code.PROVIDER_EXHAUSTED,
                f"Call {self._call_count} found no response left in the fixture",
            )
            return CourseModelStream(request_id=request_id, response_index=None, outcome=error)
        index, records, delays = self._queue.popleft()
        if type(records) is tuple:
            return CourseModelStream(
                request_id=request_id,
                response_index=index,
                records=records,
                delays=delays,
                signal=signal,
                version=self._version,
            )
        return CourseModelStream(
            request_id=request_id,
            response_index=index,
            source=records,  # type: ignore[arg-type]
            signal=signal,
            version=self._version,
        )

    def __repr__(self) -> str:
        return f"<FixtureProviderAdapter call_count={self._call_count} pending={self.pending}>"
