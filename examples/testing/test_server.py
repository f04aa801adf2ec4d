"""The same fixture served over HTTP to the real OpenAI client (needs ``course[serve]``)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from openai import DefaultHttpxClient, OpenAI
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from openai.types.chat.chat_completion_message_function_tool_call_param import Function

from course import thaw
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


@pytest.fixture(scope="session")
def http_client() -> Iterator[DefaultHttpxClient]:
    # One HTTP client for the session: OpenAI() without one builds its own, whose SSL
    # context costs about 30 ms per client, several times what a served test costs.
    with DefaultHttpxClient() as client:
        yield client


@pytest.fixture
def client(course_server: FixtureServer, http_client: DefaultHttpxClient) -> OpenAI:
    # One client per server. Not closed: that would close the shared http_client.
    return OpenAI(base_url=course_server.url + "/v1", api_key="test", http_client=http_client)


@pytest.mark.course("fixtures/add.json")
def test_the_openai_client_gets_the_tool_call_then_the_answer(
    client: OpenAI, course_server: FixtureServer
) -> None:
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "What is 20 + 22?"}]
    first = client.chat.completions.create(model="any", messages=messages, tools=[ADD])
    [call] = first.choices[0].message.tool_calls or []
    assert call.type == "function"
    assert call.id == "call-add-001"
    assert call.function.name == "add"
    assert json.loads(call.function.arguments) == {"left": 20, "right": 22}

    function: Function = {"name": "add", "arguments": call.function.arguments}
    messages += [
        {
            "role": "assistant",
            "tool_calls": [{"id": call.id, "type": "function", "function": function}],
        },
        {"role": "tool", "tool_call_id": call.id, "content": "42"},
    ]
    # The second answer streams: the SDK's own stream helper accumulates it. Usage is
    # streamed only when asked for, as the real API does.
    with client.chat.completions.stream(
        model="any", messages=messages, tools=[ADD], stream_options={"include_usage": True}
    ) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.content == "The sum is 42."
    assert final.usage is not None and final.usage.completion_tokens == 6
    # What the code sent, thawed to plain data for ==: the tool's result, by its call id.
    assert thaw(course_server.requests[1])["messages"] == messages
