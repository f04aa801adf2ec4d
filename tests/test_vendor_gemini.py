"""Importing ``gemini`` recordings: each judged against what google-genai itself parses
from the same bytes, then the rules of SPEC-GEMINI.md one by one (codes and places)."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Mapping
from typing import Final, cast

import httpx
import pytest
from google import genai
from google.genai import errors, types
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    CourseModelRequest,
    CourseModelResponse,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
    thaw,
)
from course.vendors import Recording, RecordingError, RecordingErrorCode, import_recording
from course.vendors._gemini import is_base64, signature_bytes

from .vendor_helpers import RECORDINGS

Code = RecordingErrorCode
RECORDED: Final = RECORDINGS / "gemini"
RESPONSE_ID: Final = "resp-1"
MODEL: Final = "gemini-2.5-flash"
SIGNATURE: Final = base64.b64encode(b"\x01\x02signature\xff").decode()

Chunk = dict[str, object]


def replay(recording: Recording) -> CourseModelResponse:
    """Replay an imported recording as a version-2 fixture: its response, or its error."""
    adapter = FixtureProviderAdapter({"schemaVersion": 2, "responses": [thaw(recording.response)]})

    async def run() -> CourseModelResponse:
        return await adapter.stream(CourseModelRequest(id="request-1")).result()

    return asyncio.run(run())


# -- what google-genai parses --------------------------------------------------------------


def sdk_client(body: bytes, content_type: str = "text/event-stream") -> genai.Client:
    """A real ``genai.Client`` whose every request is answered with ``body``."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, content=body)

    http = httpx.Client(transport=httpx.MockTransport(handler))
    options = types.HttpOptions(base_url="http://recording.invalid", httpx_client=http)
    return genai.Client(api_key="test", http_options=options)


def sdk_view(responses: list[types.GenerateContentResponse]) -> dict[str, object]:
    """What a user of the SDK reads from a stream's responses, in the terms records use."""
    content: list[tuple[object, ...]] = []
    finish = block = None
    usage = None
    for response in responses:
        for candidate in response.candidates or []:
            for part in (candidate.content and candidate.content.parts) or []:
                call = part.function_call
                if call is not None:
                    content.append(("call", call.id, call.name, call.args, part.thought_signature))
                    continue
                if part.thought:
                    if part.text:
                        content.append(("thinking", part.text))
                elif part.text:
                    content.append(("text", part.text))
                if part.thought_signature is not None:
                    content.append(("signature", part.thought_signature))
            if candidate.finish_reason is not None:
                finish = candidate.finish_reason.value
        if response.prompt_feedback is not None and response.prompt_feedback.block_reason:
            block = response.prompt_feedback.block_reason.value
        if response.usage_metadata is not None:
            meta = response.usage_metadata
            thoughts = meta.thoughts_token_count
            usage = {
                "inputTokens": meta.prompt_token_count or 0,
                "outputTokens": (meta.candidates_token_count or 0) + (thoughts or 0),
                "reasoningTokens": thoughts,
                "cacheReadTokens": meta.cached_content_token_count,
            }
    return {
        "responseId": responses[0].response_id,
        "model": responses[0].model_version,
        "content": content,
        "providerStopReason": block or finish,
        "usage": usage,
    }


def records_view(recording: Recording) -> dict[str, object]:
    """The same view of an imported recording's records."""
    records = cast("list[dict[str, object]]", thaw(recording.response)["records"])
    start, end = records[0], records[-1]
    content: list[tuple[object, ...]] = []
    for record in records[1:]:
        kind = record["type"]
        if kind == "text_delta":
            content.append(("text", record["text"]))
        elif kind == "thinking_delta" and record["text"]:
            content.append(("thinking", record["text"]))
        elif kind == "thinking_signature":
            content.append(("signature", signature_bytes(cast(str, record["signature"]))))
        elif kind == "tool_call":
            made_up = record["id"] == f"{start['responseId']}:call:0"
            signature = record.get("signature")
            decoded = None if signature is None else signature_bytes(cast(str, signature))
            call_id = None if made_up else record["id"]
            content.append(("call", call_id, record["name"], record["arguments"], decoded))
    usage = None
    if end["type"] == "response_end":
        counts = cast("dict[str, object]", end["usage"])
        usage = {key: counts.get(key) for key in ("inputTokens", "outputTokens")}
        usage |= {key: counts.get(key) for key in ("reasoningTokens", "cacheReadTokens")}
    return {
        "responseId": start["responseId"],
        "model": start.get("model"),
        "content": content,
        "providerStopReason": end.get("providerStopReason"),
        "usage": usage,
    }


