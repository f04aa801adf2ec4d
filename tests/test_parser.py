"""The record parser, example by example: every reachable code, the precedence of
the rules, every payload field, and the ordering of chunks and content.

Each case is fed whole and again with trailing garbage after it: a failure settles
the stream for good, so records after the failing one change nothing, and after a
well-formed terminal any record at all is a terminal error. The error table is also
fed record by record through an async source, and at response index 1.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import pytest

from course import (
    CourseModelChunk,
    CourseModelRequest,
    CourseModelUsage,
    CourseTextBlock,
    CourseTextDeltaChunk,
    CourseToolCallBlock,
    CourseToolCallChunk,
    FixtureProviderAdapter,
    FixtureProviderError,
    FixtureProviderErrorCode,
)

from .helpers import Outcome, collect, end, fixture, run, source_of, start, text, tool

Code = FixtureProviderErrorCode
Records = list[object]
Mode = Literal["array", "source"]
Part = str | int

# A valid response placed before the one under test, to move it to index 1.
FILLER: Records = [start("filler"), text("ok"), end("filler")]

# Appended after a failing record: it must never be read.
TRAILING: Records = [text("late"), end(), "garbage", {"type": "nonsense"}]

POSITIONS = pytest.mark.parametrize("position", [0, 1])
MODES = pytest.mark.parametrize("mode", ["array", "source"])


# -- running ------------------------------------------------------------------------------


async def _outcome(records: Records, position: int, mode: Mode) -> Outcome:
    payload: object = copy.deepcopy(records) if mode == "array" else source_of(records)
    responses: list[object] = [*([FILLER] * position), payload]
    adapter = FixtureProviderAdapter(fixture(*responses))
    for _ in range(position):
        filler = await collect(adapter.stream(CourseModelRequest("req-filler")))
        assert filler.response is not None, "the filler response must complete"
    return await collect(adapter.stream(CourseModelRequest("req-1")))


def outcome_of(records: Records, *, position: int = 0, mode: Mode = "array") -> Outcome:
    """Stream ``records`` as the response at ``position`` and collect both paths."""
    return run(_outcome(records, position, mode))


def path_of(position: int, record_index: int | None, *parts: Part) -> str:
    base = f"/responses/{position}/records"
    if record_index is None:
        return base
    return base + f"/{record_index}" + "".join(f"/{part}" for part in parts)


def assert_error(
    outcome: Outcome,
    code: FixtureProviderErrorCode,
    *,
    position: int,
    record_index: int | None,
    parts: Sequence[Part] = (),
    chunks: Sequence[CourseModelChunk] = (),
    mentions: Sequence[str] = (),
) -> FixtureProviderError:
    """Both paths failed with the same located error, after exactly ``chunks``."""
    error = outcome.error
    assert error is not None, f"expected {code}, the stream completed"
    assert error.code is code, f"expected {code}, got {error!r}"
    assert error.response_index == position
    assert error.record_index == record_index
    assert error.path == path_of(position, record_index, *parts)
    for word in mentions:
        assert word.lower() in error.message.lower(), f"{word!r} not in {error.message!r}"
    assert outcome.chunks == list(chunks)
    assert outcome.response is None
    again = outcome.result_error
    assert again is not None, "result() must raise the iteration's error"
    assert again.code is code
    assert (again.response_index, again.record_index, again.path, again.message) == (
        error.response_index,
        error.record_index,
        error.path,
        error.message,
    )
    return error


def expect_failure(
    records: Records,
    code: FixtureProviderErrorCode,
    record_index: int | None,
    parts: Sequence[Part] = (),
    *,
    chunks: Sequence[CourseModelChunk] = (),
    mentions: Sequence[str] = (),
    position: int = 0,
    mode: Mode = "array",
) -> FixtureProviderError:
    """Fail as described whole, and identically with trailing garbage after the record."""
    variants = [records]
    if record_index is not None:
        variants.append([*records[: record_index + 1], *TRAILING])
    first: FixtureProviderError | None = None
    for variant in variants:
        error = assert_error(
            outcome_of(variant, position=position, mode=mode),
            code,
            position=position,
            record_index=record_index,
            parts=parts,
            chunks=chunks,
            mentions=mentions,
        )
        first = first or error
    assert first is not None
    return first


def expect_response(records: Records, *, position: int = 0) -> Outcome:
    """Complete whole; with any record after the terminal, fail with a terminal code."""
    whole = outcome_of(records, position=position)
    assert whole.error is None, f"unexpected {whole.error!r}"
    assert whole.result_error is None
    assert whole.response is not None
    after = len(records)
    late_end = outcome_of([*records, end()], position=position)
    assert_error(
        late_end,
        Code.PROVIDER_DUPLICATE_TERMINAL,
        position=position,
        record_index=after,
        chunks=whole.chunks,
    )
    for garbage in (text("late"), "garbage", None, {"type": "nonsense"}):
        late = outcome_of([*records, garbage], position=position)
        assert_error(
            late,
            Code.PROVIDER_INVALID_TERMINAL,
            position=position,
            record_index=after,
            chunks=whole.chunks,
        )
    return whole


def expected_chunks(records: Records) -> list[CourseModelChunk]:
    """The chunks well-formed text and tool records should give, built independently."""
    chunks: list[CourseModelChunk] = []
    for record in records:
        assert isinstance(record, dict)
        if record["type"] == "text_delta":
            chunks.append(CourseTextDeltaChunk(record["text"], len(chunks)))
        elif record["type"] == "tool_call":
            chunks.append(
                CourseToolCallChunk(record["id"], record["name"], record["arguments"], len(chunks))
            )
    return chunks


def transport_error(message: object = "boom", **extra: object) -> dict[str, object]:
    return {"type": "transport_error", "message": message, **extra}


# -- every error code reachable from an array fixture ----------------------------------


@dataclass(frozen=True)
class ErrorCase:
    name: str
    records: Records
    code: FixtureProviderErrorCode
    record_index: int | None
    parts: tuple[Part, ...] = ()
    chunks: tuple[CourseModelChunk, ...] = ()
    mentions: tuple[str, ...] = ()


A = CourseTextDeltaChunk("a", 0)

ERROR_CASES = [
    ErrorCase(
        "unknown_event",
        [start(), text("a"), {"type": "response_delta", "text": "x"}],
        Code.PROVIDER_UNKNOWN_EVENT,
        2,
        ("type",),
        (A,),
        ("response_delta", "text_delta"),
    ),
    ErrorCase(
        "malformed_not_an_object",
        [start(), text("a"), "oops"],
        Code.PROVIDER_MALFORMED_EVENT,
        2,
        (),
        (A,),
        ("record object", "string"),
    ),
    ErrorCase(
        "malformed_usage_count",
        [start(), text("a"), end(usage={"input_tokens": -1, "output_tokens": 2})],
        Code.PROVIDER_MALFORMED_EVENT,
        2,
        ("usage", "input_tokens"),
        (A,),
        ("input_tokens", "-1"),
    ),
    ErrorCase(
        "missing_start",
        [text("a"), start()],
        Code.PROVIDER_MISSING_START,
        0,
        (),
        (),
        ("text_delta", "start"),
    ),
    ErrorCase(
        "missing_start_tool_call",
        [tool()],
        Code.PROVIDER_MISSING_START,
        0,
        (),
        (),
        ("tool_call",),
    ),
    ErrorCase(
        "duplicate_start",
        [start(), text("a"), start()],
        Code.PROVIDER_DUPLICATE_START,
        2,
        (),
        (A,),
        ("response_start",),
    ),
    ErrorCase(
        "duplicate_tool_call",
        [start(), tool("c1", x=1), text("b"), tool("c1", x=2)],
        Code.PROVIDER_DUPLICATE_TOOL_CALL,
        3,
        ("id",),
        (
            CourseToolCallChunk("c1", "add", {"x": 1}, 0),
            CourseTextDeltaChunk("b", 1),
        ),
        ("'c1'",),
    ),
    ErrorCase(
        "response_mismatch",
        [start("r-1"), text("a"), end("r-2")],
        Code.PROVIDER_RESPONSE_MISMATCH,
        2,
        ("responseId",),
        (A,),
        ("'r-1'", "'r-2'"),
    ),
    ErrorCase(
        "stop_reason_tool_call_without_tools",
        [start(), text("a"), end(stop_reason="tool_call")],
        Code.PROVIDER_STOP_REASON_MISMATCH,
        2,
        ("stopReason",),
        (A,),
        ("'tool_call'", "0 tool calls"),
    ),
    ErrorCase(
        "stop_reason_stop_with_tools",
        [start(), tool("c1"), end(stop_reason="stop")],
        Code.PROVIDER_STOP_REASON_MISMATCH,
        2,
        ("stopReason",),
        (CourseToolCallChunk("c1", "add", {}, 0),),
        ("'stop'", "1 tool call"),
    ),
    ErrorCase(
        "missing_terminal",
        [start(), text("a")],
        Code.PROVIDER_MISSING_TERMINAL,
        None,
        (),
        (A,),
        ("response_end",),
    ),
    ErrorCase(
        "missing_terminal_empty",
        [],
        Code.PROVIDER_MISSING_TERMINAL,
        None,
        (),
        (),
        ("response_end", "before any `response_start`"),
    ),
    ErrorCase(
        "missing_terminal_start_only",
        [start()],
        Code.PROVIDER_MISSING_TERMINAL,
        None,
        (),
        (),
        ("response_end", "after `response_start`"),
    ),
    ErrorCase(
        "duplicate_terminal",
        [start(), text("a"), end(), end()],
        Code.PROVIDER_DUPLICATE_TERMINAL,
        3,
        (),
        (A,),
        ("response_end",),
    ),
    ErrorCase(
        "invalid_terminal",
        [start(), text("a"), end(), text("b")],
        Code.PROVIDER_INVALID_TERMINAL,
        3,
        (),
        (A,),
        ("response_end", "text_delta"),
    ),
    ErrorCase(
        "transport_error",
        [start(), text("a"), transport_error("socket reset", code="ECONNRESET")],
        Code.PROVIDER_TRANSPORT_ERROR,
        2,
        (),
        (A,),
        ("socket reset", "ECONNRESET"),
    ),
    ErrorCase(
        "transport_error_before_start",
        [transport_error("no route")],
        Code.PROVIDER_TRANSPORT_ERROR,
        0,
        (),
        (),
        ("no route",),
    ),
]


@MODES
@POSITIONS
@pytest.mark.parametrize("case", ERROR_CASES, ids=[case.name for case in ERROR_CASES])
def test_each_error_code_is_located_after_the_chunks_before_it(
    case: ErrorCase, position: int, mode: Mode
) -> None:
    expect_failure(
        case.records,
        case.code,
        case.record_index,
        case.parts,
        chunks=case.chunks,
        mentions=case.mentions,
        position=position,
        mode=mode,
    )


def test_error_table_covers_every_code_an_array_fixture_can_reach() -> None:
    reachable = {case.code for case in ERROR_CASES}
    not_from_records = {
        Code.PROVIDER_INVALID_FIXTURE,
        Code.PROVIDER_EXHAUSTED,
        Code.PROVIDER_ABORTED,
        Code.PROVIDER_STREAM_CONSUMED,
        # Version 2 only (tests/test_v2_parser.py): no version-1 fixture can reach it.
        Code.PROVIDER_OUT_OF_ORDER,
    }
    assert reachable == set(Code) - not_from_records


def test_transport_error_message_is_data_never_a_code() -> None:
    error = expect_failure(
        [start(), transport_error("PROVIDER_ABORTED", code="PROVIDER_EXHAUSTED")],
        Code.PROVIDER_TRANSPORT_ERROR,
        1,
        mentions=("PROVIDER_ABORTED", "PROVIDER_EXHAUSTED"),
    )
    assert error.code is Code.PROVIDER_TRANSPORT_ERROR


def test_transport_error_without_code_is_a_transport_error() -> None:
    expect_failure([start(), transport_error("")], Code.PROVIDER_TRANSPORT_ERROR, 1)


@MODES
def test_transport_error_carries_its_message_and_code_verbatim(mode: Mode) -> None:
    message = 'up\\stream\n said "no" \u2603 {braces} %s'
    coded = outcome_of([start(), transport_error(message, code="E 42\n")], mode=mode).error
    assert coded is not None and coded.code is Code.PROVIDER_TRANSPORT_ERROR
    assert (coded.transport_message, coded.transport_code) == (message, "E 42\n")
    uncoded = outcome_of([transport_error("")], mode=mode).error
    assert uncoded is not None and uncoded.code is Code.PROVIDER_TRANSPORT_ERROR
    assert (uncoded.transport_message, uncoded.transport_code) == ("", None)
    for error in (coded, uncoded):
        again = pickle.loads(pickle.dumps(error))
        assert (again.transport_message, again.transport_code) == (
            error.transport_message,
            error.transport_code,
        )


@pytest.mark.parametrize("case", ERROR_CASES, ids=[case.name for case in ERROR_CASES])
def test_every_other_code_has_no_transport_message_or_code(case: ErrorCase) -> None:
    error = outcome_of(case.records).error
    assert error is not None
    if error.code is not Code.PROVIDER_TRANSPORT_ERROR:
        assert (error.transport_message, error.transport_code) == (None, None)
        again = pickle.loads(pickle.dumps(error))
        assert (again.transport_message, again.transport_code) == (None, None)


def test_error_in_second_response_leaves_first_response_intact() -> None:
    async def go() -> tuple[Outcome, Outcome]:
        adapter = FixtureProviderAdapter(fixture(FILLER, [start(), text("a"), end("other")]))
        first = await collect(adapter.stream(CourseModelRequest("a")))
        second = await collect(adapter.stream(CourseModelRequest("b")))
        return first, second

    first, second = run(go())
    assert first.response is not None and first.response.response_id == "filler"
    assert_error(
        second,
        Code.PROVIDER_RESPONSE_MISMATCH,
        position=1,
        record_index=2,
        parts=("responseId",),
        chunks=[A],
    )


# -- which code wins -------------------------------------------------------------------

DONE: Records = [start(), text("a"), end()]


@pytest.mark.parametrize(
    "late",
    [
        42,
        None,
        "response_end",
        [end()],
        {},
        {"type": 7},
        {"type": "nonsense"},
        {"type": "text_delta"},
        {"type": "response_start", "responseId": "", "role": "user"},
        start(),
        transport_error("late"),
        {"type": "transport_error", "code": None},
        {"type": "Response_End"},
    ],
    ids=repr,
)
def test_after_terminal_anything_but_an_end_is_invalid_terminal(late: object) -> None:
    expect_failure(
        [*DONE, late], Code.PROVIDER_INVALID_TERMINAL, 3, chunks=[A], mentions=("response_end",)
    )


@pytest.mark.parametrize(
    "late",
    [
        end(),
        end("other", "tool_call"),
        {"type": "response_end"},
        {"type": "response_end", "bogus": 1, "usage": "x"},
    ],
    ids=repr,
)
def test_after_terminal_any_end_is_duplicate_terminal_whatever_its_payload(late: object) -> None:
    expect_failure([*DONE, late], Code.PROVIDER_DUPLICATE_TERMINAL, 3, chunks=[A])


@pytest.mark.parametrize("record", [None, 0, 1.5, True, "text_delta", [], [text("a")]], ids=repr)
@pytest.mark.parametrize("started", [False, True])
def test_non_object_record_is_malformed_before_order_is_judged(
    record: object, started: bool
) -> None:
    prefix: Records = [start()] if started else []
    expect_failure(
        [*prefix, record],
        Code.PROVIDER_MALFORMED_EVENT,
        len(prefix),
        mentions=("record object",),
    )


@pytest.mark.parametrize(
    ("record", "mention"),
    [
        ({"text": "a"}, "missing required field `type`"),
        ({"type": None, "text": "a"}, "null"),
        ({"type": 1}, "number"),
        ({"type": True}, "boolean"),
        ({"type": ["text_delta"]}, "array"),
        ({"type": {"name": "text_delta"}}, "object"),
    ],
    ids=repr,
)
@pytest.mark.parametrize("started", [False, True])
def test_record_without_string_type_is_malformed_before_order_is_judged(
    record: object, mention: str, started: bool
) -> None:
    prefix: Records = [start()] if started else []
    # A missing field points at its record; a mistyped one at the field.
    expect_failure(
        [*prefix, record],
        Code.PROVIDER_MALFORMED_EVENT,
        len(prefix),
        ("type",) if "type" in record else (),  # type: ignore[operator]
        mentions=(mention, "type"),
    )


@pytest.mark.parametrize(
    "kind", ["", "Response_Start", " text_delta", "text-delta", "toolCall", "response_stop"]
)
@pytest.mark.parametrize("started", [False, True])
def test_unknown_type_beats_order_and_payload(kind: str, started: bool) -> None:
    prefix: Records = [start()] if started else []
    expect_failure(
        [*prefix, {"type": kind, "bogus": None}],
        Code.PROVIDER_UNKNOWN_EVENT,
        len(prefix),
        ("type",),
        mentions=(repr(kind),),
    )


@pytest.mark.parametrize(
    "record",
    [
        text("a"),
        {"type": "text_delta"},
        {"type": "text_delta", "text": 5, "bogus": 1},
        tool(),
        {"type": "tool_call", "id": 1, "arguments": None},
        end(),
        {"type": "response_end", "usage": "x", "stopReason": "nope"},
    ],
    ids=repr,
)
def test_missing_start_beats_a_bad_payload(record: object) -> None:
    expect_failure([record], Code.PROVIDER_MISSING_START, 0)


@pytest.mark.parametrize(
    "record",
    [
        start(),
        start("r-2"),
        {"type": "response_start"},
        {"type": "response_start", "responseId": "", "role": "user", "bogus": 1},
    ],
    ids=repr,
)
def test_duplicate_start_beats_a_bad_payload(record: object) -> None:
    expect_failure([start(), text("a"), record], Code.PROVIDER_DUPLICATE_START, 2, chunks=[A])


@pytest.mark.parametrize(
    ("records", "parts"),
    [
        # an end with a mismatched id and a bad usage
        ([start("r-1"), end("r-2", usage={"inputTokens": True, "outputTokens": 1})],
         ("usage", "inputTokens")),
        # an end with a mismatched id and an unknown key
        ([start("r-1"), {**end("r-2"), "extra": 1}], ("extra",)),
        # an end with a contradicting stop reason and no usage
        ([start(), tool(), {"type": "response_end", "responseId": "r-1", "stopReason": "stop"}],
         ()),
        # a repeated tool-call id with an unknown key
        ([start(), tool("c1"), {**tool("c1"), "extra": 1}], ("extra",)),
        # a repeated tool-call id with null arguments
        ([start(), tool("c1"), {**tool("c1"), "arguments": None}], ("arguments",)),
        # a transport error with an unknown key
        ([start(), transport_error("boom", detail="x")], ("detail",)),
    ],
    ids=[
        "end_mismatch_and_bad_usage",
        "end_mismatch_and_unknown_key",
        "stop_reason_and_missing_usage",
        "duplicate_tool_and_unknown_key",
        "duplicate_tool_and_null_arguments",
        "transport_error_unknown_key",
    ],
)  # fmt: skip
def test_a_bad_payload_beats_its_meaning(records: Records, parts: tuple[Part, ...]) -> None:
    index = len(records) - 1
    expect_failure(
        records, Code.PROVIDER_MALFORMED_EVENT, index, parts, chunks=expected_chunks(records[:-1])
    )


def test_response_mismatch_beats_stop_reason_mismatch() -> None:
    expect_failure(
        [start("r-1"), tool("c1"), end("r-2", "stop")],
        Code.PROVIDER_RESPONSE_MISMATCH,
        2,
        ("responseId",),
        chunks=[CourseToolCallChunk("c1", "add", {}, 0)],
    )
    expect_failure(
        [start("r-1"), text("a"), end("r-2", "tool_call")],
        Code.PROVIDER_RESPONSE_MISMATCH,
        2,
        ("responseId",),
        chunks=[A],
    )


def test_duplicate_tool_call_is_judged_before_the_end() -> None:
    expect_failure(
        [start(), tool("c1"), tool("c1"), end("other", "stop")],
        Code.PROVIDER_DUPLICATE_TOOL_CALL,
        2,
        ("id",),
        chunks=[CourseToolCallChunk("c1", "add", {}, 0)],
    )


@pytest.mark.parametrize(
    ("records", "index", "chunks"),
    [
        ([transport_error()], 0, []),
        ([transport_error(), start()], 0, []),
        ([start(), transport_error()], 1, []),
        ([start(), text("a"), transport_error(), end()], 2, [A]),
    ],
    ids=["alone", "before_start", "after_start", "after_chunks"],
)
def test_transport_error_is_allowed_before_and_after_the_start(
    records: Records, index: int, chunks: list[CourseModelChunk]
) -> None:
    expect_failure(records, Code.PROVIDER_TRANSPORT_ERROR, index, chunks=chunks)


def test_transport_error_after_the_terminal_is_invalid_terminal() -> None:
    expect_failure(
        [*DONE, transport_error("late", code="E")], Code.PROVIDER_INVALID_TERMINAL, 3, chunks=[A]
    )


@pytest.mark.parametrize(
    ("record", "parts", "mention"),
    [
        (transport_error("boom", code=None), ("code",), "code"),
        (transport_error("boom", code=7), ("code",), "code"),
        (transport_error("boom", code=[]), ("code",), "code"),
        (transport_error(None), ("message",), "message"),
        (transport_error(3), ("message",), "message"),
        (transport_error({"text": "boom"}), ("message",), "message"),
        ({"type": "transport_error"}, (), "message"),
        ({"type": "transport_error", "code": "E"}, (), "message"),
        (transport_error("boom", extra=1), ("extra",), "extra"),
    ],
    ids=repr,
)
@pytest.mark.parametrize("started", [False, True])
def test_malformed_transport_error_is_malformed_not_transport(
    record: object, parts: tuple[Part, ...], mention: str, started: bool
) -> None:
    prefix: Records = [start()] if started else []
    expect_failure(
        [*prefix, record],
        Code.PROVIDER_MALFORMED_EVENT,
        len(prefix),
        parts,
        mentions=(mention, "transport_error"),
    )


# -- payload details -------------------------------------------------------------------

# Each record type, valid, and the records that put the parser in its state.
VALID: dict[str, dict[str, object]] = {
    "response_start": start(),
    "text_delta": text("hi"),
    "tool_call": tool("c1", x=1),
    "response_end": end(),
    "transport_error": transport_error("boom", code="E1"),
}
PREFIX: dict[str, Records] = {
    "response_start": [],
    "text_delta": [start()],
    "tool_call": [start()],
    "response_end": [start()],
    "transport_error": [start()],
}
OPTIONAL = {("transport_error", "code")}

FIELDS = [(kind, name) for kind, record in VALID.items() for name in record if name != "type"]
WRONG_TYPES: list[object] = [7, True, None, [], {}, 1.5]
MISTYPED = [
    (kind, name, value)
    for kind, name in FIELDS
    for value in WRONG_TYPES
    if not (name == "arguments" and value == {})
]


def with_field(kind: str, name: str, value: object) -> Records:
    record = {**VALID[kind], name: value}
    return [*PREFIX[kind], record]


def without_field(kind: str, name: str) -> Records:
    record = {key: value for key, value in VALID[kind].items() if key != name}
    return [*PREFIX[kind], record]


def test_valid_records_of_each_type_pass_their_payload_check() -> None:
    for kind in ("response_start", "text_delta", "tool_call", "response_end"):
        records = [*PREFIX[kind], VALID[kind]]
        if kind != "response_end":
            records.append(end())
        if kind == "tool_call":
            records[-1] = end(stop_reason="tool_call")
        expect_response(records)
    expect_failure([*PREFIX["transport_error"], VALID["transport_error"]],
                   Code.PROVIDER_TRANSPORT_ERROR, 1)  # fmt: skip


@pytest.mark.parametrize(("kind", "name"), FIELDS)
def test_missing_field_is_malformed_and_named(kind: str, name: str) -> None:
    records = without_field(kind, name)
    index = len(records) - 1
    if (kind, name) in OPTIONAL:
        expect_failure(records, Code.PROVIDER_TRANSPORT_ERROR, index)
        return
    expect_failure(
        records, Code.PROVIDER_MALFORMED_EVENT, index, mentions=("missing", f"`{name}`", kind)
    )


@pytest.mark.parametrize(("kind", "name", "value"), MISTYPED, ids=repr)
def test_mistyped_field_is_malformed_at_its_path(kind: str, name: str, value: object) -> None:
    records = with_field(kind, name, value)
    index = len(records) - 1
    if name == "usage":
        # An object without counts fails inside usage, at the usage object.
        mentions: tuple[str, ...] = ("usage",)
    else:
        mentions = ("expected", f"`{name}`", kind)
    expect_failure(records, Code.PROVIDER_MALFORMED_EVENT, index, (name,), mentions=mentions)


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("response_start", "responseId"),
        ("response_start", "role"),
        ("tool_call", "id"),
        ("tool_call", "name"),
        ("response_end", "stopReason"),
    ],
)
def test_empty_string_is_malformed_where_a_value_is_required(kind: str, name: str) -> None:
    records = with_field(kind, name, "")
    expect_failure(
        records, Code.PROVIDER_MALFORMED_EVENT, len(records) - 1, (name,), mentions=(f"`{name}`",)
    )


def test_empty_strings_are_allowed_where_the_spec_allows_them() -> None:
    outcome = expect_response([start(), text(""), end()])
    assert outcome.chunks == [CourseTextDeltaChunk("", 0)]
    expect_failure([start(), transport_error("", code="")], Code.PROVIDER_TRANSPORT_ERROR, 1)
    # An empty end id is a string: it is judged by meaning, and differs from the start's.
    expect_failure([start(), end("")], Code.PROVIDER_RESPONSE_MISMATCH, 1, ("responseId",))


@pytest.mark.parametrize("kind", list(VALID))
@pytest.mark.parametrize("key", ["extra", "Type", "stopreason", "response_id", "__proto__"])
def test_unknown_extra_key_is_malformed_and_named(kind: str, key: str) -> None:
    records = with_field(kind, key, 1)
    expect_failure(
        records,
        Code.PROVIDER_MALFORMED_EVENT,
        len(records) - 1,
        (key,),
        mentions=("unknown", f"`{key}`"),
    )


@pytest.mark.parametrize("role", ["user", "Assistant", "system", "assistant ", "tool"])
def test_role_other_than_assistant_is_malformed(role: str) -> None:
    expect_failure(
        [{**start(), "role": role}],
        Code.PROVIDER_MALFORMED_EVENT,
        0,
        ("role",),
        mentions=("'assistant'", "`role`"),
    )


@pytest.mark.parametrize("reason", ["toolCall", "end", None, "STOP", "tool_calls", "length", 0])
def test_stop_reason_outside_the_wire_pair_is_malformed(reason: object) -> None:
    expect_failure(
        [start(), {**end(), "stopReason": reason}],
        Code.PROVIDER_MALFORMED_EVENT,
        1,
        ("stopReason",),
        mentions=("'stop'", "'tool_call'"),
    )


@pytest.mark.parametrize("arguments", [None, [], ["x"], "x", "{}", 0, False])
def test_arguments_that_are_not_an_object_are_malformed(arguments: object) -> None:
    expect_failure(
        [start(), {**tool(), "arguments": arguments}],
        Code.PROVIDER_MALFORMED_EVENT,
        1,
        ("arguments",),
        mentions=("object", "`arguments`"),
    )


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"inputTokens": 3, "outputTokens": 4}, (3, 4)),
        ({"input_tokens": 3, "output_tokens": 4}, (3, 4)),
        ({"inputTokens": 3, "output_tokens": 4}, (3, 4)),
        ({"input_tokens": 3, "outputTokens": 4}, (3, 4)),
        ({"outputTokens": 4, "inputTokens": 3}, (3, 4)),
        ({"inputTokens": 0, "outputTokens": 0}, (0, 0)),
        ({"inputTokens": 2**53 - 1, "output_tokens": 2**53 - 1}, (2**53 - 1, 2**53 - 1)),
    ],
    ids=repr,
)
def test_usage_aliases_normalize_to_course_usage(
    usage: dict[str, object], expected: tuple[int, int]
) -> None:
    outcome = expect_response([start(), end(usage=usage)])
    assert outcome.response is not None
    assert outcome.response.usage == CourseModelUsage(*expected)
    assert type(outcome.response.usage.input_tokens) is int


@pytest.mark.parametrize(
    ("usage", "parts", "mention"),
    [
        ({"inputTokens": 1, "input_tokens": 1, "outputTokens": 1}, ("input_tokens",), "both"),
        ({"inputTokens": 1, "input_tokens": None, "outputTokens": 1}, ("input_tokens",), "both"),
        ({"inputTokens": None, "input_tokens": 1, "outputTokens": 1}, ("input_tokens",), "both"),
        ({"inputTokens": 1, "outputTokens": 1, "output_tokens": 1}, ("output_tokens",), "both"),
        ({"inputTokens": 1, "outputTokens": None, "output_tokens": 2},
         ("output_tokens",), "both"),
        ({"outputTokens": 1}, (), "inputTokens"),
        ({"input_tokens": 1}, (), "outputTokens"),
        ({}, (), "missing"),
        ({"inputTokens": True, "outputTokens": 1}, ("inputTokens",), "boolean"),
        ({"inputTokens": 1, "output_tokens": False}, ("output_tokens",), "boolean"),
        ({"inputTokens": 1.0, "outputTokens": 1}, ("inputTokens",), "1.0"),
        ({"inputTokens": 1, "outputTokens": 2.5}, ("outputTokens",), "2.5"),
        ({"inputTokens": -1, "outputTokens": 1}, ("inputTokens",), "-1"),
        ({"inputTokens": 2**53, "outputTokens": 1}, ("inputTokens",), "2**53 - 1"),
        ({"inputTokens": 1, "output_tokens": 10**30}, ("output_tokens",), "2**53 - 1"),
        ({"inputTokens": "1", "outputTokens": 1}, ("inputTokens",), "string"),
        ({"inputTokens": None, "outputTokens": 1}, ("inputTokens",), "null"),
        ({"inputTokens": [1], "outputTokens": 1}, ("inputTokens",), "array"),
        ({"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, ("totalTokens",), "unknown"),
        ({"inputTokens": 1, "outputTokens": 1, "input_tokens": 1, "cached": 0},
         ("cached",), "unknown"),
    ],
    ids=repr,
)  # fmt: skip
def test_bad_usage_is_malformed_at_the_count(
    usage: dict[str, object], parts: tuple[Part, ...], mention: str
) -> None:
    expect_failure(
        [start(), text("a"), end(usage=usage)],
        Code.PROVIDER_MALFORMED_EVENT,
        2,
        ("usage", *parts),
        chunks=[A],
        mentions=(mention,),
    )


@pytest.mark.parametrize("usage", [None, [], [1, 2], 7, "12/8", True], ids=repr)
def test_usage_that_is_not_an_object_is_malformed(usage: object) -> None:
    expect_failure(
        [start(), {**end(), "usage": usage}],
        Code.PROVIDER_MALFORMED_EVENT,
        1,
        ("usage",),
        mentions=("usage object",),
    )


def test_missing_usage_is_malformed() -> None:
    record = {key: value for key, value in end().items() if key != "usage"}
    expect_failure(
        [start(), record], Code.PROVIDER_MALFORMED_EVENT, 1, mentions=("missing", "`usage`")
    )


@pytest.mark.parametrize(
    ("records", "parts"),
    [
        ([{**start(), "responseId": 1}], ("responseId",)),
        ([start("1"), {**end(), "responseId": 1}], ("responseId",)),
        ([start("1"), {**end(), "responseId": 1.0}], ("responseId",)),
        ([start("1"), {**end(), "responseId": ["1"]}], ("responseId",)),
        ([start(), {**tool(), "id": 1}], ("id",)),
        ([start(), tool("1"), {**tool(), "id": 1}], ("id",)),
        ([start(), tool("1"), {**tool(), "id": True}], ("id",)),
        ([start(), {**tool(), "name": 1}], ("name",)),
    ],
    ids=[
        "start_id_int",
        "end_id_int_like_start",
        "end_id_float_like_start",
        "end_id_list",
        "tool_id_int",
        "tool_id_int_like_earlier",
        "tool_id_bool",
        "tool_name_int",
    ],
)
def test_ids_that_are_not_exact_strings_are_malformed_never_a_mismatch(
    records: Records, parts: tuple[Part, ...]
) -> None:
    index = len(records) - 1
    chunks = expected_chunks(records[:-1])
    expect_failure(records, Code.PROVIDER_MALFORMED_EVENT, index, parts, chunks=chunks)


# -- ordering and the terminal ---------------------------------------------------------


def test_text_deltas_keep_their_order_and_count_up() -> None:
    outcome = expect_response([start(), text("one "), text("two "), text("three"), end()])
    assert outcome.chunks == [
        CourseTextDeltaChunk("one ", 0),
        CourseTextDeltaChunk("two ", 1),
        CourseTextDeltaChunk("three", 2),
    ]
    assert outcome.response is not None
    assert outcome.response.message.content == (
        CourseTextBlock("one "),
        CourseTextBlock("two "),
        CourseTextBlock("three"),
    )


@POSITIONS
def test_mixed_blocks_share_one_content_index_in_record_order(position: int) -> None:
    odd_id = "call_ÄBC/1~0 x"
    records: Records = [
        start("resp-9"),
        text("Let me add."),
        tool(odd_id, "add", left=1, right=2),
        text(""),
        tool("c-2", "mul", xs=[1, {"y": None}]),
        text("done"),
        end("resp-9", "tool_call", {"input_tokens": 5, "outputTokens": 6}),
    ]
    outcome = expect_response(records, position=position)
    assert outcome.chunks == [
        CourseTextDeltaChunk("Let me add.", 0),
        CourseToolCallChunk(odd_id, "add", {"left": 1, "right": 2}, 1),
        CourseTextDeltaChunk("", 2),
        CourseToolCallChunk("c-2", "mul", {"xs": (1, {"y": None})}, 3),
        CourseTextDeltaChunk("done", 4),
    ]
    response = outcome.response
    assert response is not None
    assert response.request_id == "req-1"
    assert response.response_id == "resp-9"
    assert response.stop_reason == "toolCall"
    assert response.usage == CourseModelUsage(5, 6)
    assert response.message.id == "message-resp-9"
    assert response.message.role == "assistant"
    assert response.message.content == (
        CourseTextBlock("Let me add."),
        CourseToolCallBlock(odd_id, "add", {"left": 1, "right": 2}),
        CourseTextBlock(""),
        CourseToolCallBlock("c-2", "mul", {"xs": (1, {"y": None})}),
        CourseTextBlock("done"),
    )
    tool_chunk = outcome.chunks[1]
    assert isinstance(tool_chunk, CourseToolCallChunk)
    assert tool_chunk.id == odd_id


def test_response_with_no_chunks_completes_with_empty_content() -> None:
    outcome = expect_response([start("quiet"), end("quiet")])
    assert outcome.chunks == []
    assert outcome.response is not None
    assert outcome.response.message.content == ()
    assert outcome.response.message.id == "message-quiet"
    assert outcome.response.stop_reason == "stop"


@pytest.mark.parametrize("response_id", ["r", "message-x", "ü/~0 1", "x" * 1000])
def test_message_id_is_message_dash_response_id(response_id: str) -> None:
    outcome = expect_response([start(response_id), text("a"), end(response_id)])
    assert outcome.response is not None
    assert outcome.response.message.id == "message-" + response_id
    assert outcome.response.response_id == response_id


def test_tool_ids_may_repeat_across_responses() -> None:
    async def go() -> tuple[Outcome, Outcome]:
        records: Records = [start(), tool("c1"), end(stop_reason="tool_call")]
        adapter = FixtureProviderAdapter(fixture(records, records))
        first = await collect(adapter.stream(CourseModelRequest("a")))
        second = await collect(adapter.stream(CourseModelRequest("b")))
        return first, second

    first, second = run(go())
    assert first.response is not None and second.response is not None
    assert first.chunks == second.chunks == [CourseToolCallChunk("c1", "add", {}, 0)]


def test_tool_call_stop_reason_becomes_course_tool_call() -> None:
    outcome = expect_response([start(), tool("a"), tool("b"), end(stop_reason="tool_call")])
    assert outcome.response is not None
    assert outcome.response.stop_reason == "toolCall"
    assert [chunk.content_index for chunk in outcome.chunks] == [0, 1]


def test_dunder_argument_keys_stay_ordinary_keys() -> None:
    arguments = {"__proto__": {"polluted": True}, "constructor": 1, "__class__": "x"}
    outcome = expect_response(
        [start(), {**tool(), "arguments": arguments}, end(stop_reason="tool_call")]
    )
    chunk = outcome.chunks[0]
    assert isinstance(chunk, CourseToolCallChunk)
    assert chunk.arguments == arguments
    assert type(chunk.arguments).__name__ == "JsonObject"
    assert not hasattr(chunk.arguments, "polluted")


def test_records_fed_one_by_one_give_the_same_outcome_as_whole() -> None:
    records: Records = [start(), text("a"), tool("c1", k="v"), end(stop_reason="tool_call")]
    whole = outcome_of(records)
    stepped = outcome_of(records, mode="source")
    assert stepped.chunks == whole.chunks
    assert stepped.response == whole.response
    assert stepped.error is None
