"""A small agent loop against the offline fixture provider: a tool call, then the answer.

The provider is the bundled round-trip fixture: its first response calls the ``add``
tool, its second answers. The loop streams each response, runs the tools the provider
asked for, links each result to the provider's own tool-call id (``call-add-001``) and
asks again, until the provider stops. No network, no credentials.

Run it from the repository root:  python examples/agent_loop.py
(``course-fixture demo`` runs the same loop from an installed package.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from importlib.resources import as_file, files

from course import CourseModelRequest, FixtureProviderAdapter, load_fixture, thaw


def add(left: int, right: int) -> int:
    return left + right


TOOLS: Mapping[str, Callable[..., int]] = {"add": add}


async def agent_loop(adapter: FixtureProviderAdapter, question: str) -> None:
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


def main() -> None:
    with as_file(files("course") / "fixtures" / "provider-tool-roundtrip.json") as path:
        adapter = FixtureProviderAdapter(load_fixture(path))
    asyncio.run(agent_loop(adapter, "What is 20 + 22?"))


if __name__ == "__main__":
    main()
