"""A pydantic-ai agent meets an answer the token limit cut inside a tool call.

The fixture (schema version 2, written with ``course.script``) holds a Chat Completions
answer twice: some text, then a call to ``book_flight`` whose arguments stop half-way,
and the end ``length``. ``serve`` answers as OpenAI does: ``finish_reason: "length"``
and the call's arguments as far as they came. pydantic-ai never runs a tool with half
its arguments: it asks the model again, and when that answer is cut too it raises
``IncompleteToolCall``. The behaviour an agent loop must have, tested without a real
provider or a real token limit. No network, no credentials (needs the
extra ``course[serve]`` and ``pydantic-ai-slim[openai]``).

Run it from the repository root:  python examples/serve_length_pydantic_ai.py
"""

from __future__ import annotations

import asyncio

from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.exceptions import IncompleteToolCall
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from course import script
from course.vendors import serve

CUT = script.response(
    "Let me book that.",
    script.incomplete_call("book_flight", '{"origin": "CDG", ', '"destination": "JF'),
    usage=(42, 16),
    model="gpt-4o-2024-08-06",
)
FIXTURE = script.fixture(CUT, CUT)
"""pydantic-ai asks again once (its default retry) and, with the same token limit, the
second answer is cut too."""


def book_flight(origin: str, destination: str) -> str:
    """Book a flight."""
    raise AssertionError("a call the token limit cut must never run")


async def main() -> None:
    async with (
        serve(FIXTURE) as server,
        AsyncOpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0) as client,
    ):
        model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
        agent = Agent(model, tools=[book_flight])
        question = "Book me a flight from Paris to New York."
        print(f"user: {question}")
        try:
            await agent.run(question)
        except IncompleteToolCall as error:
            print(f"IncompleteToolCall: {error}")
        assert server.adapter.pending == 0  # both answers were used


if __name__ == "__main__":
    asyncio.run(main())
