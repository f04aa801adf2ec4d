"""The course model protocol: immutable values, their plain JSON, ``thaw``, the error
type and the public names of the package."""

from __future__ import annotations

import collections
import copy
import dataclasses
import enum
import importlib
import inspect
import json
import pickle
import typing
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, cast

import pytest

import course
from course import (
    CourseAssistantMessage,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
    CourseModelUsage,
    CourseStopReason,
    CourseTextBlock,
    CourseTextDeltaChunk,
    CourseToolCallBlock,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    thaw,
)
from course._json import JsonArray, JsonObject, JsonValue, refreeze

from .helpers import Outcome, collect, end, fixture, roundtrip, run, start, text, tool

Code = FixtureProviderErrorCode

SPEC_PUBLIC_NAMES = {
    "FixtureProviderAdapter",
    "CourseModelStream",
    "CourseModelRequest",
    "CourseTextDeltaChunk",
    "CourseToolCallChunk",
    "CourseModelChunk",
    "CourseTextBlock",
    "CourseToolCallBlock",
    "CourseAssistantMessage",
    "CourseModelUsage",
    "CourseStopReason",
    "CourseModelResponse",
    "FixtureProviderError",
    "FixtureProviderErrorCode",
    "AbortController",
    "AbortSignal",
    "load_fixture",
    "thaw",
    # Schema version 2 (SPEC-V2.md): the new chunk and block types.
    "CourseIncompleteToolCallChunk",
    "CourseThinkingDeltaChunk",
    "CourseThinkingSignatureChunk",
    "CourseRedactedThinkingChunk",
    "CourseRefusalDeltaChunk",
    "CourseIncompleteToolCallBlock",
    "CourseThinkingBlock",
    "CourseRedactedThinkingBlock",
    "CourseRefusalBlock",
    # What the agent sends (SPEC-REQUESTS.md).
    "CourseRequestMessage",
    "CourseToolResultBlock",
    "CourseOtherBlock",
    "CourseTool",
}

SPEC_CODES = {
    "PROVIDER_INVALID_FIXTURE",
    "PROVIDER_EXHAUSTED",
    "PROVIDER_ABORTED",
    "PROVIDER_UNKNOWN_EVENT",
    "PROVIDER_MALFORMED_EVENT",
    "PROVIDER_MISSING_START",
    "PROVIDER_DUPLICATE_START",
    "PROVIDER_DUPLICATE_TOOL_CALL",
    "PROVIDER_RESPONSE_MISMATCH",
    "PROVIDER_STOP_REASON_MISMATCH",
    "PROVIDER_MISSING_TERMINAL",
    "PROVIDER_DUPLICATE_TERMINAL",
    "PROVIDER_INVALID_TERMINAL",
    "PROVIDER_TRANSPORT_ERROR",
    "PROVIDER_STREAM_CONSUMED",
    "PROVIDER_OUT_OF_ORDER",  # schema version 2
}

# Arguments as the adapter emits them: read-only mappings and tuples all the way down.
ARGUMENTS_JSON = {"left": 20, "nested": {"xs": [1, {"y": None}]}}
ARGUMENTS = cast(Mapping[str, JsonValue], refreeze(cast(Any, ARGUMENTS_JSON)))

TEXT_CHUNK = CourseTextDeltaChunk("hi", 0)
TOOL_CHUNK = CourseToolCallChunk("c1", "add", ARGUMENTS, 1)
TEXT_BLOCK = CourseTextBlock("hi")
TOOL_BLOCK = CourseToolCallBlock("c1", "add", ARGUMENTS)
MESSAGE = CourseAssistantMessage("message-r1", (TEXT_BLOCK, TOOL_BLOCK))
USAGE = CourseModelUsage(12, 8)
RESPONSE = CourseModelResponse("req-1", "r1", MESSAGE, "toolCall", USAGE)

