"""Reading ``openai-chat`` request bodies (``SPEC-REQUESTS.md``, "Reading requests").

Each row of the SPEC's table for Chat Completions: the roles, every block kind, where each
block stood (``messages[i]``), the function tools, and each read problem with its exact
message. Then any JSON body (random, and shaped like a Chat request with its fields
broken) reads or is a ``RequestReadError``, never another exception; and the bodies the
real SDK and the frameworks send in their tool loops read with no problem.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import httpx2
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    CourseIncompleteToolCallBlock,
    CourseOtherBlock,
    CourseRefusalBlock,
    CourseRequestMessage,
    CourseTextBlock,
    CourseTool,
    CourseToolCallBlock,
    CourseToolResultBlock,
    thaw,
)
from course._json import PlainJson
from course.vendors import FixtureServer
from course.vendors._openai_chat import read_request
from course.vendors._requests import ReadRequest, RequestReadError, SentLog

from .helpers import ROUNDTRIP_PATH
from .strategies import json_values

CALL_ID: Final = "call-add-001"
QUESTION: Final = "What is 20 + 22?"


def read(body: Mapping[str, Any]) -> ReadRequest:
    return read_request(body, "request-1", SentLog())


def messages_of(*messages: Any) -> tuple[CourseRequestMessage, ...]:
    return read({"messages": list(messages)}).messages


def problem(body: Mapping[str, Any]) -> str:
    with pytest.raises(RequestReadError) as caught:
        read(body)
    assert caught.value.code is None and caught.value.param is None
    return caught.value.problem


def call(call_id: str, name: str, arguments: str | None) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if arguments is not None:
        function["arguments"] = arguments
    return {"id": call_id, "type": "function", "function": function}


# -- the messages, in order, and their roles --------------------------------------------------


def test_a_body_reads_into_the_request_with_its_id_its_messages_and_their_places() -> None:
    read_request_ = read_request(
        {
            "model": "gpt-4.1-mini",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": None, "tool_calls": [call(CALL_ID, "add", "{}")]},
                {"role": "tool", "tool_call_id": CALL_ID, "content": "42"},
            ],
        },
        "req-7",
        SentLog(),
    )
    assert read_request_.request.id == "req-7"
    assert [m.role for m in read_request_.messages] == ["system", "user", "assistant", "tool"]
    assert read_request_.places == (
        ("messages[0]",),
        ("messages[1]",),
        ("messages[2]",),
        ("messages[3]",),
    )
    assert read_request_.history == () and read_request_.checked


@pytest.mark.parametrize(
    ("role", "read_as"),
    [
        ("system", "system"),
        ("developer", "system"),
        ("user", "user"),
        ("assistant", "assistant"),
    ],
)
def test_each_role_reads_as_named_and_developer_is_system(role: str, read_as: str) -> None:
    [message] = messages_of({"role": role, "content": "Hi"})
    assert message == CourseRequestMessage(read_as, (CourseTextBlock("Hi"),))  # type: ignore[arg-type]


def test_a_missing_or_null_message_list_is_an_empty_history() -> None:
    assert read({}).messages == () and read({}).places == ()
    assert read({"messages": None}).messages == ()


def test_a_string_content_is_one_text_block_even_an_empty_one() -> None:
    [message] = messages_of({"role": "user", "content": ""})
    assert message.content == (CourseTextBlock(""),)


def test_text_parts_are_text_blocks_and_other_parts_are_kept_as_other_blocks() -> None:
    image: Any = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    audio: Any = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
    file: Any = {"type": "file", "file": {"file_id": "file-1"}}
    [message] = messages_of(
        {"role": "user", "content": [{"type": "text", "text": "Look:"}, image, audio, file]}
    )
    assert message.content == (
        CourseTextBlock("Look:"),
        CourseOtherBlock("image_url", image),
        CourseOtherBlock("input_audio", audio),
        CourseOtherBlock("file", file),
    )
    other = message.content[1]
    assert isinstance(other, CourseOtherBlock)
    with pytest.raises(TypeError):
        other.data["type"] = "changed"  # type: ignore[index]  # read-only


def test_an_assistant_message_gives_its_content_then_its_refusal_then_its_tool_calls() -> None:
    [message] = messages_of(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Adding."}, {"type": "refusal", "refusal": "No."}],
            "refusal": "Not that.",
            "tool_calls": [
                call("call-1", "add", '{"left": 20, "right": 22}'),
                call("call-2", "add", '{"left":1}'),
            ],
        }
    )
    assert message.content == (
        CourseTextBlock("Adding."),
        CourseRefusalBlock("No."),
        CourseRefusalBlock("Not that."),
        CourseToolCallBlock("call-1", "add", {"left": 20, "right": 22}),
        CourseToolCallBlock("call-2", "add", {"left": 1}),
    )


def test_a_null_content_beside_tool_calls_gives_no_content_blocks() -> None:
    [message] = messages_of(
        {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call("c", "f", "")]}
    )
    assert message.content == (CourseToolCallBlock("c", "f", {}),)


@pytest.mark.parametrize(
    ("arguments", "block"),
    [
        (
            '{"a": [1, 2.5, null]}',
            CourseToolCallBlock("c", "f", json.loads('{"a": [1, 2.5, null]}')),
        ),
        ("", CourseToolCallBlock("c", "f", {})),
        (None, CourseToolCallBlock("c", "f", {})),
        ('{"a": 1', CourseIncompleteToolCallBlock("c", "f", '{"a": 1')),
        ("[1, 2]", CourseIncompleteToolCallBlock("c", "f", "[1, 2]")),
        ('"text"', CourseIncompleteToolCallBlock("c", "f", '"text"')),
        ('{"a": 1, "a": 2}', CourseIncompleteToolCallBlock("c", "f", '{"a": 1, "a": 2}')),
        ('{"a": NaN}', CourseIncompleteToolCallBlock("c", "f", '{"a": NaN}')),
    ],
    ids=["object", "empty", "absent", "cut", "array", "string", "duplicate-key", "nan"],
)
def test_arguments_text_that_is_not_a_strict_json_object_is_kept_as_it_came(
    arguments: str | None, block: object
) -> None:
    [message] = messages_of({"role": "assistant", "tool_calls": [call("c", "f", arguments)]})
    assert message.content == (block,)


def test_a_tool_call_of_another_type_is_an_other_block() -> None:
    custom: Any = {"id": "c", "type": "custom", "custom": {"name": "grep", "input": "x"}}
    [message] = messages_of({"role": "assistant", "tool_calls": [custom]})
    assert message.content == (CourseOtherBlock("custom", custom),)


def test_a_tool_message_is_one_tool_result_for_its_call_id() -> None:
    parts: Any = [{"type": "text", "text": "42"}]
    text, listed, empty = messages_of(
        {"role": "tool", "tool_call_id": CALL_ID, "content": "42"},
        {"role": "tool", "tool_call_id": "call-2", "content": parts},
        {"role": "tool", "tool_call_id": "", "content": ""},
    )
    assert text == CourseRequestMessage("tool", (CourseToolResultBlock(CALL_ID, "42"),))
    [result] = listed.content
    assert result == CourseToolResultBlock("call-2", parts)
    assert isinstance(result, CourseToolResultBlock) and isinstance(result.content, tuple)
    assert not result.is_error
    assert empty.content == (CourseToolResultBlock("", ""),)  # an id is kept as it came


def test_the_legacy_function_role_is_a_tool_message_of_an_other_block() -> None:
    legacy: Any = {"role": "function", "name": "add", "content": "42"}
    call_message: Any = {"role": "assistant", "function_call": {"name": "add", "arguments": "{}"}}
    assistant, result = messages_of(call_message, legacy)
    assert assistant.content == (CourseOtherBlock("function_call", call_message["function_call"]),)
    assert result == CourseRequestMessage("tool", (CourseOtherBlock("function", legacy),))


def test_each_block_is_placed_at_its_message_and_a_message_without_blocks_has_none() -> None:
    body = {
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {"role": "assistant", "content": None},
            {"role": "assistant", "content": "c", "tool_calls": [call("x", "f", "{}")]},
        ]
    }
    read_body = read(body)
    assert read_body.places == (
        ("messages[0]", "messages[0]"),
        (),
        ("messages[2]", "messages[2]"),
    )
    assert [len(m.content) for m in read_body.messages] == [2, 0, 2]


def test_keys_the_reader_does_not_use_are_ignored() -> None:
    [message] = messages_of(
        {"role": "user", "content": "Hi", "name": "ada", "cache_control": {"x": 1}}
    )
    assert message.content == (CourseTextBlock("Hi"),)


# -- tools ----------------------------------------------------------------------------------


def test_function_tools_are_read_and_other_tools_skipped() -> None:
    schema: Any = {"type": "object", "properties": {"left": {"type": "integer"}}}
    body = {
        "tools": [
            {
                "type": "function",
                "function": {"name": "add", "description": "Add.", "parameters": schema},
            },
            {"type": "custom", "custom": {"name": "grep"}},
            {"type": "function", "function": {"name": "now"}},
        ]
    }
    assert read(body).request.tools == (
        CourseTool("add", "Add.", schema),
        CourseTool("now", None, None),
    )


def test_no_tools_is_an_empty_tuple() -> None:
    assert read({"tools": None}).request.tools == () == read({}).request.tools


# -- read problems --------------------------------------------------------------------------

PROBLEMS: Final[list[tuple[dict[str, Any], str]]] = [
    ({"messages": {}}, "course read: messages: messages must be an array, got an object"),
    ({"messages": "hi"}, "course read: messages: messages must be an array, got a string"),
    (
        {"messages": [{"role": "user", "content": "a"}, {"role": "user"}, []]},
        "course read: messages[2]: a message must be an object, got an array",
    ),
    (
        {"messages": [{"role": "user"}, {"role": "robot", "content": "x"}]},
        "course read: messages[1].role: unknown role 'robot'",
    ),
    (
        {"messages": [{"content": "x"}]},
        "course read: messages[0].role: a message needs a string role, got null",
    ),
    (
        {"messages": [{"role": 1}]},
        "course read: messages[0].role: a message needs a string role, got a number",
    ),
    (
        {"messages": [{"role": "tool", "content": "42"}]},
        "course read: messages[0].tool_call_id: a tool message needs a string tool_call_id, "
        "got null",
    ),
    (
        {"messages": [{"role": "user", "content": 3}]},
        "course read: messages[0].content: content must be a string, an array of parts or null, "
        "got a number",
    ),
    (
        {"messages": [{"role": "user", "content": ["hi"]}]},
        "course read: messages[0].content[0]: a content part must be an object, got a string",
    ),
    (
        {"messages": [{"role": "user", "content": [{"text": "hi"}]}]},
        "course read: messages[0].content[0].type: a content part needs a string type, got null",
    ),
    (
        {"messages": [{"role": "user", "content": [{"type": "text", "text": None}]}]},
        "course read: messages[0].content[0].text: a text part needs a string text, got null",
    ),
    (
        {"messages": [{"role": "assistant", "content": [{"type": "refusal", "text": "no"}]}]},
        "course read: messages[0].content[0].refusal: a refusal part needs a string refusal, "
        "got null",
    ),
    (
        {"messages": [{"role": "assistant", "refusal": True}]},
        "course read: messages[0].refusal: an assistant message needs a string refusal, "
        "got a boolean",
    ),
    (
        {"messages": [{"role": "assistant", "tool_calls": {}}]},
        "course read: messages[0].tool_calls: tool_calls must be an array, got an object",
    ),
    (
        {"messages": [{"role": "assistant", "tool_calls": [None]}]},
        "course read: messages[0].tool_calls[0]: a tool call must be an object, got null",
    ),
    (
        {"messages": [{"role": "assistant", "tool_calls": [{"type": "function"}]}]},
        "course read: messages[0].tool_calls[0].id: a tool call needs a string id, got null",
    ),
    (
        {"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "type": 5}]}]},
        "course read: messages[0].tool_calls[0].type: a tool call needs a string type, "
        "got a number",
    ),
    (
        {"messages": [{"role": "assistant", "tool_calls": [{"id": "c"}]}]},
        "course read: messages[0].tool_calls[0].function: a tool call's `function` must be "
        "an object, got null",
    ),
    (
        {"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]}]},
        "course read: messages[0].tool_calls[0].function.name: a tool call's `function` needs "
        "a string name, got null",
    ),
    (
        {
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}],
                }
            ]
        },
        "course read: messages[0].tool_calls[0].function.arguments: a tool call's `function` "
        "needs a string arguments, got an object",
    ),
    (
        {"messages": [{"role": "assistant", "function_call": "add"}]},
        "course read: messages[0].function_call: a `function_call` must be an object, got a string",
    ),
    ({"tools": {"type": "function"}}, "course read: tools: tools must be an array, got an object"),
    ({"tools": [1]}, "course read: tools[0]: a tool must be an object, got a number"),
    (
        {"tools": [{"type": "function"}]},
        "course read: tools[0].function: a function tool's `function` must be an object, got null",
    ),
    (
        {"tools": [{"type": "function", "function": {"description": "Add."}}]},
        "course read: tools[0].function.name: a function tool needs a string name, got null",
    ),
    (
        {"tools": [{"type": "function", "function": {"name": "f", "description": 1}}]},
        "course read: tools[0].function.description: a function tool needs a string "
        "description, got a number",
    ),
    (
        {"tools": [{"type": "function", "function": {"name": "f", "parameters": []}}]},
        "course read: tools[0].function.parameters: a function tool's `parameters` must be an "
        "object, got an array",
    ),
]


@pytest.mark.parametrize(("body", "message"), PROBLEMS, ids=[m for _, m in PROBLEMS])
def test_a_body_it_cannot_read_is_a_located_read_problem(
    body: dict[str, Any], message: str
) -> None:
    assert problem(body) == message


def test_a_problem_quotes_the_wire_s_text_on_one_line() -> None:
    message = problem({"messages": [{"role": "robot\n" + "x" * 100}]})
    assert "\n" not in message
    assert message.startswith("course read: messages[0].role: unknown role 'robot\\n")
    assert message.endswith("...")


# -- any body: a request or a read problem, never another exception ---------------------------

_ROLES = st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "robot"])
_TEXTS = st.text(max_size=4)


def _or_any(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the right shape, sometimes any JSON value instead (a mutation)."""
    return st.one_of(strategy, strategy, strategy, json_values)


