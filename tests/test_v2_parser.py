"""The record parser in schema version 2, rule by rule: the new records and fields, the
six stop reasons, usage details, the meaning rules with ``PROVIDER_OUT_OF_ORDER``, and
the order in which the rules are judged ("Which code wins").

Every case runs twice: from an array, and record by record from an async source. A
failure is located (``response_index``, ``record_index``, JSON-pointer ``path``), both
paths report it, and the chunks proven before it stay delivered.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    CourseIncompleteToolCallBlock,
    CourseIncompleteToolCallChunk,
    CourseModelChunk,
    CourseModelRequest,
    CourseModelResponse,
    CourseModelUsage,
    CourseRedactedThinkingBlock,
    CourseRedactedThinkingChunk,
    CourseRefusalBlock,
    CourseRefusalDeltaChunk,
    CourseTextBlock,
    CourseTextDeltaChunk,
    CourseThinkingBlock,
    CourseThinkingDeltaChunk,
    CourseThinkingSignatureChunk,
    CourseToolCallBlock,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)
from course._json import MAX_DEPTH

from .helpers import Outcome, collect, end, run, start, text, tool

Code = FixtureProviderErrorCode
Records = list[object]
MODES = pytest.mark.parametrize("mode", ["array", "source"])


# -- records ------------------------------------------------------------------------------


def thinking(value: str) -> dict[str, object]:
    return {"type": "thinking_delta", "text": value}


def signature(value: str = "sig") -> dict[str, object]:
    return {"type": "thinking_signature", "signature": value}


def redacted(data: str = "opaque") -> dict[str, object]:
    return {"type": "redacted_thinking", "data": data}


def refusal(value: str) -> dict[str, object]:
    return {"type": "refusal_delta", "text": value}


def incomplete(call_id: str = "cut-1", *fragments: str) -> dict[str, object]:
    return {
        "type": "tool_call_incomplete",
        "id": call_id,
        "name": "write",
        "argumentFragments": list(fragments),
    }


def stop(reason: str, **fields: object) -> dict[str, object]:
    return {**end(stop_reason=reason), **fields}


def error(**fields: object) -> dict[str, object]:
    return {"type": "transport_error", "message": "boom", **fields}


# -- running ------------------------------------------------------------------------------


async def _source(records: Records) -> AsyncIterator[object]:
    for record in copy.deepcopy(records):
        yield record


def outcome_of(records: Records, mode: str = "array", version: int = 2) -> Outcome:
    payload = copy.deepcopy(records) if mode == "array" else _source(records)
    data = {"schemaVersion": version, "responses": [{"records": payload}]}
    return run(collect(FixtureProviderAdapter(data).stream(CourseModelRequest("req-1"))))


def completed(records: Records, mode: str = "array") -> tuple[list[object], CourseModelResponse]:
    outcome = outcome_of(records, mode)
    assert outcome.error is None, outcome.error
    assert outcome.response is not None
    return list(outcome.chunks), outcome.response


def failed(
    records: Records,
    code: FixtureProviderErrorCode,
    record_index: int,
    *parts: str,
    mode: str = "array",
    chunks: Sequence[CourseModelChunk] | None = None,
    version: int = 2,
) -> FixtureProviderError:
    """Both paths fail with ``code`` located at the record (and ``parts`` below it), after
    the chunks of the records before it (or exactly ``chunks``)."""
    outcome = outcome_of(records, mode, version)
    failure = outcome.error
    assert failure is not None, "expected a failure, the stream completed"
    assert failure.code is code, failure
    assert (failure.response_index, failure.record_index) == (0, record_index)
    assert failure.path == "/responses/0/records/" + "/".join([str(record_index), *parts])
    assert outcome.result_error is not None
    assert (outcome.result_error.code, outcome.result_error.path) == (code, failure.path)
    if chunks is not None:
        assert outcome.chunks == list(chunks)
    else:  # one chunk per content record before the failing one
        before = [r for r in records[:record_index] if r["type"] not in _NO_CHUNK]  # type: ignore[index]
        assert len(outcome.chunks) == len(before)
    return failure


_NO_CHUNK = {"response_start", "response_end", "transport_error"}


# -- content, chunks and blocks ------------------------------------------------------------


@MODES
def test_the_spec_example_gives_its_chunks_and_content(mode: str) -> None:
    records: Records = [
        start(),
        thinking("a"),
        thinking("b"),
        signature("s-1"),
        text("t"),
        thinking("c"),
        tool("c-1", left=1),
        end(stop_reason="tool_call"),
    ]
    chunks, response = completed(records, mode)
    assert chunks == [
        CourseThinkingDeltaChunk("a", 0),
        CourseThinkingDeltaChunk("b", 0),
        CourseThinkingSignatureChunk("s-1", 0),
        CourseTextDeltaChunk("t", 1),
        CourseThinkingDeltaChunk("c", 2),
        CourseToolCallChunk("c-1", "add", {"left": 1}, 3),
    ]
    assert response.message.content == (
        CourseThinkingBlock("ab", "s-1"),
        CourseTextBlock("t"),
        CourseThinkingBlock("c", None),
        CourseToolCallBlock("c-1", "add", {"left": 1}),
    )
    assert response.stop_reason == "toolCall"


@MODES
def test_every_content_record_is_one_chunk_of_its_block(mode: str) -> None:
    records: Records = [
        start(),
        redacted("enc"),
        thinking(""),
        signature("s"),
        refusal("I can"),
        refusal("'t"),
        text("x"),
        thinking("d"),
        incomplete("cut", '{"pa', "th"),
        stop("length"),
    ]
    outcome = outcome_of(records, mode)
    assert outcome.chunks == [
        CourseRedactedThinkingChunk("enc", 0),
        CourseThinkingDeltaChunk("", 1),
        CourseThinkingSignatureChunk("s", 1),
        CourseRefusalDeltaChunk("I can", 2),
        CourseRefusalDeltaChunk("'t", 3),
        CourseTextDeltaChunk("x", 4),
        CourseThinkingDeltaChunk("d", 5),
        CourseIncompleteToolCallChunk("cut", "write", '{"path', 6),
    ]
    # An incomplete call and a refusal end differently: this one is cut short.
    assert outcome.error is not None
    assert outcome.error.code is Code.PROVIDER_STOP_REASON_MISMATCH
    without_refusal = [r for r in records if r["type"] != "refusal_delta"]  # type: ignore[index]
    _, response = completed(without_refusal, mode)
    assert response.message.content == (
        CourseRedactedThinkingBlock("enc"),
        CourseThinkingBlock("", "s"),
        CourseTextBlock("x"),
        CourseThinkingBlock("d"),
        CourseIncompleteToolCallBlock("cut", "write", '{"path'),
    )
    assert response.stop_reason == "length"


def test_refusal_deltas_are_one_block_each_and_end_as_a_refusal() -> None:
    _, response = completed([start(), refusal("No"), refusal(""), stop("refusal")])
    assert response.message.content == (CourseRefusalBlock("No"), CourseRefusalBlock(""))
    assert response.stop_reason == "refusal"


def test_a_thinking_block_is_closed_by_any_other_content_record() -> None:
    for closer in (text("t"), redacted(), refusal("r"), tool("c-1")):
        ending = "refusal" if closer["type"] == "refusal_delta" else "pause_turn"
        records: Records = [start(), thinking("a"), closer, thinking("b"), stop(ending)]
        _, response = completed(records)
        content = response.message.content
        assert content[0] == CourseThinkingBlock("a")
        assert content[2] == CourseThinkingBlock("b"), closer


def test_a_version_two_fixture_of_version_one_records_replays_as_version_one() -> None:
    records: Records = [start(), text("hi"), tool("c-1", n=1), end(stop_reason="tool_call")]
    v1 = outcome_of(records, version=1)
    v2 = outcome_of(records, version=2)
    assert v1.response is not None and v2.response is not None
    assert v1.chunks == v2.chunks
    assert v1.response.to_dict() == v2.response.to_dict()


# -- new fields ---------------------------------------------------------------------------


@MODES
def test_start_model_and_usage_and_end_provider_stop_reason_are_kept(mode: str) -> None:
    usage = {"input_tokens": 9, "outputTokens": 1, "cache_write_tokens": 4}
    records: Records = [
        {**start(), "model": "claude-x", "usage": usage},
        text("a"),
        stop("length", providerStopReason="max_tokens"),
    ]

    async def main() -> None:
        payload = copy.deepcopy(records) if mode == "array" else _source(records)
        data = {"schemaVersion": 2, "responses": [{"records": payload}]}
        stream = FixtureProviderAdapter(data).stream(CourseModelRequest("q"))
        assert (stream.model, stream.start_usage, stream.response_id) == (None, None, None)
        assert await anext(stream) == CourseTextDeltaChunk("a", 0)
        assert stream.model == "claude-x"
        assert stream.start_usage == CourseModelUsage(9, 1, cache_write_tokens=4)
        response = await stream.result()
        assert (response.model, response.provider_stop_reason) == ("claude-x", "max_tokens")
        assert response.stop_reason == "length"
        assert response.usage == CourseModelUsage(1, 2)  # the end's, unrelated to the start's

    run(main())


def test_a_tool_call_keeps_its_signature() -> None:
    chunks, response = completed(
        [start(), {**tool("c-1"), "signature": "gem-sig"}, end(stop_reason="tool_call")]
    )
    assert chunks == [CourseToolCallChunk("c-1", "add", {}, 0, signature="gem-sig")]
    assert response.message.content == (CourseToolCallBlock("c-1", "add", {}, signature="gem-sig"),)


@pytest.mark.parametrize(
    ("fragments", "arguments"),
    [
        (['{"a"', ": 1", ', "b": [true, null, 1.5]}'], {"a": 1, "b": [True, None, 1.5]}),
        (['{"b": 2, ', '"a": 1}'], {"a": 1, "b": 2}),  # key order is not compared
        ([""], {}),  # no text at all stands for no arguments
        (["", ""], {}),
        (["", "{}", ""], {}),
        ([' {"x": "\\u00e9"} '], {"x": "é"}),
        (['{"n": -0.0}'], {"n": 0.0}),
    ],
)
def test_argument_fragments_that_join_into_the_arguments_are_accepted(
    fragments: list[str], arguments: dict[str, object]
) -> None:
    record = {**tool("c-1"), "arguments": arguments, "argumentFragments": fragments}
    chunks, _ = completed([start(), record, end(stop_reason="tool_call")])
    assert chunks == [CourseToolCallChunk("c-1", "add", cast(Any, arguments), 0)]


@pytest.mark.parametrize(
    ("fragments", "arguments", "why"),
    [
        ([], {}, "non-empty array"),
        ("{}", {}, "non-empty array"),
        (["{}", 1], {}, "non-empty array"),
        (['{"a": 1}'], {"a": 1.0}, "equal"),  # an int is not a float
        (['{"a": 1.0}'], {"a": 1}, "equal"),
        (['{"a": true}'], {"a": 1}, "equal"),
        (['{"a": 1}'], {"a": True}, "equal"),
        (['{"a": null}'], {"a": False}, "equal"),
        (['{"a": [1]}'], {"a": [1, 1]}, "equal"),
        (['{"a": 1}'], {"a": 1, "b": 2}, "equal"),
        (['{"a": 1, "c": 2}'], {"a": 1, "b": 2}, "equal"),
        (['{"a": "1"}'], {"a": 1}, "equal"),
        (["[]"], {}, "equal"),
        (["{"], {}, "strict JSON"),
        (['{"a": 1, "a": 1}'], {"a": 1}, "strict JSON"),  # a duplicate key
        (['{"a": NaN}'], {"a": 1}, "strict JSON"),
        (['{"a": 1e400}'], {"a": 1}, "strict JSON"),
        (["{} {}"], {}, "strict JSON"),
        ([""], {"a": 1}, "equal"),
    ],
)
def test_argument_fragments_that_do_not_join_into_the_arguments_are_malformed(
    fragments: object, arguments: dict[str, object], why: str
) -> None:
    record = {**tool("c-1"), "arguments": arguments, "argumentFragments": fragments}
    refused = failed(
        [start(), record, end(stop_reason="tool_call")],
        Code.PROVIDER_MALFORMED_EVENT,
        1,
        "argumentFragments",
    )
    assert why in refused.message


def test_argument_fragments_are_read_under_the_nesting_limit_of_arguments() -> None:
    # ``arguments`` sits in 5 containers (fixture, responses, response, records, record).
    fits = MAX_DEPTH - 5

    def nested(depth: int) -> tuple[object, str]:
        value: object = {}
        for _ in range(depth - 1):
            value = {"k": value}
        return value, '{"k": ' * (depth - 1) + "{}" + "}" * (depth - 1)

    arguments, joined = nested(fits)
    record = {**tool("c-1"), "arguments": arguments, "argumentFragments": [joined]}
    completed([start(), record, end(stop_reason="tool_call")])
    _, too_deep = nested(fits + 1)
    record = {**tool("c-1"), "arguments": arguments, "argumentFragments": [too_deep]}
    refused = failed(
        [start(), record, end(stop_reason="tool_call")],
        Code.PROVIDER_MALFORMED_EVENT,
        1,
        "argumentFragments",
    )
    assert "strict JSON" in refused.message


def test_an_incomplete_call_may_have_no_fragments_and_any_text() -> None:
    for fragments in ([], [""], ["{", '"unterminated']):
        chunks, response = completed([start(), incomplete("c", *fragments), stop("length")])
        assert chunks == [CourseIncompleteToolCallChunk("c", "write", "".join(fragments), 0)]
        assert response.stop_reason == "length"


# -- rule 5: every new field, by exact type and range ---------------------------------------


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({**tool("c"), "signature": ""}, "signature"),
        ({**tool("c"), "signature": None}, "signature"),
        ({**tool("c"), "argumentFragments": None}, "argumentFragments"),
        ({**incomplete("c"), "argumentFragments": "{"}, "argumentFragments"),
        ({**incomplete("c"), "argumentFragments": [None]}, "argumentFragments"),
        ({**incomplete("c"), "id": ""}, "id"),
        ({**incomplete("c"), "name": 1}, "name"),
        ({**thinking("a"), "text": None}, "text"),
        ({**signature(), "signature": ""}, "signature"),
        ({**redacted(), "data": ""}, "data"),
        ({**refusal("a"), "text": 1}, "text"),
        ({**text("a"), "delay": True}, "delay"),
        ({**text("a"), "delay": -1}, "delay"),
        ({**text("a"), "delay": 3600.001}, "delay"),
        ({**text("a"), "delay": "1"}, "delay"),
        ({**text("a"), "delay": None}, "delay"),
        (error(status=200), "status"),
        (error(status=399), "status"),
        (error(status=600), "status"),
        (error(status=429.0), "status"),
        (error(status=True), "status"),
        (error(status=None), "status"),
        (error(retryAfter=-1), "retryAfter"),
        (error(retryAfter=86400.5), "retryAfter"),
        (error(retryAfter=False), "retryAfter"),
        (error(retryAfter="1"), "retryAfter"),
        (error(retryAfter=None), "retryAfter"),
    ],
)
def test_a_mistyped_new_field_is_malformed_at_its_path(
    record: dict[str, object], field: str
) -> None:
    failed([start(), text("ok"), record, end()], Code.PROVIDER_MALFORMED_EVENT, 2, field)


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({**start(), "model": ""}, "model"),
        ({**start(), "model": None}, "model"),
        ({**start(), "model": 7}, "model"),
        ({**start(), "usage": None}, "usage"),
        ({**start(), "usage": {"inputTokens": 1}}, "usage"),
        ({**start(), "delay": -0.1}, "delay"),
    ],
)
def test_a_mistyped_new_field_of_the_start_is_malformed_at_its_path(
    record: dict[str, object], field: str
) -> None:
    failed([record, end()], Code.PROVIDER_MALFORMED_EVENT, 0, field)


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({**incomplete("c"), "signature": "s"}, "signature"),  # a signature misplaced
        ({**incomplete("c"), "arguments": {}}, "arguments"),
        ({**thinking("a"), "signature": "s"}, "signature"),
        ({**refusal("a"), "data": "d"}, "data"),
        ({**signature(), "text": ""}, "text"),
    ],
)
def test_a_field_of_another_record_type_is_an_unknown_field(
    record: dict[str, object], field: str
) -> None:
    refused = failed([start(), record, end()], Code.PROVIDER_MALFORMED_EVENT, 1, field)
    assert "unknown field" in refused.message


def test_missing_required_fields_of_new_records_are_malformed_at_the_record() -> None:
    for record in (
        {"type": "tool_call_incomplete", "id": "c", "name": "n"},
        {"type": "thinking_delta"},
        {"type": "thinking_signature"},
        {"type": "redacted_thinking"},
        {"type": "refusal_delta"},
    ):
        refused = failed([start(), record, end()], Code.PROVIDER_MALFORMED_EVENT, 1)
        assert "missing required field" in refused.message


@pytest.mark.parametrize(
    ("status", "retry_after"), [(400, 0), (599, 86400), (429, 1.5), (503, 0.0)]
)
def test_a_transport_error_carries_its_status_and_retry_after(
    status: int, retry_after: float
) -> None:
    refused = failed(
        [start(), text("a"), error(status=status, retryAfter=retry_after, code="rate_limit")],
        Code.PROVIDER_TRANSPORT_ERROR,
        2,
        chunks=[CourseTextDeltaChunk("a", 0)],
    )
    assert refused.path == "/responses/0/records/2"
    assert (refused.transport_status, refused.transport_retry_after) == (status, retry_after)
    assert type(refused.transport_retry_after) is float
    assert (refused.transport_message, refused.transport_code) == ("boom", "rate_limit")


def test_status_and_retry_after_are_each_optional() -> None:
    only_status = failed([error(status=529)], Code.PROVIDER_TRANSPORT_ERROR, 0, chunks=[])
    assert (only_status.transport_status, only_status.transport_retry_after) == (529, None)
    only_retry = failed([error(retryAfter=2)], Code.PROVIDER_TRANSPORT_ERROR, 0, chunks=[])
    assert (only_retry.transport_status, only_retry.transport_retry_after) == (None, 2.0)


def test_every_other_error_has_no_transport_status() -> None:
    refused = failed([start(), end("other")], Code.PROVIDER_RESPONSE_MISMATCH, 1, "responseId")
    assert (refused.transport_status, refused.transport_retry_after) == (None, None)


# -- usage ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"inputTokens": 10, "outputTokens": 5}, CourseModelUsage(10, 5)),
        (
            {
                "inputTokens": 10,
                "outputTokens": 5,
                "cacheReadTokens": 6,
                "cache_write_tokens": 4,
                "reasoningTokens": 5,
            },
            CourseModelUsage(10, 5, cache_read_tokens=6, cache_write_tokens=4, reasoning_tokens=5),
        ),
        (
            {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            CourseModelUsage(0, 0, cache_read_tokens=0),
        ),
        (
            {"inputTokens": 2**53 - 1, "outputTokens": 0, "cacheReadTokens": 2**53 - 1},
            CourseModelUsage(2**53 - 1, 0, cache_read_tokens=2**53 - 1),
        ),
    ],
)
def test_usage_details_are_read_under_either_alias(
    usage: dict[str, object], expected: CourseModelUsage
) -> None:
    _, response = completed([start(), end(usage=usage)])
    assert response.usage == expected


@pytest.mark.parametrize(
    ("usage", "parts"),
    [
        ({"inputTokens": 3, "outputTokens": 1, "cacheReadTokens": 2, "cacheWriteTokens": 2}, ()),
        ({"inputTokens": 3, "outputTokens": 1, "cacheReadTokens": 4}, ()),
        ({"inputTokens": 3, "outputTokens": 1, "reasoning_tokens": 2}, ()),
        (
            {"inputTokens": 3, "outputTokens": 1, "cacheReadTokens": 1, "cache_read_tokens": 1},
            ("cache_read_tokens",),
        ),
        (
            {"inputTokens": 3, "outputTokens": 1, "reasoningTokens": None, "reasoning_tokens": 0},
            ("reasoning_tokens",),
        ),
        ({"inputTokens": 3, "outputTokens": 1, "cacheWriteTokens": -1}, ("cacheWriteTokens",)),
        ({"inputTokens": 3, "outputTokens": 1, "cacheWriteTokens": 1.0}, ("cacheWriteTokens",)),
        ({"inputTokens": 3, "outputTokens": 1, "reasoningTokens": True}, ("reasoningTokens",)),
        ({"inputTokens": 3, "outputTokens": 1, "cachedTokens": 1}, ("cachedTokens",)),
    ],
)
def test_usage_details_breaking_a_rule_are_malformed(
    usage: dict[str, object], parts: tuple[str, ...]
) -> None:
    failed([start(), end(usage=usage)], Code.PROVIDER_MALFORMED_EVENT, 1, "usage", *parts)
    start_usage = {**start(), "usage": usage}
    failed([start_usage, end()], Code.PROVIDER_MALFORMED_EVENT, 0, "usage", *parts)


def test_usage_details_are_unknown_keys_in_version_one() -> None:
    usage: dict[str, object] = {"inputTokens": 3, "outputTokens": 1, "cacheReadTokens": 1}
    refused = failed(
        [start(), end(usage=usage)],
        Code.PROVIDER_MALFORMED_EVENT,
        1,
        "usage",
        "cacheReadTokens",
        version=1,
    )
    assert "schemaVersion` 2" in refused.message


# -- stop reasons ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "normalized"),
    [("length", "length"), ("content_filter", "contentFilter"), ("pause_turn", "pauseTurn")],
)
def test_the_new_ends_allow_tool_calls_and_need_none(wire: str, normalized: str) -> None:
    cases: list[Records] = [[start(), stop(wire)], [start(), tool("c"), text("t"), stop(wire)]]
    for records in cases:
        _, response = completed(records)
        assert response.stop_reason == normalized


def test_a_refusal_end_needs_no_refusal_text() -> None:
    _, response = completed([start(), text("t"), tool("c"), stop("refusal")])
    assert response.stop_reason == "refusal"


def test_the_version_one_rules_hold_for_complete_calls_only() -> None:
    failed([start(), tool("c"), stop("stop")], Code.PROVIDER_STOP_REASON_MISMATCH, 2, "stopReason")
    # An incomplete call meets no `tool_call` end ...
    failed(
        [start(), incomplete("c"), stop("tool_call")],
        Code.PROVIDER_STOP_REASON_MISMATCH,
        2,
        "stopReason",
    )
    # ... and `stop` does not forbid it, but it needs `length`.
    refused = failed(
        [start(), incomplete("c"), stop("stop")],
        Code.PROVIDER_STOP_REASON_MISMATCH,
        2,
        "stopReason",
    )
    assert "length" in refused.message
    _, response = completed([start(), tool("a"), incomplete("c"), stop("length")])
    assert response.stop_reason == "length"


@pytest.mark.parametrize("wire", ["stop", "length", "content_filter", "pause_turn"])
def test_a_refusal_delta_allows_only_the_refusal_end(wire: str) -> None:
    refused = failed(
        [start(), refusal("no"), stop(wire)], Code.PROVIDER_STOP_REASON_MISMATCH, 2, "stopReason"
    )
    assert "refusal" in refused.message


@pytest.mark.parametrize("wire", ["tool_call", "content_filter", "refusal", "pause_turn"])
def test_an_incomplete_call_allows_only_the_length_end(wire: str) -> None:
    records: Records = [start(), tool("a"), incomplete("c"), stop(wire)]
    failed(records, Code.PROVIDER_STOP_REASON_MISMATCH, 3, "stopReason")


@pytest.mark.parametrize("wire", ["length", "content_filter", "refusal", "pause_turn", "toolCall"])
def test_new_stop_reasons_are_malformed_in_version_one(wire: str) -> None:
    refused = failed(
        [start(), stop(wire)], Code.PROVIDER_MALFORMED_EVENT, 1, "stopReason", version=1
    )
    if wire != "toolCall":
        assert "schemaVersion` 2" in refused.message


def test_provider_stop_reason_is_data_no_rule_compares_it() -> None:
    _, response = completed([start(), stop("stop", providerStopReason="max_tokens")])
    assert (response.stop_reason, response.provider_stop_reason) == ("stop", "max_tokens")
    failed(
        [start(), stop("stop", providerStopReason="")],
        Code.PROVIDER_MALFORMED_EVENT,
        1,
        "providerStopReason",
    )


# -- rule 6: order and duplicates ------------------------------------------------------------


@pytest.mark.parametrize(
    "before",
    [
        [],
        [text("t")],
        [thinking("a"), signature()],
        [thinking("a"), text("t")],
        [redacted()],
        [refusal("r")],
        [tool("c")],
    ],
    ids=["nothing", "text", "signed", "closed", "redacted", "refusal", "tool"],
)
@MODES
def test_a_signature_not_right_after_a_thinking_delta_is_out_of_order(
    before: Records, mode: str
) -> None:
    records: Records = [start(), *before, signature(), stop("refusal")]
    refused = failed(records, Code.PROVIDER_OUT_OF_ORDER, 1 + len(before), mode=mode)
    assert "thinking_signature" in refused.message


@pytest.mark.parametrize(
    "after",
    [
        text("t"),
        tool("other"),
        incomplete("other"),
        thinking("a"),
        signature(),
        redacted(),
        refusal("r"),
    ],
    ids=lambda record: str(record["type"]),
)
@MODES
def test_any_content_after_an_incomplete_call_is_out_of_order(
    after: dict[str, object], mode: str
) -> None:
    records: Records = [start(), text("x"), incomplete("cut"), after, stop("length")]
    failed(records, Code.PROVIDER_OUT_OF_ORDER, 3, mode=mode)


def test_only_the_end_or_a_transport_error_may_follow_an_incomplete_call() -> None:
    completed([start(), incomplete("cut"), stop("length")])
    failed(
        [start(), incomplete("cut"), error(status=500)],
        Code.PROVIDER_TRANSPORT_ERROR,
        2,
        chunks=[CourseIncompleteToolCallChunk("cut", "write", "", 0)],
    )


def test_the_ids_of_complete_and_incomplete_calls_are_both_used() -> None:
    # A tool call reusing an incomplete call's id: the version-1 duplicate check of the
    # record comes first.
    failed(
        [start(), incomplete("same"), tool("same"), stop("length")],
        Code.PROVIDER_DUPLICATE_TOOL_CALL,
        2,
        "id",
    )
    failed(
        [start(), tool("same"), incomplete("same"), stop("length")],
        Code.PROVIDER_DUPLICATE_TOOL_CALL,
        2,
        "id",
    )
    # Content after an incomplete call is judged before its id.
    failed(
        [start(), incomplete("same"), incomplete("same"), stop("length")],
        Code.PROVIDER_OUT_OF_ORDER,
        2,
    )


@pytest.mark.parametrize(
    "record",
    [incomplete("c"), thinking("a"), signature(), redacted(), refusal("r")],
    ids=lambda record: str(record["type"]),
)
def test_any_content_before_the_start_is_a_missing_start_whatever_its_payload(
    record: dict[str, object],
) -> None:
    failed([record, start(), end()], Code.PROVIDER_MISSING_START, 0)
    failed([{**record, "bogus": 1}, start(), end()], Code.PROVIDER_MISSING_START, 0)


@pytest.mark.parametrize(
    "record",
    [incomplete("c"), thinking("a"), signature(), redacted(), refusal("r")],
    ids=lambda record: str(record["type"]),
)
def test_version_two_types_are_unknown_in_version_one(record: dict[str, object]) -> None:
    refused = failed(
        [start(), text("a"), record, end()], Code.PROVIDER_UNKNOWN_EVENT, 2, "type", version=1
    )
    assert "schemaVersion` 2" in refused.message
    assert "thinking_delta" not in refused.message.split(";")[0]  # the five are listed


# -- which code wins --------------------------------------------------------------------------


def test_a_payload_problem_wins_over_the_meaning_rules() -> None:
    # rule 5 before rule 6: a malformed signature with no open block, a malformed
    # record after an incomplete call, a malformed duplicate.
    failed([start(), signature("")], Code.PROVIDER_MALFORMED_EVENT, 1, "signature")
    failed(
        [start(), incomplete("c"), {**text("t"), "delay": -1}],
        Code.PROVIDER_MALFORMED_EVENT,
        2,
        "delay",
    )
    failed(
        [start(), tool("c"), {**incomplete("c"), "argumentFragments": [1]}],
        Code.PROVIDER_MALFORMED_EVENT,
        2,
        "argumentFragments",
    )
    # A bad field earlier in the table's order is the one reported.
    failed(
        [start(), {**tool("c"), "id": "", "signature": "", "delay": True}],
        Code.PROVIDER_MALFORMED_EVENT,
        1,
        "id",
    )


def test_an_invalid_delay_is_judged_only_after_rules_one_to_four() -> None:
    late = {**text("t"), "delay": -1}
    failed([start(), end(), late], Code.PROVIDER_INVALID_TERMINAL, 2)
    failed([late, start(), end()], Code.PROVIDER_MISSING_START, 0)
    failed([start(), {"type": "nope", "delay": -1}], Code.PROVIDER_UNKNOWN_EVENT, 1, "type")
    failed([start(), {"type": 1, "delay": -1}], Code.PROVIDER_MALFORMED_EVENT, 1, "type")
    failed([start(), {**start(), "delay": -1}], Code.PROVIDER_DUPLICATE_START, 1)


def test_a_mismatched_end_wins_over_the_version_two_stop_rules() -> None:
    failed(
        [start(), refusal("no"), incomplete("c"), stop("stop", responseId="other")],
        Code.PROVIDER_RESPONSE_MISMATCH,
        3,
        "responseId",
    )


def test_every_version_two_code_is_reached_with_chunks_delivered_before_it() -> None:
    prefix: Records = [start(), thinking("a"), text("b")]
    delivered = [CourseThinkingDeltaChunk("a", 0), CourseTextDeltaChunk("b", 1)]
    cases = {
        Code.PROVIDER_OUT_OF_ORDER: [*prefix, signature()],
        Code.PROVIDER_DUPLICATE_TOOL_CALL: [*prefix, incomplete("d"), tool("d")],
        Code.PROVIDER_STOP_REASON_MISMATCH: [*prefix, refusal("r"), stop("stop")],
        Code.PROVIDER_MALFORMED_EVENT: [*prefix, {**redacted(), "data": 1}],
        Code.PROVIDER_TRANSPORT_ERROR: [*prefix, error(status=429, retryAfter=3)],
    }
    for code, records in cases.items():
        for mode in ("array", "source"):
            outcome = outcome_of(records, mode)
            assert outcome.error is not None and outcome.error.code is code
            assert outcome.chunks[:2] == delivered


# -- boundaries, generated -------------------------------------------------------------------


def judged(records: Records) -> FixtureProviderError | CourseModelResponse:
    """The response's outcome, judged with no event loop and no wait at all."""
    data = {"schemaVersion": 2, "responses": [{"records": records}]}
    stream = FixtureProviderAdapter(data).stream(CourseModelRequest("q"))._without_delays()
    coroutine = stream.result()
    try:
        coroutine.send(None)
    except StopIteration as done:
        return cast(CourseModelResponse, done.value)
    except FixtureProviderError as failure:
        return failure
    raise AssertionError("a replay without delays waited")


