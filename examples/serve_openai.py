"""A tool-using agent loop with the plain ``openai`` SDK, answered by ``course`` over HTTP.

``serve`` plays the bundled round-trip fixture in the OpenAI Chat Completions wire
format: the first response calls the ``add`` tool, the second answers. The loop is
ordinary OpenAI code; only the client's ``base_url`` points at the fixture server. No
network, no credentials (needs the extra ``course[serve]``).

Run it from the repository root:  python examples/serve_openai.py
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from importlib.resources import as_file, files
from typing import Any, cast

from openai import OpenAI
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from course import load_fixture, thaw
from course.vendors import serve


def add(left: int, right: int) -> int:
    return left + right


TOOLS: Mapping[str, Callable[..., int]] = {"add": add}
TOOL_SPECS: list[ChatCompletionToolParam] = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {"left": {"type": "integer"}, "right": {"type": "integer"}},
                "required": ["left", "right"],
            },
        },
    }
]


def agent_loop(client: OpenAI, question: str) -> None:
    """Ask, run the tools the model calls, send each result back by its call id, repeat."""
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": question}]
    print(f"user: {question}")
    while True:
        with client.chat.completions.stream(
            model="gpt-4.1-mini", messages=messages, tools=TOOL_SPECS
        ) as stream:
            for event in stream:
                if event.type == "content.delta":
                    print(event.delta, end="", flush=True)  # text as it arrives
            completion = stream.get_final_completion()
        choice = completion.choices[0]
        calls = [call for call in choice.message.tool_calls or [] if call.type == "function"]
        if choice.finish_reason != "tool_calls":
            print()
            return
        messages.append(
            {
                "role": "assistant",
                "content": choice.message.content,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.function.name,
                            "arguments": call.function.arguments,
                        },
                    }
                    for call in calls
                ],
            }
        )
        for call in calls:
            arguments = json.loads(call.function.arguments)
            result = TOOLS[call.function.name](**arguments)
            print(f"tool {call.function.name}({call.function.arguments}) = {result}, for {call.id}")
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})


def main() -> None:
    with as_file(files("course") / "fixtures" / "provider-tool-roundtrip.json") as path:
        fixture = load_fixture(path)
    with serve(fixture) as server, OpenAI(base_url=server.url + "/v1", api_key="test") as client:
        agent_loop(client, "What is 20 + 22?")
        # What the loop sent is in server.requests: the second request carries the
        # tool's result, linked to the provider's own call id.
        sent = cast("dict[str, Any]", thaw(server.requests[1]))["messages"][-1]
        assert (sent["role"], sent["tool_call_id"]) == ("tool", "call-add-001")


if __name__ == "__main__":
    main()