def _maybe(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """An object whose every key may be absent, right or any JSON value."""
    return st.fixed_dictionaries(
        {}, optional={key: _or_any(value) for key, value in fields.items()}
    )


_PARTS = st.lists(
    _or_any(
        st.one_of(
            _maybe({"type": st.just("text"), "text": _TEXTS}),
            _maybe({"type": st.just("refusal"), "refusal": _TEXTS}),
            _maybe({"type": st.sampled_from(["image_url", "file"]), "image_url": json_values}),
        )
    ),
    max_size=3,
)
_CALLS = st.lists(
    _or_any(
        _maybe(
            {
                "id": _TEXTS,
                "type": st.sampled_from(["function", "custom"]),
                "function": _maybe(
                    {
                        "name": _TEXTS,
                        "arguments": st.one_of(_TEXTS, json_values.map(json.dumps)),
                    }
                ),
            }
        )
    ),
    max_size=3,
)
_MESSAGE = _maybe(
    {
        "role": _ROLES,
        "content": st.one_of(_TEXTS, _PARTS, st.none()),
        "refusal": st.one_of(_TEXTS, st.none()),
        "tool_calls": _CALLS,
        "tool_call_id": _TEXTS,
        "function_call": _maybe({"name": _TEXTS}),
    }
)
_TOOL = _maybe(
    {
        "type": st.sampled_from(["function", "custom"]),
        "function": _maybe(
            {
                "name": _TEXTS,
                "description": _TEXTS,
                "parameters": st.dictionaries(_TEXTS, json_values, max_size=2),
            }
        ),
    }
)
CHAT_BODIES: Final = _maybe(
    {
        "model": _TEXTS,
        "messages": st.lists(_or_any(_MESSAGE), max_size=4),
        "tools": st.lists(_or_any(_TOOL), max_size=3),
    }
)


def _assert_reads_or_refuses(body: dict[str, PlainJson]) -> None:
    try:
        read_body = read(body)
    except RequestReadError as error:
        assert error.problem.startswith("course read: ")
        assert "\n" not in error.problem
        return
    assert len(read_body.places) == len(read_body.messages)
    for message, places in zip(read_body.messages, read_body.places, strict=True):
        assert len(places) == len(message.content)
        assert all(place.startswith("messages[") for place in places)
    json.dumps(read_body.request.to_dict())  # plain JSON all the way down


@settings(max_examples=300, deadline=None)
@given(CHAT_BODIES)
def test_a_body_shaped_like_a_chat_request_reads_or_is_a_read_problem(body: dict[str, Any]) -> None:
    _assert_reads_or_refuses(body)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["messages", "tools", "model", "x"]), json_values, max_size=3)
)
def test_any_json_body_reads_or_is_a_read_problem(body: dict[str, Any]) -> None:
    _assert_reads_or_refuses(body)


