"""What every format's renderer shares: the interface the server drives, and error words.

A format module's ``Renderer`` turns one ``CourseModelStream`` into that provider's
wire format, as the server receives the stream's values:

- streaming: ``open`` (schema version 1: when the first chunk comes, or the response
  completes without one; version 2: once ``response_start`` was read, so before any
  chunk), then ``chunk`` for each chunk, then ``complete`` with the response, or
  ``fail`` with the error once streaming has begun; each returns SSE text to send
  (a format may hold back part of its opening until it knows what comes first);
- not streaming: ``whole`` with the response gives the JSON body;
- before streaming has begun, or without streaming, a failure is an HTTP error (500,
  or a version-2 transport error's own ``status``) with ``error_body``.

Before anything is rendered the server calls ``follow`` with the stream, for what its
chunks do not carry (schema version 2: a call's argument fragments); before ``open``
(and ``whole``) it sets ``model`` to the fixture's model when the fixture names one,
and ``start_usage`` to the usage its ``response_start`` reported.

Ids come from the fixture verbatim: the response id and the tool-call ids.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import ClassVar

from .._errors import FixtureProviderError, FixtureProviderErrorCode
from .._json import PlainJson
from .._model import CourseModelChunk, CourseModelResponse, CourseModelUsage, CourseRequestBlock
from .._stream import CourseModelStream
from ._recording import PlainObject

__all__ = ["StreamRenderer", "compact", "error_words"]


def compact(value: PlainJson) -> str:
    """``value`` as JSON without spaces, as the providers send it. ASCII escapes keep any
    text (a lone surrogate included) encodable on the wire."""
    return json.dumps(value, separators=(",", ":"))


def error_words(error: FixtureProviderError) -> tuple[str | None, str]:
    """The code and message a provider's error body carries for ``error``.

    For a ``PROVIDER_TRANSPORT_ERROR``, the record's own ``code`` (``None`` when it had
    none) and ``message``; for any other failure, the error's code and message.
    """
    if error.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR:
        return error.transport_code, error.transport_message or ""
    return error.code.value, error.message


class StreamRenderer:
    """One response in one wire format. Subclasses implement every method."""

    format: ClassVar[str]
    """The format name, as ``course.vendors`` names it."""

    def __init__(self, model: str, request: PlainObject | None = None) -> None:
        self.model = model
        """The model name to report: the fixture's (``response_start.model``, set by the
        server before ``open`` or ``whole``), else the request's ``model``, else a
        placeholder."""
        self.request: PlainObject = {} if request is None else request
        """The request's JSON body, read only: what it asked of the stream (openai-chat:
        ``stream_options.include_usage``)."""
        self.start_usage: CourseModelUsage | None = None
        """The usage the fixture's ``response_start`` reported (version 2), set by the
        server before ``open``: anthropic's ``message_start`` carries it."""
        self.stream: CourseModelStream | None = None
        """The stream rendered (``follow``), for what its chunks do not carry (schema
        version 2: a call's argument fragments)."""

    def follow(self, stream: CourseModelStream) -> None:
        """The server's first call, before anything is rendered: ``stream`` is the one
        rendered. A subclass that overrides it calls this one."""
        self.stream = stream

    def argument_fragments(self, call_id: str) -> tuple[str, ...] | None:
        """The ``argumentFragments`` of the tool call ``call_id`` (complete or cut) in the
        followed stream, which no chunk carries; ``None``: it has none, or no stream is
        followed."""
        return None if self.stream is None else self.stream._argument_fragments(call_id)

    def sent_items(self) -> Mapping[str, tuple[CourseRequestBlock, ...]]:
        """The id of each output item rendered so far, with the blocks it carried, for
        formats whose later requests may name an item by id (Responses'
        ``item_reference``); ``{}`` for the others."""
        return {}

    def open(self, response_id: str) -> str:
        """The events that open the stream."""
        raise NotImplementedError

    def chunk(self, chunk: CourseModelChunk) -> str:
        """The events for one chunk, sent as soon as the adapter yields it."""
        raise NotImplementedError

    def complete(self, response: CourseModelResponse) -> str:
        """The events that close a complete stream (the terminal included)."""
        raise NotImplementedError

    def fail(self, error: FixtureProviderError) -> str:
        """The in-stream error event that ends a stream that has begun."""
        raise NotImplementedError

    def whole(self, response: CourseModelResponse) -> PlainObject:
        """The non-streaming body of a complete response."""
        raise NotImplementedError

    @staticmethod
    def error_body(error: FixtureProviderError) -> PlainObject:
        """The HTTP error body for a failure before streaming began, or without it."""
        raise NotImplementedError
