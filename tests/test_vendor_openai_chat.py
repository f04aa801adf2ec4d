"""Importing ``openai-chat`` recordings: every mapping rule, every error code and where it points.

Recordings are written as OpenAI sends them (full chunk objects with the keys real
providers add: ``created``, ``model``, ``system_fingerprint``, ``logprobs``,
``obfuscation``, ``usage: null`` ...). Errors are asserted by code, ``event_index``,
``line`` and ``column``. The hand-written files under ``tests/recordings/openai-chat``
are also served to the official SDK, whose ``chat.completions.stream`` helper must agree
with the imported fixture's replay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

from course import FixtureProviderError, FixtureProviderErrorCode, thaw
from course.vendors import Recording, RecordingError, RecordingErrorCode, import_recording
from tests.vendor_helpers import RECORDINGS, openai_client, replay

Code = RecordingErrorCode
FOLDER = RECORDINGS / "openai-chat"
ID = "chatcmpl-AqT5nVbGk2cW8ZrLx1fJ0d9Yp3sHe"
_UNSET: Any = object()


def chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    *,
    choices: Any = _UNSET,
    drop: tuple[str, ...] = (),
    **top: Any,
) -> str:
    """One chunk event as OpenAI writes it; ``top`` adds or replaces top-level keys."""
    body: dict[str, Any] = {
        "id": ID,
        "object": "chat.completion.chunk",
        "created": 1723024761,
        "model": "gpt-4o-2024-08-06",
        "service_tier": "default",
        "system_fingerprint": "fp_845eaabc1f",
    }
    if choices is _UNSET:
        choices = [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}]
    body["choices"] = choices
    body.update(top)
    for key in drop:
        del body[key]
    return "data: " + json.dumps(body, separators=(",", ":"), ensure_ascii=False) + "\n\n"


def fragment(index: int = 0, call_id: str | None = None, name: str | None = None, **kw: Any) -> str:
    """A chunk carrying one tool-call fragment."""
    call: dict[str, Any] = {"index": index}
    if call_id is not None:
        call["id"] = call_id
        call["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if "arguments" in kw:
        function["arguments"] = kw.pop("arguments")
    call["function"] = function
    call.update(kw)
    return chunk({"tool_calls": [call]})


OPEN = chunk({"role": "assistant", "content": "", "refusal": None})
USAGE_BODY = {"prompt_tokens": 19, "completion_tokens": 11, "total_tokens": 30}
USAGE = chunk(choices=[], usage=USAGE_BODY)
DONE = "data: [DONE]\n\n"
END = {"type": "response_end", "responseId": ID, "usage": {"inputTokens": 19, "outputTokens": 11}}
START = {"type": "response_start", "responseId": ID, "role": "assistant"}


def stream(*middle: str, finish: str = "stop") -> str:
    """An opening chunk, the middle chunks, a finish chunk, the usage chunk and [DONE]."""
    return OPEN + "".join(middle) + chunk({}, finish) + USAGE + DONE


def records(text: str | bytes, **kwargs: Any) -> list[dict[str, Any]]:
    result = import_recording(text, **kwargs)
    assert result.format == "openai-chat"
    return records_of(result)


def records_of(result: Recording) -> list[dict[str, Any]]:
    return thaw(result.response)["records"]  # type: ignore[return-value]


def refused(text: str | bytes, **kwargs: Any) -> RecordingError:
    with pytest.raises(RecordingError) as info:
        import_recording(text, **kwargs)
    return info.value


def spot(text: str, line: int, before: str, nth: int = 0) -> tuple[int, int]:
    """The position just after the ``nth`` occurrence of ``before`` on ``line`` (1-based)."""
    line_text = text.split("\n")[line - 1]
    start = -1
    for _ in range(nth + 1):
        start = line_text.index(before, start + 1)
    return line, start + len(before) + 1


def assert_refused(
    text: str, code: RecordingErrorCode, event_index: int, where: tuple[int, int], **kw: Any
) -> RecordingError:
    error = refused(text, **kw)
    assert (error.code, error.event_index, (error.line, error.column)) == (
        code,
        event_index,
        where,
    ), str(error)
    return error


def line_of(event_index: int) -> int:
    """Each chunk written by ``chunk`` is two lines: its data line and the blank line."""
    return 2 * event_index + 1


def tool(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def text(value: str) -> dict[str, Any]:
    return {"type": "text_delta", "text": value}


def end(stop_reason: str) -> dict[str, Any]:
    return {**END, "stopReason": stop_reason}


# -- settling the format ----------------------------------------------------------------------


def test_a_chunk_first_is_detected_as_openai_chat() -> None:
    result = import_recording(stream())
    assert result.format == "openai-chat"
    assert result.truncated is False


def test_an_error_first_needs_the_format_named() -> None:
    text = 'data: {"error":{"message":"Overloaded","type":"server_error","code":null}}\n\n'
    error = refused(text)
    assert (error.code, error.event_index, error.line, error.column) == (
        Code.RECORDING_UNKNOWN_FORMAT,
        0,
        1,
        1,
    )
    assert records(text, format="openai-chat") == [
        {"type": "transport_error", "message": "Overloaded", "code": "server_error"}
    ]


@pytest.mark.parametrize(
    "first",
    [
        "data: [DONE]\n\n",
        "data: {not json\n\n",
        'data: {"type":"message_start","message":{"id":"msg_1"}}\n\n',
        'data: {"object":"chat.completion","id":"x","choices":[]}\n\n',
        'data: {"error":null,"object":"chat.completion"}\n\n',
    ],
)
def test_a_first_event_that_does_not_fit_the_named_format(first: str) -> None:
    assert_refused(first + DONE, Code.RECORDING_UNKNOWN_FORMAT, 0, (1, 1), format="openai-chat")


def test_an_openai_chat_first_event_does_not_fit_the_other_formats() -> None:
    for other in ("anthropic", "openai-responses"):
        assert refused(stream(), format=other).code is Code.RECORDING_UNKNOWN_FORMAT


def test_a_chat_completion_first_is_not_detected() -> None:
    text = 'data: {"object":"chat.completion","id":"x","choices":[]}\n\n'
    assert refused(text).code is Code.RECORDING_UNKNOWN_FORMAT


# -- what a recording becomes ---------------------------------------------------------------


def test_text_deltas_become_text_records_chunk_by_chunk() -> None:
    parts = ["The", " sum", "", " is", " 42", ".", ' ✓ é \n "q"']
    result = records(stream(*(chunk({"content": part}) for part in parts)))
    assert result == [
        START,
        *(text(part) for part in parts if part),
        end("stop"),
    ]


def test_the_first_chunk_is_the_start_even_with_content_or_no_choice() -> None:
    first = chunk({"role": "assistant", "content": "Hi"})
    assert records(first + chunk({}, "stop") + USAGE + DONE) == [START, text("Hi"), end("stop")]
    empty_first = chunk(choices=[])
    assert records(empty_first + chunk({}, "stop") + USAGE + DONE) == [START, end("stop")]


def test_null_content_and_refusal_are_absent() -> None:
    middle = chunk({"content": None, "refusal": None, "role": None, "tool_calls": None})
    assert records(stream(middle)) == [START, end("stop")]


def test_tool_call_fragments_concatenate_and_complete_at_the_finish() -> None:
    result = records(
        stream(
            fragment(0, "call_5uxEBMFySqqQGu02I5QHA8k6", "get_weather", arguments=""),
            fragment(0, arguments='{"city":'),
            fragment(0, arguments='"New York'),
            fragment(0, arguments=' City"}'),
            finish="tool_calls",
        )
    )
    assert result == [
        START,
        tool("call_5uxEBMFySqqQGu02I5QHA8k6", "get_weather", {"city": "New York City"}),
        end("tool_call"),
    ]


def test_tool_calls_are_emitted_in_ascending_index_whatever_their_order() -> None:
    result = records(
        stream(
            fragment(3, "call_c", "third", arguments='{"n":'),
            fragment(1, "call_a", "first", arguments="{}"),
            fragment(3, arguments="3}"),
            finish="tool_calls",
        )
    )
    assert result == [
        START,
        tool("call_a", "first", {}),
        tool("call_c", "third", {"n": 3}),
        end("tool_call"),
    ]


def test_several_fragments_in_one_chunk_and_repeated_id_and_name() -> None:
    calls = [
        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}},
        {"index": 0, "function": {"arguments": '{"a"'}},
        {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": ":1}"}},
        {"index": 1, "id": "call_2", "type": "function", "function": {"name": "g"}},
    ]
    result = records(stream(chunk({"tool_calls": calls}), finish="tool_calls"))
    assert result == [
        START,
        tool("call_1", "f", {"a": 1}),
        tool("call_2", "g", {}),
        end("tool_call"),
    ]


def test_empty_arguments_are_an_empty_object_and_empty_tool_calls_are_nothing() -> None:
    result = records(
        stream(chunk({"tool_calls": []}), fragment(0, "call_1", "now"), finish="tool_calls")
    )
    assert result == [START, tool("call_1", "now", {}), end("tool_call")]


def test_stop_with_tool_calls_is_a_tool_call_stop() -> None:
    # OpenAI reports "stop" when tool_choice forces a function.
    result = records(stream(fragment(0, "call_1", "add", arguments='{"left":20,"right":22}')))
    assert result == [START, tool("call_1", "add", {"left": 20, "right": 22}), end("tool_call")]


def test_text_then_tool_call_keeps_the_text_first() -> None:
    result = records(
        stream(
            chunk({"content": "Let me check."}),
            fragment(0, "call_1", "lookup", arguments='{"q": "x"}'),
            finish="tool_calls",
        )
    )
    assert result == [
        START,
        text("Let me check."),
        tool("call_1", "lookup", {"q": "x"}),
        end("tool_call"),
    ]


def test_duplicate_tool_call_ids_are_imported_as_they_are() -> None:
    result = records(
        stream(fragment(0, "call_1", "f"), fragment(1, "call_1", "g"), finish="tool_calls")
    )
    assert result[1:3] == [tool("call_1", "f", {}), tool("call_1", "g", {})]
    with pytest.raises(FixtureProviderError) as info:
        replay(import_recording(stream(fragment(0, "c", "f"), fragment(1, "c", "g"))))
    assert info.value.code is FixtureProviderErrorCode.PROVIDER_DUPLICATE_TOOL_CALL


@pytest.mark.parametrize(
    "reason", ["length", "content_filter", "error", "insufficient_system_resource"]
)
def test_any_other_finish_reason_is_a_transport_error_and_drops_tool_calls(reason: str) -> None:
    result = records(
        stream(chunk({"content": "Here"}), fragment(0, "call_1", "f", arguments="{"), finish=reason)
    )
    assert result == [
        START,
        text("Here"),
        {
            "type": "transport_error",
            "message": f"The provider stopped the response: {reason}",
            "code": reason,
        },
    ]


@pytest.mark.parametrize("finish", ["stop", "length", "content_filter"])
def test_refusal_text_makes_a_refusal_error_whatever_the_finish(finish: str) -> None:
    middle = [chunk({"refusal": part}) for part in ["I'm", " sorry", "", "."]]
    result = records(stream(*middle, finish=finish))
    assert result == [
        START,
        {"type": "transport_error", "message": "I'm sorry.", "code": "refusal"},
    ]


def test_refusal_with_tool_calls_keeps_the_completed_calls() -> None:
    result = records(
        stream(fragment(0, "call_1", "f"), chunk({"refusal": "No."}), finish="tool_calls")
    )
    assert result == [
        START,
        tool("call_1", "f", {}),
        {"type": "transport_error", "message": "No.", "code": "refusal"},
    ]


def test_an_empty_refusal_is_no_refusal() -> None:
    assert records(stream(chunk({"refusal": ""}))) == [START, end("stop")]


def test_usage_the_last_non_null_wins() -> None:
    later = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    text_ = OPEN + chunk({}, "stop", usage=None) + USAGE + chunk(choices=[], usage=later)
    text_ += chunk(choices=[], usage=None) + DONE
    assert records(text_)[-1]["usage"] == {"inputTokens": 1, "outputTokens": 2}


def test_usage_beside_the_finish_reason() -> None:
    text_ = OPEN + chunk({"content": "4"}, "stop", usage=USAGE_BODY) + DONE
    assert records(text_) == [START, text("4"), end("stop")]


def test_the_same_finish_reason_repeated_beside_the_usage() -> None:
    repeat = chunk({"role": "assistant", "content": ""}, "stop", usage=USAGE_BODY)
    assert records(OPEN + chunk({"content": "a"}) + chunk({}, "stop") + repeat + DONE) == [
        START,
        text("a"),
        end("stop"),
    ]


def test_usage_fallback_only_when_none_was_recorded() -> None:
    bare = OPEN + chunk({"content": "Hello"}) + chunk({}, "stop") + DONE
    assert records(bare, usage=(5, 6))[-1]["usage"] == {"inputTokens": 5, "outputTokens": 6}
    assert records(stream(), usage=(5, 6))[-1]["usage"] == {"inputTokens": 19, "outputTokens": 11}


def test_usage_is_not_needed_for_a_failure() -> None:
    assert records(OPEN + chunk({}, "length") + DONE)[-1]["type"] == "transport_error"
    assert records(OPEN + chunk({"refusal": "No"}, "stop") + DONE)[-1]["code"] == "refusal"


def test_a_provider_error_event_ends_the_import_where_it_comes() -> None:
    error = chunk(
        {"content": ""},
        "error",
        error={"code": "server_error", "message": "Provider disconnected"},
    )
    after = "data: not even json\n\n"
    result = import_recording(OPEN + chunk({"content": "The"}) + error + after + DONE)
    assert records_of(result) == [
        START,
        text("The"),
        {"type": "transport_error", "message": "Provider disconnected", "code": "server_error"},
    ]
    assert result.truncated is False


@pytest.mark.parametrize(
    ("body", "record"),
    [
        ({"message": "m", "code": "c", "type": "t"}, {"message": "m", "code": "c"}),
        ({"message": "m", "code": None, "type": "t"}, {"message": "m", "code": "t"}),
        ({"message": "m", "code": 500, "type": "t"}, {"message": "m", "code": "t"}),
        ({"message": "m", "code": 500, "type": None}, {"message": "m"}),
        ({"message": "", "param": None}, {"message": ""}),
    ],
)
def test_the_provider_error_code_is_its_code_else_its_type(
    body: dict[str, Any], record: dict[str, Any]
) -> None:
    result = records(OPEN + f"data: {json.dumps({'error': body})}\n\n")
    assert result == [START, {"type": "transport_error", **record}]


def test_a_provider_error_after_the_finish_keeps_the_completed_calls() -> None:
    text_ = OPEN + fragment(0, "call_1", "f") + chunk({}, "tool_calls")
    text_ += 'data: {"error":{"message":"Stream reset","type":"server_error"}}\n\n'
    assert records(text_) == [
        START,
        tool("call_1", "f", {}),
        {"type": "transport_error", "message": "Stream reset", "code": "server_error"},
    ]


def test_a_cut_stream_keeps_its_records_and_drops_partial_tool_calls() -> None:
    cut = OPEN + chunk({"content": "Once"}) + fragment(0, "call_1", "f", arguments='{"a":')
    result = import_recording(cut)
    assert result.truncated is True
    assert records_of(result) == [START, text("Once")]
    with pytest.raises(FixtureProviderError) as info:
        replay(result)
    assert info.value.code is FixtureProviderErrorCode.PROVIDER_MISSING_TERMINAL


def test_a_stream_cut_after_the_finish_is_truncated() -> None:
    result = import_recording(OPEN + fragment(0, "call_1", "f") + chunk({}, "tool_calls") + USAGE)
    assert result.truncated is True
    assert records_of(result) == [START, tool("call_1", "f", {})]


def test_comments_and_blank_lines_may_follow_done() -> None:
    assert records(stream() + ": done\n\n\n")[-1] == end("stop")


def test_reasoning_deltas_are_ignored_and_counted() -> None:
    middle = [
        chunk({"content": None, "reasoning_content": "Think"}),
        chunk({"content": None, "reasoning": "ing"}),
        chunk({"content": "4", "reasoning_content": None}),
    ]
    result = import_recording(stream(*middle))
    assert records_of(result) == [START, text("4"), end("stop")]
    assert dict(result.ignored) == {"delta.reasoning_content": 1, "delta.reasoning": 1}


def test_unused_keys_of_any_type_are_ignored() -> None:
    odd = chunk(
        {"content": "x", "role": 7, "audio": None, "annotations": [1]},
        choices=_UNSET,
        created="yesterday",
        model=None,
        obfuscation=["?"],
        choices_extra={"a": 1},
    )
    assert records(stream(odd)) == [START, text("x"), end("stop")]


def test_an_event_name_equal_to_the_type_is_accepted() -> None:
    named = "event: chunk\n" + chunk({"content": "x"}, type="chunk")
    assert records(stream(named))[1] == text("x")
    other = "event: message\n" + chunk({"content": "y"})
    assert records(stream(other))[1] == text("y")


# -- error codes, and where they point -----------------------------------------------------------


def test_invalid_json_in_a_later_event() -> None:
    text_ = OPEN + 'data: {"id": "x",, }\n\n' + DONE
    assert_refused(text_, Code.RECORDING_INVALID_JSON, 1, (3, 18))  # the second comma
    assert_refused(OPEN + "data: [DONE] \n\n", Code.RECORDING_INVALID_JSON, 1, (3, 8))


@pytest.mark.parametrize("data", ["[1, 2]", '"text"', "null", "42"])
def test_data_that_is_not_an_object_is_invalid_json(data: str) -> None:
    assert_refused(OPEN + f"data: {data}\n\n", Code.RECORDING_INVALID_JSON, 1, (3, 7))


def test_strict_json_refuses_duplicate_keys_and_nan() -> None:
    text_ = OPEN + chunk({"content": "x"}).replace('"id"', '"id":"a","id"', 1)
    assert refused(text_).code is Code.RECORDING_INVALID_JSON
    text_ = OPEN + 'data: {"id":"x","n":NaN}\n\n'
    assert refused(text_).code is Code.RECORDING_INVALID_JSON


@pytest.mark.parametrize("kind", ["chat.completion", "", "response.created"])
def test_another_object_kind_is_an_unknown_event(kind: str) -> None:
    text_ = stream(chunk({"content": "x"}, object=kind))
    assert_refused(text_, Code.RECORDING_UNKNOWN_EVENT, 1, spot(text_, 3, '"object":'))


def test_the_vocabulary_is_checked_before_the_event_alone() -> None:
    text_ = stream(chunk({"content": 5}, object="chat.completion", id=7))
    assert refused(text_).code is Code.RECORDING_UNKNOWN_EVENT


# class 3: the event alone: (mutation of the second event, key path shown, where it points)
_MALFORMED_CHUNKS: list[tuple[str, str, str]] = [
    # missing keys point at the object that lacks them
    (chunk({"content": "x"}, drop=("id",)), "Missing required key `id`", "data: "),
    (chunk({"content": "x"}, drop=("object",)), "Missing required key `object`", "data: "),
    (chunk({"content": "x"}, drop=("choices",)), "Missing required key `choices`", "data: "),
    (chunk(choices=[{"delta": {}}]), "Missing required key `choices[0].index`", '"choices":['),
    (chunk(choices=[{"index": 0}]), "Missing required key `choices[0].delta`", '"choices":['),
    (
        chunk(choices=[], usage={"completion_tokens": 1}),
        "Missing required key `usage.prompt_tokens`",
        '"usage":',
    ),
    (
        chunk(choices=[], usage={"prompt_tokens": 1}),
        "Missing required key `usage.completion_tokens`",
        '"usage":',
    ),
    (
        chunk({"tool_calls": [{"id": "call_1", "function": {"name": "f"}}]}),
        "Missing required key `choices[0].delta.tool_calls[0].index`",
        '"tool_calls":[',
    ),
    # mistyped values point at the value
    (chunk({"content": "x"}, id=7), "Expected `id` to be a string, got a number", '"id":'),
    (chunk({"content": "x"}, id=""), "Expected `id` to be a non-empty string", '"id":'),
    (chunk({"content": "x"}, id=None), "Expected `id` to be a string, got null", '"id":'),
    (
        chunk({"content": "x"}, object=None),
        "Expected `object` to be a string, got null",
        '"object":',
    ),
    (
        chunk({"content": "x"}, object=1),
        "Expected `object` to be a string, got a number",
        '"object":',
    ),
    (chunk(choices={"index": 0}), "Expected `choices` to be an array, got an object", '"choices":'),
    (chunk(choices=[None]), "Expected `choices[0]` to be an object, got null", '"choices":['),
    (chunk(choices=[[]]), "Expected `choices[0]` to be an object, got an array", '"choices":['),
    (
        chunk(choices=[{"index": True, "delta": {}}]),
        "Expected `choices[0].index` to be an integer, got a boolean",
        '"index":',
    ),
    (
        chunk(choices=[{"index": 0.0, "delta": {}}]),
        "Expected `choices[0].index` to be an integer, got a number",
        '"index":',
    ),
    (
        chunk(choices=[{"index": 0, "delta": None}]),
        "Expected `choices[0].delta` to be an object, got null",
        '"delta":',
    ),
    (
        chunk({}, finish=1),  # type: ignore[arg-type]
        "Expected `choices[0].finish_reason` to be a string, got a number",
        '"finish_reason":',
    ),
    (
        chunk({"content": ["x"]}),
        "Expected `choices[0].delta.content` to be a string, got an array",
        '"content":',
    ),
    (
        chunk({"refusal": False}),
        "Expected `choices[0].delta.refusal` to be a string, got a boolean",
        '"refusal":',
    ),
    (
        chunk({"tool_calls": {"index": 0}}),
        "Expected `choices[0].delta.tool_calls` to be an array, got an object",
        '"tool_calls":',
    ),
    (
        chunk({"tool_calls": ["call"]}),
        "Expected `choices[0].delta.tool_calls[0]` to be an object, got a string",
        '"tool_calls":[',
    ),
    (
        chunk({"tool_calls": [{"index": "0", "id": "call_1", "function": {"name": "f"}}]}),
        "Expected `choices[0].delta.tool_calls[0].index` to be an integer, got a string",
        '"tool_calls":[{"index":',
    ),
    (
        chunk({"tool_calls": [{"index": 0, "id": ""}]}),
        "Expected `choices[0].delta.tool_calls[0].id` to be a non-empty string",
        '"tool_calls":[{"index":0,"id":',
    ),
    (
        chunk({"tool_calls": [{"index": 0, "id": 1}]}),
        "Expected `choices[0].delta.tool_calls[0].id` to be a string, got a number",
        '"tool_calls":[{"index":0,"id":',
    ),
    (
        chunk({"tool_calls": [{"index": 0, "function": "f"}]}),
        "Expected `choices[0].delta.tool_calls[0].function` to be an object, got a string",
        '"function":',
    ),
    (
        chunk({"tool_calls": [{"index": 0, "function": {"name": ""}}]}),
        "Expected `choices[0].delta.tool_calls[0].function.name` to be a non-empty string",
        '"name":',
    ),
    (
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": {"a": 1}}}]}),
        "Expected `choices[0].delta.tool_calls[0].function.arguments` to be a string, "
        "got an object",
        '"arguments":',
    ),
    (chunk(choices=[], usage=[]), "Expected `usage` to be an object, got an array", '"usage":'),
    (
        chunk(choices=[], usage={"prompt_tokens": -1, "completion_tokens": 1}),
        "Expected `usage.prompt_tokens` to be a token count from 0 to 2**53 - 1, got -1",
        '"prompt_tokens":',
    ),
    (
        chunk(choices=[], usage={"prompt_tokens": 1, "completion_tokens": 2**53}),
        f"Expected `usage.completion_tokens` to be a token count from 0 to 2**53 - 1, got {2**53}",
        '"completion_tokens":',
    ),
    (
        chunk(choices=[], usage={"prompt_tokens": 1, "completion_tokens": True}),
        "Expected `usage.completion_tokens` to be an integer, got a boolean",
        '"completion_tokens":',
    ),
    (
        chunk(choices=[], usage={"prompt_tokens": 1.0, "completion_tokens": 1}),
        "Expected `usage.prompt_tokens` to be an integer, got a number",
        '"prompt_tokens":',
    ),
    # the second choice is checked too, before it is refused as unsupported
    (
        chunk(choices=[{"index": 0, "delta": {}}, {"index": 1, "delta": 3}]),
        "Expected `choices[1].delta` to be an object, got a number",
        '"delta":3',
    ),
]


@pytest.mark.parametrize(("event", "message", "before"), _MALFORMED_CHUNKS)
def test_a_malformed_chunk_is_refused_where_its_fault_lies(
    event: str, message: str, before: str
) -> None:
    text_ = OPEN + event + chunk({}, "stop") + USAGE + DONE
    if before.endswith("["):
        where = spot(text_, 3, before)  # the object inside the array
    elif before == '"delta":3':
        where = spot(text_, 3, '"delta":')[0], spot(text_, 3, '"delta":', 1)[1]
    else:
        where = spot(text_, 3, before)
    if before == "data: ":
        where = (3, 7)  # the event's own `{`
    error = assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 1, where)
    assert error.message == message


def test_a_missing_key_of_the_first_chunk_points_at_its_brace() -> None:
    text_ = chunk({"content": "x"}, drop=("choices",)) + DONE
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 0, (1, 7))


def test_the_event_name_must_equal_a_type() -> None:
    text_ = stream("event: delta\n" + chunk({"content": "x"}, type="chunk"))
    error = assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 1, spot(text_, 4, '"type":'))
    assert "named 'delta'" in error.message


@pytest.mark.parametrize(
    ("event", "before"),
    [
        ('data: {"error":"Overloaded"}\n\n', '"error":'),
        ('data: {"error":[{"message":"m"}]}\n\n', '"error":'),
        ('data: {"error":{"code":"c"}}\n\n', '"error":'),
        ('data: {"error":{"message":null,"code":"c"}}\n\n', '"message":'),
        ('data: {"error":{"message":7}}\n\n', '"message":'),
    ],
)
def test_a_malformed_provider_error_event(event: str, before: str) -> None:
    text_ = OPEN + event
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 1, spot(text_, 3, before))


def test_a_malformed_provider_error_event_first_with_the_format_named() -> None:
    text_ = 'data: {"error":{"type":"server_error"}}\n\n'
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 0, (1, 16), format="openai-chat")


@pytest.mark.parametrize(
    ("event", "before"),
    [
        (chunk(choices=[{"index": 0, "delta": {}}, {"index": 1, "delta": {}}]), '"choices":[{'),
        (chunk(choices=[{"index": 2, "delta": {"content": "x"}}]), '"index":'),
        (chunk({"function_call": {"name": "f", "arguments": ""}}), '"function_call":'),
        (chunk({}, "function_call"), '"finish_reason":'),
    ],
)
def test_shapes_a_fixture_cannot_hold_are_unsupported(event: str, before: str) -> None:
    text_ = OPEN + event + chunk({}, "stop") + USAGE + DONE
    if before == '"choices":[{':
        # the second choice: the `{` after the first choice's closing brace
        line = text_.split("\n")[2]
        where = (3, line.index(',{"index":1') + 2)
    else:
        where = spot(text_, 3, before)
    assert_refused(text_, Code.RECORDING_UNSUPPORTED, 1, where)


def test_multiple_choices_as_openai_sends_them_are_unsupported() -> None:
    second = chunk(choices=[{"index": 1, "delta": {"role": "assistant", "content": ""}}])
    text_ = OPEN + second + DONE
    error = assert_refused(text_, Code.RECORDING_UNSUPPORTED, 1, spot(text_, 3, '"index":'))
    assert "n > 1" in error.message


def test_malformed_wins_over_unsupported_in_one_event() -> None:
    event = chunk({"function_call": {"name": "f"}, "content": 3})
    text_ = OPEN + event + DONE
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 1, spot(text_, 3, '"content":'))


@pytest.mark.parametrize(
    ("after", "message"),
    [
        (chunk({"content": "more"}), "A chunk after [DONE]"),
        (DONE, "A second [DONE]"),
        ('data: {"error":{"message":"late"}}\n\n', "A provider error event after [DONE]"),
        (chunk(choices=[]), "A chunk after [DONE]"),
    ],
)
def test_anything_after_done_is_out_of_order(after: str, message: str) -> None:
    text_ = stream() + after
    error = assert_refused(text_, Code.RECORDING_OUT_OF_ORDER, 4, (9, 1))
    assert error.message == message


def test_a_malformed_event_after_done_is_malformed() -> None:
    text_ = stream() + chunk({"content": 1})
    assert refused(text_).code is Code.RECORDING_MALFORMED_EVENT


@pytest.mark.parametrize(
    "late",
    [
        chunk({"content": "more"}),
        chunk({"refusal": "no"}),
        fragment(0, "call_1", "f"),
        chunk({}, "length"),
    ],
)
def test_content_after_the_finish_reason_is_out_of_order(late: str) -> None:
    text_ = OPEN + chunk({}, "stop") + late + USAGE + DONE
    assert_refused(text_, Code.RECORDING_OUT_OF_ORDER, 2, (5, 1))


def test_place_wins_over_earlier_events() -> None:
    text_ = OPEN + chunk({}, "stop") + chunk({"content": "x"}, id="chatcmpl-other") + DONE
    assert refused(text_).code is Code.RECORDING_OUT_OF_ORDER


def test_an_id_that_changes_is_malformed() -> None:
    text_ = stream(chunk({"content": "x"}, id="chatcmpl-other"))
    error = assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 1, spot(text_, 3, '"id":'))
    assert "chatcmpl-other" in error.message


def test_the_usage_chunk_must_carry_the_same_id() -> None:
    text_ = OPEN + chunk({}, "stop") + chunk(choices=[], usage=USAGE_BODY, id="other") + DONE
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 2, spot(text_, 5, '"id":'))


def test_a_first_fragment_without_id() -> None:
    text_ = stream(fragment(0, None, "f"), finish="tool_calls")
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 1, spot(text_, 3, '"tool_calls":['))


def test_a_first_fragment_without_function_name() -> None:
    with_function = stream(fragment(0, "call_1", None, arguments="{}"), finish="tool_calls")
    assert_refused(
        with_function,
        Code.RECORDING_MALFORMED_EVENT,
        1,
        spot(with_function, 3, '"function":'),
    )
    without = stream(chunk({"tool_calls": [{"index": 0, "id": "call_1"}]}), finish="tool_calls")
    assert_refused(without, Code.RECORDING_MALFORMED_EVENT, 1, spot(without, 3, '"tool_calls":['))


def test_a_later_fragment_that_changes_the_id_or_name() -> None:
    text_ = stream(fragment(0, "call_1", "f"), fragment(0, "call_2"))
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 2, spot(text_, 5, '"id":', 1))
    text_ = stream(fragment(0, "call_1", "f"), fragment(0, None, "g"))
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 2, spot(text_, 5, '"name":'))


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ('{"a":', "not strict JSON"),
        ("[1, 2]", "JSON object, got an array"),
        ('"text"', "JSON object, got a string"),
        ('{"a": NaN}', "not strict JSON"),
        ('{"a": 1, "a": 2}', "not strict JSON"),
        ("[" * 300 + "]" * 300, "not strict JSON"),
        ('{"a":' * 252 + "1" + "}" * 252, "not strict JSON"),
    ],
)
def test_arguments_that_are_not_a_json_object_are_refused_at_the_finish(
    arguments: str, words: str
) -> None:
    # They came in earlier events: the finishing event as a whole is the place.
    text_ = stream(fragment(0, "call_1", "f", arguments=arguments), finish="tool_calls")
    error = assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 2, (5, 1))
    assert words in error.message


def test_arguments_nested_as_deep_as_the_adapter_allows() -> None:
    deep = '{"a":' * 251 + "1" + "}" * 251
    result = records(stream(fragment(0, "call_1", "f", arguments=deep)))
    assert result[1]["name"] == "f"
    replay(import_recording(stream(fragment(0, "call_1", "f", arguments=deep))))


def test_done_without_a_finish_reason_is_malformed() -> None:
    text_ = OPEN + chunk({"content": "x"}) + USAGE + DONE
    error = assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 3, (7, 1))
    assert "finish_reason" in error.message
    refusal_only = OPEN + chunk({"refusal": "No"}) + DONE
    assert refused(refusal_only).code is Code.RECORDING_MALFORMED_EVENT


def test_tool_calls_finish_without_a_tool_call_is_a_mismatch() -> None:
    text_ = stream(chunk({"content": "x"}), finish="tool_calls")
    assert_refused(
        text_, Code.RECORDING_STOP_REASON_MISMATCH, 2, spot(text_, 5, '"finish_reason":')
    )


def test_malformed_wins_over_a_mismatch_in_one_event() -> None:
    text_ = OPEN + chunk({}, "tool_calls", id="other") + USAGE + DONE
    assert refused(text_).code is Code.RECORDING_MALFORMED_EVENT


def test_missing_usage_is_refused_at_done() -> None:
    text_ = OPEN + chunk({"content": "Hello"}) + chunk({}, "stop", usage=None) + DONE
    error = assert_refused(text_, Code.RECORDING_MISSING_USAGE, 3, (7, 1))
    assert "usage=" in error.message


def test_a_recording_with_no_event_is_unreadable() -> None:
    assert refused(": keep-alive\n\n", format="openai-chat").code is Code.RECORDING_UNREADABLE
    assert refused(b"data: \xff\n\n").code is Code.RECORDING_UNREADABLE


def test_errors_carry_the_source_and_render_it() -> None:
    error = refused(OPEN + chunk({"content": 1}), source="rec.sse")
    assert error.source == "rec.sse"
    assert str(error).startswith("rec.sse:3:")
    assert "RECORDING_MALFORMED_EVENT" in str(error)


# -- line endings and layout -------------------------------------------------------------------


def _relayout(text_: str, newline: str) -> str:
    return text_.replace("\n", newline)


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_crlf_and_cr_give_the_same_fixture(newline: str) -> None:
    original = (FOLDER / "text_then_tool_call.sse").read_text()
    assert records(_relayout(original, newline)) == records(original)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_errors_point_at_the_same_place_whatever_the_line_ending(newline: str) -> None:
    text_ = stream(chunk({"content": "x"}, id=7))
    error = refused(_relayout(text_, newline))
    assert (error.line, error.column) == spot(text_, 3, '"id":')


def test_multi_line_data_and_padding_whitespace() -> None:
    pretty = [json.loads(line[6:]) for line in OPEN.split("\n") if line.startswith("data: ")]
    body = json.dumps(pretty[0], indent=2)
    multi = "".join(f"data: {line}\n" for line in body.split("\n")) + "\n"
    padded = (
        "data:   "
        + json.dumps(
            json.loads(chunk({"content": "x"})[6:]), indent=None, separators=(" , ", " : ")
        )
        + "  \n\n"
    )
    text_ = multi + padded + chunk({}, "stop") + USAGE + DONE
    assert records(text_) == [START, text("x"), end("stop")]


def test_multi_line_data_errors_point_into_the_right_line() -> None:
    body = json.dumps(json.loads(chunk({"content": 5})[6:]), indent=1)
    multi = "".join(f"data:{line}\n" for line in body.split("\n")) + "\n"
    text_ = OPEN + multi + DONE
    error = refused(text_)
    lines = text_.split("\n")
    (number,) = [i for i, line in enumerate(lines, 1) if '"content": 5' in line]
    assert (error.line, error.column) == (number, lines[number - 1].index("5") + 1)


def test_data_without_a_space_and_a_byte_order_mark() -> None:
    text_ = "\ufeff" + stream(chunk({"content": "x"})).replace("data: ", "data:")
    assert records(text_.encode()) == [START, text("x"), end("stop")]


# -- the hand-written recordings against the official SDK ---------------------------------------

_EXPECTED_RECORDS = {
    "text.sse": ["response_start", *["text_delta"] * 11, "response_end"],
    "tool_call.sse": ["response_start", "tool_call", "response_end"],
    "parallel_tool_calls.sse": ["response_start", "tool_call", "tool_call", "response_end"],
    "forced_tool_choice.sse": ["response_start", "tool_call", "response_end"],
    "text_then_tool_call.sse": ["response_start", *["text_delta"] * 5, "tool_call", "response_end"],
    "refusal.sse": ["response_start", "transport_error"],
    "length.sse": ["response_start", "text_delta", "transport_error"],
    "content_filter.sse": ["response_start", "text_delta", "text_delta", "transport_error"],
    "no_usage.sse": ["response_start", *["text_delta"] * 7, "response_end"],
    "cut.sse": ["response_start", "text_delta", "text_delta", "text_delta"],
    "gateway_repeated_finish.sse": ["response_start", *["text_delta"] * 3, "response_end"],
    "gateway_reasoning.sse": ["response_start", "text_delta", "text_delta", "response_end"],
    "provider_error.sse": ["response_start", "text_delta", "transport_error"],
    "error_before_start.sse": ["transport_error"],
    "azure.sse": ["response_start", *["text_delta"] * 3, "response_end"],
    "azure_async_filter.sse": ["response_start", "text_delta", "text_delta", "response_end"],
    "azure_async_blocked.sse": ["response_start", "text_delta", "text_delta", "transport_error"],
}


def _import_file(path: Path) -> Recording:
    usage = (9, 7) if path.name == "no_usage.sse" else None
    return import_recording(path.read_bytes(), format="openai-chat", usage=usage)


def test_every_recording_is_listed() -> None:
    assert sorted(path.name for path in FOLDER.glob("*.sse")) == sorted(_EXPECTED_RECORDS)


@pytest.mark.parametrize("name", sorted(_EXPECTED_RECORDS))
def test_recording_imports_to_the_expected_records(name: str) -> None:
    result = _import_file(FOLDER / name)
    kinds = [record["type"] for record in records_of(result)]
    assert kinds == _EXPECTED_RECORDS[name]
    assert result.truncated is (name == "cut.sse")


def _sdk_final(body: bytes) -> Any:
    client = openai_client(body)
    with client.chat.completions.stream(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
    ) as stream_:
        for _event in stream_:
            pass
        return stream_.get_final_completion()


_SUCCESSES = [
    "text.sse",
    "tool_call.sse",
    "parallel_tool_calls.sse",
    "forced_tool_choice.sse",
    "text_then_tool_call.sse",
    "no_usage.sse",
    "gateway_repeated_finish.sse",
    "gateway_reasoning.sse",
    "azure.sse",
    "azure_async_filter.sse",
]


@pytest.mark.parametrize("name", _SUCCESSES)
def test_the_sdk_agrees_with_the_replayed_fixture(name: str) -> None:
    path = FOLDER / name
    response = replay(_import_file(path))
    final = _sdk_final(path.read_bytes())
    (choice,) = final.choices
    assert final.id == response.response_id
    texts = [block.text for block in response.message.content if block.type == "text"]
    assert (choice.message.content or "") == "".join(texts)
    calls = [
        (block.id, block.name, thaw(block.arguments))
        for block in response.message.content
        if block.type == "toolCall"
    ]
    assert [
        (call.id, call.function.name, json.loads(call.function.arguments))
        for call in choice.message.tool_calls or []
    ] == calls
    expected_stop = "toolCall" if calls else "stop"
    assert response.stop_reason == expected_stop
    assert choice.finish_reason in (("tool_calls", "stop") if calls else ("stop",))
    if name == "no_usage.sse":
        assert final.usage is None  # the fixture's usage came from usage=
        assert (response.usage.input_tokens, response.usage.output_tokens) == (9, 7)
    else:
        assert (final.usage.prompt_tokens, final.usage.completion_tokens) == (
            response.usage.input_tokens,
            response.usage.output_tokens,
        )


def _replay_error(path: Path) -> FixtureProviderError:
    with pytest.raises(FixtureProviderError) as info:
        replay(_import_file(path))
    return info.value


def test_the_sdk_and_the_fixture_agree_on_a_refusal() -> None:
    path = FOLDER / "refusal.sse"
    error = _replay_error(path)
    final = _sdk_final(path.read_bytes())
    assert error.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
    assert error.transport_code == "refusal"
    assert error.transport_message == final.choices[0].message.refusal
    assert final.choices[0].finish_reason == "stop"  # the SDK reports success with a refusal


@pytest.mark.parametrize(
    ("name", "sdk_error"),
    [
        ("length.sse", openai.LengthFinishReasonError),
        ("content_filter.sse", openai.ContentFilterFinishReasonError),
    ],
)
def test_the_sdk_and_the_fixture_both_fail_on_a_stop_that_is_no_success(
    name: str, sdk_error: type[Exception]
) -> None:
    path = FOLDER / name
    error = _replay_error(path)
    assert error.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
    assert error.transport_code == name.removesuffix(".sse")
    with pytest.raises(sdk_error):
        _sdk_final(path.read_bytes())


@pytest.mark.parametrize("name", ["provider_error.sse", "error_before_start.sse"])
def test_the_sdk_raises_the_provider_error_the_fixture_replays(name: str) -> None:
    path = FOLDER / name
    error = _replay_error(path)
    with pytest.raises(openai.APIError) as info:
        _sdk_final(path.read_bytes())
    assert error.code is FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
    assert info.value.message == error.transport_message
    # The SDK keeps `code` and `type` apart; the fixture takes the code, else the type.
    assert error.transport_code in (info.value.code, info.value.type)


def test_the_sdk_accepts_a_cut_stream_that_the_fixture_reports_as_cut() -> None:
    path = FOLDER / "cut.sse"
    error = _replay_error(path)
    assert error.code is FixtureProviderErrorCode.PROVIDER_MISSING_TERMINAL
    final = _sdk_final(path.read_bytes())
    # The SDK has no notion of a missing [DONE]: it returns the partial message,
    # partial tool-call arguments included, with no finish reason.
    assert final.choices[0].finish_reason is None
    assert final.choices[0].message.content == "Once upon a"
    assert final.choices[0].message.tool_calls[0].function.arguments == '{"st'


# -- Azure OpenAI's content-filter chunks --------------------------------------------------------

_VERDICT = {"hate": {"filtered": False, "severity": "safe"}}
PROMPT_FILTER = (
    "data: "
    + json.dumps(
        {
            "choices": [],
            "created": 0,
            "id": "",
            "model": "",
            "object": "",
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": _VERDICT}],
        },
        separators=(",", ":"),
    )
    + "\n\n"
)


def annotation(finish: str | None = None, **choice: Any) -> str:
    """An annotation chunk of Azure's asynchronous filter: no delta, empty ids."""
    body = {
        "choices": [
            {
                "content_filter_offsets": {
                    "check_offset": 44,
                    "start_offset": 44,
                    "end_offset": 98,
                },
                "content_filter_results": _VERDICT,
                "finish_reason": finish,
                "index": 0,
                **choice,
            }
        ],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
    }
    return "data: " + json.dumps(body, separators=(",", ":")) + "\n\n"


