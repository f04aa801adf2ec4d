"""Rendering ``gemini``: chunk shapes as SPEC-GEMINI.md pins them, read back by google-genai
itself, and serve -> import giving back the records (property)."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, cast

import httpx
import pytest
from google import genai
from google.genai import errors, types
from hypothesis import given, settings
from hypothesis import strategies as st

from course import thaw
from course.vendors import asgi_app, import_recording
from course.vendors._gemini import route, status_word

RESPONSE_ID: Final = "resp-9"
SIGNATURE: Final = base64.b64encode(b"\x00\xffsig").decode()
Mode = Literal["whole", "sse", "array"]


@dataclass(frozen=True)
class Served:
    status: int
    body: bytes
    content_type: bytes = b""


METHODS: Final[Mapping[Mode, tuple[str, bytes]]] = {
    "whole": ("generateContent", b""),
    "sse": ("streamGenerateContent", b"alt=sse"),
    "array": ("streamGenerateContent", b""),
}


def render(
    records: Sequence[object],
    mode: Mode = "sse",
    model: str = "gemini-x",
    *,
    source: bool = False,
) -> Served:
    """What the server answers for one version-2 fixture response: the real application,
    driven in-process at a Gemini route. With ``source``, the records come from an async
    source, each read when it comes."""

    async def each() -> AsyncIterator[object]:
        for record in records:
            yield record

    fixture = {"schemaVersion": 2, "responses": [{"records": each() if source else list(records)}]}
    method, query = METHODS[mode]
    scope = {
        "type": "http",
        "method": "POST",
        "path": f"/v1beta/{model if '/' in model else f'models/{model}'}:{method}",
        "query_string": query,
        "headers": [],
    }
    sent: list[Mapping[str, object]] = []
    body = [{"type": "http.request", "body": b"{}", "more_body": False}]

    async def receive() -> Mapping[str, object]:
        if body:
            return body.pop()
        await asyncio.Event().wait()  # the client stays until the answer ends
        raise AssertionError("unreachable")

    async def send(message: Mapping[str, object]) -> None:
        sent.append(message)

    asyncio.run(asgi_app(fixture)(scope, receive, send))
    headers = dict(cast("list[tuple[bytes, bytes]]", sent[0]["headers"]))
    content = b"".join(cast(bytes, message["body"]) for message in sent[1:])
    return Served(cast(int, sent[0]["status"]), content, headers[b"content-type"])


def events(served: Served) -> list[dict[str, object]]:
    text = served.body.decode()
    assert text.endswith("\n\n")
    return [json.loads(block.removeprefix("data: ")) for block in text.split("\n\n") if block]


def start(**extra: object) -> dict[str, object]:
    return {"type": "response_start", "responseId": RESPONSE_ID, "role": "assistant", **extra}


def end(stop: str = "stop", **extra: object) -> dict[str, object]:
    usage = {"inputTokens": 10, "outputTokens": 30, "reasoningTokens": 20, "cacheReadTokens": 4}
    record = {"type": "response_end", "responseId": RESPONSE_ID, "stopReason": stop, "usage": usage}
    return record | extra


def text(value: str) -> dict[str, object]:
    return {"type": "text_delta", "text": value}


def thinking(value: str) -> dict[str, object]:
    return {"type": "thinking_delta", "text": value}


def signed(value: str = SIGNATURE) -> dict[str, object]:
    return {"type": "thinking_signature", "signature": value}


def call(call_id: str, signature: str | None = None) -> dict[str, object]:
    record: dict[str, object] = {
        "type": "tool_call",
        "id": call_id,
        "name": "add",
        "arguments": {"a": 1},
    }
    if signature is not None:
        record["signature"] = signature
    return record


USAGE_META: Final = {
    "promptTokenCount": 10,
    "candidatesTokenCount": 10,
    "totalTokenCount": 40,
    "thoughtsTokenCount": 20,
    "cachedContentTokenCount": 4,
}


def candidate(part: object, finish: str | None = None) -> dict[str, object]:
    body: dict[str, object] = {"content": {"parts": [part], "role": "model"}}
    if finish is not None:
        body["finishReason"] = finish
    body["index"] = 0
    return body


def test_one_chunk_per_content_record_then_the_finish_and_usage() -> None:
    records = [
        start(model="gemini-2.5-pro"),
        thinking("Let me add."),
        signed(),
        text("The sum is 42."),
        call(f"{RESPONSE_ID}:call:0", SIGNATURE),
        call("call-given"),
        end("tool_call"),
    ]
    stamp = {"modelVersion": "gemini-2.5-pro", "responseId": RESPONSE_ID}
    served = render(records)
    assert (served.status, served.content_type) == (200, b"text/event-stream")
    assert events(served) == [
        {"candidates": [candidate({"text": "Let me add.", "thought": True})], **stamp},
        {
            "candidates": [candidate({"text": "", "thought": True, "thoughtSignature": SIGNATURE})],
            **stamp,
        },
        {"candidates": [candidate({"text": "The sum is 42."})], **stamp},
        {
            "candidates": [
                candidate(
                    {
                        "functionCall": {"name": "add", "args": {"a": 1}},
                        "thoughtSignature": SIGNATURE,
                    }
                )
            ],
            **stamp,
        },
        {
            "candidates": [
                candidate({"functionCall": {"id": "call-given", "name": "add", "args": {"a": 1}}})
            ],
            **stamp,
        },
        {"candidates": [candidate({"text": ""}, "STOP")], "usageMetadata": USAGE_META, **stamp},
    ]


def test_chunks_carry_the_start_usage_and_the_path_model_when_the_fixture_has_none() -> None:
    usage = {"inputTokens": 10, "outputTokens": 0}
    records = [start(usage=usage), text("a"), end()]
    first = events(render(records, model="tunedModels/mine"))[0]
    assert first["usageMetadata"] == {
        "promptTokenCount": 10,
        "candidatesTokenCount": 0,
        "totalTokenCount": 10,
    }
    assert first["modelVersion"] == "tunedModels/mine"


@pytest.mark.parametrize(
    ("stop", "word", "finish"),
    [
        ("stop", None, "STOP"),
        ("length", None, "MAX_TOKENS"),
        ("length", "OTHER_WORD", "MAX_TOKENS"),
        ("content_filter", None, "SAFETY"),
        ("content_filter", "RECITATION", "RECITATION"),
        ("content_filter", "end_turn", "SAFETY"),
        ("refusal", None, "OTHER"),
        ("pause_turn", "pause_turn", "OTHER"),
    ],
)
def test_the_finish_reason_is_the_tables(stop: str, word: str | None, finish: str) -> None:
    extra = {} if word is None else {"providerStopReason": word}
    last = events(render([start(), text("a"), end(stop, **extra)]))[-1]
    assert cast("list[dict[str, object]]", last["candidates"])[0]["finishReason"] == finish


@pytest.mark.parametrize("word", ["BLOCKED_REASON_UNSPECIFIED", "OTHER", "JAILBREAK"])
def test_a_blocked_prompt_is_prompt_feedback_alone_unless_there_is_content(word: str) -> None:
    blocked = end("content_filter", providerStopReason=word)
    assert events(render([start(), blocked])) == [
        {
            "promptFeedback": {"blockReason": word},
            "usageMetadata": USAGE_META,
            "modelVersion": "gemini-x",
            "responseId": RESPONSE_ID,
        }
    ]
    last = events(render([start(), text("a"), blocked]))[-1]
    assert cast("list[dict[str, object]]", last["candidates"])[0]["finishReason"] == "SAFETY"


def test_records_gemini_has_no_place_for_are_left_out() -> None:
    records = [
        start(),
        {"type": "redacted_thinking", "data": "xyz"},
        text("a"),
        {"type": "tool_call_incomplete", "id": "c", "name": "f", "argumentFragments": ["{"]},
        end("length"),
    ]
    assert len(events(render(records))) == 2


@pytest.mark.parametrize(
    ("status", "word"),
    [
        (400, "INVALID_ARGUMENT"),
        (401, "UNAUTHENTICATED"),
        (403, "PERMISSION_DENIED"),
        (404, "NOT_FOUND"),
        (409, "ABORTED"),
        (429, "RESOURCE_EXHAUSTED"),
        (500, "INTERNAL"),
        (501, "NOT_IMPLEMENTED"),
        (502, "UNAVAILABLE"),
        (503, "UNAVAILABLE"),
        (529, "UNAVAILABLE"),
        (504, "DEADLINE_EXCEEDED"),
        (418, "UNKNOWN"),
    ],
)
def test_a_transport_error_is_googles_body_with_the_canonical_status(
    status: int, word: str
) -> None:
    assert status_word(status) == word
    error = {"type": "transport_error", "message": "m", "code": "not a word", "status": status}
    served = render([error])
    assert (served.status, json.loads(served.body)) == (
        status,
        {"error": {"code": status, "message": "m", "status": word}},
    )


def test_a_code_that_is_a_status_word_is_kept_and_no_status_is_500() -> None:
    served = render([{"type": "transport_error", "message": "m", "code": "RESOURCE_EXHAUSTED"}])
    assert (served.status, json.loads(served.body)["error"]["status"]) == (
        500,
        "RESOURCE_EXHAUSTED",
    )


def test_mid_stream_the_error_is_one_event_and_the_body_ends() -> None:
    error = {"type": "transport_error", "message": "busy", "code": "UNAVAILABLE", "status": 503}
    assert events(render([start(), text("a"), error]))[-1] == {
        "error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}
    }


def test_without_alt_sse_the_chunks_are_one_json_array() -> None:
    records = [start(), text("a"), text("b"), end()]
    served = render(records, "array")
    assert served.content_type == b"application/json"
    assert json.loads(served.body) == events(render(records))
    failed = render([{"type": "transport_error", "message": "m", "status": 429}], "array")
    assert (failed.status, json.loads(failed.body)) == (
        429,
        [{"error": {"code": 429, "message": "m", "status": "RESOURCE_EXHAUSTED"}}],
    )


def test_generate_content_is_one_response_with_every_part() -> None:
    records = [start(), thinking("t"), signed(), text("a"), call("c1", SIGNATURE), end("tool_call")]
    body = json.loads(render(records, "whole").body)
    assert body["candidates"] == [
        {
            "content": {
                "parts": [
                    {"text": "t", "thought": True},
                    {"text": "", "thought": True, "thoughtSignature": SIGNATURE},
                    {"text": "a"},
                    {
                        "functionCall": {"id": "c1", "name": "add", "args": {"a": 1}},
                        "thoughtSignature": SIGNATURE,
                    },
                ],
                "role": "model",
            },
            "finishReason": "STOP",
            "index": 0,
        }
    ]
    assert body["usageMetadata"] == USAGE_META


NOT_BASE64: Final = [
    [start(), call("c", "sig-1"), end("tool_call")],
    [start(), thinking("t"), signed("abd"), end()],
    [start(), text("a"), call("c", SIGNATURE), call("d", "sig-1"), end("tool_call")],
]


def invalid_fixture(error: object) -> None:
    body = cast("dict[str, dict[str, object]]", error)["error"]
    assert (body["code"], body["status"]) == (500, "INTERNAL")
    assert cast(str, body["message"]).startswith("PROVIDER_INVALID_FIXTURE: ")


@pytest.mark.parametrize("mode", ["whole", "sse", "array"])
@pytest.mark.parametrize("records", NOT_BASE64)
def test_a_signature_that_is_not_base64_is_the_fixtures_fault_before_anything_is_sent(
    records: list[object], mode: Mode
) -> None:
    served = render(records, mode)
    assert served.status == 500
    body = json.loads(served.body)
    invalid_fixture(body[0] if mode == "array" else body)


@pytest.mark.parametrize("mode", ["sse", "array"])
@pytest.mark.parametrize("records", NOT_BASE64)
def test_from_an_async_source_such_a_signature_is_the_in_stream_error(
    records: list[object], mode: Mode
) -> None:
    served = render(records, mode, source=True)
    assert served.status == 200
    chunks = json.loads(served.body) if mode == "array" else events(served)
    invalid_fixture(chunks[-1])
    assert all("error" not in chunk for chunk in chunks[:-1])


@pytest.mark.parametrize("records", NOT_BASE64)
def test_from_an_async_source_generate_content_is_http_500(records: list[object]) -> None:
    served = render(records, "whole", source=True)
    assert served.status == 500
    invalid_fixture(json.loads(served.body))


# -- google-genai reads what is rendered ------------------------------------------------------


def sdk(served: Served) -> genai.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(served.status, content=served.body)

    http = httpx.Client(transport=httpx.MockTransport(handler))
    return genai.Client(
        api_key="test",
        http_options=types.HttpOptions(base_url="http://x.invalid", httpx_client=http),
    )


@pytest.mark.parametrize(
    ("path", "query", "expected"),
    [
        ("/v1/models/gemini-2.5-flash:generateContent", "", ("gemini-2.5-flash", "whole")),
        ("/v1beta/models/m:streamGenerateContent", "alt=sse", ("m", "sse")),
        ("/v1alpha/tunedModels/t:streamGenerateContent", "", ("tunedModels/t", "array")),
        ("/v1/models/m:streamGenerateContent", "alt=json", ("m", "array")),
        ("/v2/models/m:generateContent", "", None),
        ("/v1/models/:generateContent", "", None),
        ("/v1/models/a/b:generateContent", "", None),
        ("/v1/models/m:countTokens", "", None),
    ],
)
def test_routes_name_the_model_and_the_answer(
    path: str, query: str, expected: tuple[str, str] | None
) -> None:
    found = route(path, query)
    assert (None if found is None else (found.model, found.mode)) == expected


def test_google_genai_reads_the_stream_and_the_whole_response() -> None:
    records = [
        start(),
        thinking("hmm"),
        signed(),
        text("The sum is 42."),
        call(f"{RESPONSE_ID}:call:0", SIGNATURE),
        end("tool_call"),
    ]
    chunks = list(sdk(render(records)).models.generate_content_stream(model="m", contents="x"))
    parts = [part for chunk in chunks for part in chunk.candidates[0].content.parts]  # type: ignore[index, union-attr]
    assert [(p.text, p.thought) for p in parts if p.text] == [
        ("hmm", True),
        ("The sum is 42.", None),
    ]
    calls = [(p.function_call, p.thought_signature) for p in parts if p.function_call is not None]
    assert [(c.name, c.args, c.id, signature) for c, signature in calls] == [
        ("add", {"a": 1}, None, base64.b64decode(SIGNATURE))
    ]
    last = chunks[-1]
    assert last.candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
    assert last.usage_metadata.thoughts_token_count == 20  # type: ignore[union-attr]
    whole = sdk(render(records, "whole")).models.generate_content(model="m", contents="x")
    assert whole.text == "The sum is 42."
    assert whole.function_calls[0].args == {"a": 1}  # type: ignore[index]


def test_google_genai_raises_the_error_with_its_code_and_status() -> None:
    error = {"type": "transport_error", "message": "slow down", "status": 429}
    with pytest.raises(errors.ClientError) as info:
        sdk(render([error])).models.generate_content(model="m", contents="x")
    assert (info.value.code, info.value.status, info.value.message) == (
        429,
        "RESOURCE_EXHAUSTED",
        "slow down",
    )
    failing = [start(), text("a"), {"type": "transport_error", "message": "boom", "status": 503}]
    with pytest.raises(errors.ServerError) as raised:
        list(sdk(render(failing)).models.generate_content_stream(model="m", contents="x"))
    assert (raised.value.code, raised.value.status) == (503, "UNAVAILABLE")


# -- round trip: serve, then import, gives back the records ----------------------------------

_WORDS: Final = [
    "INVALID_ARGUMENT",
    "RESOURCE_EXHAUSTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DEADLINE_EXCEEDED",
]
_texts = st.text(min_size=1, max_size=8)
_signatures = st.binary(min_size=1, max_size=12).flatmap(
    lambda data: st.sampled_from(
        [base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode().rstrip("=")]
    )
)


@st.composite
def responses(draw: st.DrawFn) -> list[dict[str, object]]:
    """A version-2 response meeting the round trip's conditions for gemini."""
    records: list[dict[str, object]] = [start()]
    if draw(st.booleans()):
        records[0]["model"] = draw(st.sampled_from(["gemini-2.5-pro", "m"]))
    calls = 0
    last_thinking = False
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["text", "thinking", "signature", "call"]))
        if kind == "signature" and not last_thinking:
            if draw(st.booleans()):
                records.append(thinking(""))  # the lone empty delta before a signature
            else:
                kind = "thinking"
        if kind == "text":
            records.append(text(draw(_texts)))
        elif kind == "thinking":
            records.append(thinking(draw(_texts)))
        elif kind == "signature":
            records.append(signed(draw(_signatures)))
        else:
            made_up = draw(st.booleans())
            call_id = f"{RESPONSE_ID}:call:{calls}" if made_up else f"call_{calls}"
            tool = call(call_id, draw(st.none() | _signatures))
            tool["arguments"] = draw(
                st.dictionaries(
                    st.text(max_size=3), st.integers() | st.text(max_size=3), max_size=2
                )
            )
            records.append(tool)
            calls += 1
        last_thinking = records[-1]["type"] == "thinking_delta"
    ending = draw(st.sampled_from(["stop", "length", "content_filter", "blocked", "error"]))
    ending = "stop" if ending == "error" and len(records) == 1 else ending
    usage: dict[str, int] = {"inputTokens": draw(st.integers(0, 100)), "outputTokens": 50}
    if draw(st.booleans()):
        usage["reasoningTokens"] = draw(st.integers(0, 50))
    if draw(st.booleans()):
        usage["cacheReadTokens"] = draw(st.integers(0, usage["inputTokens"]))
    if ending == "error":
        # Gemini has no start event: an error before any chunk imports without a start.
        records.append(
            {
                "type": "transport_error",
                "message": draw(st.text(max_size=8)),
                "code": draw(st.sampled_from(_WORDS)),
            }
        )
        return records
    record: dict[str, object] = {"type": "response_end", "responseId": RESPONSE_ID, "usage": usage}
    if ending == "stop":
        record["stopReason"] = "tool_call" if calls else "stop"
    elif ending == "length":
        record["stopReason"] = "length"
    elif ending == "blocked":
        record["stopReason"] = "content_filter"
        record["providerStopReason"] = draw(st.sampled_from(["OTHER", "JAILBREAK"]))
        del records[1:]  # a block reason comes with no content record
    else:
        record["stopReason"] = "content_filter"
        if draw(st.booleans()):
            record["providerStopReason"] = draw(st.sampled_from(["SAFETY", "SPII", "MODEL_ARMOR"]))
    records.append(record)
    return records


def _normalised(
    records: Sequence[Mapping[str, object]], fixture: Sequence[Mapping[str, object]]
) -> list[dict[str, object]]:
    """Imported records compared where the fixture has each optional field."""
    out: list[dict[str, object]] = []
    for got, want in zip(records, fixture, strict=False):
        item = {key: value for key, value in got.items() if key in want or key == "type"}
        item.pop("status", None)
        if "usage" in item and isinstance(item["usage"], Mapping):
            usage = cast("Mapping[str, object]", want["usage"])
            item["usage"] = {k: v for k, v in item["usage"].items() if k in usage}
        out.append(item)
    return out + [dict(r) for r in records[len(fixture) :]]


@settings(max_examples=60)
@given(responses(), st.sampled_from(["sse", "array"]))
def test_serve_then_import_gives_back_the_records(
    records: list[dict[str, object]], mode: Mode
) -> None:
    served = render(records, mode)
    assert served.status == 200
    recording = import_recording(served.body, format="gemini")
    imported = cast("list[dict[str, object]]", thaw(recording.response)["records"])
    fixture = [{k: v for k, v in r.items() if k != "status"} for r in records]
    assert _normalised(imported, fixture) == fixture