def imported(name: str) -> Recording:
    path = RECORDED / name
    return import_recording(path.read_bytes(), source=str(path))


@pytest.mark.parametrize(
    "name",
    [
        "text.sse",
        "thinking.sse",
        "tool_call.sse",
        "max_tokens.sse",
        "safety.sse",
        "blocked_prompt.sse",
    ],
)
def test_each_recording_imports_as_google_genai_parses_it(name: str) -> None:
    body = (RECORDED / name).read_bytes()
    responses = list(sdk_client(body).models.generate_content_stream(model=MODEL, contents="x"))
    recording = imported(name)
    assert (recording.format, recording.truncated, recording.schema_version) == ("gemini", False, 2)
    assert records_view(recording) == sdk_view(responses)
    replay(recording)  # a valid version-2 response


def test_the_mid_stream_error_is_the_sdks_error_after_the_same_text() -> None:
    body = (RECORDED / "mid_stream_error.sse").read_bytes()
    texts: list[str] = []
    with pytest.raises(errors.ServerError) as info:
        for response in sdk_client(body).models.generate_content_stream(model=MODEL, contents="x"):
            texts.append(response.text or "")
    records = cast(
        "list[dict[str, object]]", thaw(imported("mid_stream_error.sse").response)["records"]
    )
    assert [r["text"] for r in records if r["type"] == "text_delta"] == texts
    assert records[-1] == {
        "type": "transport_error",
        "message": info.value.message,
        "code": info.value.status,
        "status": info.value.code,
    }


def test_a_generate_content_body_imports_as_the_sdk_parses_it() -> None:
    body = (RECORDED / "whole.json").read_bytes()
    response = sdk_client(body, "application/json").models.generate_content(
        model=MODEL, contents="x"
    )
    recording = imported("whole.json")
    assert recording.truncated is False
    assert records_view(recording) == sdk_view([response])


def test_the_json_array_answer_is_read_as_the_stream_it_holds() -> None:
    text = (RECORDED / "stream_array.json").read_text()
    chunks = json.loads(text)
    as_sse = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)
    assert imported("stream_array.json") == import_recording(as_sse)


# -- building streams ----------------------------------------------------------------------


def part_chunk(*parts: object, finish: str | None = None, **extra: object) -> Chunk:
    candidate: dict[str, object] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    chunk: Chunk = {"candidates": [candidate], "modelVersion": MODEL, "responseId": RESPONSE_ID}
    chunk.update(extra)
    return chunk


def usage(prompt: int = 7, candidates: int = 5, **details: int) -> dict[str, int]:
    return {"promptTokenCount": prompt, "candidatesTokenCount": candidates, **details}


def end_chunk(finish: str = "STOP", **meta: int) -> Chunk:
    return part_chunk({"text": ""}, finish=finish, usageMetadata=usage(**meta))


def stream(*chunks: Mapping[str, object]) -> str:
    return "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)


def records(text: str, **options: object) -> list[dict[str, object]]:
    recording = import_recording(text, format="gemini", **options)  # type: ignore[arg-type]
    return cast("list[dict[str, object]]", thaw(recording.response)["records"])


def content(text: str) -> list[dict[str, object]]:
    """The records between the start and the end."""
    return records(text)[1:-1]


def refused(text: str, format: str = "gemini") -> RecordingError:
    with pytest.raises(RecordingError) as info:
        import_recording(text, format=format)
    return info.value


def at(text: str, event_index: int, fragment: str | None = None, nth: int = 0) -> tuple[int, int]:
    """Where ``fragment`` (its ``nth`` occurrence) lies on event ``event_index``'s data line;
    column 1 without one (the event as a whole)."""
    line = 2 * event_index + 1
    if fragment is None:
        return line, 1
    row = re.split(r"\r\n|\r|\n", text)[line - 1]
    column = -1
    for _ in range(nth + 1):
        column = row.index(fragment, column + 1)
    return line, column + 1


