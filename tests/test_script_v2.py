"""``course.script``, version 2: each helper and keyword writes exactly its records, a
fixture is version 2 exactly when a record needs it, and replay agrees."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import (
    CourseModelRequest,
    CourseModelUsage,
    FixtureProviderAdapter,
    FixtureProviderErrorCode,
    script,
)
from tests.helpers import replayed, run, stream_one
from tests.test_plugin import run as run_pytest

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parent.parent / "README.md"

Code = FixtureProviderErrorCode

START = {"type": "response_start", "responseId": "response-001", "role": "assistant"}


def records(fixture: dict[str, object], index: int = 0) -> list[Any]:
    responses = cast("list[dict[str, list[Any]]]", fixture["responses"])
    return responses[index]["records"]


def end(
    stop: str = "stop", usage: dict[str, int] | None = None, **more: object
) -> dict[str, object]:
    return {
        "type": "response_end",
        "responseId": "response-001",
        "stopReason": stop,
        "usage": {"inputTokens": 0, "outputTokens": 0} if usage is None else usage,
        **more,
    }


def same(found: object, expected: object) -> None:
    """Equal, key order included (``json.dumps`` keeps it)."""
    assert json.dumps(found) == json.dumps(expected)


# -- each helper's records -----------------------------------------------------------------

WRITTEN: list[tuple[str, script.Response, list[Any]]] = [
    (
        "thinking as one str",
        script.response(script.thinking("hmm")),
        [START, {"type": "thinking_delta", "text": "hmm"}, end()],
    ),
    (
        "thinking as a list, signed",
        script.response(script.thinking(["a", "", "b"], signature="sig")),
        [
            START,
            {"type": "thinking_delta", "text": "a"},
            {"type": "thinking_delta", "text": ""},
            {"type": "thinking_delta", "text": "b"},
            {"type": "thinking_signature", "signature": "sig"},
            end(),
        ],
    ),
    (
        "thinking as a tuple",
        script.response(script.thinking(("a",))),
        [START, {"type": "thinking_delta", "text": "a"}, end()],
    ),
    (
        "redacted",
        script.response(script.redacted("opaque")),
        [START, {"type": "redacted_thinking", "data": "opaque"}, end()],
    ),
    (
        "refusal: the stop reason follows",
        script.response(script.refusal("No.")),
        [START, {"type": "refusal_delta", "text": "No."}, end("refusal")],
    ),
    (
        "an empty refusal",
        script.response(script.refusal("")),
        [START, {"type": "refusal_delta", "text": ""}, end("refusal")],
    ),
    (
        "incomplete call: length",
        script.response("x", script.incomplete_call("add", '{"left": ', "1")),
        [
            START,
            {"type": "text_delta", "text": "x"},
            {
                "type": "tool_call_incomplete",
                "id": "call-add-001",
                "name": "add",
                "argumentFragments": ['{"left": ', "1"],
            },
            end("length"),
        ],
    ),
    (
        "incomplete call without fragments, a refusal before it: length wins",
        script.response(script.refusal("r"), script.incomplete_call("f", id="mine")),
        [
            START,
            {"type": "refusal_delta", "text": "r"},
            {"type": "tool_call_incomplete", "id": "mine", "name": "f", "argumentFragments": []},
            end("length"),
        ],
    ),
    (
        "incomplete call, then an error",
        script.response(script.incomplete_call("f", "{"), script.error("boom")),
        [
            START,
            {
                "type": "tool_call_incomplete",
                "id": "call-f-001",
                "name": "f",
                "argumentFragments": ["{"],
            },
            {"type": "transport_error", "message": "boom"},
        ],
    ),
    (
        "incomplete call, then a cut",
        script.response(script.incomplete_call("f"), script.CUT),
        [
            START,
            {
                "type": "tool_call_incomplete",
                "id": "call-f-001",
                "name": "f",
                "argumentFragments": [],
            },
        ],
    ),
    (
        "call with fragments and a signature",
        script.response(
            script.call(
                "add", {"a": [1, 2.5]}, fragments=['{"a": [1, ', "", "2.5]}"], signature="s"
            )
        ),
        [
            START,
            {
                "type": "tool_call",
                "id": "call-add-001",
                "name": "add",
                "arguments": {"a": [1, 2.5]},
                "argumentFragments": ['{"a": [1, ', "", "2.5]}"],
                "signature": "s",
            },
            end("tool_call"),
        ],
    ),
    (
        "an empty fragment stands for {}",
        script.response(script.call("f", {}, fragments=[""])),
        [
            START,
            {
                "type": "tool_call",
                "id": "call-f-001",
                "name": "f",
                "arguments": {},
                "argumentFragments": [""],
            },
            end("tool_call"),
        ],
    ),
    (
        "wait: the next item's first record",
        script.response(script.wait(2), script.thinking(["a", "b"]), script.wait(0.5), "t"),
        [
            START,
            {"type": "thinking_delta", "text": "a", "delay": 2},
            {"type": "thinking_delta", "text": "b"},
            {"type": "text_delta", "text": "t", "delay": 0.5},
            end(),
        ],
    ),
    (
        "wait last: the end",
        script.response("t", script.wait(0)),
        [START, {"type": "text_delta", "text": "t"}, {**end(), "delay": 0}],
    ),
    (
        "wait after an incomplete call: the end",
        script.response(script.incomplete_call("f"), script.wait(3600)),
        [
            START,
            {
                "type": "tool_call_incomplete",
                "id": "call-f-001",
                "name": "f",
                "argumentFragments": [],
            },
            {**end("length"), "delay": 3600},
        ],
    ),
    (
        "wait before an error: the transport error",
        script.response(script.wait(1.5), script.error("e", code="c", status=503, retry_after=2)),
        [
            START,
            {
                "type": "transport_error",
                "message": "e",
                "code": "c",
                "status": 503,
                "retryAfter": 2,
                "delay": 1.5,
            },
        ],
    ),
    (
        "error with a status and no code",
        script.response(script.error("slow down", status=429, retry_after=0.25)),
        [
            START,
            {"type": "transport_error", "message": "slow down", "status": 429, "retryAfter": 0.25},
        ],
    ),
    (
        "error with retry_after alone",
        script.response(script.error("m", retry_after=0)),
        [START, {"type": "transport_error", "message": "m", "retryAfter": 0}],
    ),
    (
        "the start's keywords",
        script.response(model="m-1", start_delay=0.1, start_usage=script.usage(5, 0, cache_read=5)),
        [
            {
                "type": "response_start",
                "responseId": "response-001",
                "role": "assistant",
                "model": "m-1",
                "usage": {"inputTokens": 5, "outputTokens": 0, "cacheReadTokens": 5},
                "delay": 0.1,
            },
            end(),
        ],
    ),
    (
        "start_usage as a tuple",
        script.response(start_usage=(3, 1)),
        [{**START, "usage": {"inputTokens": 3, "outputTokens": 1}}, end()],
    ),
    (
        "the end's keywords, zeros written",
        script.response(
            stop="pause_turn",
            provider_stop_reason="pause_turn",
            usage=script.usage(9, 4, cache_read=0, cache_write=9, reasoning=4),
        ),
        [
            START,
            end(
                "pause_turn",
                {
                    "inputTokens": 9,
                    "outputTokens": 4,
                    "cacheReadTokens": 0,
                    "cacheWriteTokens": 9,
                    "reasoningTokens": 4,
                },
                providerStopReason="pause_turn",
            ),
        ],
    ),
    (
        "an explicit stop is written as given",
        script.response(script.refusal("r"), stop="content_filter"),
        [START, {"type": "refusal_delta", "text": "r"}, end("content_filter")],
    ),
]


@pytest.mark.parametrize(
    ("scripted", "expected"), [(s, e) for _, s, e in WRITTEN], ids=[n for n, _, _ in WRITTEN]
)
def test_each_helper_writes_exactly_its_records(
    scripted: script.Response, expected: list[Any]
) -> None:
    fixture = script.fixture(scripted)
    same(fixture, {"schemaVersion": 2, "responses": [{"records": expected}]})


def test_incomplete_calls_count_with_their_names_calls() -> None:
    fixture = script.fixture(
        script.response(script.call("add", {}), script.incomplete_call("add")),
        script.response(script.incomplete_call("add", id="x"), script.CUT),
        script.response(script.call("add", {})),
    )
    ids = [[r.get("id") for r in records(fixture, i) if "id" in r] for i in range(3)]
    assert ids == [["call-add-001", "call-add-002"], ["x"], ["call-add-004"]]


VERSION_1_STILL: list[Callable[[], script.Response]] = [
    lambda: script.response("t", stop="stop"),
    lambda: script.response(script.call("f", {}), stop="tool_call"),
    lambda: script.response(stop="tool_call"),  # a mismatch, which version 1 can say
    lambda: script.response(usage=script.usage(1, 2)),
    lambda: script.response(script.error("e", code="c")),
    lambda: script.response(script.call("f", {}, fragments=None, signature=None)),
]


@pytest.mark.parametrize("make", VERSION_1_STILL)
def test_a_fixture_that_needs_nothing_new_is_version_1(make: Callable[[], script.Response]) -> None:
    assert script.fixture(make())["schemaVersion"] == 1


def test_usage_given_as_script_usage_writes_as_the_tuple_does() -> None:
    same(
        script.fixture(script.response(usage=script.usage(1, 2))),
        script.fixture(script.response(usage=(1, 2))),
    )


def test_one_record_that_needs_version_2_makes_the_whole_fixture_version_2() -> None:
    fixture = script.fixture(script.response("a"), script.response(script.wait(0), "b"))
    assert fixture["schemaVersion"] == 2
    assert records(fixture, 0) == [
        {"type": "response_start", "responseId": "response-001", "role": "assistant"},
        {"type": "text_delta", "text": "a"},
        {**end(), "responseId": "response-001"},
    ]


def test_a_cut_or_an_error_writes_no_end_and_so_no_usage_details() -> None:
    cut = script.response("a", script.CUT, usage=script.usage(5, 5, reasoning=1))
    assert script.fixture(cut)["schemaVersion"] == 1


def test_fragments_are_copied_and_checked_when_the_fixture_is_written() -> None:
    fragments = ['{"n": 1}']
    scripted = script.call("f", {"n": 1}, fragments=fragments)
    fragments.append("junk")
    assert records(script.fixture(script.response(scripted)))[1]["argumentFragments"] == [
        '{"n": 1}'
    ]
    scripted.arguments["n"] = 2  # the private copy changed behind the call's back
    with pytest.raises(ValueError, match="`fragments`"):
        script.fixture(script.response(scripted))


def test_fragments_equal_the_arguments_as_json_not_as_python() -> None:
    # Key order is free; ints, floats and booleans never meet.
    script.call(
        "f", {"a": 1, "b": [True, None, "s"]}, fragments=['{"b": [true, null, "s"], "a": 1}']
    )
    for text, arguments in [
        ('{"a": 1.0}', {"a": 1}),
        ('{"a": 1}', {"a": 1.0}),
        ('{"a": true}', {"a": 1}),
        ('{"a": 0}', {"a": False}),
        ('{"a": [1]}', {"a": [1, 2]}),
        ('{"a": {}}', {"a": {"b": 1}}),
        ("[]", {}),
    ]:
        with pytest.raises(ValueError, match="`fragments`"):
            script.call("f", cast("dict[str, object]", arguments), fragments=[text])


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=3),
)
_OBJECTS = st.dictionaries(
    st.text(max_size=2),
    st.recursive(
        _SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=2), st.dictionaries(st.text(max_size=2), inner, max_size=2)
        ),
        max_leaves=5,
    ),
    max_size=3,
)


def _retyped(value: object) -> object:
    """``value`` with every int a float: the same numbers, another JSON."""
    if type(value) is int:
        return float(value)
    if type(value) is dict:
        return {key: _retyped(item) for key, item in cast("dict[str, object]", value).items()}
    if type(value) is list:
        return [_retyped(item) for item in cast("list[object]", value)]
    return value


@settings(max_examples=60)
@given(_OBJECTS, st.data())
def test_script_and_the_adapter_agree_on_fragments(
    arguments: dict[str, object], data: st.DataObject
) -> None:
    text = data.draw(
        st.one_of(
            st.just(json.dumps(arguments)),
            st.just(json.dumps(arguments, indent=1, sort_keys=True)),
            st.just(json.dumps(_retyped(arguments))),
            st.builds(json.dumps, _OBJECTS),
            st.text(max_size=6),
        )
    )
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=3)))
    fragments = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    try:
        script.call("f", arguments, fragments=fragments)
    except ValueError:
        accepted = False
    else:
        accepted = True
    call = {
        "type": "tool_call",
        "id": "c",
        "name": "f",
        "arguments": arguments,
        "argumentFragments": fragments,
    }
    fixture = {"schemaVersion": 2, "responses": [{"records": [START, call, end("tool_call")]}]}
    outcome = run(replayed(fixture))[0][1]
    assert accepted == isinstance(outcome, dict), (fragments, outcome)
    if not accepted:
        assert outcome == Code.PROVIDER_MALFORMED_EVENT


def test_every_value_type_is_frozen() -> None:
    values: list[object] = [
        script.thinking("t"),
        script.redacted("d"),
        script.refusal("r"),
        script.incomplete_call("f"),
        script.wait(1),
        script.usage(1, 1),
    ]
    for value in values:
        first = dataclasses.fields(cast("DataclassInstance", value))[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, first, "changed")


# -- bad arguments ---------------------------------------------------------------------------

BAD: list[tuple[Callable[[], object], type[Exception], str]] = [
    (lambda: script.thinking(None), TypeError, "`text`"),  # type: ignore[arg-type]
    (lambda: script.thinking([]), ValueError, "`text`"),
    (lambda: script.thinking(["a", 1]), TypeError, "`text[1]`"),  # type: ignore[list-item]
    (lambda: script.thinking("t", signature=""), ValueError, "`signature`"),
    (lambda: script.thinking("t", signature=1), TypeError, "`signature`"),  # type: ignore[arg-type]
    (lambda: script.Thinking(["t"]), TypeError, "`texts`"),  # type: ignore[arg-type]
    (lambda: script.redacted(""), ValueError, "`data`"),
    (lambda: script.redacted(b"d"), TypeError, "`data`"),  # type: ignore[arg-type]
    (lambda: script.refusal(None), TypeError, "`text`"),  # type: ignore[arg-type]
    (lambda: script.incomplete_call(""), ValueError, "`name`"),
    (lambda: script.incomplete_call("f", "{", 1), TypeError, "`fragments[1]`"),  # type: ignore[arg-type]
    (lambda: script.incomplete_call("f", id=""), ValueError, "`id`"),
    (lambda: script.IncompleteCall("f", ["{"]), TypeError, "`fragments`"),  # type: ignore[arg-type]
    (lambda: script.wait(True), TypeError, "`seconds`"),
    (lambda: script.wait("1"), TypeError, "`seconds`"),  # type: ignore[arg-type]
    (lambda: script.wait(float("nan")), ValueError, "`seconds`"),
    (lambda: script.wait(float("inf")), ValueError, "`seconds`"),
    (lambda: script.wait(-0.001), ValueError, "`seconds`"),
    (lambda: script.wait(3600.5), ValueError, "`seconds`"),
    (lambda: script.wait(10**5000), ValueError, "`seconds`"),
    (lambda: script.call("f", {}, fragments=[]), ValueError, "`fragments`"),
    (lambda: script.call("f", {}, fragments="{}"), TypeError, "`fragments`"),  # type: ignore[arg-type]
    (lambda: script.call("f", {}, fragments=["{", 1]), TypeError, "`fragments[1]`"),  # type: ignore[list-item]
    (lambda: script.call("f", {}, fragments=["{"]), ValueError, "`fragments`"),
    (lambda: script.call("f", {"a": 1}, fragments=['{"a": 1, "a": 1}']), ValueError, "`fragments`"),
    (lambda: script.call("f", {}, fragments=["{} x"]), ValueError, "`fragments`"),
    (lambda: script.call("f", {"a": 1}, fragments=['{"a": NaN}']), ValueError, "`fragments`"),
    (lambda: script.call("f", {}, signature=""), ValueError, "`signature`"),
    (lambda: script.call("f", {}, signature=b"s"), TypeError, "`signature`"),  # type: ignore[arg-type]
    (lambda: script.error("e", status=True), TypeError, "`status`"),
    (lambda: script.error("e", status=429.0), TypeError, "`status`"),  # type: ignore[arg-type]
    (lambda: script.error("e", status=200), ValueError, "`status`"),
    (lambda: script.error("e", status=399), ValueError, "`status`"),
    (lambda: script.error("e", status=600), ValueError, "`status`"),
    (lambda: script.error("e", retry_after=True), TypeError, "`retry_after`"),
    (lambda: script.error("e", retry_after="1"), TypeError, "`retry_after`"),  # type: ignore[arg-type]
    (lambda: script.error("e", retry_after=-1), ValueError, "`retry_after`"),
    (lambda: script.error("e", retry_after=86400.5), ValueError, "`retry_after`"),
    (lambda: script.error("e", retry_after=float("nan")), ValueError, "`retry_after`"),
    (lambda: script.usage(True, 0), TypeError, "`input`"),
    (lambda: script.usage(0, -1), ValueError, "`output`"),
    (lambda: script.usage(2**53, 0), ValueError, "`input`"),
    (lambda: script.usage(1, 1, cache_read=1.0), TypeError, "`cache_read`"),  # type: ignore[arg-type]
    (lambda: script.usage(1, 1, cache_write=-1), ValueError, "`cache_write`"),
    (lambda: script.usage(1, 1, reasoning=False), TypeError, "`reasoning`"),
    (
        lambda: script.usage(3, 0, cache_read=2, cache_write=2),
        ValueError,
        "`cache_read` + `cache_write`",
    ),
    (lambda: script.usage(0, 1, reasoning=2), ValueError, "`reasoning`"),
    (lambda: script.response(stop="end_turn"), ValueError, "`stop`"),
    (lambda: script.response(stop="toolCall"), ValueError, "`stop`"),
    (lambda: script.response(stop=1), TypeError, "`stop`"),  # type: ignore[arg-type]
    (lambda: script.response("a", script.CUT, stop="length"), ValueError, "`stop`"),
    (lambda: script.response(script.error("e" * 999), stop="stop"), ValueError, "`stop`"),
    (
        lambda: script.response(script.CUT, provider_stop_reason="x"),
        ValueError,
        "`provider_stop_reason`",
    ),
    (lambda: script.response(provider_stop_reason=""), ValueError, "`provider_stop_reason`"),
    (lambda: script.response(provider_stop_reason=7), TypeError, "`provider_stop_reason`"),  # type: ignore[arg-type]
    (lambda: script.response(model=""), ValueError, "`model`"),
    (lambda: script.response(model=["m"]), TypeError, "`model`"),  # type: ignore[arg-type]
    (lambda: script.response(start_delay=True), TypeError, "`start_delay`"),
    (lambda: script.response(start_delay=3601), ValueError, "`start_delay`"),
    (lambda: script.response(start_usage=(1,)), ValueError, "`start_usage`"),  # type: ignore[arg-type]
    (lambda: script.response(start_usage=(1, True)), TypeError, "`start_usage` output"),
    (lambda: script.response(start_usage={"inputTokens": 1}), TypeError, "`start_usage`"),  # type: ignore[arg-type]
    (lambda: script.response(usage=[1, 2, 3]), ValueError, "`usage`"),  # type: ignore[arg-type]
    (lambda: script.response(usage=(10**5000, 0)), ValueError, "`usage` input"),
    (lambda: script.response(script.incomplete_call("f"), "x"), ValueError, "items[1]"),
    (
        lambda: script.response(script.incomplete_call("f"), script.call("g", {})),
        ValueError,
        "items[1]",
    ),
    (
        lambda: script.response(script.incomplete_call("f"), script.wait(1), script.refusal("r")),
        ValueError,
        "items[2]",
    ),
    (
        lambda: script.response(script.incomplete_call("f"), script.incomplete_call("g")),
        ValueError,
        "items[1]",
    ),
    (lambda: script.response(script.wait(1), script.wait(1)), ValueError, "items[0]"),
    (lambda: script.response("a", script.wait(1), script.CUT), ValueError, "items[1]"),
    (lambda: script.response(script.wait), TypeError, "items[0]"),  # type: ignore[arg-type]
    (lambda: script.response(script.usage(1, 1)), TypeError, "items[0]"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("make", "kind", "names"), BAD)
def test_a_bad_argument_is_refused_at_once_by_name(
    make: Callable[[], object], kind: type[Exception], names: str
) -> None:
    with pytest.raises(kind) as caught:
        make()
    assert type(caught.value) is kind
    assert names in str(caught.value)
    assert len(str(caught.value)) < 400


_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=3),
    st.lists(st.one_of(st.text(max_size=2), st.integers()), max_size=2),
    st.tuples(st.integers(-1, 3), st.integers(-1, 3)),
    st.just(script.CUT),
    st.just(script.wait(0)),
    st.just(script.usage(1, 1)),
)


@settings(max_examples=60)
@given(st.lists(_JUNK, min_size=6, max_size=6))
def test_junk_in_gives_only_type_or_value_errors(junk: list[Any]) -> None:
    a, b, c, d, e, f = junk
    attempts: list[Callable[[], object]] = [
        lambda: script.thinking(a, signature=b),
        lambda: script.redacted(a),
        lambda: script.refusal(a),
        lambda: script.incomplete_call(a, b, c, id=d),
        lambda: script.wait(a),
        lambda: script.call("f", {}, fragments=a, signature=b),
        lambda: script.error("m", status=a, retry_after=b),
        lambda: script.usage(a, b, cache_read=c, cache_write=d, reasoning=e),
        lambda: script.response(
            a, b, stop=c, model=d, provider_stop_reason=e, start_delay=f, start_usage=a
        ),
    ]
    for attempt in attempts:
        try:
            attempt()
        except (TypeError, ValueError) as error:
            assert type(error) in (TypeError, ValueError)
            assert str(error)


# -- replay agrees -----------------------------------------------------------------------------


def test_a_version_2_script_replays_as_its_items_say() -> None:
    fixture = script.fixture(
        script.response(
            script.thinking(["Let me ", "add."], signature="sig-1"),
            script.redacted("opaque"),
            "Sure.",
            script.call("add", {"left": 1}, fragments=['{"left"', ": 1}"], signature="cs"),
            response_id="r-1",
            model="model-x",
            provider_stop_reason="tool_use",
            usage=script.usage(10, 5, cache_read=4, cache_write=1, reasoning=2),
            start_usage=(10, 1),
        ),
        script.response(script.refusal("No."), usage=(1, 1)),
        script.response("part", script.incomplete_call("add", '{"left": '), usage=(2, 3)),
    )
    outcomes = run(replayed(fixture))
    assert outcomes[0] == (
        [
            {"type": "thinkingDelta", "text": "Let me ", "contentIndex": 0},
            {"type": "thinkingDelta", "text": "add.", "contentIndex": 0},
            {"type": "thinkingSignature", "signature": "sig-1", "contentIndex": 0},
            {"type": "redactedThinking", "data": "opaque", "contentIndex": 1},
            {"type": "textDelta", "text": "Sure.", "contentIndex": 2},
            {
                "type": "toolCall",
                "id": "call-add-001",
                "name": "add",
                "arguments": {"left": 1},
                "signature": "cs",
                "contentIndex": 3,
            },
        ],
        {
            "requestId": "request-0",
            "responseId": "r-1",
            "message": {
                "id": "message-r-1",
                "role": "assistant",
                "content": [
                    {"type": "thinking", "text": "Let me add.", "signature": "sig-1"},
                    {"type": "redactedThinking", "data": "opaque"},
                    {"type": "text", "text": "Sure."},
                    {
                        "type": "toolCall",
                        "id": "call-add-001",
                        "name": "add",
                        "arguments": {"left": 1},
                        "signature": "cs",
                    },
                ],
            },
            "stopReason": "toolCall",
            "usage": {
                "inputTokens": 10,
                "outputTokens": 5,
                "cacheReadTokens": 4,
                "cacheWriteTokens": 1,
                "reasoningTokens": 2,
            },
            "model": "model-x",
            "providerStopReason": "tool_use",
        },
    )
    refused_chunks, refused = outcomes[1]
    assert refused_chunks == [{"type": "refusalDelta", "text": "No.", "contentIndex": 0}]
    assert isinstance(refused, dict)
    assert refused["stopReason"] == "refusal"
    assert refused["message"]["content"] == [{"type": "refusal", "text": "No."}]
    cut_chunks, cut = outcomes[2]
    assert cut_chunks[1] == {
        "type": "incompleteToolCall",
        "id": "call-add-002",
        "name": "add",
        "argumentsText": '{"left": ',
        "contentIndex": 1,
    }
    assert isinstance(cut, dict)
    assert cut["stopReason"] == "length"


def test_the_start_usage_and_model_reach_the_stream() -> None:
    fixture = script.fixture(
        script.response("hi", model="m", start_usage=script.usage(7, 0, cache_read=3))
    )

    async def started() -> tuple[str | None, CourseModelUsage | None]:
        stream = FixtureProviderAdapter(fixture).stream(CourseModelRequest("q"))
        async with stream:
            async for _ in stream:
                break
            return stream.model, stream.start_usage

    model, start_usage = run(started())
    assert model == "m"
    assert start_usage is not None
    assert start_usage.to_dict() == {"inputTokens": 7, "outputTokens": 0, "cacheReadTokens": 3}


def test_an_explicit_stop_is_kept_even_where_replay_refuses_it() -> None:
    fixture = script.fixture(
        script.response(script.refusal("no"), stop="stop"),
        script.response(script.incomplete_call("f"), stop="tool_call"),
        script.response(script.call("f", {}), stop="content_filter"),
    )
    outcomes = run(replayed(fixture))
    assert [outcome for _, outcome in outcomes[:2]] == [Code.PROVIDER_STOP_REASON_MISMATCH] * 2
    third = outcomes[2][1]
    assert isinstance(third, dict)
    assert third["stopReason"] == "contentFilter"


def test_an_error_with_a_status_reaches_the_error() -> None:
    fixture = script.fixture(
        script.response(script.error("slow", code="rate", status=429, retry_after=2))
    )
    outcome = stream_one(fixture)
    assert outcome.error is not None
    assert outcome.error.code is Code.PROVIDER_TRANSPORT_ERROR
    assert outcome.error.transport_code == "rate"
    assert outcome.error.transport_status == 429
    assert outcome.error.transport_retry_after == 2.0


def test_waits_are_delays_the_stream_keeps() -> None:
    # Small delays: the test proves they are read and honoured, not how long they last.
    fixture = script.fixture(
        script.response(script.wait(0.001), "a", script.wait(0), start_delay=0.001)
    )
    outcome = stream_one(fixture)
    assert [chunk.to_dict() for chunk in outcome.chunks] == [
        {"type": "textDelta", "text": "a", "contentIndex": 0}
    ]
    assert outcome.response is not None


# -- properties: whatever is scripted is a valid fixture of the version it says ----------------

_CONTENT = st.one_of(
    st.text(max_size=3),
    st.builds(
        script.call,
        st.sampled_from(["f", "g"]),
        st.just({"n": 1}),
        fragments=st.sampled_from([None, ['{"n"', ": 1}"]]),
    ),
    st.builds(
        script.thinking,
        st.lists(st.text(max_size=2), min_size=1, max_size=2),
        signature=st.sampled_from([None, "s"]),
    ),
    st.builds(script.redacted, st.just("d")),
    st.builds(script.refusal, st.text(max_size=2)),
    st.builds(script.wait, st.sampled_from([0, 0.0])),
)
_LAST = st.sampled_from(
    [None, script.CUT, script.error("e", status=500), script.incomplete_call("f", "{")]
)


_USAGES: st.SearchStrategy[tuple[int, int] | script.Usage] = st.sampled_from(
    [(1, 1), script.usage(2, 2, cache_read=1, reasoning=0)]
)


@st.composite
def _v2_responses(draw: st.DrawFn) -> script.Response:
    items: list[script.Item] = draw(st.lists(_CONTENT, max_size=4))
    while len(items) > 1 and any(
        type(a) is script.Wait and type(b) is script.Wait for a, b in itertools.pairwise(items)
    ):
        items = [item for item in items if type(item) is not script.Wait]
    last = draw(_LAST)
    if last is not None:
        if last is script.CUT and items and type(items[-1]) is script.Wait:
            items.pop()
        items.append(last)
    return script.response(
        *items,
        model=draw(st.sampled_from([None, "m"])),
        usage=draw(_USAGES),
    )


@settings(max_examples=40)
@given(st.lists(_v2_responses(), min_size=1, max_size=3))
def test_every_v2_script_is_plain_json_that_construction_accepts(
    responses: list[script.Response],
) -> None:
    fixture = script.fixture(*responses)
    assert json.loads(json.dumps(fixture)) == fixture
    FixtureProviderAdapter(fixture)
    outcomes = run(replayed(fixture))
    for scripted, (_, outcome) in zip(responses, outcomes, strict=True):
        last = scripted.items[-1] if scripted.items else None
        if type(last) is script.Failure:
            assert outcome == Code.PROVIDER_TRANSPORT_ERROR
        elif type(last) is script.Cut:
            assert outcome == Code.PROVIDER_MISSING_TERMINAL
        elif any(type(item) is script.Refusal for item in scripted.items) and any(
            type(item) is script.IncompleteCall for item in scripted.items
        ):
            assert outcome == Code.PROVIDER_STOP_REASON_MISMATCH
        else:
            assert isinstance(outcome, dict), outcome


# -- the README's example ------------------------------------------------------------------------


def readme_example(lead: str) -> str:
    """The first Python block of the README after the paragraph that starts with ``lead``."""
    text = README.read_text(encoding="utf-8")
    after = text[text.index(f"\n{lead}") :]
    start = after.index("```python\n") + len("```python\n")
    return after[start : after.index("```\n", start)]


def test_the_readme_version_2_example_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_version_2=readme_example("**Version 2 in code.**"))
    result = run_pytest(pytester, "-v", "--strict-markers")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*::test_a_truncated_tool_call_is_never_run PASSED*",
            "*::test_a_rate_limit_is_retried_after_the_wait_it_asks_for PASSED*",
        ]
    )
