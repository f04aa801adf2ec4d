"""A forwarded call, as the recording proxy keeps it: what was asked, what came back.

Standard library only, so that the recorder can read answers without the extra
(httpx2 and uvicorn) that the proxy needs.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from .._json import JsonValue

__all__ = ["PROVIDERS", "Answer", "Ending"]

PROVIDERS: Final[Mapping[str, str]] = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
}
"""Which upstream each format's routes are forwarded to."""


class Ending(enum.Enum):
    """How a forwarded call's answer ended."""

    COMPLETE = "complete"
    """The upstream sent its whole answer."""
    UPSTREAM_CUT = "cut by the upstream"
    """The upstream's connection failed in the middle of the body."""
    CLIENT_LEFT = "the client went away"
    """The client disconnected before the answer ended; the upstream response was closed."""
    STOPPED = "cut by the recorder stopping"
    """The recorder stopped while the answer was streaming."""
    UNREACHABLE = "upstream unreachable"
    """No answer: the upstream could not be reached (the client got a 502)."""


class Answer:
    """One forwarded call: what was asked (never written) and what came back, kept."""

    __slots__ = (
        "arrivals",
        "body",
        "chunks",
        "credentials",
        "ending",
        "format",
        "forwarded_at",
        "headers",
        "number",
        "path",
        "reason",
        "status",
    )

    def __init__(
        self,
        number: int,
        format: str,
        path: str,
        body: Mapping[str, JsonValue],
        secrets: tuple[str, ...],
    ) -> None:
        self.number = number
        """1-based, in the order the requests arrived."""
        self.format = format
        self.path = path
        self.body = body
        """The request's JSON body, read-only."""
        self.credentials = secrets
        """The request's credentials, to strike out of what is written."""
        self.forwarded_at = 0.0
        """``time.perf_counter()`` when the request was sent upstream."""
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        """The upstream's response headers, lower-case names (the first of repeated ones)."""
        self.chunks: list[bytes] = []
        self.arrivals: list[float] = []
        """When each chunk arrived (``time.perf_counter()``)."""
        self.ending: Ending | None = None
        self.reason = ""
        """Why the upstream could not be reached (for ``UNREACHABLE``)."""

    @property
    def label(self) -> str:
        """``call 2 (POST /v1/messages)``."""
        return f"call {self.number} (POST {self.path})"

    @property
    def answered(self) -> bool:
        """Whether anything came back to record: a status, and a body unless it ended
        early before its first byte (a cut before anything arrived records nothing)."""
        if self.status is None:
            return False
        return self.ending is Ending.COMPLETE or bool(self.chunks)

    def end(self, ending: Ending) -> None:
        """Note how the answer ended; the first ending noted is the one that happened."""
        if self.ending is None:
            self.ending = ending
