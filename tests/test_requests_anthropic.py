"""Reading Anthropic Messages request bodies (``SPEC-REQUESTS.md``): every row of the
SPEC's table, where each block stood, the tools, each read problem's message, the bodies
the SDK and the frameworks send on their tool loops, and any JSON body (a
``CourseModelRequest`` or a ``RequestReadError``, nothing else)."""

from __future__ import annotations

import json
from typing import Any, Final

import anthropic
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course import (
    CourseOtherBlock,
    CourseRedactedThinkingBlock,
    CourseRequestMessage,
    CourseTextBlock,
    CourseThinkingBlock,
    CourseTool,
    CourseToolCallBlock,
    CourseToolResultBlock,
    thaw,
)
from course._json import refreeze
from course._json_text import loads
from course.vendors import FixtureServer, serve
from course.vendors._anthropic import read_request
from course.vendors._requests import ReadRequest, RequestReadError, SentLog

from . import test_server_frameworks_v2_anthropic as thinking
from .helpers import ROUNDTRIP_PATH
from .request_strategies import json_bodies, mutated

QUESTION: Final = "What is 20 + 22?"
CALL_ID: Final = "call-add-001"  # the bundled round trip's call
NOON: Final = refreeze([{"type": "text", "text": "noon"}])


def read(body: dict[str, Any]) -> ReadRequest:
    return read_request(body, "req-1", SentLog())


def messages(body: dict[str, Any]) -> list[CourseRequestMessage]:
    return list(read(body).messages)


def user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(content)}


# -- system and roles -----------------------------------------------------------------------


def test_a_system_string_is_one_system_message_placed_system() -> None:
    got = read({"system": "Be brief.", "messages": [{"role": "user", "content": "Hi"}]})
    assert got.messages == (
        CourseRequestMessage("system", (CourseTextBlock("Be brief."),)),
        CourseRequestMessage("user", (CourseTextBlock("Hi"),)),
    )
    assert got.places == (("system",), ("messages[0]",))
    assert got.request.id == "req-1"


def test_system_text_blocks_are_one_system_message() -> None:
    system = [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Use the tools."},
    ]
    got = read({"system": system})
    assert got.messages == (
        CourseRequestMessage(
            "system", (CourseTextBlock("Be brief."), CourseTextBlock("Use the tools."))
        ),
    )
    assert got.places == (("system", "system"),)


@pytest.mark.parametrize("system", ["", [], None])
def test_an_empty_or_null_system_is_no_system_message(system: object) -> None:
    assert messages({"system": system, "messages": [{"role": "user", "content": "Hi"}]}) == [
        CourseRequestMessage("user", (CourseTextBlock("Hi"),))
    ]


@pytest.mark.parametrize("role", ["user", "assistant"])
@pytest.mark.parametrize("text", ["Hi", ""])
def test_a_string_content_is_one_text_block_even_empty(role: str, text: str) -> None:
    assert messages({"messages": [{"role": role, "content": text}]}) == [
        CourseRequestMessage(role, (CourseTextBlock(text),))  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize("body", [{}, {"messages": None}, {"messages": []}])
def test_no_messages_is_an_empty_history(body: dict[str, Any]) -> None:
    got = read(body)
    assert (got.messages, got.places, got.request.tools) == ((), (), ())


def test_keys_the_reader_does_not_use_are_ignored() -> None:
    body = {
        "model": "claude-x",
        "max_tokens": 10,
        "stream": True,
        "metadata": {"user_id": "u"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [
            {
                "role": "user",
                "name": "ignored",
                "content": [{"type": "text", "text": "Hi", "citations": [], "extra": 1}],
            }
        ],
    }
    assert messages(body) == [CourseRequestMessage("user", (CourseTextBlock("Hi"),))]


# -- blocks ---------------------------------------------------------------------------------


def test_each_block_kind_and_its_place() -> None:
    thinking_block = {"type": "thinking", "thinking": "Add them.", "signature": "sig=="}
    body = {
        "messages": [
            {"role": "user", "content": QUESTION},
            {
                "role": "assistant",
                "content": [
                    thinking_block,
                    {"type": "redacted_thinking", "data": "opaque"},
                    {"type": "text", "text": "Adding."},
                    {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1}},
                    {"type": "tool_use", "id": "toolu_2", "name": "now"},
                ],
            },
            user(
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "2"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [{"type": "text", "text": "noon"}],
                    "is_error": True,
                },
                {"type": "text", "text": "Go on."},
            ),
        ]
    }
    got = read(body)
    assert got.messages[1:] == (
        CourseRequestMessage(
            "assistant",
            (
                CourseThinkingBlock("Add them.", "sig=="),
                CourseRedactedThinkingBlock("opaque"),
                CourseTextBlock("Adding."),
                CourseToolCallBlock("toolu_1", "add", {"a": 1}),
                CourseToolCallBlock("toolu_2", "now", {}),  # no input: {}
            ),
        ),
        CourseRequestMessage(  # a tool_result stays in its user message
            "user",
            (
                CourseToolResultBlock("toolu_1", "2"),
                CourseToolResultBlock("toolu_2", NOON, True),
                CourseTextBlock("Go on."),
            ),
        ),
    )
    assert got.places == (("messages[0]",), ("messages[1]",) * 5, ("messages[2]",) * 3)
    result = got.messages[2].content[1]
    assert type(result) is CourseToolResultBlock
    assert thaw(result.content) == [{"type": "text", "text": "noon"}]


