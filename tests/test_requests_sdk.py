"""The request checks through the real SDKs, over loopback: for each format, a correct
tool loop passes; a result for the wrong id, a forgotten result and (Anthropic,
Gemini) a dropped thinking block or signature are the SDK's ``BadRequestError`` with
the check's message, and take no response; ``check_requests=False`` lets them through.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import anthropic
import httpx2
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from course import CourseRequestMessage, CourseToolCallBlock, CourseToolResultBlock, script
from course.vendors import FixtureServer, ServedCall, serve

CALL_ID: Final = "call-add-001"
SIGNATURE: Final = "c2lnbmVkLWJ5LWdlbWluaQ=="  # base64, as Gemini's are
THINKING_SIGNATURE: Final = "EqQBCkYIBxgCKkBzaWduYXR1cmU="


def fixture(*, thinking: bool = False, signature: str | None = None) -> dict[str, object]:
    first: list[script.Item] = []
    if thinking:
        first.append(script.thinking("20 + 22, with the tool", signature=THINKING_SIGNATURE))
    first.append(script.call("add", {"a": 20, "b": 22}, id=CALL_ID, signature=signature))
    return script.fixture(
        script.response(*first, response_id="resp-1", usage=(10, 5)),
        script.response("The sum is 42.", response_id="resp-2", usage=(20, 5)),
    )


@pytest.fixture
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client() as client:  # one SSL context for the test's clients
        yield client


def only_problems(server: FixtureServer) -> list[tuple[str, ...]]:
    return [call.problems for call in server.calls]


# -- openai-chat -----------------------------------------------------------------------------


def chat(server: FixtureServer, http: httpx2.Client) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.url + "/v1", api_key="test", http_client=http, max_retries=0
    )


USER: Final[Any] = {"role": "user", "content": "add 20 and 22"}


def chat_history(first: Any, *, result_for: str | None = CALL_ID) -> list[Any]:
    history: list[Any] = [USER, first.choices[0].message.model_dump(exclude_none=True)]
    if result_for is not None:
        history.append({"role": "tool", "tool_call_id": result_for, "content": "42"})
    return history


def test_chat_a_correct_tool_loop_passes_and_reads_in_one_vocabulary(http: httpx2.Client) -> None:
    with serve(fixture()) as server:
        client = chat(server, http)
        first = client.chat.completions.create(model="m", messages=[USER])
        second = client.chat.completions.create(model="m", messages=chat_history(first))
        assert second.choices[0].message.content == "The sum is 42."
    assert only_problems(server) == [(), ()]
    request = server.calls[1].request
    assert request is not None and server.calls[1].response_index == 1
    messages = request.messages
    assert [m.role for m in messages if isinstance(m, CourseRequestMessage)] == [
        "user",
        "assistant",
        "tool",
    ]
    assert isinstance(messages[1], CourseRequestMessage)
    assert messages[1].content == (CourseToolCallBlock(CALL_ID, "add", {"a": 20, "b": 22}),)
    assert isinstance(messages[2], CourseRequestMessage)
    assert messages[2].content == (CourseToolResultBlock(CALL_ID, "42"),)


def test_chat_a_result_for_the_wrong_id_is_a_bad_request(http: httpx2.Client) -> None:
    with serve(fixture()) as server:
        client = chat(server, http)
        first = client.chat.completions.create(model="m", messages=[USER])
        with pytest.raises(openai.BadRequestError) as raised:
            client.chat.completions.create(
                model="m", messages=chat_history(first, result_for="call-9")
            )
    message = raised.value.body["message"]  # type: ignore[index]
    assert message.startswith("course check 1: messages[2]: the tool result for 'call-9'")
    assert server.calls[1].response_index is None
    assert server.calls[1].problems[0] == message
    assert server.adapter.pending == 1  # the refused call took no response


def test_chat_a_forgotten_result_is_a_bad_request(http: httpx2.Client) -> None:
    with serve(fixture()) as server:
        client = chat(server, http)
        first = client.chat.completions.create(model="m", messages=[USER])
        history = [*chat_history(first, result_for=None), {"role": "user", "content": "well?"}]
        with pytest.raises(openai.BadRequestError, match="course check 2: messages\\[1\\]"):
            client.chat.completions.create(model="m", messages=history)


def test_chat_changed_arguments_are_answered_and_noted(http: httpx2.Client) -> None:
    with serve(fixture()) as server:
        client = chat(server, http)
        first = client.chat.completions.create(model="m", messages=[USER])
        history = chat_history(first)
        history[1]["tool_calls"][0]["function"]["arguments"] = json.dumps({"a": 20, "b": 23})
        second = client.chat.completions.create(model="m", messages=history)
        assert second.choices[0].message.content == "The sum is 42."
    assert server.calls[1].problems == (
        "course check 3: messages[1]: the tool call 'call-add-001' comes back with other "
        "arguments than it was sent with",
    )


def test_chat_an_unreadable_message_is_a_bad_request(http: httpx2.Client) -> None:
    with serve(fixture()) as server:
        with pytest.raises(openai.BadRequestError, match="course read: messages\\[0\\]"):
            chat(server, http).chat.completions.create(model="m", messages=["hello"])  # type: ignore[list-item]
        assert server.calls[0].request is None


def test_chat_unchecked_lets_a_broken_history_through(http: httpx2.Client) -> None:
    with serve(fixture(), check_requests=False) as server:
        client = chat(server, http)
        first = client.chat.completions.create(model="m", messages=[USER])
        client.chat.completions.create(model="m", messages=chat_history(first, result_for="call-9"))
    assert only_problems(server) == [(), ()]


# -- openai-responses ------------------------------------------------------------------------


def test_responses_previous_response_id_brings_the_call_into_the_history(
    http: httpx2.Client,
) -> None:
    with serve(fixture()) as server:
        client = chat(server, http)
        first = client.responses.create(model="m", input="add 20 and 22")
        output: Any = {"type": "function_call_output", "call_id": CALL_ID, "output": "42"}
        second = client.responses.create(model="m", previous_response_id=first.id, input=[output])
        assert second.output_text == "The sum is 42."
        with pytest.raises(openai.BadRequestError, match="course check 1: input\\[0\\]") as raised:
            client.responses.create(
                model="m",
                previous_response_id=first.id,
                input=[{**output, "call_id": "call-9"}],  # type: ignore[list-item]
            )
        assert raised.value.code is None
    assert only_problems(server)[:2] == [(), ()]


def test_responses_an_unknown_previous_response_id_is_not_found(http: httpx2.Client) -> None:
    with serve(fixture()) as server, pytest.raises(openai.BadRequestError) as raised:
        chat(server, http).responses.create(model="m", previous_response_id="resp-x", input="hi")
    assert raised.value.code == "previous_response_not_found"
    assert raised.value.param == "previous_response_id"
    assert raised.value.body["message"].startswith("course read: previous_response_id")  # type: ignore[index]


def test_responses_the_history_resent_whole_passes_and_a_forgotten_output_fails(
    http: httpx2.Client,
) -> None:
    with serve(fixture()) as server:
        client = chat(server, http)
        first = client.responses.create(model="m", input="add 20 and 22")
        items: list[Any] = [{"role": "user", "content": "add 20 and 22"}]
        items += [item.model_dump(exclude_none=True) for item in first.output]
        with pytest.raises(openai.BadRequestError, match="course check 2: input\\[1\\]"):
            client.responses.create(model="m", input=items)
        output: Any = {"type": "function_call_output", "call_id": CALL_ID, "output": "42"}
        assert (
            client.responses.create(model="m", input=[*items, output]).output_text
            == "The sum is 42."
        )


# -- anthropic -------------------------------------------------------------------------------


def messages_client(server: FixtureServer, http: httpx2.Client) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key="test", http_client=http, max_retries=0)


def anthropic_history(first: Any, *, keep_thinking: bool = True) -> list[Any]:
    content = [block.model_dump(exclude_none=True) for block in first.content]
    if not keep_thinking:
        content = [block for block in content if block["type"] != "thinking"]
    result = {"type": "tool_result", "tool_use_id": CALL_ID, "content": "42"}
    return [
        {"role": "user", "content": "add 20 and 22"},
        {"role": "assistant", "content": content},
        {"role": "user", "content": [result]},
    ]


def test_anthropic_thinking_sent_back_passes(http: httpx2.Client) -> None:
    with serve(fixture(thinking=True)) as server:
        client = messages_client(server, http)
        first = client.messages.create(
            model="m", max_tokens=100, messages=[{"role": "user", "content": "add"}]
        )
        second = client.messages.create(
            model="m", max_tokens=100, messages=anthropic_history(first)
        )
        assert second.content[0].text == "The sum is 42."  # type: ignore[union-attr]
    assert only_problems(server) == [(), ()]


def test_anthropic_dropped_thinking_is_a_bad_request(http: httpx2.Client) -> None:
    with serve(fixture(thinking=True)) as server:
        client = messages_client(server, http)
        first = client.messages.create(
            model="m", max_tokens=100, messages=[{"role": "user", "content": "add"}]
        )
        with pytest.raises(anthropic.BadRequestError) as raised:
            client.messages.create(
                model="m", max_tokens=100, messages=anthropic_history(first, keep_thinking=False)
            )
    assert raised.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    assert raised.value.body["error"]["message"] == (  # type: ignore[index]
        f"course check 3: messages[1]: the thinking block signed {THINKING_SIGNATURE!r} is "
        f"missing, which came before the tool call {CALL_ID!r} in response 'resp-1'"
    )


def test_anthropic_a_result_for_the_wrong_id_is_a_bad_request(http: httpx2.Client) -> None:
    with serve(fixture()) as server:
        client = messages_client(server, http)
        first = client.messages.create(
            model="m", max_tokens=100, messages=[{"role": "user", "content": "add"}]
        )
        history = anthropic_history(first)
        history[2]["content"][0]["tool_use_id"] = "toolu_x"
        with pytest.raises(anthropic.BadRequestError, match="course check 1: messages\\[2\\]"):
            client.messages.create(model="m", max_tokens=100, messages=history)
    assert isinstance(server.calls[1], ServedCall) and server.calls[1].response_index is None


# -- gemini ----------------------------------------------------------------------------------


def gemini(server: FixtureServer) -> genai.Client:
    return genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.url))


def test_gemini_a_signed_call_sent_back_passes_and_one_without_its_signature_fails() -> None:
    with serve(fixture(signature=SIGNATURE)) as server:
        client = gemini(server)
        config = types.GenerateContentConfig(
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
        )
        first = client.models.generate_content(
            model="gemini-2.5-flash", contents="add 20 and 22", config=config
        )
        candidate = first.candidates[0].content  # type: ignore[index]
        assert candidate is not None and candidate.parts is not None
        call = candidate.parts[0].function_call
        assert call is not None
        answer = types.Content(
            role="user",
            parts=[types.Part.from_function_response(name="add", response={"result": 42})],
        )
        unsigned = types.Content(role="model", parts=[types.Part(function_call=call)])
        with pytest.raises(genai_errors.ClientError) as raised:
            client.models.generate_content(
                model="gemini-2.5-flash",
                contents=[
                    types.Content(role="user", parts=[types.Part(text="add")]),
                    unsigned,
                    answer,
                ],
                config=config,
            )
        assert raised.value.code == 400 and raised.value.status == "INVALID_ARGUMENT"
        assert "course check 3: contents[1]" in str(raised.value.message)
        second = client.models.generate_content(
            model="gemini-2.5-flash",
            contents=[
                types.Content(role="user", parts=[types.Part(text="add")]),
                candidate,
                answer,
            ],
            config=config,
        )
        assert second.text == "The sum is 42."
    assert [bool(p) for p in only_problems(server)] == [False, True, False]
