"""Importing ``openai-chat`` recordings as schema version 2 (SPEC-V2.md, "Import").

What version 2 keeps that version 1 turned into a ``transport_error`` or dropped: every
finish reason with its word (``providerStopReason``), refusal text as ``refusal_delta``
records, every argument fragment, the call a ``length`` end cut, the model, and the
cached, written and reasoning token counts. Bad input keeps its code and location; the
recordings under ``tests/recordings/openai-chat`` replay (version 2) to what the official
SDK's own accumulator builds from the same bytes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any, cast

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    CourseModelRequest,
    CourseModelResponse,
    FixtureProviderAdapter,
    thaw,
)
from course.vendors import Recording, RecordingError, RecordingErrorCode, import_recording
from tests.test_vendor_openai_chat import DONE, ID, OPEN, USAGE_BODY, chunk, fragment, spot
from tests.vendor_helpers import RECORDINGS, openai_client

Code = RecordingErrorCode
FOLDER = RECORDINGS / "openai-chat"
MODEL = "gpt-4o-2024-08-06"
START = {"type": "response_start", "responseId": ID, "role": "assistant", "model": MODEL}
USAGE = {"inputTokens": 19, "outputTokens": 11}


def stream(*middle: str, finish: str = "stop", usage: Any = USAGE_BODY) -> str:
    """An opening chunk, the middle chunks, a finish chunk, the usage chunk and [DONE]."""
    return OPEN + "".join(middle) + chunk({}, finish) + chunk(choices=[], usage=usage) + DONE


def records(text: str | bytes, **kwargs: Any) -> list[dict[str, Any]]:
    result = import_recording(text, **kwargs)
    assert (result.format, result.schema_version) == ("openai-chat", 2)
    return records_of(result)


def records_of(result: Recording) -> list[dict[str, Any]]:
    return cast("list[dict[str, Any]]", thaw(result.response)["records"])


def assert_refused(
    text: str, code: RecordingErrorCode, event_index: int, where: tuple[int, int], **kw: Any
) -> RecordingError:
    with pytest.raises(RecordingError) as info:
        import_recording(text, **kw)
    error = info.value
    assert (error.code, error.event_index, (error.line, error.column)) == (
        code,
        event_index,
        where,
    ), str(error)
    return error


def end(stop_reason: str, word: str, usage: Any = USAGE) -> dict[str, Any]:
    return {
        "type": "response_end",
        "responseId": ID,
        "stopReason": stop_reason,
        "usage": usage,
        "providerStopReason": word,
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text_delta", "text": value}


def refusal(value: str) -> dict[str, Any]:
    return {"type": "refusal_delta", "text": value}


def call(call_id: str, name: str, arguments: Any, fragments: list[str]) -> dict[str, Any]:
    return {
        "type": "tool_call",
        "id": call_id,
        "name": name,
        "arguments": arguments,
        "argumentFragments": fragments,
    }


def cut(call_id: str, name: str, fragments: list[str]) -> dict[str, Any]:
    return {
        "type": "tool_call_incomplete",
        "id": call_id,
        "name": name,
        "argumentFragments": fragments,
    }


def replay(recording: Recording) -> CourseModelResponse:
    """Replay an imported recording as the version-2 fixture it is."""
    fixture = {"schemaVersion": recording.schema_version, "responses": [thaw(recording.response)]}

    async def run() -> CourseModelResponse:
        adapter = FixtureProviderAdapter(fixture)
        return await adapter.stream(CourseModelRequest(id="request-1")).result()

    return asyncio.run(run())


# -- the version ---------------------------------------------------------------------------


def test_version_2_is_the_default_and_version_1_keeps_its_rules() -> None:
    recording = stream(chunk({"content": "Hi"}), finish="length")
    assert records(recording) == [START, text("Hi"), end("length", "length")]
    old = import_recording(recording, schema_version=1)
    assert old.schema_version == 1
    assert thaw(old.response)["records"] == [
        {"type": "response_start", "responseId": ID, "role": "assistant"},
        text("Hi"),
        {
            "type": "transport_error",
            "message": "The provider stopped the response: length",
            "code": "length",
        },
    ]


# -- ends -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("finish", "stop_reason"),
    [("stop", "stop"), ("length", "length"), ("content_filter", "content_filter")],
)
def test_every_finish_word_of_the_table_is_an_end_with_its_word(
    finish: str, stop_reason: str
) -> None:
    assert records(stream(chunk({"content": "a"}), finish=finish)) == [
        START,
        text("a"),
        end(stop_reason, finish),
    ]


def test_stop_with_tool_calls_is_a_tool_call_end_whose_word_is_stop() -> None:
    result = records(stream(fragment(0, "call_1", "add", arguments='{"n":1}')))
    assert result == [START, call("call_1", "add", {"n": 1}, ['{"n":1}']), end("tool_call", "stop")]
    result = records(stream(fragment(0, "call_1", "add", arguments="{}"), finish="tool_calls"))
    assert result[-1] == end("tool_call", "tool_calls")


@pytest.mark.parametrize("word", ["insufficient_system_resource", "error", "pause_turn", "refusal"])
def test_a_word_outside_the_table_stays_a_transport_error_with_that_code(word: str) -> None:
    result = records(stream(chunk({"content": "a"}), fragment(0, "c", "f"), finish=word))
    assert result == [
        START,
        text("a"),
        {
            "type": "transport_error",
            "message": f"The provider stopped the response: {word}",
            "code": word,
        },
    ]


def test_an_end_needs_usage_recorded_or_given() -> None:
    bare = OPEN + chunk({"content": "a"}) + chunk({}, "length") + DONE
    assert_refused(bare, Code.RECORDING_MISSING_USAGE, 3, (7, 1))
    given = records(bare, usage=(3, 4))
    assert given[-1] == end("length", "length", {"inputTokens": 3, "outputTokens": 4})


def test_a_content_filter_end_drops_the_open_calls() -> None:
    result = records(stream(fragment(0, "c", "f", arguments='{"a":'), finish="content_filter"))
    assert result == [START, end("content_filter", "content_filter")]


# -- refusals --------------------------------------------------------------------------------


def test_refusal_text_is_refusal_deltas_and_a_refusal_end_whatever_the_finish() -> None:
    middle = [chunk({"refusal": part}) for part in ["I'm", " sorry", "", "."]]
    for finish in ("stop", "length", "content_filter", "something_new"):
        assert records(stream(*middle, finish=finish)) == [
            START,
            refusal("I'm"),
            refusal(" sorry"),
            refusal("."),
            end("refusal", finish),
        ]


def test_a_refusal_keeps_the_calls_its_finish_completes_and_drops_a_cut_one() -> None:
    calls = fragment(0, "call_1", "f", arguments="{}")
    said = chunk({"refusal": "No."})
    assert records(stream(calls, said, finish="tool_calls")) == [
        START,
        refusal("No."),
        call("call_1", "f", {}, ["{}"]),
        end("refusal", "tool_calls"),
    ]
    open_call = fragment(0, "call_1", "f", arguments='{"a"')
    assert records(stream(open_call, said, finish="length")) == [
        START,
        refusal("No."),
        end("refusal", "length"),
    ]


def test_text_and_refusal_keep_their_order() -> None:
    middle = [chunk({"content": "Well"}), chunk({"refusal": "no"}), chunk({"content": "."})]
    assert records(stream(*middle)) == [
        START,
        text("Well"),
        refusal("no"),
        text("."),
        end("refusal", "stop"),
    ]


# -- tool calls ---------------------------------------------------------------------------


def test_every_fragment_is_kept_empty_ones_included() -> None:
    result = records(
        stream(
            fragment(0, "call_1", "get_weather", arguments=""),
            fragment(0, arguments='{"city":'),
            fragment(0, arguments=""),
            fragment(0, arguments='"Paris"}'),
            finish="tool_calls",
        )
    )
    assert result[1] == call(
        "call_1", "get_weather", {"city": "Paris"}, ["", '{"city":', "", '"Paris"}']
    )


def test_a_call_without_any_arguments_string_has_no_fragments() -> None:
    result = records(stream(fragment(0, "call_1", "now"), finish="tool_calls"))
    assert result[1] == {"type": "tool_call", "id": "call_1", "name": "now", "arguments": {}}


def test_a_length_end_cuts_the_last_call_and_completes_the_others_in_index_order() -> None:
    result = records(
        stream(
            fragment(2, "call_c", "third", arguments='{"q": "unfinis'),
            fragment(0, "call_a", "first", arguments='{"n"'),
            fragment(1, "call_b", "second", arguments=""),
            fragment(0, arguments=":1}"),
            finish="length",
        )
    )
    assert result == [
        START,
        call("call_a", "first", {"n": 1}, ['{"n"', ":1}"]),
        call("call_b", "second", {}, [""]),
        cut("call_c", "third", ['{"q": "unfinis']),
        end("length", "length"),
    ]
    response = replay(
        import_recording(stream(fragment(0, "c", "f", arguments='{"a'), finish="length"))
    )
    assert response.stop_reason == "length"
    (block,) = response.message.content
    assert (block.type, block.arguments_text) == ("incompleteToolCall", '{"a')  # type: ignore[union-attr]


def test_a_cut_call_keeps_no_fragment_when_none_came() -> None:
    result = records(stream(fragment(0, "call_1", "f"), finish="length"))
    assert result == [START, cut("call_1", "f", []), end("length", "length")]


def test_at_a_length_end_another_open_call_must_be_a_json_object() -> None:
    text_ = stream(
        fragment(0, "call_a", "first", arguments='{"n":'),
        fragment(1, "call_b", "second", arguments="{"),
        finish="length",
    )
    # Class 5, at [DONE], where the end is decided (the event as a whole).
    error = assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 5, (11, 1))
    assert "call_a" in error.message


def test_a_provider_error_after_a_length_finish_drops_the_open_calls() -> None:
    text_ = OPEN + fragment(0, "call_1", "f", arguments='{"a"') + chunk({}, "length")
    text_ += 'data: {"error":{"message":"Stream reset","type":"server_error"}}\n\n'
    assert records(text_) == [
        START,
        {"type": "transport_error", "message": "Stream reset", "code": "server_error"},
    ]
    cut_off = import_recording(OPEN + fragment(0, "call_1", "f") + chunk({}, "length"))
    assert cut_off.truncated is True
    assert records_of(cut_off) == [START]


# -- the model ---------------------------------------------------------------------------------


def test_the_model_is_the_first_non_empty_chunk_model() -> None:
    first_empty = chunk({"role": "assistant", "content": ""}, model="")
    later = chunk({"content": "a"}, model="gpt-4o-mini")
    text_ = first_empty + later + chunk({"content": "b"}) + chunk({}, "stop")
    result = records(text_ + chunk(choices=[], usage=USAGE_BODY) + DONE)
    assert result[0] == {**START, "model": "gpt-4o-mini"}
    nameless = [chunk({"content": "a"}, drop=("model",)), chunk({}, "stop", model=None)]
    result = records("".join(nameless) + chunk(choices=[], usage=USAGE_BODY, model="") + DONE)
    assert result[0] == {"type": "response_start", "responseId": ID, "role": "assistant"}


def test_a_model_read_that_is_not_a_string_is_malformed_in_version_2_only() -> None:
    first = chunk({"role": "assistant", "content": ""}, model="")
    text_ = first + chunk({"content": "a"}, model=4) + chunk({}, "stop") + DONE
    error = assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 1, spot(text_, 3, '"model":'))
    assert "`model`" in error.message
    assert import_recording(text_, schema_version=1, usage=(1, 1)).schema_version == 1
    # Once a chunk named the model, later chunks' `model` is not read.
    assert records(stream(chunk({"content": "a"}, model=4)))[0] == START


# -- usage -----------------------------------------------------------------------------------


def test_usage_details_become_the_fixture_counts() -> None:
    usage = {
        **USAGE_BODY,
        "prompt_tokens_details": {"cached_tokens": 12, "cache_write_tokens": 3, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    assert records(stream(usage=usage))[-1]["usage"] == {
        **USAGE,
        "cacheReadTokens": 12,
        "cacheWriteTokens": 3,
        "reasoningTokens": 0,  # reported as 0: written as 0
    }
    nulls: dict[str, Any] = {
        **USAGE_BODY,
        "prompt_tokens_details": None,
        "completion_tokens_details": {},
    }
    assert records(stream(usage=nulls))[-1]["usage"] == USAGE
    empty = {**USAGE_BODY, "prompt_tokens_details": {"cached_tokens": None}}
    assert records(stream(usage=empty))[-1]["usage"] == USAGE


@pytest.mark.parametrize(
    ("details", "before"),
    [
        ({"prompt_tokens_details": 5}, '"prompt_tokens_details":'),
        ({"prompt_tokens_details": {"cached_tokens": "5"}}, '"cached_tokens":'),
        ({"prompt_tokens_details": {"cache_write_tokens": -1}}, '"cache_write_tokens":'),
        ({"completion_tokens_details": []}, '"completion_tokens_details":'),
        ({"completion_tokens_details": {"reasoning_tokens": True}}, '"reasoning_tokens":'),
        ({"completion_tokens_details": {"reasoning_tokens": 2**53}}, '"reasoning_tokens":'),
    ],
)
def test_a_mistyped_usage_detail_is_malformed_where_it_is(
    details: dict[str, Any], before: str
) -> None:
    text_ = stream(usage={**USAGE_BODY, **details})
    assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 2, spot(text_, 5, before))
    # Version 1 reads the two counts alone.
    assert import_recording(text_, schema_version=1).schema_version == 1


@pytest.mark.parametrize(
    "details",
    [
        {"prompt_tokens_details": {"cached_tokens": 20}},
        {"prompt_tokens_details": {"cached_tokens": 10, "cache_write_tokens": 10}},
        {"completion_tokens_details": {"reasoning_tokens": 12}},
    ],
)
def test_usage_that_breaks_the_usage_rules_is_malformed_at_the_terminal(
    details: dict[str, Any],
) -> None:
    text_ = stream(chunk({"content": "a"}), usage={**USAGE_BODY, **details})
    error = assert_refused(text_, Code.RECORDING_MALFORMED_EVENT, 4, (9, 1))
    assert "exceed" in error.message


def test_the_last_usage_is_judged_not_an_earlier_one() -> None:
    bad = {**USAGE_BODY, "prompt_tokens_details": {"cached_tokens": 99}}
    text_ = OPEN + chunk({}, "stop") + chunk(choices=[], usage=bad)
    text_ += chunk(choices=[], usage=USAGE_BODY) + DONE
    assert records(text_)[-1] == end("stop", "stop")


# -- non-streamed bodies -----------------------------------------------------------------------


def completion(message: dict[str, Any], finish: str = "stop", **top: Any) -> str:
    body: dict[str, Any] = {
        "id": ID,
        "object": "chat.completion",
        "created": 1755442000,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", **message},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": {**USAGE_BODY, "prompt_tokens_details": {"cached_tokens": 8}},
        **top,
    }
    return json.dumps(body, indent=2)


WHOLE_USAGE = {**USAGE, "cacheReadTokens": 8}


def test_a_whole_refusal_is_a_refusal_delta_and_a_refusal_end() -> None:
    body = completion({"content": None, "refusal": "I can't help with that."})
    assert records(body) == [
        START,
        refusal("I can't help with that."),
        end("refusal", "stop", WHOLE_USAGE),
    ]


def test_a_whole_length_answer_cuts_its_last_call() -> None:
    calls = [
        {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}},
        {"id": "call_b", "type": "function", "function": {"name": "g", "arguments": '{"b":'}},
    ]
    assert records(completion({"content": "Sure.", "tool_calls": calls}, "length")) == [
        START,
        text("Sure."),
        {"type": "tool_call", "id": "call_a", "name": "f", "arguments": {"a": 1}},
        cut("call_b", "g", ['{"b":']),
        end("length", "length", WHOLE_USAGE),
    ]
    nameless = [{"id": "call_c", "type": "function", "function": {"name": "h"}}]
    assert records(completion({"tool_calls": nameless}, "length"))[1] == cut("call_c", "h", [])


def test_a_whole_content_filter_answer_drops_its_calls_and_keeps_its_model() -> None:
    calls = [{"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{"}}]
    body = completion({"content": "Par", "tool_calls": calls}, "content_filter", model="gpt-x")
    assert records(body) == [
        {**START, "model": "gpt-x"},
        text("Par"),
        end("content_filter", "content_filter", WHOLE_USAGE),
    ]


def test_a_whole_answer_with_bad_usage_is_refused_where_the_usage_is() -> None:
    body = completion({"content": "a"}, usage={**USAGE_BODY, "prompt_tokens_details": []})
    line = body.split("\n").index('    "prompt_tokens_details": []') + 1
    assert_refused(body, Code.RECORDING_MALFORMED_EVENT, 0, (line, 30))
    over = completion(
        {"content": "a"},
        usage={**USAGE_BODY, "completion_tokens_details": {"reasoning_tokens": 50}},
    )
    assert_refused(over, Code.RECORDING_MALFORMED_EVENT, 0, (1, 1))


# -- recordings, against the official SDK --------------------------------------------------------

_V2_RECORDS: dict[str, list[str]] = {
    "length_tool_call.sse": ["response_start", "tool_call", "tool_call_incomplete", "response_end"],
    "cached_reasoning.sse": ["response_start", *["text_delta"] * 7, "response_end"],
    "refusal.sse": ["response_start", *["refusal_delta"] * 11, "response_end"],
    "length.sse": ["response_start", "text_delta", "response_end"],
    "content_filter.sse": ["response_start", "text_delta", "text_delta", "response_end"],
    "azure_async_blocked.sse": ["response_start", "text_delta", "text_delta", "response_end"],
    "completion_length_tool_call.json": [
        "response_start",
        "tool_call",
        "tool_call_incomplete",
        "response_end",
    ],
    "completion_cached_reasoning.json": ["response_start", "text_delta", "response_end"],
    "completion_refusal.json": ["response_start", "refusal_delta", "response_end"],
    "completion_length.json": ["response_start", "text_delta", "response_end"],
}


def _import_file(path: Path) -> Recording:
    usage = (9, 7) if path.name in ("no_usage.sse", "azure_async_blocked.sse") else None
    return import_recording(path.read_bytes(), format="openai-chat", usage=usage)


@pytest.mark.parametrize("name", sorted(_V2_RECORDS))
def test_the_new_kinds_of_recording_import_to_their_records(name: str) -> None:
    kinds = [record["type"] for record in records_of(_import_file(FOLDER / name))]
    assert kinds == _V2_RECORDS[name]


def _sdk_completion(path: Path) -> Any:
    """What the official SDK builds from the same bytes: the stream helper's accumulated
    completion (carried by the error it raises for a length or content-filter end), or the
    non-streamed ``create``'s."""
    body = path.read_bytes()
    if path.suffix == ".json":
        client = openai_client(body, content_type="application/json")
        return client.chat.completions.create(model="m", messages=[])
    return _sdk_completion_of(body)