def test_a_thinking_block_without_a_signature() -> None:
    blocks = [
        {"type": "thinking", "thinking": "Hm."},
        {"type": "thinking", "thinking": "", "signature": None},
    ]
    [message] = messages({"messages": [{"role": "assistant", "content": blocks}]})
    assert message.content == (CourseThinkingBlock("Hm."), CourseThinkingBlock(""))


@pytest.mark.parametrize(("content", "read_as"), [(None, None), ("", ""), ([], [])])
def test_a_tool_result_without_content(content: object, read_as: object) -> None:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": "t"}
    if content is not None:
        block["content"] = content
    [message] = messages({"messages": [user(block)]})
    [result] = message.content
    assert type(result) is CourseToolResultBlock
    assert (result.content, result.is_error) == (read_as if read_as != [] else (), False)


@pytest.mark.parametrize(
    "block",
    [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iV"}},
        {"type": "document", "source": {"type": "text", "data": "doc"}, "title": "t"},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "search_result", "source": "s", "title": "t", "content": []},
        {"type": "container_upload", "file_id": "f"},
    ],
    ids=lambda block: block["type"],
)
def test_every_other_block_is_an_other_block_with_its_wire_json(block: dict[str, Any]) -> None:
    [message] = messages({"messages": [user(block)]})
    assert message.content == (CourseOtherBlock(block["type"], block),)
    other = message.content[0]
    assert type(other) is CourseOtherBlock
    assert thaw(other.data) == block


# -- tools ----------------------------------------------------------------------------------


