"""The same fixture served over HTTP to the real OpenAI client (needs ``course[serve]``)."""

from __future__ import annotations

import json

import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from course.vendors import FixtureServer

ADD: ChatCompletionToolParam = {
    "type": "function",
    "function": {
        "name": "add",
        "parameters": {
            "type": "object",
            "properties": {"left": {"type": "integer"}, "right": {"type": "integer"}},
        },
    },
}


@pytest.mark.course("fixtures/add.json")
def test_the_openai_client_gets_the_tool_call_then_the_answer(
    course_server: FixtureServer,
) -> None:
    with OpenAI(base_url=course_server.url + "/v1", api_key="test") as client:
        ask = client.chat.completions
        messages: list[ChatCompletionMessageParam] = [
            {"role": "user", "content": "What is 20 + 22?"}
        ]
        first = ask.create(model="any", messages=messages, tools=[ADD])
        [call] = first.choices[0].message.tool_calls or []
        assert call.type == "function"
        assert call.id == "call-add-001"
        assert call.function.name == "add"
        assert json.loads(call.function.arguments) == {"left": 20, "right": 22}

        arguments = call.function.arguments
        messages += [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": "add", "arguments": arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call.id, "content": "42"},
        ]
        # The second answer streams: the SDK's own stream helper accumulates it.
        with ask.stream(model="any", messages=messages, tools=[ADD]) as stream:
            final = stream.get_final_completion()
        assert final.choices[0].message.content == "The sum is 42."
    assert len(course_server.requests) == 2