MESSAGE_JSON = {
    "id": "message-r1",
    "role": "assistant",
    "content": [
        {"type": "text", "text": "hi"},
        {"type": "toolCall", "id": "c1", "name": "add", "arguments": ARGUMENTS_JSON},
    ],
}
EXPECTED_DICTS: list[tuple[object, object]] = [
    (TEXT_CHUNK, {"type": "textDelta", "text": "hi", "contentIndex": 0}),
    (
        TOOL_CHUNK,
        {
            "type": "toolCall",
            "id": "c1",
            "name": "add",
            "arguments": ARGUMENTS_JSON,
            "contentIndex": 1,
        },
    ),
    (TEXT_BLOCK, {"type": "text", "text": "hi"}),
    (TOOL_BLOCK, {"type": "toolCall", "id": "c1", "name": "add", "arguments": ARGUMENTS_JSON}),
    (MESSAGE, MESSAGE_JSON),
    (USAGE, {"inputTokens": 12, "outputTokens": 8}),
    (
        RESPONSE,
        {
            "requestId": "req-1",
            "responseId": "r1",
            "message": MESSAGE_JSON,
            "stopReason": "toolCall",
            "usage": {"inputTokens": 12, "outputTokens": 8},
        },
    ),
]
VALUES = [value for value, _ in EXPECTED_DICTS]
IDS = [type(value).__name__ for value in VALUES]


def emitted(records: list[object]) -> Outcome:
    return run(collect(FixtureProviderAdapter(fixture(records)).stream(CourseModelRequest("q"))))


def to_dict(value: object) -> object:
    method = getattr(value, "to_dict")  # noqa: B009 - every value has one
    return method()