def assert_refused(
    text: str, code: Code, event_index: int, fragment: str | None = None, nth: int = 0
) -> RecordingError:
    error = refused(text)
    assert (error.code, error.event_index, (error.line, error.column)) == (
        code,
        event_index,
        at(text, event_index, fragment, nth),
    ), str(error)
    return error


def start(model: str | None = MODEL) -> dict[str, object]:
    record: dict[str, object] = {
        "type": "response_start",
        "responseId": RESPONSE_ID,
        "role": "assistant",
    }
    if model is not None:
        record["model"] = model
    return record


# -- detection -----------------------------------------------------------------------------


def test_auto_detects_candidates_or_prompt_feedback_without_object_or_type() -> None:
    assert import_recording(stream(end_chunk())).format == "gemini"
    blocked = {"promptFeedback": {"blockReason": "OTHER"}, "responseId": RESPONSE_ID}
    assert import_recording(stream(blocked), usage=(1, 0)).format == "gemini"
    for extra in ({"object": "x"}, {"type": "x"}):
        error = refused(stream(end_chunk() | extra), format="auto")
        assert error.code is Code.RECORDING_UNKNOWN_FORMAT


def test_a_recording_that_opens_with_an_error_needs_its_format_named() -> None:
    text = stream({"error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}})
    assert refused(text, format="auto").code is Code.RECORDING_UNKNOWN_FORMAT
    assert records(text) == [
        {"type": "transport_error", "message": "Quota", "code": "RESOURCE_EXHAUSTED", "status": 429}
    ]


@pytest.mark.parametrize("first", [{"choices": []}, {"error": "text"}, {"responseId": "r"}])
def test_a_named_format_refuses_a_first_event_that_does_not_fit(
    first: Mapping[str, object],
) -> None:
    assert refused(stream(first)).code is Code.RECORDING_UNKNOWN_FORMAT


# -- what a recording becomes --------------------------------------------------------------


def test_text_parts_are_text_deltas_with_their_boundaries_and_empty_ones_make_none() -> None:
    text = stream(
        part_chunk({"text": "Hel"}, {"text": ""}), part_chunk({"text": "lo"}), end_chunk()
    )
    assert records(text) == [
        start(),
        {"type": "text_delta", "text": "Hel"},
        {"type": "text_delta", "text": "lo"},
        {
            "type": "response_end",
            "responseId": RESPONSE_ID,
            "stopReason": "stop",
            "usage": {"inputTokens": 7, "outputTokens": 5},
            "providerStopReason": "STOP",
        },
    ]


def test_the_model_is_the_first_non_empty_model_version() -> None:
    first = part_chunk({"text": "a"})
    first.pop("modelVersion")
    later = part_chunk({"text": "b"}, modelVersion="")
    assert records(stream(first, later, end_chunk()))[0] == start()
    no_model = {key: value for key, value in end_chunk().items() if key != "modelVersion"}
    assert records(stream(no_model))[0] == start(None)


def thought(text: str | None = None, signature: str | None = None) -> dict[str, object]:
    part: dict[str, object] = {"thought": True}
    if text is not None:
        part["text"] = text
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def thinking(text: str) -> dict[str, object]:
    return {"type": "thinking_delta", "text": text}


SIGNED: Final = {"type": "thinking_signature", "signature": SIGNATURE}


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        # thought text, its signature right after its own delta
        ([thought("a", SIGNATURE)], [thinking("a"), SIGNED]),
        # an empty thought is a delta of its own
        ([thought("a"), thought("")], [thinking("a"), thinking("")]),
        # a signature alone right after a thinking delta
        ([thought("a"), thought("", SIGNATURE)], [thinking("a"), SIGNED]),
        ([thought("a"), thought(None, SIGNATURE)], [thinking("a"), SIGNED]),
        # a signature alone anywhere else: an empty delta first
        ([thought("", SIGNATURE)], [thinking(""), SIGNED]),
        (
            [{"text": "t", "thoughtSignature": SIGNATURE}],
            [{"type": "text_delta", "text": "t"}, thinking(""), SIGNED],
        ),
        ([{"text": "", "thoughtSignature": SIGNATURE}], [thinking(""), SIGNED]),
    ],
)
def test_thoughts_and_signatures_in_the_specs_order(
    parts: list[object], expected: list[dict[str, object]]
) -> None:
    assert content(stream(part_chunk(*parts), end_chunk())) == expected


