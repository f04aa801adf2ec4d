"""The course model in schema version 2: the new chunk and block types, the new fields of
the version-1 types, their constructors, ``to_dict()`` key sets, and the guarantees every
value keeps (frozen, slotted, compared by value, copied and pickled whole, bounded
``repr``). Version-1 values keep their exact key sets and ``repr``."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import pickle
import typing
from typing import Any, cast

import pytest

import course
from course import (
    CourseAssistantMessage,
    CourseIncompleteToolCallBlock,
    CourseIncompleteToolCallChunk,
    CourseModelResponse,
    CourseModelUsage,
    CourseRedactedThinkingBlock,
    CourseRedactedThinkingChunk,
    CourseRefusalBlock,
    CourseRefusalDeltaChunk,
    CourseStopReason,
    CourseTextBlock,
    CourseTextDeltaChunk,
    CourseThinkingBlock,
    CourseThinkingDeltaChunk,
    CourseThinkingSignatureChunk,
    CourseToolCallBlock,
    CourseToolCallChunk,
    FixtureProviderError,
    FixtureProviderErrorCode,
)

Code = FixtureProviderErrorCode
LONG = "x" * 10_000

# Each new class: built positionally in the SPEC's order, its ``type``, its to_dict().
NEW_VALUES: list[tuple[object, str, dict[str, object]]] = [
    (
        CourseIncompleteToolCallChunk("c-1", "write", '{"pa', 3),
        "incompleteToolCall",
        {
            "type": "incompleteToolCall",
            "id": "c-1",
            "name": "write",
            "argumentsText": '{"pa',
            "contentIndex": 3,
        },
    ),
    (
        CourseThinkingDeltaChunk("hm", 0),
        "thinkingDelta",
        {"type": "thinkingDelta", "text": "hm", "contentIndex": 0},
    ),
    (
        CourseThinkingSignatureChunk("sig", 0),
        "thinkingSignature",
        {"type": "thinkingSignature", "signature": "sig", "contentIndex": 0},
    ),
    (
        CourseRedactedThinkingChunk("enc", 2),
        "redactedThinking",
        {"type": "redactedThinking", "data": "enc", "contentIndex": 2},
    ),
    (
        CourseRefusalDeltaChunk("no", 1),
        "refusalDelta",
        {"type": "refusalDelta", "text": "no", "contentIndex": 1},
    ),
    (
        CourseIncompleteToolCallBlock("c-1", "write", '{"pa'),
        "incompleteToolCall",
        {"type": "incompleteToolCall", "id": "c-1", "name": "write", "argumentsText": '{"pa'},
    ),
    (
        CourseThinkingBlock("ab", "sig"),
        "thinking",
        {"type": "thinking", "text": "ab", "signature": "sig"},
    ),
    (CourseThinkingBlock("ab", None), "thinking", {"type": "thinking", "text": "ab"}),
    (
        CourseRedactedThinkingBlock("enc"),
        "redactedThinking",
        {"type": "redactedThinking", "data": "enc"},
    ),
    (CourseRefusalBlock("no"), "refusal", {"type": "refusal", "text": "no"}),
]
IDS = [f"{type(value).__name__}-{index}" for index, (value, _, _) in enumerate(NEW_VALUES)]
VALUES = [value for value, _, _ in NEW_VALUES]

USAGE = CourseModelUsage(10, 5, cache_read_tokens=4, cache_write_tokens=0, reasoning_tokens=2)
ARGUMENTS: Any = {"a": [1]}  # plain JSON, frozen by the constructors
SIGNED_CHUNK = CourseToolCallChunk("c-2", "add", ARGUMENTS, 1, signature="ts")
SIGNED_BLOCK = CourseToolCallBlock("c-2", "add", ARGUMENTS, signature="ts")
MESSAGE = CourseAssistantMessage(
    "message-r",
    (
        CourseThinkingBlock("ab", "sig"),
        CourseTextBlock("t"),
        SIGNED_BLOCK,
        CourseRefusalBlock("no"),
        CourseRedactedThinkingBlock("enc"),
        CourseIncompleteToolCallBlock("c-3", "w", "{"),
    ),
)
RESPONSE = CourseModelResponse(
    "q", "r", MESSAGE, "length", USAGE, model="m-1", provider_stop_reason="max_tokens"
)
EVERY_VALUE = [*VALUES, USAGE, SIGNED_CHUNK, SIGNED_BLOCK, MESSAGE, RESPONSE]
EVERY_ID = [*IDS, "usage", "signed-chunk", "signed-block", "message", "response"]


@pytest.mark.parametrize(("value", "tag", "expected"), NEW_VALUES, ids=IDS)
def test_new_values_have_their_type_and_exactly_their_to_dict_keys(
    value: Any, tag: str, expected: dict[str, object]
) -> None:
    assert value.type == tag
    plain = value.to_dict()
    assert plain == expected
    assert list(plain) == list(expected)  # the SPEC's order, too
    assert json.loads(json.dumps(plain)) == plain


def test_new_classes_take_their_fields_positionally_with_content_index_last() -> None:
    expected = {
        CourseIncompleteToolCallChunk: ["id", "name", "arguments_text", "content_index"],
        CourseThinkingDeltaChunk: ["text", "content_index"],
        CourseThinkingSignatureChunk: ["signature", "content_index"],
        CourseRedactedThinkingChunk: ["data", "content_index"],
        CourseRefusalDeltaChunk: ["text", "content_index"],
        CourseIncompleteToolCallBlock: ["id", "name", "arguments_text"],
        CourseThinkingBlock: ["text", "signature"],
        CourseRedactedThinkingBlock: ["data"],
        CourseRefusalBlock: ["text"],
    }
    for cls, names in expected.items():
        parameters = inspect.signature(cls).parameters
        positional = [
            name
            for name, parameter in parameters.items()
            if parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        ]
        assert positional == names, cls
        assert parameters["type"].kind is inspect.Parameter.KEYWORD_ONLY


def test_new_fields_of_version_one_classes_are_keyword_only_and_default_to_none() -> None:
    expected = {
        CourseModelUsage: ["cache_read_tokens", "cache_write_tokens", "reasoning_tokens"],
        CourseToolCallChunk: ["signature"],
        CourseToolCallBlock: ["signature"],
        CourseModelResponse: ["model", "provider_stop_reason"],
    }
    for cls, names in expected.items():
        parameters = inspect.signature(cls).parameters
        for name in names:
            assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY, (cls, name)
            assert parameters[name].default is None, (cls, name)
    # Version-1 constructions still work, positionally.
    assert CourseModelUsage(12, 8).reasoning_tokens is None
    assert CourseToolCallChunk("c", "f", {}, 0).signature is None
    with pytest.raises(TypeError):
        CourseModelUsage(12, 8, 1)  # type: ignore[call-arg]


def test_version_one_values_keep_their_exact_keys_and_repr() -> None:
    usage = CourseModelUsage(12, 8)
    chunk = CourseToolCallChunk("c", "f", {"a": 1}, 0)
    block = CourseToolCallBlock("c", "f", {"a": 1})
    response = CourseModelResponse(
        "q", "r", CourseAssistantMessage("message-r", (block,)), "toolCall", usage
    )
    assert list(usage.to_dict()) == ["inputTokens", "outputTokens"]
    assert list(chunk.to_dict()) == ["type", "id", "name", "arguments", "contentIndex"]
    assert list(block.to_dict()) == ["type", "id", "name", "arguments"]
    assert list(response.to_dict()) == [
        "requestId",
        "responseId",
        "message",
        "stopReason",
        "usage",
    ]
    assert repr(usage) == "CourseModelUsage(input_tokens=12, output_tokens=8)"
    assert "signature" not in repr(chunk) and "signature" not in repr(block)
    assert "model" not in repr(response)


def test_new_fields_appear_in_to_dict_exactly_when_set() -> None:
    assert USAGE.to_dict() == {
        "inputTokens": 10,
        "outputTokens": 5,
        "cacheReadTokens": 4,
        "cacheWriteTokens": 0,  # zero is set
        "reasoningTokens": 2,
    }
    assert CourseModelUsage(1, 1, reasoning_tokens=0).to_dict() == {
        "inputTokens": 1,
        "outputTokens": 1,
        "reasoningTokens": 0,
    }
    assert SIGNED_CHUNK.to_dict()["signature"] == "ts"
    assert list(SIGNED_CHUNK.to_dict())[-1] == "signature"
    assert SIGNED_BLOCK.to_dict()["signature"] == "ts"
    plain = RESPONSE.to_dict()
    assert (plain["model"], plain["providerStopReason"]) == ("m-1", "max_tokens")
    only_model = dataclasses.replace(RESPONSE, provider_stop_reason=None).to_dict()
    assert "providerStopReason" not in only_model and only_model["model"] == "m-1"
    content = cast(dict[str, Any], plain["message"])["content"]
    assert [block["type"] for block in content] == [
        "thinking",
        "text",
        "toolCall",
        "refusal",
        "redactedThinking",
        "incompleteToolCall",
    ]


def test_stop_reason_is_the_literal_union_of_the_six_names() -> None:
    assert typing.get_args(CourseStopReason) == (
        "stop",
        "toolCall",
        "length",
        "contentFilter",
        "refusal",
        "pauseTurn",
    )


def test_every_new_type_is_exported_from_course() -> None:
    for name in (
        "CourseIncompleteToolCallChunk",
        "CourseThinkingDeltaChunk",
        "CourseThinkingSignatureChunk",
        "CourseRedactedThinkingChunk",
        "CourseRefusalDeltaChunk",
        "CourseIncompleteToolCallBlock",
        "CourseThinkingBlock",
        "CourseRedactedThinkingBlock",
        "CourseRefusalBlock",
    ):
        assert name in course.__all__
        assert getattr(course, name).__module__ == "course._model"


# -- the guarantees every value keeps --------------------------------------------------------


@pytest.mark.parametrize("value", EVERY_VALUE, ids=EVERY_ID)
def test_values_are_frozen_and_slotted(value: Any) -> None:
    for field in dataclasses.fields(value):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field.name, "changed")
    with pytest.raises((AttributeError, TypeError)):
        value.brand_new_attribute = 1
    assert not hasattr(value, "__dict__")
    assert "__slots__" in type(value).__dict__


@pytest.mark.parametrize("value", EVERY_VALUE, ids=EVERY_ID)
@pytest.mark.parametrize("protocol", [0, pickle.HIGHEST_PROTOCOL])
def test_values_survive_copies_and_pickling_equal(value: Any, protocol: int) -> None:
    for copied in (
        copy.copy(value),
        copy.deepcopy(value),
        pickle.loads(pickle.dumps(value, protocol)),
    ):
        assert copied == value
        assert type(copied) is type(value)
        assert copied.to_dict() == value.to_dict()


def test_values_compare_by_value() -> None:
    assert CourseThinkingBlock("a", "s") == CourseThinkingBlock("a", "s")
    assert CourseThinkingBlock("a", "s") != CourseThinkingBlock("a", None)
    assert cast(object, CourseRefusalBlock("a")) != CourseTextBlock("a")
    assert CourseModelUsage(1, 1, cache_read_tokens=0) != CourseModelUsage(1, 1)
    assert cast(object, CourseThinkingDeltaChunk("a", 0)) != CourseTextDeltaChunk("a", 0)


def test_repr_of_every_new_value_is_bounded() -> None:
    for value in (
        CourseIncompleteToolCallChunk(LONG, LONG, LONG, 0),
        CourseThinkingDeltaChunk(LONG, 0),
        CourseThinkingSignatureChunk(LONG, 0),
        CourseRedactedThinkingChunk(LONG, 0),
        CourseRefusalDeltaChunk(LONG, 0),
        CourseIncompleteToolCallBlock(LONG, LONG, LONG),
        CourseThinkingBlock(LONG, LONG),
        CourseRedactedThinkingBlock(LONG),
        CourseRefusalBlock(LONG),
        CourseToolCallChunk(LONG, LONG, {}, 0, signature=LONG),
        CourseModelResponse("q", "r", MESSAGE, "stop", USAGE, model=LONG),
    ):
        assert len(repr(value)) < 1_000, type(value)


def test_a_message_copies_its_content_into_a_tuple() -> None:
    message = CourseAssistantMessage("m", cast(Any, [CourseRefusalBlock("no")]))
    assert type(message.content) is tuple


# -- the error's new attributes --------------------------------------------------------------


def test_error_transport_status_and_retry_after_default_to_none() -> None:
    error = FixtureProviderError(Code.PROVIDER_TRANSPORT_ERROR, "m")
    assert (error.transport_status, error.transport_retry_after) == (None, None)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_error_transport_status_and_retry_after_survive_pickling(protocol: int) -> None:
    error = FixtureProviderError(Code.PROVIDER_TRANSPORT_ERROR, "m", path="/responses/0")
    error.transport_message, error.transport_code = "Too many requests", "rate_limit"
    error.transport_status, error.transport_retry_after = 429, 1.5
    copied = pickle.loads(pickle.dumps(error, protocol))
    assert (copied.transport_status, copied.transport_retry_after) == (429, 1.5)
    assert (copied.transport_message, copied.transport_code) == ("Too many requests", "rate_limit")
    assert str(copied) == str(error)
