"""The OpenAI Agents SDK on the Responses API against version-2 fixtures, run for real.

What a user of the Agents SDK writes against ``course_server``: an answer the token limit
or the content filter cut short arrives as a Responses ``incomplete`` status, and the
Agents SDK raises it (run and streamed alike) instead of taking the cut text, or a cut
tool call, as an answer; and a reasoning item's ``encrypted_content`` goes back to the
API on the next turn, as a reasoning model needs it. Skipped, with the reason, when
``openai-agents`` is missing (the ``dev`` extra pins it). No network.
"""

from __future__ import annotations

import json
from typing import Any, Final

import openai
import pytest

from course import script, thaw
from course.vendors import FixtureServer

QUESTION: Final = "What is 20 + 22?"
SECRET: Final = "gAAAAABo-the-encrypted-reasoning=="


def add(left: int, right: int) -> int:
    """Add two integers."""
    return left + right


def agents_module() -> Any:
    agents = pytest.importorskip("agents", reason="needs openai-agents (the dev extra installs it)")
    agents.set_tracing_disabled(True)  # else it exports traces to the network
    return agents


async def run_agent(server: FixtureServer, *, streamed: bool) -> Any:
    """Run the adder agent once against ``server``: its result, or what it raises."""
    agents = agents_module()
    async with openai.AsyncOpenAI(
        base_url=server.url + "/v1", api_key="test", max_retries=0
    ) as client:
        agent = agents.Agent(
            name="adder",
            instructions="Add the numbers with the tool.",
            tools=[agents.function_tool(add)],
            model=agents.OpenAIResponsesModel(model="o4-mini", openai_client=client),
        )
        if not streamed:
            return await agents.Runner.run(agent, QUESTION)
        result = agents.Runner.run_streamed(agent, QUESTION)
        async for _ in result.stream_events():
            pass
        return result


CUT_TEXT: Final = script.fixture(
    script.response("The sum is", stop="length", usage=(40, 16), model="o4-mini-2025-04-16")
)
CUT_CALL: Final = script.fixture(
    script.response(
        script.thinking("I add them.", signature=SECRET),
        script.incomplete_call("add", '{"left": 20, "ri'),
        usage=(40, 16),
    )
)
FILTERED: Final = script.fixture(
    script.response("Here is how", stop="content_filter", usage=(40, 3))
)


@pytest.mark.asyncio
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
@pytest.mark.parametrize(
    ("fixture", "reason"),
    [
        pytest.param(CUT_TEXT, "max_output_tokens", marks=pytest.mark.course(CUT_TEXT), id="text"),
        pytest.param(CUT_CALL, "max_output_tokens", marks=pytest.mark.course(CUT_CALL), id="call"),
        pytest.param(FILTERED, "content_filter", marks=pytest.mark.course(FILTERED), id="filter"),
    ],
)
async def test_an_incomplete_answer_is_raised_not_taken(
    course_server: FixtureServer, streamed: bool, fixture: object, reason: str
) -> None:
    agents = agents_module()
    with pytest.raises(agents.exceptions.ModelBehaviorError) as caught:
        await run_agent(course_server, streamed=streamed)
    message = str(caught.value)
    assert "response.incomplete" in message
    assert f"reason='{reason}'" in message
    assert len(course_server.requests) == 1  # no retry, no tool run, no second turn


REASONED: Final = script.fixture(
    script.response(
        script.thinking(["Both are ", "integers."], signature=SECRET),
        script.call("add", {"left": 20, "right": 22}, id="call-add-001"),
        usage=script.usage(40, 30, cache_read=32, reasoning=24),
        model="o4-mini-2025-04-16",
    ),
    script.response("The sum is 42.", usage=(60, 6), model="o4-mini-2025-04-16"),
)


@pytest.mark.asyncio
@pytest.mark.course(REASONED)
async def test_the_encrypted_reasoning_goes_back_with_the_tool_result(
    course_server: FixtureServer,
) -> None:
    result = await run_agent(course_server, streamed=True)
    assert result.final_output == "The sum is 42."
    second: Any = thaw(course_server.requests[1])  # what the Agents SDK sent next
    items: list[dict[str, Any]] = second["input"]
    reasoning = [item for item in items if item.get("type") == "reasoning"]
    assert [item.get("encrypted_content") for item in reasoning] == [SECRET]
    assert [part["text"] for part in reasoning[0]["summary"]] == ["Both are integers."]
    outputs = [item for item in items if item.get("type") == "function_call_output"]
    assert [(item["call_id"], json.loads(item["output"])) for item in outputs] == [
        ("call-add-001", 42)
    ]
    usage = result.context_wrapper.usage
    assert (usage.input_tokens, usage.output_tokens) == (40 + 60, 30 + 6)
    assert usage.input_tokens_details.cached_tokens == 32
    assert usage.output_tokens_details.reasoning_tokens == 24