def test_client_tools_are_read_and_server_tools_skipped() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "integer"}}}
    tools = [
        {"name": "add", "description": "Add.", "input_schema": schema},
        {"type": "custom", "name": "now", "input_schema": {"type": "object"}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
        {"type": "bash_20250124", "name": "bash"},
        {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
        {"name": "bare", "cache_control": {"type": "ephemeral"}},
    ]
    assert read({"tools": tools}).request.tools == (
        CourseTool("add", "Add.", schema),
        CourseTool("now", None, {"type": "object"}),
        CourseTool("bare"),
    )


# -- read problems --------------------------------------------------------------------------

PROBLEMS: Final[list[tuple[dict[str, Any], str]]] = [
    ({"messages": {}}, "messages: the messages must be an array, got an object"),
    ({"messages": [[]]}, "messages[0]: a message must be an object, got an array"),
    (
        {"messages": [{"content": "x"}]},
        "messages[0].role: a message needs a string role, none was given",
    ),
    (
        {"messages": [{"role": 1, "content": "x"}]},
        "messages[0].role: a message needs a string role, got a number",
    ),
    (
        {"messages": [{"role": "user", "content": "x"}, {"role": "robot", "content": "x"}]},
        "messages[1].role: unknown role 'robot' (a message is 'user' or 'assistant')",
    ),
    (
        {"messages": [{"role": "system", "content": "x"}]},
        "messages[0].role: unknown role 'system' (a message is 'user' or 'assistant')",
    ),
    (
        {"messages": [{"role": "user"}]},
        "messages[0].content: a message's content must be a string or an array of blocks, "
        "none was given",
    ),
    (
        {"messages": [{"role": "user", "content": {"type": "text"}}]},
        "messages[0].content: a message's content must be a string or an array of blocks, "
        "got an object",
    ),
    (
        {"messages": [user("x")]},
        "messages[0].content[0]: a content block must be an object, got a string",
    ),
    (
        {"messages": [user({"text": "x"})]},
        "messages[0].content[0].type: a content block needs a string type, none was given",
    ),
    (
        {"messages": [user({"type": "text"})]},
        "messages[0].content[0].text: a text block needs a string text, none was given",
    ),
    (
        {"messages": [user({"type": "text", "text": "a"}, {"type": "text", "text": None})]},
        "messages[0].content[1].text: a text block needs a string text, got null",
    ),
    (
        {"messages": [user({"type": "tool_use", "name": "add", "input": {}})]},
        "messages[0].content[0].id: a tool_use block needs a string id, none was given",
    ),
    (
        {"messages": [user({"type": "tool_use", "id": "t", "input": {}})]},
        "messages[0].content[0].name: a tool_use block needs a string name, none was given",
    ),
    (
        {"messages": [user({"type": "tool_use", "id": "t", "name": "add", "input": "{}"})]},
        "messages[0].content[0].input: a tool_use block's input must be an object, got a string",
    ),
    (
        {"messages": [user({"type": "thinking", "signature": "s"})]},
        "messages[0].content[0].thinking: a thinking block needs a string thinking, none was given",
    ),
    (
        {"messages": [user({"type": "thinking", "thinking": "t", "signature": 5})]},
        "messages[0].content[0].signature: a thinking block's signature must be a string, "
        "got a number",
    ),
    (
        {"messages": [user({"type": "redacted_thinking"})]},
        "messages[0].content[0].data: a redacted_thinking block needs a string data, "
        "none was given",
    ),
    (
        {"messages": [user({"type": "tool_result", "content": "42"})]},
        "messages[0].content[0].tool_use_id: a tool_result block needs a string tool_use_id, "
        "none was given",
    ),
    (
        {"messages": [user({"type": "tool_result", "tool_use_id": "t", "content": 42})]},
        "messages[0].content[0].content: a tool_result's content must be a string or an array "
        "of blocks, got a number",
    ),
    (
        {"messages": [user({"type": "tool_result", "tool_use_id": "t", "is_error": "yes"})]},
        "messages[0].content[0].is_error: a tool_result block's is_error must be a boolean, "
        "got a string",
    ),
    (
        {"system": 3},
        "system: the system prompt must be a string or an array of text blocks, got a number",
    ),
    ({"system": ["x"]}, "system[0]: a system block must be an object, got a string"),
    (
        {"system": [{"type": "image"}]},
        "system[0].type: a system block must be a text block, got 'image'",
    ),
    (
        {"system": [{"text": "x"}]},
        "system[0].type: a system block must be a text block, none was given",
    ),
    (
        {"system": [{"type": "text"}]},
        "system[0].text: a text block needs a string text, none was given",
    ),
    ({"tools": {}}, "tools: the tools must be an array, got an object"),
    ({"tools": [None]}, "tools[0]: a tool must be an object, got null"),
    (
        {"tools": [{"type": 1, "name": "x"}]},
        "tools[0].type: a tool's type must be a string, got a number",
    ),
    (
        {"tools": [{"input_schema": {}}]},
        "tools[0].name: a client tool needs a string name, none was given",
    ),
    (
        {"tools": [{"type": "custom", "name": 2}]},
        "tools[0].name: a client tool needs a string name, got a number",
    ),
    (
        {"tools": [{"name": "a", "description": ["d"]}]},
        "tools[0].description: a client tool's description must be a string, got an array",
    ),
    (
        {"tools": [{"name": "a", "input_schema": "object"}]},
        "tools[0].input_schema: a client tool's input_schema must be an object, got a string",
    ),
]


@pytest.mark.parametrize(("body", "problem"), PROBLEMS)
def test_each_read_problem_is_located_and_worded(body: dict[str, Any], problem: str) -> None:
    with pytest.raises(RequestReadError) as caught:
        read(body)
    assert caught.value.problem == "course read: " + problem
    assert str(caught.value) == caught.value.problem
    assert (caught.value.code, caught.value.param) == (None, None)


def test_a_read_problem_quotes_a_long_or_odd_role_bounded() -> None:
    with pytest.raises(RequestReadError) as caught:
        read({"messages": [{"role": "r\n" * 50, "content": "x"}]})
    assert "\n" not in caught.value.problem  # escaped, and cut at 57 characters
    assert "'... (a message is 'user' or 'assistant')" in caught.value.problem
    assert len(caught.value.problem) < 200


# -- what the SDK and the frameworks send ---------------------------------------------------


def sdk_body(**create: Any) -> dict[str, Any]:
    """The JSON body the anthropic SDK sends for ``messages.create(**create)``, as the
    server's strict reader parses it."""
    bodies: list[dict[str, Any]] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        bodies.append(loads(request.content.decode()))  # type: ignore[arg-type]
        message = {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        }  # fmt: skip
        return httpx2.Response(200, json=message)

    with httpx2.Client(transport=httpx2.MockTransport(answer)) as http:
        client = anthropic.Anthropic(api_key="t", http_client=http, max_retries=0)
        client.messages.create(model="m", max_tokens=64, **create)
    [body] = bodies
    return body


def test_the_sdk_s_tool_loop_body_reads_as_sent() -> None:
    body = sdk_body(
        system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        tools=[
            {"name": "add", "description": "Add.", "input_schema": {"type": "object"}},
            {"type": "web_search_20250305", "name": "web_search"},
        ],
        messages=[
            {"role": "user", "content": QUESTION},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Add.", "signature": "c2ln"},
                    {"type": "redacted_thinking", "data": "ZGF0YQ=="},
                    {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 20}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"},
                    {
                        "type": "image",
                        "source": {"type": "url", "url": "https://example.com/a.png"},
                    },
                ],
            },
        ],
    )
    got = read(body)
    assert [message.role for message in got.messages] == ["system", "user", "assistant", "user"]
    assert got.messages[2].content == (
        CourseThinkingBlock("Add.", "c2ln"),
        CourseRedactedThinkingBlock("ZGF0YQ=="),
        CourseToolCallBlock("toolu_1", "add", {"a": 20}),
    )
    assert got.messages[3].content[0] == CourseToolResultBlock("toolu_1", "42")
    assert type(got.messages[3].content[1]) is CourseOtherBlock
    assert got.request.tools == (CourseTool("add", "Add.", {"type": "object"}),)
    assert got.places[2:] == (("messages[1]",) * 3, ("messages[2]",) * 2)