@pytest.mark.parametrize("format", ["auto", "openai-chat"])
def test_a_prompt_filter_chunk_before_the_first_chunk_is_ignored_and_counted(format: str) -> None:
    result = import_recording(PROMPT_FILTER + stream(chunk({"content": "Hi"})), format=format)
    assert result.format == "openai-chat"
    assert records_of(result) == [START, text("Hi"), end("stop")]
    assert result.ignored == {"prompt_filter_results": 1}


def test_the_older_prompt_annotations_name_is_a_prompt_filter_chunk_too() -> None:
    older = PROMPT_FILTER.replace("prompt_filter_results", "prompt_annotations")
    assert records(older + stream()) == [START, end("stop")]


def test_a_prompt_filter_chunk_alone_tells_no_format_but_fits_openai_chat() -> None:
    assert_refused(PROMPT_FILTER, Code.RECORDING_UNKNOWN_FORMAT, 0, (1, 1))
    result = import_recording(PROMPT_FILTER, format="openai-chat")
    assert (records_of(result), result.truncated) == ([], True)


def test_annotations_after_the_first_chunk_are_ignored_and_their_ids_not_compared() -> None:
    text_ = stream(chunk({"content": "Hi"}), annotation(), chunk({"content": "!"}), annotation())
    result = import_recording(PROMPT_FILTER + text_ + "")
    assert records_of(result) == [START, text("Hi"), text("!"), end("stop")]
    assert result.ignored == {"prompt_filter_results": 1, "content_filter_results": 2}


