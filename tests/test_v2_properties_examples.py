"""The SPEC's own version-2 examples, computed by hand, hold for the oracle and the adapter.

``tests/oracle.py`` is only as good as its reading of ``SPEC-V2.md``; these pin that
reading to what the SPEC writes out (the thinking-block example of "Content, chunks and
blocks", the ``to_dict()`` key table, the order of the meaning rules, the stop-reason
table), and hold the adapter to the same expectations, so that an oracle and an adapter
that shared one misreading would still be caught.
"""

from __future__ import annotations

from typing import Any

import pytest

from course import CourseModelRequest, FixtureProviderAdapter

from .helpers import collect, end, start, text, tool
from .oracle import CHUNK_KEYS, Completed, Failed, predict_response
from .virtual_clock import run_virtual

USAGE: dict[str, object] = {"inputTokens": 1, "outputTokens": 1}


def counts(**tokens: int) -> dict[str, object]:
    return dict(tokens)


def thinking(value: str) -> dict[str, object]:
    return {"type": "thinking_delta", "text": value}


SIGNATURE = {"type": "thinking_signature", "signature": "sig"}
INCOMPLETE = {"type": "tool_call_incomplete", "id": "cut", "name": "f", "argumentFragments": ["{"]}
REFUSAL = {"type": "refusal_delta", "text": "no"}


def both(records: list[object]) -> tuple[Completed | Failed, tuple[list[Any], Any]]:
    """The oracle's prediction and the adapter's outcome (chunks, then response or code,
    record index and path) for one version-2 response."""
    prediction = predict_response(records, "req", 2)
    adapter = FixtureProviderAdapter({"schemaVersion": 2, "responses": [{"records": records}]})
    outcome = run_virtual(collect(adapter.stream(CourseModelRequest("req"))))
    chunks = [chunk.to_dict() for chunk in outcome.chunks]
    if outcome.error is None:
        assert outcome.response is not None
        return prediction, (chunks, outcome.response.to_dict())
    error = outcome.error
    return prediction, (chunks, (error.code.value, error.record_index, error.path))


def test_the_spec_example_of_thinking_blocks() -> None:
    # SPEC-V2: start, thinking_delta a (0), thinking_delta b (0), thinking_signature (0),
    # text_delta (1), thinking_delta c (2), tool_call (3), end: the content is thinking
    # "ab" signed, text, thinking "c" unsigned, tool call.
    records: list[object] = [
        start(),
        thinking("a"),
        thinking("b"),
        SIGNATURE,
        text("t"),
        thinking("c"),
        tool("call-1", "f", x=1),
        end(stop_reason="tool_call", usage=USAGE),
    ]
    chunks = [
        {"type": "thinkingDelta", "text": "a", "contentIndex": 0},
        {"type": "thinkingDelta", "text": "b", "contentIndex": 0},
        {"type": "thinkingSignature", "signature": "sig", "contentIndex": 0},
        {"type": "textDelta", "text": "t", "contentIndex": 1},
        {"type": "thinkingDelta", "text": "c", "contentIndex": 2},
        {"type": "toolCall", "id": "call-1", "name": "f", "arguments": {"x": 1}}
        | {"contentIndex": 3},
    ]
    content = [
        {"type": "thinking", "text": "ab", "signature": "sig"},
        {"type": "text", "text": "t"},
        {"type": "thinking", "text": "c"},
        {"type": "toolCall", "id": "call-1", "name": "f", "arguments": {"x": 1}},
    ]
    response = {
        "requestId": "req",
        "responseId": "r-1",
        "message": {"id": "message-r-1", "role": "assistant", "content": content},
        "stopReason": "toolCall",
        "usage": USAGE,
    }
    prediction, outcome = both(records)
    assert isinstance(prediction, Completed)
    assert (prediction.chunks, prediction.response) == (chunks, response)
    assert outcome == (chunks, response)