def _sdk_completion_of(body: bytes) -> Any:
    messages: Any = [{"role": "user", "content": "hi"}]
    try:
        with openai_client(body).chat.completions.stream(model="m", messages=messages) as sdk:
            return sdk.get_final_completion()
    except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as error:
        return error.completion


_ENDED = sorted(
    path.name
    for path in [*FOLDER.glob("*.sse"), *FOLDER.glob("*.json")]
    # Failures (compared in test_vendor_openai_chat.py), and the Azure stream whose finish
    # comes in a content-filter chunk, which the SDK's stream helper skips.
    if path.name
    not in ("cut.sse", "provider_error.sse", "error_before_start.sse", "azure_async_blocked.sse")
)


@pytest.mark.parametrize("name", _ENDED)
def test_the_sdk_agrees_with_the_version_2_replay(name: str) -> None:
    path = FOLDER / name
    response = replay(_import_file(path))
    final = _sdk_completion(path)
    (choice,) = final.choices
    message = choice.message
    assert (response.response_id, response.model) == (final.id, final.model)
    content = response.message.content
    texts = "".join(block.text for block in content if block.type == "text")
    assert (message.content or "") == texts
    refusals = "".join(block.text for block in content if block.type == "refusal")
    assert (message.refusal or "") == refusals
    calls = [
        (
            block.id,
            block.name,
            block.arguments_text if block.type == "incompleteToolCall" else thaw(block.arguments),
        )
        for block in content
        if block.type in ("toolCall", "incompleteToolCall")
    ]
    sdk_calls = [
        (
            sdk_call.id,
            sdk_call.function.name,
            sdk_call.function.arguments
            if response.stop_reason == "length" and position == len(calls) - 1
            else json.loads(sdk_call.function.arguments or "{}"),
        )
        for position, sdk_call in enumerate(message.tool_calls or [])
    ]
    assert sdk_calls == calls
    assert response.provider_stop_reason == choice.finish_reason
    usage = response.usage
    if name in ("no_usage.sse", "azure_async_blocked.sse"):
        assert final.usage is None
        return
    assert (usage.input_tokens, usage.output_tokens) == (
        final.usage.prompt_tokens,
        final.usage.completion_tokens,
    )
    prompt = final.usage.prompt_tokens_details
    assert usage.cache_read_tokens == (None if prompt is None else prompt.cached_tokens)
    assert usage.cache_write_tokens == (None if prompt is None else prompt.cache_write_tokens)
    completion_details = final.usage.completion_tokens_details
    assert usage.reasoning_tokens == (
        None if completion_details is None else completion_details.reasoning_tokens
    )


