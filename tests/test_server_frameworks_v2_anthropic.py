"""pydantic-ai on Anthropic against version-2 fixtures, served for real.

A thinking model answers a tool call with signed thinking and redacted thinking before
it. The agent must send both back with the tool's result on its next request, exactly
as received (the API rejects a thinking block whose signature changed), streaming or
not. No network: every request goes to the loopback server.
"""

from __future__ import annotations

from typing import Any, Final

import anthropic
import pytest

from course import thaw
from course.vendors import serve

THINKING: Final = "The user wants 20 + 22; the add tool does that."
SIGNATURE: Final = "EqQBCkYIBxgCKkBzZ2lnbmF0dXJlLW9mLXRoZS10aGlua2luZy1ibG9jaw=="
REDACTED: Final = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"
CALL_ID: Final = "toolu_01ThinkingAdd"
ANSWER: Final = "The sum is 42."


def add(left: int, right: int) -> int:
    """Add two integers."""
    return left + right


def fixture() -> dict[str, object]:
    usage = {"inputTokens": 1311, "outputTokens": 194, "cacheReadTokens": 1024}
    return {
        "schemaVersion": 2,
        "responses": [
            {
                "records": [
                    {
                        "type": "response_start",
                        "responseId": "msg_think_1",
                        "role": "assistant",
                        "model": "claude-sonnet-4-5-20250929",
                        "usage": {"inputTokens": 1311, "outputTokens": 8},
                    },
                    {"type": "thinking_delta", "text": THINKING[:20]},
                    {"type": "thinking_delta", "text": THINKING[20:]},
                    {"type": "thinking_signature", "signature": SIGNATURE},
                    {"type": "redacted_thinking", "data": REDACTED},
                    {
                        "type": "tool_call",
                        "id": CALL_ID,
                        "name": "add",
                        "arguments": {"left": 20, "right": 22},
                        "argumentFragments": ["", '{"left": 20', ', "right": 22}'],
                    },
                    {
                        "type": "response_end",
                        "responseId": "msg_think_1",
                        "stopReason": "tool_call",
                        "usage": usage,
                    },
                ]
            },
            {
                "records": [
                    {"type": "response_start", "responseId": "msg_think_2", "role": "assistant"},
                    {"type": "text_delta", "text": ANSWER},
                    {
                        "type": "response_end",
                        "responseId": "msg_think_2",
                        "stopReason": "stop",
                        "usage": {"inputTokens": 1400, "outputTokens": 6},
                    },
                ]
            },
        ],
    }


@pytest.mark.asyncio
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
async def test_pydantic_ai_sends_thinking_back_with_its_signature(streamed: bool) -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai", reason="needs pydantic-ai (the dev extra)")
    from pydantic_ai.messages import ModelResponse, ThinkingPart  # noqa: PLC0415
    from pydantic_ai.models.anthropic import AnthropicModel  # noqa: PLC0415
    from pydantic_ai.providers.anthropic import AnthropicProvider  # noqa: PLC0415

    async with serve(fixture()) as server:
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)
        async with client:
            model = AnthropicModel(
                "claude-opus-4-7", provider=AnthropicProvider(anthropic_client=client)
            )
            agent: Any = pydantic_ai.Agent(model, tools=[add])
            if streamed:
                async with agent.run_stream("What is 20 + 22?") as run:
                    assert await run.get_output() == ANSWER
                messages = run.all_messages()
            else:
                result = await agent.run("What is 20 + 22?")
                assert result.output == ANSWER
                messages = result.all_messages()
        requests = [thaw(request) for request in server.requests]

    # The agent read the thinking and its signature, and the redacted block's data.
    first = next(message for message in messages if isinstance(message, ModelResponse))
    thinking = [part for part in first.parts if isinstance(part, ThinkingPart)]
    assert [(part.content, part.signature) for part in thinking] == [
        (THINKING, SIGNATURE),
        ("", REDACTED),
    ]
    assert first.model_name == "claude-sonnet-4-5-20250929"  # the fixture's
    assert first.usage.cache_read_tokens == 1024
    # ... and sent them back, unchanged, before its call, in the next request.
    assert len(requests) == 2
    sent: Any = requests[1]
    [assistant] = [message for message in sent["messages"] if message["role"] == "assistant"]
    blocks = assistant["content"]
    assert blocks[:2] == [
        {"type": "thinking", "thinking": THINKING, "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED},
    ]
    assert blocks[2]["type"] == "tool_use"
    assert (blocks[2]["id"], blocks[2]["input"]) == (CALL_ID, {"left": 20, "right": 22})
