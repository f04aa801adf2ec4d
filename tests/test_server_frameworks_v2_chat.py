"""Version-2 Chat Completions answers, served to agent frameworks as a user's tests would.

Each test marks a ``course.script`` fixture (schema version 2) and points the framework's
own OpenAI Chat model at the plugin's ``course_server``: a ``length`` end that cut a tool
call (pydantic-ai raises ``IncompleteToolCall`` and never runs the tool), a ``length`` end
after text, and cached and reasoning tokens as each framework reports them. Frameworks
are imported inside their tests and skipped, with the reason, when missing (the ``dev``
extra pins them). No network: every request goes to the loopback server.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import openai
import pytest

from course import script, thaw
from course.vendors import FixtureServer

from .helpers import child_env

ROOT = Path(__file__).resolve().parent.parent
QUESTION: Final = "Book me a flight from Paris to New York."
CUT: Final = script.response(
    script.incomplete_call("book_flight", '{"origin": "CDG", ', '"destination": "JF'),
    usage=(42, 16),
    model="gpt-4o-2024-08-06",
)
"""An answer the token limit cut inside its one tool call."""
CUT_TWICE: Final = script.fixture(CUT, CUT)
"""pydantic-ai asks again once (its default retry): the same limit cuts that answer too."""
TEXT_CUT: Final = script.fixture(
    script.response(
        "Once upon a time",
        stop="length",
        usage=script.usage(100, 40, cache_read=64, reasoning=8),
        model="o4-mini-2025-04-16",
    )
)


def importorskip(module: str, package: str) -> Any:
    return pytest.importorskip(module, reason=f"needs {package} (the dev extra installs it)")


def book_flight(origin: str, destination: str) -> str:
    """Book a flight."""
    raise AssertionError("a call the token limit cut must never run")


def pydantic_ai_chat_model(server: FixtureServer) -> tuple[openai.AsyncOpenAI, Any]:
    importorskip("pydantic_ai", "pydantic-ai-slim[openai]")
    from pydantic_ai.models.openai import OpenAIChatModel  # noqa: PLC0415
    from pydantic_ai.providers.openai import OpenAIProvider  # noqa: PLC0415

    client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)
    return client, OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))


# -- pydantic-ai ----------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
@pytest.mark.course(CUT_TWICE)
async def test_pydantic_ai_raises_incomplete_tool_call_at_a_length_end(
    course_server: FixtureServer, streamed: bool
) -> None:
    pydantic_ai = importorskip("pydantic_ai", "pydantic-ai-slim[openai]")
    client, model = pydantic_ai_chat_model(course_server)
    agent = pydantic_ai.Agent(model, tools=[book_flight])
    async with client:
        with pytest.raises(pydantic_ai.IncompleteToolCall, match="token limit"):
            if streamed:
                async with agent.run_stream(QUESTION) as run:
                    await run.get_output()
            else:
                await agent.run(QUESTION)
    assert [request.get("stream") is True for request in course_server.requests] == [streamed] * 2
    # The retry told the model its arguments were cut: not JSON.
    retry: Any = thaw(course_server.requests[1])["messages"][-1]  # type: ignore[index]
    assert retry["role"] == "tool"
    assert "json_invalid" in retry["content"]


@pytest.mark.asyncio
@pytest.mark.course(TEXT_CUT)
async def test_pydantic_ai_keeps_cut_text_as_the_output_with_its_usage(
    course_server: FixtureServer,
) -> None:
    pydantic_ai = importorskip("pydantic_ai", "pydantic-ai-slim[openai]")
    client, model = pydantic_ai_chat_model(course_server)
    async with client:
        result = await pydantic_ai.Agent(model).run("Tell me a story.")
    assert result.output == "Once upon a time"  # plain text cut off is the run's output
    response = result.all_messages()[-1]
    assert (response.finish_reason, response.model_name) == ("length", "o4-mini-2025-04-16")
    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (100, 40, 64)
    assert usage.details["reasoning_tokens"] == 8


def test_the_length_example_raises_incomplete_tool_call() -> None:
    importorskip("pydantic_ai", "pydantic-ai-slim[openai]")
    completed = subprocess.run(
        [sys.executable, "-W", "error", str(ROOT / "examples" / "serve_length_pydantic_ai.py")],
        cwd=ROOT,
        env=child_env(PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (completed.returncode, completed.stderr) == (0, "")
    first, second = completed.stdout.splitlines()
    assert first == f"user: {QUESTION}"
    assert second.startswith("IncompleteToolCall: Model token limit")


# -- LangChain ------------------------------------------------------------------------------


@pytest.mark.course(TEXT_CUT)
def test_langchain_reports_the_length_end_and_the_token_details(
    course_server: FixtureServer,
) -> None:
    langchain_openai = importorskip("langchain_openai", "langchain-openai")
    model = langchain_openai.ChatOpenAI(
        model="gpt-4o",
        base_url=course_server.url + "/v1",
        api_key="test",
        max_retries=0,
        stream_usage=True,
    )
    chunks = list(model.stream("Tell me a story."))
    answer = sum(chunks[1:], chunks[0])
    assert answer.text == "Once upon a time"
    assert answer.response_metadata["finish_reason"] == "length"
    assert answer.response_metadata["model_name"] == "o4-mini-2025-04-16"
    usage = answer.usage_metadata
    assert usage is not None
    assert (usage["input_tokens"], usage["output_tokens"]) == (100, 40)
    assert usage["input_token_details"] == {"cache_read": 64}
    assert usage["output_token_details"] == {"reasoning": 8}
