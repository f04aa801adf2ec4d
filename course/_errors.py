"""The one exception type of the adapter and its stable codes.

Exception tree::

    Exception
     └── FixtureProviderError   (.code: FixtureProviderErrorCode)

Nothing else escapes the adapter, except ``asyncio.CancelledError``, which is the
consuming task's own business and propagates untouched (and a ``TypeError`` from
``stream()`` for a caller's programming error, at once).
"""

from __future__ import annotations

import enum

__all__ = ["FixtureProviderError", "FixtureProviderErrorCode", "Location", "pointer"]


class FixtureProviderErrorCode(enum.StrEnum):
    """Why a fixture, a call or a response failed. Each value equals its name."""

    PROVIDER_INVALID_FIXTURE = "PROVIDER_INVALID_FIXTURE"
    """Bad fixture, unsafe values, or a failing or hostile async source."""
    PROVIDER_EXHAUSTED = "PROVIDER_EXHAUSTED"
    """``stream()`` found the response queue empty."""
    PROVIDER_ABORTED = "PROVIDER_ABORTED"
    """The signal was aborted, the stream was closed, or its consuming task was
    cancelled, before its terminal."""
    PROVIDER_UNKNOWN_EVENT = "PROVIDER_UNKNOWN_EVENT"
    """A record whose ``type`` is a string outside the five record types (ten in
    schema version 2)."""
    PROVIDER_MALFORMED_EVENT = "PROVIDER_MALFORMED_EVENT"
    """A record that is not an object, lacks a string ``type``, or has a bad payload."""
    PROVIDER_MISSING_START = "PROVIDER_MISSING_START"
    """A content record (text, tool call; version 2: any) or the end before
    ``response_start``."""
    PROVIDER_DUPLICATE_START = "PROVIDER_DUPLICATE_START"
    """A second ``response_start``."""
    PROVIDER_DUPLICATE_TOOL_CALL = "PROVIDER_DUPLICATE_TOOL_CALL"
    """A tool-call id already used in this response."""
    PROVIDER_RESPONSE_MISMATCH = "PROVIDER_RESPONSE_MISMATCH"
    """``response_end.responseId`` differs from the start's."""
    PROVIDER_STOP_REASON_MISMATCH = "PROVIDER_STOP_REASON_MISMATCH"
    """``tool_call`` without tool calls, or ``stop`` with some; version 2: a
    ``tool_call_incomplete`` without ``length``, a ``refusal_delta`` without ``refusal``."""
    PROVIDER_OUT_OF_ORDER = "PROVIDER_OUT_OF_ORDER"
    """Schema version 2 only: a ``thinking_signature`` not right after a
    ``thinking_delta``, or content after a ``tool_call_incomplete``."""
    PROVIDER_MISSING_TERMINAL = "PROVIDER_MISSING_TERMINAL"
    """The source ended without ``response_end``."""
    PROVIDER_DUPLICATE_TERMINAL = "PROVIDER_DUPLICATE_TERMINAL"
    """A ``response_end`` after the terminal."""
    PROVIDER_INVALID_TERMINAL = "PROVIDER_INVALID_TERMINAL"
    """Any other record after the terminal."""
    PROVIDER_TRANSPORT_ERROR = "PROVIDER_TRANSPORT_ERROR"
    """A ``transport_error`` record; its message is data, never a code."""
    PROVIDER_STREAM_CONSUMED = "PROVIDER_STREAM_CONSUMED"
    """A second consumer iterated a stream."""


class FixtureProviderError(Exception):
    """A coded, located failure of a fixture, a call or a response.

    ``response_index`` and ``record_index`` count from 0; ``path`` is a JSON
    pointer into the fixture, such as ``/responses/0/records/2/usage``. An error of
    ``load_fixture`` also has the 1-based ``line`` and ``column`` in the file (else
    ``None``). A ``PROVIDER_TRANSPORT_ERROR`` carries the record's own ``message`` and
    ``code`` verbatim as ``transport_message`` and ``transport_code``, and (schema
    version 2) its ``status`` and ``float(retryAfter)`` as ``transport_status`` and
    ``transport_retry_after``; all four are ``None`` for every other code, and each is
    ``None`` where the record has no such field.
    """

    code: FixtureProviderErrorCode
    message: str
    response_index: int | None
    record_index: int | None
    path: str | None
    line: int | None
    column: int | None
    transport_message: str | None
    transport_code: str | None
    transport_status: int | None
    transport_retry_after: float | None

    def __init__(
        self,
        code: FixtureProviderErrorCode | str,
        message: str,
        *,
        response_index: int | None = None,
        record_index: int | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__(code, message)
        self.code = FixtureProviderErrorCode(code)
        self.message = message
        self.response_index = response_index
        self.record_index = record_index
        self.path = path
        # Set by the code that raises, where they apply (the SPEC's signature stays).
        self.line = None
        self.column = None
        self.transport_message = None
        self.transport_code = None
        self.transport_status = None
        self.transport_retry_after = None

    def __str__(self) -> str:
        if self.path is None:
            where = ""
        elif self.path == "":
            where = " (at the fixture root)"
        else:
            where = f" (at {self.path})"
        return f"{self.code.value}: {self.message}{where}"

    def __repr__(self) -> str:
        return (
            f"FixtureProviderError({self.code.value!r}, {self.message!r}, "
            f"response_index={self.response_index!r}, "
            f"record_index={self.record_index!r}, path={self.path!r})"
        )

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only and later-set fields need help to survive pickling (e.g. xdist).
        return (
            _rebuild,
            (self.code, self.message, self.response_index, self.record_index, self.path),
            {
                "line": self.line,
                "column": self.column,
                "transport_message": self.transport_message,
                "transport_code": self.transport_code,
                "transport_status": self.transport_status,
                "transport_retry_after": self.transport_retry_after,
            },
        )


def _rebuild(
    code: FixtureProviderErrorCode,
    message: str,
    response_index: int | None,
    record_index: int | None,
    path: str | None,
) -> FixtureProviderError:
    return FixtureProviderError(
        code, message, response_index=response_index, record_index=record_index, path=path
    )


def pointer(*parts: str | int) -> str:
    """Build a JSON pointer (RFC 6901) from keys and indexes."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


class Location:
    """Where a value sits in the fixture: builds its ``PROVIDER_INVALID_FIXTURE``."""

    __slots__ = ("parts", "record_index", "response_index")

    def __init__(
        self,
        parts: tuple[str | int, ...],
        response_index: int | None = None,
        record_index: int | None = None,
    ) -> None:
        self.parts = parts
        self.response_index = response_index
        self.record_index = record_index

    def error(self, message: str, *extra: str | int) -> FixtureProviderError:
        """The error for a problem at ``extra`` below this place."""
        return FixtureProviderError(
            FixtureProviderErrorCode.PROVIDER_INVALID_FIXTURE,
            message,
            response_index=self.response_index,
            record_index=self.record_index,
            path=pointer(*self.parts, *extra),
        )
