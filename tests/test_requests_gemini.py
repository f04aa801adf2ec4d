"""Reading Gemini request bodies (``SPEC-REQUESTS.md``, ``SPEC-GEMINI.md`` "Requests"):
every row of the SPEC's table, the ids the wire leaves out, where each block stood, the
tools, each read problem's message, ``same_signature``, the bodies google-genai and the
frameworks send on their tool loops, and any JSON body (a ``CourseModelRequest`` or a
``RequestReadError``, nothing else)."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any, Final

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course import (
    CourseOtherBlock,
    CourseRequestMessage,
    CourseTextBlock,
    CourseThinkingBlock,
    CourseTool,
    CourseToolCallBlock,
    CourseToolResultBlock,
    thaw,
)
from course.vendors import FixtureServer, serve
from course.vendors._gemini import read_request, same_signature
from course.vendors._requests import ReadRequest, RequestReadError, SentLog, SentResponse

from . import test_server_frameworks_gemini as frameworks
from .request_strategies import json_bodies, mutated

SIGNATURE: Final = frameworks.SIGNATURE
"""The round trip's call's signature (standard base64; the SDKs send it URL-safe)."""


def read(body: dict[str, Any], sent: SentLog | None = None) -> ReadRequest:
    return read_request(body, "req-1", SentLog() if sent is None else sent)


def log(*responses: tuple[str, list[CourseToolCallBlock]], format: str = "gemini") -> SentLog:
    sent = SentLog()
    for response_id, calls in responses:
        sent.add(SentResponse(format, response_id, tuple(calls)))
    return sent


def turn(role: str | None, *parts: dict[str, Any]) -> dict[str, Any]:
    content: dict[str, Any] = {"parts": list(parts)}
    if role is not None:
        content["role"] = role
    return content


def call(name: str, args: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if args is not None:
        function["args"] = args
    if "id" in more:
        function["id"] = more.pop("id")
    return {"functionCall": function, **more}


def answer(name: str, response: Any = None, call_id: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": name,
        "response": {"result": 42} if response is None else response,
    }
    if call_id is not None:
        function["id"] = call_id
    return {"functionResponse": function}


def blocks(got: ReadRequest, kind: type) -> list[Any]:
    return [block for message in got.messages for block in message.content if type(block) is kind]


# -- system, roles, parts -------------------------------------------------------------------


@pytest.mark.parametrize("key", ["systemInstruction", "system_instruction"])
def test_the_system_instruction_is_one_system_message(key: str) -> None:
    body = {key: turn("user", {"text": "Be brief."}, {"text": "Add."}), "contents": []}
    got = read(body)
    assert got.messages == (
        CourseRequestMessage("system", (CourseTextBlock("Be brief."), CourseTextBlock("Add."))),
    )
    assert got.places == (("systemInstruction", "systemInstruction"),)


@pytest.mark.parametrize("system", [{}, {"parts": []}, None])
def test_a_system_instruction_without_parts_is_no_message(system: object) -> None:
    assert read({"systemInstruction": system}).messages == ()


@pytest.mark.parametrize(
    ("role", "read_as"),
    [
        ("user", "user"),
        ("model", "assistant"),
        ("function", "tool"),
        ("tool", "tool"),
        (None, "user"),  # Gemini reads a content without a role as the user's
        ("", "user"),
    ],
)
def test_each_role(role: str | None, read_as: str) -> None:
    got = read({"contents": [turn(role, {"text": "Hi"})]})
    assert got.messages == (CourseRequestMessage(read_as, (CourseTextBlock("Hi"),)),)  # type: ignore[arg-type]
    assert got.places == (("contents[0]",),)


@pytest.mark.parametrize("body", [{}, {"contents": None}, {"contents": []}])
def test_no_contents_is_an_empty_history(body: dict[str, Any]) -> None:
    got = read(body)
    assert (got.messages, got.places, got.request.tools) == ((), (), ())


def test_text_thought_and_signature_parts() -> None:
    parts: list[dict[str, Any]] = [
        {"text": "Adding.", "thought": True},
        {"text": "", "thought": True, "thoughtSignature": "c2ln"},  # as serve sends it
        {"thought": True, "thoughtSignature": "c2lnMg=="},  # a signature with no text
        {"thoughtSignature": "c2lnMw"},
        {"text": "The sum is 42.", "thoughtSignature": "c2lnNA=="},  # Gemini 3 signs text
        {"text": "", "thought": False},
        {"text": "Plain.", "thought_signature": "c2lnNQ=="},
    ]
    got = read({"contents": [turn("model", *parts)]})
    assert got.messages[0].content == (
        CourseThinkingBlock("Adding."),
        CourseThinkingBlock("", "c2ln"),
        CourseThinkingBlock("", "c2lnMg=="),
        CourseThinkingBlock("", "c2lnMw"),
        # A signed text that is no thought: the text, then the signature alone (as import
        # reads the same part), so the signature is kept.
        CourseTextBlock("The sum is 42."),
        CourseThinkingBlock("", "c2lnNA=="),
        CourseTextBlock(""),
        CourseTextBlock("Plain."),
        CourseThinkingBlock("", "c2lnNQ=="),
    )
    assert got.places == (("contents[0]",) * 9,)


def test_calls_and_responses() -> None:
    got = read(
        {
            "contents": [
                turn("user", {"text": "Go."}),
                turn(
                    "model",
                    call("add", {"a": 1}, id="c-1", thoughtSignature=SIGNATURE),
                    call("now", id="c-2"),
                ),
                turn("user", answer("add", {"result": 2}, "c-1"), answer("now", {}, "c-2")),
                turn("function", {"function_response": {"id": "c-9", "name": "x"}}),
            ]
        }
    )
    assert got.messages[1:] == (
        CourseRequestMessage(
            "assistant",
            (
                CourseToolCallBlock("c-1", "add", {"a": 1}, signature=SIGNATURE),
                CourseToolCallBlock("c-2", "now", {}),  # no args: {}
            ),
        ),
        CourseRequestMessage(
            "user",
            (CourseToolResultBlock("c-1", {"result": 2}), CourseToolResultBlock("c-2", {})),
        ),
        CourseRequestMessage("tool", (CourseToolResultBlock("c-9", None),)),  # no response
    )
    [first, _] = blocks(got, CourseToolResultBlock)[:2]
    assert thaw(first.content) == {"result": 2}


@pytest.mark.parametrize(
    ("part", "kind"),
    [
        ({"inlineData": {"mimeType": "image/png", "data": "iVBO"}}, "inlineData"),
        ({"inline_data": {"mime_type": "image/png", "data": "iVBO"}}, "inlineData"),
        ({"fileData": {"fileUri": "gs://b/f", "mimeType": "application/pdf"}}, "fileData"),
        ({"executableCode": {"language": "PYTHON", "code": "1+1"}}, "executableCode"),
        ({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "2"}}, "codeExecutionResult"),
        ({"videoMetadata": {"fps": 1}, "fileData": {"fileUri": "u"}}, "fileData"),
        ({"someFuturePart": {}, "thoughtSignature": "c2ln"}, "someFuturePart"),
    ],
)
def test_every_other_part_is_an_other_block_of_its_payload_key(
    part: dict[str, Any], kind: str
) -> None:
    [message] = read({"contents": [turn("user", part)]}).messages
    assert message.content == (CourseOtherBlock(kind, part),)  # the part as sent


# -- ids ------------------------------------------------------------------------------------

QUESTION: Final = turn("user", {"text": "What is 20 + 22?"})
SENT_ADD: Final = CourseToolCallBlock(
    "resp-1:call:0", "add", {"left": 20, "right": 22}, signature=SIGNATURE
)


def test_a_call_without_an_id_is_the_sent_call_of_its_name_and_args() -> None:
    body = {
        "contents": [
            QUESTION,
            turn("model", call("add", {"right": 22.0, "left": 20}, thoughtSignature="sig")),
            turn("user", answer("add")),
        ]
    }
    got = read(body, log(("resp-1", [SENT_ADD])))
    [read_call] = blocks(got, CourseToolCallBlock)
    assert (read_call.id, read_call.signature) == ("resp-1:call:0", "sig")
    assert [result.tool_call_id for result in blocks(got, CourseToolResultBlock)] == [
        "resp-1:call:0"
    ]


def test_without_a_sent_call_the_ids_the_wire_leaves_out_are_empty() -> None:
    body = {
        "contents": [QUESTION, turn("model", call("add", {"a": 1})), turn("user", answer("add"))]
    }
    for sent in (
        SentLog(),
        log(("resp-1", [SENT_ADD])),
        log(("r", [SENT_ADD]), format="anthropic"),
    ):
        got = read(body, sent)
        assert [b.id for b in blocks(got, CourseToolCallBlock)] == [""]
        assert [b.tool_call_id for b in blocks(got, CourseToolResultBlock)] == [""]


@pytest.mark.parametrize(
    "args",
    [{"left": 20, "right": "22"}, {"left": 20}, {"left": 20, "right": 22, "x": None}],
)
def test_changed_args_are_not_the_sent_call(args: dict[str, Any]) -> None:
    body = {"contents": [QUESTION, turn("model", call("add", args))]}
    [read_call] = blocks(read(body, log(("resp-1", [SENT_ADD]))), CourseToolCallBlock)
    assert read_call.id == ""


def test_json_values_compare_by_value_true_only_equal_to_itself() -> None:
    arguments: Any = {"a": [1, True, None, {"b": 1.5}]}
    sent = log(("r", [CourseToolCallBlock("r:call:0", "f", arguments)]))
    same: dict[str, Any] = {"a": [1.0, True, None, {"b": 1.5}]}
    changed: dict[str, Any] = {"a": [True, True, None, {"b": 1.5}]}
    for args, read_as in [(same, "r:call:0"), (changed, "")]:
        body = {"contents": [turn("model", call("f", args))]}
        assert [b.id for b in blocks(read(body, sent), CourseToolCallBlock)] == [read_as]


def test_the_most_recent_response_that_sent_the_calls_wins() -> None:
    again = CourseToolCallBlock("resp-3:call:0", "add", {"left": 20, "right": 22})
    other = CourseToolCallBlock("resp-2:call:0", "mul", {})
    sent = log(("resp-1", [SENT_ADD]), ("resp-3", [again]), ("resp-2", [other]))
    body = {"contents": [turn("model", call("add", {"left": 20, "right": 22}))]}
    assert [b.id for b in blocks(read(body, sent), CourseToolCallBlock)] == ["resp-3:call:0"]


def test_the_kth_response_of_a_name_answers_the_kth_call_of_that_name() -> None:
    sent_calls = [
        CourseToolCallBlock("r:call:0", "add", {"a": 1}),
        CourseToolCallBlock("r:call:1", "mul", {"a": 2}),
        CourseToolCallBlock("r:call:2", "add", {"a": 3}),
    ]
    body = {
        "contents": [
            QUESTION,
            turn("model", call("add", {"a": 1}), call("mul", {"a": 2}), call("add", {"a": 3})),
            turn("user", answer("mul"), answer("add")),
            turn("user", answer("add")),
        ]
    }
    got = read(body, log(("r", sent_calls)))
    assert [b.id for b in blocks(got, CourseToolCallBlock)] == ["r:call:0", "r:call:1", "r:call:2"]
    assert [b.tool_call_id for b in blocks(got, CourseToolResultBlock)] == [
        "r:call:1",
        "r:call:0",
        "r:call:2",
    ]


def test_a_response_with_an_id_answers_its_call_and_keeps_its_id() -> None:
    body = {
        "contents": [
            turn("model", call("add", {"a": 1}, id="c-1"), call("add", {"a": 2})),
            # c-1 answers the first call by id; the one without an id takes the next add.
            turn("user", answer("add"), answer("add", call_id="c-1"), answer("add", call_id="c-7")),
        ]
    }
    sent = log(("r", [CourseToolCallBlock("r:call:1", "add", {"a": 2})]))
    got = read(body, sent)
    assert [b.id for b in blocks(got, CourseToolCallBlock)] == ["c-1", "r:call:1"]
    assert [b.tool_call_id for b in blocks(got, CourseToolResultBlock)] == [
        "r:call:1",
        "c-1",
        "c-7",
    ]


def test_a_turn_is_a_run_of_model_contents() -> None:
    # Streaming with automatic function calling, google-genai sends each chunk's content
    # as a model content of its own: the call, then the last chunk's empty text.
    body = {
        "contents": [
            QUESTION,
            turn("model", call("add", {"left": 20, "right": 22}, thoughtSignature=SIGNATURE)),
            turn("model", {"text": ""}),
            turn("user", answer("add")),
        ]
    }
    got = read(body, log(("resp-1", [SENT_ADD])))
    assert [b.tool_call_id for b in blocks(got, CourseToolResultBlock)] == ["resp-1:call:0"]
    assert got.places == (("contents[0]",), ("contents[1]",), ("contents[2]",), ("contents[3]",))


def test_a_response_before_any_call_or_of_no_call_s_name_keeps_its_wire_id() -> None:
    body = {
        "contents": [
            turn("user", answer("add"), answer("add", call_id="x")),
            turn("model", call("add", {"a": 1})),
            turn("user", answer("mul")),
        ]
    }
    got = read(body)
    assert [b.tool_call_id for b in blocks(got, CourseToolResultBlock)] == ["", "x", ""]


def test_keys_the_reader_does_not_use_are_ignored_in_either_spelling() -> None:
    body = {
        "generationConfig": {"temperature": 1},
        "generation_config": {"temperature": 0},
        "safetySettings": [],
        "contents": [
            {"role": "user", "parts": [{"text": "Hi"}], "extra_key": 1, "extraKey": 2},
            turn("model", {"functionCall": {"name": "f", "will_continue": 1, "willContinue": 2}}),
        ],
    }
    got = read(body)
    assert got.messages == (
        CourseRequestMessage("user", (CourseTextBlock("Hi"),)),
        CourseRequestMessage("assistant", (CourseToolCallBlock("", "f", {}),)),
    )


_VALUES = st.one_of(st.integers(-2, 2), st.booleans(), st.none())
_ARGS = st.dictionaries(st.sampled_from(["a", "b"]), _VALUES, max_size=2)


@given(
    st.lists(st.tuples(st.sampled_from(["add", "mul"]), _ARGS), min_size=1, max_size=4),
    st.randoms(),
)
def test_a_turn_sent_back_without_ids_reads_as_sent(
    sent_calls: list[tuple[str, dict[str, Any]]], random: Any
) -> None:
    """Whatever the calls (names and arguments repeated), sent back in order without
    ids and answered in any order of names, each reads as the call it is, and each
    response as the call of its name it answers, the k-th for the k-th."""
    made = [CourseToolCallBlock(f"r:call:{k}", n, a) for k, (n, a) in enumerate(sent_calls)]
    order = list(range(len(made)))
    random.shuffle(order)
    # Answered in a shuffled order, but keeping each name's calls in their own order.
    names = [made[k].name for k in order]
    answers_for = {name: [b.id for b in made if b.name == name] for name in set(names)}
    expected = [answers_for[name].pop(0) for name in names]
    body = {
        "contents": [
            QUESTION,
            turn("model", *(call(n, a) for n, a in sent_calls)),
            turn("user", *(answer(name) for name in names)),
        ]
    }
    got = read(body, log(("older", made[:1]), ("r", made)))
    assert [b.id for b in blocks(got, CourseToolCallBlock)] == [b.id for b in made]
    assert [b.tool_call_id for b in blocks(got, CourseToolResultBlock)] == expected


# -- tools ----------------------------------------------------------------------------------


def test_function_declarations_are_tools_and_other_tools_skipped() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "integer"}}}
    tools = [
        {
            "functionDeclarations": [
                {"name": "add", "description": "Add.", "parameters": schema},
                {"name": "now"},
                {"name": "json", "parametersJsonSchema": schema, "parameters": {"type": "OBJECT"}},
            ]
        },
        {"googleSearch": {}},
        {"codeExecution": {}},
        {"function_declarations": [{"name": "snake", "parameters_json_schema": schema}]},
    ]
    assert read({"tools": tools}).request.tools == (
        CourseTool("add", "Add.", schema),
        CourseTool("now"),
        CourseTool("json", None, schema),  # parametersJsonSchema first
        CourseTool("snake", None, schema),
    )


# -- same_signature -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "back", "same"),
    [
        ("+vv8/f7/+/8=", "-vv8_f7_-_8=", True),  # google-genai sends it URL-safe
        ("+vv8/f7/+/8=", "+vv8/f7/+/8", True),  # padded or not
        ("abc", "abc=", True),
        (SIGNATURE, base64.urlsafe_b64encode(base64.b64decode(SIGNATURE)).decode(), True),
        ("", "", True),
        ("abcd", "abce", False),
        ("abcd", "", False),
        ("sig-1", "sig-1", False),  # not base64: equals nothing, itself included
        ("abcd", "sig-1", False),
        ("abc", "abc==", False),  # padding past a multiple of 4
        ("ab+_", "ab+_", False),  # two alphabets
    ],
)
def test_same_signature_compares_decoded_bytes(sent: str, back: str, same: bool) -> None:
    assert same_signature(sent, back) is same
    assert same_signature(back, sent) is same


# -- read problems --------------------------------------------------------------------------


def one(*parts: Any) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": list(parts)}]}


P0: Final = "contents[0].parts[0]"
PROBLEMS: Final[list[tuple[dict[str, Any], str]]] = [
    ({"contents": {}}, "contents: the contents must be an array, got an object"),
    ({"contents": ["Hi"]}, "contents[0]: a content must be an object, got a string"),
    (
        {"contents": [turn("user"), turn("system", {"text": "x"})]},
        "contents[1].role: unknown role 'system' (a content is 'user', 'model', 'function' "
        "or 'tool')",
    ),
    (
        {"contents": [{"role": 1}]},
        "contents[0].role: a content's role must be a string, got a number",
    ),
    (
        {"contents": [{"parts": {}}]},
        "contents[0].parts: a content's parts must be an array, got an object",
    ),
    (one("Hi"), f"{P0}: a part must be an object, got a string"),
    (one({}), f"{P0}: a part holds exactly one kind of data, got none"),
    (one({"videoMetadata": {}}), f"{P0}: a part holds exactly one kind of data, got none"),
    (
        one({"text": "a", "functionCall": {"name": "f"}}),
        f"{P0}: a part holds exactly one kind of data, got 'text', 'functionCall'",
    ),
    (one({"text": 1}), f"{P0}.text: a text part needs a string text, got a number"),
    (
        one({"text": "a", "thought": "yes"}),
        f"{P0}.thought: a part's thought must be a boolean, got a string",
    ),
    (
        one({"text": "a", "thoughtSignature": 1}),
        f"{P0}.thoughtSignature: a part's thoughtSignature must be a string, got a number",
    ),
    (
        one({"text": "a", "thoughtSignature": "s", "thought_signature": "t"}),
        f"{P0}.thoughtSignature: the field is given twice, as 'thoughtSignature' and "
        "'thought_signature'",
    ),
    (
        one({"functionCall": "add"}),
        f"{P0}.functionCall: a part's functionCall must be an object, got a string",
    ),
    (
        one({"functionCall": {}}),
        f"{P0}.functionCall.name: a functionCall needs a string name, none was given",
    ),
    (
        one({"functionCall": {"name": "f", "args": "{}"}}),
        f"{P0}.functionCall.args: a functionCall's args must be an object, got a string",
    ),
    (
        one({"functionCall": {"name": "f", "id": 3}}),
        f"{P0}.functionCall.id: a functionCall's id must be a string, got a number",
    ),
    (
        one({"functionResponse": {"response": {}}}),
        f"{P0}.functionResponse.name: a functionResponse needs a string name, none was given",
    ),
    (
        one({"functionResponse": {"name": "f", "response": [42]}}),
        f"{P0}.functionResponse.response: a functionResponse's response must be an object, "
        "got an array",
    ),
    (
        one({"function_response": {"name": "f", "id": False}}),
        f"{P0}.functionResponse.id: a functionResponse's id must be a string, got a boolean",
    ),
    (
        {"systemInstruction": "Be brief."},
        "systemInstruction: a system instruction must be a Content object, got a string",
    ),
    (
        {"systemInstruction": {"parts": [{"text": None}]}},
        "systemInstruction.parts[0].text: a text part needs a string text, got null",
    ),
    (
        {"systemInstruction": {}, "system_instruction": {}},
        "systemInstruction: the field is given twice, as 'systemInstruction' and "
        "'system_instruction'",
    ),
    ({"tools": {}}, "tools: the tools must be an array, got an object"),
    ({"tools": [[]]}, "tools[0]: a tool must be an object, got an array"),
    (
        {"tools": [{"functionDeclarations": {}}]},
        "tools[0].functionDeclarations: a tool's functionDeclarations must be an array, "
        "got an object",
    ),
    (
        {"tools": [{"functionDeclarations": [1]}]},
        "tools[0].functionDeclarations[0]: a function declaration must be an object, got a number",
    ),
    (
        {"tools": [{"functionDeclarations": [{"description": "d"}]}]},
        "tools[0].functionDeclarations[0].name: a function declaration needs a string name, "
        "none was given",
    ),
    (
        {"tools": [{"functionDeclarations": [{"name": "f", "parameters": "object"}]}]},
        "tools[0].functionDeclarations[0].parameters: a function declaration's parameters "
        "must be an object, got a string",
    ),
]


@pytest.mark.parametrize(("body", "problem"), PROBLEMS)
def test_each_read_problem_is_located_and_worded(body: dict[str, Any], problem: str) -> None:
    with pytest.raises(RequestReadError) as caught:
        read(body)
    assert caught.value.problem == "course read: " + problem
    assert (caught.value.code, caught.value.param) == (None, None)


# -- what google-genai and the frameworks send ----------------------------------------------


def sent_round_trip() -> SentLog:
    """What ``serve`` sent for the round trip's first response: its call, made-up id."""
    return log(("resp-1", [SENT_ADD]))