def test_function_calls_are_whole_with_made_up_ids_counted_over_every_call() -> None:
    calls = [
        {
            "functionCall": {"name": "a", "args": {"x": [1, {"y": None}]}},
            "thoughtSignature": SIGNATURE,
        },
        {"functionCall": {"name": "b", "id": "given"}},
        {"functionCall": {"name": "c"}},
    ]
    text = stream(part_chunk(*calls[:2]), part_chunk(calls[2]), end_chunk())
    recorded = records(text)
    assert recorded[1:-1] == [
        {
            "type": "tool_call",
            "id": f"{RESPONSE_ID}:call:0",
            "name": "a",
            "arguments": {"x": [1, {"y": None}]},
            "signature": SIGNATURE,
        },
        {"type": "tool_call", "id": "given", "name": "b", "arguments": {}},
        {"type": "tool_call", "id": f"{RESPONSE_ID}:call:2", "name": "c", "arguments": {}},
    ]
    assert recorded[-1]["stopReason"] == "tool_call"


def test_other_part_kinds_are_ignored_and_counted() -> None:
    parts = [{"inlineData": {"mimeType": "image/png", "data": "AA=="}}, {"executableCode": {}}]
    recording = import_recording(stream(part_chunk(*parts), end_chunk()), format="gemini")
    assert dict(recording.ignored) == {"part:inlineData": 1, "part:executableCode": 1}


@pytest.mark.parametrize(
    ("word", "stop_reason"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        *[
            (word, "content_filter")
            for word in (
                "SAFETY",
                "RECITATION",
                "BLOCKLIST",
                "PROHIBITED_CONTENT",
                "SPII",
                "IMAGE_SAFETY",
                "IMAGE_PROHIBITED_CONTENT",
                "MODEL_ARMOR",
            )
        ],
    ],
)
def test_finish_words_of_the_table_end_the_response(word: str, stop_reason: str) -> None:
    end = records(stream(end_chunk(word)))[-1]
    assert (end["stopReason"], end["providerStopReason"]) == (stop_reason, word)


@pytest.mark.parametrize(
    "word",
    [
        "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL",
        "MISSING_THOUGHT_SIGNATURE",
        "OTHER",
        "NEW_WORD",
    ],
)
def test_any_other_finish_word_is_a_transport_error_with_that_code(word: str) -> None:
    text = stream(part_chunk({"text": "a"}, finish=word))  # no usage needed
    assert records(text)[-1] == {
        "type": "transport_error",
        "message": f"The provider stopped the response: {word}",
        "code": word,
    }


def test_a_blocked_prompt_is_a_content_filter_with_the_block_reason() -> None:
    chunk = {
        "promptFeedback": {"blockReason": "JAILBREAK"},
        "usageMetadata": {"promptTokenCount": 4},
    }
    chunk["responseId"] = RESPONSE_ID
    assert records(stream(chunk)) == [
        start(None),
        {
            "type": "response_end",
            "responseId": RESPONSE_ID,
            "stopReason": "content_filter",
            "usage": {"inputTokens": 4, "outputTokens": 0},
            "providerStopReason": "JAILBREAK",
        },
    ]


def test_usage_is_the_last_snapshot_with_details_only_where_reported() -> None:
    first = part_chunk({"text": "a"}, usageMetadata=usage(3, 1, thoughtsTokenCount=9))
    last = part_chunk(
        {"text": "b"},
        finish="STOP",
        usageMetadata={
            "promptTokenCount": 10,
            "thoughtsTokenCount": 4,
            "cachedContentTokenCount": 6,
        },
    )
    assert records(stream(first, last))[-1]["usage"] == {
        "inputTokens": 10,
        "outputTokens": 4,
        "cacheReadTokens": 6,
        "reasoningTokens": 4,
    }


