"""Reading ``openai-responses`` request bodies, and the items the renderer sent.

The SPEC's row for Responses (``SPEC-REQUESTS.md``): ``instructions``, then ``input`` (a
string, or items: messages, function calls and reasoning grouped into one assistant
message, function call outputs, item references, every other item kind), the places
(``input[i]``), the function tools, the history a ``previous_response_id`` names, a
``conversation`` left unchecked, and each read problem with its exact message. Then any
JSON body reads or is a ``RequestReadError``; the frameworks' tool loops read with no
problem; and ``Renderer.sent_items`` names each output item the SDK saw with the blocks
it carried, which read back the same.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, Final

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    CourseIncompleteToolCallBlock,
    CourseModelRequest,
    CourseOtherBlock,
    CourseRefusalBlock,
    CourseRequestMessage,
    CourseTextBlock,
    CourseThinkingBlock,
    CourseTool,
    CourseToolCallBlock,
    CourseToolResultBlock,
    FixtureProviderAdapter,
    script,
    thaw,
)
from course._json import PlainJson
from course.vendors import FixtureServer
from course.vendors._openai_responses import Renderer, read_request
from course.vendors._requests import ReadRequest, RequestReadError, SentLog, SentResponse

from .helpers import ROUNDTRIP_PATH
from .strategies import json_values
from .vendor_helpers import JSON, SSE, openai_client

CALL_ID: Final = "call-add-001"
QUESTION: Final = "What is 20 + 22?"
SECRET: Final = "gAAAAABo-the-encrypted-reasoning=="


def read(body: Mapping[str, Any], sent: SentLog | None = None) -> ReadRequest:
    return read_request(body, "request-1", SentLog() if sent is None else sent)


def problem(body: Mapping[str, Any]) -> str:
    with pytest.raises(RequestReadError) as caught:
        read(body)
    assert caught.value.code is None and caught.value.param is None
    return caught.value.problem


def message(role: str, *content: Any) -> CourseRequestMessage:
    return CourseRequestMessage(role, content)  # type: ignore[arg-type]


def function_call(call_id: str, arguments: str = "{}", **extra: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": "add",
        "arguments": arguments,
        **extra,
    }


def output(call_id: str, value: Any = "42") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": value}


def reasoning(*texts: str, encrypted: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": text} for text in texts],
    }
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


# -- instructions and input -----------------------------------------------------------------


def test_instructions_are_a_system_message_and_a_string_input_one_user_message() -> None:
    read_body = read({"model": "gpt-4.1-mini", "instructions": "Be brief.", "input": QUESTION})
    assert read_body.messages == (
        message("system", CourseTextBlock("Be brief.")),
        message("user", CourseTextBlock(QUESTION)),
    )
    assert read_body.places == (("instructions",), ("input",))
    assert read_body.history == () and read_body.checked
    assert read_body.request.id == "request-1"


def test_a_missing_input_is_an_empty_history() -> None:
    assert read({}).messages == () == read({"input": None}).messages
    assert read({}).places == ()


@pytest.mark.parametrize(
    ("role", "read_as"),
    [("user", "user"), ("system", "system"), ("developer", "system"), ("assistant", "assistant")],
)
def test_a_message_item_s_role_developer_being_system(role: str, read_as: str) -> None:
    typed = {"type": "message", "role": role, "content": "Hi"}
    easy = {"role": role, "content": "Hi"}  # no type: the SDK's easy input message
    assert read({"input": [typed, easy]}).messages[0].role == read_as
    assert read({"input": [easy]}).messages == (message(read_as, CourseTextBlock("Hi")),)


def test_a_message_s_parts_are_text_refusal_or_kept_as_other_blocks() -> None:
    image: Any = {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}
    file: Any = {"type": "input_file", "file_id": "file-1"}
    user = {
        "role": "user",
        "content": [{"type": "input_text", "text": "Look:"}, image, file],
    }
    assistant = {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "Seen.", "annotations": []},
            {"type": "refusal", "refusal": "Not that."},
        ],
    }
    assert read({"input": [user, assistant]}).messages == (
        message(
            "user",
            CourseTextBlock("Look:"),
            CourseOtherBlock("input_image", image),
            CourseOtherBlock("input_file", file),
        ),
        message("assistant", CourseTextBlock("Seen."), CourseRefusalBlock("Not that.")),
    )


def test_a_string_content_is_one_text_block_even_an_empty_one() -> None:
    assert read({"input": [{"role": "user", "content": ""}]}).messages == (
        message("user", CourseTextBlock("")),
    )


# -- the assistant's turn -----------------------------------------------------------------


def test_consecutive_reasoning_message_and_function_call_items_are_one_assistant_message() -> None:
    body = {
        "input": [
            {"role": "user", "content": QUESTION},
            reasoning("Both are ", "integers.", encrypted=SECRET),
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Adding."}],
            },
            function_call("call-1", '{"left": 20, "right": 22}', id="fc_1"),
            function_call("call-2", '{"left": 1'),
            output("call-1", "42"),
            output("call-2", [{"type": "input_text", "text": "error"}]),
            {"role": "user", "content": "Thanks."},
        ]
    }
    read_body = read(body)
    assert read_body.messages == (
        message("user", CourseTextBlock(QUESTION)),
        message(
            "assistant",
            CourseThinkingBlock("Both are integers.", SECRET),
            CourseTextBlock("Adding."),
            CourseToolCallBlock("call-1", "add", {"left": 20, "right": 22}),
            CourseIncompleteToolCallBlock("call-2", "add", '{"left": 1'),
        ),
        message("tool", CourseToolResultBlock("call-1", "42")),
        message("tool", CourseToolResultBlock("call-2", [{"type": "input_text", "text": "error"}])),  # type: ignore[arg-type]
        message("user", CourseTextBlock("Thanks.")),
    )
    assert read_body.places == (
        ("input[0]",),
        ("input[1]", "input[2]", "input[3]", "input[4]"),
        ("input[5]",),
        ("input[6]",),
        ("input[7]",),
    )


def test_a_function_call_s_id_is_its_call_id_not_the_item_s() -> None:
    [assistant] = read({"input": [function_call("call-9", "", id="fc_9")]}).messages
    assert assistant.content == (CourseToolCallBlock("call-9", "add", {}),)


def test_a_reasoning_item_without_summary_or_signature_is_an_empty_unsigned_thinking_block() -> (
    None
):
    [assistant] = read({"input": [{"type": "reasoning", "summary": []}]}).messages
    assert assistant.content == (CourseThinkingBlock("", None),)
    [assistant] = read({"input": [{"type": "reasoning", "encrypted_content": None}]}).messages
    assert assistant.content == (CourseThinkingBlock("", None),)


@pytest.mark.parametrize(
    ("item", "role"),
    [
        ({"type": "web_search_call", "id": "ws_1", "status": "completed"}, "assistant"),
        ({"type": "custom_tool_call", "call_id": "c", "name": "grep", "input": "x"}, "assistant"),
        ({"type": "mcp_list_tools", "id": "l", "server_label": "s", "tools": []}, "assistant"),
        ({"type": "mcp_approval_request", "id": "a", "name": "n", "arguments": "{}"}, "assistant"),
        ({"type": "computer_call_output", "call_id": "c", "output": {}}, "tool"),
        ({"type": "custom_tool_call_output", "call_id": "c", "output": "x"}, "tool"),
        ({"type": "mcp_approval_response", "approval_request_id": "a", "approve": True}, "user"),
        ({"type": "compaction", "encrypted_content": "x"}, "user"),
    ],
    ids=lambda value: value["type"] if isinstance(value, dict) else value,
)
def test_an_item_of_another_kind_is_an_other_block_in_the_message_of_its_side(
    item: Any, role: str
) -> None:
    assert read({"input": [item]}).messages == (
        message(role, CourseOtherBlock(item["type"], item)),
    )


def test_a_call_of_another_kind_joins_the_assistant_s_turn() -> None:
    search: Any = {"type": "web_search_call", "id": "ws_1"}
    [assistant] = read({"input": [search, function_call("c")]}).messages
    assert assistant.content == (
        CourseOtherBlock("web_search_call", search),
        CourseToolCallBlock("c", "add", {}),
    )


# -- references to what this server sent ----------------------------------------------------


def sent_log(*responses: SentResponse) -> SentLog:
    sent = SentLog()
    for response in responses:
        sent.add(response)
    return sent


FIRST: Final = SentResponse(
    "openai-responses",
    "resp_1",
    (CourseThinkingBlock("I add.", SECRET), CourseToolCallBlock(CALL_ID, "add", {"left": 20})),
    history=(message("user", CourseTextBlock(QUESTION)),),
    items={
        "rs_resp_1_0": (CourseThinkingBlock("I add.", SECRET),),
        "fc_resp_1_1": (CourseToolCallBlock(CALL_ID, "add", {"left": 20}),),
    },
)


def test_an_item_reference_stands_for_the_blocks_of_the_item_this_server_sent() -> None:
    body = {
        "input": [
            {"role": "user", "content": QUESTION},
            {"type": "item_reference", "id": "rs_resp_1_0"},
            {"type": "item_reference", "id": "fc_resp_1_1"},
            output(CALL_ID),
        ]
    }
    read_body = read(body, sent_log(FIRST))
    assert read_body.messages[1] == message(
        "assistant",
        CourseThinkingBlock("I add.", SECRET),
        CourseToolCallBlock(CALL_ID, "add", {"left": 20}),
    )
    assert read_body.places[1] == ("input[1]", "input[2]")


def test_an_item_reference_this_server_never_sent_is_an_other_block() -> None:
    reference: Any = {"type": "item_reference", "id": "fc_elsewhere"}
    assert read({"input": [reference]}, sent_log(FIRST)).messages == (
        message("assistant", CourseOtherBlock("item_reference", reference)),
    )


def test_previous_response_id_brings_that_response_s_history_then_its_output() -> None:
    read_body = read(
        {"previous_response_id": "resp_1", "input": [output(CALL_ID)]}, sent_log(FIRST)
    )
    assert read_body.history == (*FIRST.history, FIRST.output())
    assert read_body.messages == (message("tool", CourseToolResultBlock(CALL_ID, "42")),)
    assert read_body.places == (("input[0]",),)


def test_a_previous_response_id_this_server_never_sent_is_previous_response_not_found() -> None:
    with pytest.raises(RequestReadError) as caught:
        read({"previous_response_id": "resp_unknown", "input": "Hi"}, sent_log(FIRST))
    assert caught.value.problem == (
        "course read: previous_response_id: previous response with id 'resp_unknown' not "
        "found: this server never sent it"
    )
    assert (caught.value.code, caught.value.param) == (
        "previous_response_not_found",
        "previous_response_id",
    )


def test_a_request_with_a_conversation_is_read_but_not_checked() -> None:
    read_body = read({"conversation": "conv_1", "input": [output("call-elsewhere")]})
    assert not read_body.checked
    assert read_body.messages == (message("tool", CourseToolResultBlock("call-elsewhere", "42")),)
    assert read({"conversation": None, "input": "Hi"}).checked


# -- tools ----------------------------------------------------------------------------------


def test_function_tools_are_read_and_other_tools_skipped() -> None:
    schema: Any = {"type": "object", "properties": {"left": {"type": "integer"}}}
    body = {
        "tools": [
            {
                "type": "function",
                "name": "add",
                "description": "Add.",
                "parameters": schema,
                "strict": True,
            },
            {"type": "web_search"},
            {"type": "function", "name": "now"},
        ]
    }
    assert read(body).request.tools == (
        CourseTool("add", "Add.", schema),
        CourseTool("now", None, None),
    )


# -- read problems --------------------------------------------------------------------------

PROBLEMS: Final[list[tuple[dict[str, Any], str]]] = [
    (
        {"instructions": ["a"]},
        "course read: instructions: a request needs a string instructions, got an array",
    ),
    ({"input": 5}, "course read: input: input must be a string or an array of items, got a number"),
    ({"input": ["Hi"]}, "course read: input[0]: an input item must be an object, got a string"),
    (
        {"input": [{"content": "Hi"}]},
        "course read: input[0].type: an input item needs a string type, got null",
    ),
    (
        {"input": [{"type": 1}]},
        "course read: input[0].type: an input item needs a string type, got a number",
    ),
    (
        {"input": [{"role": "user", "content": "a"}, {"role": "robot", "content": "x"}]},
        "course read: input[1].role: unknown role 'robot'",
    ),
    (
        {"input": [{"role": "tool", "content": "x"}]},
        "course read: input[0].role: unknown role 'tool'",
    ),
    (
        {"input": [{"type": "message", "content": "x"}]},
        "course read: input[0].role: a message item needs a string role, got null",
    ),
    (
        {"input": [{"role": "user", "content": {"type": "input_text"}}]},
        "course read: input[0].content: content must be a string, an array of parts or null,"
        " got an object",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_text"}]}]},
        "course read: input[0].content[0].text: a text part needs a string text, got null",
    ),
    (
        {"input": [{"type": "function_call", "name": "add", "arguments": "{}"}]},
        "course read: input[0].call_id: a function_call item needs a string call_id, got null",
    ),
    (
        {"input": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]},
        "course read: input[0].name: a function_call item needs a string name, got null",
    ),
    (
        {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]},
        "course read: input[0].arguments: a function_call item needs a string arguments,"
        " got an object",
    ),
    (
        {"input": [{"type": "reasoning", "summary": "x"}]},
        "course read: input[0].summary: summary must be an array, got a string",
    ),
    (
        {"input": [{"type": "reasoning", "summary": [None]}]},
        "course read: input[0].summary[0]: a summary part must be an object, got null",
    ),
    (
        {"input": [{"type": "reasoning", "summary": [{"type": "summary_text"}]}]},
        "course read: input[0].summary[0].text: a summary part needs a string text, got null",
    ),
    (
        {"input": [{"type": "reasoning", "encrypted_content": 7}]},
        "course read: input[0].encrypted_content: a reasoning item needs a string "
        "encrypted_content, got a number",
    ),
    (
        {"input": [{"type": "function_call_output", "output": "42"}]},
        "course read: input[0].call_id: a function_call_output item needs a string call_id,"
        " got null",
    ),
    (
        {"input": [{"type": "function_call_output", "call_id": "c"}]},
        "course read: input[0].output: a function_call_output item needs a string or an array "
        "of parts output, got null",
    ),
    (
        {"input": [{"type": "item_reference"}]},
        "course read: input[0].id: an item_reference needs a string id, got null",
    ),
    (
        {"previous_response_id": 3},
        "course read: previous_response_id: a request needs a string previous_response_id,"
        " got a number",
    ),
    ({"tools": "add"}, "course read: tools: tools must be an array, got a string"),
    ({"tools": [None]}, "course read: tools[0]: a tool must be an object, got null"),
    (
        {"tools": [{"type": "function", "parameters": {}}]},
        "course read: tools[0].name: a function tool needs a string name, got null",
    ),
    (
        {"tools": [{"type": "function", "name": "f", "parameters": "{}"}]},
        "course read: tools[0].parameters: a function tool's `parameters` must be an object,"
        " got a string",
    ),
]


@pytest.mark.parametrize(("body", "message_"), PROBLEMS, ids=[m for _, m in PROBLEMS])
def test_a_body_it_cannot_read_is_a_located_read_problem(
    body: dict[str, Any], message_: str
) -> None:
    assert problem(body) == message_


# -- any body: a request or a read problem, never another exception ---------------------------

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
        _maybe(
            {
                "type": st.sampled_from(["input_text", "output_text", "refusal", "input_image"]),
                "text": _TEXTS,
                "refusal": _TEXTS,
            }
        )
    ),
    max_size=3,
)
_ITEM = _maybe(
    {
        "type": st.sampled_from(
            [
                "message",
                "function_call",
                "function_call_output",
                "reasoning",
                "item_reference",
                "web_search_call",
                "computer_call_output",
                "mcp_approval_response",
            ]
        ),
        "role": st.sampled_from(["user", "system", "developer", "assistant", "tool", "robot"]),
        "content": st.one_of(_TEXTS, _PARTS),
        "call_id": _TEXTS,
        "id": st.sampled_from(["rs_resp_1_0", "fc_resp_1_1", "msg_x"]),
        "name": _TEXTS,
        "arguments": st.one_of(_TEXTS, json_values.map(json.dumps)),
        "output": st.one_of(_TEXTS, _PARTS),
        "summary": st.lists(
            _or_any(_maybe({"type": st.just("summary_text"), "text": _TEXTS})), max_size=2
        ),
        "encrypted_content": _TEXTS,
    }
)
_TOOL = _maybe(
    {
        "type": st.sampled_from(["function", "web_search"]),
        "name": _TEXTS,
        "description": _TEXTS,
        "parameters": st.dictionaries(_TEXTS, json_values, max_size=2),
    }
)
RESPONSES_BODIES: Final = _maybe(
    {
        "instructions": _TEXTS,
        "input": st.one_of(_TEXTS, st.lists(_or_any(_ITEM), max_size=5)),
        "previous_response_id": st.sampled_from(["resp_1", "resp_unknown"]),
        "conversation": _TEXTS,
        "tools": st.lists(_or_any(_TOOL), max_size=3),
    }
)


def _assert_reads_or_refuses(body: dict[str, PlainJson]) -> None:
    try:
        read_body = read(body, sent_log(FIRST))
    except RequestReadError as error:
        assert error.problem.startswith("course read: ")
        assert "\n" not in error.problem
        return
    assert len(read_body.places) == len(read_body.messages)
    for message_, places in zip(read_body.messages, read_body.places, strict=True):
        assert len(places) == len(message_.content)
        assert all(
            place in {"instructions", "input"} or place.startswith("input[") for place in places
        )
    json.dumps(read_body.request.to_dict())  # plain JSON all the way down


@settings(max_examples=300, deadline=None)
@given(RESPONSES_BODIES)
def test_a_body_shaped_like_a_responses_request_reads_or_is_a_read_problem(
    body: dict[str, Any],
) -> None:
    _assert_reads_or_refuses(body)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["input", "instructions", "tools", "previous_response_id", "conversation"]),
        json_values,
        max_size=3,
    )
)
def test_any_json_body_reads_or_is_a_read_problem(body: dict[str, Any]) -> None:
    _assert_reads_or_refuses(body)


# -- the items the renderer sent ---------------------------------------------------------------

ANSWER: Final = script.fixture(
    script.response(
        script.thinking(["Both are ", "integers."], signature=SECRET),
        "I will ",
        "add.",
        script.refusal("Not more."),
        script.call("add", {"left": 20, "right": 22}, id=CALL_ID),
        script.thinking("Unsigned."),
        script.call(
            "add", {"left": 1, "right": 2}, id="call-2", fragments=['{"left": 1,', ' "right": 2}']
        ),
        response_id="resp_1",
        usage=(40, 30),
    )
)
CUT: Final = script.fixture(
    script.response(
        "So", script.incomplete_call("add", '{"left": 2', id="call-cut"), response_id="resp_2"
    )
)


def render(fixture: object, *, streamed: bool) -> tuple[Renderer, bytes]:
    """One response rendered as the server renders it, and the renderer."""
    adapter = FixtureProviderAdapter(fixture)
    renderer = Renderer("gpt-4.1-mini")

    async def run() -> bytes:
        stream = adapter.stream(CourseModelRequest(id="request-1"))
        renderer.follow(stream)
        if not streamed:
            return json.dumps(renderer.whole(await stream.result())).encode()
        await stream._until_start()
        parts = [renderer.open(stream.response_id or "")]
        parts += [renderer.chunk(chunk) async for chunk in stream]
        parts.append(renderer.complete(await stream.result()))
        return "".join(parts).encode()

    return renderer, asyncio.run(run())


def sdk_output(body: bytes, *, streamed: bool) -> list[Any]:
    """The output items the real openai SDK makes of what was served."""
    client = openai_client(body, content_type=SSE if streamed else JSON)
    if not streamed:
        return list(client.responses.create(model="gpt-4.1-mini", input="Hi").output)
    events: list[Any] = list(client.responses.create(model="gpt-4.1-mini", input="Hi", stream=True))
    assert events[-1].type in {"response.completed", "response.incomplete"}
    return list(events[-1].response.output)


def blocks_the_sdk_saw(item: Any) -> tuple[object, ...]:
    """The blocks an output item carries, as the SDK parsed it."""
    if item.type == "message":
        return tuple(
            CourseTextBlock(part.text)
            if part.type == "output_text"
            else CourseRefusalBlock(part.refusal)
            for part in item.content
        )
    if item.type == "reasoning":
        text = "".join(part.text for part in item.summary)
        return (CourseThinkingBlock(text, item.encrypted_content),)
    assert item.type == "function_call"
    if item.status == "incomplete":
        return (CourseIncompleteToolCallBlock(item.call_id, item.name, item.arguments),)
    return (CourseToolCallBlock(item.call_id, item.name, json.loads(item.arguments)),)


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_sent_items_names_each_output_item_the_sdk_saw_with_the_blocks_it_carried(
    streamed: bool,
) -> None:
    renderer, body = render(ANSWER, streamed=streamed)
    items = sdk_output(body, streamed=streamed)
    assert [item.type for item in items] == [
        "reasoning",
        "message",
        "function_call",
        "reasoning",
        "function_call",
    ]
    assert dict(renderer.sent_items()) == {item.id: blocks_the_sdk_saw(item) for item in items}
    assert renderer.sent_items()[items[0].id] == (
        CourseThinkingBlock("Both are integers.", SECRET),
    )
    assert renderer.sent_items()[items[1].id] == (
        CourseTextBlock("I will add."),
        CourseRefusalBlock("Not more."),
    )


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_a_cut_call_is_sent_as_the_incomplete_call_it_was(streamed: bool) -> None:
    renderer, body = render(CUT, streamed=streamed)
    items = sdk_output(body, streamed=streamed)
    assert dict(renderer.sent_items()) == {
        items[0].id: (CourseTextBlock("So"),),
        items[1].id: (CourseIncompleteToolCallBlock("call-cut", "add", '{"left": 2'),),
    }


def test_sent_items_of_a_stream_still_open_are_what_was_sent_so_far() -> None:
    adapter = FixtureProviderAdapter(ANSWER)
    renderer = Renderer("gpt-4.1-mini")
    assert renderer.sent_items() == {}

    async def run() -> None:
        stream = adapter.stream(CourseModelRequest(id="request-1"))
        renderer.follow(stream)
        await stream._until_start()
        renderer.open(stream.response_id or "")
        chunks = [chunk async for chunk in stream]
        renderer.chunk(chunks[0])  # "Both are "
        assert dict(renderer.sent_items()) == {"rs_resp_1_0": (CourseThinkingBlock("Both are "),)}
        for chunk in chunks[1:4]:  # the rest of the thinking, its signature, "I will "
            renderer.chunk(chunk)
        assert dict(renderer.sent_items()) == {
            "rs_resp_1_0": (CourseThinkingBlock("Both are integers.", SECRET),),
            "msg_resp_1_1": (CourseTextBlock("I will "),),
        }

    asyncio.run(run())


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_the_output_items_sent_back_read_as_the_blocks_sent_and_so_do_their_references(
    streamed: bool,
) -> None:
    renderer, body = render(ANSWER, streamed=streamed)
    items = sdk_output(body, streamed=streamed)
    sent_blocks = tuple(block for item in items for block in renderer.sent_items()[item.id])
    echoed = read({"input": [item.model_dump(exclude_none=True) for item in items]})
    [assistant] = echoed.messages
    assert assistant.content == sent_blocks
    sent = sent_log(SentResponse("openai-responses", "resp_1", (), items=renderer.sent_items()))
    referenced = read(
        {"input": [{"type": "item_reference", "id": item.id} for item in items]}, sent
    )
    assert referenced.messages == echoed.messages
    assert referenced.places == echoed.places


# -- what the frameworks send ------------------------------------------------------------------


def bodies_read(server: FixtureServer) -> list[ReadRequest]:
    """Every Responses request the server took, read (a problem fails the test)."""
    return [read(thaw(body)) for body in server.requests if "input" in body]


def assert_the_tool_loop_reads(server: FixtureServer, question: str = QUESTION) -> ReadRequest:
    """The last request carries the question, the call to ``add`` and then its result for
    the same id, as a tool message."""
    *_, last = bodies_read(server)
    blocks = [block for m in last.messages for block in m.content]
    assert CourseTextBlock(question) in blocks
    calls = [b for b in blocks if isinstance(b, CourseToolCallBlock)]
    assert [(c.id, c.name, thaw(c.arguments)) for c in calls] == [
        (CALL_ID, "add", {"left": 20, "right": 22})
    ]
    results = [
        (m.role, b.tool_call_id)
        for m in last.messages
        for b in m.content
        if isinstance(b, CourseToolResultBlock)
    ]
    assert results == [("tool", CALL_ID)]
    assert [tool.name for tool in last.request.tools if isinstance(tool, CourseTool)] == ["add"]
    return last


def add(left: int, right: int) -> int:
    """Add two integers."""
    return left + right


@pytest.mark.asyncio
@pytest.mark.course(ROUNDTRIP_PATH)
async def test_pydantic_ai_s_tool_loop_reads(course_server: FixtureServer) -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    import openai  # noqa: PLC0415
    from pydantic_ai.models.openai import OpenAIResponsesModel  # noqa: PLC0415
    from pydantic_ai.providers.openai import OpenAIProvider  # noqa: PLC0415

    async with openai.AsyncOpenAI(base_url=course_server.url + "/v1", api_key="test") as client:
        model = OpenAIResponsesModel("gpt-4.1-mini", provider=OpenAIProvider(openai_client=client))
        agent = pydantic_ai.Agent(model, tools=[add], instructions="Add with the tool.")
        async with agent.run_stream(QUESTION) as run:
            await run.get_output()
    last = assert_the_tool_loop_reads(course_server)
    assert last.messages[0] == message("system", CourseTextBlock("Add with the tool."))
    assert last.places[0] == ("instructions",)


@pytest.mark.course(ROUNDTRIP_PATH)
def test_langchain_s_tool_loop_reads(course_server: FixtureServer) -> None:
    messages_module = pytest.importorskip("langchain_core.messages")
    tools = pytest.importorskip("langchain_core.tools")
    langchain_openai = pytest.importorskip("langchain_openai")
    model = langchain_openai.ChatOpenAI(
        model="gpt-4.1-mini",
        base_url=course_server.url + "/v1",
        api_key="test",
        max_retries=0,
        use_responses_api=True,
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


REASONED: Final = script.fixture(
    script.response(
        script.thinking(["Both are ", "integers."], signature=SECRET),
        script.call("add", {"left": 20, "right": 22}, id=CALL_ID),
        usage=(40, 30),
    ),
    script.response("The sum is 42.", usage=(60, 6)),
)


@pytest.mark.asyncio
@pytest.mark.course(REASONED)
async def test_the_openai_agents_sdk_s_tool_loop_reads_with_its_signed_reasoning(
    course_server: FixtureServer,
) -> None:
    agents = pytest.importorskip("agents")
    import openai  # noqa: PLC0415

    agents.set_tracing_disabled(True)  # else it exports traces to the network
    async with openai.AsyncOpenAI(base_url=course_server.url + "/v1", api_key="test") as client:
        agent = agents.Agent(
            name="adder",
            instructions="Add the numbers with the tool.",
            tools=[agents.function_tool(add)],
            model=agents.OpenAIResponsesModel(model="o4-mini", openai_client=client),
        )
        await agents.Runner.run(agent, QUESTION)
    last = assert_the_tool_loop_reads(course_server)
    [assistant] = [m for m in last.messages if m.role == "assistant"]
    assert assistant.content[0] == CourseThinkingBlock("Both are integers.", SECRET)