# -- generated recordings, against the SDK -------------------------------------------------------

_characters = st.characters(codec="utf-8", exclude_categories=["Cs"])
_ids = st.text(_characters, min_size=1, max_size=6)


def _pieces(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut anywhere into fragments, the first maybe empty (as OpenAI opens a call)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=4)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@st.composite
def chat_recordings(draw: st.DrawFn) -> tuple[str, list[list[str]]]:
    """A recording as OpenAI streams it, with what version 2 keeps: refusal text, any
    finish of the table, a call the ``length`` end cut, the usage details; and each
    call's fragments, as sent."""
    head = {"id": draw(_ids), "object": "chat.completion.chunk", "created": 1, "model": draw(_ids)}
    events: list[dict[str, Any]] = []

    def add(delta: dict[str, Any], finish: str | None = None) -> None:
        events.append({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    add({"role": "assistant", "content": draw(st.sampled_from(["", None])), "refusal": None})
    for kind in draw(st.lists(st.sampled_from(["content", "refusal"]), max_size=4)):
        add({kind: draw(st.text(_characters, max_size=5))})
    finish = draw(st.sampled_from(["stop", "tool_calls", "length", "content_filter"]))
    ids = draw(st.lists(_ids, unique=True, min_size=finish == "tool_calls", max_size=3))
    sent: list[list[str]] = []
    for index, call_id in enumerate(ids):
        arguments = draw(
            st.dictionaries(st.text(_characters, max_size=3), st.integers(), max_size=2)
        )
        text = json.dumps(arguments, separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])))
        if finish == "length" and index == len(ids) - 1:
            text = text[: draw(st.integers(0, len(text)))]  # the limit cut it
        pieces = _pieces(draw, text)
        sent.append(pieces)
        first = {"index": index, "id": call_id, "type": "function"}
        add({"tool_calls": [{**first, "function": {"name": "f", "arguments": pieces[0]}}]})
        for piece in pieces[1:]:
            add({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    add({}, finish)
    prompt, completion = draw(st.integers(0, 99)), draw(st.integers(0, 99))
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if draw(st.booleans()):
        usage["prompt_tokens_details"] = {"cached_tokens": draw(st.integers(0, prompt))}
    if draw(st.booleans()):
        usage["completion_tokens_details"] = {"reasoning_tokens": draw(st.integers(0, completion))}
    events.append({**head, "choices": [], "usage": usage})
    return "".join(f"data: {json.dumps(event)}\n\n" for event in events) + DONE, sent


@settings(max_examples=40)
@given(chat_recordings())
def test_generated_recordings_replay_to_what_the_sdk_builds(
    case: tuple[str, list[list[str]]],
) -> None:
    text, sent = case
    recording = import_recording(text)
    response = replay(recording)
    final = _sdk_completion_of(text.encode())
    (choice,) = final.choices
    message = choice.message
    content = response.message.content
    assert (response.response_id, response.model) == (final.id, final.model)
    assert "".join(b.text for b in content if b.type == "text") == (message.content or "")
    refused = "".join(b.text for b in content if b.type == "refusal")
    assert refused == (message.refusal or "")
    assert response.provider_stop_reason == choice.finish_reason
    expected = {"length": "length", "content_filter": "contentFilter"}.get(choice.finish_reason)
    if refused:
        expected = "refusal"
    elif expected is None:
        expected = "toolCall" if message.tool_calls else "stop"
    assert response.stop_reason == expected
    # The calls the end keeps: completed at stop or tool_calls, the last one cut at length.
    sdk_calls = message.tool_calls or []
    keeps = choice.finish_reason in ("stop", "tool_calls") or (
        choice.finish_reason == "length" and not refused
    )
    calls = [b for b in content if b.type in ("toolCall", "incompleteToolCall")]
    assert [b.id for b in calls] == ([c.id for c in sdk_calls] if keeps else [])
    for block, sdk_call in zip(calls, sdk_calls, strict=False):
        if block.type == "incompleteToolCall":
            assert block.arguments_text == (sdk_call.function.arguments or "")
        else:
            assert thaw(block.arguments) == json.loads(sdk_call.function.arguments or "{}")
    kept = [r["argumentFragments"] for r in records_of(recording) if "argumentFragments" in r]
    assert kept == (sent if keeps else [])  # every fragment, as streamed
    usage, sdk_usage = response.usage, final.usage
    assert (usage.input_tokens, usage.output_tokens) == (
        sdk_usage.prompt_tokens,
        sdk_usage.completion_tokens,
    )
    prompt, completion = sdk_usage.prompt_tokens_details, sdk_usage.completion_tokens_details
    assert usage.cache_read_tokens == (prompt and prompt.cached_tokens)
    assert usage.reasoning_tokens == (completion and completion.reasoning_tokens)