def test_usage_and_the_same_finish_reason_may_follow_the_finish() -> None:
    after = {
        "candidates": [{"finishReason": "STOP"}],
        "usageMetadata": usage(8, 9),
        "responseId": RESPONSE_ID,
    }
    only_usage = {"usageMetadata": usage(8, 10), "responseId": RESPONSE_ID}
    text = stream(part_chunk({"text": "a"}, finish="STOP"), after, only_usage)
    assert records(text)[-1]["usage"] == {"inputTokens": 8, "outputTokens": 10}


def test_no_finish_reason_by_the_end_is_a_cut_stream() -> None:
    recording = import_recording(
        stream(part_chunk({"text": "a"}, usageMetadata=usage())), format="gemini"
    )
    assert recording.truncated is True
    assert thaw(recording.response)["records"] == [start(), {"type": "text_delta", "text": "a"}]


def test_a_stream_cut_inside_its_last_chunk_is_cut_even_after_the_finish() -> None:
    finished = stream(part_chunk({"text": "a"}, finish="STOP", usageMetadata=usage()))
    cut = finished + 'data: {"usageMetadata": {"promptTok'  # the input ends mid-chunk
    recording = import_recording(cut, format="gemini")
    assert recording.truncated is True
    assert thaw(recording.response)["records"] == [start(), {"type": "text_delta", "text": "a"}]
    assert records(finished)[-1]["type"] == "response_end"  # whole, the same stream ends


def test_missing_usage_is_refused_at_the_finishing_chunk_unless_supplied() -> None:
    text = stream(part_chunk({"text": "a"}, finish="STOP"), part_chunk())
    assert_refused(text, Code.RECORDING_MISSING_USAGE, 0)
    assert records(text, usage=(1, 2))[-1]["usage"] == {"inputTokens": 1, "outputTokens": 2}


def test_recorded_usage_wins_over_the_argument() -> None:
    assert records(stream(end_chunk()), usage=(1, 2))[-1]["usage"] == {
        "inputTokens": 7,
        "outputTokens": 5,
    }


# -- bad input: codes and places -----------------------------------------------------------


def test_two_candidates_are_unsupported() -> None:
    chunk = part_chunk({"text": "a"})
    chunk["candidates"] = [*cast(list[object], chunk["candidates"]), {"index": 1}]
    assert_refused(stream(chunk), Code.RECORDING_UNSUPPORTED, 0, '[{"content"')


def test_a_candidate_index_other_than_0_is_unsupported() -> None:
    chunk = part_chunk({"text": "a"})
    cast("list[dict[str, object]]", chunk["candidates"])[0]["index"] = 2
    assert_refused(stream(chunk), Code.RECORDING_UNSUPPORTED, 0, "2}")


def test_a_response_id_that_changes_is_malformed() -> None:
    text = stream(part_chunk({"text": "a"}), part_chunk({"text": "b"}, responseId="other"))
    assert_refused(text, Code.RECORDING_MALFORMED_EVENT, 1, '"other"')


def test_parts_after_the_finish_are_out_of_order() -> None:
    text = stream(part_chunk({"text": "a"}, finish="STOP"), part_chunk({"text": "b"}))
    assert_refused(text, Code.RECORDING_OUT_OF_ORDER, 1)


def test_a_different_finish_reason_after_the_finish_is_out_of_order() -> None:
    later = {"candidates": [{"finishReason": "MAX_TOKENS"}], "responseId": RESPONSE_ID}
    assert_refused(stream(end_chunk(), later), Code.RECORDING_OUT_OF_ORDER, 1)


def test_an_error_after_the_finish_is_out_of_order() -> None:
    error = {"error": {"code": 500, "message": "x", "status": "INTERNAL"}}
    assert_refused(stream(end_chunk(), error), Code.RECORDING_OUT_OF_ORDER, 1)


def test_an_error_event_ends_the_import_where_it_comes() -> None:
    error = {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}
    text = stream(part_chunk({"text": "a"}), error) + "data: not json\n\n"
    assert records(text)[-1] == {
        "type": "transport_error",
        "message": "busy",
        "code": "UNAVAILABLE",
        "status": 503,
    }