# -- what the real SDK and the frameworks send --------------------------------------------------


def bodies_read(server: FixtureServer) -> list[ReadRequest]:
    """Every Chat request the server took, read (a problem fails the test)."""
    return [read(thaw(body)) for body in server.requests if "messages" in body]


def assert_the_tool_loop_reads(server: FixtureServer) -> None:
    """The last request carries the question, the call to ``add`` with its arguments and
    then its result for the same id (the round-trip fixture's loop)."""
    *_, last = bodies_read(server)
    blocks = [block for message in last.messages for block in message.content]
    assert CourseTextBlock(QUESTION) in blocks
    calls = [b for b in blocks if isinstance(b, CourseToolCallBlock)]
    assert [(c.id, c.name, thaw(c.arguments)) for c in calls] == [
        (CALL_ID, "add", {"left": 20, "right": 22})
    ]
    results = [
        (m.role, b)
        for m in last.messages
        for b in m.content
        if isinstance(b, CourseToolResultBlock)
    ]
    assert [(role, result.tool_call_id) for role, result in results] == [("tool", CALL_ID)]
    assert "42" in json.dumps(results[0][1].to_dict())
    [add] = [tool for tool in last.request.tools if isinstance(tool, CourseTool)]
    assert add.name == "add"


def add(left: int, right: int) -> int:
    """Add two integers."""
    return left + right