def assert_loop_reads(server: FixtureServer) -> ReadRequest:
    """The second request read: the call (the round trip's, or the framework's own id),
    sent back signed, and its result answering it."""
    first, second = (read(thaw(body), sent_round_trip()) for body in server.requests)
    assert [tool.name for tool in first.request.tools] == ["add"]  # type: ignore[attr-defined]
    [read_call] = blocks(second, CourseToolCallBlock)
    assert (read_call.name, thaw(read_call.arguments)) == ("add", {"left": 20, "right": 22})
    assert read_call.signature is not None and same_signature(SIGNATURE, read_call.signature)
    assert read_call.id  # recognised, or the framework's own
    [result] = blocks(second, CourseToolResultBlock)
    assert result.tool_call_id == read_call.id
    return second


@pytest.mark.parametrize("automatic", [False, True], ids=["afc-off", "afc-on"])
@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "stream"])
def test_google_genai_tool_loop_reads(streaming: bool, automatic: bool) -> None:
    genai = pytest.importorskip("google.genai")
    types = genai.types
    config = types.GenerateContentConfig(
        system_instruction="Add with the tool.",
        tools=[frameworks.add],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=not automatic),
    )
    with serve(frameworks.ROUND_TRIP) as server:
        options = types.HttpOptions(base_url=server.url)
        with genai.Client(api_key="test", http_options=options) as client:
            ask = (
                client.models.generate_content_stream
                if streaming
                else client.models.generate_content
            )
            chunks = ask(model="m", contents=frameworks.QUESTION, config=config)
            if not automatic:
                chunks = list(chunks) if streaming else [chunks]
                parts = [p for chunk in chunks for p in chunk.candidates[0].content.parts]
                result = types.Part.from_function_response(name="add", response={"result": 42})
                history = [
                    types.Content(role="user", parts=[types.Part(text=frameworks.QUESTION)]),
                    types.Content(role="model", parts=parts),
                    types.Content(role="user", parts=[result]),
                ]
                chunks = ask(model="m", contents=history, config=config)
            list(chunks) if streaming else chunks
        second = assert_loop_reads(server)
    assert second.messages[0] == CourseRequestMessage(
        "system", (CourseTextBlock("Add with the tool."),)
    )
    assert [b.id for b in blocks(second, CourseToolCallBlock)] == ["resp-1:call:0"]


