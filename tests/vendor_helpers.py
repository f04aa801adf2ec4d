"""Shared helpers for the vendor tests: real SDK clients over an in-memory transport.

``openai_client(body)`` and ``anthropic_client(body)`` return the official clients whose
every request is answered with ``body`` (an SSE stream, or a JSON object when
``content_type`` says so) through ``httpx2.MockTransport``, so the SDKs' own stream
helpers parse exactly the bytes under test. No network.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import anthropic
import httpx2
import openai

from course import CourseModelRequest, CourseModelResponse, FixtureProviderAdapter, thaw
from course.vendors import Recording

__all__ = [
    "RECORDINGS",
    "anthropic_client",
    "openai_client",
    "replay",
]

RECORDINGS = Path(__file__).parent / "recordings"
"""Hand-written recordings, one folder per format: tests/recordings/<format>/*.sse."""

SSE = "text/event-stream"


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
    adapter = FixtureProviderAdapter({"schemaVersion": 1, "responses": [thaw(recording.response)]})

    async def run() -> CourseModelResponse:
        return await adapter.stream(CourseModelRequest(id="request-1")).result()

    return asyncio.run(run())