def test_an_annotation_with_an_empty_delta_is_an_annotation() -> None:
    assert records(stream(annotation(delta={}))) == [START, end("stop")]


def test_an_annotation_that_stops_the_answer_ends_it_with_its_finish_reason() -> None:
    # Azure's asynchronous filter blocks an answer in an annotation; [DONE] follows at once.
    text_ = OPEN + chunk({"content": "Hi"}) + annotation("content_filter") + DONE
    assert records(text_) == [
        START,
        text("Hi"),
        {
            "type": "transport_error",
            "message": "The provider stopped the response: content_filter",
            "code": "content_filter",
        },
    ]


def test_an_annotation_whose_finish_reason_differs_from_the_stream_s_is_out_of_order() -> None:
    text_ = OPEN + chunk({}, "stop") + annotation("content_filter") + USAGE + DONE
    assert_refused(text_, Code.RECORDING_OUT_OF_ORDER, 2, (5, 1))


def test_a_chunk_without_object_that_carries_content_is_an_unknown_event() -> None:
    text_ = OPEN + annotation(delta={"content": "Hi"}) + DONE
    assert_refused(text_, Code.RECORDING_UNKNOWN_EVENT, 1, spot(text_, 3, '"object":'))


def test_an_annotation_after_done_is_out_of_order() -> None:
    assert_refused(stream() + annotation(), Code.RECORDING_OUT_OF_ORDER, 4, (9, 1))


