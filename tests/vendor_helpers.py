"""Shared helpers for the vendor tests: real SDK clients over an in-memory transport.

``openai_client(body)`` and ``anthropic_client(body)`` return the official clients whose
every request is answered with ``body`` (an SSE stream, or a JSON object when
``content_type`` says so) through ``httpx2.MockTransport``, so the SDKs' own stream
helpers parse exactly the bytes under test. No network.

``render_stream(renderer, records)`` and ``render_whole(renderer, records)`` give what
the server sends for one fixture response, driving the renderer as the server does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anthropic
import httpx2
import openai

from course import (
    CourseModelRequest,
    CourseModelResponse,
    FixtureProviderAdapter,
    FixtureProviderError,
    thaw,
)
from course.vendors import Recording
from course.vendors._rendering import StreamRenderer

__all__ = [
    "RECORDINGS",
    "Served",
    "anthropic_client",
    "openai_client",
    "render_stream",
    "render_whole",
    "replay",
    "replay_records",
]

RECORDINGS = Path(__file__).parent / "recordings"
"""Hand-written recordings, one folder per format: tests/recordings/<format>/*.sse."""

SSE = "text/event-stream"
JSON = "application/json"


def _transport(body: bytes, content_type: str, status: int) -> httpx2.MockTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, headers={"content-type": content_type}, content=body)

    return httpx2.MockTransport(handler)


def openai_client(body: bytes, *, content_type: str = SSE, status: int = 200) -> openai.OpenAI:
    """An ``openai.OpenAI`` client that receives ``body`` for every request."""
    return openai.OpenAI(
        api_key="test",
        base_url="http://recording.invalid/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=_transport(body, content_type, status)),
    )


def anthropic_client(
    body: bytes, *, content_type: str = SSE, status: int = 200
) -> anthropic.Anthropic:
    """An ``anthropic.Anthropic`` client that receives ``body`` for every request."""
    return anthropic.Anthropic(
        api_key="test",
        base_url="http://recording.invalid",
        max_retries=0,
        http_client=httpx2.Client(transport=_transport(body, content_type, status)),
    )


def replay(recording: Recording) -> CourseModelResponse:
    """Replay an imported recording through the adapter: its response, or its error raised."""
    return _replayed(thaw(recording.response))


def replay_records(records: Sequence[object]) -> CourseModelResponse:
    """Replay one fixture response's records: its response, or its error raised."""
    return _replayed({"records": records})


def _replayed(response: object) -> CourseModelResponse:
    adapter = FixtureProviderAdapter({"schemaVersion": 1, "responses": [response]})

    async def run() -> CourseModelResponse:
        return await adapter.stream(CourseModelRequest(id="request-1")).result()

    return asyncio.run(run())


@dataclass(frozen=True)
class Served:
    """What the server sends for one request."""

    status: int
    body: bytes
    content_type: str


def render_stream(renderer: StreamRenderer, records: Sequence[object]) -> Served:
    """The streaming answer for one fixture response, rendered as the server renders it.

    ``open`` at the first chunk (or at a completion without one), ``chunk`` per chunk,
    then ``complete`` or ``fail``; a failure before any chunk is HTTP 500 with the error
    body.
    """
    adapter = FixtureProviderAdapter({"schemaVersion": 1, "responses": [{"records": records}]})

    async def run() -> Served:
        stream = adapter.stream(CourseModelRequest(id="request-1"))
        parts: list[str] = []
        try:
            async for chunk in stream:
                if not parts:
                    assert stream.response_id is not None
                    parts.append(renderer.open(stream.response_id))
                parts.append(renderer.chunk(chunk))
            response = await stream.result()
        except FixtureProviderError as error:
            if not parts:
                return _error_500(renderer, error)
            parts.append(renderer.fail(error))
        else:
            if not parts:
                parts.append(renderer.open(response.response_id))
            parts.append(renderer.complete(response))
        return Served(200, "".join(parts).encode(), SSE)

    return asyncio.run(run())


def render_whole(renderer: StreamRenderer, records: Sequence[object]) -> Served:
    """The non-streaming answer for one fixture response; a failure is HTTP 500."""
    adapter = FixtureProviderAdapter({"schemaVersion": 1, "responses": [{"records": records}]})

    async def run() -> Served:
        try:
            response = await adapter.stream(CourseModelRequest(id="request-1")).result()
        except FixtureProviderError as error:
            return _error_500(renderer, error)
        return Served(200, json.dumps(renderer.whole(response)).encode(), JSON)

    return asyncio.run(run())


def _error_500(renderer: StreamRenderer, error: FixtureProviderError) -> Served:
    return Served(500, json.dumps(renderer.error_body(error)).encode(), JSON)
