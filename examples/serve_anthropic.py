"""A tool-using agent loop with the plain ``anthropic`` SDK, answered by ``course`` over HTTP.

``serve`` plays the bundled round-trip fixture in the Anthropic Messages wire format:
the first response calls the ``add`` tool, the second answers. The loop is ordinary
Anthropic code; only the client's ``base_url`` points at the fixture server. No
network, no credentials (needs the extra ``course[serve]``).

Run it from the repository root:  python examples/serve_anthropic.py
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.resources import as_file, files
from typing import Any, cast

from anthropic import Anthropic
from anthropic.types import MessageParam, ToolParam, ToolResultBlockParam

from course import load_fixture, thaw
from course.vendors import serve


def add(left: int, right: int) -> int:
    return left + right


TOOLS: Mapping[str, Callable[..., int]] = {"add": add}
TOOL_SPECS: list[ToolParam] = [
    {
        "name": "add",
        "description": "Add two integers.",
        "input_schema": {
            "type": "object",
            "properties": {"left": {"type": "integer"}, "right": {"type": "integer"}},
            "required": ["left", "right"],
        },
    }
]


def agent_loop(client: Anthropic, question: str) -> None:
    """Ask, run the tools the model uses, send each result back by its id, repeat."""
    messages: list[MessageParam] = [{"role": "user", "content": question}]
    print(f"user: {question}")
    while True:
        with client.messages.stream(
            model="claude-sonnet-4-6", max_tokens=1024, messages=messages, tools=TOOL_SPECS
        ) as stream:
            for text in stream.text_stream:
                print(text, end="", flush=True)  # text as it arrives
            message = stream.get_final_message()
        messages.append({"role": "assistant", "content": message.content})
        if message.stop_reason != "tool_use":
            print()
            return
        results: list[ToolResultBlockParam] = []
        for block in message.content:
            if block.type == "tool_use":
                result = TOOLS[block.name](**block.input)
                print(f"tool {block.name}({block.input}) = {result}, for {block.id}")
                results.append(
                    {"type": "tool_result", "tool_use_id": block.id, "content": str(result)}
                )
        messages.append({"role": "user", "content": results})


def main() -> None:
    with as_file(files("course") / "fixtures" / "provider-tool-roundtrip.json") as path:
        fixture = load_fixture(path)
    with serve(fixture) as server, Anthropic(base_url=server.url, api_key="test") as client:
        agent_loop(client, "What is 20 + 22?")
        # What the loop sent is in server.requests: the second request carries the
        # tool's result, linked to the provider's own tool-use id.
        sent = cast("dict[str, Any]", thaw(server.requests[1]))["messages"][-1]["content"][0]
        assert (sent["type"], sent["tool_use_id"]) == ("tool_result", "call-add-001")


if __name__ == "__main__":
    main()