@pytest.mark.parametrize(
    ("choices", "where"),
    [('"no"', '"choices":'), ('["no"]', '"choices":['), ('[{"delta":"no"}]', '"delta":')],
    ids=["choices", "choice", "delta"],
)
def test_a_malformed_annotation_is_malformed_where_its_fault_lies(choices: str, where: str) -> None:
    bad = 'data: {"id":"","object":"","choices":' + choices + "}\n\n"
    assert_refused(OPEN + bad + DONE, Code.RECORDING_MALFORMED_EVENT, 1, spot(OPEN + bad, 3, where))


# -- cut streams -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tail",
    [
        'data: {"id":"chatcmpl-A',
        "data: {",
        "data: ",
        "data: [DO",
        'data: {"a": tr',
        'data: {"a":"\\u00',
    ],
)
def test_a_stream_cut_inside_its_last_line_is_cut_not_invalid_json(tail: str) -> None:
    result = import_recording(OPEN + chunk({"content": "Hi"}) + tail)
    assert result.truncated is True
    assert records_of(result) == [START, text("Hi")]


@pytest.mark.parametrize(
    ("tail", "column"),
    [
        ('data: {"id"\n', 12),  # the line ended: the data is whole, and not JSON
        ('data: {"a": 1}}', 15),  # no JSON text starts so
        ('data: {"a": NaN', 13),
        ("data: [DONE]x", 8),
    ],
)
def test_bad_final_data_that_no_cut_explains_is_invalid_json(tail: str, column: int) -> None:
    assert_refused(OPEN + tail, Code.RECORDING_INVALID_JSON, 1, (3, column))


