"""What a user of each framework on ``google-genai`` writes against ``course_server``, run for real.

As in ``test_server_frameworks.py``: the pytest plugin's ``course_server`` serves a round
trip (a call to ``add``, then "The sum is 42."), here a version-2 fixture whose call
carries the ``thoughtSignature`` Gemini attaches to it, and no id (the Gemini Developer
API gives none). The framework's own loop, pointed at the server, calls the tool, sends
the call back with its signature, and gets the answer. The families: google-genai itself,
pydantic-ai's ``GoogleModel`` and LangChain's ``ChatGoogleGenerativeAI``. Each is skipped,
with the reason, when its package is missing; the ``dev`` extra pins them all. No network.
"""

from __future__ import annotations

import base64
from typing import Any, Final, cast

import pytest

from course import thaw
from course.vendors import FixtureServer

QUESTION: Final = "What is 20 + 22?"
ANSWER: Final = "The sum is 42."
SIGNATURE: Final = base64.b64encode(b"\xfa\xfb an opaque thought signature \xff").decode()
MODEL: Final = "gemini-2.5-flash"

ROUND_TRIP: Final = {
    "schemaVersion": 2,
    "responses": [
        {
            "records": [
                {"type": "response_start", "responseId": "resp-1", "role": "assistant"},
                {
                    "type": "tool_call",
                    "id": "resp-1:call:0",  # import's name for a call Gemini gave no id
                    "name": "add",
                    "arguments": {"left": 20, "right": 22},
                    "signature": SIGNATURE,
                },
                {
                    "type": "response_end",
                    "responseId": "resp-1",
                    "stopReason": "tool_call",
                    "usage": {"inputTokens": 12, "outputTokens": 8},
                },
            ]
        },
        {
            "records": [
                {"type": "response_start", "responseId": "resp-2", "role": "assistant"},
                {"type": "text_delta", "text": ANSWER},
                {
                    "type": "response_end",
                    "responseId": "resp-2",
                    "stopReason": "stop",
                    "usage": {"inputTokens": 30, "outputTokens": 6},
                },
            ]
        },
    ],
}

pytestmark = pytest.mark.course(ROUND_TRIP)


def add(left: int, right: int) -> int:
    """Add two integers."""
    return left + right


def importorskip(module: str, package: str) -> Any:
    return pytest.importorskip(module, reason=f"needs {package} (the dev extra installs it)")


def sent_call(server: FixtureServer) -> dict[str, Any]:
    """The part of the second request that sends the model's call back."""
    second = cast("dict[str, Any]", thaw(server.requests[1]))
    parts = [part for turn in second["contents"] for part in turn["parts"]]
    [call] = [part for part in parts if "functionCall" in part]
    return cast("dict[str, Any]", call)


def assert_sent_back_signed(server: FixtureServer) -> None:
    """The call went back with its name, arguments and signature: the same bytes (each
    client may re-encode them, so never compared as text)."""
    call = sent_call(server)
    assert (call["functionCall"]["name"], call["functionCall"]["args"]) == (
        "add",
        {"left": 20, "right": 22},
    )
    assert base64.urlsafe_b64decode(call["thoughtSignature"]) == base64.b64decode(SIGNATURE)


# -- google-genai ---------------------------------------------------------------------------


def test_google_genai(course_server: FixtureServer) -> None:
    genai = importorskip("google.genai", "google-genai")
    types = genai.types
    options = types.HttpOptions(base_url=course_server.url)
    config = types.GenerateContentConfig(tools=[add])  # automatic function calling
    with genai.Client(api_key="test", http_options=options) as client:
        response = client.models.generate_content(model=MODEL, contents=QUESTION, config=config)
    assert response.text == ANSWER
    assert response.usage_metadata.candidates_token_count == 6
    assert_sent_back_signed(course_server)


# -- pydantic-ai ----------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["run", "run_stream"])
async def test_pydantic_ai_google_model(course_server: FixtureServer, mode: str) -> None:
    pydantic_ai = importorskip("pydantic_ai", "pydantic-ai-slim")
    importorskip("google.genai", "google-genai")
    from pydantic_ai.models.google import GoogleModel  # noqa: PLC0415
    from pydantic_ai.providers.google import GoogleProvider  # noqa: PLC0415

    provider = GoogleProvider(api_key="test", base_url=course_server.url)
    agent = pydantic_ai.Agent(GoogleModel(MODEL, provider=provider), tools=[add])
    async with provider:  # closes the HTTP client it made
        if mode == "run":
            result = await agent.run(QUESTION)
            output, usage = result.output, result.usage
        else:
            async with agent.run_stream(QUESTION) as run:
                output = await run.get_output()
            usage = run.usage
    assert output == ANSWER
    assert (usage.requests, usage.tool_calls) == (2, 1)
    assert (usage.input_tokens, usage.output_tokens) == (12 + 30, 8 + 6)
    assert_sent_back_signed(course_server)


# -- LangChain ------------------------------------------------------------------------------


def test_langchain_chat_google_generative_ai(course_server: FixtureServer) -> None:
    messages_module = importorskip("langchain_core.messages", "langchain-core")
    tools = importorskip("langchain_core.tools", "langchain-core")
    langchain_google_genai = importorskip("langchain_google_genai", "langchain-google-genai")
    model = langchain_google_genai.ChatGoogleGenerativeAI(
        model=MODEL, api_key="test", base_url=course_server.url, max_retries=0
    )
    bound = model.bind_tools([tools.tool(add)])
    messages: list[Any] = [messages_module.HumanMessage(QUESTION)]
    first = bound.invoke(messages)
    [call] = first.tool_calls
    assert (call["name"], call["args"]) == ("add", {"left": 20, "right": 22})
    assert first.response_metadata["finish_reason"] == "STOP"
    result = messages_module.ToolMessage(str(add(**call["args"])), tool_call_id=call["id"])
    chunks = list(bound.stream([*messages, first, result]))
    answer = sum(chunks[1:], chunks[0])
    assert answer.text == ANSWER
    assert answer.usage_metadata is not None
    assert (answer.usage_metadata["input_tokens"], answer.usage_metadata["output_tokens"]) == (
        30,
        6,
    )
    assert_sent_back_signed(course_server)