def test_every_new_chunk_and_block_has_exactly_the_spec_keys() -> None:
    records: list[object] = [
        {**start(), "model": "m", "usage": {"inputTokens": 3, "outputTokens": 0}},
        thinking("a"),
        SIGNATURE,
        {"type": "redacted_thinking", "data": "d"},
        REFUSAL,
        {**tool("c", "f"), "signature": "g", "argumentFragments": [""]},
        end(
            stop_reason="refusal",
            usage=counts(inputTokens=3, cache_read_tokens=0, outputTokens=2, reasoningTokens=2),
        )
        | {"providerStopReason": "refusal"},
    ]
    prediction, outcome = both(records)
    assert isinstance(prediction, Completed)
    chunks, response = outcome
    assert chunks == prediction.chunks
    for chunk in chunks:
        keys = CHUNK_KEYS[chunk["type"]] | ({"signature"} if "signature" in chunk else set())
        assert set(chunk) == keys, chunk
    assert set(chunks[4]) == {"type", "id", "name", "arguments", "signature", "contentIndex"}
    assert set(response) == {
        *("requestId", "responseId", "message", "stopReason", "usage"),
        *("model", "providerStopReason"),
    }
    assert response["usage"] == {
        "inputTokens": 3,
        "cacheReadTokens": 0,
        "outputTokens": 2,
        "reasoningTokens": 2,
    }
    blocks = response["message"]["content"]
    assert [set(block) for block in blocks] == [
        {"type", "text", "signature"},
        {"type", "data"},
        {"type", "text"},
        {"type", "id", "name", "arguments", "signature"},
    ]
    assert response == prediction.response