def test_a_cut_first_event_leaves_no_event_to_read() -> None:
    for format in ("auto", "openai-chat"):
        error = refused('data: {"id":"chatcmpl-A', format=format)
        assert (error.code, error.line) == (Code.RECORDING_UNREADABLE, None)
        assert "cut inside its first event" in error.message


# -- a refusal of a tool call's arguments names the call ------------------------------------------


def test_a_refusal_of_arguments_names_the_call_by_index_id_and_name() -> None:
    text_ = stream(
        fragment(0, "call_ok", "f", arguments="{}"),
        fragment(1, "call_bad", "get_weather", arguments='{"city": '),
        finish="tool_calls",
    )
    error = refused(text_)
    assert error.message.startswith(
        "The arguments of tool call 1 (id 'call_bad', name 'get_weather') are not strict JSON"
    )


# -- a non-streamed answer: chat.completion --------------------------------------------------------


def completion(
    message: dict[str, Any] | None = None, finish: Any = "stop", **top: Any
) -> dict[str, Any]:
    """A ``chat.completion`` body as OpenAI writes it."""
    body: dict[str, Any] = {
        "id": ID,
        "object": "chat.completion",
        "created": 1723024761,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    **(message or {}),
                },
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": USAGE_BODY,
        "service_tier": "default",
    }
    body.update(top)
    return body


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def body_text(value: object) -> str:
    return json.dumps(value, indent=2)