ADD: Final[dict[str, Any]] = {
    "type": "function",
    "function": {
        "name": "add",
        "parameters": {
            "type": "object",
            "properties": {"left": {"type": "integer"}, "right": {"type": "integer"}},
        },
    },
}


@pytest.mark.course(ROUNDTRIP_PATH)
def test_the_openai_sdk_s_tool_loop_reads(course_server: FixtureServer) -> None:
    with httpx2.Client() as http:
        client = openai.OpenAI(
            base_url=course_server.url + "/v1", api_key="test", http_client=http, max_retries=0
        )
        messages: list[Any] = [
            {"role": "developer", "content": "Use the tool."},
            {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
        ]
        first = client.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=[ADD])  # type: ignore[list-item]
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": CALL_ID, "content": "42"},
        ]
        client.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=[ADD])  # type: ignore[list-item]
    assert_the_tool_loop_reads(course_server)
    [system, _, assistant, tool] = bodies_read(course_server)[1].messages
    assert system == CourseRequestMessage("system", (CourseTextBlock("Use the tool."),))
    assert assistant.role == "assistant" and tool.role == "tool"


@pytest.mark.asyncio
@pytest.mark.course(ROUNDTRIP_PATH)
async def test_pydantic_ai_s_tool_loop_reads(course_server: FixtureServer) -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    from pydantic_ai.models.openai import OpenAIChatModel  # noqa: PLC0415
    from pydantic_ai.providers.openai import OpenAIProvider  # noqa: PLC0415

    async with openai.AsyncOpenAI(base_url=course_server.url + "/v1", api_key="test") as client:
        model = OpenAIChatModel("gpt-4.1-mini", provider=OpenAIProvider(openai_client=client))
        agent = pydantic_ai.Agent(model, tools=[add], system_prompt="Add with the tool.")
        async with agent.run_stream(QUESTION) as run:
            await run.get_output()
    assert_the_tool_loop_reads(course_server)