@pytest.mark.parametrize("mode", ["run", "run_stream"])
def test_pydantic_ai_google_model_tool_loop_reads(mode: str) -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    pytest.importorskip("google.genai")
    from pydantic_ai.models.google import GoogleModel  # noqa: PLC0415
    from pydantic_ai.providers.google import GoogleProvider  # noqa: PLC0415

    async def run(url: str) -> None:
        provider = GoogleProvider(api_key="test", base_url=url)
        agent = pydantic_ai.Agent(
            GoogleModel(frameworks.MODEL, provider=provider), tools=[frameworks.add]
        )
        async with provider:
            if mode == "run":
                await agent.run(frameworks.QUESTION)
            else:
                async with agent.run_stream(frameworks.QUESTION) as streamed:
                    await streamed.get_output()

    with serve(frameworks.ROUND_TRIP) as server:
        asyncio.run(run(server.url))
        second = assert_loop_reads(server)
    # pydantic-ai sends the call back with an id of its own, and its result with it.
    [read_call] = blocks(second, CourseToolCallBlock)
    assert read_call.id.startswith("pyd_ai_")


def test_langchain_chat_google_generative_ai_tool_loop_reads() -> None:
    messages_module = pytest.importorskip("langchain_core.messages")
    tools = pytest.importorskip("langchain_core.tools")
    langchain_google_genai = pytest.importorskip("langchain_google_genai")
    with serve(frameworks.ROUND_TRIP) as server:
        model = langchain_google_genai.ChatGoogleGenerativeAI(
            model=frameworks.MODEL, api_key="test", base_url=server.url, max_retries=0
        )
        bound = model.bind_tools([tools.tool(frameworks.add)])
        history: list[Any] = [messages_module.HumanMessage(frameworks.QUESTION)]
        first = bound.invoke(history)
        [tool_call] = first.tool_calls
        result = messages_module.ToolMessage("42", tool_call_id=tool_call["id"])
        list(bound.stream([*history, first, result]))
        second = assert_loop_reads(server)
    # LangChain sends neither id back: the call is recognised by its name and args.
    assert [b.id for b in blocks(second, CourseToolCallBlock)] == ["resp-1:call:0"]


