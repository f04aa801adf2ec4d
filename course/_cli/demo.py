"""``course-fixture demo``: a small agent loop, offline, against the bundled round trip.

The loop lives here, in the package, so that the command works from any installation;
``examples/agent_loop.py`` imports it to run it as a program of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Final

from .._adapter import FixtureProviderAdapter
from .._json import thaw
from .._loading import load_fixture
from .._model import CourseModelRequest
from ._fixtures import bundled_fixture
from ._output import EXIT_OK

__all__ = ["HELP", "TOOLS", "add", "add_arguments", "agent_loop", "run"]

HELP = "run a small agent loop offline against the bundled round trip"


def add(left: int, right: int) -> int:
    """The demo's one tool."""
    return left + right


TOOLS: Final[Mapping[str, Callable[..., int]]] = {"add": add}


async def agent_loop(adapter: FixtureProviderAdapter, question: str) -> None:
    """Ask, run the tools the provider calls, link each result to its call id, repeat."""
    messages: list[object] = [{"role": "user", "content": question}]
    print(f"user: {question}")
    while True:
        request = CourseModelRequest(f"request-{adapter.call_count + 1}", tuple(messages))
        async with adapter.stream(request) as stream:
            async for chunk in stream:
                if chunk.type == "textDelta":
                    print(chunk.text, end="", flush=True)  # text as it arrives
            response = await stream.result()
        messages.append(response.message)
        if response.stop_reason == "stop":
            print()
            return
        for block in response.message.content:
            if block.type == "toolCall":
                result = TOOLS[block.name](**block.arguments)
                call = f"{block.name}({json.dumps(thaw(block.arguments))})"
                print(f"tool {call} = {result}, result for {block.id}")
                messages.append({"role": "tool", "toolCallId": block.id, "content": result})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No arguments."""
    parser.description = "Stream a tool call, run the tool, link its result, stream the answer."


def run(args: argparse.Namespace) -> int:
    """Run the loop on the bundled fixture."""
    with bundled_fixture() as path:
        adapter = FixtureProviderAdapter(load_fixture(path))
    asyncio.run(agent_loop(adapter, "What is 20 + 22?"))
    return EXIT_OK