def at(text_: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """The line and column of the ``nth`` ``needle`` in ``text_``: of its ``|`` if it
    has one (which the text has not), else of its start."""
    before, _, _ = needle.partition("|")
    offset = -1
    for _ in range(nth + 1):
        offset = text_.index(needle.replace("|", ""), offset + 1)
    offset += len(before) if "|" in needle else 0
    line = text_.count("\n", 0, offset) + 1
    return line, offset - (text_.rfind("\n", 0, offset) + 1) + 1


@pytest.mark.parametrize("format", ["auto", "openai-chat"])
def test_a_chat_completion_gives_what_its_stream_would(format: str) -> None:
    body = completion(
        {
            "content": "Let me look.",
            "tool_calls": [call("call_1", "f", '{"a":1}'), call("call_2", "g", "")],
        },
        "tool_calls",
    )
    result = import_recording(body_text(body), format=format)
    assert (result.format, result.truncated, dict(result.ignored)) == ("openai-chat", False, {})
    assert records_of(result) == [
        START,
        text("Let me look."),
        tool("call_1", "f", {"a": 1}),
        tool("call_2", "g", {}),
        end("tool_call"),
    ]


def test_a_chat_completion_with_text_and_no_content() -> None:
    assert records(body_text(completion({"content": "Hi"}))) == [START, text("Hi"), end("stop")]
    assert records(body_text(completion({"content": ""}))) == [START, end("stop")]
    assert records(body_text(completion())) == [START, end("stop")]


def test_a_forced_tool_choice_reports_stop_with_calls_and_is_a_tool_call() -> None:
    body = completion({"tool_calls": [call("call_1", "f", "{}")]}, "stop")
    assert records(body_text(body))[-1] == end("tool_call")


@pytest.mark.parametrize("finish", ["length", "content_filter"])
def test_a_chat_completion_that_is_no_success_is_a_transport_error_without_calls(
    finish: str,
) -> None:
    body = completion({"content": "Once", "tool_calls": [call("call_1", "f", '{"a":')]}, finish)
    assert records(body_text(body)) == [
        START,
        text("Once"),
        {
            "type": "transport_error",
            "message": f"The provider stopped the response: {finish}",
            "code": finish,
        },
    ]


def test_a_refused_chat_completion_gives_its_content_then_the_refusal() -> None:
    body = completion({"content": "Well", "refusal": "I can't."})
    assert records(body_text(body)) == [
        START,
        text("Well"),
        {"type": "transport_error", "message": "I can't.", "code": "refusal"},
    ]


def test_a_chat_completion_without_usage_takes_the_fallback_or_is_refused() -> None:
    body = body_text(completion({"content": "Hi"}, usage=None))
    assert records(body, usage=(1, 2))[-1]["usage"] == {"inputTokens": 1, "outputTokens": 2}
    assert_refused(body, Code.RECORDING_MISSING_USAGE, 0, (1, 1))
    padded = "\n  " + body
    assert_refused(padded, Code.RECORDING_MISSING_USAGE, 0, (2, 3))


def test_a_chat_completion_error_body_with_the_format_named() -> None:
    body = body_text({"error": {"message": "Rate limit", "type": "requests", "code": "rate_limit"}})
    assert records(body, format="openai-chat") == [
        {"type": "transport_error", "message": "Rate limit", "code": "rate_limit"}
    ]
    assert_refused(body, Code.RECORDING_UNKNOWN_FORMAT, 0, (1, 1))


@pytest.mark.parametrize(
    ("mutate", "code", "needle"),
    [
        (lambda b: b.pop("id"), Code.RECORDING_MALFORMED_EVENT, "{"),
        (lambda b: b.update(id=""), Code.RECORDING_MALFORMED_EVENT, '""'),
        (lambda b: b.update(choices={}), Code.RECORDING_MALFORMED_EVENT, "{}"),
        (lambda b: b.update(choices=[]), Code.RECORDING_MALFORMED_EVENT, "[]"),
        (
            lambda b: b["choices"][0].update(finish_reason=None),
            Code.RECORDING_MALFORMED_EVENT,
            'null,\n      "x',
        ),
        (lambda b: b["choices"][0].update(message=[]), Code.RECORDING_MALFORMED_EVENT, "[]"),
        (
            lambda b: b["choices"][0]["message"].update(content=5),
            Code.RECORDING_MALFORMED_EVENT,
            '"content": |5',
        ),
        (
            lambda b: b["choices"][0]["message"].update(tool_calls=[{"id": "c"}]),
            Code.RECORDING_MALFORMED_EVENT,
            '{\n            "id"',
        ),
        (lambda b: b["choices"][0].update(index=1), Code.RECORDING_UNSUPPORTED, '"index": |1'),
        (
            lambda b: b["choices"].append(b["choices"][0]),
            Code.RECORDING_UNSUPPORTED,
            '{\n      "index": 0',
        ),
        (
            lambda b: b["choices"][0]["message"].update(
                function_call={"name": "f", "arguments": "{}"}
            ),
            Code.RECORDING_UNSUPPORTED,
            '{\n          "name"',
        ),
        (
            lambda b: b["choices"][0].update(finish_reason="function_call"),
            Code.RECORDING_UNSUPPORTED,
            '"function_call"',
        ),
        (
            lambda b: b["choices"][0]["message"].update(
                tool_calls=[{"id": "c", "type": "custom", "custom": {"name": "f", "input": "x"}}]
            ),
            Code.RECORDING_UNSUPPORTED,
            '"custom"',
        ),
        (
            lambda b: b["choices"][0].update(finish_reason="tool_calls"),
            Code.RECORDING_STOP_REASON_MISMATCH,
            '"tool_calls"',
        ),
        (
            lambda b: b["choices"][0]["message"].update(tool_calls=[call("c", "f", "[1]")]),
            Code.RECORDING_MALFORMED_EVENT,
            '"[1]"',
        ),
    ],
    ids=[
        "no-id",
        "empty-id",
        "choices-not-a-list",
        "no-choice",
        "null-finish",
        "message-not-an-object",
        "content-not-a-string",
        "call-without-function",
        "index-1",
        "second-choice",
        "legacy-function-call",
        "legacy-finish",
        "custom-tool-call",
        "tool-calls-finish-without-calls",
        "arguments-not-an-object",
    ],
)
def test_a_chat_completion_is_refused_where_its_fault_lies(
    mutate: Any, code: RecordingErrorCode, needle: str
) -> None:
    body = completion({"content": "Hi"})
    body["choices"][0]["x"] = 0  # a key after finish_reason, to locate a null there
    mutate(body)
    text_ = body_text(body)
    nth = 1 if needle.startswith('{\n      "index"') else 0
    assert_refused(text_, code, 0, at(text_, needle, nth))


def test_in_a_chat_completion_malformed_wins_over_unsupported() -> None:
    body = completion({"content": "Hi"})
    second = json.loads(json.dumps(body["choices"][0]))
    second["message"] = "no"
    body["choices"].append(second)
    text_ = body_text(body)
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 0, at(text_, '"no"'))