# -- any body -------------------------------------------------------------------------------

_TEXT = st.text(max_size=5)
_PARTS = st.one_of(
    st.builds(lambda t: {"text": t}, _TEXT),
    st.builds(lambda t, s: {"text": t, "thought": True, "thoughtSignature": s}, _TEXT, _TEXT),
    st.builds(
        lambda n, a, s: {"functionCall": {"name": n, "args": a}, "thoughtSignature": s},
        st.sampled_from(["add", "mul"]), st.dictionaries(_TEXT, st.integers(), max_size=2), _TEXT,
    ),
    st.builds(
        lambda n, i: {"functionResponse": {"name": n, "response": {"r": 1}, **i}},
        st.sampled_from(["add", "mul"]), st.sampled_from([{}, {"id": "c"}]),
    ),
    st.just({"inline_data": {"mime_type": "image/png", "data": "iVBO"}}),
)  # fmt: skip
_CONTENTS = st.builds(
    lambda role, parts: {"role": role, "parts": parts},
    st.sampled_from(["user", "model", "function", "tool"]),
    st.lists(_PARTS, max_size=3),
)
shaped_bodies = st.fixed_dictionaries(
    {
        "systemInstruction": st.just({"parts": [{"text": "s"}], "role": "user"}),
        "contents": st.lists(_CONTENTS, max_size=4),
        "tools": st.just([{"functionDeclarations": [{"name": "add"}]}, {"googleSearch": {}}]),
    }
)
_SENT = log(
    ("r", [CourseToolCallBlock("r:call:0", "add", {}), CourseToolCallBlock("r:call:1", "mul", {})])
)


def assert_reads_or_refuses(body: dict[str, Any]) -> None:
    try:
        got = read_request(body, "req-1", _SENT)
    except RequestReadError as error:
        assert error.problem.startswith("course read: ")
        return
    assert len(got.places) == len(got.messages)
    for message, places in zip(got.messages, got.places, strict=True):
        assert len(places) == len(message.content)
        assert all(p == "systemInstruction" or p.startswith("contents[") for p in places)
    json.dumps(got.request.to_dict())  # plain JSON all the way down


@given(json_bodies)
def test_any_json_body_reads_or_is_a_read_problem(body: dict[str, Any]) -> None:
    assert_reads_or_refuses(body)


@given(shaped_bodies)
def test_a_well_shaped_body_reads(body: dict[str, Any]) -> None:
    got = read(body, _SENT)
    assert len(got.messages) == 1 + len(body["contents"])


@given(shaped_bodies.flatmap(mutated))
def test_a_broken_body_reads_or_is_a_read_problem(body: dict[str, Any]) -> None:
    assert_reads_or_refuses(body)
