"""Deliberately broken agents, built on real frameworks, caught by the request checks:
an agent whose history processor drops the thinking blocks (pydantic-ai on Anthropic),
one that answers the wrong call id and one that forgets a result (LangChain on
OpenAI Chat). Each framework surfaces the provider's 400 as it would in production, and
``server.calls`` says which check failed. The same agents unbroken pass (the framework
tests of tests/test_server_frameworks*.py run with the checks on)."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from course import CourseRequestMessage, CourseToolResultBlock, script
from course.vendors import serve

from .test_server_frameworks_v2_anthropic import add
from .test_server_frameworks_v2_anthropic import fixture as thinking_fixture

pydantic_ai = pytest.importorskip("pydantic_ai", reason="needs pydantic-ai (the dev extra)")
from pydantic_ai.capabilities.process_history import ProcessHistory  # noqa: E402
from pydantic_ai.exceptions import ModelHTTPError  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelResponse,
    ThinkingPart,
)


def _drop_thinking(messages: list[ModelMessage]) -> list[ModelMessage]:
    """A history trimmer that forgets the model's thinking (a common bug)."""
    kept: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            parts = [part for part in message.parts if not isinstance(part, ThinkingPart)]
            kept.append(ModelResponse(parts=parts, model_name=message.model_name))
        else:
            kept.append(message)
    return kept


@pytest.mark.asyncio
async def test_an_anthropic_agent_that_drops_its_thinking_gets_the_400() -> None:
    from pydantic_ai.models.anthropic import AnthropicModel  # noqa: PLC0415
    from pydantic_ai.providers.anthropic import AnthropicProvider  # noqa: PLC0415

    async with serve(thinking_fixture()) as server:
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)
        async with client:
            model = AnthropicModel(
                "claude-opus-4-7", provider=AnthropicProvider(anthropic_client=client)
            )
            agent: Any = pydantic_ai.Agent(
                model, tools=[add], capabilities=[ProcessHistory(_drop_thinking)]
            )
            with pytest.raises(ModelHTTPError) as raised:
                await agent.run("What is 20 + 22?")
    assert raised.value.status_code == 400
    [refused] = [call for call in server.calls if call.response_index is None]
    assert refused.problems[0].startswith("course check 3: messages[1]: the thinking block signed")
    assert server.adapter.pending == 1  # the answer was never taken


CHAT_FIXTURE = script.fixture(
    script.response(script.call("add", {"left": 20, "right": 22}, id="call-add-001")),
    script.response("The sum is 42."),
)


@pytest.mark.parametrize(
    ("broken", "check"),
    [("wrong-id", "course check 1: messages[2]"), ("forgot-result", "course check 2: messages[1]")],
)
def test_a_langchain_loop_with_a_broken_history_gets_the_400(broken: str, check: str) -> None:
    # pydantic-ai repairs such a history itself (it answers a call left without its
    # result with "The tool call was interrupted"): LangChain sends what it is given.
    messages_module = pytest.importorskip("langchain_core.messages", reason="langchain-core")
    tools = pytest.importorskip("langchain_core.tools", reason="langchain-core")
    langchain_openai = pytest.importorskip("langchain_openai", reason="langchain-openai")
    with serve(CHAT_FIXTURE) as server:
        model: Any = langchain_openai.ChatOpenAI(
            model="gpt-4.1-mini", base_url=server.url + "/v1", api_key="test", max_retries=0
        )
        bound = model.bind_tools([tools.tool(add)])
        question = messages_module.HumanMessage("What is 20 + 22?")
        first = bound.invoke([question])
        if broken == "wrong-id":
            after = [messages_module.ToolMessage("42", tool_call_id="call-stale")]
        else:
            after = [messages_module.HumanMessage("And?")]
        with pytest.raises(openai.BadRequestError) as raised:
            bound.invoke([question, first, *after])
    assert check in raised.value.message
    assert [call.response_index for call in server.calls] == [0, None]
    assert server.calls[1].problems[0].startswith(check)
    assert server.adapter.pending == 1


@pytest.mark.asyncio
async def test_pydantic_ai_unbroken_passes_and_reads_in_one_vocabulary() -> None:
    from pydantic_ai.models.openai import OpenAIChatModel  # noqa: PLC0415
    from pydantic_ai.providers.openai import OpenAIProvider  # noqa: PLC0415

    async with serve(CHAT_FIXTURE) as server:
        client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)
        async with client:
            model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
            agent: Any = pydantic_ai.Agent(model, tools=[add])
            assert (await agent.run("What is 20 + 22?")).output == "The sum is 42."
    assert [call.problems for call in server.calls] == [(), ()]
    second = server.calls[1].request
    assert second is not None
    results = [
        block
        for message in second.messages
        if isinstance(message, CourseRequestMessage)
        for block in message.content
        if isinstance(block, CourseToolResultBlock)
    ]
    assert [(r.tool_call_id, r.content) for r in results] == [("call-add-001", "42")]