def test_a_refusal_of_a_chat_completion_s_arguments_names_the_call() -> None:
    body = completion({"tool_calls": [call("call_1", "f", "{}"), call("call_2", "lookup", "{")]})
    text_ = body_text(body)
    error = assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 0, at(text_, '"{"'))
    assert "tool call 1 (id 'call_2', name 'lookup')" in error.message


def test_a_cut_chat_completion_is_invalid_json_at_its_end() -> None:
    whole = body_text(completion({"content": "Hi"}))
    text_ = whole[: whole.index('"usage"')]
    lines = text_.split("\n")
    assert_refused(text_, Code.RECORDING_INVALID_JSON, 0, (len(lines), len(lines[-1]) + 1))


def test_a_chat_completion_does_not_fit_the_other_formats() -> None:
    text_ = body_text(completion({"content": "Hi"}))
    for other in ("anthropic", "openai-responses"):
        assert_refused(text_, Code.RECORDING_UNKNOWN_FORMAT, 0, (1, 1), format=other)


def test_reasoning_beside_a_chat_completion_s_message_is_counted() -> None:
    result = import_recording(body_text(completion({"content": "Hi", "reasoning_content": "Hmm"})))
    assert result.ignored == {"message.reasoning_content": 1}


def test_azure_s_filter_chunks_are_counted_and_a_blocked_answer_is_no_success() -> None:
    assert _import_file(FOLDER / "azure_async_filter.sse").ignored == {
        "prompt_filter_results": 1,
        "content_filter_results": 2,
    }
    path = FOLDER / "azure_async_blocked.sse"
    error = _replay_error(path)
    assert (error.code, error.transport_code) == (
        FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR,
        "content_filter",
    )
    # The SDK's accumulator hands the blocked text over as a completion with no finish.
    final = _sdk_final(path.read_bytes())
    assert (final.choices[0].message.content, final.choices[0].finish_reason) == (
        "The blocked word",
        None,
    )


def test_a_custom_tool_call_fragment_is_unsupported() -> None:
    custom = {"index": 0, "id": "call_1", "type": "custom", "custom": {"name": "f", "input": ""}}
    text_ = OPEN + chunk({"tool_calls": [custom]}) + chunk({}, "tool_calls") + USAGE + DONE
    assert_refused(text_, Code.RECORDING_UNSUPPORTED, 1, spot(text_, 3, '"type":'))


def test_a_whole_tool_call_without_arguments_has_empty_arguments() -> None:
    # OpenRouter leaves `arguments` out of a call that takes none.
    bare = {"id": "call_1", "type": "function", "function": {"name": "f"}}
    body = completion({"tool_calls": [bare]}, "tool_calls")
    assert records(body_text(body))[1] == tool("call_1", "f", {})
