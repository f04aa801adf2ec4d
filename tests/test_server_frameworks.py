"""What a user of each agent framework writes against ``course_server``, run for real.

Every test here is a test a user would write: the pytest plugin's ``course_server``
serves the bundled round trip (a call to ``add``, then "The sum is 42."), and the
framework's own agent loop or chat model, pointed at the server, calls the tool and
gets the answer. The families: the two SDKs, pydantic-ai, LangChain (``ChatOpenAI`` with
and without the Responses API, ``ChatAnthropic``), the OpenAI Agents SDK and LiteLLM.
Each is skipped, with the reason, when its package is missing; the ``dev`` extra pins
them all. Frameworks are imported inside their tests, so a run that selects none pays
none of their import time. No network: every request goes to the loopback server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import anthropic
import httpx2
import openai
import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from course import thaw
from course.vendors import FixtureServer

from .helpers import ROUNDTRIP_PATH

pytestmark = pytest.mark.course(ROUNDTRIP_PATH)

QUESTION: Final = "What is 20 + 22?"
ANSWER: Final = "The sum is 42."
CALL_ID: Final = "call-add-001"


def add(left: int, right: int) -> int:
    """Add two integers."""
    return left + right


def importorskip(module: str, package: str) -> Any:
    return pytest.importorskip(module, reason=f"needs {package} (the dev extra installs it)")


def sent_tool_result(server: FixtureServer) -> str:
    """The second request's body as text: it carries the tool's result for the call id."""
    return json.dumps(thaw(server.requests[1]))


@pytest.fixture(scope="module")
def http() -> Iterator[httpx2.Client]:
    """One HTTP client for every SDK client of the module: building one is ~30 ms (its
    SSL context), which ``OpenAI()`` without ``http_client`` pays per client."""
    with httpx2.Client() as client:
        yield client


# -- the two SDKs ---------------------------------------------------------------------------

ADD: Final[ChatCompletionToolParam] = {
    "type": "function",
    "function": {
        "name": "add",
        "parameters": {
            "type": "object",
            "properties": {"left": {"type": "integer"}, "right": {"type": "integer"}},
        },
    },
}


def test_openai_sdk(course_server: FixtureServer, http: httpx2.Client) -> None:
    client = openai.OpenAI(
        base_url=course_server.url + "/v1", api_key="test", http_client=http, max_retries=0
    )
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": QUESTION}]
    first = client.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=[ADD])
    [call] = first.choices[0].message.tool_calls or []
    assert call.type == "function"
    assert (call.id, json.loads(call.function.arguments)) == (CALL_ID, {"left": 20, "right": 22})
    messages += [
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": "add", "arguments": call.function.arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call.id, "content": "42"},
    ]
    with client.chat.completions.stream(
        model="gpt-4.1-mini",
        messages=messages,
        tools=[ADD],
        stream_options={"include_usage": True},
    ) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.content == ANSWER
    assert final.usage is not None and final.usage.completion_tokens == 6
    assert first._request_id is not None


def test_anthropic_sdk(course_server: FixtureServer, http: httpx2.Client) -> None:
    client = anthropic.Anthropic(
        base_url=course_server.url, api_key="test", http_client=http, max_retries=0
    )
    tool: anthropic.types.ToolParam = {
        "name": "add",
        "input_schema": {"type": "object", "properties": {"left": {}, "right": {}}},
    }
    messages: list[MessageParam] = [{"role": "user", "content": QUESTION}]
    first = client.messages.create(
        model="claude-fixture", max_tokens=256, messages=messages, tools=[tool]
    )
    [use] = [block for block in first.content if block.type == "tool_use"]
    assert (use.id, use.input) == (CALL_ID, {"left": 20, "right": 22})
    assert first.stop_reason == "tool_use"
    result: anthropic.types.ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": use.id,
        "content": "42",
    }
    messages += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [result]},
    ]
    with client.messages.stream(
        model="claude-fixture", max_tokens=256, messages=messages, tools=[tool]
    ) as stream:
        final = stream.get_final_message()
    assert [block.text for block in final.content if block.type == "text"] == [ANSWER]
    assert final.stop_reason == "end_turn"


# -- pydantic-ai ----------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
async def test_pydantic_ai(course_server: FixtureServer, api: str) -> None:
    pydantic_ai = importorskip("pydantic_ai", "pydantic-ai-slim[openai,anthropic]")
    if api == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel  # noqa: PLC0415
        from pydantic_ai.providers.anthropic import AnthropicProvider  # noqa: PLC0415

        client: Any = anthropic.AsyncAnthropic(base_url=course_server.url, api_key="test")
        model: Any = AnthropicModel(
            "claude-fixture", provider=AnthropicProvider(anthropic_client=client)
        )
    else:
        from pydantic_ai.models.openai import (  # noqa: PLC0415
            OpenAIChatModel,
            OpenAIResponsesModel,
        )
        from pydantic_ai.providers.openai import OpenAIProvider  # noqa: PLC0415

        client = openai.AsyncOpenAI(base_url=course_server.url + "/v1", api_key="test")
        kind = OpenAIChatModel if api == "chat" else OpenAIResponsesModel
        model = kind("gpt-4.1-mini", provider=OpenAIProvider(openai_client=client))
    async with client:
        agent = pydantic_ai.Agent(model, tools=[add])
        async with agent.run_stream(QUESTION) as run:
            assert await run.get_output() == ANSWER
        usage = run.usage
    assert (usage.requests, usage.tool_calls) == (2, 1)
    assert (usage.input_tokens, usage.output_tokens) == (12 + 30, 8 + 6)
    assert CALL_ID in sent_tool_result(course_server)


# -- LangChain ------------------------------------------------------------------------------


@pytest.mark.parametrize("chat_model", ["ChatOpenAI", "ChatOpenAI-responses", "ChatAnthropic"])
def test_langchain(course_server: FixtureServer, chat_model: str) -> None:
    messages_module = importorskip("langchain_core.messages", "langchain-core")
    tools = importorskip("langchain_core.tools", "langchain-core")
    if chat_model == "ChatAnthropic":
        langchain_anthropic = importorskip("langchain_anthropic", "langchain-anthropic")
        model: Any = langchain_anthropic.ChatAnthropic(
            model="claude-fixture", base_url=course_server.url, api_key="test", max_retries=0
        )
    else:
        langchain_openai = importorskip("langchain_openai", "langchain-openai")
        model = langchain_openai.ChatOpenAI(
            model="gpt-4.1-mini",
            base_url=course_server.url + "/v1",
            api_key="test",
            max_retries=0,
            use_responses_api=chat_model.endswith("responses"),
            stream_usage=True,  # as against the real API: Chat streams usage only when asked
        )
    bound = model.bind_tools([tools.tool(add)])
    messages: list[Any] = [messages_module.HumanMessage(QUESTION)]
    first = bound.invoke(messages)
    [call] = first.tool_calls
    assert (call["id"], call["name"], call["args"]) == (CALL_ID, "add", {"left": 20, "right": 22})
    result = messages_module.ToolMessage(str(add(**call["args"])), tool_call_id=call["id"])
    chunks = list(bound.stream([*messages, first, result]))
    answer = sum(chunks[1:], chunks[0])
    assert answer.text == ANSWER
    assert answer.usage_metadata is not None
    assert (answer.usage_metadata["input_tokens"], answer.usage_metadata["output_tokens"]) == (
        30,
        6,
    )
    assert CALL_ID in sent_tool_result(course_server)


# -- the OpenAI Agents SDK ------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_openai_agents(course_server: FixtureServer, api: str) -> None:
    agents = importorskip("agents", "openai-agents")
    agents.set_tracing_disabled(True)  # else it exports traces to the network
    async with openai.AsyncOpenAI(base_url=course_server.url + "/v1", api_key="test") as client:
        kind = agents.OpenAIChatCompletionsModel if api == "chat" else agents.OpenAIResponsesModel
        agent = agents.Agent(
            name="adder",
            instructions="Add the numbers with the tool.",
            tools=[agents.function_tool(add)],
            model=kind(model="gpt-4.1-mini", openai_client=client),
        )
        result = await agents.Runner.run(agent, QUESTION)
    assert result.final_output == ANSWER
    assert CALL_ID in sent_tool_result(course_server)


# -- LiteLLM --------------------------------------------------------------------------------


# litellm's own import: pydantic warns about a TypedDict of litellm's.
@pytest.mark.filterwarnings("ignore:Items? .* the `ReadOnly` qualifier:UserWarning")
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_litellm(
    course_server: FixtureServer, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Else importing litellm fetches a price list from the network.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm = importorskip("litellm", "litellm")
    # api_base: with /v1 for OpenAI models, without it for Anthropic's.
    if provider == "openai":
        model, base = "openai/gpt-4.1-mini", course_server.url + "/v1"
    else:
        model, base = "anthropic/claude-fixture", course_server.url
    tools = [ADD]
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    ask = {"model": model, "api_base": base, "api_key": "test", "max_tokens": 256, "tools": tools}
    first = litellm.completion(messages=messages, **ask)
    [call] = first.choices[0].message.tool_calls
    assert (call.id, call.function.name) == (CALL_ID, "add")
    assert json.loads(call.function.arguments) == {"left": 20, "right": 22}
    messages += [
        first.choices[0].message.model_dump(),
        {"role": "tool", "tool_call_id": call.id, "content": "42"},
    ]
    chunks = list(litellm.completion(messages=messages, stream=True, **ask))
    assert "".join(chunk.choices[0].delta.content or "" for chunk in chunks) == ANSWER
    assert CALL_ID in sent_tool_result(course_server)