def read_all(server: FixtureServer) -> list[ReadRequest]:
    """Every request the server took, read; the last one must carry the tool loop: the
    assistant's call and, in the user message after it, its result."""
    read_requests = [read(thaw(body)) for body in server.requests]
    last = read_requests[-1].messages
    calls = [
        b
        for m in last
        if m.role == "assistant"
        for b in m.content
        if type(b) is CourseToolCallBlock
    ]
    results = [
        b for m in last if m.role == "user" for b in m.content if type(b) is CourseToolResultBlock
    ]
    assert [call.id for call in calls] == [result.tool_call_id for result in results]
    assert calls and all(call.name == "add" for call in calls)
    assert [tool.name for tool in read_requests[0].request.tools] == ["add"]  # type: ignore[attr-defined]
    return read_requests


def add(left: int, right: int) -> int:
    """Add two integers."""
    return left + right


@pytest.mark.asyncio
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
async def test_pydantic_ai_s_thinking_tool_loop_reads_with_its_signatures(streamed: bool) -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai", reason="needs pydantic-ai (the dev extra)")
    from pydantic_ai.models.anthropic import AnthropicModel  # noqa: PLC0415
    from pydantic_ai.providers.anthropic import AnthropicProvider  # noqa: PLC0415

    async with serve(thinking.fixture()) as server:
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)
        async with client:
            model = AnthropicModel("claude-x", provider=AnthropicProvider(anthropic_client=client))
            agent: Any = pydantic_ai.Agent(model, tools=[add])
            if streamed:
                async with agent.run_stream(QUESTION) as run:
                    await run.get_output()
            else:
                await agent.run(QUESTION)
        _, second = read_all(server)
    [assistant] = [message for message in second.messages if message.role == "assistant"]
    assert assistant.content == (
        CourseThinkingBlock(thinking.THINKING, thinking.SIGNATURE),
        CourseRedactedThinkingBlock(thinking.REDACTED),
        CourseToolCallBlock(thinking.CALL_ID, "add", {"left": 20, "right": 22}),
    )


@pytest.mark.course(ROUNDTRIP_PATH)
def test_langchain_chat_anthropic_tool_loop_reads(course_server: FixtureServer) -> None:
    messages_module = pytest.importorskip("langchain_core.messages")
    tools = pytest.importorskip("langchain_core.tools")
    langchain_anthropic = pytest.importorskip("langchain_anthropic")
    model = langchain_anthropic.ChatAnthropic(
        model="claude-fixture", base_url=course_server.url, api_key="test", max_retries=0
    )
    bound = model.bind_tools([tools.tool(add)])
    history: list[Any] = [
        messages_module.SystemMessage("Add with the tool."),
        messages_module.HumanMessage(QUESTION),
    ]
    first = bound.invoke(history)
    [call] = first.tool_calls
    result = messages_module.ToolMessage(str(add(**call["args"])), tool_call_id=call["id"])
    list(bound.stream([*history, first, result]))
    _, second = read_all(course_server)
    assert second.messages[0] == CourseRequestMessage(
        "system", (CourseTextBlock("Add with the tool."),)
    )
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "user"]
    assert second.messages[3].content == (CourseToolResultBlock(CALL_ID, "42"),)