@pytest.mark.course(ROUNDTRIP_PATH)
def test_langchain_s_tool_loop_reads(course_server: FixtureServer) -> None:
    messages_module = pytest.importorskip("langchain_core.messages")
    tools = pytest.importorskip("langchain_core.tools")
    langchain_openai = pytest.importorskip("langchain_openai")
    model = langchain_openai.ChatOpenAI(
        model="gpt-4.1-mini", base_url=course_server.url + "/v1", api_key="test", max_retries=0
    )
    bound = model.bind_tools([tools.tool(add)])
    messages: list[Any] = [messages_module.HumanMessage(QUESTION)]
    first = bound.invoke(messages)
    [tool_call] = first.tool_calls
    result = messages_module.ToolMessage(
        str(add(**tool_call["args"])), tool_call_id=tool_call["id"]
    )
    list(bound.stream([*messages, first, result]))
    assert_the_tool_loop_reads(course_server)


@pytest.mark.asyncio
@pytest.mark.course(ROUNDTRIP_PATH)
async def test_the_openai_agents_sdk_s_tool_loop_reads(course_server: FixtureServer) -> None:
    agents = pytest.importorskip("agents")
    agents.set_tracing_disabled(True)  # else it exports traces to the network
    async with openai.AsyncOpenAI(base_url=course_server.url + "/v1", api_key="test") as client:
        agent = agents.Agent(
            name="adder",
            instructions="Add the numbers with the tool.",
            tools=[agents.function_tool(add)],
            model=agents.OpenAIChatCompletionsModel(model="gpt-4.1-mini", openai_client=client),
        )
        await agents.Runner.run(agent, QUESTION)
    assert_the_tool_loop_reads(course_server)


@pytest.mark.filterwarnings("ignore:Items? .* the `ReadOnly` qualifier:UserWarning")
@pytest.mark.course(ROUNDTRIP_PATH)
def test_litellm_s_tool_loop_reads(
    course_server: FixtureServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # else it fetches prices
    litellm = pytest.importorskip("litellm")
    base = course_server.url + "/v1"
    ask = {"model": "openai/gpt-4.1-mini", "api_base": base, "api_key": "test", "tools": [ADD]}
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    first = litellm.completion(messages=messages, **ask)
    [tool_call] = first.choices[0].message.tool_calls
    messages += [
        first.choices[0].message.model_dump(),
        {"role": "tool", "tool_call_id": tool_call.id, "content": "42"},
    ]
    list(litellm.completion(messages=messages, stream=True, **ask))
    assert_the_tool_loop_reads(course_server)