_NUMBERS = st.one_of(
    st.integers(-3, 90_000),
    st.floats(-1.0, 90_000.0, allow_nan=False),
    st.sampled_from([0, 0.0, -0.0, 3600, 3600.0, 86400, 86400.0, 399, 400, 599, 600]),
    st.sampled_from([3600 + 1e-9, 86400.000001, 5e-324, True, False, "1", None]),
)


@settings(max_examples=60)
@given(delay=_NUMBERS, status=_NUMBERS, retry_after=_NUMBERS)
def test_numbers_are_judged_by_exact_type_and_range(
    delay: object, status: object, retry_after: object
) -> None:
    def number(value: object, top: float) -> bool:
        return type(value) in (int, float) and 0 <= value <= top  # type: ignore[operator]

    record = {**error(status=status, retryAfter=retry_after), "delay": delay}
    outcome = judged([start(), record])
    assert isinstance(outcome, FixtureProviderError)
    good_status = type(status) is int and 400 <= status <= 599
    if not good_status:
        assert (outcome.code, outcome.path) == (
            Code.PROVIDER_MALFORMED_EVENT,
            "/responses/0/records/1/status",
        )
    elif not number(retry_after, 86400):
        assert outcome.path == "/responses/0/records/1/retryAfter"
    elif not number(delay, 3600):
        assert outcome.path == "/responses/0/records/1/delay"
    else:
        assert outcome.code is Code.PROVIDER_TRANSPORT_ERROR
        assert outcome.transport_status == status
        assert outcome.transport_retry_after == float(retry_after)  # type: ignore[arg-type]