@pytest.mark.course(ROUNDTRIP_PATH)
@pytest.mark.filterwarnings("ignore:Items? .* the `ReadOnly` qualifier:UserWarning")
def test_litellm_anthropic_tool_loop_reads(
    course_server: FixtureServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else it fetches prices
    litellm = pytest.importorskip("litellm")
    tool = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
    ask = {
        "model": "anthropic/claude-fixture",
        "api_base": course_server.url,
        "api_key": "test",
        "max_tokens": 256,
        "tools": [tool],
    }
    history: list[Any] = [
        {"role": "system", "content": "Add."},
        {"role": "user", "content": QUESTION},
    ]
    first = litellm.completion(messages=history, **ask)
    [call] = first.choices[0].message.tool_calls
    history += [
        first.choices[0].message.model_dump(),
        {"role": "tool", "tool_call_id": call.id, "content": "42"},
    ]
    list(litellm.completion(messages=history, stream=True, **ask))
    _, second = read_all(course_server)
    assert second.messages[0].role == "system"
    assert second.places[0] == ("system",) * len(second.messages[0].content)


@pytest.mark.course(ROUNDTRIP_PATH)
def test_the_sdk_against_serve_tool_loop_reads(course_server: FixtureServer) -> None:
    client = anthropic.Anthropic(base_url=course_server.url, api_key="test", max_retries=0)
    tool: Any = {"name": "add", "input_schema": {"type": "object"}}
    history: list[Any] = [{"role": "user", "content": QUESTION}]
    first = client.messages.create(model="c", max_tokens=64, messages=history, tools=[tool])
    [use] = [block for block in first.content if block.type == "tool_use"]
    result = {"type": "tool_result", "tool_use_id": use.id, "content": "42"}
    history += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [result]},
    ]
    client.messages.create(model="c", max_tokens=64, messages=history, tools=[tool])
    client.close()
    read_all(course_server)


# -- any body -------------------------------------------------------------------------------

_TEXT = st.text(max_size=5)
_BLOCKS = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXT),
    st.builds(
        lambda i, n, a: {"type": "tool_use", "id": i, "name": n, "input": a},
        _TEXT, _TEXT, st.dictionaries(_TEXT, st.integers(), max_size=2),
    ),
    st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, _TEXT, _TEXT),
    st.builds(lambda d: {"type": "redacted_thinking", "data": d}, _TEXT),
    st.builds(
        lambda i, c, e: {"type": "tool_result", "tool_use_id": i, "content": c, "is_error": e},
        _TEXT, st.one_of(_TEXT, st.just([{"type": "text", "text": "r"}])), st.booleans(),
    ),
    st.just({"type": "image", "source": {"type": "url", "url": "u"}}),
)  # fmt: skip
_MESSAGES = st.builds(
    lambda role, content: {"role": role, "content": content},
    st.sampled_from(["user", "assistant"]),
    st.one_of(_TEXT, st.lists(_BLOCKS, max_size=3)),
)
shaped_bodies = st.fixed_dictionaries(
    {
        "model": st.just("claude-x"),
        "system": st.one_of(_TEXT, st.just([{"type": "text", "text": "s"}])),
        "messages": st.lists(_MESSAGES, max_size=4),
        "tools": st.just([{"name": "add", "input_schema": {}}, {"type": "bash_20250124"}]),
    }
)


def assert_reads_or_refuses(body: dict[str, Any]) -> None:
    try:
        got = read_request(body, "req-1", SentLog())
    except RequestReadError as error:
        assert error.problem.startswith("course read: ")
        return
    assert len(got.places) == len(got.messages)
    for message, places in zip(got.messages, got.places, strict=True):
        assert len(places) == len(message.content)
        assert all(place == "system" or place.startswith("messages[") for place in places)
    json.dumps(got.request.to_dict())  # plain JSON all the way down


@given(json_bodies)
def test_any_json_body_reads_or_is_a_read_problem(body: dict[str, Any]) -> None:
    assert_reads_or_refuses(body)


@given(shaped_bodies)
def test_a_well_shaped_body_reads(body: dict[str, Any]) -> None:
    got = read(body)
    assert len(got.messages) == len(body["messages"]) + bool(body["system"])


@given(shaped_bodies.flatmap(mutated))
def test_a_broken_body_reads_or_is_a_read_problem(body: dict[str, Any]) -> None:
    assert_reads_or_refuses(body)
