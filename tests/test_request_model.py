"""The request side of the model (SPEC-REQUESTS): frozen values, read-only JSON all the
way down when built by hand, and ``to_dict()`` in camelCase."""

from __future__ import annotations

import dataclasses

import pytest

from course import (
    CourseOtherBlock,
    CourseRequestMessage,
    CourseTextBlock,
    CourseTool,
    CourseToolCallBlock,
    CourseToolResultBlock,
)
from course.vendors import ServedCall


def test_a_message_is_frozen_and_keeps_its_content_as_a_tuple() -> None:
    message = CourseRequestMessage("user", [CourseTextBlock("hi")])  # type: ignore[arg-type]
    assert message.content == (CourseTextBlock("hi"),)
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.role = "assistant"  # type: ignore[misc]
    assert message.to_dict() == {"role": "user", "content": [{"type": "text", "text": "hi"}]}


def test_a_tool_result_freezes_json_content_and_keeps_a_string() -> None:
    assert CourseToolResultBlock("c1", "42").content == "42"
    plain = [{"type": "text", "text": "42"}]
    block = CourseToolResultBlock("c1", plain, is_error=True)  # type: ignore[arg-type]
    plain[0]["text"] = "changed"
    assert block.to_dict() == {
        "type": "toolResult",
        "toolCallId": "c1",
        "content": [{"type": "text", "text": "42"}],
        "isError": True,
    }
    with pytest.raises(TypeError):
        block.content[0]["text"] = "x"  # type: ignore[index]


def test_an_other_block_and_a_tool_freeze_their_json() -> None:
    data = {"type": "image_url", "image_url": {"url": "data:..."}}
    other = CourseOtherBlock("image_url", data)  # type: ignore[arg-type]
    data["type"] = "changed"
    assert other.to_dict() == {
        "type": "other",
        "kind": "image_url",
        "data": {"type": "image_url", "image_url": {"url": "data:..."}},
    }
    schema = {"type": "object", "properties": {}}
    tool = CourseTool("add", None, schema)  # type: ignore[arg-type]
    schema["type"] = "changed"
    assert tool.to_dict() == {
        "name": "add",
        "description": None,
        "parameters": {"type": "object", "properties": {}},
    }
    assert CourseTool("add").to_dict() == {"name": "add", "description": None, "parameters": None}


def test_reprs_stay_bounded() -> None:
    long = "x" * 10_000
    message = CourseRequestMessage(
        "assistant", (CourseToolCallBlock("c1", "add", {"text": long}), CourseTextBlock(long))
    )
    assert len(repr(message)) < 1_000
    assert len(repr(CourseToolResultBlock("c1", long))) < 500


def test_a_served_call_is_frozen() -> None:
    call = ServedCall("openai-chat", "/v1/chat/completions", {}, None, None, ("course read: x",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.problems = ()  # type: ignore[misc]