_COUNTS = st.one_of(st.none(), st.integers(0, 12), st.sampled_from([2**53 - 1, 2**53]))


_DETAILS = st.tuples(_COUNTS, _COUNTS, _COUNTS)


@settings(max_examples=60)
@given(inputs=st.integers(0, 12), outputs=st.integers(0, 12), details=_DETAILS, snake=st.booleans())
def test_usage_details_are_accepted_exactly_when_their_totals_include_them(
    inputs: int, outputs: int, details: tuple[int | None, int | None, int | None], snake: bool
) -> None:
    names = ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
    if not snake:
        names = ("cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
    usage: dict[str, object] = {"inputTokens": inputs, "outputTokens": outputs}
    usage.update({n: c for n, c in zip(names, details, strict=True) if c is not None})
    outcome = judged([start(), end(usage=usage)])
    read, write, reasoning = details
    in_range = all(count is None or count <= 2**53 - 1 for count in details)
    included = (read or 0) + (write or 0) <= inputs and (reasoning or 0) <= outputs
    if in_range and included:
        assert isinstance(outcome, CourseModelResponse)
        assert outcome.usage == CourseModelUsage(
            inputs,
            outputs,
            cache_read_tokens=read,
            cache_write_tokens=write,
            reasoning_tokens=reasoning,
        )
    else:
        assert isinstance(outcome, FixtureProviderError)
        assert outcome.code is Code.PROVIDER_MALFORMED_EVENT
        assert outcome.path is not None
        assert outcome.path.startswith("/responses/0/records/1/usage")