@pytest.mark.parametrize(
    ("chunk", "fragment"),
    [
        ({"candidates": []}, "{"),  # no responseId
        ({"candidates": [], "responseId": ""}, '""'),
        ({"candidates": {}, "responseId": "r"}, "{}"),
        ({"candidates": [7], "responseId": "r"}, "7"),
        ({"candidates": [{"content": {"parts": [{"text": 1}]}}], "responseId": "r"}, "1"),
        (
            {"candidates": [{"content": {"parts": [{"thought": "yes"}]}}], "responseId": "r"},
            '"yes"',
        ),
        (
            {
                "candidates": [{"content": {"parts": [{"text": "", "thoughtSignature": ""}]}}],
                "responseId": "r",
            },
            '""}',
        ),
        (
            {
                "candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}],
                "responseId": "r",
            },
            '{"args"',
        ),
        (
            {
                "candidates": [
                    {"content": {"parts": [{"functionCall": {"name": "f", "args": []}}]}}
                ],
                "responseId": "r",
            },
            "[]",
        ),
        (
            {
                "candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "id": ""}}]}}],
                "responseId": "r",
            },
            '""',
        ),
        ({"candidates": [{"finishReason": 1}], "responseId": "r"}, "1"),
        ({"candidates": [], "usageMetadata": {"promptTokenCount": -1}, "responseId": "r"}, "-1"),
        (
            {
                "candidates": [],
                "usageMetadata": {"promptTokenCount": 1, "cachedContentTokenCount": 2},
                "responseId": "r",
            },
            '{"promptTokenCount"',
        ),
        (
            {
                "candidates": [],
                "usageMetadata": {"candidatesTokenCount": 2**53 - 1, "thoughtsTokenCount": 1},
                "responseId": "r",
            },
            '{"candidatesTokenCount"',
        ),
        ({"candidates": [], "promptFeedback": {"blockReason": 3}, "responseId": "r"}, "3"),
        ({"error": {"code": 200, "message": "m", "status": "OK"}}, "200"),
        ({"error": {"code": 500, "message": "m"}}, '{"code"'),
    ],
)
def test_malformed_chunks_are_refused_at_the_offending_value(
    chunk: Mapping[str, object], fragment: str
) -> None:
    text = stream(chunk)
    error = refused(text)
    assert error.code is Code.RECORDING_MALFORMED_EVENT, str(error)
    line = re.split(r"\n", text)[0]
    assert error.line == 1
    assert error.column is not None
    assert line[error.column - 1 :].startswith(fragment), (str(error), fragment)


def test_done_is_not_json() -> None:
    text = stream(part_chunk({"text": "a"})) + "data: [DONE]\n\n"
    assert_refused(text, Code.RECORDING_INVALID_JSON, 1, "D")


# -- JSON bodies -----------------------------------------------------------------------------


def test_an_error_body_with_the_format_named_is_one_transport_error() -> None:
    body = json.dumps({"error": {"code": 404, "message": "no model", "status": "NOT_FOUND"}})
    assert records(body) == [
        {"type": "transport_error", "message": "no model", "code": "NOT_FOUND", "status": 404}
    ]
    assert refused(body, format="auto").code is Code.RECORDING_UNKNOWN_FORMAT


def test_array_elements_are_located_in_the_array() -> None:
    body = json.dumps(
        [part_chunk({"text": "a"}), part_chunk({"text": "b"}, responseId="x")], indent=1
    )
    error = refused(body)
    assert error.code is Code.RECORDING_MALFORMED_EVENT
    lines = body.split("\n")
    assert error.line is not None and error.column is not None
    assert lines[error.line - 1][error.column - 1 :].startswith('"x"')


def test_an_array_element_that_is_no_object_is_invalid_json_at_the_element() -> None:
    body = "[\n" + json.dumps(part_chunk({"text": "a"})) + ",\n 7\n]"
    error = refused(body)
    assert (error.code, error.line, error.column) == (Code.RECORDING_INVALID_JSON, 3, 2)