ORDER: dict[str, tuple[list[object], tuple[str, int, str]]] = {
    # name: records, then (code, record index, path) as the SPEC's order says
    "a call reusing an incomplete call's id: the duplicate first": (
        [start(), {**INCOMPLETE, "id": "c"}, tool("c"), end(stop_reason="length")],
        ("PROVIDER_DUPLICATE_TOOL_CALL", 2, "/responses/0/records/2/id"),
    ),
    "a call with a new id after an incomplete call": (
        [start(), INCOMPLETE, tool("new"), end(stop_reason="length")],
        ("PROVIDER_OUT_OF_ORDER", 2, "/responses/0/records/2"),
    ),
    "an incomplete call after one, same id: content after an incomplete call first": (
        [start(), INCOMPLETE, INCOMPLETE, end(stop_reason="length")],
        ("PROVIDER_OUT_OF_ORDER", 2, "/responses/0/records/2"),
    ),
    "an incomplete call reusing a call's id": (
        [start(), tool("c"), {**INCOMPLETE, "id": "c"}, end(stop_reason="length")],
        ("PROVIDER_DUPLICATE_TOOL_CALL", 2, "/responses/0/records/2/id"),
    ),
    "a signature first": (
        [start(), SIGNATURE, end(usage=USAGE)],
        ("PROVIDER_OUT_OF_ORDER", 1, "/responses/0/records/1"),
    ),
    "a signature after a signature": (
        [start(), thinking(""), SIGNATURE, SIGNATURE, end(usage=USAGE)],
        ("PROVIDER_OUT_OF_ORDER", 3, "/responses/0/records/3"),
    ),
    "a signature after text": (
        [start(), thinking("a"), text("t"), SIGNATURE, end(usage=USAGE)],
        ("PROVIDER_OUT_OF_ORDER", 3, "/responses/0/records/3"),
    ),
    "a signature before the start: a missing start": (
        [SIGNATURE, start(), end(usage=USAGE)],
        ("PROVIDER_MISSING_START", 0, "/responses/0/records/0"),
    ),
    "an incomplete call and stop: stop allows it, but the incomplete call needs length": (
        [start(), INCOMPLETE, end(usage=USAGE)],
        ("PROVIDER_STOP_REASON_MISMATCH", 2, "/responses/0/records/2/stopReason"),
    ),
    "an incomplete call does not meet tool_call": (
        [start(), INCOMPLETE, end(stop_reason="tool_call", usage=USAGE)],
        ("PROVIDER_STOP_REASON_MISMATCH", 2, "/responses/0/records/2/stopReason"),
    ),
    "a refusal with stop": (
        [start(), REFUSAL, end(usage=USAGE)],
        ("PROVIDER_STOP_REASON_MISMATCH", 2, "/responses/0/records/2/stopReason"),
    ),
    "a refusal with length": (
        [start(), REFUSAL, end(stop_reason="length", usage=USAGE)],
        ("PROVIDER_STOP_REASON_MISMATCH", 2, "/responses/0/records/2/stopReason"),
    ),
    "a refusal and another id: the response mismatch first": (
        [start(), REFUSAL, end("r-2", usage=USAGE)],
        ("PROVIDER_RESPONSE_MISMATCH", 2, "/responses/0/records/2/responseId"),
    ),
    "cache counts above input": (
        [start(), end(usage=counts(inputTokens=1, cacheReadTokens=1, cacheWriteTokens=1))],
        ("PROVIDER_MALFORMED_EVENT", 1, "/responses/0/records/1/usage"),
    ),
    "reasoning above output": (
        [start(), end(usage=counts(inputTokens=1, outputTokens=1, reasoning_tokens=2))],
        ("PROVIDER_MALFORMED_EVENT", 1, "/responses/0/records/1/usage"),
    ),
    "start usage sums too": (
        [{**start(), "usage": {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 1}}],
        ("PROVIDER_MALFORMED_EVENT", 0, "/responses/0/records/0/usage"),
    ),
    "fragments 1.0 against 1": (
        [start(), {**tool("c", n=1), "argumentFragments": ['{"n": 1.0}']}, end()],
        ("PROVIDER_MALFORMED_EVENT", 1, "/responses/0/records/1/argumentFragments"),
    ),
    "an invalid delay after the terminal: rule 1 first": (
        [start(), end(usage=USAGE), {**text("x"), "delay": -1}],
        ("PROVIDER_INVALID_TERMINAL", 2, "/responses/0/records/2"),
    ),
    "an invalid delay on a record without a string type: rule 2 first": (
        [start(), {"type": 1, "delay": -1}, end(usage=USAGE)],
        ("PROVIDER_MALFORMED_EVENT", 1, "/responses/0/records/1/type"),
    ),
    "an invalid delay on a duplicate start: rule 4 first": (
        [start(), {**start(), "delay": True}, end(usage=USAGE)],
        ("PROVIDER_DUPLICATE_START", 1, "/responses/0/records/1"),
    ),
}


@pytest.mark.parametrize("name", sorted(ORDER))
def test_the_meaning_rules_in_the_spec_s_order(name: str) -> None:
    records, expected = ORDER[name]
    prediction, (_, got) = both(records)
    assert isinstance(prediction, Failed)
    paths = {"/responses/0/records" + p for p in prediction.paths}
    assert (prediction.code, prediction.record_index) == expected[:2]
    assert expected[2] in paths
    assert got == expected


@pytest.mark.parametrize(
    ("wire", "normalized"),
    [
        ("stop", "stop"),
        ("tool_call", "toolCall"),
        ("length", "length"),
        ("content_filter", "contentFilter"),
        ("refusal", "refusal"),
        ("pause_turn", "pauseTurn"),
    ],
)
@pytest.mark.parametrize("with_call", [False, True])
def test_the_six_stop_reasons_and_what_they_allow(
    wire: str, normalized: str, with_call: bool
) -> None:
    records: list[object] = [start(), *([tool("c")] if with_call else []), end(stop_reason=wire)]
    prediction, (_, got) = both(records)
    mismatch = (wire == "stop" and with_call) or (wire == "tool_call" and not with_call)
    if mismatch:
        assert isinstance(prediction, Failed)
        assert got[0] == prediction.code == "PROVIDER_STOP_REASON_MISMATCH"
    else:
        assert isinstance(prediction, Completed)
        assert got["stopReason"] == normalized == prediction.response["stopReason"]  # type: ignore[index]