def assert_plain(value: object) -> None:
    """Only dict, list and JSON scalars, by exact type, all the way down."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            assert all(type(key) is str for key in cast(dict[object, object], item))
            stack.extend(cast(dict[str, object], item).values())
        elif kind is list:
            stack.extend(cast(list[object], item))
        else:
            assert item is None or kind in (str, int, float, bool), f"not plain: {item!r}"


# -- to_dict -----------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), EXPECTED_DICTS, ids=IDS)
def test_to_dict_gives_exactly_the_spec_camel_case_json(value: object, expected: object) -> None:
    plain = to_dict(value)
    assert plain == expected
    assert isinstance(plain, dict) and isinstance(expected, dict)
    assert set(plain) == set(expected)
    assert_plain(plain)
    assert json.loads(json.dumps(plain)) == expected


@pytest.mark.parametrize("value", VALUES, ids=IDS)
def test_to_dict_is_a_fresh_mutable_copy(value: object) -> None:
    first = to_dict(value)
    second = to_dict(value)
    assert first == second
    assert first is not second
    assert isinstance(first, dict)
    first.clear()
    assert to_dict(value) == second


def test_tool_arguments_in_to_dict_do_not_write_back() -> None:
    plain = TOOL_CHUNK.to_dict()
    arguments = cast(dict[str, Any], plain["arguments"])
    arguments["nested"]["xs"].append(3)
    arguments["new"] = 1
    assert TOOL_CHUNK.arguments == ARGUMENTS
    assert TOOL_CHUNK.to_dict()["arguments"] == ARGUMENTS_JSON


def test_emitted_roundtrip_response_to_dict_matches_the_spec() -> None:
    async def go() -> tuple[Outcome, Outcome]:
        adapter = FixtureProviderAdapter(roundtrip())
        first = await collect(adapter.stream(CourseModelRequest("req-a")))
        second = await collect(adapter.stream(CourseModelRequest("req-b")))
        return first, second

    first, second = run(go())
    assert first.response is not None and second.response is not None
    assert [chunk.to_dict() for chunk in first.chunks] == [
        {
            "type": "toolCall",
            "id": "call-add-001",
            "name": "add",
            "arguments": {"left": 20, "right": 22},
            "contentIndex": 0,
        }
    ]
    assert first.response.to_dict() == {
        "requestId": "req-a",
        "responseId": "response-tool-001",
        "message": {
            "id": "message-response-tool-001",
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "call-add-001",
                    "name": "add",
                    "arguments": {"left": 20, "right": 22},
                }
            ],
        },
        "stopReason": "toolCall",
        "usage": {"inputTokens": 12, "outputTokens": 8},
    }
    assert [chunk.to_dict() for chunk in second.chunks] == [
        {"type": "textDelta", "text": "The sum is 42.", "contentIndex": 0}
    ]
    assert second.response.to_dict() == {
        "requestId": "req-b",
        "responseId": "response-text-001",
        "message": {
            "id": "message-response-text-001",
            "role": "assistant",
            "content": [{"type": "text", "text": "The sum is 42."}],
        },
        "stopReason": "stop",
        "usage": {"inputTokens": 30, "outputTokens": 6},
    }
    assert json.loads(json.dumps(second.response.to_dict())) == second.response.to_dict()


def test_type_and_role_tags_are_fixed() -> None:
    assert TEXT_CHUNK.type == "textDelta"
    assert TOOL_CHUNK.type == "toolCall"
    assert TEXT_BLOCK.type == "text"
    assert TOOL_BLOCK.type == "toolCall"
    assert MESSAGE.role == "assistant"


# -- thaw ----------------------------------------------------------------------------------


def test_thaw_gives_plain_mutable_deep_copies() -> None:
    plain = thaw(ARGUMENTS)
    assert plain == ARGUMENTS_JSON
    assert_plain(plain)
    mutable = cast(dict[str, Any], plain)
    mutable["nested"]["xs"][1]["y"] = "changed"
    mutable["left"] = 0
    assert ARGUMENTS["left"] == 20
    assert thaw(ARGUMENTS) == ARGUMENTS_JSON
    assert thaw(ARGUMENTS) is not thaw(ARGUMENTS)


@pytest.mark.parametrize("scalar", ["s", "", 0, -7, 2**80, 1.5, True, False, None], ids=repr)
def test_thaw_returns_scalars_as_they_are(scalar: object) -> None:
    thawed = thaw(cast(Any, scalar))
    assert thawed == scalar
    assert type(thawed) is type(scalar)


def test_thaw_turns_tuples_into_lists() -> None:
    assert thaw((1, (2, JsonObject({"a": ()})))) == [1, [2, {"a": []}]]
    assert type(thaw(())) is list


def test_thaw_preserves_sharing_within_one_value() -> None:
    shared = JsonObject({"x": (1, 2)})
    shared_list = JsonArray((3, 4))
    value = JsonObject({"a": shared, "b": shared, "c": (shared_list, shared_list)})
    plain = cast(dict[str, Any], thaw(cast(Any, value)))
    assert plain["a"] is plain["b"]
    assert plain["c"][0] is plain["c"][1]
    assert plain["a"] == {"x": [1, 2]}


def test_emitted_arguments_keep_sharing_through_adapter_and_thaw() -> None:
    shared: dict[str, object] = {"deep": [1, 2, 3]}
    outcome = emitted(
        [start(), tool("c1", "f", a=shared, b=shared, c=[shared]), end(stop_reason="tool_call")]
    )
    chunk = outcome.chunks[0]
    assert isinstance(chunk, CourseToolCallChunk)
    assert chunk.arguments["a"] is chunk.arguments["b"]
    plain = cast(dict[str, Any], thaw(chunk.arguments))
    assert plain["a"] is plain["b"] is plain["c"][0]
    plain["a"]["deep"].append(4)
    assert plain["b"]["deep"] == [1, 2, 3, 4]
    assert chunk.arguments["a"] == {"deep": (1, 2, 3)}


def test_thaw_of_a_wide_shared_graph_never_expands_into_a_tree() -> None:
    # 40 levels, each holding the level below twice: 2**40 paths, 40 containers.
    value: object = JsonObject({"leaf": 1})
    for _ in range(40):
        value = (value, value)
    plain = thaw(cast(Any, value))
    depth = 0
    while isinstance(plain, list):
        assert plain[0] is plain[1]
        plain = plain[0]
        depth += 1
    assert depth == 40
    assert plain == {"leaf": 1}


def test_thaw_of_deep_nesting_is_iterative() -> None:
    value: object = "bottom"
    for _ in range(10_000):
        value = (value,)
    plain = thaw(cast(Any, value))
    for _ in range(10_000):
        assert isinstance(plain, list)
        plain = plain[0]
    assert plain == "bottom"


class _Str(str):
    pass


class _Int(enum.IntEnum):
    ONE = 1


@pytest.mark.parametrize(
    "value",
    [
        object(),
        {1, 2},
        frozenset(),
        b"bytes",
        bytearray(b"x"),
        1j,
        _Str("x"),
        _Int.ONE,
        {1: "int key"},
        {"nested": object()},
        (1, {"nested": {1, 2}}),
        (
            1,
            (2, {3}),
        ),
        {"k": b"v"},
        {None: 1},
    ],
    ids=lambda value: type(value).__name__,
)
def test_thaw_rejects_non_json_with_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="thaw"):
        thaw(cast(Any, value))


# -- immutability --------------------------------------------------------------------------

ALL_VALUES = [*VALUES, CourseModelRequest("req-1", ("m",), ("t",))]
ALL_IDS = [type(value).__name__ for value in ALL_VALUES]


@pytest.mark.parametrize("value", ALL_VALUES, ids=ALL_IDS)
def test_values_are_frozen(value: object) -> None:
    for field in dataclasses.fields(cast(Any, value)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field.name, "changed")
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(value, field.name)
    # A new name fails too: FrozenInstanceError, or on CPython 3.11 a TypeError from the
    # frozen __setattr__ of a slots=True dataclass (its ``super(cls, self)`` names the
    # class before slots were added).
    with pytest.raises((AttributeError, TypeError)):
        cast(Any, value).brand_new_attribute = 1
    assert not hasattr(value, "brand_new_attribute")


@pytest.mark.parametrize("value", ALL_VALUES, ids=ALL_IDS)
def test_values_are_slotted(value: object) -> None:
    assert not hasattr(value, "__dict__")
    assert "__slots__" in type(value).__dict__
    assert dataclasses.is_dataclass(value)
    assert cast(Any, type(value)).__dataclass_params__.frozen


def test_sequences_of_values_are_tuples() -> None:
    outcome = emitted([start(), text("a"), tool("c1", "f"), end(stop_reason="tool_call")])
    assert outcome.response is not None
    assert type(outcome.response.message.content) is tuple
    request = CourseModelRequest("r", messages=cast(Any, ()), tools=())
    assert type(request.messages) is tuple and type(request.tools) is tuple


def test_emitted_arguments_are_read_only_all_the_way_down() -> None:
    arguments = {"obj": {"inner": {"k": 1}}, "list": [1, {"x": [2]}], "n": None}
    outcome = emitted([start(), tool("c1", "f", **arguments), end(stop_reason="tool_call")])
    assert outcome.response is not None
    chunk = outcome.chunks[0]
    block = outcome.response.message.content[0]
    assert isinstance(chunk, CourseToolCallChunk)
    assert isinstance(block, CourseToolCallBlock)
    for args in (chunk.arguments, block.arguments):
        assert thaw(args) == arguments
        assert type(args) is JsonObject and isinstance(args, Mapping)
        inner = cast(Any, args["obj"])
        assert type(inner) is JsonObject
        assert type(inner["inner"]) is JsonObject
        items = cast(Any, args["list"])
        assert type(items) is JsonArray and isinstance(items, tuple)
        assert type(items[1]) is JsonObject
        assert type(items[1]["x"]) is JsonArray
        for mapping in (args, inner, inner["inner"], items[1]):
            with pytest.raises(TypeError):
                cast(Any, mapping)["new"] = 1
            with pytest.raises(TypeError):
                del cast(Any, mapping)[next(iter(mapping))]
            assert not hasattr(mapping, "__setitem__")
        with pytest.raises(TypeError):
            cast(Any, items)[0] = 5


def test_caller_fixture_changes_do_not_reach_emitted_arguments() -> None:
    inner: dict[str, object] = {"k": [1]}
    records: list[object] = [start(), tool("c1", "f", inner=inner), end(stop_reason="tool_call")]
    adapter = FixtureProviderAdapter(fixture(records))
    cast(list[object], inner["k"]).append(2)
    inner["other"] = True
    outcome = run(collect(adapter.stream(CourseModelRequest("q"))))
    chunk = outcome.chunks[0]
    assert isinstance(chunk, CourseToolCallChunk)
    assert chunk.arguments == {"inner": {"k": (1,)}}


# -- equality ------------------------------------------------------------------------------


def test_values_compare_by_value() -> None:
    assert CourseTextDeltaChunk("a", 0) == CourseTextDeltaChunk("a", 0)
    assert CourseTextDeltaChunk("a", 0) != CourseTextDeltaChunk("a", 1)
    assert CourseTextDeltaChunk("a", 0) != CourseTextDeltaChunk("b", 0)
    assert CourseTextBlock("a") == CourseTextBlock("a")
    assert CourseModelUsage(1, 2) == CourseModelUsage(1, 2)
    assert CourseModelUsage(1, 2) != CourseModelUsage(2, 1)
    assert CourseToolCallChunk("c1", "add", {**ARGUMENTS}, 1) == TOOL_CHUNK
    assert CourseToolCallChunk("c1", "add", {"left": 21}, 1) != TOOL_CHUNK
    assert cast(object, CourseToolCallBlock("c1", "add", {})) != CourseToolCallChunk(
        "c1", "add", {}, 0
    )
    assert cast(object, CourseTextBlock("a")) != CourseTextDeltaChunk("a", 0)
    rebuilt = CourseModelResponse(
        "req-1",
        "r1",
        CourseAssistantMessage("message-r1", (CourseTextBlock("hi"), TOOL_BLOCK)),
        "toolCall",
        CourseModelUsage(12, 8),
    )
    assert rebuilt == RESPONSE
    assert rebuilt != dataclasses.replace(RESPONSE, stop_reason="stop")


def test_two_streams_of_equal_records_give_equal_values() -> None:
    records: list[object] = [
        start(),
        text("a"),
        tool("c", "f", x=[1]),
        end(stop_reason="tool_call"),
    ]
    first, second = emitted(records), emitted(records)
    assert first.chunks == second.chunks
    assert first.response == second.response
    assert first.response is not second.response


# -- the request ---------------------------------------------------------------------------


def test_request_defaults_to_empty_messages_and_tools() -> None:
    request = CourseModelRequest("req-1")
    assert request.id == "req-1"
    assert request.messages == ()
    assert request.tools == ()
    assert request == CourseModelRequest("req-1", (), ())
    assert CourseModelRequest(id="x", messages=("m",), tools=("t",)).messages == ("m",)
    params = inspect.signature(CourseModelRequest).parameters
    assert list(params) == ["id", "messages", "tools"]
    assert params["messages"].default == ()
    assert params["tools"].default == ()


# -- typing aliases ------------------------------------------------------------------------


def test_stop_reason_and_chunk_aliases_name_the_spec_types() -> None:
    # Version 2 (SPEC-V2.md) adds four stop reasons and five chunk types.
    assert typing.get_args(CourseStopReason) == (
        "stop",
        "toolCall",
        "length",
        "contentFilter",
        "refusal",
        "pauseTurn",
    )
    assert set(typing.get_args(CourseModelChunk)) == {
        CourseTextDeltaChunk,
        CourseToolCallChunk,
        course.CourseIncompleteToolCallChunk,
        course.CourseThinkingDeltaChunk,
        course.CourseThinkingSignatureChunk,
        course.CourseRedactedThinkingChunk,
        course.CourseRefusalDeltaChunk,
    }


# -- the error code ------------------------------------------------------------------------


def test_error_code_is_a_str_enum_whose_values_are_its_names() -> None:
    assert issubclass(FixtureProviderErrorCode, enum.StrEnum)
    assert {member.name for member in FixtureProviderErrorCode} == SPEC_CODES
    for member in FixtureProviderErrorCode:
        assert member.value == member.name
        assert str(member) == member.name
        assert member == member.name
        assert f"{member}" == member.name
        assert FixtureProviderErrorCode(member.name) is member
        assert json.dumps(member) == json.dumps(member.name)


# -- the error -----------------------------------------------------------------------------


def test_error_constructor_has_the_spec_signature() -> None:
    params = inspect.signature(FixtureProviderError).parameters
    assert list(params) == ["code", "message", "response_index", "record_index", "path"]
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert params["code"].kind is positional and params["message"].kind is positional
    for name in ("response_index", "record_index", "path"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[name].default is None
    with pytest.raises(TypeError):
        FixtureProviderError(Code.PROVIDER_ABORTED, "m", 1)  # type: ignore[call-arg]


def test_error_attributes_default_to_none() -> None:
    error = FixtureProviderError(Code.PROVIDER_EXHAUSTED, "no responses left")
    assert isinstance(error, Exception)
    assert error.code is Code.PROVIDER_EXHAUSTED
    assert error.message == "no responses left"
    assert (error.response_index, error.record_index, error.path) == (None, None, None)


def test_error_takes_its_code_as_a_member_or_its_name() -> None:
    error = FixtureProviderError(
        "PROVIDER_MALFORMED_EVENT",
        "bad usage",
        response_index=1,
        record_index=2,
        path="/responses/1/records/2/usage",
    )
    assert error.code is Code.PROVIDER_MALFORMED_EVENT
    assert (error.response_index, error.record_index) == (1, 2)
    assert error.path == "/responses/1/records/2/usage"


LOCATED = FixtureProviderError(
    Code.PROVIDER_MALFORMED_EVENT,
    "Expected an integer, got boolean `true`",
    response_index=0,
    record_index=2,
    path="/responses/0/records/2/usage/input_tokens",
)


def test_error_str_names_code_message_and_path() -> None:
    rendered = str(LOCATED)
    assert "PROVIDER_MALFORMED_EVENT" in rendered
    assert "Expected an integer, got boolean `true`" in rendered
    assert "/responses/0/records/2/usage/input_tokens" in rendered
    bare = str(FixtureProviderError(Code.PROVIDER_EXHAUSTED, "empty"))
    assert "PROVIDER_EXHAUSTED" in bare and "empty" in bare and "None" not in bare


def test_error_repr_shows_every_attribute_and_evaluates_back() -> None:
    rendered = repr(LOCATED)
    for part in (
        "PROVIDER_MALFORMED_EVENT",
        "response_index=0",
        "record_index=2",
        "path='/responses/0/records/2/usage/input_tokens'",
    ):
        assert part in rendered
    rebuilt = eval(rendered, {"FixtureProviderError": FixtureProviderError})
    assert isinstance(rebuilt, FixtureProviderError)
    assert rebuilt.code is LOCATED.code
    assert (rebuilt.message, rebuilt.response_index, rebuilt.record_index, rebuilt.path) == (
        LOCATED.message,
        LOCATED.response_index,
        LOCATED.record_index,
        LOCATED.path,
    )


@pytest.mark.parametrize(
    "error",
    [LOCATED, FixtureProviderError(Code.PROVIDER_ABORTED, "closed", response_index=3)],
    ids=["located", "partial"],
)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_error_survives_pickling(error: FixtureProviderError, protocol: int) -> None:
    copied = pickle.loads(pickle.dumps(error, protocol=protocol))
    assert type(copied) is FixtureProviderError
    assert copied.code is error.code
    assert copied.message == error.message
    assert copied.response_index == error.response_index
    assert copied.record_index == error.record_index
    assert copied.path == error.path
    assert str(copied) == str(error)


def test_emitted_error_survives_pickling() -> None:
    outcome = emitted([start(), text("a"), end("other")])
    error = outcome.error
    assert error is not None
    copied = pickle.loads(pickle.dumps(error))
    assert copied.code is Code.PROVIDER_RESPONSE_MISMATCH
    assert (copied.response_index, copied.record_index, copied.path) == (
        0,
        2,
        "/responses/0/records/2/responseId",
    )


# -- the public names ----------------------------------------------------------------------


def test_all_is_exactly_the_spec_public_names() -> None:
    assert sorted(course.__all__) == sorted(SPEC_PUBLIC_NAMES)
    assert len(course.__all__) == len(set(course.__all__))


@pytest.mark.parametrize("name", sorted(SPEC_PUBLIC_NAMES))
def test_each_public_name_is_importable(name: str) -> None:
    module = importlib.import_module("course")
    assert getattr(module, name) is not None
    namespace: dict[str, object] = {}
    exec(f"from course import {name}", namespace)
    assert namespace[name] is getattr(course, name)


def test_star_import_gives_exactly_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from course import *", namespace)
    assert set(namespace) - {"__builtins__"} == SPEC_PUBLIC_NAMES


# -- hand-built values -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        MappingProxyType({"a": [1]}),
        collections.UserDict(a=[1]),
        collections.OrderedDict(a=[1]),
        [("a", [1])],
        (("a", 1),),
        "a=1",
        None,
    ],
    ids=lambda value: type(value).__name__,
)
def test_hand_built_tool_values_refuse_arguments_that_are_not_a_dict(arguments: object) -> None:
    # Before, a non-dict mapping was kept as it was, mutable inside, by a value whose
    # copy and deepcopy return itself.
    with pytest.raises(TypeError, match="arguments"):
        CourseToolCallBlock("c", "n", cast(Any, arguments))
    with pytest.raises(TypeError, match="arguments"):
        CourseToolCallChunk("c", "n", cast(Any, arguments), 0)


@pytest.mark.parametrize(
    "inner",
    [MappingProxyType({}), {1, 2}, float("nan"), 10**4300, object(), collections.UserList()],
    ids=["mappingproxy", "set", "nan", "int of 4301 digits", "object", "UserList"],
)
def test_hand_built_arguments_must_be_plain_json_inside(inner: object) -> None:
    with pytest.raises(TypeError, match="/a/0"):
        CourseToolCallBlock("c", "n", {"a": [inner]})  # type: ignore[dict-item]


def test_hand_built_tool_values_keep_nothing_mutable() -> None:
    shared: list[object] = [1]
    arguments: dict[str, Any] = {"a": shared, "m": {"k": shared}, "t": (1, [2])}
    block = CourseToolCallBlock("c", "n", arguments)
    chunk = CourseToolCallChunk("c", "n", block.arguments, 0)
    assert chunk.arguments is block.arguments  # already read-only: kept as it is
    shared.append(2)
    arguments["m"]["k"] = None
    arguments["b"] = 1
    expected = {"a": [1], "m": {"k": [1]}, "t": [1, [2]]}
    assert thaw(block.arguments) == expected
    frozen: Any = block.arguments
    assert frozen["a"] is frozen["m"]["k"]
    for value in (block, chunk):
        assert copy.deepcopy(value) is value
        assert copy.copy(value) is value
        assert thaw(pickle.loads(pickle.dumps(value)).arguments) == expected


def test_a_read_only_object_or_array_built_by_hand_is_frozen_too() -> None:
    inner: list[object] = [1]
    built = JsonObject({"a": inner, "b": JsonArray([inner, {}])})
    inner.append(2)
    assert thaw(built) == {"a": [1], "b": [[1], {}]}
    assert type(built["b"]) is JsonArray and type(built["a"]) is JsonArray
    with pytest.raises(TypeError):
        JsonObject({"a": object()})
    with pytest.raises(TypeError):
        JsonArray([{1: 2}])
