"""The agent loop under test: ask, run the tools the model calls, ask again, until it stops.

It takes any ``FixtureProviderAdapter``-shaped provider, so a test hands it
``course_adapter``; a provider failure propagates as ``FixtureProviderError``.
"""

from __future__ import annotations

from collections.abc import Callable

from course import CourseModelRequest, FixtureProviderAdapter

TOOLS: dict[str, Callable[..., object]] = {"add": lambda left, right: left + right}


async def answer(provider: FixtureProviderAdapter, question: str) -> str:
    """Run the loop on ``question`` and return the model's final text."""
    messages: list[object] = [{"role": "user", "content": question}]
    while True:
        request = CourseModelRequest(f"request-{provider.call_count + 1}", tuple(messages))
        async with provider.stream(request) as stream:  # closed even if the loop fails
            response = await stream.result()
        messages.append(response.message)
        if response.stop_reason == "stop":
            return "".join(b.text for b in response.message.content if b.type == "text")
        for block in response.message.content:
            if block.type == "toolCall":
                result = TOOLS[block.name](**block.arguments)
                messages.append({"role": "tool", "toolCallId": block.id, "content": result})
