"""A pydantic-ai agent with a tool, answered by ``course`` over HTTP.

``serve`` plays the bundled round-trip fixture in the OpenAI Chat Completions wire
format. The agent is ordinary pydantic-ai code: its model is ``OpenAIChatModel`` over an
``AsyncOpenAI`` client whose ``base_url`` points at the fixture server. The first response calls
the ``add`` tool, pydantic-ai runs it and asks again, the second response answers.
No network, no credentials (needs the extra ``course[serve]`` and ``pydantic-ai-slim[openai]``).

Run it from the repository root:  python examples/serve_pydantic_ai.py
"""

from __future__ import annotations

import asyncio
from importlib.resources import as_file, files

from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from course import load_fixture
from course.vendors import serve


def add(left: int, right: int) -> int:
    """Add two integers."""
    print(f"tool add(left={left}, right={right}) = {left + right}")
    return left + right


async def main() -> None:
    with as_file(files("course") / "fixtures" / "provider-tool-roundtrip.json") as path:
        fixture = load_fixture(path)
    async with (
        serve(fixture) as server,
        AsyncOpenAI(base_url=server.url + "/v1", api_key="test") as client,
    ):
        model = OpenAIChatModel("gpt-4.1-mini", provider=OpenAIProvider(openai_client=client))
        agent = Agent(model, tools=[add])
        question = "What is 20 + 22?"
        print(f"user: {question}")
        result = await agent.run(question)
        print(result.output)
        assert server.adapter.pending == 0  # both responses were used


if __name__ == "__main__":
    asyncio.run(main())