def test_missing_usage_in_an_array_is_located_at_the_finishing_element() -> None:
    body = (
        "[\n"
        + json.dumps(part_chunk({"text": "a"}, finish="STOP"))
        + ",\n"
        + json.dumps(part_chunk())
        + "\n]"
    )
    error = refused(body)
    assert (error.code, error.line, error.column) == (Code.RECORDING_MISSING_USAGE, 2, 1)


def test_an_empty_array_is_unreadable_and_a_cut_body_invalid_json() -> None:
    assert refused("[]").code is Code.RECORDING_UNREADABLE
    assert refused(json.dumps(end_chunk())[:-3]).code is Code.RECORDING_INVALID_JSON


# -- signatures ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("+vv8/f7/+/8=", b"\xfa\xfb\xfc\xfd\xfe\xff\xfb\xff"),
        ("-vv8_f7_-_8=", b"\xfa\xfb\xfc\xfd\xfe\xff\xfb\xff"),
        ("abc", b"i\xb7"),
        ("abc=", b"i\xb7"),
        ("sig-1", None),
        ("abc==", None),  # padding past a multiple of 4
        ("abd", None),  # unused bits not zero
        ("+_ab", None),  # two alphabets
        ("a", None),
    ],
)
def test_signatures_are_compared_by_their_decoded_bytes(text: str, decoded: bytes | None) -> None:
    assert signature_bytes(text) == decoded
    assert is_base64(text) is (decoded is not None)


def _sdk_accepts(text: str) -> bytes | None:
    try:
        part = types.Part._from_response(response={"thoughtSignature": text}, kwargs={})
    except ValueError:  # pydantic's ValidationError
        return None
    return part.thought_signature


@settings(max_examples=200)
@given(st.text(alphabet="AZaz09+/-_=\n", max_size=12).filter(bool))
def test_base64_is_what_google_genai_accepts(text: str) -> None:
    assert signature_bytes(text) == _sdk_accepts(text)


# -- any bytes -------------------------------------------------------------------------------

_PIECES: Final[list[str]] = [
    stream(part_chunk({"text": "a"})),
    stream(end_chunk()),
    stream(part_chunk(thought("t", SIGNATURE))),
    stream({"error": {"code": 503, "message": "m", "status": "UNAVAILABLE"}}),
    stream({"promptFeedback": {"blockReason": "OTHER"}, "responseId": RESPONSE_ID}),
    '[{"candidates": [], "responseId": "r"}]',
    "data: {\n\n",
    "\n",
    '{"error": {"code": 400}}',
]


@settings(max_examples=150)
@given(
    st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=20)), max_size=6),
    st.sampled_from(["auto", "gemini"]),
    st.integers(0, 8),
)
def test_any_input_gives_a_recording_or_a_recording_error(
    pieces: list[str], format: str, cut: int
) -> None:
    text = "".join(pieces)
    text = text[: len(text) - cut] if cut < len(text) else text
    try:
        recording = import_recording(text.encode("utf-8", "surrogatepass"), format=format)
    except RecordingError as error:
        assert isinstance(error.code, RecordingErrorCode)
        return
    # Import never writes what replay refuses: a complete response replays, a failed one
    # fails with its own transport error, a cut one misses its terminal.
    try:
        replay(recording)
    except FixtureProviderError as error:
        expected = (
            FixtureProviderErrorCode.PROVIDER_MISSING_TERMINAL
            if recording.truncated
            else FixtureProviderErrorCode.PROVIDER_TRANSPORT_ERROR
        )
        assert error.code is expected, str(error)


@pytest.mark.parametrize("whole", [False, True], ids=["streamed", "whole body"])
def test_a_gemini_recording_refuses_schema_version_1(whole: bool) -> None:
    # Gemini came with version 2 (SPEC-GEMINI): there are no version-1 rules to keep.
    text = json.dumps(part_chunk({"text": "hi"})) if whole else stream(part_chunk({"text": "hi"}))
    with pytest.raises(RecordingError) as info:
        import_recording(text, format="gemini", schema_version=1)
    assert info.value.code is Code.RECORDING_UNSUPPORTED
    assert "schema version 2 only" in info.value.message
    assert "schema_version=2" in info.value.message
